package fields

import (
	"fmt"
	"math"

	"github.com/bitwire/bitwire/bits"
)

// Quantizer codes a float in [min, max] as the index of the nearest point of
// an evenly spaced grid min, min+step, ..., max of Steps()+1 points, written
// in Bits() bits. The decoded value is within step/2 of the input, and
// step <= prec for a Quantizer made with NewQuantizer.
//
// Index and Value are exact inverses on the grid: Index(Value(i)) == i for
// every i in 0..Steps(), so quantizing an already quantized value (even one
// stored as float32, for grids coarser than float32's precision) changes
// nothing. That needs a grid that float64 resolves, with a step of a few
// ulps of max(|min|, |max|) or more, which any grid of up to 50 bits over a
// range that includes or nears zero has. On a finer grid (53 bits over
// [0, 1], say, or 40 bits over [1e6, 1e6+1]) neighbouring indices can
// decode to the same float64; Index then returns one of them, so
// Value(Index(Value(i))) == Value(i) still holds.
//
// The zero Quantizer has no grid; use NewQuantizer or NewQuantizerBits.
type Quantizer struct {
	min, max float64
	step     float64 // (max-min)/steps
	steps    uint64  // number of intervals; indices are 0..steps
	bits     int     // BitsRequired(steps)
	// fine is set when the grid is so fine next to the magnitude of its
	// values that rounding (v-min)/step alone could land on a neighbour of
	// the nearest point; Index then compares the neighbours too.
	fine bool
	// inv is 1/step, and quick tells that index may round (v-min)*inv
	// instead of (v-min)/step (see roundDiv).
	inv   float64
	quick bool
}

// maxQuantBits is the widest quantizer: indices up to 2^53-1 are exact in a
// float64.
const maxQuantBits = 53

// NewQuantizer returns the quantizer of [min, max] with a step of at most
// prec. min, max and prec must be finite, min < max and prec > 0. The grid
// has steps = ceil((max-min)/prec) intervals, except that a quotient within
// 1e-9 (relative) of an integer is taken as that integer, so that
// [-512, 512] with prec 0.01 has exactly 102400 steps and not 102401. The
// index takes BitsRequired(steps) bits, which must not exceed 53.
func NewQuantizer(min, max, prec float64) (Quantizer, error) {
	if err := checkSpan(min, max); err != nil {
		return Quantizer{}, err
	}
	if !(prec > 0) || math.IsInf(prec, 0) {
		return Quantizer{}, fmt.Errorf("bitwire: quantizer precision %v is not a finite number > 0", prec)
	}
	ratio := (max - min) / prec
	if ratio > 1<<maxQuantBits { // also catches +Inf
		return Quantizer{}, fmt.Errorf("bitwire: quantizer [%v, %v] with precision %v needs more than %d bits", min, max, prec, maxQuantBits)
	}
	steps := math.Ceil(ratio)
	if n := math.Round(ratio); math.Abs(ratio-n) <= 1e-9*ratio {
		steps = n
	}
	if steps < 1 { // a quotient that underflowed to zero
		steps = 1
	}
	if steps > 1<<maxQuantBits-1 {
		return Quantizer{}, fmt.Errorf("bitwire: quantizer [%v, %v] with precision %v needs more than %d bits", min, max, prec, maxQuantBits)
	}
	return newQuantizer(min, max, uint64(steps))
}

// NewQuantizerBits returns the quantizer of [min, max] whose index fills
// exactly n bits: steps = 2^n-1. min and max must be finite, min < max, and
// n in 1..53.
func NewQuantizerBits(min, max float64, n int) (Quantizer, error) {
	if err := checkSpan(min, max); err != nil {
		return Quantizer{}, err
	}
	if n < 1 || n > maxQuantBits {
		return Quantizer{}, errWidth("quantizer bit count", n, 1, maxQuantBits)
	}
	return newQuantizer(min, max, 1<<uint(n)-1)
}

