package bitwire

import (
	"testing"
)

type hcHP struct {
	H int64 `net:"bits=8,clamp,dmin=-8,dmax=7"`
}

type hcU struct {
	U uint16 `net:"bits=4,clamp,dmin=-2,dmax=2"`
}

// clamp with a window on bits=N: the window took the difference of the
// unclamped value, which the receiver refused (130 does not fit 8 bits).
func TestHostileClampWindowBits(t *testing.T) {
	d, err := MarshalDelta(&hcHP{127}, &hcHP{130})
	if err != nil {
		t.Fatal(err)
	}
	var out hcHP
	if err := UnmarshalDelta(d, &hcHP{127}, &out); err != nil {
		t.Fatalf("UnmarshalDelta(% x) = %v", d, err)
	}
	if out.H != 127 {
		t.Fatalf("H = %d, want 127 (130 clamped)", out.H)
	}
	// 130 clamps to 127, the baseline: unchanged, one bit
	if len(d) != 1 || d[0] != 0 {
		t.Fatalf("delta % x, want 00: the clamped value did not change", d)
	}
	c := MustFor[hcHP]()
	if !c.Equal(&hcHP{127}, &hcHP{130}) {
		t.Fatal("Equal(127, 130) is false; both clamp to 127")
	}
	for _, tc := range []struct{ base, cur, want int64 }{
		{120, 300, 127}, {-120, -300, -128}, {-128, -129, -128}, {0, 5, 5}, {100, 1000, 127}, {-5, 200, 127},
	} {
		d, err := c.MarshalDelta(&hcHP{tc.base}, &hcHP{tc.cur})
		if err != nil {
			t.Fatal(err)
		}
		var out hcHP
		if err := c.UnmarshalDelta(d, &hcHP{tc.base}, &out); err != nil || out.H != tc.want {
			t.Errorf("%d -> %d: %d, %v; want %d", tc.base, tc.cur, out.H, err, tc.want)
		}
	}
	cu := MustFor[hcU]()
	for _, tc := range []struct{ base, cur, want uint16 }{{14, 20, 15}, {15, 1000, 15}, {3, 1, 1}} {
		d, err := cu.MarshalDelta(&hcU{tc.base}, &hcU{tc.cur})
		if err != nil {
			t.Fatal(err)
		}
		var out hcU
		if err := cu.UnmarshalDelta(d, &hcU{tc.base}, &out); err != nil || out.U != tc.want {
			t.Errorf("uint %d -> %d: %d, %v; want %d", tc.base, tc.cur, out.U, err, tc.want)
		}
	}
}
