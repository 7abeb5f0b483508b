package fields

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func mustQuantizer(t testing.TB, min, max, prec float64) Quantizer {
	t.Helper()
	q, err := NewQuantizer(min, max, prec)
	require.NoError(t, err)
	return q
}

func mustQuantizerBits(t testing.TB, min, max float64, n int) Quantizer {
	t.Helper()
	q, err := NewQuantizerBits(min, max, n)
	require.NoError(t, err)
	return q
}

func TestQuantizerSeedSizes(t *testing.T) {
	for _, c := range []struct {
		min, max, prec float64
		steps          uint64
		bits           int
	}{
		{-100, 100, 0.1, 2000, 11},
		{-10, 10, 0.1, 200, 8},
		{0, 360, 0.1, 3600, 12},
		{-512, 512, 0.01, 102400, 17},
		{-16, 112, 0.01, 12800, 14},
		{0, 1, 0.3, 4, 3},                 // ceil(3.33)
		{0, 1, 0.25, 4, 3},                // exact
		{0, 1, 2, 1, 1},                   // prec wider than the range
		{0, 1, 1e-300, 0, -1},             // too many bits: error
		{0, 1e-300, 1, 1, 1},              // quotient far below 1
		{0, 2.7, 0.3, 9, 4},               // 9.000000000000002 is taken as 9, not 10
		{0, 0.3, 0.1, 3, 2},               // 2.9999999999999996 is 3 either way
		{0, 2.7, 0.3 * (1 - 1e-8), 10, 4}, // a real excess: ceil
		{0, 0.07, 0.01, 7, 3},             // 7.000000000000001
		{0, 1, 1.0 / 1023, 1023, 10},
	} {
		q, err := NewQuantizer(c.min, c.max, c.prec)
		if c.bits < 0 {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.steps, q.Steps(), "[%v, %v] prec %v", c.min, c.max, c.prec)
		require.Equal(t, c.bits, q.Bits(), "[%v, %v] prec %v", c.min, c.max, c.prec)
		require.Equal(t, c.min, q.Min())
		require.Equal(t, c.max, q.Max())
		require.LessOrEqual(t, q.Step(), c.prec*(1+1e-9))
		require.InDelta(t, (c.max-c.min)/float64(c.steps), q.Step(), 0)
	}

	q := mustQuantizerBits(t, 0, 360, 10)
	require.Equal(t, 10, q.Bits())
	require.Equal(t, uint64(1023), q.Steps())
	q = mustQuantizerBits(t, -1, 1, 53) // anchored at zero: 2^53-2 steps
	require.Equal(t, 53, q.Bits())
	require.Equal(t, 1.0, q.Value(q.Steps()))
	require.Equal(t, uint64(1<<53-2), q.Steps())
	q = mustQuantizerBits(t, -1, 1, 1) // points 0 and 1
	require.Equal(t, uint64(1), q.Steps())
	require.Equal(t, 0.0, q.Value(0))
	require.Equal(t, 1.0, q.Value(1))
}

