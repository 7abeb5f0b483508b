package fields

import (
	"math"
	"strings"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func TestZigzag(t *testing.T) {
	for v, u := range map[int64]uint64{
		0: 0, -1: 1, 1: 2, -2: 3, 2: 4, -64: 127, 63: 126,
		math.MaxInt64: math.MaxUint64 - 1, math.MinInt64: math.MaxUint64,
	} {
		require.Equal(t, u, Zigzag(v), "Zigzag(%d)", v)
		require.Equal(t, v, Unzigzag(u), "Unzigzag(%d)", u)
	}
	rng := newRand(6)
	for range 10000 {
		v := randInt64(rng)
		require.Equal(t, v, Unzigzag(Zigzag(v)))
	}
}

func TestVarintExactBits(t *testing.T) {
	var w bits.Writer
	WriteVarint(&w, Zigzag(-1), 5) // value 1: one group
	require.Equal(t, 6, w.Len())
	require.Equal(t, "10000"+"0", stream(&w))

	w.Reset(nil)
	WriteVarint(&w, 0, 7)
	require.Equal(t, "0000000"+"0", stream(&w))

	w.Reset(nil)
	WriteVarint(&w, 300, 7) // 300 = 0b10_0101100: groups 0101100, 0000010
	require.Equal(t, 16, w.Len())
	require.Equal(t, lsb(0b0101100, 7)+"1"+lsb(0b10, 7)+"0", stream(&w))

	w.Reset(nil)
	WriteVarint(&w, 5, 1) // 101: three 1-bit groups
	require.Equal(t, "11"+"01"+"10", stream(&w))

	w.Reset(nil)
	WriteVarint(&w, math.MaxUint64, 64)
	require.Equal(t, 65, w.Len())
	require.Equal(t, strings.Repeat("1", 64)+"0", stream(&w))
}

func TestVarintRoundTrip(t *testing.T) {
	signed := []int64{0, 1, -1, 63, -64, 1000, -1000, math.MinInt32, math.MaxInt32, math.MinInt64, math.MaxInt64}
	unsigned := []uint64{0, 1, 127, 128, 1<<32 - 1, 1 << 63, math.MaxUint64}
	rng := newRand(7)
	for g := 1; g <= 64; g++ {
		var w bits.Writer
		total := 0
		us := append([]uint64(nil), unsigned...)
		for _, v := range signed {
			us = append(us, Zigzag(v))
		}
		for range 100 {
			us = append(us, randUint64(rng))
		}
		for _, u := range us {
			WriteVarint(&w, u, g)
			total += VarintBits(u, g)
			require.Equal(t, total, w.Len(), "VarintBits(%d, %d)", u, g)
		}
		r := reader(&w)
		for _, u := range us {
			got, err := ReadVarint(r, g)
			require.NoError(t, err, "g=%d", g)
			require.Equal(t, u, got, "g=%d", g)
		}
		requireDone(t, r)
	}
	// The groups the brief names, signed, one value at a time.
	for _, g := range []int{1, 5, 7, 8, 63, 64} {
		for _, v := range signed {
			var w bits.Writer
			WriteVarint(&w, Zigzag(v), g)
			got, err := ReadVarint(reader(&w), g)
			require.NoError(t, err)
			require.Equal(t, v, Unzigzag(got), "g=%d", g)
		}
	}
}

func TestVarintBits(t *testing.T) {
	require.Equal(t, 8, VarintBits(0, 7))
	require.Equal(t, 8, VarintBits(127, 7))
	require.Equal(t, 16, VarintBits(128, 7))
	require.Equal(t, 80, VarintBits(math.MaxUint64, 7)) // ceil(64/7) = 10 groups
	require.Equal(t, 128, VarintBits(math.MaxUint64, 1))
	require.Equal(t, 65, VarintBits(0, 64))
	require.Equal(t, 65, VarintBits(math.MaxUint64, 64))
	require.Equal(t, 128, VarintBits(math.MaxUint64, 63))
	require.Equal(t, 6, VarintBits(1, 5))
}

func TestVarintMalformed(t *testing.T) {
	cases := []struct {
		name, pattern string
		g             int
		err           error
	}{
		{"non-minimal zero", "000 1 000 0", 3, ErrMalformed},
		{"non-minimal one", "100 1 000 0", 3, ErrMalformed},
		{"trailing zero group", "1111111 1 0000000 0", 7, ErrMalformed},
		// g=7: ten groups hold 64 bits; the tenth may only use its low bit.
		{"bit 64 set", strings.Repeat("1111111 1 ", 9) + "0100000 0", 7, ErrMalformed},
		{"eleven groups", strings.Repeat("1111111 1 ", 10) + "1000000 0", 7, ErrMalformed},
		{"more after 64", strings.Repeat("1", 64) + " 1 " + "1" + strings.Repeat("0", 63) + " 0", 64, ErrMalformed},
		{"g=1 65 groups", strings.Repeat("1 1 ", 64) + "1 0", 1, ErrMalformed},
		{"g=63 bit 64", strings.Repeat("1", 63) + " 1 " + "01" + strings.Repeat("0", 61) + " 0", 63, ErrMalformed},
		// Truncated inputs are whole bytes, so no zero padding completes them.
		{"truncated group", "10101 1 10", 5, bits.ErrUnexpectedEnd},
		{"truncated after continuation", "1010101 1", 7, bits.ErrUnexpectedEnd},
		{"g=64 no continuation bit", strings.Repeat("1", 64), 64, bits.ErrUnexpectedEnd},
		{"empty", "", 3, bits.ErrUnexpectedEnd},
	}
	for _, c := range cases {
		_, err := ReadVarint(bits.NewReader(fromStream(t, c.pattern)), c.g)
		require.ErrorIs(t, err, c.err, c.name)
	}

	// The largest values that are allowed for g=7 and g=63 still decode.
	for _, g := range []int{7, 63} {
		var w bits.Writer
		WriteVarint(&w, math.MaxUint64, g)
		got, err := ReadVarint(reader(&w), g)
		require.NoError(t, err)
		require.Equal(t, uint64(math.MaxUint64), got)
	}
}

func TestVarintGroupClamp(t *testing.T) {
	// A group size outside 1..64 is a caller bug; it must not panic, and the
	// writer and the reader agree on it.
	for _, g := range []int{-5, 0, 65, 1000} {
		var w bits.Writer
		WriteVarint(&w, 12345, g)
		require.Equal(t, VarintBits(12345, g), w.Len())
		got, err := ReadVarint(reader(&w), g)
		require.NoError(t, err)
		require.Equal(t, uint64(12345), got)
	}
}
