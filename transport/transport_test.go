package transport_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitwire/bitwire/transport"
)

// rig is one transport under test: a server and a way to dial it.
type rig struct {
	name     string
	srv      transport.Server
	dial     func(ctx context.Context) (transport.Conn, error)
	reliable bool // WebSocket: nothing lost, nothing reordered
}

// rigs starts every transport with opts, on loopback; t.Cleanup closes them.
func rigs(t testing.TB, opts transport.Options) []rig {
	t.Helper()
	var out []rig

	u, err := transport.ListenUDP("127.0.0.1:0", transport.UDPConfig{Options: opts, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	out = append(out, rig{name: "udp", srv: u, dial: func(ctx context.Context) (transport.Conn, error) {
		return transport.DialUDP(ctx, u.Addr().String(), nil)
	}})

	w, err := transport.ListenWebTransport("127.0.0.1:0", transport.WebTransportConfig{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	wurl := fmt.Sprintf("https://127.0.0.1:%d%s", w.Addr().Port, w.Path())
	out = append(out, rig{name: "webtransport", srv: w, dial: func(ctx context.Context) (transport.Conn, error) {
		return transport.DialWebTransport(ctx, wurl, w.CertificateHash())
	}})

	r, err := transport.ListenWebRTC(transport.WebRTCConfig{Options: opts, UDPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	rh := httptest.NewServer(r)
	t.Cleanup(func() { r.Close(); rh.Close() })
	out = append(out, rig{name: "webrtc", srv: r, dial: func(ctx context.Context) (transport.Conn, error) {
		return transport.DialWebRTC(ctx, rh.URL)
	}})

	s := transport.NewWebSocketServer(transport.WebSocketConfig{Options: opts})
	sh := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); sh.CloseClientConnections(); sh.Close() })
	out = append(out, rig{name: "websocket", srv: s, reliable: true, dial: func(ctx context.Context) (transport.Conn, error) {
		return transport.DialWebSocket(ctx, "ws"+strings.TrimPrefix(sh.URL, "http"))
	}})
	return out
}

// next returns the server's next event, failing the test after 5 s.
func next(t *testing.T, s transport.Server) transport.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := s.Receive(ctx)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return e
}

// keyOf is the hello the tests' servers hand each peer: a key made from
// its id.
func keyOf(p transport.PeerID) []byte {
	return binary.LittleEndian.AppendUint64([]byte("key of peer "), uint64(p))
}

// TestHelloAndDatagrams: on every transport, the hello reaches the client
// before it sends anything, datagrams of every size up to MaxDatagram
// cross both ways intact (the lossy ones may lose or reorder a few, never
// alter or duplicate one), and closing the client makes it leave.
func TestHelloAndDatagrams(t *testing.T) {
	for _, r := range rigs(t, transport.Options{Hello: func(p transport.PeerID) ([]byte, error) { return keyOf(p), nil }}) {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := r.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The first datagram makes a UDP peer join; the others join as
			// the session opens.
			first := []byte("first")
			if err := c.Send(first); err != nil {
				t.Fatal(err)
			}
			e := next(t, r.srv)
			if e.Kind != transport.Joined || e.Info == nil || e.Info.Transport != r.name {
				t.Fatalf("first event %v %+v, want joined over %s", e.Kind, e.Info, r.name)
			}
			peer := e.Peer
			if r.name == "udp" {
				if c.Hello() != nil || e.Info.Hello != nil {
					t.Fatalf("UDP hello %q / %q, want none (no secure channel)", c.Hello(), e.Info.Hello)
				}
			} else if want := keyOf(peer); !bytes.Equal(c.Hello(), want) || !bytes.Equal(e.Info.Hello, want) {
				t.Fatalf("hello: client has %q, server sent %q, want %q", c.Hello(), e.Info.Hello, want)
			}
			if e := next(t, r.srv); e.Kind != transport.Datagram || !bytes.Equal(e.Data, first) {
				t.Fatalf("got %v %q, want the first datagram", e.Kind, e.Data)
			}

			const n = 120
			sizes := func(i int) int { return 1 + i*(transport.MaxDatagram-1)/(n-1) } // 1 .. MaxDatagram
			payload := func(i int) []byte {
				b := make([]byte, sizes(i))
				for j := range b {
					b[j] = byte(i*7 + j)
				}
				b[0] = byte(i)
				return b
			}
			// Client → server, paced like a game's acks.
			for i := range n {
				if err := c.Send(payload(i)); err != nil {
					t.Fatalf("Send %d (%d bytes): %v", i, sizes(i), err)
				}
				time.Sleep(200 * time.Microsecond)
			}
			got := map[int]bool{}
			last := -1
			for len(got) < n {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				e, err := r.srv.Receive(ctx)
				cancel()
				if err != nil {
					break // the rest was lost
				}
				if e.Kind != transport.Datagram || e.Peer != peer {
					t.Fatalf("event %v of peer %d", e.Kind, e.Peer)
				}
				i := int(e.Data[0])
				if got[i] || !bytes.Equal(e.Data, payload(i)) {
					t.Fatalf("datagram %d duplicated or altered (%d bytes)", i, len(e.Data))
				}
				if r.reliable && i != last+1 {
					t.Fatalf("datagram %d after %d over a reliable, ordered transport", i, last)
				}
				got[i], last = true, i
			}
			if min := n * 95 / 100; len(got) < min || r.reliable && len(got) < n {
				t.Fatalf("%d of %d datagrams arrived on loopback", len(got), n)
			}
			// Server → client.
			for i := range n {
				if err := r.srv.Send(peer, payload(i)); err != nil {
					t.Fatalf("server Send %d: %v", i, err)
				}
				time.Sleep(200 * time.Microsecond)
			}
			got = map[int]bool{}
			for len(got) < n {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				d, err := c.Receive(ctx)
				cancel()
				if err != nil {
					break
				}
				i := int(d[0])
				if got[i] || !bytes.Equal(d, payload(i)) {
					t.Fatalf("datagram %d duplicated or altered (%d bytes)", i, len(d))
				}
				got[i] = true
			}
			if len(got) < n*95/100 || r.reliable && len(got) < n {
				t.Fatalf("%d of %d datagrams reached the client on loopback", len(got), n)
			}
			st := r.srv.Stats()
			if st.Joined != 1 || st.DatagramsOut != n || st.DatagramsIn < uint64(len(got)) {
				t.Fatalf("stats %+v", st)
			}
			switch r.name {
			case "udp": // the socket carries the payload and nothing else
				if st.WireOut != st.BytesOut || st.WireIn != st.BytesIn {
					t.Fatalf("UDP wire %d/%d bytes, payload %d/%d", st.WireIn, st.WireOut, st.BytesIn, st.BytesOut)
				}
			case "webtransport", "webrtc": // framing, encryption, handshakes on top
				if st.WireOut <= st.BytesOut || st.WireIn <= st.BytesIn {
					t.Fatalf("%s wire %d/%d bytes, payload %d/%d", r.name, st.WireIn, st.WireOut, st.BytesIn, st.BytesOut)
				}
			}

			c.Close()
			if e := next(t, r.srv); e.Kind != transport.Left || e.Peer != peer {
				t.Fatalf("after Close: %v of peer %d, want left of %d", e.Kind, e.Peer, peer)
			}
			if err := r.srv.Send(peer, first); !errors.Is(err, transport.ErrUnknownPeer) {
				t.Fatalf("Send to a peer that left: %v, want ErrUnknownPeer", err)
			}
		})
	}
}

