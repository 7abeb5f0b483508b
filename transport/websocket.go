package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// WebSocket: the fallback for networks where neither WebTransport (UDP
// blocked) nor WebRTC gets through. Each datagram is one binary message
// of a TCP connection, so nothing is lost and nothing is reordered, but a
// lost TCP segment holds back every later message until it is sent again
// (head-of-line blocking): a snapshot stream over WebSocket sees a
// stall where UDP would see one lost packet. Served as wss:// (TLS), the
// hello is confidential; over plain ws:// it is not.

// WebSocketConfig configures a WebSocket server.
type WebSocketConfig struct {
	Options
	// OriginPatterns are the origins (host patterns, as coder/websocket's
	// AcceptOptions) allowed besides the request's own host; nil allows
	// only same-origin pages, []string{"*"} any.
	OriginPatterns []string
	// SendQueue is how many datagrams wait for a slow connection before
	// more are dropped (Stats.DroppedOut); 0 means 64.
	SendQueue int
}

// WebSocketServer is a Server of WebSocket connections; it is an
// http.Handler to mount where the page connects (e.g. /ws).
type WebSocketServer struct {
	*hub
	cfg     WebSocketConfig
	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup // the handlers running
}

type wsPeer struct {
	c    *websocket.Conn
	out  chan []byte
	done chan struct{}
	once sync.Once
}

func (p *wsPeer) send(b []byte) error {
	select {
	case <-p.done:
		return ErrClosed
	default:
	}
	select {
	case p.out <- append([]byte(nil), b...):
		return nil
	default:
		return errors.New("send queue full")
	}
}

func (p *wsPeer) close() { p.once.Do(func() { close(p.done) }) }

// NewWebSocketServer returns a WebSocket server; mount it on an HTTP
// server.
func NewWebSocketServer(cfg WebSocketConfig) *WebSocketServer {
	if cfg.SendQueue <= 0 {
		cfg.SendQueue = 64
	}
	return &WebSocketServer{hub: newHub("websocket", cfg.Options), cfg: cfg}
}

// ServeHTTP upgrades the request and runs the session until it ends.
func (s *WebSocketServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	if s.full() {
		s.count(func(st *Stats) { st.Refused++ })
		http.Error(w, "server full", http.StatusServiceUnavailable)
		return
	}
	id := s.newID()
	hello, err := s.hello(id)
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		http.Error(w, "refused", http.StatusForbidden)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.OriginPatterns})
	if err != nil {
		s.count(func(st *Stats) { st.Refused++ })
		return
	}
	c.SetReadLimit(65536)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if err := c.Write(ctx, websocket.MessageBinary, hello); err != nil {
		c.CloseNow()
		return
	}
	p := &wsPeer{c: c, out: make(chan []byte, s.cfg.SendQueue), done: make(chan struct{})}
	addr, _ := net.ResolveTCPAddr("tcp", r.RemoteAddr)
	if !s.join(id, p, PeerInfo{Transport: "websocket", Addr: addr, Hello: hello}) {
		c.CloseNow()
		return
	}
	defer s.leave(id)
	go func() { // the writer: one message at a time, until the session ends
		defer cancel()
		for {
			select {
			case b := <-p.out:
				wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
				err := c.Write(wctx, websocket.MessageBinary, b)
				wcancel()
				if err != nil {
					return
				}
			case <-p.done:
				c.Close(websocket.StatusNormalClosure, "")
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			p.close()
			c.CloseNow()
			return
		}
		if typ == websocket.MessageBinary {
			s.deliver(id, b)
		}
	}
}

// Close implements Server: it ends every session.
func (s *WebSocketServer) Close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.shut()
	s.wg.Wait()
	return nil
}

// WebSocketConn is a Go client's WebSocket connection.
type WebSocketConn struct {
	c      *websocket.Conn
	hello  []byte
	in     *inbox
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wmu    sync.Mutex
}

// DialWebSocket connects to url (ws:// or wss://) and returns once the
// server's hello has arrived.
func DialWebSocket(ctx context.Context, url string) (*WebSocketConn, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	c.SetReadLimit(65536)
	typ, hello, err := c.Read(ctx)
	if err == nil && typ != websocket.MessageBinary {
		err = errors.New("hello is not binary")
	}
	if err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("%w: hello: %v", ErrHandshake, err)
	}
	wc := &WebSocketConn{c: c, hello: hello, in: newInbox()}
	wc.ctx, wc.cancel = context.WithCancel(context.Background())
	wc.wg.Go(func() {
		defer wc.in.close()
		for {
			typ, b, err := c.Read(wc.ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageBinary {
				wc.in.put(b)
			}
		}
	})
	return wc, nil
}

// Send implements Conn. It waits while TCP cannot take more.
func (c *WebSocketConn) Send(b []byte) error {
	if len(b) > 65536 {
		return ErrTooLarge
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.c.Write(c.ctx, websocket.MessageBinary, b); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

// Receive implements Conn.
func (c *WebSocketConn) Receive(ctx context.Context) ([]byte, error) { return c.in.get(ctx) }

// Hello implements Conn.
func (c *WebSocketConn) Hello() []byte { return c.hello }

// Close implements Conn.
func (c *WebSocketConn) Close() error {
	err := c.c.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	c.wg.Wait()
	return err
}