func checkSpan(min, max float64) error {
	if math.IsNaN(min) || math.IsInf(min, 0) || math.IsNaN(max) || math.IsInf(max, 0) {
		return fmt.Errorf("bitwire: quantizer bounds [%v, %v] are not finite", min, max)
	}
	if !(min < max) {
		return fmt.Errorf("bitwire: quantizer min %v is not below max %v", min, max)
	}
	if math.IsInf(max-min, 0) {
		return fmt.Errorf("bitwire: quantizer span [%v, %v] overflows a float64", min, max)
	}
	return nil
}

func newQuantizer(min, max float64, steps uint64) (Quantizer, error) {
	step := (max - min) / float64(steps)
	mag := math.Max(math.Abs(min), math.Abs(max))
	// (v-min)/step carries a relative error of a few ulps of both the index
	// and mag/step; below 2^44 that is far under the half step that rounding
	// tolerates, so Index(Value(i)) == i holds without further care.
	fine := float64(steps)+mag/step > 1<<44
	return Quantizer{min: min, max: max, step: step, steps: steps, bits: BitsRequired(steps), fine: fine,
		inv: 1 / step, quick: !fine && steps <= maxQuickSteps && !math.IsInf(1/step, 0)}, nil
}

// Bits returns the size of a coded value: BitsRequired(Steps()).
func (q *Quantizer) Bits() int { return q.bits }

// Steps returns the number of grid intervals; indices run from 0 to Steps().
func (q *Quantizer) Steps() uint64 { return q.steps }

// Min returns the lower bound, the value of index 0.
func (q *Quantizer) Min() float64 { return q.min }

// Max returns the upper bound, the value of index Steps().
func (q *Quantizer) Max() float64 { return q.max }

// Step returns the grid spacing (max-min)/Steps().
func (q *Quantizer) Step() float64 { return q.step }

// Index returns the index of the grid point nearest v (halves round up). A
// NaN or infinite v is ErrInvalidValue; a v below min or above max is
// ErrOutOfRange.
func (q *Quantizer) Index(v float64) (uint64, error) {
	// The common case, small enough to be inlined: roundDiv's product,
	// when it is not near a rounding boundary. v <= max keeps it at most
	// Steps(): the product exceeds the quotient by far less than a half.
	if q.quick && v >= q.min && v <= q.max {
		if k, ok := truncClear((v-q.min)*q.inv + 0.5); ok {
			return uint64(k), nil
		}
	}
	return q.indexChecked(v)
}

// indexChecked is Index without its fast path.
//
//go:noinline
func (q *Quantizer) indexChecked(v float64) (uint64, error) {
	if v-v != 0 { // NaN and ±Inf
		return 0, ErrInvalidValue
	}
	if v < q.min || v > q.max {
		return 0, ErrOutOfRange
	}
	return q.index(v), nil
}

// IndexClamp is Index with out-of-range values clamped to min or max
// instead of ErrOutOfRange. NaN and ±Inf are still ErrInvalidValue.
func (q *Quantizer) IndexClamp(v float64) (uint64, error) {
	if v-v != 0 {
		return 0, ErrInvalidValue
	}
	if v <= q.min {
		return 0, nil
	}
	if v >= q.max {
		return q.steps, nil
	}
	return q.index(v), nil
}

// index rounds v, known to be in [min, max], to its grid index: roundDiv
// on most grids, indexSlow on the others.
func (q *Quantizer) index(v float64) uint64 {
	if q.quick {
		return min(roundDiv(v-q.min, q.step, q.inv), q.steps)
	}
	return q.indexSlow(v)
}

// indexSlow is index by the definition: (v-min)/step rounded half up,
// capped at Steps() and, on fine grids, moved to the nearest index. The
// quotient is below 2^53 + 1, so the conversion through int64 (one
// instruction on most machines) is exact.
//
//go:noinline
func (q *Quantizer) indexSlow(v float64) uint64 {
	i := uint64(int64((v-q.min)/q.step + 0.5))
	if i > q.steps || q.fine {
		i = q.fix(v, i)
	}
	return i
}

