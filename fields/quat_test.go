package fields

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func mustQuat(t testing.TB, n int) Quat {
	t.Helper()
	q, err := NewQuat(n)
	require.NoError(t, err)
	return q
}

// randomRotation draws a uniformly distributed unit quaternion.
func randomRotation(rng *rand.Rand) [4]float64 {
	var v [4]float64
	var s float64
	for s < 1e-12 {
		s = 0
		for i := range v {
			v[i] = rng.NormFloat64()
			s += v[i] * v[i]
		}
	}
	s = math.Sqrt(s)
	for i := range v {
		v[i] /= s
	}
	return v
}

// angleDeg is the rotation angle between two unit quaternions, in degrees.
func angleDeg(a, b [4]float64) float64 {
	var dot float64
	for i := range a {
		dot += a[i] * b[i]
	}
	return 2 * math.Acos(math.Min(1, math.Abs(dot))) * 180 / math.Pi
}

func to32(v [4]float64) [4]float64 {
	for i := range v {
		v[i] = float64(float32(v[i]))
	}
	return v
}

func TestQuatConstructor(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 21, 64} {
		_, err := NewQuat(n)
		require.Error(t, err, "n=%d", n)
	}
	for n := 2; n <= 20; n++ {
		require.Equal(t, 2+3*n, mustQuat(t, n).Bits())
	}
	require.Equal(t, 29, mustQuat(t, DefaultQuatBits).Bits())
}

func TestQuatExactBits(t *testing.T) {
	q := mustQuat(t, 9)
	var w bits.Writer
	require.NoError(t, q.Write(&w, [4]float64{0, 0, 0, 1})) // identity: w dropped
	require.Equal(t, 29, w.Len())
	// 0 is grid point 255 of 510 steps: the identity is exact.
	require.Equal(t, lsb(3, 2)+lsb(255, 9)+lsb(255, 9)+lsb(255, 9), stream(&w))
	got, err := q.Read(reader(&w))
	require.NoError(t, err)
	require.Equal(t, [4]float64{0, 0, 0, 1}, got)

	w.Reset(nil)
	require.NoError(t, q.Write(&w, [4]float64{0, -1, 0, 0})) // y dropped, sign flipped
	require.Equal(t, lsb(1, 2)+lsb(255, 9)+lsb(255, 9)+lsb(255, 9), stream(&w))

	u, err := q.Pack([4]float64{0.5, 0.5, 0.5, 0.5}) // a four-way tie: x dropped
	require.NoError(t, err)
	require.Equal(t, uint64(0), u&3)

	// Largest at the bound: 1/√2 on two components; x wins the tie and y
	// takes the top index of the grid, minus the idempotence adjustment.
	h := math.Sqrt2 / 2
	u, err = q.Pack([4]float64{h, -h, 0, 0})
	require.NoError(t, err)
	require.Equal(t, uint64(0), u&3)
	got, err = q.Unpack(u)
	require.NoError(t, err)
	require.Greater(t, got[0], math.Abs(got[1]))
	// The adjustment costs up to about one more step here: a little over
	// the 0.5° that random rotations stay within.
	require.Less(t, angleDeg([4]float64{h, -h, 0, 0}, got), 0.55)
}

func TestQuatAccuracy(t *testing.T) {
	for _, c := range []struct {
		n     int
		limit float64 // degrees
	}{{9, 0.5}, {11, 0.15}, {2, 120}, {16, 0.005}, {20, 0.0003}} {
		q := mustQuat(t, c.n)
		rng := newRand(13)
		worst := 0.0
		for range 10000 {
			v := randomRotation(rng)
			got, err := q.Quantize(v)
			require.NoError(t, err)
			worst = math.Max(worst, angleDeg(v, got))
		}
		require.Less(t, worst, c.limit, "N=%d", c.n)
		t.Logf("N=%d: worst angle %.4f° over 10000 rotations", c.n, worst)
	}
}

func TestQuatIdempotent(t *testing.T) {
	rng := newRand(14)
	for _, n := range []int{2, 3, 5, 9, 11, 14, 17, 20} {
		q := mustQuat(t, n)
		for k := range 20000 {
			v := randomRotation(rng)
			if k%4 == 0 { // near ties, where the adjustment works
				v = nearTie(rng)
			}
			u, err := q.Pack(v)
			require.NoError(t, err)

			got, err := q.Quantize(v)
			require.NoError(t, err)
			u2, err := q.Pack(got)
			require.NoError(t, err)
			require.Equal(t, u, u2, "N=%d v=%v", n, v)
			u3, err := q.Pack(to32(got))
			require.NoError(t, err)
			require.Equal(t, u, u3, "N=%d v=%v after float32", n, v)

			// q and -q are the same rotation and the same bits.
			neg := [4]float64{-v[0], -v[1], -v[2], -v[3]}
			u4, err := q.Pack(neg)
			require.NoError(t, err)
			require.Equal(t, u, u4)

			// The dropped component is positive.
			require.Positive(t, got[u&3])
		}
	}
}

