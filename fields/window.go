package fields

import (
	"errors"
	"math"

	"github.com/bitwire/bitwire/bits"
)

// Window is a delta window (the dmin/dmax options): a changed value whose
// difference from its baseline, counted in steps of its precision, lies in
// [Lo, Hi] is coded as one bit, 1, then the difference minus Lo in
// BitsRequired(Hi-Lo) bits; any other changed value is one bit, 0, then the
// value in full, as its own coding writes it. The values compared are the
// coded ones (quantization indexes, integers, fixed-point integers), so
// both sides must be quantized first. The zero Window is not usable; call
// NewWindow.
type Window struct {
	lo, hi int64
	bits   int
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
	return w, nil
}

// Lo returns the smallest difference the window holds, in steps.
func (w Window) Lo() int64 { return w.lo }

// Hi returns the largest difference the window holds, in steps.
func (w Window) Hi() int64 { return w.hi }

// Bits returns the size of a difference in the window, without the bit
// that says it is one.
func (w Window) Bits() int { return w.bits }

// Write writes the window bit for a value coded as cur whose baseline is
// coded as base and, when the difference lies in the window, the
// difference. It reports whether it did; if not, the caller writes the
// value in full.
func (w Window) Write(wr *bits.Writer, base, cur uint64) bool {
	diff := int64(cur - base)
	in := diff >= w.lo && diff <= w.hi
	wr.WriteBool(in)
	if in {
		wr.WriteBits(uint64(diff-w.lo), w.bits)
	}
	return in
}

// Read reads what Write wrote: whether the value was coded in the window
// and, if so, its difference from the baseline (added to the baseline's
// coded value, modulo 2^64, it gives the value's). When in is false the
// caller reads the value in full.
func (w Window) Read(r *bits.Reader) (diff int64, in bool, err error) {
	if in, err = r.ReadBool(); err != nil || !in {
		return 0, false, err
	}
	off, err := r.ReadBits(w.bits)
	if err != nil {
		return 0, false, err
	}
	return int64(off) + w.lo, true, nil
}