// The reproducers of issue 14: zero in a range's interior is a grid point.
func TestQuantizerZeroOnGrid(t *testing.T) {
	q := mustQuantizerBits(t, -1, 1, 8)
	require.Equal(t, uint64(254), q.Steps())
	require.Equal(t, 8, q.Bits())
	i, err := q.Index(0)
	require.NoError(t, err)
	require.Equal(t, 0.0, q.Value(i)) // was 0.0039
	require.Equal(t, -1.0, q.Value(0))
	require.Equal(t, 1.0, q.Value(254))

	q = mustQuantizer(t, -1, 1, 0.03)
	require.Equal(t, uint64(66), q.Steps()) // K(1) = 33: -0.99 .. 0.99, clamped ends none
	i, err = q.Index(0)
	require.NoError(t, err)
	require.Equal(t, 0.0, q.Value(i)) // was 0.0149
	for _, v := range []float64{-1, -0.995, -0.985, 0.985, 1} {
		i, err := q.Index(v)
		require.NoError(t, err)
		require.LessOrEqual(t, math.Abs(q.Value(i)-v), 0.015*(1+1e-9), "v=%v", v)
	}

	// An asymmetric range whose ends are not multiples of the step: the
	// outermost multiples are clamped to min and max.
	q = mustQuantizer(t, -0.3, 1.05, 0.1)
	require.True(t, q.ZeroAnchored())
	require.Equal(t, uint64(14), q.Steps()) // K(-0.3) = -3, K(1.05) = 11
	require.Equal(t, -0.3, q.Value(0))      // -3·0.1 clamped to min
	require.Equal(t, 1.05, q.Value(14))
	i, err = q.Index(0)
	require.NoError(t, err)
	require.Equal(t, uint64(3), i)
	require.Equal(t, 0.0, q.Value(3))

	// Random ranges holding zero, in both forms: zero is exact, the index
	// takes no more bits than the grid from min to max took, and every
	// value in the range decodes within step/2 (prec/2 for prec=).
	rng := rand.New(rand.NewSource(41))
	for range 3000 {
		lo := -math.Exp(rng.Float64()*20 - 10)
		hi := math.Exp(rng.Float64()*20 - 10)
		var q Quantizer
		var oldBits int
		var err error
		if rng.Intn(2) == 0 {
			prec := (hi - lo) / math.Exp(rng.Float64()*30)
			q, err = NewQuantizer(lo, hi, prec)
			require.NoError(t, err)
			require.LessOrEqual(t, q.Step(), prec)
			old, err := newQuantizer(lo, hi, uint64(max(1, math.Ceil((hi-lo)/prec))))
			require.NoError(t, err)
			oldBits = old.Bits()
		} else {
			n := 1 + rng.Intn(40)
			q, err = NewQuantizerBits(lo, hi, n)
			require.NoError(t, err)
			oldBits = n
		}
		require.LessOrEqual(t, q.Bits(), oldBits, "[%v, %v]", lo, hi)
		i, err := q.Index(0)
		require.NoError(t, err)
		require.Equal(t, 0.0, q.Value(i), "[%v, %v] step %v", lo, hi, q.Step())
		for _, v := range []float64{lo, hi, math.Nextafter(lo, 0), math.Nextafter(hi, 0), lo + rng.Float64()*(hi-lo)} {
			i, err := q.Index(v)
			require.NoError(t, err)
			got := q.Value(i)
			require.LessOrEqual(t, math.Abs(got-v), q.Step()/2*(1+1e-9)+1e-300, "v=%v in [%v, %v]", v, lo, hi)
			require.True(t, got >= lo && got <= hi)
			back, err := q.Index(got)
			require.NoError(t, err)
			require.Equal(t, i, back)
		}
	}
}

func TestQuantizerConstructorErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range [][3]float64{
		{nan, 1, 0.1}, {0, nan, 0.1}, {0, 1, nan}, {-inf, 1, 0.1}, {0, inf, 0.1}, {0, 1, inf},
		{1, 1, 0.1}, {2, 1, 0.1}, {0, 1, 0}, {0, 1, -0.1},
		{-math.MaxFloat64, math.MaxFloat64, 1}, // span overflows
		{0, 1, 0x1p-54},                        // 2^54 steps
	} {
		_, err := NewQuantizer(c[0], c[1], c[2])
		require.Error(t, err, "%v", c)
	}
	_, err := NewQuantizer(0, 1, 0x1p-53) // 2^53 steps need 54 bits
	require.Error(t, err)
	q, err := NewQuantizer(0, 1, 1/(0x1p53-1))
	require.NoError(t, err)
	require.Equal(t, 53, q.Bits())

	for _, n := range []int{0, -1, 54, 64} {
		_, err := NewQuantizerBits(0, 1, n)
		require.Error(t, err, "n=%d", n)
	}
	_, err = NewQuantizerBits(1, 0, 8)
	require.Error(t, err)
	_, err = NewQuantizerBits(0, inf, 8)
	require.Error(t, err)
}

func TestQuantizerExactBits(t *testing.T) {
	q := mustQuantizer(t, -10, 10, 0.1) // 200 steps, 8 bits
	var w bits.Writer
	require.NoError(t, q.Write(&w, -10))  // 0
	require.NoError(t, q.Write(&w, 10))   // 200
	require.NoError(t, q.Write(&w, 0.04)) // 100.4 -> 100
	require.NoError(t, q.Write(&w, 0.05)) // 100.5 -> 101 (halves round up)
	require.Equal(t, 32, w.Len())
	require.Equal(t, lsb(0, 8)+lsb(200, 8)+lsb(100, 8)+lsb(101, 8), stream(&w))

	r := reader(&w)
	for _, want := range []float64{-10, 10, 0, 0.1} {
		got, err := q.Read(r)
		require.NoError(t, err)
		require.InDelta(t, want, got, 1e-12)
	}
	requireDone(t, r)
}