// nearTie returns a unit quaternion with two or more components of nearly
// the same largest magnitude.
func nearTie(rng *rand.Rand) [4]float64 {
	var v [4]float64
	k := 2 + rng.IntN(3)
	big := math.Sqrt(0.9 / float64(k))
	for i := range k {
		v[i] = big * (1 + 1e-4*rng.NormFloat64())
		if rng.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	for i := k; i < 4; i++ {
		v[i] = 0.1 * rng.NormFloat64()
	}
	rng.Shuffle(4, func(i, j int) { v[i], v[j] = v[j], v[i] })
	var s float64
	for _, c := range v {
		s += c * c
	}
	for i := range v {
		v[i] /= math.Sqrt(s)
	}
	return v
}

func TestQuatWriteRead(t *testing.T) {
	rng := newRand(15)
	q := mustQuat(t, 9)
	var w bits.Writer
	var vals [][4]float64
	for range 1000 {
		v := randomRotation(rng)
		vals = append(vals, v)
		require.NoError(t, q.Write(&w, v))
	}
	require.Equal(t, 29*len(vals), w.Len())
	r := reader(&w)
	for _, v := range vals {
		got, err := q.Read(r)
		require.NoError(t, err)
		want, err := q.Quantize(v)
		require.NoError(t, err)
		require.Equal(t, want, got)
		var norm float64
		for _, c := range got {
			norm += c * c
		}
		require.InDelta(t, 1, norm, 1e-12)
	}
	requireDone(t, r)

	// Slightly off unit length is fine and normalized first.
	a, err := q.Pack([4]float64{0, 0, 0, 1.0004})
	require.NoError(t, err)
	b, err := q.Pack([4]float64{0, 0, 0, 1})
	require.NoError(t, err)
	require.Equal(t, b, a)
}

func TestQuatBadInput(t *testing.T) {
	q := mustQuat(t, 9)
	var w bits.Writer
	for _, v := range [][4]float64{
		{math.NaN(), 0, 0, 1},
		{0, math.Inf(1), 0, 1},
		{0, 0, math.Inf(-1), 0},
		{0, 0, 0, 0},
		{0, 0, 0, 2},
		{0, 0, 0, 1.001},
		{0.5, 0.5, 0.5, 0.49},
		{1e300, 1e300, 0, 0},
	} {
		_, err := q.Pack(v)
		require.ErrorIs(t, err, ErrInvalidValue, "%v", v)
		require.ErrorIs(t, q.Write(&w, v), ErrInvalidValue)
		_, err = q.Quantize(v)
		require.ErrorIs(t, err, ErrInvalidValue)
	}
	require.Equal(t, 0, w.Len())

	// Three components at the top of the grid leave no room for the fourth.
	top := uint64(510)
	u := 3 | top<<2 | top<<11 | top<<20
	_, err := q.Unpack(u)
	require.ErrorIs(t, err, ErrInvalidValue)
	w.WriteBits(u, 29)
	_, err = q.Read(reader(&w))
	require.ErrorIs(t, err, ErrInvalidValue)

	// Room for the fourth, but it is not the largest: no encoder writes it.
	_, err = q.Unpack(top << 2) // a = 1/√2, b = c = -1/√2 ... sums above 1
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = q.Unpack(0 | 480<<2 | 256<<11 | 256<<20) // a ≈ 0.62, d ≈ 0.78: fine
	require.NoError(t, err)
	// Index 511 is above the grid of 510 steps.
	_, err = q.Unpack(3 | 511<<2 | 255<<11 | 255<<20)
	require.ErrorIs(t, err, ErrMalformed)
	_, err = q.Unpack(0 | 500<<2 | 400<<11 | 256<<20) // a ≈ 0.68, b ≈ 0.40, d ≈ 0.61
	require.ErrorIs(t, err, ErrMalformed)

	_, err = q.Unpack(1 << 29)
	require.ErrorIs(t, err, ErrMalformed, "bits above Bits()")
	_, err = q.Read(bits.NewReader([]byte{1, 2, 3}))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)

	var zero Quat // not usable, but must not panic
	_, err = zero.Pack([4]float64{0, 0, 0, 1})
	require.Error(t, err)
	_, err = zero.Unpack(0)
	require.Error(t, err)
	_, err = zero.Read(bits.NewReader([]byte{0}))
	require.Error(t, err)
}

