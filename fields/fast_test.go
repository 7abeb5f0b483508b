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

// TestPack32MatchesPack checks the float32 packer against Pack: wherever
// Pack32 reports ok it must return Pack's code, and wherever Pack fails it
// must not report ok (its caller then asks Pack, which returns the error).
// Inputs: every decodable code of the narrow widths (decoded to float32,
// negated, nudged by a few ulps, with components permuted and signs
// flipped), the float32s around every rounding boundary of a 9-bit grid,
// random rotations (also off unit length), ties, near-zero, subnormal, NaN
// and infinite components and random bit patterns. It also requires the
// fast path to serve nearly every random rotation, so that it cannot pass
// by refusing everything.
func TestPack32MatchesPack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for n := 2; n <= MaxQuatGridBits; n++ {
		q, err := NewQuat(n)
		require.NoError(t, err)
		g := q.Grid()
		var served, tried, fails int
		check := func(v [4]float32) bool {
			want, err := q.Pack([4]float64{float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])})
			got, ok := g.Pack32(v[0], v[1], v[2], v[3])
			tried++
			if err != nil {
				fails++
				if ok {
					t.Fatalf("n=%d v=%v: Pack fails (%v), Pack32 gives %#x", n, v, err, got)
				}
				return false
			}
			if ok {
				served++
				if got != want {
					t.Fatalf("n=%d v=%v: Pack32 gives %#x, Pack %#x", n, v, got, want)
				}
			}
			return ok
		}
		// every code of the narrow widths, some codes of the others
		mask := uint64(1)<<uint(n) - 1
		codes := 1 << uint(2+3*n)
		for i := 0; i < min(codes, 1<<20); i++ {
			u := uint64(i)
			if codes > 1<<20 {
				u = rng.Uint64() & (1<<uint(2+3*n) - 1)
			}
			if max(u>>2&mask, u>>uint(2+n)&mask, u>>uint(2+2*n)&mask) > mask-1 {
				continue // off the grid
			}
			r, err := q.Unpack(u)
			if err != nil {
				continue
			}
			v := [4]float32{float32(r[0]), float32(r[1]), float32(r[2]), float32(r[3])}
			check(v)
			check([4]float32{-v[0], -v[1], -v[2], -v[3]})
			check([4]float32{v[3], -v[2], v[1], v[0]}) // permuted, one sign flipped
			for range 2 {
				w := v
				for j := range w {
					w[j] = math.Float32frombits(math.Float32bits(w[j]) + uint32(rng.IntN(7)) - 3)
				}
				check(w)
			}
		}
		// random rotations, at unit length as float32 makes them and off it
		var unitServed int
		for range 200000 {
			r := randomRotation(rng)
			v := [4]float32{float32(r[0]), float32(r[1]), float32(r[2]), float32(r[3])}
			if check(v) {
				unitServed++
			}
			s := 1 + (rng.Float64()*2-1)*1.2e-3 // squared norms up to 2.4e-3 off: some refused
			check([4]float32{float32(r[0] * s), float32(r[1] * s), float32(r[2] * s), float32(r[3] * s)})
		}
		// Pack32 leaves to Pack only rounding boundaries and the codes
		// whose margin fails, rare on all but the coarsest grids.
		if n >= 5 {
			require.Greater(t, unitServed, 200000*95/100, "n=%d: Pack32 refuses too many rotations", n)
		}
		// ties, near-zero, subnormal and bad components
		h := float32(math.Sqrt2 / 2)
		specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, h, -h, 1e-30, -1e-30,
			math.Float32frombits(1), math.Float32frombits(0x807fffff), inf, -inf, nan, 1e30, float32(rng.Float64())}
		for _, a := range specials {
			for _, b := range specials {
				check([4]float32{a, b, 0, 0})
				check([4]float32{0, a, 0, b})
				check([4]float32{a, b, 0.5, 0.5})
				check([4]float32{0.5, a, -0.5, b})
				check([4]float32{a, h, b, h})
				check([4]float32{h, -h, a, b})
				check([4]float32{a, 1, b, 1e-20})
			}
		}
		for range 100000 {
			check([4]float32{math.Float32frombits(rng.Uint32()), math.Float32frombits(rng.Uint32()),
				math.Float32frombits(rng.Uint32()), math.Float32frombits(rng.Uint32())})
			a, b := float32(rng.Float64()*0.7), float32(rng.Float64()*0.7)
			c := float32(math.Sqrt(max(0, 1-2*float64(a)*float64(a)-float64(b)*float64(b))))
			check([4]float32{a, -a, b, c}) // two equal magnitudes
			check([4]float32{c, b, c, -a})
		}
		require.Greater(t, fails, 0)
		t.Logf("n=%d: %d inputs, %d served by Pack32, %d refused by Pack", n, tried, served, fails)
	}
	// The float32s around every rounding boundary of the 9-bit grid, in
	// each position, at unit length.
	q, err := NewQuat(9)
	require.NoError(t, err)
	g := q.Grid()
	for i := 0; i <= 510; i++ {
		bnd := (float64(i) - 255 - 0.5) * q.step             // between index i-1 and i
		for _, f := range []float64{bnd, bnd * (1 - 1e-7)} { // on the unit scale, and near it
			c := float32(f)
			for k := -4; k <= 4; k++ {
				x := math.Float32frombits(math.Float32bits(c) + uint32(k))
				if c == 0 {
					continue
				}
				y, z := float32(rng.Float64()*0.3), float32(rng.Float64()*0.3)
				w := float32(math.Sqrt(max(0, 1-float64(x)*float64(x)-float64(y)*float64(y)-float64(z)*float64(z))))
				for _, v := range [][4]float32{{x, y, z, w}, {y, x, z, w}, {y, z, x, w}, {w, y, z, x}} {
					want, err := q.Pack([4]float64{float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])})
					got, ok := g.Pack32(v[0], v[1], v[2], v[3])
					if ok && (err != nil || got != want) {
						t.Fatalf("v=%v: Pack32 gives %#x, Pack %#x, %v", v, got, want, err)
					}
				}
			}
		}
	}
}

