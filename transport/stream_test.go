package transport_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
	"github.com/bitwire/bitwire/transport"
)

// Box is the streams' entity.
type Box struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
	Z float32 `net:"q,min=-100,max=100,prec=0.01"`
}

// streamResult is what one replicate stream over a transport did.
type streamResult struct {
	packets, accepted, stale, noBaseline, errs int
	wrong                                      int // boxes the client holds wrong (or lacks) at the end
}

// runStream runs a replicate stream of 100 moving boxes for 90 ticks (the
// last 30 still, to let a lossy path catch up: only changes are sent, so
// one packet a moving tick) over srv and the Conn that
// dial opens, in ModeMAC under the key that reached the client: the hello,
// or for UDP the connect token's key. The client acknowledges through the
// same Conn. It returns what the client saw.
func runStream(t *testing.T, srv transport.Server, dial func(ctx context.Context) (transport.Conn, []byte, error)) streamResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	codec := bitwire.MustFor[Box]()
	conn, key, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if len(key) < snapshot.MinKeySize {
		t.Fatalf("the client got a key of %d bytes", len(key))
	}

	// The client: decode, acknowledge, until the Conn ends.
	rc, err := replicate.NewClient(codec, replicate.WithIntegrity(snapshot.ModeMAC, key))
	if err != nil {
		t.Fatal(err)
	}
	var res streamResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		var ack []byte
		for {
			pkt, err := conn.Receive(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			res.packets++
			_, err = rc.Decode(pkt)
			switch {
			case err == nil:
				res.accepted++
			case errors.Is(err, replicate.ErrStale):
				res.stale++
			case errors.Is(err, replicate.ErrNoBaseline):
				res.noBaseline++
			default:
				res.errs++
				t.Errorf("decode: %v", err)
			}
			a := rc.Ack()
			mu.Unlock()
			if err == nil || a.Missing != 0 {
				ack = replicate.AppendAck(ack[:0], a)
				conn.Send(ack)
			}
		}
	})
	// The first datagram makes a UDP peer join; a session's opening does
	// on the other transports.
	if err := conn.Send(replicate.AppendAck(nil, rc.Ack())); err != nil {
		t.Fatal(err)
	}

	rs, err := replicate.NewServer(codec)
	if err != nil {
		t.Fatal(err)
	}
	var peer *replicate.Peer[Box]
	var id transport.PeerID
	poll := func() { // the server's events so far
		done, stop := context.WithCancel(ctx)
		stop()
		for {
			e, err := srv.Receive(done)
			if err != nil {
				return
			}
			switch e.Kind {
			case transport.Joined:
				key := e.Info.Hello
				if peer, err = rs.NewPeer(replicate.PeerConfig[Box]{Budget: 1200, Bandwidth: 1 << 20, Integrity: snapshot.ModeMAC, Key: key}); err != nil {
					t.Fatal(err)
				}
				id = e.Peer
			case transport.Datagram:
				if a, err := replicate.ParseAck(e.Data); err == nil && peer != nil {
					peer.Ack(a)
				}
			}
		}
	}
	for peer == nil {
		if ctx.Err() != nil {
			t.Fatal("the client never joined")
		}
		poll()
		time.Sleep(time.Millisecond)
	}
	last := make([]Box, 100)
	for tick := uint32(1); tick <= 90; tick++ {
		poll()
		rs.Advance(tick)
		for i := range last {
			if tick <= 60 {
				f := float64(tick)/10 + float64(i)
				last[i] = Box{X: float32(50 * math.Sin(f)), Z: float32(50 * math.Cos(f*1.3))}
			}
			rs.Set(uint32(i+1), &last[i])
		}
		for {
			pkt, ok, err := peer.Encode(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if err := srv.Send(id, pkt); err != nil {
				t.Fatalf("tick %d: send: %v", tick, err)
			}
		}
		time.Sleep(4 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	conn.Close()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i := range last {
		want := last[i]
		codec.Quantize(&want)
		got, _, ok := rc.Get(uint32(i + 1))
		if !ok || *got != want {
			res.wrong++
		}
	}
	return res
}

// secureDial opens the rig's Conn and returns the key that reached it:
// the hello; rigs whose Options.Hello hands out fresh keys.
func secureDial(r rig) func(ctx context.Context) (transport.Conn, []byte, error) {
	return func(ctx context.Context) (transport.Conn, []byte, error) {
		c, err := r.dial(ctx)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Hello(), nil
	}
}

func newKey(transport.PeerID) ([]byte, error) {
	k := make([]byte, 32)
	_, err := rand.Read(k)
	return k, err
}

// TestReplicateOverEachTransport: package replicate's stream, unchanged,
// over every transport: the per-client MAC key handed out by the hello
// (UDP: by a connect token), every packet accepted, and the client ends
// with every box exactly as the server has it.
func TestReplicateOverEachTransport(t *testing.T) {
	secret := make([]byte, transport.TokenSecretSize)
	rand.Read(secret)
	for _, r := range rigs(t, transport.Options{Hello: newKey}) {
		t.Run(r.name, func(t *testing.T) {
			srv, dial := r.srv, secureDial(r)
			if r.name == "udp" {
				u, err := transport.ListenUDP("127.0.0.1:0", transport.UDPConfig{TokenSecret: secret})
				if err != nil {
					t.Fatal(err)
				}
				defer u.Close()
				srv, dial = u, tokenDial(secret, u.Addr().String())
			}
			res := runStream(t, srv, dial)
			if res.errs != 0 || res.wrong != 0 || res.packets < 60 || res.accepted != res.packets {
				t.Fatalf("%+v", res)
			}
			t.Logf("%+v", res)
		})
	}
}

// tokenDial dials a UDP server with a fresh connect token carrying a fresh
// key, as a web backend would issue them.
func tokenDial(secret []byte, addr string) func(ctx context.Context) (transport.Conn, []byte, error) {
	return func(ctx context.Context) (transport.Conn, []byte, error) {
		key, _ := newKey(0)
		tok, err := transport.IssueToken(secret, 7, key, time.Now().Add(time.Minute))
		if err != nil {
			return nil, nil, err
		}
		c, err := transport.DialUDP(ctx, addr, tok)
		return c, key, err
	}
}

// lossyProxy relays UDP between one client and a server, dropping a
// fraction of the server's datagrams and holding some back behind the
// next ones (reordering), after the first grace datagrams (a handshake).
// It is the demo's conditioner applied to a real socket pair, so that a
// transport on UDP (QUIC included) meets loss and reordering as it would
// on a path.
type lossyProxy struct {
	front, back *net.UDPConn
	client      atomic.Pointer[net.UDPAddr]
	dropped     atomic.Int64
	reordered   atomic.Int64
	wg          sync.WaitGroup
}

func newLossyProxy(t *testing.T, server *net.UDPAddr, loss, reorder float64, grace int) *lossyProxy {
	t.Helper()
	return newLossyProxyAt(t, 0, server, loss, reorder, grace)
}

// newLossyProxyAt is newLossyProxy on the given port of 127.0.0.1 (0: any).
func newLossyProxyAt(t *testing.T, port int, server *net.UDPAddr, loss, reorder float64, grace int) *lossyProxy {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, server)
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{front: front, back: back}
	p.wg.Go(func() { // client → server: untouched
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			p.client.Store(from)
			back.Write(buf[:n])
		}
	})
	p.wg.Go(func() { // server → client: lossy, reordering
		rng := mrand.New(mrand.NewPCG(1, 2))
		buf := make([]byte, 65536)
		var held []byte
		for n := 0; ; n++ {
			k, err := back.Read(buf)
			if err != nil {
				return
			}
			to := p.client.Load()
			if to == nil {
				continue
			}
			if n >= grace {
				if rng.Float64() < loss {
					p.dropped.Add(1)
					continue
				}
				if held == nil && rng.Float64() < reorder {
					held = append([]byte(nil), buf[:k]...)
					p.reordered.Add(1)
					continue
				}
			}
			front.WriteToUDP(buf[:k], to)
			if held != nil {
				front.WriteToUDP(held, to)
				held = nil
			}
		}
	})
	t.Cleanup(func() { front.Close(); back.Close(); p.wg.Wait() })
	return p
}