// TestQuatEveryEncoding decodes every bit pattern of small quaternions:
// each one either fails or re-encodes to itself, so every rotation has
// exactly one encoding and decode-encode is the identity on valid input.
func TestQuatEveryEncoding(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5, 6} {
		q := mustQuat(t, n)
		valid := 0
		for u := uint64(0); u < 1<<uint(q.Bits()); u++ {
			v, err := q.Unpack(u)
			if err != nil {
				require.True(t, errorIsAny(err, ErrInvalidValue, ErrMalformed), "%v", err)
				continue
			}
			valid++
			u2, err := q.Pack(v)
			require.NoError(t, err)
			require.Equal(t, u, u2, "N=%d", n)
			u3, err := q.Pack(to32(v))
			require.NoError(t, err)
			require.Equal(t, u, u3, "N=%d float32", n)
		}
		require.Positive(t, valid)
	}
	// Larger N, sampled.
	rng := newRand(16)
	for _, n := range []int{9, 11, 20} {
		q := mustQuat(t, n)
		for range 200000 {
			u := rng.Uint64() & (1<<uint(q.Bits()) - 1)
			v, err := q.Unpack(u)
			if err != nil {
				continue
			}
			u2, err := q.Pack(to32(v))
			require.NoError(t, err)
			require.Equal(t, u, u2, "N=%d", n)
		}
	}
}

// surelyClear may skip the exact idempotence check only when that check
// would pass: over random rotations, near ties and pairs of components whose
// gap sweeps through the bound, at every width, it never says "clear" for a
// quantization that is not. And it must say so often at the default width,
// or it saves nothing.
func TestQuatSurelyClearImpliesClear(t *testing.T) {
	rng := newRand(31)
	for n := 2; n <= 20; n++ {
		q := mustQuat(t, n)
		sure, total := 0, 0
		check := func(v [4]float64) {
			m := 0
			for i := 1; i < 4; i++ {
				if math.Abs(v[i]) > math.Abs(v[m]) {
					m = i
				}
			}
			var norm2 float64
			for _, c := range v {
				norm2 += c * c
			}
			scale := 1 / math.Sqrt(norm2)
			var idx [3]uint64
			second, k := 0.0, 0
			for i := 0; i < 4; i++ {
				if i != m {
					idx[k] = q.index(v[i] * math.Copysign(scale, v[m]))
					second = max(second, math.Abs(v[i])*scale)
					k++
				}
			}
			total++
			if q.surelyClear(math.Abs(v[m])*scale, second) {
				sure++
				require.True(t, q.clear(idx), "n %d: %v judged surely clear", n, v)
			}
		}
		for i := 0; i < 4000; i++ {
			check(randomRotation(rng))
			check(nearTie(rng))
			// the two largest a gap g apart, g swept across the bound
			g := q.step * float64(rng.IntN(4000)) / 400
			a := 0.5 + 0.2*rng.Float64()
			v := [4]float64{a + g, a, 0.3 * rng.NormFloat64(), 0.3 * rng.NormFloat64()}
			rng.Shuffle(4, func(i, j int) { v[i], v[j] = v[j], v[i] })
			s := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2] + v[3]*v[3])
			check([4]float64{v[0] / s, v[1] / s, v[2] / s, v[3] / s})
		}
		if n == DefaultQuatBits {
			require.Greater(t, float64(sure)/float64(total), 0.5, "n %d: the shortcut is rarely taken", n)
		}
	}
}

