//go:build go1.24

package snapshot_test

import (
	"fmt"
	"testing"

	"github.com/bitwire/bitwire/snapshot"
)

// What integrity and authentication cost. BenchmarkSeal and BenchmarkOpen
// time the trailer alone on packets of 65 bytes (a typical delta) and 1200
// (a full datagram); BenchmarkStream times a whole packet, encoded and
// decoded, of the test world (12 to 40 players, a delta against the
// previous tick) in each mode, and reports the bytes a packet takes.

var benchModes = []struct {
	name string
	mode snapshot.Mode
	opt  snapshot.Option
}{
	{"none", snapshot.ModeNone, nil},
	{"crc32c", snapshot.ModeChecksum, snapshot.WithChecksum()},
	{"mac", snapshot.ModeMAC, snapshot.WithMAC(testKey)},
}

func BenchmarkSeal(b *testing.B) {
	for _, m := range benchModes {
		for _, size := range []int{65, 1200} {
			b.Run(fmt.Sprintf("%s/%dB", m.name, size), func(b *testing.B) {
				key := []byte(nil)
				if m.mode == snapshot.ModeMAC {
					key = testKey
				}
				g, err := snapshot.NewIntegrity(m.mode, key)
				if err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, size, size+snapshot.MACSize)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					g.Seal(buf[:size], 0)
				}
			})
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	for _, m := range benchModes {
		for _, size := range []int{65, 1200} {
			b.Run(fmt.Sprintf("%s/%dB", m.name, size), func(b *testing.B) {
				key := []byte(nil)
				if m.mode == snapshot.ModeMAC {
					key = testKey
				}
				g, err := snapshot.NewIntegrity(m.mode, key)
				if err != nil {
					b.Fatal(err)
				}
				pkt, _ := g.Seal(make([]byte, size), 0)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := g.Open(pkt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkStream: one packet of a stream, encoded by the sender and
// decoded by the receiver (whose ack the sender takes), in each mode, with
// the default state hash (every 16th packet) and without it.
func BenchmarkStream(b *testing.B) {
	const ticks = 256
	g := newGame(30, 12, 40)
	states := make([]World, ticks)
	for i := range states {
		g.step()
		worldCodec.Copy(&states[i], &g.w)
	}
	for _, m := range benchModes {
		for _, hash := range []int{snapshot.DefaultHashEvery, 0} {
			name := m.name + "/hash16"
			if hash == 0 {
				name = m.name + "/nohash"
			}
			b.Run(name, func(b *testing.B) {
				s, err := snapshot.NewSender(worldCodec, m.opt, snapshot.WithStateHash(hash))
				if err != nil {
					b.Fatal(err)
				}
				r, err := snapshot.NewReceiver(worldCodec, m.opt)
				if err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 0, 4096)
				var out World
				tick := uint32(0)
				bytes := 0
				b.ReportAllocs()
				for b.Loop() {
					tick++
					pkt, err := s.Encode(buf[:0], tick, &states[tick%ticks])
					if err != nil {
						b.Fatal(err)
					}
					bytes += len(pkt)
					if _, err := r.Decode(pkt, &out); err != nil {
						b.Fatal(err)
					}
					a, _ := r.Ack()
					if err := s.HandleAck(a); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(bytes)/float64(b.N), "B/packet")
			})
		}
	}
}
