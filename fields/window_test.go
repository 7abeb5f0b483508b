package fields

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// randWindow returns a window of random bounds (narrow to 2^20 steps wide,
// asymmetric, one-sided) for a value of random width in full (0:
// unbounded).
func randWindow(t *testing.T, rng *rand.Rand) (Window, int) {
	t.Helper()
	width := 1 + rng.Intn(20)
	lo := -rng.Int63n(1 << uint(width))
	hi := rng.Int63n(1 << uint(width))
	switch rng.Intn(4) {
	case 0:
		lo = 0
	case 1:
		hi = 0
	case 2:
		lo = -hi
	}
	if lo == hi {
		hi++
	}
	w, err := NewWindow(float64(lo), float64(hi), 1)
	require.NoError(t, err)
	full := 0
	if rng.Intn(4) != 0 {
		full = max(1, w.Bits()-1+rng.Intn(12))
	}
	return w.WithFullBits(full), full
}

// TestWindowBoundedRegret checks what wire version 4 promises of every
// window: in a message holding one value, a difference costs at most its
// plain fixed coding (Bits()) plus one bit, and exactly Bits() where the
// window has no adaptive form; a later difference at most Bits() +
// Unary(); the window bit and the longest difference never more than the
// value in full, where a window leaves room for its bit; and every
// difference reads back as written, with the state the writer had.
func TestWindowBoundedRegret(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	adaptive := 0
	for range 3000 {
		w, full := randWindow(t, rng)
		require.LessOrEqual(t, w.MinBits(), w.MaxBits())
		if w.FirstK() > 0 {
			adaptive++
			require.Positive(t, w.Unary())
			if full > 0 {
				require.LessOrEqual(t, 1+w.MaxBits(), full, "window %d..%d, %d bits in full", w.Lo(), w.Hi(), full)
				require.LessOrEqual(t, 2+w.Bits(), full)
			}
		} else {
			require.Equal(t, 0, w.Unary())
			require.Equal(t, w.Bits(), w.MaxBits())
		}
		var bw bits.Writer
		ws, rs := w.NewState(), w.NewState()
		r := bits.NewReader(nil)
		for i := range 1 + rng.Intn(6) {
			// Differences near the ends and near zero, and anywhere.
			d := w.Lo() + rng.Int63n(w.Hi()-w.Lo()+1)
			if rng.Intn(2) == 0 {
				d = max(w.Lo(), min(w.Hi(), int64(rng.NormFloat64()*float64(w.Hi()-w.Lo())/40)))
			}
			bw.Reset(bw.Bytes()[:0])
			base := rng.Uint64()
			require.True(t, w.Write(&bw, &ws, base, base+uint64(d)))
			size := bw.Len() - 1
			switch {
			case i == 0 && w.FirstK() == 0:
				require.Equal(t, w.Bits(), size)
			case i == 0:
				require.LessOrEqual(t, size, w.Bits()+1)
			default:
				require.LessOrEqual(t, size, w.MaxBits())
			}
			require.GreaterOrEqual(t, size, min(w.MinBits(), size)) // d may be 0 here
			r.Reset(bw.Bytes())
			got, in, err := w.Read(r, &rs)
			require.NoError(t, err)
			require.True(t, in)
			require.Equal(t, d, got)
			require.Equal(t, bw.Len(), r.Pos())
			require.Equal(t, ws, rs)
		}
	}
	require.Greater(t, adaptive, 500)
}

// TestWindowFirstDifference spells out the first difference of a window of
// ±100 steps (the guess of a move, 200/32 = 6 steps, gives K0 = 3): a
// magnitude below 8 is 0, its 3 low bits and a sign; any other is 1 and
// the plain fixed coding, d + 100 in 8 bits. The second difference follows
// the first's magnitude.
func TestWindowFirstDifference(t *testing.T) {
	w, err := NewWindow(-100, 100, 1)
	require.NoError(t, err)
	w = w.WithFullBits(16)
	require.Equal(t, [4]int{8, 3, 6, 14}, [4]int{w.Bits(), w.FirstK(), w.Unary(), w.MaxBits()})
	for _, c := range []struct {
		d    int64
		size int // after the window bit
		code uint64
	}{{5, 5, 0b0_101_0 << 0}, {-7, 5, 0b1_111_0}, {8, 9, (8+100)<<1 | 1}, {-100, 9, 0<<1 | 1}} {
		var bw bits.Writer
		s := w.NewState()
		w.Write(&bw, &s, 1000, uint64(1000+c.d))
		require.Equal(t, 1+c.size, bw.Len(), "d=%d", c.d)
		v, err := bits.NewReader(bw.Bytes()).ReadBits(bw.Len())
		require.NoError(t, err)
		require.Equal(t, c.code<<1|1, v, "d=%d", c.d)
	}
	// After a first difference of 20 the mean is 20 steps: K = 4 (20·11/16
	// = 13, of 4 bits), so 9 is q = 0: 0, 1001, sign 0.
	var bw bits.Writer
	s := w.NewState()
	w.Write(&bw, &s, 0, 20)
	n := bw.Len()
	w.Write(&bw, &s, 0, 9)
	require.Equal(t, 1+1+4+1, bw.Len()-n)
	v, err := bits.NewReader(bw.Bytes()[n/8:]).ReadBits(n%8 + 7)
	require.NoError(t, err)
	require.Equal(t, uint64(0b0_1001_0_1), v>>uint(n%8))
	// A later difference escapes after 6 ones: 6 + 8 bits, at most the
	// 16 bits in full with the window bit.
	n = bw.Len()
	w.Write(&bw, &s, 0, uint64(100))
	require.Equal(t, 1+6+8, bw.Len()-n)
}