// TestRefusedHello: a Hello that fails refuses the session on every
// transport with a secure channel; the client's dial fails with
// ErrHandshake and the server counts it.
func TestRefusedHello(t *testing.T) {
	for _, r := range rigs(t, transport.Options{Hello: func(transport.PeerID) ([]byte, error) { return nil, errors.New("server full") }}) {
		if r.name == "udp" {
			continue // no hello over plain UDP
		}
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := r.dial(ctx)
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded; want the session refused")
			}
			if !errors.Is(err, transport.ErrHandshake) {
				t.Fatalf("dial: %v, want ErrHandshake", err)
			}
			if st := r.srv.Stats(); st.Refused != 1 || st.Joined != 0 {
				t.Fatalf("stats %+v, want one refused, none joined", st)
			}
		})
	}
}

// TestServerClose: Close ends Receive with ErrClosed and makes Send fail
// with ErrClosed; the clients' sessions end (Receive returns ErrClosed).
func TestServerClose(t *testing.T) {
	for _, r := range rigs(t, transport.Options{}) {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := r.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Send([]byte("hi"))
			e := next(t, r.srv)
			if e.Kind != transport.Joined {
				t.Fatalf("event %v", e.Kind)
			}
			var wg sync.WaitGroup
			var rerr error
			wg.Go(func() {
				for {
					_, rerr = r.srv.Receive(ctx)
					if rerr != nil {
						return
					}
				}
			})
			if err := r.srv.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			wg.Wait()
			if !errors.Is(rerr, transport.ErrClosed) {
				t.Fatalf("Receive after Close: %v, want ErrClosed", rerr)
			}
			if err := r.srv.Send(e.Peer, []byte("x")); !errors.Is(err, transport.ErrClosed) {
				t.Fatalf("Send after Close: %v, want ErrClosed", err)
			}
			if r.name == "udp" {
				return // UDP has no session for the client to see end
			}
			for {
				if _, err := c.Receive(ctx); err != nil {
					if !errors.Is(err, transport.ErrClosed) {
						t.Fatalf("client Receive after the server closed: %v, want ErrClosed", err)
					}
					return
				}
			}
		})
	}
}