// maxQuickSteps bounds the grids whose indices roundDiv computes: below
// 2^26 the product and the quotient differ by less than 1e-7.
const maxQuickSteps = 1 << 26

// roundDivGuard is how close to a rounding boundary a product must fall for
// roundDiv to divide after all: far more than the 1e-7 they can differ by.
const roundDivGuard = 1e-6

// roundDiv returns uint64(d/step + 0.5), the quotient rounded half up, for
// 0 <= d/step < 2^26, given inv = 1/step. It multiplies by inv, which takes
// a few cycles where a division takes tens, and divides only when the
// product lies within roundDivGuard of a rounding boundary, where the two
// could round apart: the result is always the quotient's, bit for bit.
func roundDiv(d, step, inv float64) uint64 {
	if k, ok := truncClear(d*inv + 0.5); ok { // y >= 0.5: truncation is floor
		return uint64(k)
	}
	return uint64(int64(d/step + 0.5))
}

// truncClear returns y truncated, and whether no integer lies within
// roundDivGuard of y, so that every value that close to y truncates to the
// same k. (An integer that close moves y-guard or y+guard off k: three
// independent conversions, shorter than converting k back.)
func truncClear(y float64) (int64, bool) {
	k := int64(y)
	return k, int64(y-roundDivGuard) == k && int64(y+roundDivGuard) == k
}

// fix caps a rounded index at Steps() and, on fine grids, moves it to the
// index nearest v.
func (q *Quantizer) fix(v float64, i uint64) uint64 {
	if i > q.steps {
		i = q.steps
	}
	if q.fine {
		i = q.nearest(v, i)
	}
	return i
}

// nearest corrects a rounded index on grids too fine for plain rounding to
// be exact: starting from i, it walks to whichever index decodes closest to
// v. Value is monotonic, so the distance to v falls and then rises, and
// every move crosses a different float64; the rounded estimate is a few ulps
// off at most, so the walk takes a few steps at most.
func (q *Quantizer) nearest(v float64, i uint64) uint64 {
	e := math.Abs(q.Value(i) - v)
	for i > 0 {
		d := math.Abs(q.Value(i-1) - v)
		if d >= e {
			break
		}
		i, e = i-1, d
	}
	for i < q.steps {
		d := math.Abs(q.Value(i+1) - v)
		if d >= e {
			break
		}
		i, e = i+1, d
	}
	return i
}

// Value returns the grid point of index i: min + i*step, with Value(0) ==
// min and Value(Steps()) == max exactly. An i above Steps() is a bug in the
// caller; it returns max.
func (q *Quantizer) Value(i uint64) float64 {
	if i >= q.steps {
		return q.max
	}
	return q.min + float64(i)*q.step
}

// Write writes the index of v (see Index) in Bits() bits.
func (q *Quantizer) Write(w *bits.Writer, v float64) error {
	i, err := q.Index(v)
	if err != nil {
		return err
	}
	w.WriteBits(i, q.bits)
	return nil
}

// WriteClamp writes the index of v clamped to [min, max] (see IndexClamp)
// in Bits() bits.
func (q *Quantizer) WriteClamp(w *bits.Writer, v float64) error {
	i, err := q.IndexClamp(v)
	if err != nil {
		return err
	}
	w.WriteBits(i, q.bits)
	return nil
}

// Read reads a value written by Write or WriteClamp and returns its grid
// point. An index above Steps() is ErrOutOfRange.
func (q *Quantizer) Read(r *bits.Reader) (float64, error) {
	i, err := q.ReadIndex(r)
	if err != nil {
		return 0, err
	}
	return q.Value(i), nil
}

// ReadIndex reads a grid index written by Write or WriteClamp. An index
// above Steps() is ErrOutOfRange.
func (q *Quantizer) ReadIndex(r *bits.Reader) (uint64, error) {
	i, err := r.ReadBits(q.bits)
	if err != nil {
		return 0, err
	}
	if i > q.steps {
		return 0, ErrOutOfRange
	}
	return i, nil
}
