package snapshot_test

import (
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/snapshot"
)

// lowRateForgery runs a stream without integrity into which an off-path
// forger, who does not know the tick, sends a burst of burst increasing
// far-away ticks (forged "nothing changed" deltas against a tick the
// receiver holds) after every every honest packets, cycles times. It
// returns the honest packets refused and the forged ones accepted.
func lowRateForgery(t *testing.T, cycles, every, burst int, back bool) (honest, refused, forged, taken int) {
	l := newLink(t, 5)
	l.honest(200)
	g, _ := l.forger()
	rng := rand.New(rand.NewSource(9))
	for range cycles {
		far := l.tick + 1_000_000 + uint32(rng.Intn(1<<30))
		if back {
			far = 1 + uint32(rng.Intn(100)) // ticks start small: these are old
		}
		for k := range burst {
			var pkt []byte
			if back {
				fs, err := snapshot.NewSender(worldCodec)
				if err != nil {
					t.Fatal(err)
				}
				if pkt, err = fs.Encode(nil, far+uint32(k), &l.g.w); err != nil {
					t.Fatal(err)
				}
			} else {
				pkt = l.forgedDelta(l.tick, far+uint32(k), g)
			}
			if _, _, err := l.deliver(pkt); err == nil {
				taken++
			}
			forged++
		}
		_, _, r := l.honest(every)
		honest += every
		refused += r
	}
	return honest, refused, forged, taken
}

// A burst of DefaultRecoverAfter increasing far-away ticks re-anchored a
// receiver forward, and the honest stream was then stale until a run of
// it rewound the receiver: repeated every 8 honest packets, 88% of the
// honest stream was lost. A burst of old ticks (an off-path forger knows
// that ticks start small) rewound it, and the honest stream was then too
// far ahead until a run of it. The window now goes back to the stream it
// left at the first packet that continues it: a burst far ahead costs no
// honest packet, a burst of old ticks one (the rewind to the forged tick
// dropped the baselines after it, so the next honest delta lacks its
// baseline and the sender sends a full snapshot).
func TestLowRateForgeryAgainstTheWindow(t *testing.T) {
	for _, tc := range []struct {
		every int
		back  bool
	}{{8, false}, {16, false}, {60, false}, {8, true}, {60, true}} {
		every := tc.every
		honest, refused, forged, taken := lowRateForgery(t, 150, every, snapshot.DefaultRecoverAfter, tc.back)
		t.Logf("a burst (old ticks: %v) every %d honest packets: %d of %d honest packets refused (%.1f%%), %d of %d forged accepted",
			tc.back, every, refused, honest, 100*float64(refused)/float64(honest), taken, forged)
		bound := honest / 100
		if tc.back {
			bound = 150
		}
		if refused > bound {
			t.Errorf("a burst every %d: %d of %d honest packets refused", every, refused, honest)
		}
		if taken > forged/snapshot.DefaultRecoverAfter {
			t.Errorf("a burst every %d: %d of %d forged packets accepted, more than one a burst", every, taken, forged)
		}
	}
}
