package gateway

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"

	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// The benchmarks run one world tick on one goroutine: 5–10% of 10,000
// entities move (as in replicate's BenchmarkServerTick), the Publisher
// publishes, and each gateway applies the tick's messages and encodes its
// clients' packets. The messages are handed from the Publisher to the
// gateways directly, not through NATS: the figures are the world's and the
// gateways' own work, and NATS's routing (one message a cell a tick to
// each gateway) is NATS's.
//
//	BenchmarkPublish: the world's tick (Set of the movers, Publish).
//	BenchmarkApply: that, and one gateway applying it (no clients): the
//	  difference is a gateway's fixed cost a tick.
//	BenchmarkGatewayTick/gateways=G: that, with 64 clients spread over G
//	  gateways, each encoding its packet a tick (1200-byte budget,
//	  priority by distance) and taking acks 2 to 5 ticks late, 5% of
//	  packets and acks lost; and 4 clients of a world of 100,000.
//
// Reported: bus-B/tick (the changes published a tick, what each gateway
// receives), world-cpu-ns/tick (the world's Sets and Publish), and for
// the gateways apply-cpu-ns/gw (one gateway's application of the bus),
// encode-cpu-ns/client (one client's Peer: acks and encoding) and
// gw-cpu-ns/client (all the gateways' time over the clients): the thread's
// CPU time around each part (getrusage), which a loaded machine does not
// inflate as it does the wall clock (ns/op).

func BenchmarkPublish(b *testing.B) { benchGateways(b, 0, 0, 10000) }

func BenchmarkApply(b *testing.B) { benchGateways(b, 1, 0, 10000) }

func BenchmarkGatewayTick(b *testing.B) {
	for _, g := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("gateways=%d/clients=64/entities=10000", g), func(b *testing.B) { benchGateways(b, g, 64, 10000) })
	}
	// A world ten times larger, for the figure on paper: a few clients,
	// since each costs about ten times more.
	b.Run("gateways=1/clients=4/entities=100000", func(b *testing.B) { benchGateways(b, 1, 4, 100000) })
}

// benchClient acknowledges what arrived without decoding it, with the
// tokens a Client computes (a CRC32C of each packet): the figures are the
// gateways', not the clients'.
type benchClient struct {
	peer         *replicate.Peer[Body]
	x, z         float32
	acks         []pendingAck
	newest, mask uint32
	guard        *snapshot.Integrity
	tokens       [33]uint32
}

type pendingAck struct {
	at  uint32
	ack replicate.Ack
}

// captured is a message the Publisher sent, kept for the gateways.
type captured struct {
	subject string
	data    []byte
}

