package transport

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/webtransport-go"
)

// WebTransport: datagrams of an HTTP/3 session (QUIC, RFC 9221), the
// browser's own unreliable channel. A datagram is lost or arrives once,
// in any order, like UDP; the session is encrypted and authenticated by
// TLS 1.3, so the hello (Options.Hello) reaches the browser in
// confidence, on a unidirectional stream the server opens as the session
// starts.

// WebTransportConfig configures a WebTransport server.
type WebTransportConfig struct {
	Options
	// Path is the URL path of sessions; "" means "/bitwire".
	Path string
	// TLS is the server's TLS configuration (a certificate browsers trust).
	// Nil: a self-signed certificate for Hosts (NewSelfSigned), which a
	// browser accepts by its hash (CertificateHash).
	TLS *tls.Config
	// Hosts names the self-signed certificate's hosts; nil means
	// localhost, 127.0.0.1 and ::1.
	Hosts []string
	// CheckOrigin accepts or refuses a session by its request (its Origin
	// header: the page that opened it). Nil accepts every origin, which a
	// game served from anywhere needs; a server whose pages come from known
	// origins should list them.
	CheckOrigin func(r *http.Request) bool
	// IdleTimeout ends a session that received nothing for it (the browser
	// sends keep-alives); 0 means 10 s.
	IdleTimeout time.Duration
}

// WebTransportServer is a Server of WebTransport sessions over one UDP
// socket.
type WebTransportServer struct {
	*hub
	conn *net.UDPConn
	h3   *http3.Server
	wt   *webtransport.Server
	path string
	self *SelfSigned
	wg   sync.WaitGroup
	err  error
}

type wtPeer struct{ sess *webtransport.Session }

func (p *wtPeer) send(b []byte) error {
	err := p.sess.SendDatagram(b)
	var tl *quic.DatagramTooLargeError
	if errors.As(err, &tl) {
		return fmt.Errorf("%w: %d bytes, the session carries %d", ErrTooLarge, len(b), tl.MaxDatagramPayloadSize)
	}
	return err
}

func (p *wtPeer) close() { _ = p.sess.CloseWithError(0, "") }

// ListenWebTransport returns a WebTransport server on the UDP address addr
// ("127.0.0.1:0" picks a port).
func ListenWebTransport(addr string, cfg WebTransportConfig) (*WebTransportServer, error) {
	if cfg.Path == "" {
		cfg.Path = "/bitwire"
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 10 * time.Second
	}
	s := &WebTransportServer{hub: newHub("webtransport", cfg.Options), path: cfg.Path}
	tlsConf := cfg.TLS
	if tlsConf == nil {
		hosts := cfg.Hosts
		if hosts == nil {
			hosts = []string{"localhost", "127.0.0.1", "::1"}
		}
		self, err := NewSelfSigned(hosts, 0)
		if err != nil {
			return nil, err
		}
		s.self = self
		tlsConf = &tls.Config{Certificates: []tls.Certificate{self.Certificate}}
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	if s.conn, err = net.ListenUDP("udp", ua); err != nil {
		return nil, err
	}
	_ = s.conn.SetReadBuffer(4 << 20)
	_ = s.conn.SetWriteBuffer(4 << 20)
	mux := http.NewServeMux()
	s.h3 = &http3.Server{
		TLSConfig: http3.ConfigureTLSConfig(tlsConf),
		QUICConfig: &quic.Config{
			EnableDatagrams:                  true,
			EnableStreamResetPartialDelivery: true,
			MaxIdleTimeout:                   cfg.IdleTimeout,
			KeepAlivePeriod:                  cfg.IdleTimeout / 3,
		},
		Handler: mux,
	}
	webtransport.ConfigureHTTP3Server(s.h3)
	check := cfg.CheckOrigin
	if check == nil {
		check = func(*http.Request) bool { return true }
	}
	s.wt = &webtransport.Server{H3: s.h3, CheckOrigin: check}
	mux.HandleFunc(cfg.Path, s.session)
	s.wg.Go(func() {
		if err := s.wt.Serve(s.counting(s.conn)); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, quic.ErrServerClosed) {
			s.err = err
		}
	})
	return s, nil
}

