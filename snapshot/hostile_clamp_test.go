package snapshot

import (
	"testing"

	"github.com/bitwire/bitwire"
)

type hcHP struct {
	H int64 `net:"bits=8,clamp,dmin=-8,dmax=7"`
}

// A clamped bits=N field with a window, out of range for a while: every
// tick is sent and decodes to the clamped value (before: "tick 6 does not
// decode", 15 of 20 ticks unsent).
func TestHostileClampWindowStream(t *testing.T) {
	c := bitwire.MustFor[hcHP]()
	s, err := NewSender(c)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := NewReceiver(c)
	if err != nil {
		t.Fatal(err)
	}
	for tick := uint32(1); tick <= 20; tick++ {
		st := hcHP{H: 120 + 2*int64(tick)}
		p, err := s.Encode(nil, tick, &st)
		if err != nil {
			t.Fatalf("tick %d: Encode: %v", tick, err)
		}
		var out hcHP
		if _, err := rc.Decode(p, &out); err != nil {
			t.Fatalf("tick %d: Decode: %v", tick, err)
		}
		if want := min(st.H, 127); out.H != want {
			t.Fatalf("tick %d: H = %d, want %d", tick, out.H, want)
		}
		if a, ok := rc.Ack(); ok {
			if err := s.HandleAck(a); err != nil {
				t.Fatal(err)
			}
		}
	}
}
