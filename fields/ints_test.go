package fields

import (
	"math"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func TestBitsRequired(t *testing.T) {
	for x, want := range map[uint64]int{
		0: 0, 1: 1, 2: 2, 3: 2, 4: 3, 7: 3, 8: 4, 255: 8, 256: 9,
		1<<32 - 1: 32, 1 << 32: 33, 1<<63 - 1: 63, 1 << 63: 64, math.MaxUint64: 64,
	} {
		require.Equal(t, want, BitsRequired(x), "BitsRequired(%d)", x)
	}
}

func TestWriteUintExactBits(t *testing.T) {
	var w bits.Writer
	require.NoError(t, WriteUint(&w, 0b1011, 4))
	require.NoError(t, WriteUint(&w, 0, 0))
	require.NoError(t, WriteUint(&w, 5, 7))
	require.NoError(t, WriteUint(&w, math.MaxUint64, 64))
	require.Equal(t, 4+7+64, w.Len())
	require.Equal(t, "1101"+"1010000"+lsb(math.MaxUint64, 64), stream(&w))

	r := reader(&w)
	for _, c := range []struct {
		n    int
		want uint64
	}{{4, 0b1011}, {0, 0}, {7, 5}, {64, math.MaxUint64}} {
		got, err := ReadUint(r, c.n)
		require.NoError(t, err)
		require.Equal(t, c.want, got)
	}
	requireDone(t, r)
}

func TestWriteUintErrors(t *testing.T) {
	var w bits.Writer
	require.ErrorIs(t, WriteUint(&w, 16, 4), ErrOutOfRange)
	require.ErrorIs(t, WriteUint(&w, 1, 0), ErrOutOfRange)
	require.ErrorIs(t, WriteUint(&w, 1<<63, 63), ErrOutOfRange)
	require.Error(t, WriteUint(&w, 0, 65))
	require.Error(t, WriteUint(&w, 0, -1))
	require.Equal(t, 0, w.Len(), "a failed write writes nothing")

	_, err := ReadUint(bits.NewReader([]byte{1}), 9)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
	_, err = ReadUint(bits.NewReader([]byte{1}), 65)
	require.Error(t, err)
	_, err = ReadUint(bits.NewReader([]byte{1}), -1)
	require.Error(t, err)
}

func TestWriteIntExactBits(t *testing.T) {
	var w bits.Writer
	require.NoError(t, WriteInt(&w, -1, 1))
	require.NoError(t, WriteInt(&w, -3, 4)) // 1101
	require.NoError(t, WriteInt(&w, 7, 4))
	require.NoError(t, WriteInt(&w, -8, 4))
	require.Equal(t, 13, w.Len())
	require.Equal(t, "1"+lsb(0b1101, 4)+lsb(0b0111, 4)+lsb(0b1000, 4), stream(&w))

	r := reader(&w)
	for _, c := range []struct {
		n    int
		want int64
	}{{1, -1}, {4, -3}, {4, 7}, {4, -8}} {
		got, err := ReadInt(r, c.n)
		require.NoError(t, err)
		require.Equal(t, c.want, got)
	}
	requireDone(t, r)
}

func TestWriteIntRange(t *testing.T) {
	for n := 1; n <= 64; n++ {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if n < 64 {
			lo, hi = -1<<(n-1), 1<<(n-1)-1
		}
		var w bits.Writer
		for _, v := range []int64{lo, hi, 0, -1 & hi, lo / 2, hi / 2} {
			require.NoError(t, WriteInt(&w, v, n), "n=%d v=%d", n, v)
			r := reader(&w)
			require.NoError(t, r.Skip(w.Len()-n))
			got, err := ReadInt(r, n)
			require.NoError(t, err)
			require.Equal(t, v, got, "n=%d", n)
		}
		if n < 64 {
			require.ErrorIs(t, WriteInt(&w, lo-1, n), ErrOutOfRange, "n=%d", n)
			require.ErrorIs(t, WriteInt(&w, hi+1, n), ErrOutOfRange, "n=%d", n)
		}
	}
	var w bits.Writer
	require.Error(t, WriteInt(&w, 0, 0))
	require.Error(t, WriteInt(&w, 0, 65))
	require.Equal(t, 0, w.Len())
	_, err := ReadInt(bits.NewReader([]byte{0}), 0)
	require.Error(t, err)
	_, err = ReadInt(bits.NewReader([]byte{0}), 9)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}

func TestIntRoundTripRandom(t *testing.T) {
	rng := newRand(1)
	var w bits.Writer
	type item struct {
		u uint64
		s int64
		n int
	}
	var items []item
	for range 2000 {
		n := 1 + rng.IntN(64)
		u := rng.Uint64()
		if n < 64 {
			u &= 1<<uint(n) - 1
		}
		s := int64(u<<(64-n)) >> (64 - n)
		require.NoError(t, WriteUint(&w, u, n))
		require.NoError(t, WriteInt(&w, s, n))
		items = append(items, item{u, s, n})
	}
	r := reader(&w)
	for _, it := range items {
		u, err := ReadUint(r, it.n)
		require.NoError(t, err)
		require.Equal(t, it.u, u)
		s, err := ReadInt(r, it.n)
		require.NoError(t, err)
		require.Equal(t, it.s, s)
	}
	requireDone(t, r)
}

func TestFits(t *testing.T) {
	require.True(t, FitsInt(127, 8))
	require.True(t, FitsInt(-128, 8))
	require.False(t, FitsInt(128, 8))
	require.False(t, FitsInt(-129, 8))
	require.True(t, FitsInt(math.MinInt32, 32))
	require.False(t, FitsInt(math.MaxInt32+1, 32))
	require.True(t, FitsInt(math.MinInt64, 64))
	require.False(t, FitsInt(0, 0))
	require.True(t, FitsUint(255, 8))
	require.False(t, FitsUint(256, 8))
	require.True(t, FitsUint(math.MaxUint64, 64))
	require.True(t, FitsUint(0, 0))
	require.False(t, FitsUint(1, 0))
}

func TestFloatsRaw(t *testing.T) {
	var w bits.Writer
	nan32 := math.Float32frombits(0x7fa00001) // a signalling NaN with a payload
	nan64 := math.Float64frombits(0xfff4000000000123)
	f32s := []float32{0, float32(math.Copysign(0, -1)), 1.5, -3.25e-20, nan32, float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32}
	f64s := []float64{0, math.Copysign(0, -1), 1.5, -3.25e-200, nan64, math.Inf(1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	for i := range f32s {
		WriteFloat32(&w, f32s[i])
		WriteFloat64(&w, f64s[i])
	}
	require.Equal(t, len(f32s)*(32+64), w.Len())

	var one bits.Writer
	WriteFloat32(&one, 1.5) // 0x3fc00000
	require.Equal(t, lsb(0x3fc00000, 32), stream(&one))

	r := reader(&w)
	for i := range f32s {
		f, err := ReadFloat32(r)
		require.NoError(t, err)
		require.Equal(t, math.Float32bits(f32s[i]), math.Float32bits(f))
		d, err := ReadFloat64(r)
		require.NoError(t, err)
		require.Equal(t, math.Float64bits(f64s[i]), math.Float64bits(d))
	}
	requireDone(t, r)

	_, err := ReadFloat32(bits.NewReader([]byte{1, 2, 3}))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
	_, err = ReadFloat64(bits.NewReader([]byte{1, 2, 3, 4, 5, 6, 7}))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}