// session opens one browser's session: the hello on a stream of its own,
// then datagrams until the session ends.
func (s *WebTransportServer) session(w http.ResponseWriter, r *http.Request) {
	if s.full() {
		s.count(func(st *Stats) { st.Refused++ })
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	id := s.newID()
	hello, err := s.hello(id)
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		w.WriteHeader(http.StatusForbidden)
		return
	}
	sess, err := s.wt.Upgrade(w, r)
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(sess.Context(), 5*time.Second)
	defer cancel()
	str, err := sess.OpenUniStreamSync(ctx)
	if err == nil {
		_, err = str.Write(hello)
		if cerr := str.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		_ = sess.CloseWithError(1, "hello: "+err.Error())
		return
	}
	p := &wtPeer{sess: sess}
	if !s.join(id, p, PeerInfo{Transport: "webtransport", Addr: sess.RemoteAddr(), Hello: hello}) {
		p.close()
		return
	}
	go func() {
		defer s.leave(id)
		for {
			d, err := sess.ReceiveDatagram(sess.Context())
			if err != nil {
				return
			}
			s.deliver(id, d)
		}
	}()
}

// Addr is the UDP address the server listens on.
func (s *WebTransportServer) Addr() *net.UDPAddr { return s.conn.LocalAddr().(*net.UDPAddr) }

// Path is the URL path of sessions.
func (s *WebTransportServer) Path() string { return s.path }

// CertificateHash is the SHA-256 of the self-signed certificate, for the
// page's serverCertificateHashes; nil when the server was given its own
// (WebTransportConfig.TLS).
func (s *WebTransportServer) CertificateHash() []byte {
	if s.self == nil {
		return nil
	}
	return s.self.Hash[:]
}

// Close implements Server.
func (s *WebTransportServer) Close() error {
	if !s.shut() {
		return nil
	}
	err := s.wt.Close()
	s.conn.Close()
	s.wg.Wait()
	return err
}

// WebTransportConn is a Go client's WebTransport session: what a browser's
// WebTransport object is, for tests and Go clients.
type WebTransportConn struct {
	tr    *webtransport.Transport
	sess  *webtransport.Session
	hello []byte
	in    *inbox
	wg    sync.WaitGroup
}

// DialWebTransport opens a session at url (https://host:port/path). With
// certHash (the server's CertificateHash) the server's certificate is
// accepted by its SHA-256, as a browser's serverCertificateHashes does;
// with nil it is verified against the system's roots. It returns once the
// server's hello has arrived.
func DialWebTransport(ctx context.Context, url string, certHash []byte) (*WebTransportConn, error) {
	tlsConf := &tls.Config{}
	if certHash != nil {
		want := append([]byte(nil), certHash...)
		tlsConf.InsecureSkipVerify = true // replaced by the hash check below
		tlsConf.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("transport: the server sent no certificate")
			}
			if h := sha256.Sum256(cs.PeerCertificates[0].Raw); string(h[:]) != string(want) {
				return errors.New("transport: the server's certificate does not have the expected hash")
			}
			return nil
		}
	}
	tr := &webtransport.Transport{
		TLSClientConfig: tlsConf,
		QUICConfig:      &quic.Config{EnableDatagrams: true, EnableStreamResetPartialDelivery: true, KeepAlivePeriod: 2 * time.Second},
	}
	rsp, sess, err := tr.Dial(ctx, url, nil)
	if err != nil {
		tr.Close()
		return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	if rsp.StatusCode < 200 || rsp.StatusCode > 299 {
		tr.Close()
		return nil, fmt.Errorf("%w: status %d", ErrHandshake, rsp.StatusCode)
	}
	str, err := sess.AcceptUniStream(ctx)
	var hello []byte
	if err == nil {
		hello, err = io.ReadAll(io.LimitReader(str, MaxHello+1))
	}
	if err == nil && len(hello) > MaxHello {
		err = ErrTooLarge
	}
	if err != nil {
		sess.CloseWithError(0, "")
		tr.Close()
		return nil, fmt.Errorf("%w: hello: %v", ErrHandshake, err)
	}
	c := &WebTransportConn{tr: tr, sess: sess, hello: hello, in: newInbox()}
	c.wg.Go(func() {
		defer c.in.close()
		for {
			d, err := sess.ReceiveDatagram(context.Background())
			if err != nil {
				return
			}
			c.in.put(d)
		}
	})
	return c, nil
}

// Send implements Conn.
func (c *WebTransportConn) Send(b []byte) error {
	if c.in.closed.Load() {
		return ErrClosed
	}
	err := c.sess.SendDatagram(b)
	var tl *quic.DatagramTooLargeError
	if errors.As(err, &tl) {
		return ErrTooLarge
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

// Receive implements Conn.
func (c *WebTransportConn) Receive(ctx context.Context) ([]byte, error) { return c.in.get(ctx) }

// Hello implements Conn.
func (c *WebTransportConn) Hello() []byte { return c.hello }

// Close implements Conn.
func (c *WebTransportConn) Close() error {
	err := c.sess.CloseWithError(0, "")
	c.tr.Close()
	c.wg.Wait()
	return err
}
