package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// WebRTC: a data channel that is unordered and never retransmits (SCTP
// partial reliability, RFC 3758): a message is lost or arrives once, in
// any order, like UDP, inside DTLS. The browser creates two channels on
// one peer connection: "bitwire" for the datagrams and "hello", reliable
// and ordered, on which the server sends the hello (Options.Hello) as
// 'H' and its bytes. Signalling is one HTTP request: the browser POSTs
// its offer ({"type": "offer", "sdp": ...}, with every ICE candidate
// gathered) and the response is the answer. Every session shares one UDP
// port (ICE over a UDP mux, ICE-lite on the server), so a server needs
// one firewall rule. A message over the SCTP packet size (about 1,200
// bytes) is sent as fragments; losing one loses the message.

// WebRTCConfig configures a WebRTC server.
type WebRTCConfig struct {
	Options
	// UDPAddr is the one UDP address of every session's ICE
	// ("127.0.0.1:0" picks a port).
	UDPAddr string
	// PublicIPs, when set, are the addresses browsers reach UDPAddr at
	// (a server behind a 1:1 NAT, a cloud instance's public address); the
	// server's ICE candidates name them instead of its own interfaces'.
	PublicIPs []string
	// PublicPort, when set, is the UDP port browsers reach UDPAddr at (a
	// NAT that forwards another port, a load balancer, a relay); the
	// candidates name it instead of UDPAddr's port. It needs PublicIPs or a
	// UDPAddr of one address.
	PublicPort int
	// SendBuffer is how many bytes may wait in a data channel before
	// datagrams are dropped (Stats.DroppedOut); 0 means 64 KiB.
	SendBuffer int
}

// WebRTCServer is a Server of WebRTC data channels; it is the
// http.Handler of the signalling request (POST an offer, receive the
// answer).
type WebRTCServer struct {
	*hub
	cfg  WebRTCConfig
	conn *net.UDPConn
	mux  ice.UDPMux
	api  *webrtc.API
	mu   sync.Mutex
	pcs  map[*webrtc.PeerConnection]struct{}
}

type rtcPeer struct {
	pc    *webrtc.PeerConnection
	dc    *webrtc.DataChannel
	limit uint64
}

func (p *rtcPeer) send(b []byte) error {
	if len(b) > 65536 {
		return ErrTooLarge
	}
	if p.dc.BufferedAmount() > p.limit {
		return errors.New("data channel buffer full")
	}
	return p.dc.Send(b)
}

func (p *rtcPeer) close() { _ = p.pc.Close() }

// ListenWebRTC returns a WebRTC server whose sessions share the UDP
// address cfg.UDPAddr. Mount it (it is an http.Handler) where pages send
// their offers.
func ListenWebRTC(cfg WebRTCConfig) (*WebRTCServer, error) {
	if cfg.UDPAddr == "" {
		cfg.UDPAddr = ":0"
	}
	if cfg.SendBuffer <= 0 {
		cfg.SendBuffer = 64 << 10
	}
	ua, err := net.ResolveUDPAddr("udp", cfg.UDPAddr)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, err
	}
	_ = conn.SetReadBuffer(4 << 20)
	_ = conn.SetWriteBuffer(4 << 20)
	s := &WebRTCServer{hub: newHub("webrtc", cfg.Options), cfg: cfg, conn: conn, pcs: map[*webrtc.PeerConnection]struct{}{}}
	s.mux = webrtc.NewICEUDPMux(nil, s.counting(conn))
	var se webrtc.SettingEngine
	se.SetICEUDPMux(s.mux)
	se.SetLite(true)
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6})
	se.SetICETimeouts(5*time.Second, 10*time.Second, 2*time.Second)
	if ip := ua.IP; ip != nil && !ip.IsUnspecified() {
		// Bound to one address: advertise that one alone.
		se.SetIncludeLoopbackCandidate(ip.IsLoopback())
		se.SetIPFilter(func(a net.IP) bool { return a.Equal(ip) })
	}
	if len(cfg.PublicIPs) > 0 || cfg.PublicPort != 0 {
		rule := webrtc.ICEAddressRewriteRule{External: cfg.PublicIPs, AsCandidateType: webrtc.ICECandidateTypeHost, NewPort: cfg.PublicPort}
		if len(rule.External) == 0 {
			if ua.IP == nil || ua.IP.IsUnspecified() {
				conn.Close()
				return nil, errors.New("transport: WebRTCConfig.PublicPort needs PublicIPs or a UDPAddr of one address")
			}
			rule.External = []string{ua.IP.String()}
		}
		if err := se.SetICEAddressRewriteRules(rule); err != nil {
			conn.Close()
			return nil, err
		}
	}
	s.api = webrtc.NewAPI(webrtc.WithSettingEngine(se))
	return s, nil
}