// TestIndexTermsMatchIndex runs Index's fast path from IndexTerms, as a
// caller inlines it, against Index: around every rounding boundary of
// grids from min, anchored at zero, by bits and fine, and on random
// values; where the guard is not clear the caller calls Index, so only the
// values it accepts are compared, and most must be accepted.
func TestIndexTermsMatchIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 0))
	for _, q := range []Quantizer{
		mustQuantizerBits(t, 0, 360, 10),
		mustQuantizerBits(t, -180, 180, 12),
		mustQuantizer(t, 1, 64, 0.01),
		mustQuantizer(t, -100, 100, 0.001),
		mustQuantizer(t, 0, 10, 0.3),
		mustQuantizer(t, -1, 1, 1e-7),
		mustQuantizer(t, -1e6, 1e6, 1e-3),
	} {
		at, inv, off, ok := q.IndexTerms()
		if !ok {
			continue
		}
		var took, all int
		check := func(v float64) {
			if !(v >= q.Min() && v <= q.Max()) {
				return
			}
			all++
			y := float64((v-at)*inv) + off
			k := int64(y)
			if int64(y-IndexGuard) != k || int64(y+IndexGuard) != k {
				return
			}
			took++
			want, err := q.Index(v)
			require.NoError(t, err)
			if uint64(k) != want {
				t.Fatalf("[%v, %v] step %v: v=%v: the inline path gives %d, Index %d", q.Min(), q.Max(), q.Step(), v, k, want)
			}
		}
		for i := uint64(0); i <= min(q.Steps(), 20000); i++ {
			b := q.Value(i) + q.Step()/2 // a boundary, and the values around it
			for _, v := range []float64{b, float64(float32(b))} {
				for j, u, d := 0, v, v; j < 4; j, u, d = j+1, math.Nextafter(u, math.Inf(1)), math.Nextafter(d, math.Inf(-1)) {
					check(u)
					check(d)
				}
			}
		}
		for range 100000 {
			check(q.Min() + rng.Float64()*(q.Max()-q.Min()))
			check(float64(float32(q.Min() + rng.Float64()*(q.Max()-q.Min()))))
		}
		if took < all/2 {
			t.Errorf("[%v, %v] step %v: the inline path took %d of %d values", q.Min(), q.Max(), q.Step(), took, all)
		}
	}
}
