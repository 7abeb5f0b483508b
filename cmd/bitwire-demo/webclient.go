package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
	"github.com/bitwire/bitwire/transport"
)

// Go clients of the page's server (-webclients N, with -web): what a page
// does, in Go, through package transport's own clients. Client i connects
// over WebTransport, WebRTC and WebSocket in turn (i mod 3), decodes its
// stream with its key from the hello, acknowledges through the same
// session, and checks every entity state it accepts against the server's
// record at its tick, as the UDP clients do: the transports carry the
// demo's stream unchanged, or the checks say otherwise.

// webClientTransports is the order in which -webclients take transports.
var webClientTransports = []string{"webtransport", "webrtc", "websocket"}

// WebClientSummary is what one Go client of the page's server saw.
type WebClientSummary struct {
	Transport  string `json:"transport"`
	Session    uint32 `json:"session"`
	Received   int    `json:"received"`
	Accepted   int    `json:"accepted"`
	Stale      int    `json:"stale"`
	NoBaseline int    `json:"no_baseline"`
	Errors     int    `json:"errors"`
	Checked    int    `json:"checked"`
	Unchecked  int    `json:"unchecked"` // the state's tick is no longer in the truth
	Desyncs    int    `json:"desyncs"`
	AcksSent   int    `json:"acks_sent"`
	DialError  string `json:"dial_error,omitempty"`
}

// startWebClients starts n Go clients of g; stop ends them and returns
// what they saw.
func (g *webGateway) startWebClients(n int) (stop func() []WebClientSummary) {
	ctx, cancel := context.WithCancel(context.Background())
	sums := make([]WebClientSummary, n)
	var wg sync.WaitGroup
	for i := range n {
		tr := webClientTransports[i%len(webClientTransports)]
		wg.Go(func() { sums[i] = g.runWebClient(ctx, tr) })
	}
	return func() []WebClientSummary {
		cancel()
		wg.Wait()
		return sums
	}
}

// runWebClient is one Go client over transport tr, until ctx ends.
func (g *webGateway) runWebClient(ctx context.Context, tr string) (sum WebClientSummary) {
	sum.Transport = tr
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	conn, err := g.dial(dctx, tr)
	if err != nil {
		sum.DialError = err.Error()
		sum.Errors++
		g.logf("web client over %s: %v", tr, err)
		return sum
	}
	defer conn.Close()
	hello := conn.Hello()
	if len(hello) < 4 {
		sum.Errors++
		return sum
	}
	sum.Session = binary.LittleEndian.Uint32(hello)
	opts := []replicate.Option{replicate.WithIntegrity(g.cfg.Inject.Integrity, hello[4:])}
	if len(hello) == 4 {
		opts[0] = replicate.WithIntegrity(g.cfg.Inject.Integrity, nil)
	}
	if exp := g.expiry(); exp > 0 {
		opts = append(opts, replicate.WithExpiry(exp))
	}
	rc, err := replicate.NewClient(g.codec, opts...)
	if err != nil {
		sum.Errors++
		return sum
	}
	var ack []byte
	send := func() {
		ack = replicate.AppendAck(ack[:0], rc.Ack())
		if conn.Send(ack) == nil {
			sum.AcksSent++
		}
	}
	send() // known both ways at once, as the page does
	for {
		pkt, err := conn.Receive(ctx)
		if err != nil {
			return sum
		}
		sum.Received++
		info, err := rc.Decode(pkt)
		if err == nil || rc.Ack().Missing != 0 {
			send()
		}
		switch {
		case errors.Is(err, replicate.ErrStale):
			sum.Stale++
			continue
		case errors.Is(err, replicate.ErrNoBaseline):
			sum.NoBaseline++
			continue
		case err != nil:
			sum.Errors++
			g.logf("web client %d over %s: decode error: %v", sum.Session, tr, err)
			continue
		}
		sum.Accepted++
		for _, id := range info.Updated {
			e, tick, _ := rc.Get(id)
			equal, found := g.truth.check(id, tick, e)
			switch {
			case !found:
				sum.Unchecked++
			case !equal:
				sum.Desyncs++
				g.logf("DESYNC: web client %d over %s: entity %d tick %d differs from the server's", sum.Session, tr, id, tick)
			default:
				sum.Checked++
			}
		}
	}
}

// dial opens a session of the page's server over tr, as a page would.
func (g *webGateway) dial(ctx context.Context, tr string) (transport.Conn, error) {
	addr := g.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	hp := net.JoinHostPort(host, strconv.Itoa(addr.Port))
	switch tr {
	case "webtransport":
		url := fmt.Sprintf("https://%s%s", net.JoinHostPort(host, strconv.Itoa(g.wt.Addr().Port)), g.wt.Path())
		return transport.DialWebTransport(ctx, url, g.wt.CertificateHash())
	case "webrtc":
		return transport.DialWebRTC(ctx, "http://"+hp+"/webrtc")
	case "websocket":
		return transport.DialWebSocket(ctx, "ws://"+hp+"/ws")
	}
	return nil, fmt.Errorf("no transport %q", tr)
}

// the replicate.Client expiry of the page's sessions, in ticks: as the
// UDP clients' (clientOptions), none with a MAC.
func (g *webGateway) expiry() int {
	if g.cfg.Inject.Integrity == snapshot.ModeMAC {
		return 0
	}
	return 3 * g.cfg.refreshTicks()
}