// TestWindowOneSpelling: an escape holding what the short form spells is
// malformed, in the first difference and in a later one.
func TestWindowOneSpelling(t *testing.T) {
	w, err := NewWindow(-100, 100, 1)
	require.NoError(t, err)
	var bw bits.Writer
	bw.WriteBits(1, 1)   // in the window
	bw.WriteBits(1, 1)   // escaped
	bw.WriteBits(105, 8) // d = 5: the short form holds it
	s := w.NewState()
	_, _, err = w.Read(bits.NewReader(bw.Bytes()), &s)
	require.ErrorIs(t, err, ErrMalformed)
	bw = bits.Writer{}
	s, rs := w.NewState(), w.NewState()
	w.Write(&bw, &s, 0, 20) // the mean is 20: K = 4
	bw.WriteBits(1, 1)
	bw.WriteBits(0b111111, 6)
	bw.WriteBits(100+30, 8) // d = 30: q = 1 < 6
	r := bits.NewReader(bw.Bytes())
	_, _, err = w.Read(r, &rs)
	require.NoError(t, err)
	_, _, err = w.Read(r, &rs)
	require.ErrorIs(t, err, ErrMalformed)
}

// TestRiceEG checks the Rice code with an Exp-Golomb escape: RiceEGBits
// is what WriteRiceEG writes, every value reads back, and a magnitude
// past the unary part costs about two bits a doubling.
func TestRiceEG(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var w bits.Writer
	for range 20000 {
		k, u := rng.Intn(21), rng.Intn(7)
		v := rng.Int63n(1<<uint(rng.Intn(41))) - 1
		if rng.Intn(2) == 0 {
			v = -v
		}
		w.Reset(w.Bytes()[:0])
		WriteRiceEG(&w, v, k, u)
		require.Equal(t, RiceEGBits(v, k, u), w.Len(), "v=%d k=%d u=%d", v, k, u)
		r := bits.NewReader(w.Bytes())
		got, err := ReadRiceEG(r, k, u)
		require.NoError(t, err)
		require.Equal(t, v, got)
		require.Equal(t, w.Len(), r.Pos())
	}
	// k = 1, u = 3: 0..5 in unary and one low bit (0 is 0 0, no sign; 4
	// is 110 0 and a sign); 6 is 111, then 0 (y = 4, no ones), 00 and a
	// sign; 6 + 4·2^j costs 2 bits more than 6 for each doubling.
	require.Equal(t, []int{2, 3, 4, 5, 7}, []int{RiceEGBits(0, 1, 3), RiceEGBits(1, 1, 3), RiceEGBits(2, 1, 3), RiceEGBits(4, 1, 3), RiceEGBits(6, 1, 3)})
	require.Equal(t, []int{9, 11, 13}, []int{RiceEGBits(10, 1, 3), RiceEGBits(18, 1, 3), RiceEGBits(34, 1, 3)})
	// Too many ones, and an end inside the code.
	w.Reset(nil)
	w.WriteBits(1<<50-1, 50)
	_, err := ReadRiceEG(bits.NewReader(w.Bytes()), 1, 3)
	require.ErrorIs(t, err, ErrMalformed)
	_, err = ReadRiceEG(bits.NewReader([]byte{0x0f}), 1, 3)
	require.ErrorIs(t, err, bits.ErrUnexpectedEnd)
}

// FuzzRiceEG reads any input as a sequence of codes: nothing panics, and
// whatever reads writes back to the same bits.
func FuzzRiceEG(f *testing.F) {
	f.Add([]byte{0x5a, 0xff, 0x00, 0x13}, uint8(1), uint8(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint8(20), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, k, u uint8) {
		kk, uu := int(k%21), int(u%7)
		r := bits.NewReader(data)
		for {
			start := r.Pos()
			v, err := ReadRiceEG(r, kk, uu)
			if err != nil {
				return
			}
			var w bits.Writer
			WriteRiceEG(&w, v, kk, uu)
			require.Equal(t, r.Pos()-start, w.Len())
			again, err := ReadRiceEG(bits.NewReader(w.Bytes()), kk, uu)
			require.NoError(t, err)
			require.Equal(t, v, again)
		}
	})
}

// FuzzWindowRead reads any input as a message's differences of one
// window: nothing panics, and whatever reads writes back to the same bits.
func FuzzWindowRead(f *testing.F) {
	f.Add([]byte{0xb5, 0x0f, 0xff, 0x13}, int32(-100), int32(100), uint8(16))
	f.Add([]byte{0xff, 0x00}, int32(-10), int32(10), uint8(0))
	f.Add([]byte{0x7f, 0xff, 0x01}, int32(0), int32(5000), uint8(30))
	f.Fuzz(func(t *testing.T, data []byte, lo, hi int32, full uint8) {
		if lo > hi {
			lo, hi = hi, lo
		}
		win, err := NewWindow(float64(lo), float64(hi), 1)
		if err != nil {
			return
		}
		win = win.WithFullBits(int(full % 64))
		r := bits.NewReader(data)
		rs, ws := win.NewState(), win.NewState()
		var w bits.Writer
		for {
			start := r.Pos()
			d, in, err := win.Read(r, &rs)
			if err != nil || !in {
				return
			}
			w.Reset(w.Bytes()[:0])
			win.Write(&w, &ws, 0, uint64(d))
			require.Equal(t, r.Pos()-start, w.Len())
			require.Equal(t, ws, rs)
		}
	})
}
