package bitwire

import (
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

// A plain mask table (all lengths 0) writes a chunk's changed bits as
// plain bits, with no symbol before them: mOther's one field costs its
// changed bit alone.
func TestModelPlainMaskExactBits(t *testing.T) {
	c := MustFor[mOther]()
	window := []uint8{2, 0, 2, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	m := modelOf(t, c.Fingerprint(), []uint8{tkMask, tkWindow}, []uint8{0, 0, 0}, window)
	cm := c.WithModel(m)
	require.NoError(t, cm.ModelErr())
	base := mOther{X: 1}
	for _, tc := range []struct {
		x    float32
		bits int
		want string // the bits in stream order
	}{
		{1, 1, "0"},                      // unchanged
		{1.01, 1 + 3, "1" + "01" + "0"},  // changed; slot 1 `01`, sign
		{0.97, 1 + 4, "1" + "101" + "1"}, // 3 steps, slot 3 `101`, sign
		{1.5, 1 + 19, "1" + "00" + "x"},  // slot 11 has no code: ESC `00`, X in 17 bits
	} {
		cur := mOther{X: tc.x}
		var w bits.Writer
		require.NoError(t, cm.EncodeDelta(&w, &base, &cur))
		require.Equal(t, tc.bits, w.Len(), "X=%g", tc.x)
		for i, ch := range tc.want {
			if ch == 'x' {
				break
			}
			require.Equal(t, uint64(ch-'0'), uint64(w.Bytes()[i/8]>>(i%8)&1), "X=%g bit %d", tc.x, i)
		}
		var got mOther
		var r bits.Reader
		r.Reset(w.Bytes())
		require.NoError(t, cm.DecodeDelta(&r, &base, &got))
		require.InDelta(t, tc.x, got.X, 0.005)
	}
	// No input: the plain bit is cut off, as a plain changed bit is.
	var got mOther
	require.ErrorIs(t, cm.UnmarshalDelta(nil, &base, &got), bits.ErrUnexpectedEnd)

	// The file round-trips, and an all-zero table of any other kind is
	// refused.
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	var m2 Model
	require.NoError(t, m2.UnmarshalBinary(b))
	require.Equal(t, *m, m2)
	for _, kind := range []byte{tkWindow, tkModular, tkQuatFirst, tkQuatDiff} {
		var m3 Model
		require.ErrorIs(t, m3.UnmarshalBinary(modelFile(2, 7, []byte{kind, 0, 0, 0})), ErrModel, "kind %d", kind)
		require.Zero(t, m3.hash)
	}
	require.NoError(t, m3ok(modelFile(2, 7, []byte{tkMask, 0, 0, 0})))
	require.NoError(t, m3ok(modelFile(2, 7, []byte{tkMask, 0, 0, 0, 0, 0, 0, 0, 0, 0}))) // k = 3
}

func m3ok(b []byte) error {
	var m Model
	return m.UnmarshalBinary(b)
}

// With every mask table plain, a trained model's deltas round-trip over
// random pairs (multi-field structs, entities, the root), each mask costing
// exactly its k bits: the size is the trained model's less its mask codes
// plus the plain bits, checked against a model whose masks are all ESC.
func TestModelPlainMaskRoundTrip(t *testing.T) {
	c := MustFor[mWorld]()
	m := trainOn(t, c, 31, 0.05)
	plain := &Model{layout: m.layout}
	escOnly := &Model{layout: m.layout}
	for i := range m.tables() {
		p, e := m.tableLens(i), m.tableLens(i)
		if m.kinds[i] == tkMask {
			p = make([]uint8, len(p))
			e = make([]uint8, len(p))
			e[0] = 1 // ESC alone, 1 bit
		}
		plain.addTable(m.kinds[i], p)
		escOnly.addTable(m.kinds[i], e)
	}
	plain.setHash()
	escOnly.setHash()
	cp, ce := c.WithModel(plain), c.WithModel(escOnly)
	require.NoError(t, cp.ModelErr())
	rng := rand.New(rand.NewPCG(32, 32))
	for i := range 400 {
		b, cur := mPair(rng, 1+i%12, 0.05)
		if i%5 == 0 {
			cur.Bodies[0] = b.Bodies[0] // an unchanged body
		}
		var wp, we bits.Writer
		require.NoError(t, cp.EncodeDelta(&wp, &b, &cur))
		require.NoError(t, ce.EncodeDelta(&we, &b, &cur))
		// one ESC bit less per mask symbol: the root's and each changed body's
		masks := 1
		for j := range cur.Bodies {
			if j < len(b.Bodies) && cur.Bodies[j] != b.Bodies[j] {
				masks++
			}
		}
		require.Equal(t, we.Len()-masks, wp.Len())
		data, err := cp.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		var got, want mWorld
		require.NoError(t, cp.UnmarshalDelta(data, &b, &got))
		require.NoError(t, c.UnmarshalDelta(mustDelta(t, c, &b, &cur), &b, &want))
		require.Equal(t, want, got)
		// every truncation fails
		for n := range len(data) - 1 {
			var x mWorld
			require.Error(t, cp.UnmarshalDelta(data[:n], &b, &x))
		}
	}
}

func mustDelta(t testing.TB, c *Codec[mWorld], b, cur *mWorld) []byte {
	d, err := c.MarshalDelta(b, cur)
	require.NoError(t, err)
	return d
}

// Training: a one-field mask table is always plain (its ESC takes code
// space, so it cannot beat the plain bit), on short and on long
// recordings (the cross-validated choice); a table of several fields that
// change together keeps its code, and a table of fields that change
// independently at random (k bits of entropy) is plain.
func TestModelTrainPlainMask(t *testing.T) {
	c := MustFor[mOther]()
	for _, pairs := range []int{3, 50, 1000} {
		for _, pChange := range []float64{0.05, 0.5, 0.95} {
			rng := rand.New(rand.NewPCG(uint64(pairs), 5))
			tr := c.NewTrainer()
			for range pairs {
				b := mOther{X: float32(rng.IntN(100))}
				cur := b
				if rng.Float64() < pChange {
					cur.X += 0.01
				}
				require.NoError(t, tr.Add(&b, &cur))
			}
			m, err := tr.Model()
			require.NoError(t, err)
			require.True(t, m.testCode(0).Empty(), "%d pairs, p %g", pairs, pChange)
			require.False(t, m.testCode(1).Empty())
		}
	}

	type five struct {
		A, B, C, D, E uint8
	}
	c5 := MustFor[five]()
	for _, together := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(7, 7))
		tr := c5.NewTrainer()
		for range 1000 {
			var b, cur five
			if together {
				cur.A, cur.B = 1, 1 // two masks only
				if rng.IntN(2) == 0 {
					cur = b
				}
			} else {
				cur = five{uint8(rng.IntN(2)), uint8(rng.IntN(2)), uint8(rng.IntN(2)), uint8(rng.IntN(2)), uint8(rng.IntN(2))}
			}
			require.NoError(t, tr.Add(&b, &cur))
		}
		m, err := tr.Model()
		require.NoError(t, err)
		require.Equal(t, !together, m.testCode(0).Empty(), "together %v", together)
	}
}
