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
	require.Equal(t, [4]int64{-4, 4, 4, 3}, [4]int64{w.Lo(), w.Hi(), int64(w.Bits()), int64(w.EscapeBits())})
	// The window's guess of a move, 8/32 steps (at least 1), gives a
	// parameter of 0: every difference in the plain fixed coding, d + 4
	// in 4 bits.
	require.Equal(t, [3]int{0, 0, 4}, [3]int{w.FirstK(), w.Unary(), w.MaxBits()})
	for _, c := range []struct {
		base, cur uint64
		in        bool
		size      int
	}{{10, 14, true, 5}, {10, 6, true, 5}, {10, 10, true, 5}, {10, 15, false, 1}, {10, 5, false, 1}, {0, math.MaxUint64, true, 5}} {
		var bw bits.Writer
		ws, rs := w.NewState(), w.NewState()
		require.Equal(t, c.in, w.Write(&bw, &ws, c.base, c.cur))
		require.Equal(t, c.size, bw.Len())
		diff, in, err := w.Read(bits.NewReader(bw.Bytes()), &rs)
		require.NoError(t, err)
		require.Equal(t, c.in, in)
		require.Equal(t, ws, rs)
		if in {
			require.Equal(t, c.cur, c.base+uint64(diff))
		}
	}
	_, err = NewWindow(0.1, 0.2, 1)
	require.Error(t, err)
	_, err = NewWindow(-1, 1e300, 1)
	require.Error(t, err)
	s := w.NewState()
	_, _, err = w.Read(bits.NewReader(nil), &s)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
	wide, err := NewWindow(-100, 100, 1) // the plain fixed coding after 1, 1: 8 bits
	require.NoError(t, err)
	s = wide.NewState()
	_, _, err = wide.Read(bits.NewReader([]byte{0x7f}), &s)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
	// a difference outside the window: 5 in a window of ±4 (9 = 5 - lo)
	var bw bits.Writer
	bw.WriteBool(true)
	bw.WriteBits(9, 4)
	s = w.NewState()
	_, _, err = w.Read(bits.NewReader(bw.Bytes()), &s)
	require.ErrorIs(t, err, ErrMalformed)
}

// TestWindowStream writes every difference of several windows in one
// stream sharing the state, with sizes at most MaxBits, and reads them back.
func TestWindowStream(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, win := range [][3]float64{{-1, 1, 0.25}, {-2, 2, 0.01}, {1, 5, 1}, {-1000, 0, 1}, {-1e6, 1e6, 0.5}} {
		w, err := NewWindow(win[0], win[1], win[2])
		require.NoError(t, err)
		var diffs []int64
		for range 3000 {
			var d int64
			switch rng.Intn(3) {
			case 0:
				d = w.Lo() + rng.Int63n(w.Hi()-w.Lo()+1)
			case 1:
				d = int64(rng.NormFloat64() * 3)
			default:
				d = w.Hi() + int64(rng.Intn(5)) - 2
			}
			diffs = append(diffs, d)
		}
		var bw bits.Writer
		ws, rs := w.NewState(), w.NewState()
		const base = 1 << 40
		for _, d := range diffs {
			at := bw.Len()
			in := w.Write(&bw, &ws, base, uint64(base+d))
			require.Equal(t, d >= w.Lo() && d <= w.Hi(), in)
			require.LessOrEqual(t, bw.Len()-at, 1+w.MaxBits())
		}
		r := bits.NewReader(bw.Bytes())
		for _, d := range diffs {
			got, in, err := w.Read(r, &rs)
			require.NoError(t, err)
			if d >= w.Lo() && d <= w.Hi() {
				require.True(t, in)
				require.Equal(t, d, got)
			} else {
				require.False(t, in)
			}
		}
		require.Equal(t, ws, rs)
	}
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
		ws, rs := NewQuatDeltaState(), NewQuatDeltaState()
		q.WriteDelta(&w, &ws, qb, true, qc)
		if w.Len() < q.Bits() {
			rel++
		}
		got, err := q.ReadDelta(bits.NewReader(w.Bytes()), &rs, &b)
		require.NoError(t, err)
		require.Equal(t, qc, got)
		require.Equal(t, ws, rs)
	}
	require.Greater(t, rel, 1500)
	// relative coding needs a baseline that packs
	var w bits.Writer
	w.WriteBits(0, 1) // mode: relative, same dropped component
	w.WriteBits(0, 8)
	s := NewQuatDeltaState()
	_, err = q.ReadDelta(bits.NewReader(w.Bytes()), &s, &[4]float64{})
	require.ErrorIs(t, err, ErrInvalidValue)
	require.ErrorContains(t, err, "baseline: ")
	// a component that leaves the grid: the identity's first index minus
	// one more than it holds, escaped
	base, _ := q.Pack([4]float64{0, 0, 0, 1})
	w = bits.Writer{}
	w.WriteBits(0, 1)
	WriteRiceEG(&w, -int64(base>>2&511)-1, s.params([3]int64{}, 0), s.u0())
	w.WriteBits(0, 20)
	_, err = q.ReadDelta(bits.NewReader(w.Bytes()), &s, &[4]float64{0, 0, 0, 1})
	require.ErrorIs(t, err, ErrMalformed)
	// the absolute form of what fits relative is accepted, and does not
	// need the baseline
	w = bits.Writer{}
	w.WriteBits(0b011, 3)
	w.WriteBits(base, q.Bits())
	s = NewQuatDeltaState()
	got, err := q.ReadDelta(bits.NewReader(w.Bytes()), &s, &[4]float64{})
	require.NoError(t, err)
	require.Equal(t, base, got)
	// a relative form longer than the absolute one
	w = bits.Writer{}
	w.WriteBits(0, 1)
	s = NewQuatDeltaState()
	e := [3]int64{-200, -200, -200} // each about 17 bits
	WriteRiceEG(&w, e[0], s.params(e, 0), s.u0())
	WriteRiceEG(&w, e[1], s.params(e, 1), quatUnary)
	WriteRiceEG(&w, e[2], s.params(e, 2), quatUnary)
	_, err = q.ReadDelta(bits.NewReader(w.Bytes()), &s, &[4]float64{0, 0, 0, 1})
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
