package replicate_test

import (
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/replicate"
)

// BenchmarkClientDecode is one Client.Decode of a packet of a world of
// 1,000 bodies of which about 10% move a tick (one 1200-byte packet a
// tick, acknowledged), with no event handler, with OnAdd and OnRemove
// handlers, and with an OnChange handler too (which computes the paths).
// The client starts over (Reset) when the 64 recorded packets are used.
func BenchmarkClientDecode(b *testing.B) {
	pkts := recordPackets(b, 1000, 64)
	b.Run("events=none", func(b *testing.B) { benchDecode(b, pkts, 0) })
	b.Run("events=add,remove", func(b *testing.B) { benchDecode(b, pkts, 1) })
	b.Run("events=add,remove,change", func(b *testing.B) { benchDecode(b, pkts, 2) })
}

func recordPackets(b *testing.B, n, ticks int) [][]byte {
	rng := rand.New(rand.NewSource(1))
	s, err := replicate.NewServer(bodyCodec)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := s.NewPeer(replicate.PeerConfig[Body]{})
	cl, _ := replicate.NewClient(bodyCodec)
	world := make([]Body, n)
	for i := range world {
		world[i] = randomBody(rng)
	}
	var pkts [][]byte
	for tick := uint32(1); tick <= uint32(ticks); tick++ {
		_ = s.Advance(tick)
		for i := range world {
			if tick == 1 || rng.Intn(10) == 0 {
				nudge(rng, &world[i])
				if _, err := s.Set(uint32(i), &world[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		pkt, ok, err := p.Encode(nil)
		if err != nil || !ok {
			b.Fatal(err, ok)
		}
		if _, err := cl.Decode(pkt); err != nil {
			b.Fatal(err)
		}
		_ = p.Ack(cl.Ack())
		pkts = append(pkts, pkt)
	}
	return pkts
}

func benchDecode(b *testing.B, pkts [][]byte, events int) {
	cl, _ := replicate.NewClient(bodyCodec)
	adds, changes := 0, 0
	if events >= 1 {
		cl.OnAdd(func(uint32, *Body) { adds++ })
		cl.OnRemove(func(uint32) {})
	}
	if events >= 2 {
		cl.OnChange(func(_ uint32, _ *Body, paths []string) { changes += len(paths) })
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(pkts)
		if k == 0 {
			cl.Reset()
		}
		if _, err := cl.Decode(pkts[k]); err != nil {
			b.Fatal(err)
		}
	}
}
