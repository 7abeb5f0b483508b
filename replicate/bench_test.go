//go:build go1.24

package replicate_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/integrity"
	"github.com/bitwire/bitwire/replicate"
)

// BenchmarkServerTick is one server tick on one goroutine: 5–10% of the
// entities move (Set), then every client's Peer encodes its packet (a
// 1200-byte budget, priority by distance to the client's own position), and
// the acks of earlier packets arrive, 2 to 5 ticks late with 5% lost.
// One client decodes its packets, so that its acks are a real Client's;
// the others acknowledge what arrived without decoding it (with the ack
// tokens a Client computes: a CRC32C of each packet), so the figures are
// the server's cost plus one client's and the others' tokens. It reports ns/tick (the op) and
// ns/client.
func BenchmarkServerTick(b *testing.B) {
	// PriorityEvery 8: the priorities of unchanged entities are computed
	// again every 8 ticks instead of every tick.
	b.Run("every=8/clients=64/entities=10000", func(b *testing.B) { benchServerTick(b, 64, 10000, 8, 0) })
	for _, entities := range []int{1000, 10000} {
		for _, clients := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("clients=%d/entities=%d", clients, entities), func(b *testing.B) {
				benchServerTick(b, clients, entities, 1, 0)
			})
		}
	}
	b.Run("clients=256/entities=10000", func(b *testing.B) { benchServerTick(b, 256, 10000, 1, 0) })
}

// BenchmarkServerTickParallel is BenchmarkServerTick's tick with the
// Peers encoded by Server.EncodeAll over 1, 2 and 4 workers (then the
// clients take their packets one after the other, as before): on a
// machine of N free cores the time of a tick should fall towards the
// server's share divided by min(N, workers). Its figures are wall-clock
// only: instruction counts do not show parallelism.
func BenchmarkServerTickParallel(b *testing.B) {
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d/clients=64/entities=10000", workers), func(b *testing.B) {
			benchServerTick(b, 64, 10000, 1, workers)
		})
	}
}

type benchClient struct {
	peer *replicate.Peer[Body]
	cl   *replicate.Client[Body]
	x, z float32
	acks []pendingAck
	// The ack state of a client that does not decode: what it received,
	// and the ack tokens of the last 33 packets (its guard computes them
	// as a Client's does).
	newest, mask uint32
	guard        *integrity.Guard
	tokens       [33]uint32
	pkt          []byte // this tick's packet, under EncodeAll
}

// takeAcks gives the Peer the acks that arrived by tick.
func (c *benchClient) takeAcks(tick uint32) {
	keep := c.acks[:0]
	for _, a := range c.acks {
		if a.at <= tick {
			c.peer.Ack(a.ack)
		} else {
			keep = append(keep, a)
		}
	}
	c.acks = keep
}

type pendingAck struct {
	at  uint32
	ack replicate.Ack
}

// benchServerTick runs the benchmark; workers 0: each Peer's Encode in
// turn, each client taking its packet at once; above 0: EncodeAll over
// that many workers, then the clients.
func benchServerTick(b *testing.B, clients, entities, every, workers int) {
	rng := rand.New(rand.NewSource(1))
	srv, err := replicate.NewServer(bodyCodec)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	bodies := make([]Body, entities)
	tick := uint32(1)
	srv.Advance(tick)
	for i := range bodies {
		bodies[i] = randomBody(rng)
		srv.Set(uint32(i+1), &bodies[i])
	}
	cs := make([]*benchClient, clients)
	for i := range cs {
		c := &benchClient{x: float32(rng.Float64()*400 - 200), z: float32(rng.Float64()*400 - 200)}
		c.peer, err = srv.NewPeer(replicate.PeerConfig[Body]{PriorityEvery: every, Priority: func(id uint32, e *Body) float32 {
			dx, dz := e.X-c.x, e.Z-c.z
			return 1 / (1 + (dx*dx+dz*dz)*(1.0/1024))
		}})
		if err != nil {
			b.Fatal(err)
		}
		// One client decodes, so that its acks are the real ones; the
		// others acknowledge every packet not lost (their view is not
		// needed to measure the server).
		if i == 0 {
			c.cl, _ = replicate.NewClient(bodyCodec)
		} else if c.guard, err = integrity.New(integrity.ModeNone, nil); err != nil {
			b.Fatal(err)
		}
		cs[i] = c
	}
	var buf []byte
	byPeer := map[*replicate.Peer[Body]]*benchClient{}
	for _, c := range cs {
		byPeer[c.peer] = c
	}
	// send keeps each Peer's packet (one a tick: no Bandwidth) for its
	// client; it runs on the workers, each Peer's client touched by one.
	send := func(p *replicate.Peer[Body], pkt []byte) {
		c := byPeer[p]
		c.pkt = append(c.pkt[:0], pkt...)
	}
	step := func() {
		tick++
		if err := srv.Advance(tick); err != nil {
			b.Fatal(err)
		}
		moving := entities * (5 + rng.Intn(6)) / 100
		for range moving {
			i := rng.Intn(entities)
			nudge(rng, &bodies[i])
			if _, err := srv.Set(uint32(i+1), &bodies[i]); err != nil {
				b.Fatal(err)
			}
		}
		if workers > 0 {
			for _, c := range cs {
				c.takeAcks(tick)
			}
			if err := srv.EncodeAll(workers, send); err != nil {
				b.Fatal(err)
			}
		}
		for _, c := range cs {
			var pkt []byte
			if workers == 0 {
				c.takeAcks(tick)
				var ok bool
				pkt, ok, err = c.peer.Encode(buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					continue
				}
				buf = pkt
			} else if pkt = c.pkt; len(pkt) == 0 {
				continue
			}
			c.pkt = c.pkt[:0]
			if rng.Float64() < 0.05 {
				continue // lost
			}
			var a replicate.Ack
			if c.cl != nil {
				if _, err := c.cl.Decode(pkt); err != nil {
					b.Fatal(err)
				}
				a = c.cl.Ack()
			} else {
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
				a = replicate.Ack{Seq: c.newest, Mask: c.mask, Token: token}
				for i := uint32(0); i < 32; i++ {
					if c.mask&(1<<i) != 0 {
						a.MaskToken ^= c.tokens[(h.Seq-1-i)%33]
					}
				}
			}
			if rng.Float64() < 0.05 {
				continue // the ack is lost
			}
			c.acks = append(c.acks, pendingAck{at: tick + 2 + uint32(rng.Intn(4)), ack: a})
		}
	}
	for range 60 { // warm up: the first full states go out
		step()
	}
	b.ResetTimer()
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(clients), "ns/client")
	for _, c := range cs {
		if st := c.peer.Stats(); st.BadAcks != 0 {
			b.Fatalf("%d acks refused", st.BadAcks)
		}
	}
}
