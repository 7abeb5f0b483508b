package fields

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

func TestTimeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 1000; i++ {
		v := time.Unix(r.Int63n(1<<50)-1<<49, r.Int63n(1e9)).UTC()
		var w bits.Writer
		WriteTime(&w, v)
		require.Equal(t, TimeBits(v), w.Len())
		require.True(t, w.Len() >= TimeMinBits && w.Len() <= TimeMaxBits)
		got, err := ReadTime(bits.NewReader(w.Bytes()))
		require.NoError(t, err)
		require.True(t, v.Equal(got) && got.Location() == time.UTC, "%v %v", v, got)
	}
	// 10^9 nanoseconds is not a time a writer produces
	var w bits.Writer
	WriteBitlen(&w, 0, timeWidth)
	w.WriteBits(1e9, timeNsBits)
	_, err := ReadTime(bits.NewReader(w.Bytes()))
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = ReadTime(bits.NewReader(w.Bytes()[:2]))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}

func TestWindow(t *testing.T) {
	w, err := NewWindow(-1, 1, 0.25)
	require.NoError(t, err)
	require.Equal(t, [3]int64{-4, 4, 4}, [3]int64{w.Lo(), w.Hi(), int64(w.Bits())})
	for _, c := range []struct {
		base, cur uint64
		in        bool
		size      int
	}{{10, 14, true, 5}, {10, 6, true, 5}, {10, 15, false, 1}, {10, 5, false, 1}, {0, math.MaxUint64, true, 5}} {
		var bw bits.Writer
		require.Equal(t, c.in, w.Write(&bw, c.base, c.cur))
		require.Equal(t, c.size, bw.Len())
		diff, in, err := w.Read(bits.NewReader(bw.Bytes()))
		require.NoError(t, err)
		require.Equal(t, c.in, in)
		if in {
			require.Equal(t, c.cur, c.base+uint64(diff))
		}
	}
	_, err = NewWindow(0.1, 0.2, 1)
	require.Error(t, err)
	_, err = NewWindow(-1, 1e300, 1)
	require.Error(t, err)
	_, _, err = w.Read(bits.NewReader(nil))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
	wide, err := NewWindow(-100, 100, 1) // 8 bits: more than a byte holds after the window bit
	require.NoError(t, err)
	_, _, err = wide.Read(bits.NewReader([]byte{1}))
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}

func TestQuatDelta(t *testing.T) {
	q, err := NewQuat(9)
	require.NoError(t, err)
	require.Equal(t, 9, q.ComponentBits())
	r := rand.New(rand.NewSource(5))
	rel := 0
	for i := 0; i < 2000; i++ {
		b := randUnit(r)
		c := b
		for k := range c {
			c[k] += r.NormFloat64() * 0.02 * float64(r.Intn(2))
		}
		c = normalize(c)
		qb, err := q.Pack(b)
		require.NoError(t, err)
		qc, err := q.Pack(c)
		require.NoError(t, err)
		var w bits.Writer
		q.WriteDelta(&w, qb, true, qc)
		if w.Len() < 1+q.Bits() {
			rel++
		}
		got, err := q.ReadDelta(bits.NewReader(w.Bytes()), &b)
		require.NoError(t, err)
		require.Equal(t, qc, got)
	}
	require.Greater(t, rel, 500)
	// relative coding needs a baseline that packs
	var w bits.Writer
	w.WriteBool(true)
	w.WriteBits(0, 8)
	_, err = q.ReadDelta(bits.NewReader(w.Bytes()), &[4]float64{})
	require.ErrorIs(t, err, ErrInvalidValue)
	// a width past n
	w = bits.Writer{}
	w.WriteBool(true)
	w.WriteBits(15, q.relWidth())
	_, err = q.ReadDelta(bits.NewReader(w.Bytes()), &[4]float64{0, 0, 0, 1})
	require.ErrorIs(t, err, ErrMalformed)
	// a component that leaves the grid
	base, _ := q.Pack([4]float64{0, 0, 0, 1})
	w = bits.Writer{}
	w.WriteBool(true)
	w.WriteBits(9, q.relWidth())
	w.WriteBits(Zigzag(-int64(base>>2&511)-1), 10)
	w.WriteBits(0, 20)
	_, err = q.ReadDelta(bits.NewReader(w.Bytes()), &[4]float64{0, 0, 0, 1})
	require.ErrorIs(t, err, ErrMalformed)
}

func randUnit(r *rand.Rand) [4]float64 {
	return normalize([4]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64(), r.NormFloat64() + 1e-3})
}

func normalize(v [4]float64) [4]float64 {
	n := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2] + v[3]*v[3])
	return [4]float64{v[0] / n, v[1] / n, v[2] / n, v[3] / n}
}

func TestIndexSetRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for i := 0; i < 3000; i++ {
		n := r.Intn(300)
		p := r.Float64()
		var idx []int32
		for k := 0; k < n; k++ {
			if r.Float64() < p*p {
				idx = append(idx, int32(k))
			}
		}
		known := r.Intn(2) == 0
		var w bits.Writer
		WriteIndexSet(&w, idx, n, known)
		rd := bits.NewReader(w.Bytes())
		count := len(idx)
		if !known {
			c, err := ReadIndexCount(rd, n)
			require.NoError(t, err)
			count = c
		}
		got, err := ReadIndexSet(rd, make([]int32, 0, count), n, count)
		require.NoError(t, err)
		require.Equal(t, len(idx), len(got))
		for k := range idx {
			require.Equal(t, idx[k], got[k])
		}
		require.Equal(t, w.Len(), rd.Pos())
	}
	var w bits.Writer
	WriteBitlen(&w, 9, indexCountWidth)
	_, err := ReadIndexCount(bits.NewReader(w.Bytes()), 8)
	require.ErrorIs(t, err, ErrMalformed)
}