func benchGateways(b *testing.B, gateways, clients, benchEntities int) {
	ns := startNATS(b, -1)
	defer ns.Shutdown()
	nc := connect(b, ns)
	pub, err := NewPublisher(nc, bodyCodec, Config[Body]{Subject: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var out []captured
	pub.out = func(subject string, data []byte) error {
		out = append(out, captured{subject: subject, data: data})
		return nil
	}
	gws := make([]*Gateway[Body], gateways)
	for k := range gws {
		if gws[k], err = NewGateway(nc, bodyCodec, Config[Body]{Subject: "bench"}); err != nil {
			b.Fatal(err)
		}
		gws[k].Close() // fed by hand below, once its request is in
	}
	waitRequests(b, pub, gateways)
	// The world's moves and the clients' losses draw from generators of
	// their own: the world is the same whatever the gateways and clients.
	wrng, rng := rand.New(rand.NewSource(1)), rand.New(rand.NewSource(2))
	cs := make([]*benchClient, clients)
	bodies := make([]Body, benchEntities)
	tick := uint32(0)
	var buf []byte
	var worldNs, applyNs, encodeNs, busBytes int64
	runtime.LockOSThread() // threadCPU is this goroutine's
	defer runtime.UnlockOSThread()
	timed := func(acc *int64, f func()) {
		t0 := threadCPU()
		f()
		*acc += (threadCPU() - t0).Nanoseconds()
	}
	step := func() {
		tick++
		before := pub.Stats().TickBytes
		timed(&worldNs, func() {
			if err := pub.Advance(tick); err != nil {
				b.Fatal(err)
			}
			if tick == 1 {
				for i := range bodies {
					bodies[i] = randomBody(wrng)
					pub.Set(uint32(i+1), &bodies[i])
				}
			} else {
				moving := benchEntities * (5 + wrng.Intn(6)) / 100
				for range moving {
					i := wrng.Intn(benchEntities)
					nudge(wrng, &bodies[i])
					if _, err := pub.Set(uint32(i+1), &bodies[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := pub.Publish(); err != nil {
				b.Fatal(err)
			}
		})
		busBytes += pub.Stats().TickBytes - before
		for k, g := range gws {
			timed(&applyNs, func() {
				done := false
				for _, m := range out {
					reply := m.subject == g.inbox
					if !reply && m.subject != "bench.cell.0" {
						continue // another gateway's full state
					}
					got, ok, err := g.handle(reply, m.data)
					if err != nil {
						b.Fatal(err)
					}
					done = done || (ok && got == tick)
				}
				if !done {
					b.Fatalf("gateway %d did not complete tick %d: %+v", k, tick, g.Stats())
				}
			})
			if tick == 1 {
				for i := k; i < clients; i += gateways {
					cs[i] = newBenchClient(b, g, rng)
				}
			}
			timed(&encodeNs, func() {
				for i := k; i < clients; i += gateways {
					buf = cs[i].tick(b, tick, rng, buf)
				}
			})
		}
		out = out[:0]
	}
	for range 60 { // warm up: the first full states go out
		step()
	}
	worldNs, applyNs, encodeNs, busBytes = 0, 0, 0, 0
	b.ResetTimer()
	for b.Loop() {
		step()
	}
	n := float64(b.N)
	b.ReportMetric(float64(busBytes)/n, "bus-B/tick")
	b.ReportMetric(float64(worldNs)/n, "world-cpu-ns/tick")
	if gateways > 0 {
		b.ReportMetric(float64(applyNs)/n/float64(gateways), "apply-cpu-ns/gw")
	}
	if clients > 0 {
		b.ReportMetric(float64(encodeNs)/n/float64(clients), "encode-cpu-ns/client")
		b.ReportMetric(float64(applyNs+encodeNs)/n/float64(clients), "gw-cpu-ns/client")
	}
	for _, c := range cs {
		if st := c.peer.Stats(); st.BadAcks != 0 {
			b.Fatalf("%d acks refused", st.BadAcks)
		}
	}
	for _, g := range gws {
		if st := g.Stats(); st.Gaps+st.Bad != 0 || st.Syncs != 1 {
			b.Fatalf("gateway: %+v", st)
		}
	}
}

func newBenchClient(b *testing.B, g *Gateway[Body], rng *rand.Rand) *benchClient {
	c := &benchClient{x: float32(rng.Float64()*400 - 200), z: float32(rng.Float64()*400 - 200)}
	var err error
	c.peer, err = g.Server().NewPeer(replicate.PeerConfig[Body]{Priority: func(id uint32, e *Body) float32 {
		dx, dz := e.X-c.x, e.Z-c.z
		return 1 / (1 + (dx*dx+dz*dz)*(1.0/1024))
	}})
	if err != nil {
		b.Fatal(err)
	}
	if c.guard, err = snapshot.NewIntegrity(snapshot.ModeNone, nil); err != nil {
		b.Fatal(err)
	}
	return c
}

// tick takes the acks due and encodes the client's packet of the tick.
func (c *benchClient) tick(b *testing.B, tick uint32, rng *rand.Rand, buf []byte) []byte {
	keep := c.acks[:0]
	for _, a := range c.acks {
		if a.at <= tick {
			c.peer.Ack(a.ack)
		} else {
			keep = append(keep, a)
		}
	}
	c.acks = keep
	pkt, ok, err := c.peer.Encode(buf[:0])
	if err != nil {
		b.Fatal(err)
	}
	if !ok || rng.Float64() < 0.05 {
		return pkt // nothing, or lost
	}
	h, _ := replicate.ParseHeader(pkt)
	if d := h.Seq - c.newest; c.newest == 0 || d > 32 {
		c.mask = 0
	} else {
		c.mask = c.mask<<d | 1<<(d-1)
	}
	c.newest = h.Seq
	_, token, err := c.guard.Open(pkt)
	if err != nil {
		b.Fatal(err)
	}
	c.tokens[h.Seq%33] = token
	a := replicate.Ack{Seq: c.newest, Mask: c.mask, Token: token}
	for i := uint32(0); i < 32; i++ {
		if c.mask&(1<<i) != 0 {
			a.MaskToken ^= c.tokens[(h.Seq-1-i)%33]
		}
	}
	if rng.Float64() >= 0.05 {
		c.acks = append(c.acks, pendingAck{at: tick + 2 + uint32(rng.Intn(4)), ack: a})
	}
	return pkt
}
