package fields

import (
	"errors"
	"math"
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// Window is a delta window (the dmin/dmax options): a changed value whose
// difference from its baseline, counted in steps of its precision, lies in
// [Lo, Hi] is coded as one bit, 1, then the difference; any other changed
// value is one bit, 0, then the value in full, as its own coding writes it.
// The values compared are the coded ones (quantization indexes, integers,
// fixed-point integers), so both sides must be quantized first.
//
// The difference is coded so that adapting never costs much (wire version
// 4). Its plain fixed coding is diff - Lo in Bits() bits. The first
// difference of a window in a message, when nothing is known yet of the
// differences it will see, is one bit more at most: 0 then its magnitude's
// K0 low bits and a sign when its magnitude is below 2^K0, else 1 then the
// plain fixed coding (K0 the parameter of a mean of (Hi-Lo)/32 steps, the
// window's guess of a typical move). Each later difference is Rice-coded
// (see Rice) with a parameter that follows the magnitudes before it
// (WindowState), and an escape after Unary() one bits that holds the plain
// fixed coding. Unary() is chosen so that the window bit and the escape
// cost no more than the value in full (see WithFullBits): a move in the
// window never costs more than the same move without one. A window whose
// K0 or Unary() is 0 (a narrow window, or one nearly as wide as the
// value's range) codes every difference in the plain fixed coding, as
// wire versions 1 and 2 did. The zero Window is not usable; call
// NewWindow.
type Window struct {
	lo, hi int64
	bits   int // BitsRequired(hi - lo): the plain fixed coding's width
	esc    int // BitsRequired(max(|lo|, |hi|)): the largest magnitude's width
	unary  int // a later difference's escape: that many one bits
	k0     int // the first difference's parameter (0: every difference fixed)
	maxK   int // the largest Rice parameter: max(0, bits - 2)
}

// errNoStep is NewWindow's error for a window that holds no whole step.
var errNoStep = errors.New("bitwire: delta window holds no whole step")

// NewWindow returns the window of differences in [dmin, dmax] for values in
// steps of step (1 for integers): Lo = ceil(dmin/step), Hi =
// floor(dmax/step), each with a tolerance of 1e-9 steps for decimal
// rounding, for a value of unbounded width in full (WithFullBits gives
// others). A window that holds no whole step, or reaches beyond ±2^53
// steps, is an error.
func NewWindow(dmin, dmax, step float64) (Window, error) {
	lo := math.Ceil(dmin/step - 1e-9)
	hi := math.Floor(dmax/step + 1e-9)
	if !(lo <= hi) || lo < -(1<<53) || hi > 1<<53 {
		return Window{}, errNoStep
	}
	w := Window{lo: int64(lo), hi: int64(hi)}
	w.bits = BitsRequired(uint64(w.hi - w.lo))
	w.esc = BitsRequired(max(abs64(w.lo), abs64(w.hi)))
	w.maxK = max(0, w.bits-2)
	return w.WithFullBits(0), nil
}

// WithFullBits returns the window of a value whose full coding takes full
// bits (0 or less: unbounded). Unary() becomes min(RiceEscape, full - 1 -
// Bits()), at least 0, so that the window bit, the escape's ones and the
// plain fixed coding together take at most full bits; the first
// difference's short form is used only when Unary() is not 0 either.
func (w Window) WithFullBits(full int) Window {
	w.unary = RiceEscape
	if full > 0 {
		w.unary = min(RiceEscape, max(0, full-1-w.bits))
	}
	w.k0 = 0
	if w.unary > 0 {
		w.k0 = min(NewRiceMean(uint32(min(uint64(w.hi-w.lo)/32, 1<<20))).K(), w.maxK)
	}
	return w
}

// Lo returns the smallest difference the window holds, in steps.
func (w Window) Lo() int64 { return w.lo }

// Hi returns the largest difference the window holds, in steps.
func (w Window) Hi() int64 { return w.hi }

// Bits returns BitsRequired(Hi-Lo), the width of the window's plain fixed
// coding.
func (w Window) Bits() int { return w.bits }

// EscapeBits returns BitsRequired(max(|Lo|, |Hi|)), the width of the
// largest magnitude (a model's window table has a slot for each magnitude
// of at most that width).
func (w Window) EscapeBits() int { return w.esc }

// Unary returns the number of one bits that escape a later difference of
// a message to the plain fixed coding (0: every difference is in the plain
// fixed coding).
func (w Window) Unary() int {
	if w.k0 == 0 {
		return 0
	}
	return w.unary
}

// FirstK returns the parameter of the first difference of a message: its
// short form holds magnitudes below 2^FirstK() (0: there is no short form,
// every difference is in the plain fixed coding).
func (w Window) FirstK() int { return w.k0 }

// MaxBits returns the largest size of a difference in the window, without
// the bit that says it is one: Bits() + Unary() (a later difference's
// escape; no unescaped code is longer, since the parameter is at most
// Bits() - 2), and Bits() + 1 for a first difference.
func (w Window) MaxBits() int {
	if w.k0 == 0 {
		return w.bits
	}
	return w.bits + w.unary
}

// MinBits returns the smallest size of a changed value's difference in the
// window, without the bit that says it is one (a changed value's
// difference is not 0): a magnitude of 1 in the short form of parameter
// 1, else Bits().
func (w Window) MinBits() int {
	if w.k0 == 0 {
		return w.bits
	}
	return min(3, w.bits)
}

// WindowState is the adaptive part of a window's code, one per windowed
// field per message: whether a difference was coded yet, and the running
// mean of the magnitudes of the differences, from which the Rice parameter
// follows.
type WindowState struct {
	mean    RiceMean
	started bool
}

// add records a difference of magnitude m: the first sets the mean, a
// later one moves it.
func (s *WindowState) add(m uint64) {
	if !s.started {
		s.mean, s.started = NewRiceMean(uint32(min(m, 1<<20))), true
		return
	}
	s.mean.Add(m)
}

// NewState returns the state at the start of a message.
func (w Window) NewState() WindowState { return WindowState{} }

// Write writes the window bit for a value coded as cur whose baseline is
// coded as base and, when the difference lies in the window, the
// difference, and updates s. It reports whether it did; if not, the caller
// writes the value in full.
func (w Window) Write(wr *bits.Writer, s *WindowState, base, cur uint64) bool {
	diff := int64(cur - base)
	if diff < w.lo || diff > w.hi {
		wr.WriteBits(0, 1)
		return false
	}
	m := abs64(diff)
	// The window bit and the code in one write: at most 1 + RiceEscape +
	// 54 bits (an escape), or 1 + RiceEscape + 1 + 20 + 1 (a short form).
	code, n := uint64(1), 1
	if w.k0 != 0 {
		// The short form: a quotient below the unary limit (1 for the
		// first difference), in unary, then the k low bits and the sign;
		// else that many ones and the plain fixed coding.
		k, u := w.k0, uint64(1)
		if s.started {
			k, u = min(s.mean.K(), w.maxK), uint64(w.unary)
		}
		uk := uint(k) & 63
		if q := m >> uk; q < u {
			code |= (1<<q - 1 | (m&(1<<uk-1))<<(q+1)) << 1
			n += int(q) + 1 + k
			if m != 0 {
				code |= uint64(diff) >> 63 << (uint(n) & 63)
				n++
			}
			wr.WriteBits(code, n)
			s.add(m)
			return true
		}
		code |= (1<<u - 1) << 1
		n += int(u)
	}
	wr.WriteBits(code|uint64(diff-w.lo)<<(uint(n)&63), n+w.bits)
	s.add(m)
	return true
}

// Read reads what Write wrote: whether the value was coded in the window
// and, if so, its difference from the baseline (added to the baseline's
// coded value, modulo 2^64, it gives the value's). When in is false the
// caller reads the value in full. A difference outside the window, and an
// escape holding a difference the short form could have spelt, are
// ErrMalformed (each difference has one spelling).
func (w Window) Read(r *bits.Reader, s *WindowState) (diff int64, in bool, err error) {
	if in, err = r.ReadBool(); err != nil || !in {
		return 0, false, err
	}
	k, u := w.k0, 1
	if s.started {
		k, u = min(s.mean.K(), w.maxK), w.unary
	}
	if w.k0 != 0 {
		// The unary part, at most u <= RiceEscape bits, through a peek.
		q := min(mbits.TrailingZeros64(^r.Peek(u)), u)
		n := q
		if q < u {
			n++ // the 0 that ends it
		}
		if err := r.Skip(n); err != nil {
			return 0, false, err
		}
		if q < u {
			low, err := r.ReadBits(k)
			if err != nil {
				return 0, false, err
			}
			m := uint64(q)<<uint(k) | low
			if diff = int64(m); m != 0 {
				neg, err := r.ReadBool()
				if err != nil {
					return 0, false, err
				}
				if neg {
					diff = -diff
				}
			}
			return w.check(s, diff)
		}
	}
	v, err := r.ReadBits(w.bits)
	if err != nil {
		return 0, false, err
	}
	diff = int64(v) + w.lo
	if w.k0 != 0 && abs64(diff)>>uint(k) < uint64(u) {
		return 0, false, ErrMalformed
	}
	return w.check(s, diff)
}

// check returns a decoded difference when it lies in the window, having
// recorded it in s; else ErrMalformed.
func (w Window) check(s *WindowState, diff int64) (int64, bool, error) {
	if diff < w.lo || diff > w.hi {
		return 0, false, ErrMalformed
	}
	s.add(abs64(diff))
	return diff, true, nil
}
