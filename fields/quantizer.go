package fields

import (
	"fmt"
	"math"
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// Quantizer codes a float in [min, max] as the index of a point of an
// evenly spaced grid, written in Bits() bits. The decoded value is within
// step/2 of the input, and step <= prec for a Quantizer made with
// NewQuantizer.
//
// Where the range holds zero inside it (min < 0 < max) the grid is anchored
// at zero: its points are the multiples k·step that fall in the range, with
// the outermost ones clamped to min and max, so 0 is always exactly a grid
// point (a body at rest stays at rest). Otherwise the grid runs from min to
// max: min, min+step, ..., max, both ends exact. docs/wire-format.md gives
// the exact arithmetic.
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
	step     float64 // the grid spacing
	steps    uint64  // number of intervals; indices are 0..steps
	bits     int     // BitsRequired(steps)
	// zero is set when the grid is anchored at zero (min < 0 < max): index
	// i is the point (kmin+i)·step clamped to [min, max]. Otherwise index i
	// is min + i·step, and max for i = steps.
	zero bool
	kmin float64 // K(min) = floor(min/step + 0.5), an integer; 0 unless zero
	// v0 and vN are the values of indices 0 and steps: the grid's ends,
	// clamped. Value computes the others as at + (kmin+i)·step, which is
	// min + i·step on a grid from min and (kmin+i)·step on one anchored at
	// zero, and never needs clamping.
	v0, vN float64
	// at and off give the index as floor((v-at)·inv + off): at = min and
	// off = 0.5 on grids from min, at = 0 and off = 0.5-kmin on grids
	// anchored at zero.
	at, off float64
	// fine is set when the grid is so fine next to the magnitude of its
	// values that rounding alone could land on a neighbour of the nearest
	// point; Index then compares the neighbours too.
	fine bool
	// inv is 1/step, and quick tells that index may round with a product
	// by inv instead of a quotient by step (see roundDiv).
	inv   float64
	quick bool
}

// maxQuantBits is the widest quantizer: indices up to 2^53-1 are exact in a
// float64.
const maxQuantBits = 53

