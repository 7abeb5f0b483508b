package fields

import (
	"errors"
	"math"

	"github.com/bitwire/bitwire/bits"
)

// Window is a delta window (the dmin/dmax options): a changed value whose
// difference from its baseline, counted in steps of its precision, lies in
// [Lo, Hi] is coded as one bit, 1, then the difference Rice-coded (see
// Rice) with escape width EscapeBits() and a parameter that adapts within
// a message (WindowState); any other changed value is one bit, 0, then the
// value in full, as its own coding writes it. The values compared are the
// coded ones (quantization indexes, integers, fixed-point integers), so
// both sides must be quantized first. The zero Window is not usable; call
// NewWindow.
type Window struct {
	lo, hi int64
	bits   int
	esc    int    // BitsRequired(max(|lo|, |hi|)): an escaped magnitude
	start  uint32 // the running mean a message starts with, in steps
}

// errNoStep is NewWindow's error for a window that holds no whole step.
var errNoStep = errors.New("bitwire: delta window holds no whole step")

// NewWindow returns the window of differences in [dmin, dmax] for values in
// steps of step (1 for integers): Lo = ceil(dmin/step), Hi =
// floor(dmax/step), each with a tolerance of 1e-9 steps for decimal
// rounding. A window that holds no whole step, or reaches beyond ±2^53
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
	w.start = uint32(max(min(uint64(w.hi-w.lo)/32, 1<<20), 1))
	return w, nil
}

// Lo returns the smallest difference the window holds, in steps.
func (w Window) Lo() int64 { return w.lo }

// Hi returns the largest difference the window holds, in steps.
func (w Window) Hi() int64 { return w.hi }

// Bits returns BitsRequired(Hi-Lo), the width of the window.
func (w Window) Bits() int { return w.bits }

// EscapeBits returns the width of an escaped magnitude:
// BitsRequired(max(|Lo|, |Hi|)).
func (w Window) EscapeBits() int { return w.esc }

// MaxBits returns the largest size of a difference in the window, without
// the bit that says it is one: the escape, EscapeBits() bits and a sign
// (the parameter never exceeds EscapeBits(), so no unescaped code is
// longer).
func (w Window) MaxBits() int { return RiceEscape + w.esc + 1 }

// WindowState is the adaptive part of a window's code, one per windowed
// field per message: a running mean of the magnitudes of its differences,
// from which the Rice parameter follows.
type WindowState struct {
	mean RiceMean
}

// k returns the Rice parameter of the next difference.
func (s *WindowState) k() int {
	return s.mean.K()
}

// NewState returns the state at the start of a message: a mean of (Hi -
// Lo)/32 steps (at least 1, at most 2^20).
func (w Window) NewState() WindowState { return WindowState{mean: NewRiceMean(w.start)} }

// Write writes the window bit for a value coded as cur whose baseline is
// coded as base and, when the difference lies in the window, the
// difference, and updates s. It reports whether it did; if not, the caller
// writes the value in full.
func (w Window) Write(wr *bits.Writer, s *WindowState, base, cur uint64) bool {
	diff := int64(cur - base)
	in := diff >= w.lo && diff <= w.hi
	wr.WriteBool(in)
	if in {
		WriteRice(wr, diff, s.k(), w.esc)
		s.mean.Add(abs64(diff))
	}
	return in
}

// Read reads what Write wrote: whether the value was coded in the window
// and, if so, its difference from the baseline (added to the baseline's
// coded value, modulo 2^64, it gives the value's). When in is false the
// caller reads the value in full. A difference outside the window is
// ErrMalformed.
func (w Window) Read(r *bits.Reader, s *WindowState) (diff int64, in bool, err error) {
	if in, err = r.ReadBool(); err != nil || !in {
		return 0, false, err
	}
	if diff, err = ReadRice(r, s.k(), w.esc); err != nil {
		return 0, false, err
	}
	if diff < w.lo || diff > w.hi {
		return 0, false, ErrMalformed
	}
	s.mean.Add(abs64(diff))
	return diff, true, nil
}