// Addr is the UDP address every session's ICE shares.
func (s *WebRTCServer) Addr() *net.UDPAddr { return s.conn.LocalAddr().(*net.UDPAddr) }

// maxOffer bounds the signalling request's body.
const maxOffer = 64 << 10

// ServeHTTP answers one offer: POST, a JSON session description.
func (s *WebRTCServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an offer", http.StatusMethodNotAllowed)
		return
	}
	var offer webrtc.SessionDescription
	body, err := io.ReadAll(io.LimitReader(r.Body, maxOffer+1))
	if err == nil && len(body) > maxOffer {
		err = ErrTooLarge
	}
	if err == nil {
		err = json.Unmarshal(body, &offer)
	}
	if err == nil && offer.Type != webrtc.SDPTypeOffer {
		err = errors.New("not an offer")
	}
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		http.Error(w, "bad offer: "+err.Error(), http.StatusBadRequest)
		return
	}
	answer, err := s.answer(r.Context(), offer, r.RemoteAddr)
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

// answer makes the session of one offer and returns its answer, with the
// server's candidates.
func (s *WebRTCServer) answer(ctx context.Context, offer webrtc.SessionDescription, from string) (*webrtc.SessionDescription, error) {
	id := s.newID()
	hello, err := s.hello(id)
	if err != nil {
		return nil, err
	}
	pc, err := s.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.pcs == nil { // closed
		s.mu.Unlock()
		pc.Close()
		return nil, ErrClosed
	}
	if len(s.pcs) >= s.opts.MaxPeers { // the connected and the opening
		s.mu.Unlock()
		pc.Close()
		return nil, errors.New("server full")
	}
	s.pcs[pc] = struct{}{}
	s.mu.Unlock()
	fail := func(err error) (*webrtc.SessionDescription, error) {
		s.forget(pc)
		pc.Close()
		return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
	}

	var (
		mu                  sync.Mutex
		dataOpen, helloSent bool
		peer                = &rtcPeer{pc: pc, limit: uint64(s.cfg.SendBuffer)}
		joining, joined     bool
		left                bool
		early               [][]byte // datagrams that came before the join
	)
	// joinWhenReady joins the peer once its datagram channel is open and
	// its hello sent.
	joinWhenReady := func() {
		mu.Lock()
		ready := dataOpen && helloSent && !joining && !left
		joining = joining || ready
		mu.Unlock()
		if !ready {
			return
		}
		if !s.join(id, peer, PeerInfo{Transport: "webrtc", Addr: remoteAddr(pc, from), Hello: hello}) {
			pc.Close()
			return
		}
		// The browser may send as soon as its side is open, before this
		// side's open event: those datagrams waited in early.
		mu.Lock()
		for _, d := range early {
			s.deliver(id, d)
		}
		early, joined = nil, true
		mu.Unlock()
	}
	pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		switch dc.Label() {
		case "bitwire":
			if dc.Ordered() || dc.MaxRetransmits() == nil || *dc.MaxRetransmits() != 0 {
				// Not the channel this transport promises: refuse.
				pc.Close()
				return
			}
			dc.OnOpen(func() {
				mu.Lock()
				peer.dc, dataOpen = dc, true
				mu.Unlock()
				joinWhenReady()
			})
			dc.OnMessage(func(m webrtc.DataChannelMessage) {
				if m.IsString {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case joined:
					s.deliver(id, m.Data)
				case len(early) < 64:
					early = append(early, m.Data)
				}
			})
		case "hello":
			dc.OnOpen(func() {
				if err := dc.Send(append([]byte{'H'}, hello...)); err != nil {
					pc.Close()
					return
				}
				mu.Lock()
				helloSent = true
				mu.Unlock()
				joinWhenReady()
			})
		}
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed || st == webrtc.PeerConnectionStateDisconnected {
			mu.Lock()
			left = true
			mu.Unlock()
			s.leave(id)
			s.forget(pc)
			go pc.Close() // not from its own callback
		}
	})
	if err := pc.SetRemoteDescription(offer); err != nil {
		return fail(err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		return fail(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(answer); err != nil {
		return fail(err)
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(5 * time.Second):
		return fail(errors.New("ICE gathering did not complete"))
	}
	// A session whose channels never open is ended by ICE's own timeouts
	// (the connection state then fails), and one that connects but opens
	// no channel within 10 s here.
	time.AfterFunc(10*time.Second, func() {
		mu.Lock()
		stuck := !joining && !left
		mu.Unlock()
		if stuck {
			s.forget(pc)
			pc.Close()
		}
	})
	return pc.LocalDescription(), nil
}

// remoteAddr is where the peer's packets come from, once ICE chose a pair;
// until then the signalling request's address.
func remoteAddr(pc *webrtc.PeerConnection, from string) net.Addr {
	if sctp := pc.SCTP(); sctp != nil {
		if dtls := sctp.Transport(); dtls != nil {
			if ice := dtls.ICETransport(); ice != nil {
				if pair, err := ice.GetSelectedCandidatePair(); err == nil && pair != nil {
					return &net.UDPAddr{IP: net.ParseIP(pair.Remote.Address), Port: int(pair.Remote.Port)}
				}
			}
		}
	}
	a, _ := net.ResolveTCPAddr("tcp", from)
	return a
}

func (s *WebRTCServer) forget(pc *webrtc.PeerConnection) {
	s.mu.Lock()
	delete(s.pcs, pc)
	s.mu.Unlock()
}

// Close implements Server.
func (s *WebRTCServer) Close() error {
	if !s.shut() {
		return nil
	}
	s.mu.Lock()
	pcs := s.pcs
	s.pcs = nil
	s.mu.Unlock()
	for pc := range pcs {
		pc.Close()
	}
	err := s.mux.Close()
	s.conn.Close()
	return err
}

// WebRTCConn is a Go client's WebRTC session: what the browser's
// RTCPeerConnection does, for tests and Go clients.
type WebRTCConn struct {
	pc    *webrtc.PeerConnection
	dc    *webrtc.DataChannel
	hello []byte
	in    *inbox
}

// DialWebRTC opens a session through the signalling URL of a WebRTC
// server and returns once its datagram channel is open and the server's
// hello has arrived.
func DialWebRTC(ctx context.Context, signalURL string) (*WebRTCConn, error) {
	var se webrtc.SettingEngine
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	pc, err := webrtc.NewAPI(webrtc.WithSettingEngine(se)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	c := &WebRTCConn{pc: pc, in: newInbox()}
	fail := func(err error) (*WebRTCConn, error) {
		pc.Close()
		return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	ordered, zero := false, uint16(0)
	if c.dc, err = pc.CreateDataChannel("bitwire", &webrtc.DataChannelInit{Ordered: &ordered, MaxRetransmits: &zero}); err != nil {
		return fail(err)
	}
	hc, err := pc.CreateDataChannel("hello", nil)
	if err != nil {
		return fail(err)
	}
	opened := make(chan struct{})
	helloCh := make(chan []byte, 1)
	c.dc.OnOpen(func() { close(opened) })
	c.dc.OnMessage(func(m webrtc.DataChannelMessage) {
		if !m.IsString {
			c.in.put(m.Data)
		}
	})
	hc.OnMessage(func(m webrtc.DataChannelMessage) {
		if len(m.Data) > 0 && m.Data[0] == 'H' {
			select {
			case helloCh <- m.Data[1:]:
			default:
			}
		}
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed || st == webrtc.PeerConnectionStateDisconnected {
			c.in.close()
		}
	})
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return fail(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		return fail(err)
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	body, _ := json.Marshal(pc.LocalDescription())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, signalURL, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", "application/json")
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail(err)
	}
	b, err := io.ReadAll(io.LimitReader(rsp.Body, maxOffer))
	rsp.Body.Close()
	if err != nil {
		return fail(err)
	}
	if rsp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("signalling: %s: %s", rsp.Status, bytes.TrimSpace(b)))
	}
	var answer webrtc.SessionDescription
	if err := json.Unmarshal(b, &answer); err != nil {
		return fail(err)
	}
	if err := pc.SetRemoteDescription(answer); err != nil {
		return fail(err)
	}
	for opened != nil || helloCh != nil {
		select {
		case <-opened:
			opened = nil
		case h := <-helloCh:
			c.hello, helloCh = h, nil
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
	return c, nil
}

// Send implements Conn.
func (c *WebRTCConn) Send(b []byte) error {
	if len(b) > 65536 {
		return ErrTooLarge
	}
	if c.in.closed.Load() {
		return ErrClosed
	}
	if err := c.dc.Send(b); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

// Receive implements Conn.
func (c *WebRTCConn) Receive(ctx context.Context) ([]byte, error) { return c.in.get(ctx) }

// Hello implements Conn.
func (c *WebRTCConn) Hello() []byte { return c.hello }

// Close implements Conn.
func (c *WebRTCConn) Close() error {
	c.in.close()
	return c.pc.Close()
}