func (p *lossyProxy) addr() string { return p.front.LocalAddr().String() }

// TestReplicateThroughLoss: the stream over UDP and over WebTransport
// (QUIC datagrams, which QUIC never retransmits) through 10% loss and 5%
// reordering of the server's datagrams: packets are lost or late, never
// wrongly decoded, and the client still ends with every box right.
func TestReplicateThroughLoss(t *testing.T) {
	secret := make([]byte, transport.TokenSecretSize)
	rand.Read(secret)
	t.Run("udp", func(t *testing.T) {
		u, err := transport.ListenUDP("127.0.0.1:0", transport.UDPConfig{TokenSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		p := newLossyProxy(t, u.Addr(), 0.10, 0.05, 1)
		res := runStream(t, u, tokenDial(secret, p.addr()))
		checkLossy(t, res, p)
	})
	t.Run("webtransport", func(t *testing.T) {
		w, err := transport.ListenWebTransport("127.0.0.1:0", transport.WebTransportConfig{Options: transport.Options{Hello: newKey}})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		p := newLossyProxy(t, w.Addr(), 0.10, 0.05, 12)
		url := fmt.Sprintf("https://%s%s", p.addr(), w.Path())
		res := runStream(t, w, func(ctx context.Context) (transport.Conn, []byte, error) {
			c, err := transport.DialWebTransport(ctx, url, w.CertificateHash())
			if err != nil {
				return nil, nil, err
			}
			return c, c.Hello(), nil
		})
		checkLossy(t, res, p)
	})
}

// TestReplicateThroughLossWebRTC: the same over a WebRTC data channel
// (unordered, no retransmits), the server's candidates naming the proxy
// (WebRTCConfig.PublicPort), so that every SCTP packet from the server
// crosses it.
func TestReplicateThroughLossWebRTC(t *testing.T) {
	// The proxy needs the server's port, the server the proxy's: reserve
	// the proxy's front port first.
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := front.LocalAddr().(*net.UDPAddr).Port
	front.Close()
	r, err := transport.ListenWebRTC(transport.WebRTCConfig{Options: transport.Options{Hello: newKey}, UDPAddr: "127.0.0.1:0", PublicPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := httptest.NewServer(r)
	defer h.Close()
	p := newLossyProxyAt(t, port, r.Addr(), 0.10, 0.05, 30)
	res := runStream(t, r, func(ctx context.Context) (transport.Conn, []byte, error) {
		c, err := transport.DialWebRTC(ctx, h.URL)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Hello(), nil
	})
	checkLossy(t, res, p)
}

func checkLossy(t *testing.T, res streamResult, p *lossyProxy) {
	t.Helper()
	t.Logf("%+v, proxy dropped %d, reordered %d", res, p.dropped.Load(), p.reordered.Load())
	if p.dropped.Load() == 0 || p.reordered.Load() == 0 {
		t.Fatal("the proxy neither dropped nor reordered: the test tests nothing")
	}
	if res.errs != 0 || res.wrong != 0 {
		t.Fatalf("%+v: decode errors or boxes wrong at the end", res)
	}
}