func TestQuantizerIndexValueInverse(t *testing.T) {
	seeds := []Quantizer{
		mustQuantizer(t, -512, 512, 0.01),
		mustQuantizer(t, -16, 112, 0.01),
		mustQuantizerBits(t, 0, 360, 10),
		mustQuantizer(t, -100, 100, 0.1),
	}
	for _, q := range seeds {
		require.Equal(t, q.Min(), q.Value(0))
		require.Equal(t, q.Max(), q.Value(q.Steps()))
		require.Equal(t, q.Max(), q.Value(q.Steps()+1), "out of range index decodes as max")
		for i := uint64(0); i <= q.Steps(); i++ {
			v := q.Value(i)
			got, err := q.Index(v)
			require.NoError(t, err)
			require.Equal(t, i, got)
			got, err = q.Index(float64(float32(v)))
			require.NoError(t, err)
			require.Equal(t, i, got, "float32 of Value(%d) in [%v, %v]", i, q.Min(), q.Max())
			if i > 0 {
				require.Greater(t, v, q.Value(i-1))
			}
		}
	}

	// Other grids, sampled: odd offsets, tiny and huge spans, wide
	// quantizers and grids fine next to their magnitude.
	rng := newRand(4)
	for _, c := range []struct {
		q     Quantizer
		exact bool // whether float64 resolves every grid point
	}{
		{mustQuantizer(t, 0.1, 0.7, 1e-5), true},
		{mustQuantizer(t, -1e-6, 3e-6, 1e-12), true},
		{mustQuantizer(t, -1e12, 1e12, 0.5), true},
		{mustQuantizer(t, 1e6, 1e6+1, 1e-9), true},
		{mustQuantizerBits(t, -1, 1, 52), true},
		{mustQuantizerBits(t, 0, 1, 52), true},
		{mustQuantizerBits(t, -1000, 3000, 50), true},
		{mustQuantizerBits(t, 1e3, 1e3+1, 40), true},
		{mustQuantizerBits(t, -3.7, 91.2, 1), true},
		{mustQuantizerBits(t, -3.7, 91.2, 31), true},
		// Finer than float64: 1 - step rounds to 1, 1e6 + step to 1e6.
		{mustQuantizerBits(t, -1, 1, 53), false},
		{mustQuantizerBits(t, 0, 360, 53), false},
		{mustQuantizerBits(t, 1e6, 1e6+1, 45), false},
	} {
		q := c.q
		for k := 0; k < 20000; k++ {
			var i uint64
			switch {
			case k <= 64:
				i = uint64(k)
			case k <= 129:
				i = q.Steps() - uint64(k-65)
			default:
				i = rng.Uint64N(q.Steps() + 1)
			}
			if i > q.Steps() { // grids of fewer than 65 steps
				continue
			}
			got, err := q.Index(q.Value(i))
			require.NoError(t, err)
			require.Equal(t, q.Value(i), q.Value(got), "[%v, %v] %d bits", q.Min(), q.Max(), q.Bits())
			if c.exact {
				require.Equal(t, i, got, "[%v, %v] %d bits", q.Min(), q.Max(), q.Bits())
			}
			if i > 0 {
				require.GreaterOrEqual(t, q.Value(i), q.Value(i-1))
			}
		}
	}
}

func TestQuantizerError(t *testing.T) {
	rng := newRand(5)
	qs := []Quantizer{
		mustQuantizer(t, -100, 100, 0.1),
		mustQuantizer(t, -10, 10, 0.1),
		mustQuantizer(t, 0, 360, 0.1),
		mustQuantizer(t, -512, 512, 0.01),
		mustQuantizer(t, -16, 112, 0.01),
		mustQuantizerBits(t, 0, 360, 10),
		mustQuantizer(t, 0.1, 0.7, 0.003),
		mustQuantizerBits(t, -1, 1, 1),
	}
	for _, q := range qs {
		var w bits.Writer
		vals := []float64{q.Min(), q.Max(), (q.Min() + q.Max()) / 2}
		for range 5000 {
			vals = append(vals, q.Min()+rng.Float64()*(q.Max()-q.Min()))
		}
		for _, v := range vals {
			require.NoError(t, q.Write(&w, v))
		}
		require.Equal(t, len(vals)*q.Bits(), w.Len())
		r := reader(&w)
		for _, v := range vals {
			got, err := q.Read(r)
			require.NoError(t, err)
			require.LessOrEqual(t, math.Abs(got-v), q.Step()/2*(1+1e-9), "v=%v in [%v, %v]", v, q.Min(), q.Max())
			// Quantizing the decoded value again changes nothing.
			i, err := q.Index(got)
			require.NoError(t, err)
			require.Equal(t, got, q.Value(i))
		}
		requireDone(t, r)
	}
}

