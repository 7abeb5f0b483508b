package fields

import (
	"math"
	"math/rand/v2"
	"testing"
)

// unpackReference is Unpack by the definition, through rebuild: the reader
// the encoder's idempotence rule was written against.
func unpackReference(q Quat, u uint64) ([4]float64, error) {
	var out [4]float64
	if u>>uint(q.Bits()) != 0 {
		return out, ErrMalformed
	}
	m := int(u & 3)
	mask := q.steps + 1
	n := uint(q.n)
	idx := [3]uint64{u >> 2 & mask, u >> (2 + n) & mask, u >> (2 + 2*n) & mask}
	if idx[0] > q.steps || idx[1] > q.steps || idx[2] > q.steps {
		return out, ErrMalformed
	}
	d, ok := q.rebuild(idx)
	if !ok {
		if math.IsNaN(d) {
			return out, ErrInvalidValue
		}
		return out, ErrMalformed
	}
	k := 0
	for i := range 4 {
		if i == m {
			out[i] = d
		} else {
			out[i] = q.value(idx[k])
			k++
		}
	}
	return out, nil
}

// TestQuatUnpackMatchesReference checks the branch-free Unpack against the
// definition on every code of widths 2 to 6, and on a million random codes
// (some with bits above the coding) of widths 7 to 20.
func TestQuatUnpackMatchesReference(t *testing.T) {
	check := func(q Quat, u uint64) bool {
		got, gerr := q.Unpack(u)
		want, werr := unpackReference(q, u)
		if gerr != werr || got != want {
			t.Errorf("n=%d code %#x: Unpack %v, %v; definition %v, %v", q.n, u, got, gerr, want, werr)
			return false
		}
		return true
	}
	for n := 2; n <= 6; n++ {
		q, _ := NewQuat(n)
		for u := range uint64(1) << (2 + 3*n) {
			if !check(q, u) {
				return
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		q, _ := NewQuat(7 + r.IntN(14))
		u := r.Uint64() >> (62 - 3*q.n - r.IntN(2))
		if !check(q, u) {
			return
		}
	}
}
