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
func lowRateForgery(t *testing.T, cycles, every, burst int) (honest, refused, forged, taken int) {
	l := newLink(t, 5)
	l.honest(20)
	g, _ := l.forger()
	rng := rand.New(rand.NewSource(9))
	for range cycles {
		far := l.tick + 1_000_000 + uint32(rng.Intn(1<<30))
		for k := range burst {
			if _, _, err := l.deliver(l.forgedDelta(l.tick, far+uint32(k), g)); err == nil {
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
// honest stream was lost. The window now goes back to the stream it left
// at the first packet that continues it.
func TestLowRateForgeryAgainstTheWindow(t *testing.T) {
	for _, every := range []int{8, 16, 60} {
		honest, refused, forged, taken := lowRateForgery(t, 150, every, snapshot.DefaultRecoverAfter)
		t.Logf("a burst every %d honest packets: %d of %d honest packets refused (%.1f%%), %d of %d forged accepted",
			every, refused, honest, 100*float64(refused)/float64(honest), taken, forged)
		if refused > honest/100 {
			t.Errorf("a burst every %d: %d of %d honest packets refused", every, refused, honest)
		}
		if taken > forged/snapshot.DefaultRecoverAfter {
			t.Errorf("a burst every %d: %d of %d forged packets accepted, more than one a burst", every, taken, forged)
		}
	}
}