// TestDisconnect: Disconnect ends a session from the server's side, with
// a Left event, and the client sees it end.
func TestDisconnect(t *testing.T) {
	for _, r := range rigs(t, transport.Options{}) {
		if r.name == "udp" {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			c, err := r.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			e := next(t, r.srv)
			if err := r.srv.Disconnect(e.Peer); err != nil {
				t.Fatal(err)
			}
			if e := next(t, r.srv); e.Kind != transport.Left {
				t.Fatalf("after Disconnect: %v", e.Kind)
			}
			if err := r.srv.Disconnect(e.Peer); !errors.Is(err, transport.ErrUnknownPeer) {
				t.Fatalf("second Disconnect: %v, want ErrUnknownPeer", err)
			}
			for {
				if _, err := c.Receive(ctx); err != nil {
					if !errors.Is(err, transport.ErrClosed) {
						t.Fatalf("client Receive: %v, want ErrClosed", err)
					}
					return
				}
			}
		})
	}
}

// TestWebRTCRefusesReliableChannel: a "bitwire" channel that is ordered
// or retransmits is not what the transport promises; the server refuses
// it rather than carry snapshots with head-of-line blocking.
func TestSignallingRefusesBadOffers(t *testing.T) {
	r, err := transport.ListenWebRTC(transport.WebRTCConfig{UDPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := httptest.NewServer(r)
	defer h.Close()
	for _, body := range []string{"", "{", `{"type":"answer","sdp":"v=0"}`, `{"type":"offer","sdp":"not sdp"}`, strings.Repeat("x", 70000)} {
		rsp, err := http.Post(h.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		rsp.Body.Close()
		if rsp.StatusCode != http.StatusBadRequest {
			t.Fatalf("offer %.20q: status %d, want 400", body, rsp.StatusCode)
		}
	}
	rsp, err := http.Get(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	rsp.Body.Close()
	if rsp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: status %d, want 405", rsp.StatusCode)
	}
	if st := r.Stats(); st.Refused != 5 {
		t.Fatalf("refused %d, want 5", st.Refused)
	}
}

// TestMaxPeers: a server with MaxPeers 1 refuses a second session on
// every transport (UDP: drops the second address's datagrams), counting
// it, and takes one again once the first has left.
func TestMaxPeers(t *testing.T) {
	for _, r := range rigs(t, transport.Options{MaxPeers: 1}) {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			a, err := r.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a.Send([]byte("a"))
			if e := next(t, r.srv); e.Kind != transport.Joined {
				t.Fatalf("event %v", e.Kind)
			}
			b, err := r.dial(ctx)
			if err == nil {
				b.Send([]byte("b"))
				defer b.Close()
			} else if !errors.Is(err, transport.ErrHandshake) {
				t.Fatalf("second dial: %v", err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for r.srv.Stats().Refused == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if st := r.srv.Stats(); st.Refused == 0 || st.Joined != 1 {
				t.Fatalf("stats %+v: want the second session refused", st)
			}
			a.Close()
			for {
				e := next(t, r.srv)
				if e.Kind == transport.Left {
					break
				}
			}
			c, err := r.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Send([]byte("c"))
			for {
				e := next(t, r.srv)
				if e.Kind == transport.Joined {
					break
				}
			}
		})
	}
}