// NewQuantizer returns the quantizer of [min, max] with a step of at most
// prec. min, max and prec must be finite, min < max and prec > 0.
//
// When min < 0 < max, the step is prec itself and the grid is anchored at
// zero: the indices run over K(min)..K(max) with K(x) = floor(x/prec+0.5),
// which is never more than the ceil((max-min)/prec) intervals of a grid
// from min to max. Otherwise the grid has steps = ceil((max-min)/prec)
// intervals from min to max, except that a quotient within 1e-9
// (relative) of an integer is taken as that integer, so that [0, 1024]
// with prec 0.01 has exactly 102400 steps and not 102401. The index takes
// BitsRequired(steps) bits, which must not exceed 53.
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
	if min < 0 && 0 < max {
		return newZeroQuantizer(min, max, prec, 1<<maxQuantBits-1)
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

// NewQuantizerBits returns the quantizer of [min, max] whose index fits in
// exactly n bits. min and max must be finite, min < max, and n in 1..53.
// A grid from min to max has steps = 2^n-1. A range with zero inside it
// (min < 0 < max) is anchored at zero with step = (max-min)/(2^n-2) (for
// n = 1: max-min), so that 0 is a grid point and the index still fits in
// n bits.
func NewQuantizerBits(min, max float64, n int) (Quantizer, error) {
	if err := checkSpan(min, max); err != nil {
		return Quantizer{}, err
	}
	if n < 1 || n > maxQuantBits {
		return Quantizer{}, errWidth("quantizer bit count", n, 1, maxQuantBits)
	}
	if min < 0 && 0 < max {
		d := float64(uint64(1)<<uint(n) - 2)
		if n == 1 {
			d = 1
		}
		return newZeroQuantizer(min, max, (max-min)/d, 1<<uint(n)-1)
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

// newQuantizer returns the grid from min to max of steps intervals.
func newQuantizer(min, max float64, steps uint64) (Quantizer, error) {
	step := (max - min) / float64(steps)
	return finish(Quantizer{min: min, max: max, step: step, steps: steps, at: min, off: 0.5})
}

// newZeroQuantizer returns the grid anchored at zero of the given step over
// [min, max], min < 0 < max, whose index must not exceed limit: kmin =
// K(min), kmax = K(max), steps = kmax - kmin. Rounding can make kmax-kmin
// one more than the real quotient allows; the step then moves up by one
// float64 at a time until the indices fit (in practice never more than
// once).
func newZeroQuantizer(min, max, step float64, limit uint64) (Quantizer, error) {
	for {
		kmin := math.Floor(min/step + 0.5)
		kmax := math.Floor(max/step + 0.5)
		if steps := kmax - kmin; steps <= float64(limit) {
			return finish(Quantizer{min: min, max: max, step: step, steps: uint64(steps), zero: true,
				kmin: kmin, at: 0, off: 0.5 - kmin})
		}
		if limit == 1<<maxQuantBits-1 {
			return Quantizer{}, fmt.Errorf("bitwire: quantizer [%v, %v] with step %v needs more than %d bits", min, max, step, maxQuantBits)
		}
		step = math.Nextafter(step, math.Inf(1))
	}
}

// finish sets the fields derived from the grid.
func finish(q Quantizer) (Quantizer, error) {
	mag := math.Max(math.Abs(q.min), math.Abs(q.max))
	// The quotient carries a relative error of a few ulps of both the index
	// and mag/step; below 2^44 that is far under the half step that rounding
	// tolerates, so Index(Value(i)) == i holds without further care.
	q.fine = float64(q.steps)+mag/q.step > 1<<44
	q.bits = BitsRequired(q.steps)
	q.inv = 1 / q.step
	q.quick = !q.fine && q.steps <= maxQuickSteps && !math.IsInf(q.inv, 0)
	q.v0, q.vN = q.min, q.max
	if q.zero {
		q.v0 = min(max(q.kmin*q.step, q.min), q.max)
		q.vN = min(max((q.kmin+float64(q.steps))*q.step, q.min), q.max)
	}
	return q, nil
}

// Bits returns the size of a coded value: BitsRequired(Steps()).
func (q *Quantizer) Bits() int { return q.bits }

// Steps returns the number of grid intervals; indices run from 0 to Steps().
func (q *Quantizer) Steps() uint64 { return q.steps }

// Min returns the lower bound. It is the value of index 0 on a grid from
// min to max; on a grid anchored at zero, index 0 is the multiple of the
// step nearest min, clamped to it.
func (q *Quantizer) Min() float64 { return q.min }

// Max returns the upper bound. It is the value of index Steps() on a grid
// from min to max; on a grid anchored at zero, index Steps() is the
// multiple of the step nearest max, clamped to it.
func (q *Quantizer) Max() float64 { return q.max }

// Step returns the grid spacing: (max-min)/Steps() on a grid from min to
// max, the spacing of the multiples on a grid anchored at zero.
func (q *Quantizer) Step() float64 { return q.step }

// KMin returns, on a grid anchored at zero, the multiple of the step that
// index 0 stands for before clamping: floor(min/step + 0.5). It is 0 on a
// grid from min to max.
func (q *Quantizer) KMin() int64 { return int64(q.kmin) }

// ZeroAnchored reports whether the grid is anchored at zero (min < 0 <
// max), so that 0 is a grid point.
func (q *Quantizer) ZeroAnchored() bool { return q.zero }

// Index returns the index of the grid point nearest v (halves round up). A
// NaN or infinite v is ErrInvalidValue; a v below min or above max is
// ErrOutOfRange.
func (q *Quantizer) Index(v float64) (uint64, error) {
	// The common case (IndexQuick is this part alone, small enough for
	// callers to inline): roundDiv's product, when it is not near a
	// rounding boundary. v <= max keeps it at most
	// Steps(): the product exceeds the quotient by far less than a half.
	if q.quick && v >= q.min && v <= q.max {
		if k, ok := truncClear(float64((v-q.at)*q.inv) + q.off); ok { // float64: no fused multiply-add
			return uint64(k), nil
		}
	}
	return q.indexChecked(v)
}

// IndexGuard is the margin of Index's fast path (see IndexTerms).
const IndexGuard = roundDivGuard

// IndexTerms returns the terms of Index's fast path, for a caller that
// runs it inline: for v in [Min(), Max()], let y = float64((v-at)*inv) +
// off, computed in that order without a fused multiply-add, and k =
// int64(y); when int64(y-IndexGuard) and int64(y+IndexGuard) are k too,
// Index(v) is k. Otherwise, or when ok is false (a grid whose Index
// divides), the caller calls Index.
func (q *Quantizer) IndexTerms() (at, inv, off float64, ok bool) {
	return q.at, q.inv, q.off, q.quick
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
	if q.zero {
		return q.indexZero(v)
	}
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

// indexZero is index on a grid anchored at zero: floor(v/step + 0.5) -
// kmin, limited to 0..Steps() and, on fine grids, moved to the nearest
// index. The product by inv serves when it is clear of a rounding boundary
// (see roundDiv).
//
//go:noinline
func (q *Quantizer) indexZero(v float64) uint64 {
	var k float64
	// float64(...) keeps the product rounded alone: no fused multiply-add.
	if y, ok := truncClear(float64((v-q.at)*q.inv) + q.off); q.quick && ok && y >= 0 {
		k = float64(y)
	} else {
		k = math.Floor(v/q.step+0.5) - q.kmin
	}
	i := uint64(0)
	if k > 0 {
		i = min(uint64(k), q.steps)
	}
	if q.fine {
		i = q.nearest(v, i)
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
	// float64(...) keeps the product rounded alone: no fused multiply-add.
	if k, ok := truncClear(float64(d*inv) + 0.5); ok { // y >= 0.5: truncation is floor
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

// Value returns the grid point of index i. On a grid from min to max it is
// min + i*step, with Value(0) == min and Value(Steps()) == max exactly; on
// a grid anchored at zero it is (kmin+i)*step clamped to [min, max], which
// is exactly 0 for the index of zero. An i above Steps() is a bug in the
// caller; it returns Value(Steps()).
func (q *Quantizer) Value(i uint64) float64 {
	if i-1 < q.steps-1 { // 0 < i < steps
		// float64(...) keeps the product rounded alone: no fused multiply-add.
		return q.at + float64((q.kmin+float64(i))*q.step)
	}
	if i == 0 {
		return q.v0
	}
	return q.vN
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

// IndexQuick is the part of Index small enough to be inlined: the index of
// v when v is in [min, max] and the product by 1/step is clear of a
// rounding boundary (then it is Index's result), and ok false otherwise,
// when the caller calls Index.
func (q *Quantizer) IndexQuick(v float64) (i uint64, ok bool) {
	if q.quick && v >= q.min && v <= q.max {
		k, clear := truncClear(float64((v-q.at)*q.inv) + q.off) // float64: no fused multiply-add
		return uint64(k), clear
	}
	return 0, false
}

// Float32Scale returns mul and off such that, for every float32 v in
// [Min(), Max()],
//
//	Index(float64(v)) == uint64(int64(float64(v)*mul + off))
//
// (a product and a sum, each rounded alone), and ok, when q is a grid on
// which that can be proven; ok is false otherwise, and Index must be used.
// It is proven when the grid's own product is exact and its division
// agrees with it:
//
//   - the grid starts at 0 or is anchored at zero, is not fine and takes
//     Index's product path (so Index computes (v·inv + off) and, near a
//     rounding boundary, floor(v/step + 0.5) - kmin);
//   - inv = 1/step is an integer N of at most 29 significant bits, so v·N
//     is exact for a float32 v (24 bits);
//   - step·N is within 2^-54·3/4 of 1, so v/step rounds to v·N exactly:
//     the quotient v·N/(1+e) lies closer to v·N than half the spacing of
//     float64s next to it (at least 2^-54 of it);
//   - x = v·N lies, unless x + 0.5 is an integer (a tie, exact either
//     way), farther from the rounding boundaries (the half-integers) than
//     one ulp of the largest sum: x + 0.5 is a multiple of
//     min(1/2, ulp32(v)), and |x| >= 1/4 wherever it nears a boundary,
//     which bounds ulp32(v) from below. Then rounding x + 0.5 and
//     x + 0.5 - kmin cannot cross an integer, and both floors agree.
func (q *Quantizer) Float32Scale() (mul, off float64, ok bool) {
	if !q.quick || q.fine || q.at != 0 {
		return 0, 0, false
	}
	n := q.inv
	if n < 1 || n != math.Trunc(n) || n > 1<<53 {
		return 0, 0, false
	}
	u := uint64(n)
	if 64-mbits.LeadingZeros64(u)-mbits.TrailingZeros64(u) > 29 {
		return 0, 0, false
	}
	if e := math.FMA(q.step, n, -1); !(math.Abs(e) < 0.75/(1<<54)) {
		return 0, 0, false
	}
	// The least ulp of a float32 of magnitude 1/(4N) or more.
	_, exp := math.Frexp(0.25 / n) // 0.25/n = f·2^exp, f in [0.5, 1)
	spacing := math.Ldexp(1, exp-1-23)
	// The largest sum: |x + 0.5 - kmin| <= steps + |kmin| + 1.
	top := float64(q.steps) + math.Abs(q.kmin) + 1
	_, texp := math.Frexp(top)
	if !(min(0.5, spacing) > math.Ldexp(1, texp-52)) {
		return 0, 0, false
	}
	return n, q.off, true
}
