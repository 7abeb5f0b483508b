package fields

import (
	"errors"
	mbits "math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// The canonical code of wire-format.md's example: lengths 2, 0, 1, 3, 3
// give symbol 2 `0`, 0 `10`, 3 `110`, 4 `111` (stream order).
func TestCodeCanonicalExample(t *testing.T) {
	c, err := NewCode([]uint8{2, 0, 1, 3, 3})
	require.NoError(t, err)
	var w bits.Writer
	for _, s := range []int{2, 0, 3, 4} {
		c.Write(&w, s)
	}
	// stream 0 10 110 111 = bits 0,1,0,1,1,0,1,1,1: byte 0 = 0b11011010, byte 1 = 1
	require.Equal(t, 9, w.Len())
	require.Equal(t, []byte{0xDA, 0x01}, w.Bytes())
	var r bits.Reader
	r.Reset(w.Bytes())
	for _, s := range []int{2, 0, 3, 4} {
		got, err := c.Read(&r)
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	require.Equal(t, 0, c.Len(1))
	require.Equal(t, 3, c.Len(4))
}

// Every refusal of NewCode.
func TestCodeRefused(t *testing.T) {
	for name, lens := range map[string][]uint8{
		"one symbol":      {1},
		"too long":        {1, 16},
		"over-subscribed": {1, 1, 2},
	} {
		_, err := NewCode(lens)
		require.ErrorIs(t, err, ErrCode, name)
	}
}

// Random trained codes: every symbol round-trips, long codewords (past the
// lookup table) included, and a pattern that begins no codeword is
// ErrMalformed, a cut-off one ErrUnexpectedEnd.
func TestCodeRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := 2 + rng.IntN(300)
		w := make([]uint64, n)
		for i := range w {
			if rng.IntN(3) > 0 {
				w[i] = uint64(rng.ExpFloat64() * float64(1+rng.IntN(1<<rng.IntN(20))))
			}
		}
		w[0] = max(w[0], 1)
		lens := TrainLengths(w)
		c, err := NewCode(lens)
		require.NoError(t, err)
		require.LessOrEqual(t, c.Len(0), CodeEscMaxLen)
		require.Greater(t, c.Len(0), 0)
		var syms []int
		var wr bits.Writer
		for range 500 {
			s := rng.IntN(n)
			if c.Len(s) == 0 {
				continue
			}
			syms = append(syms, s)
			c.Write(&wr, s)
		}
		var r bits.Reader
		r.Reset(wr.Bytes())
		for _, s := range syms {
			got, err := c.Read(&r)
			require.NoError(t, err)
			require.Equal(t, s, got)
		}
	}
	// An incomplete code: symbol 0 `0` only; `1...` begins none.
	c, err := NewCode([]uint8{1, 0})
	require.NoError(t, err)
	var r bits.Reader
	r.Reset([]byte{0xFF, 0xFF})
	_, err = c.Read(&r)
	require.ErrorIs(t, err, ErrMalformed)
	r.Reset([]byte{0xFF})
	_, err = c.Read(&r)
	require.True(t, errors.Is(err, bits.ErrUnexpectedEnd), err)
	c, err = NewCode([]uint8{1, 15, 15})
	require.NoError(t, err)
	var w bits.Writer
	c.Write(&w, 2)
	r.Reset(w.Bytes()[:1])
	_, err = c.Read(&r)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}

// TrainLengths: a Huffman code, ESC bounded, lengths bounded.
func TestTrainLengths(t *testing.T) {
	require.Equal(t, []uint8{2, 0, 1, 3, 3}, TrainLengths([]uint64{4, 0, 8, 2, 2}))
	require.Equal(t, []uint8{1, 0}, TrainLengths([]uint64{0, 0})) // ESC alone
	// A complete table (ESC's weight 0, every other's not) has no ESC;
	// one with a symbol of weight 0, or with one symbol besides ESC, has.
	require.Equal(t, []uint8{0, 1, 2, 2}, TrainLengths([]uint64{0, 4, 2, 2}))
	require.Equal(t, []uint8{2, 1, 0, 2}, TrainLengths([]uint64{0, 4, 0, 2}))
	require.Equal(t, []uint8{1, 1}, TrainLengths([]uint64{0, 5}))
	// ESC of weight 1 among heavy symbols still gets at most 5 bits.
	l := TrainLengths([]uint64{1, 1 << 30, 1 << 29, 1 << 28, 1 << 27, 1 << 26, 1 << 25, 1 << 24})
	require.LessOrEqual(t, l[0], uint8(CodeEscMaxLen))
	// Fibonacci weights would need 39 bits: limited to 15.
	fib := []uint64{1, 1}
	for len(fib) < 40 {
		fib = append(fib, fib[len(fib)-1]+fib[len(fib)-2])
	}
	for _, x := range TrainLengths(fib) {
		require.LessOrEqual(t, x, uint8(CodeMaxLen))
	}
}