// Pack's quick path must give packExact's bits for every input it does not
// hand over: random rotations in float64 and float32, near ties, decoded
// grid points, and components placed on or next to the half-way points
// where rounding turns, at every width.
func TestQuatQuickPathIsExact(t *testing.T) {
	rng := newRand(37)
	for n := 2; n <= 20; n++ {
		q := mustQuat(t, n)
		check := func(v [4]float64) {
			norm2 := v[0]*v[0] + v[1]*v[1] + v[2]*v[2] + v[3]*v[3]
			if !(math.Abs(norm2-1) <= quatNormTolerance) {
				return
			}
			m := 0
			for i := 1; i < 4; i++ {
				if math.Abs(v[i]) > math.Abs(v[m]) {
					m = i
				}
			}
			got, err := q.Pack(v)
			want, werr := q.packExact(v, norm2, m, math.Abs(v[m]))
			require.Equal(t, werr, err)
			require.Equal(t, want, got, "n %d: %v", n, v)
		}
		for i := 0; i < 3000; i++ {
			v := randomRotation(rng)
			check(v)
			check(to32(v))
			check(nearTie(rng))
			if u, err := q.Pack(v); err == nil {
				dec, err := q.Unpack(u)
				require.NoError(t, err)
				check(dec)
				check(to32(dec))
			}
			// three components on half-way points (nudged by up to a few
			// ulps, or not), the fourth making the norm 1
			var h [3]float64
			var s float64
			for k := range h {
				h[k] = (float64(rng.IntN(int(q.steps)))+0.5)*q.step - invSqrt2
				h[k] = h[k] * (1 + float64(rng.IntN(7)-3)*1e-16)
				s += h[k] * h[k]
			}
			if s >= 1 {
				continue
			}
			w := [4]float64{h[0], h[1], h[2], math.Sqrt(1 - s)}
			if rng.IntN(2) == 0 {
				w[3] = -w[3]
			}
			rng.Shuffle(4, func(i, j int) { w[i], w[j] = w[j], w[i] })
			check(w)
			check(to32(w))
		}
	}
}

// qmul is the Hamilton product a·b of quaternions (x, y, z, w).
func qmul(a, b [4]float64) [4]float64 {
	return [4]float64{
		a[3]*b[0] + a[0]*b[3] + a[1]*b[2] - a[2]*b[1],
		a[3]*b[1] - a[0]*b[2] + a[1]*b[3] + a[2]*b[0],
		a[3]*b[2] + a[0]*b[1] - a[1]*b[0] + a[2]*b[3],
		a[3]*b[3] - a[0]*b[0] - a[1]*b[1] - a[2]*b[2],
	}
}

func TestQuatPredict(t *testing.T) {
	q := mustQuat(t, 9)
	pack := func(v [4]float64) uint64 {
		u, err := q.Pack(v)
		require.NoError(t, err)
		return u
	}
	// A turn of 50° about z after the identity predicts the turn squared.
	r1, err := q.Quantize([4]float64{0, 0, math.Sin(25 * math.Pi / 180), math.Cos(25 * math.Pi / 180)})
	require.NoError(t, err)
	got, err := q.Predict(k0(q), pack(r1))
	require.NoError(t, err)
	require.Equal(t, pack(qmul(r1, r1)), got)
	require.NotEqual(t, pack(r1), got)

	rng := rand.New(rand.NewPCG(4, 21))
	for range 20000 {
		q0 := randomRotation(rng)
		// A body at rest is predicted at rest.
		k := pack(q0)
		got, err := q.Predict(k, k)
		require.NoError(t, err)
		require.Equal(t, k, got)

		// A body spinning at a constant rate, about an axis of the world,
		// is predicted within the quantization error of its two baselines
		// (a step of 0.0028 a component: about 0.3° a baseline), however
		// large its step.
		axis := randomRotation(rng)
		half := rng.Float64() * 0.5 // up to 57° a step
		s := math.Sin(half) / math.Sqrt(axis[0]*axis[0]+axis[1]*axis[1]+axis[2]*axis[2])
		d := [4]float64{axis[0] * s, axis[1] * s, axis[2] * s, math.Cos(half)}
		q1 := qmul(d, q0)
		q2 := qmul(d, q1)
		if rng.IntN(2) == 0 {
			q1 = [4]float64{-q1[0], -q1[1], -q1[2], -q1[3]} // either sign is the same rotation
		}
		got, err = q.Predict(pack(q0), pack(q1))
		require.NoError(t, err)
		p, err := q.Unpack(got)
		require.NoError(t, err)
		require.Less(t, angleDeg(p, q2), 1.2, "step of %.1f°", 4*half*180/math.Pi)
	}

	// A packing Unpack refuses is refused.
	bad := uint64(1)<<q.Bits() - 1 // indexes above the grid
	_, err = q.Predict(bad, k0(q))
	require.ErrorIs(t, err, ErrMalformed)
	_, err = q.Predict(k0(q), bad)
	require.ErrorIs(t, err, ErrMalformed)
}

// k0 is the packing of the identity rotation.
func k0(q Quat) uint64 {
	u, _ := q.Pack([4]float64{0, 0, 0, 1})
	return u
}
