package fields

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// A static window parameter: exact sizes, and no state carried.
func TestWindowStaticState(t *testing.T) {
	w, err := NewWindow(-2, 2, 0.01) // -200..200 steps, escape width 8
	require.NoError(t, err)
	s := w.NewStaticState(2)
	var wr bits.Writer
	require.True(t, w.Write(&wr, &s, 1000, 1005)) // 1, then 5 = q 1, low 01: 10 01, sign 0
	require.Equal(t, 1+2+2+1, wr.Len())
	require.True(t, w.Write(&wr, &s, 1000, 1200)) // q = 50: escape, 8 bits, sign
	require.Equal(t, 6+1+6+8+1, wr.Len())
	require.True(t, w.Write(&wr, &s, 1000, 1005)) // the same 6 bits again
	require.Equal(t, 13+8+6+1, wr.Len())
	var r bits.Reader
	r.Reset(wr.Bytes())
	rs := w.NewStaticState(2)
	for _, want := range []int64{5, 200, 5} {
		d, in, err := w.Read(&r, &rs)
		require.NoError(t, err)
		require.True(t, in)
		require.Equal(t, want, d)
	}
	// A parameter above the escape width is clamped to it.
	hi := w.NewStaticState(20)
	require.Equal(t, 8, hi.k())
}

// Tables trained on recorded quaternions round-trip random deltas, and
// the mode order follows the counts.
func TestQuatTableRoundTrip(t *testing.T) {
	q, err := NewQuat(9)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 3))
	var st QuatStats
	type pair struct{ b, c uint64 }
	var pairs []pair
	for range 2000 {
		v := randomRot(rng)
		b := mustPack(t, q, v)
		turn := 0.002
		if rng.IntN(10) == 0 {
			turn = 2 // an unrelated rotation
		}
		var w [4]float64
		for i := range w {
			w[i] = float64(v[i]) + turn*rng.NormFloat64()
		}
		w = normalize(w)
		c := mustPack(t, q, [4]float32{float32(w[0]), float32(w[1]), float32(w[2]), float32(w[3])})
		q.Record(&st, b, true, c)
		pairs = append(pairs, pair{b, c})
	}
	tab := st.Table(q.ComponentBits())
	require.True(t, tab.Valid(q.ComponentBits()))
	require.Equal(t, uint8(0), tab.Order[0]) // rank 0 is the commonest
	require.Greater(t, st.Mode[quatModeAbsolute], uint64(100))
	var w bits.Writer
	adaptive := 0
	for _, p := range pairs {
		s := NewQuatDeltaStateTable(&tab)
		q.WriteDelta(&w, &s, p.b, true, p.c)
		var a bits.Writer
		sa := NewQuatDeltaState()
		q.WriteDelta(&a, &sa, p.b, true, p.c)
		adaptive += a.Len()
	}
	require.Less(t, w.Len(), adaptive) // trained on these very values
	var r bits.Reader
	r.Reset(w.Bytes())
	for _, p := range pairs {
		s := NewQuatDeltaStateTable(&tab)
		base, err := q.Unpack(p.b)
		require.NoError(t, err)
		got, err := q.ReadDelta(&r, &s, &base)
		require.NoError(t, err)
		require.Equal(t, p.c, got)
	}
}
