package fields

import (
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
)

// The unsigned Rice code with a bitlen escape: every value round-trips in
// exactly RiceBitlenBits bits, for every parameter; a value of the unary
// form written as an escape, and a truncated code, are refused.
func TestRiceBitlen(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	vals := []uint64{0, 1, 2, 3, 5, 6, 7, 63, 64, 1<<20 - 1, 1 << 24, 1<<32 - 1}
	for range 2000 {
		vals = append(vals, rng.Uint64N(1<<uint(rng.IntN(33))))
	}
	for k := 0; k <= RiceMaxK; k++ {
		var w bits.Writer
		for _, v := range vals {
			before := w.Len()
			WriteRiceBitlen(&w, v, k, 5)
			if got := w.Len() - before; got != RiceBitlenBits(v, k, 5) {
				t.Fatalf("k %d v %d: %d bits, RiceBitlenBits %d", k, v, got, RiceBitlenBits(v, k, 5))
			}
		}
		r := bits.NewReader(w.Bytes())
		for _, v := range vals {
			if got, err := ReadRiceBitlen(r, k, 5); err != nil || got != v {
				t.Fatalf("k %d: %d read as %d, %v", k, v, got, err)
			}
		}
	}
	// Exact sizes: 0 with k=0 is one bit; 5 with k=0 is 6; 6 escapes (6
	// ones, then 6 as bitlen W=5: prefix 2, 2 bits) = 13; 2^24 at k=0 is
	// 6+5+24.
	for _, c := range []struct {
		v       uint64
		k, want int
	}{{0, 0, 1}, {5, 0, 6}, {6, 0, 13}, {2, 1, 3}, {1 << 24, 0, 35}, {47, 3, 9}, {48, 3, 6 + 5 + 5}} {
		if got := RiceBitlenBits(c.v, c.k, 5); got != c.want {
			t.Errorf("RiceBitlenBits(%d, k=%d) = %d, want %d", c.v, c.k, got, c.want)
		}
	}
	// An escape holding 5 (k=0, the unary form's), and a truncated escape.
	var w bits.Writer
	w.WriteBits(1<<RiceEscape-1, RiceEscape)
	WriteBitlen(&w, 5, 5)
	if _, err := ReadRiceBitlen(bits.NewReader(w.Bytes()), 0, 5); err != ErrMalformed {
		t.Fatalf("escaped 5 with k=0: %v, want ErrMalformed", err)
	}
	if _, err := ReadRiceBitlen(bits.NewReader([]byte{0x3F}), 0, 5); err != bits.ErrUnexpectedEnd {
		t.Fatalf("truncated escape: %v, want ErrUnexpectedEnd", err)
	}
}

// AddCapped moves the mean no further than a value at the escape would:
// after a long run of zeros, one huge value leaves the parameter small.
func TestRiceMeanAddCapped(t *testing.T) {
	var a, b RiceMean
	a.AddCapped(1<<30, 0)
	b.Add(RiceEscape)
	if a != b {
		t.Fatalf("AddCapped(2^30, k=0) gives %+v, Add(RiceEscape) %+v", a, b)
	}
	if a.K() > 2 {
		t.Fatalf("K = %d after one capped jump", a.K())
	}
	a.AddCapped(3, 0)
	b.Add(3)
	if a != b {
		t.Fatal("AddCapped of a value under the cap differs from Add")
	}
}
