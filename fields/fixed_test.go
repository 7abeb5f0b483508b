package fields

import (
	"math"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func TestFixedConstructor(t *testing.T) {
	for _, p := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := NewFixed(p)
		require.Error(t, err, "prec %v", p)
	}
	f, err := NewFixed(0.01)
	require.NoError(t, err)
	require.Equal(t, 0.01, f.Prec())
}

func TestFixedExactBits(t *testing.T) {
	f, _ := NewFixed(0.01)
	var w bits.Writer
	require.NoError(t, f.Write(&w, 1.23, false)) // 123 = 1_111011: p=6
	require.Equal(t, 12, w.Len())
	require.Equal(t, lsb(6, 6)+lsb(123, 6), stream(&w))

	w.Reset(nil)
	require.NoError(t, f.Write(&w, -0.05, true)) // -5: sign, p=2, 01
	require.NoError(t, f.Write(&w, 0.004, true)) // rounds to 0
	require.Equal(t, "1"+lsb(2, 6)+lsb(1, 2)+"0"+lsb(0, 6)+"0", stream(&w))
	r := reader(&w)
	v, err := f.Read(r, true)
	require.NoError(t, err)
	require.InDelta(t, -0.05, v, 1e-15)
	v, err = f.Read(r, true)
	require.NoError(t, err)
	require.Equal(t, 0.0, v)
	requireDone(t, r)
}

func TestFixedToIntFromInt(t *testing.T) {
	rng := newRand(11)
	for _, prec := range []float64{0.01, 0.1, 1, 0.001, 1.0 / 3, 0.25, 1e-6, 7.5, 1e6} {
		f, err := NewFixed(prec)
		require.NoError(t, err)
		for k := 0; k < 20000; k++ {
			i := rng.Int64N(1 << 50)
			if k < 10 {
				i = int64(k)
			} else if k < 20 {
				i = 1<<50 - int64(k-9)
			}
			if rng.IntN(2) == 0 {
				i = -i
			}
			got, err := f.ToInt(f.FromInt(i))
			require.NoError(t, err)
			require.Equal(t, i, got, "prec %v", prec)
		}
	}

	f, _ := NewFixed(0.5)
	for v, want := range map[float64]int64{0.25: 1, -0.25: -1, 0.24: 0, 0.75: 2, -0.76: -2} {
		got, err := f.ToInt(v)
		require.NoError(t, err)
		require.Equal(t, want, got, "ToInt(%v): halves away from zero", v)
	}
}

func TestFixedErrors(t *testing.T) {
	f, _ := NewFixed(0.01)
	var w bits.Writer
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := f.ToInt(v)
		require.ErrorIs(t, err, ErrInvalidValue)
		require.ErrorIs(t, f.Write(&w, v, true), ErrInvalidValue)
	}
	for _, v := range []float64{1e17, -1e17, math.MaxFloat64, 0x1p63 * 0.01} {
		_, err := f.ToInt(v)
		require.ErrorIs(t, err, ErrOutOfRange, "%v", v)
		require.ErrorIs(t, f.Write(&w, v, true), ErrOutOfRange)
	}
	one, _ := NewFixed(1)
	_, err := one.ToInt(-0x1p63)
	require.ErrorIs(t, err, ErrOutOfRange, "-2^63 is excluded too")
	i, err := one.ToInt(0x1p62)
	require.NoError(t, err)
	require.Equal(t, int64(1)<<62, i)
	require.ErrorIs(t, f.Write(&w, -1, false), ErrOutOfRange)
	require.Equal(t, 0, w.Len())

	_, err = f.Read(bits.NewReader(fromStream(t, "1 000000 0")), true)
	require.ErrorIs(t, err, ErrMalformed)
	_, err = f.Read(bits.NewReader(nil), false)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)

	var zero Fixed // not usable, but must not panic
	_, err = zero.ToInt(1)
	require.Error(t, err)
}

func TestFixedRoundTrip(t *testing.T) {
	rng := newRand(12)
	f, _ := NewFixed(0.001)
	var w bits.Writer
	var vals []float64
	for range 2000 {
		v := (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(12)))
		vals = append(vals, v)
		require.NoError(t, f.Write(&w, v, true))
	}
	r := reader(&w)
	for _, v := range vals {
		got, err := f.Read(r, true)
		require.NoError(t, err)
		require.InDelta(t, v, got, 0.0005*(1+1e-9)+math.Abs(v)*1e-15)
	}
	requireDone(t, r)
}
