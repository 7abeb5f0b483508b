package fields

import (
	"math"
	"strings"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

func TestLenExactBits(t *testing.T) {
	var w bits.Writer
	require.NoError(t, WriteLen(&w, 5, 16)) // BitsRequired(16) = 5 bits
	require.NoError(t, WriteLen(&w, 16, 16))
	require.NoError(t, WriteLen(&w, 0, 1))
	require.Equal(t, lsb(5, 5)+lsb(16, 5)+"0", stream(&w))
	require.Equal(t, 5, LenBits(5, 16))

	w.Reset(nil)
	require.NoError(t, WriteLen(&w, 0, 0)) // bitlen W=5: p=0, 0
	require.NoError(t, WriteLen(&w, 5, 0)) // p=2, 01
	require.NoError(t, WriteLen(&w, 1<<32-1, 0))
	require.Equal(t, lsb(0, 5)+"0"+lsb(2, 5)+lsb(1, 2)+lsb(31, 5)+lsb(1<<31-1, 31), stream(&w))
	require.Equal(t, 7, LenBits(5, 0))

	r := reader(&w)
	for _, want := range []int{0, 5, 1<<32 - 1} {
		n, err := ReadLen(r, 0)
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	requireDone(t, r)
}

func TestLenErrors(t *testing.T) {
	var w bits.Writer
	require.ErrorIs(t, WriteLen(&w, 17, 16), ErrTooLong)
	require.ErrorIs(t, WriteLen(&w, 1<<32, 0), ErrTooLong)
	require.ErrorIs(t, WriteLen(&w, math.MaxInt, 0), ErrTooLong)
	require.ErrorIs(t, WriteLen(&w, -1, 0), ErrOutOfRange)
	require.ErrorIs(t, WriteLen(&w, 1, -1), ErrOutOfRange)
	require.ErrorIs(t, WriteString(&w, "abcde", 4), ErrTooLong)
	require.ErrorIs(t, WriteBytes(&w, []byte("abcde"), 4), ErrTooLong)
	require.Equal(t, 0, w.Len(), "failed writes write nothing")

	// 5 bits for maxlen 16 can spell 17..31.
	_, err := ReadLen(bits.NewReader(fromStream(t, lsb(17, 5))), 16)
	require.ErrorIs(t, err, ErrTooLong)
	_, err = ReadLen(bits.NewReader(fromStream(t, lsb(31, 5))), 16)
	require.ErrorIs(t, err, ErrTooLong)
	_, err = ReadLen(bits.NewReader(nil), 16)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
	_, err = ReadLen(bits.NewReader([]byte{0}), -1)
	require.ErrorIs(t, err, ErrOutOfRange)
}

func TestStringsAndBytes(t *testing.T) {
	var w bits.Writer
	require.NoError(t, WriteString(&w, "hi", 0))
	// length 2 (p=1, 0), then 'h' and 'i' low bit first, no alignment
	require.Equal(t, lsb(1, 5)+"0"+lsb('h', 8)+lsb('i', 8), stream(&w))
	require.Equal(t, 22, w.Len())

	w.Reset(nil)
	require.NoError(t, WriteBytes(&w, []byte{0xff, 0}, 3))
	require.Equal(t, lsb(2, 2)+lsb(0xff, 8)+lsb(0, 8), stream(&w))

	rng := newRand(17)
	var blobs [][]byte
	var maxlens []int
	w.Reset(nil)
	w.WriteBits(1, 3) // misalign everything after
	for k := range 300 {
		n := rng.IntN(40)
		if k%50 == 0 {
			n = rng.IntN(5000)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		maxlen := 0
		if k%2 == 0 {
			maxlen = n + rng.IntN(3)
		}
		require.NoError(t, WriteString(&w, string(b), maxlen))
		require.NoError(t, WriteBytes(&w, b, maxlen))
		blobs = append(blobs, b)
		maxlens = append(maxlens, maxlen)
	}
	r := reader(&w)
	_, _ = r.ReadBits(3)
	buf := make([]byte, 0, 64)
	for k, b := range blobs {
		s, err := ReadString(r, maxlens[k])
		require.NoError(t, err)
		require.Equal(t, string(b), s)
		got, err := ReadBytes(r, buf, maxlens[k])
		require.NoError(t, err)
		require.Equal(t, len(b), len(got))
		if len(b) > 0 {
			require.Equal(t, b, got)
		}
		if len(got) > 0 && len(got) <= cap(buf) {
			require.Same(t, &buf[:1][0], &got[0], "reuses dst")
		}
	}
	requireDone(t, r)
}

func TestStringHostileLength(t *testing.T) {
	// A length of 2^32-1 with a handful of bytes behind it.
	var w bits.Writer
	require.NoError(t, WriteLen(&w, 1<<32-1, 0))
	w.WriteBytes([]byte("abc"))
	data := append([]byte(nil), w.Bytes()...)

	allocs := testing.AllocsPerRun(100, func() {
		_, err := ReadString(bits.NewReader(data), 0)
		if err != bits.ErrUnexpectedEnd {
			t.Fatal(err)
		}
		_, err = ReadBytes(bits.NewReader(data), nil, 0)
		if err != bits.ErrUnexpectedEnd {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)

	// Over maxlen is ErrTooLong even when the input could hold it.
	w.Reset(nil)
	require.NoError(t, WriteString(&w, strings.Repeat("x", 10), 15))
	_, err := ReadString(reader(&w), 9)
	require.ErrorIs(t, err, ErrTooLong)
	_, err = ReadBytes(reader(&w), nil, 9)
	require.ErrorIs(t, err, ErrTooLong)

	// One byte short.
	w.Reset(nil)
	require.NoError(t, WriteLen(&w, 3, 0))
	w.WriteBytes([]byte("ab"))
	_, err = ReadString(bits.NewReader(w.Bytes()), 0)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}

func TestReadBytesStorage(t *testing.T) {
	var w bits.Writer
	require.NoError(t, WriteBytes(&w, []byte{1, 2, 3}, 0))
	require.NoError(t, WriteBytes(&w, nil, 0))
	require.NoError(t, WriteBytes(&w, []byte{9, 8, 7, 6, 5}, 0))
	r := reader(&w)

	dst := make([]byte, 1, 4)
	got, err := ReadBytes(r, dst, 0)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3}, got)
	require.Same(t, &dst[0], &got[0])

	got, err = ReadBytes(r, nil, 0)
	require.NoError(t, err)
	require.Empty(t, got)

	got, err = ReadBytes(r, dst, 0) // too small: a new slice
	require.NoError(t, err)
	require.Equal(t, []byte{9, 8, 7, 6, 5}, got)
	require.NotSame(t, &dst[0], &got[0])
	requireDone(t, r)

	s, err := ReadString(bits.NewReader(fromStream(t, lsb(0, 5)+"0")), 0)
	require.NoError(t, err)
	require.Equal(t, "", s)
}