func TestQuantizerBadValues(t *testing.T) {
	q := mustQuantizer(t, -10, 10, 0.1)
	var w bits.Writer
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := q.Index(v)
		require.ErrorIs(t, err, ErrInvalidValue)
		_, err = q.IndexClamp(v)
		require.ErrorIs(t, err, ErrInvalidValue)
		require.ErrorIs(t, q.Write(&w, v), ErrInvalidValue)
		require.ErrorIs(t, q.WriteClamp(&w, v), ErrInvalidValue)
	}
	for _, v := range []float64{-10.0001, 10.0001, math.MaxFloat64, -math.MaxFloat64} {
		_, err := q.Index(v)
		require.ErrorIs(t, err, ErrOutOfRange)
		require.ErrorIs(t, q.Write(&w, v), ErrOutOfRange)
	}
	require.Equal(t, 0, w.Len(), "failed writes write nothing")

	for v, want := range map[float64]uint64{-11: 0, -math.MaxFloat64: 0, 11: 200, math.MaxFloat64: 200, 0: 100, -10: 0, 10: 200} {
		i, err := q.IndexClamp(v)
		require.NoError(t, err)
		require.Equal(t, want, i, "IndexClamp(%v)", v)
	}
	require.NoError(t, q.WriteClamp(&w, 1e9))
	require.NoError(t, q.WriteClamp(&w, -1e9))
	require.Equal(t, lsb(200, 8)+lsb(0, 8), stream(&w))

	// Index 201..255 fit in 8 bits but are off the grid.
	_, err := q.Read(bits.NewReader([]byte{201}))
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = q.ReadIndex(bits.NewReader([]byte{255}))
	require.ErrorIs(t, err, ErrOutOfRange)
	i, err := q.ReadIndex(bits.NewReader([]byte{200}))
	require.NoError(t, err)
	require.Equal(t, uint64(200), i)
	_, err = q.Read(bits.NewReader(nil))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)

	// The zero Quantizer must not panic either.
	var zero Quantizer
	_, _ = zero.Index(0)
	_, _ = zero.IndexClamp(3)
	_ = zero.Write(&w, 0)
	_, _ = zero.Read(bits.NewReader(nil))
	_ = zero.Value(7)
}

// roundDiv multiplies where the definition divides; it must give the
// rounded quotient bit for bit, above all next to the half-way points where
// a product one ulp off would round the other way.
func TestRoundDivIsTheQuotient(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	steps := []float64{0.01, 0.1, 1.0 / 3, 2 * invSqrt2 / 511, 2 * invSqrt2 / (1<<20 - 1), 1024.0 / 102400, 7e-5, 3}
	for _, step := range steps {
		inv := 1 / step
		check := func(d float64) {
			if d < 0 || d/step >= maxQuickSteps {
				return
			}
			require.Equal(t, uint64(int64(d/step+0.5)), roundDiv(d, step, inv), "d %v step %v", d, step)
		}
		for i := 0; i < 20000; i++ {
			k := float64(rng.Intn(1 << 20))
			if step > 1 {
				k = float64(rng.Intn(1 << 10))
			}
			tie := (k + 0.5) * step // a half-way point, and its neighbours
			check(tie)
			check(math.Nextafter(tie, 0))
			check(math.Nextafter(tie, math.Inf(1)))
			check(k * step)
			check(rng.Float64() * k * step)
		}
	}
}

// A step so small that 1/step overflows to +Inf must not take the product
// path (the product would be NaN or Inf): the index is the quotient's.
func TestQuantizerSubnormalStep(t *testing.T) {
	q := mustQuantizer(t, 0, 1e-310, 1e-313)
	for _, v := range []float64{0, 1e-313, 5e-311, 9.99e-311, 1e-310} {
		got, err := q.Index(v)
		require.NoError(t, err)
		require.Equal(t, uint64(int64(v/q.Step()+0.5)), got, "v %v", v)
	}
}
