package fields

import (
	"math"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func TestHighBitAndWidth(t *testing.T) {
	for v, p := range map[uint64]int{0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 25: 4, 1 << 31: 31, 1 << 63: 63, math.MaxUint64: 63} {
		require.Equal(t, p, HighBit(v), "HighBit(%d)", v)
	}
	for size, w := range map[int]int{64: 6, 32: 5, 16: 4, 8: 3, 2: 1, 1: 0, 0: 0} {
		require.Equal(t, w, BitlenWidth(size), "BitlenWidth(%d)", size)
	}
}

func TestBitlenSeedSizes(t *testing.T) {
	require.Equal(t, 32, BitlenBits(123456789, 6))
	require.Equal(t, 9, BitlenBits(25, 5))
	require.Equal(t, 6, BitlenBits(3, 5))
	require.Equal(t, 6, BitlenBits(1, 5))
	require.Equal(t, 6, BitlenBits(0, 5))
	require.Equal(t, 6+63, BitlenBits(math.MaxUint64, 6))

	var w bits.Writer
	WriteBitlen(&w, 25, 5) // p=4, then 1001 (25 = 1_1001)
	require.Equal(t, lsb(4, 5)+lsb(0b1001, 4), stream(&w))
	w.Reset(nil)
	WriteBitlen(&w, 3, 5) // p=1, then 1
	require.Equal(t, lsb(1, 5)+"1", stream(&w))
	w.Reset(nil)
	WriteBitlen(&w, 0, 3)
	WriteBitlen(&w, 1, 3)
	require.Equal(t, "000"+"0"+"000"+"1", stream(&w))
	w.Reset(nil)
	WriteBitlen(&w, 123456789, 6)
	require.Equal(t, 32, w.Len())
	require.Equal(t, lsb(26, 6)+lsb(123456789, 26), stream(&w))
	w.Reset(nil)
	WriteBitlen(&w, math.MaxUint64, 6) // takes the two-call path
	require.Equal(t, lsb(63, 6)+lsb(math.MaxUint64, 63), stream(&w))
}

// TestAdaptiveMessage is the seed example: an int64 123456789, then a group
// of two int32 values 25 and 3, after the message's "any negative" flag.
func TestAdaptiveMessage(t *testing.T) {
	var w bits.Writer
	neg := false
	w.WriteBool(neg)
	require.NoError(t, WriteBitlenInt(&w, 123456789, BitlenWidth(64), neg))
	require.NoError(t, WriteBitlenInts(&w, []int64{25, 3}, BitlenWidth(32), neg))
	require.Equal(t, 49, w.Len()) // 1 + 32 + (1 + 9 + 6)
	require.Equal(t, "0"+
		lsb(26, 6)+lsb(123456789, 26)+
		"0"+lsb(4, 5)+lsb(0b1001, 4)+
		lsb(1, 5)+"1", stream(&w))

	r := reader(&w)
	flag, err := r.ReadBool()
	require.NoError(t, err)
	require.False(t, flag)
	a, err := ReadBitlenInt(r, 6, flag)
	require.NoError(t, err)
	require.Equal(t, int64(123456789), a)
	var pair [2]int64
	require.NoError(t, ReadBitlenInts(r, pair[:], 5, flag))
	require.Equal(t, [2]int64{25, 3}, pair)
	requireDone(t, r)
}

func TestBitlenRoundTrip(t *testing.T) {
	rng := newRand(8)
	for _, w := range []int{3, 4, 5, 6} {
		limit := uint64(math.MaxUint64)
		if w < 6 {
			limit = 1<<(1<<w) - 1 // the largest value whose HighBit fits w bits
		}
		vals := []uint64{0, 1, 2, 3, limit, limit / 2}
		for range 500 {
			vals = append(vals, randUint64(rng)%(limit/2+1)*2+uint64(rng.IntN(2)))
		}
		var wr bits.Writer
		total := 0
		for _, v := range vals {
			WriteBitlen(&wr, v, w)
			total += BitlenBits(v, w)
			require.Equal(t, total, wr.Len())
		}
		r := reader(&wr)
		for _, v := range vals {
			got, err := ReadBitlen(r, w)
			require.NoError(t, err)
			require.Equal(t, v, got, "w=%d", w)
		}
		requireDone(t, r)
	}
}

func TestBitlenIntRoundTrip(t *testing.T) {
	rng := newRand(9)
	vals := []int64{0, 1, -1, 2, -2, math.MinInt64, math.MaxInt64, math.MinInt64 + 1, math.MinInt32, math.MaxInt32}
	for range 1000 {
		vals = append(vals, randInt64(rng))
	}
	var w bits.Writer
	total := 0
	for _, v := range vals {
		require.NoError(t, WriteBitlenInt(&w, v, 6, true))
		total += BitlenIntBits(v, 6, true)
		require.Equal(t, total, w.Len())
	}
	r := reader(&w)
	for _, v := range vals {
		got, err := ReadBitlenInt(r, 6, true)
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
	requireDone(t, r)

	// Exact bits: sign first, then the magnitude.
	w.Reset(nil)
	require.NoError(t, WriteBitlenInt(&w, -5, 5, true)) // 1, p=2, 01
	require.NoError(t, WriteBitlenInt(&w, 5, 5, true))
	require.NoError(t, WriteBitlenInt(&w, 0, 5, true))
	require.NoError(t, WriteBitlenInt(&w, 5, 5, false))
	require.Equal(t, "1"+lsb(2, 5)+lsb(1, 2)+"0"+lsb(2, 5)+lsb(1, 2)+"0"+lsb(0, 5)+"0"+lsb(2, 5)+lsb(1, 2), stream(&w))
	require.Equal(t, 8, BitlenIntBits(5, 5, false)+1)

	w.Reset(nil)
	require.NoError(t, WriteBitlenInt(&w, math.MinInt64, 6, true)) // magnitude 2^63
	require.Equal(t, "1"+lsb(63, 6)+lsb(0, 63), stream(&w))
	w.Reset(nil)
	require.NoError(t, WriteBitlenInt(&w, math.MinInt32, 5, true)) // magnitude 2^31 fits W=5
	got, err := ReadBitlenInt(reader(&w), 5, true)
	require.NoError(t, err)
	require.Equal(t, int64(math.MinInt32), got)
}

func TestBitlenIntErrors(t *testing.T) {
	var w bits.Writer
	require.ErrorIs(t, WriteBitlenInt(&w, -1, 6, false), ErrOutOfRange)
	require.ErrorIs(t, WriteBitlenInts(&w, []int64{1, 2, -3}, 6, false), ErrOutOfRange)
	require.ErrorIs(t, WriteBitlenInts(&w, []int64{-3}, 6, false), ErrOutOfRange)
	require.Equal(t, 0, w.Len(), "failed writes write nothing")

	for _, c := range []struct {
		name, pattern string
		neg           bool
		err           error
	}{
		{"negative zero", "1 000000 0 0", true, ErrMalformed},
		{"2^63 unsigned", "111111 " + lsb(0, 63), false, ErrOutOfRange},
		{"2^63 with sign 0", "0 111111 " + lsb(0, 63), true, ErrOutOfRange},
		{"-(2^63+1)", "1 111111 " + lsb(1, 63), true, ErrOutOfRange},
		{"short prefix", "1 01", true, bits.ErrUnexpectedEnd},
		{"short body", "111111 01", false, bits.ErrUnexpectedEnd}, // p=63, 2 of 63 bits
	} {
		_, err := ReadBitlenInt(bits.NewReader(fromStream(t, c.pattern)), 6, c.neg)
		require.ErrorIs(t, err, c.err, c.name)
	}
	got, err := ReadBitlenInt(bits.NewReader(fromStream(t, "1 111111 "+lsb(0, 63))), 6, true)
	require.NoError(t, err)
	require.Equal(t, int64(math.MinInt64), got)

	_, err = ReadBitlen(bits.NewReader(nil), 6)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}

func TestBitlenGroupModes(t *testing.T) {
	// [25, 3] with W=5: individually 9+6 = 15, shared 5+2*5 = 15: not
	// strictly shorter, so individual.
	var w bits.Writer
	WriteBitlenUints(&w, []uint64{25, 3}, 5)
	require.Equal(t, "0"+lsb(4, 5)+"1001"+lsb(1, 5)+"1", stream(&w))

	// [5, 6, 7] with W=6: individually 3*8 = 24, shared 6+3*3 = 15.
	w.Reset(nil)
	WriteBitlenUints(&w, []uint64{5, 6, 7}, 6)
	require.Equal(t, 16, w.Len())
	require.Equal(t, "1"+lsb(2, 6)+lsb(5, 3)+lsb(6, 3)+lsb(7, 3), stream(&w))

	// Zeros and ones share p=0: one bit each.
	w.Reset(nil)
	WriteBitlenUints(&w, []uint64{0, 1, 0, 0}, 6)
	require.Equal(t, "1"+lsb(0, 6)+"0100", stream(&w))

	// A single value, or none, has no mode bit.
	w.Reset(nil)
	WriteBitlenUints(&w, []uint64{25}, 5)
	WriteBitlenUints(&w, nil, 5)
	require.Equal(t, lsb(4, 5)+"1001", stream(&w))

	// Signed, with sign bits: [-5, 6, -7] W=6 neg: individually 3*9 = 27,
	// shared 6+3*4 = 18.
	w.Reset(nil)
	require.NoError(t, WriteBitlenInts(&w, []int64{-5, 6, -7}, 6, true))
	require.Equal(t, "1"+lsb(2, 6)+"1"+lsb(5, 3)+"0"+lsb(6, 3)+"1"+lsb(7, 3), stream(&w))
	var got [3]int64
	require.NoError(t, ReadBitlenInts(reader(&w), got[:], 6, true))
	require.Equal(t, [3]int64{-5, 6, -7}, got)

	// A group mixing 0 and a large value stays individual.
	w.Reset(nil)
	WriteBitlenUints(&w, []uint64{0, 1 << 40}, 6)
	require.Equal(t, "0"+lsb(0, 6)+"0"+lsb(40, 6)+lsb(0, 40), stream(&w))

	require.True(t, BitlenGroupShared(2, 3, 24, 6, false))
	require.False(t, BitlenGroupShared(4, 2, 15, 5, false))
	require.True(t, BitlenGroupShared(2, 3, 27, 6, true))
	require.False(t, BitlenGroupShared(2, 3, 18, 6, true))
}

func TestBitlenGroupRoundTrip(t *testing.T) {
	rng := newRand(10)
	for trial := range 3000 {
		n := rng.IntN(9)
		w := 3 + rng.IntN(4)
		limit := uint64(math.MaxUint64)
		if w < 6 {
			limit = 1<<(1<<w) - 1
		}
		// Values of similar size, of mixed size, and zeros.
		scale := rng.IntN(BitsRequired(limit) + 1)
		us := make([]uint64, n)
		is := make([]int64, n)
		anyNeg := false
		for i := range us {
			switch rng.IntN(4) {
			case 0:
				us[i] = 0
			case 1:
				us[i] = randUint64(rng) & limit
			default:
				us[i] = rng.Uint64() >> (64 - scale) & limit
			}
			m := us[i] >> 1 // keep |v| within what w holds for both signs
			is[i] = int64(m)
			if trial%2 == 0 && rng.IntN(2) == 0 {
				is[i] = -is[i]
				anyNeg = anyNeg || m != 0
			}
		}
		var wr bits.Writer
		WriteBitlenUints(&wr, us, w)
		require.NoError(t, WriteBitlenInts(&wr, is, w, anyNeg))
		r := reader(&wr)
		gu := make([]uint64, n)
		require.NoError(t, ReadBitlenUints(r, gu, w))
		require.Equal(t, us, gu)
		gi := make([]int64, n)
		require.NoError(t, ReadBitlenInts(r, gi, w, anyNeg))
		require.Equal(t, is, gi)
		requireDone(t, r)
	}

	// The extremes in one group.
	for _, vs := range [][]int64{
		{math.MinInt64, math.MaxInt64},
		{math.MinInt64, math.MinInt64, math.MinInt64},
		{0, 0, 0},
		{0, math.MinInt64},
		{-1, 1, -1, 1},
	} {
		var wr bits.Writer
		require.NoError(t, WriteBitlenInts(&wr, vs, 6, true))
		got := make([]int64, len(vs))
		require.NoError(t, ReadBitlenInts(reader(&wr), got, 6, true))
		require.Equal(t, vs, got)
	}
	for _, vs := range [][]uint64{{math.MaxUint64, math.MaxUint64}, {math.MaxUint64, 0, 1}, {1 << 63, 1<<63 + 1}} {
		var wr bits.Writer
		WriteBitlenUints(&wr, vs, 6)
		got := make([]uint64, len(vs))
		require.NoError(t, ReadBitlenUints(reader(&wr), got, 6))
		require.Equal(t, vs, got)
	}
}

func TestBitlenGroupMalformed(t *testing.T) {
	for _, c := range []struct {
		name, pattern string
		n             int
		err           error
	}{
		// [5, 6, 7] W=6 coded individually although shared is shorter.
		{"individual when shared is shorter", "0" + lsb(2, 6) + lsb(1, 2) + lsb(2, 6) + lsb(2, 2) + lsb(2, 6) + lsb(3, 2), 3, ErrMalformed},
		// [25, 3] W=5 coded shared although not strictly shorter.
		{"shared when not shorter", "1" + lsb(4, 5) + lsb(25, 5) + lsb(3, 5), 2, ErrMalformed},
		// [5, 6, 7] shared with p=3 instead of 2.
		{"shared p too large", "1" + lsb(3, 6) + lsb(5, 4) + lsb(6, 4) + lsb(7, 4), 3, ErrMalformed},
		{"shared short", "1" + lsb(40, 6) + "1", 3, bits.ErrUnexpectedEnd},
		{"no mode bit", "", 2, bits.ErrUnexpectedEnd},
		// mode 1, p = 0, then 1 bit for 2 one-bit values
		{"shared short by one bit", "1" + lsb(0, 6) + "1", 2, bits.ErrUnexpectedEnd},
	} {
		w := 6
		if c.name == "shared when not shorter" {
			w = 5
		}
		dst := make([]uint64, c.n)
		err := ReadBitlenUints(bits.NewReader(fromStream(t, c.pattern)), dst, w)
		require.ErrorIs(t, err, c.err, c.name)
	}

	for _, c := range []struct {
		name, pattern string
		n             int
		neg           bool
		err           error
	}{
		{"individual when shared is shorter", "0" + "0" + lsb(2, 6) + lsb(1, 2) + "0" + lsb(2, 6) + lsb(2, 2) + "0" + lsb(2, 6) + lsb(3, 2), 3, true, ErrMalformed},
		{"shared negative zero", "1" + lsb(2, 6) + "1" + lsb(0, 3) + "0" + lsb(6, 3) + "0" + lsb(7, 3), 3, true, ErrMalformed},
		{"shared p too large", "1" + lsb(3, 6) + "0" + lsb(5, 4) + "0" + lsb(6, 4) + "0" + lsb(7, 4), 3, true, ErrMalformed},
		{"shared magnitude over int64", "1" + lsb(63, 6) + lsb(math.MaxUint64, 64) + lsb(math.MaxUint64, 64), 2, false, ErrOutOfRange},
		{"individual negative zero", "0" + "1" + lsb(0, 6) + "0" + "0" + lsb(0, 6) + "0", 2, true, ErrMalformed},
		{"shared short", "1" + lsb(40, 6) + "1", 3, true, bits.ErrUnexpectedEnd},
	} {
		dst := make([]int64, c.n)
		err := ReadBitlenInts(bits.NewReader(fromStream(t, c.pattern)), dst, 6, c.neg)
		require.ErrorIs(t, err, c.err, c.name)
	}
}

func TestBitlenWidthClamp(t *testing.T) {
	// Widths outside 0..6 are a caller bug; they must not panic, and the
	// writer and the reader agree on them.
	for _, w := range []int{-3, 7, 64, 100} {
		big := uint64(1 << 40)
		us := []uint64{3, 4, 5}
		is := []int64{-3, 4, 5}
		if w < 0 { // clamped to 0: only 0 and 1 fit
			big, us, is = 1, []uint64{1, 0, 1}, []int64{-1, 0, 1}
		}
		var wr bits.Writer
		WriteBitlen(&wr, big, w)
		WriteBitlenUints(&wr, us, w)
		require.NoError(t, WriteBitlenInts(&wr, is, w, true))
		r := reader(&wr)
		got, err := ReadBitlen(r, w)
		require.NoError(t, err)
		require.Equal(t, big, got)
		gu := make([]uint64, 3)
		require.NoError(t, ReadBitlenUints(r, gu, w))
		require.Equal(t, us, gu)
		gi := make([]int64, 3)
		require.NoError(t, ReadBitlenInts(r, gi, w, true))
		require.Equal(t, is, gi)
	}
}
