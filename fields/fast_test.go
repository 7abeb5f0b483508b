package fields

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFloat32ScaleMatchesIndex checks the multiply-only index against Index
// on the float32s nearest every rounding boundary of each grid it is proven
// for, on the ends and on random float32s in range; and that it is proven
// (or refused) where expected.
func TestFloat32ScaleMatchesIndex(t *testing.T) {
	cases := []struct {
		min, max, prec float64
		proven         bool
	}{
		{-512, 512, 0.01, true}, // anchored at zero
		{0, 64, 0.01, true},     // from 0
		{-100, 100, 0.01, true},
		{-100, 100, 0.001, false}, // float32s near 0.0005 too fine next to the sum's ulp
		{0, 1, 1.0 / 1024, true},  // a power-of-two step
		{-3, 5, 0.25, true},
		{-10, 10, 0.1, false}, // 1/step is 10, but step·10 - 1 is 2^-54
		{1, 64, 0.01, false},  // from 1: v - min rounds
		{0, 10, 0.3, false},   // 1/step is no integer
		{-1, 1, 1e-7, false},  // 1/step is no integer
	}
	rng := rand.New(rand.NewPCG(7, 0))
	for _, c := range cases {
		q := mustQuantizer(t, c.min, c.max, c.prec)
		mul, off, ok := q.Float32Scale()
		require.Equal(t, c.proven, ok, "%+v", c)
		if !ok {
			continue
		}
		check := func(v float32) {
			if !(float64(v) >= q.Min() && float64(v) <= q.Max()) {
				return
			}
			want, err := q.Index(float64(v))
			require.NoError(t, err)
			got := uint64(int64(float64(float64(v)*mul) + off))
			if got != want {
				t.Fatalf("%+v: v=%v (%#x): Float32Scale gives %d, Index %d", c, v, math.Float32bits(v), got, want)
			}
		}
		for k := int64(q.KMin()); k <= q.KMin()+int64(q.Steps()); k++ {
			b := float32((float64(k) - 0.5) * q.Step()) // a boundary, and the float32s around it
			for v, i := b, 0; i < 6; v, i = math.Nextafter32(v, float32(math.Inf(1))), i+1 {
				check(v)
			}
			for v, i := b, 0; i < 6; v, i = math.Nextafter32(v, float32(math.Inf(-1))), i+1 {
				check(v)
			}
		}
		check(float32(c.min))
		check(float32(c.max))
		check(0)
		check(float32(math.Copysign(0, -1)))
		for range 200000 {
			check(float32(c.min + rng.Float64()*(c.max-c.min)))
			check(math.Float32frombits(rng.Uint32()))
		}
	}
}

// TestQuatGridMatchesUnpack checks the table decoder against Unpack on every
// code of the narrow widths and on random codes of the tabled wide ones.
func TestQuatGridMatchesUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	for n := 2; n <= MaxQuatGridBits+1; n++ {
		q, err := NewQuat(n)
		require.NoError(t, err)
		g := q.Grid()
		if n > MaxQuatGridBits {
			require.Nil(t, g)
			continue
		}
		require.NotNil(t, g)
		check := func(u uint64) {
			want, err := q.Unpack(u)
			m, a, b, c, d, ok := g.Unpack(u)
			require.Equal(t, err == nil, ok, "n=%d u=%#x", n, u)
			mask := uint64(1)<<uint(n) - 1
			a32, b32, c32, d32, ok32 := g.Rebuild32(u>>2&mask, u>>uint(2+n)&mask, u>>uint(2+2*n)&mask)
			require.Equal(t, ok, ok32, "n=%d u=%#x", n, u)
			if !ok {
				return
			}
			o := quatOthers[m]
			got := [4]float64{}
			got[o[0]], got[o[1]], got[o[2]], got[m] = g.Value(a), g.Value(b), g.Value(c), d
			require.Equal(t, want, got, "n=%d u=%#x", n, u)
			require.Equal(t, [4]float32{float32(want[o[0]]), float32(want[o[1]]), float32(want[o[2]]), float32(want[m])}, [4]float32{a32, b32, c32, d32})
			require.Equal(t, float32(want[o[0]]), g.Value32(a))
			require.Equal(t, float32(want[o[1]]), g.Value32(b))
			require.Equal(t, float32(want[o[2]]), g.Value32(c))
		}
		if n <= 6 {
			for u := uint64(0); u < 1<<uint(2+3*n); u++ {
				check(u)
			}
			continue
		}
		for range 300000 {
			check(rng.Uint64() & (1<<uint(2+3*n) - 1))
		}
		// the codes Pack writes
		for range 100000 {
			v := randomRotation(rng)
			u, err := q.Pack(v)
			require.NoError(t, err)
			check(u)
		}
	}
}
