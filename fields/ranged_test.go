package fields

import (
	"math"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func TestIntRangeExactBits(t *testing.T) {
	rg, err := NewIntRange(-10, 20)
	require.NoError(t, err)
	require.Equal(t, 5, rg.Bits())
	require.Equal(t, int64(-10), rg.Min())
	require.Equal(t, int64(20), rg.Max())

	var w bits.Writer
	require.NoError(t, rg.Write(&w, -10))
	require.NoError(t, rg.Write(&w, 3))  // offset 13 = 01101
	require.NoError(t, rg.Write(&w, 20)) // offset 30 = 11110
	require.Equal(t, 15, w.Len())
	require.Equal(t, "00000"+"10110"+"01111", stream(&w))

	r := reader(&w)
	for _, want := range []int64{-10, 3, 20} {
		got, err := rg.Read(r)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	requireDone(t, r)
}

func TestIntRangeLimits(t *testing.T) {
	cases := []struct {
		min, max int64
		bits     int
	}{
		{0, 0, 0}, {5, 5, 0}, {0, 1, 1}, {-1, 1, 2}, {0, 255, 8}, {-128, 127, 8}, {0, 256, 9},
		{math.MinInt64, math.MaxInt64, 64}, {math.MinInt64, math.MinInt64 + 1, 1}, {math.MaxInt64 - 3, math.MaxInt64, 2},
		{math.MinInt32, math.MaxInt32, 32},
	}
	rng := newRand(2)
	for _, c := range cases {
		rg, err := NewIntRange(c.min, c.max)
		require.NoError(t, err)
		require.Equal(t, c.bits, rg.Bits(), "[%d, %d]", c.min, c.max)
		vals := []int64{c.min, c.max}
		for range 200 {
			v := randInt64(rng)
			vals = append(vals, rg.Clamp(v))
			if v >= c.min && v <= c.max {
				vals = append(vals, v)
			}
		}
		var w bits.Writer
		for _, v := range vals {
			require.NoError(t, rg.Write(&w, v))
		}
		require.Equal(t, len(vals)*c.bits, w.Len())
		r := reader(&w)
		for _, v := range vals {
			got, err := rg.Read(r)
			require.NoError(t, err)
			require.Equal(t, v, got)
		}
		requireDone(t, r)
	}
}

func TestIntRangeErrors(t *testing.T) {
	_, err := NewIntRange(1, 0)
	require.Error(t, err)

	rg, _ := NewIntRange(-2, 2) // 3 bits, offsets 0..4
	var w bits.Writer
	require.ErrorIs(t, rg.Write(&w, -3), ErrOutOfRange)
	require.ErrorIs(t, rg.Write(&w, 3), ErrOutOfRange)
	require.ErrorIs(t, rg.Write(&w, math.MinInt64), ErrOutOfRange)
	require.Equal(t, 0, w.Len())
	require.Equal(t, int64(-2), rg.Clamp(-100))
	require.Equal(t, int64(2), rg.Clamp(100))
	require.Equal(t, int64(1), rg.Clamp(1))

	_, err = rg.Read(bits.NewReader(fromStream(t, "101"))) // offset 5
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = rg.Read(bits.NewReader(nil))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)

	var zero IntRange // [0, 0]
	require.NoError(t, zero.Write(&w, 0))
	require.Equal(t, 0, w.Len())
	got, err := zero.Read(bits.NewReader(nil))
	require.NoError(t, err)
	require.Equal(t, int64(0), got)
}

func TestUintRange(t *testing.T) {
	_, err := NewUintRange(2, 1)
	require.Error(t, err)

	rg, err := NewUintRange(100, 104)
	require.NoError(t, err)
	require.Equal(t, 3, rg.Bits())
	require.Equal(t, uint64(100), rg.Min())
	require.Equal(t, uint64(104), rg.Max())
	var w bits.Writer
	require.NoError(t, rg.Write(&w, 101))
	require.NoError(t, rg.Write(&w, 104))
	require.Equal(t, "100"+"001", stream(&w))
	require.ErrorIs(t, rg.Write(&w, 99), ErrOutOfRange)
	require.ErrorIs(t, rg.Write(&w, 105), ErrOutOfRange)
	require.Equal(t, 6, w.Len())
	require.Equal(t, uint64(100), rg.Clamp(0))
	require.Equal(t, uint64(104), rg.Clamp(math.MaxUint64))
	require.Equal(t, uint64(102), rg.Clamp(102))

	r := reader(&w)
	for _, want := range []uint64{101, 104} {
		got, err := rg.Read(r)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err = rg.Read(bits.NewReader(fromStream(t, "111")))
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = rg.Read(bits.NewReader(nil))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)

	full, err := NewUintRange(0, math.MaxUint64)
	require.NoError(t, err)
	require.Equal(t, 64, full.Bits())
	one, err := NewUintRange(7, 7)
	require.NoError(t, err)
	require.Equal(t, 0, one.Bits())

	rng := newRand(3)
	for range 200 {
		a, b := randUint64(rng), randUint64(rng)
		if a > b {
			a, b = b, a
		}
		rg, err := NewUintRange(a, b)
		require.NoError(t, err)
		require.Equal(t, BitsRequired(b-a), rg.Bits())
		v := rg.Clamp(randUint64(rng))
		var w bits.Writer
		require.NoError(t, rg.Write(&w, v))
		got, err := rg.Read(reader(&w))
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
}