// Tokens: slots, exact sizes, and round trips.
func TestTokens(t *testing.T) {
	for m, slot := range map[uint64]int{0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 4, 6: 5, 7: 5, 8: 6, 11: 6, 12: 7, 15: 7, 16: 8, 1 << 63: 126, 1<<64 - 1: 127} {
		require.Equal(t, slot, TokenSlot(m), "m=%d", m)
		require.Equal(t, m>>max(0, TokenClassBits(m)-2)<<max(0, TokenClassBits(m)-2), slotBase(slot), "m=%d", m)
	}
	require.Equal(t, []int{1, 2, 4, 6, 128}, []int{TokenSlots(0), TokenSlots(1), TokenSlots(2), TokenSlots(3), TokenSlots(64)})
	// ESC 2, slot 0: none, slot 1 (m = 1) 2 bits, slots 2..5 (m = 2, 3,
	// 4..5, 6..7) 3 bits, slot 6 none.
	c, err := NewCode([]uint8{2, 0, 2, 3, 3, 3, 3, 0})
	require.NoError(t, err)
	require.Equal(t, -1, TokenBits(c, 0))
	require.Equal(t, 2+1, TokenBits(c, 1))   // code, sign
	require.Equal(t, 3+1, TokenBits(c, 3))   // code, sign
	require.Equal(t, 3+1+1, TokenBits(c, 5)) // code, one low bit, sign
	require.Equal(t, 3+1+1, TokenBits(c, 7))
	require.Equal(t, -1, TokenBits(c, 8))
	vals := []int64{1, -1, 2, -3, 5, -7, 4, 6}
	var w bits.Writer
	for _, v := range vals {
		require.True(t, WriteToken(&w, c, abs64(v), v < 0))
	}
	require.False(t, WriteToken(&w, c, 0, false))
	require.False(t, WriteToken(&w, c, 9, false))
	WriteEsc(&w, c)
	var r bits.Reader
	r.Reset(w.Bytes())
	for _, v := range vals {
		m, neg, esc, err := ReadToken(&r, c)
		require.NoError(t, err)
		require.False(t, esc)
		require.Equal(t, abs64(v), m)
		require.Equal(t, v < 0, neg)
	}
	_, _, esc, err := ReadToken(&r, c)
	require.NoError(t, err)
	require.True(t, esc)
	// Every magnitude of up to 64 bits round-trips in a code that has
	// every slot.
	lens := make([]uint8, 1+TokenSlots(64))
	for i := range lens {
		lens[i] = 8
	}
	c, err = NewCode(lens)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 5))
	w = bits.Writer{}
	var ms []uint64
	for range 2000 {
		m := rng.Uint64() >> rng.IntN(64)
		ms = append(ms, m)
		require.True(t, WriteToken(&w, c, m, m&1 == 0))
	}
	r.Reset(w.Bytes())
	for _, want := range ms {
		m, neg, _, err := ReadToken(&r, c)
		require.NoError(t, err)
		require.Equal(t, want, m)
		require.Equal(t, want != 0 && want&1 == 0, neg)
	}
}

// TokenClassBits is the bit length of m.
func TokenClassBits(m uint64) int { return mbits.Len64(m) }

// Quaternion tables trained on recorded deltas round-trip random deltas
// (teleports included) and spend fewer bits than the adaptive code on
// about as few bits as the adaptive code; a table that codes nothing but ESC still
// round-trips.
func TestQuatCodesRoundTrip(t *testing.T) {
	q, err := NewQuat(9)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 3))
	type pair struct{ b, c uint64 }
	var pairs []pair
	var counts [QuatTables][]uint64
	for i := range counts {
		n := QuatDiffSymbols(9)
		if i == 0 {
			n = QuatFirstSymbols(9)
		}
		counts[i] = make([]uint64, n)
	}
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
		rank, e, rel := q.DeltaSymbols(b, true, c)
		if !rel {
			counts[0][0]++
		} else {
			counts[0][QuatFirstSymbol(9, rank, e[0])]++
			for k := 1; k < 3; k++ {
				counts[1+QuatDiffTable(&e, k)][TokenSlot(abs64(e[k]))+1]++
			}
		}
		pairs = append(pairs, pair{b, c})
	}
	var tc, escOnly QuatCodes
	for i := range counts {
		tc.Tab[i], err = NewCode(TrainLengths(counts[i]))
		require.NoError(t, err)
		escOnly.Tab[i], err = NewCode(TrainLengths(make([]uint64, len(counts[i]))))
		require.NoError(t, err)
	}
	for _, tab := range []*QuatCodes{&tc, &escOnly} {
		var w bits.Writer
		adaptive := 0
		for _, p := range pairs {
			q.WriteDeltaCodes(&w, tab, p.b, true, p.c)
			var a bits.Writer
			sa := NewQuatDeltaState()
			q.WriteDelta(&a, &sa, p.b, true, p.c)
			adaptive += a.Len()
		}
		if tab == &tc {
			// Independent pairs of tiny turns and teleports: about what
			// the adaptive code spends (its first parameter suits them).
			require.Less(t, w.Len(), adaptive*101/100)
		} else {
			require.Equal(t, len(pairs)*(1+q.Bits()), w.Len()) // every one absolute
		}
		var r bits.Reader
		r.Reset(w.Bytes())
		for _, p := range pairs {
			base, err := q.Unpack(p.b)
			require.NoError(t, err)
			got, err := q.ReadDeltaCodes(&r, tab, &base)
			require.NoError(t, err)
			require.Equal(t, p.c, got)
		}
	}
}
