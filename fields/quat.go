package fields

import (
	"errors"
	"math"
	"sync"

	"github.com/bitwire/bitwire/bits"
)

// Quat codes a unit quaternion (a rotation) in the "smallest three" form:
// the 2-bit index of the component of largest magnitude, which is dropped
// and rebuilt by the reader from the unit length, then the other three, in
// increasing component order, each quantized to N bits on a grid of 2^N-1
// points over [-1/√2, +1/√2] anchored at zero (so a component of 0, as in
// the identity rotation, is exactly 0). Since q and -q are the same rotation, the sign is chosen
// so that the dropped component is positive.
//
// The encoder guarantees idempotence: writing the decoded quaternion again,
// even after its components went through float32, gives the same bits. It
// does so by never leaving the dropped component within 1e-6 of the largest
// of the other three (it moves the largest quantized component one step
// toward zero until it is not), and the reader rejects any encoding that
// breaks this rule, so each rotation has one encoding.
//
// The zero Quat is not usable; call NewQuat.
type Quat struct {
	n     int     // bits per component, 2..20
	steps uint64  // 2^n - 2 intervals over [-1/√2, +1/√2]; index 2^n-1 is unused
	half  uint64  // steps/2, the index of 0
	step  float64 // 2/√2 / steps
	inv   float64 // 1/step
	mid   float64 // half + 0.5: Pack's quick path adds it
	// sureSq and sureAdd make the test in surelyClear (see there).
	sureSq, sureAdd float64
}

const (
	// invSqrt2 is 1/√2, the largest magnitude the three smallest components
	// of a unit quaternion can have.
	invSqrt2 = math.Sqrt2 / 2
	// quatMargin is how much the rebuilt component must exceed the other
	// three by, so that float32 rounding cannot change which one is largest.
	quatMargin = 1e-6
	// quatNormTolerance is how far from 1 the squared norm of an input may
	// be; such inputs are normalized first.
	quatNormTolerance = 1e-3
	// DefaultQuatBits is the default number of bits per component.
	DefaultQuatBits = 9
)

// errZeroQuat is returned by the methods of a Quat not made by NewQuat.
var errZeroQuat = errors.New("bitwire: Quat used without NewQuat")

// NewQuat returns the smallest-three coding with n bits per component; n
// must be in 2..20 (9 is the default: 29 bits in all).
func NewQuat(n int) (Quat, error) {
	if n < 2 || n > 20 {
		return Quat{}, errWidth("quaternion component bit count", n, 2, 20)
	}
	steps := uint64(1)<<uint(n) - 2
	step := 2 * invSqrt2 / float64(steps)
	h := float64(step / 2 * (1 + 1e-9)) // the most a component moves when quantized; float64: not fused into sureAdd's sum
	return Quat{n: n, steps: steps, half: steps / 2, step: step, inv: 1 / step, mid: float64(steps/2) + 0.5,
		// float64(...) keeps each product rounded alone: no fused multiply-add.
		sureSq: float64(2*math.Sqrt(3)*h) + float64(3*h*h) + 1e-12, sureAdd: h + quatMargin + 1e-12}, nil
}

// Bits returns the size of a coded quaternion: 2 + 3n.
func (q Quat) Bits() int { return 2 + 3*q.n }

// Write writes v = (x, y, z, w) as WriteBits(Pack(v), Bits()).
func (q Quat) Write(w *bits.Writer, v [4]float64) error {
	u, err := q.Pack(v)
	if err != nil {
		return err
	}
	w.WriteBits(u, q.Bits())
	return nil
}

// Read reads a quaternion written by Write; see Unpack for its errors.
func (q Quat) Read(r *bits.Reader) ([4]float64, error) {
	u, err := r.ReadBits(q.Bits())
	if err != nil {
		return [4]float64{}, err
	}
	return q.Unpack(u)
}

// Quantize returns what Read returns after Write(v): the unit quaternion v,
// or -v, on the grid.
func (q Quat) Quantize(v [4]float64) ([4]float64, error) {
	u, err := q.Pack(v)
	if err != nil {
		return [4]float64{}, err
	}
	return q.Unpack(u)
}

// Pack returns the Bits() bits that Write writes for v, as one integer: the
// index of the dropped component (0 = x, 1 = y, 2 = z, 3 = w) in the low 2
// bits, then the quantization indices a, b, c of the other three in
// increasing component order, n bits each.
//
// A component that is NaN or infinite, or a squared norm further than 1e-3
// from 1, is ErrInvalidValue. v is normalized before it is quantized.
func (q Quat) Pack(v [4]float64) (uint64, error) {
	if q.n == 0 {
		return 0, errZeroQuat
	}
	// A NaN or infinite component makes norm2 NaN or +Inf.
	// float64(...) keeps each product rounded alone: no fused multiply-add.
	norm2 := float64(v[0]*v[0]) + float64(v[1]*v[1]) + float64(v[2]*v[2]) + float64(v[3]*v[3])
	d := norm2 - 1
	if !(math.Abs(d) <= quatNormTolerance) {
		return 0, ErrInvalidValue
	}
	// The component of largest magnitude (the lowest index on ties), found
	// without branches, whose outcome would be random for random
	// rotations: the bits of non-negative floats order as the floats do,
	// and each step compiles to conditional moves.
	b0, b1, b2, b3 := math.Float64bits(v[0])&^signBit, math.Float64bits(v[1])&^signBit,
		math.Float64bits(v[2])&^signBit, math.Float64bits(v[3])&^signBit
	m, bb := 0, b0
	if b1 > bb {
		m = 1
	}
	bb = max(bb, b1)
	if b2 > bb {
		m = 2
	}
	bb = max(bb, b2)
	if b3 > bb {
		m = 3
	}
	bb = max(bb, b3)
	m &= 3
	big := math.Float64frombits(bb)
	if math.Abs(d) <= quatQuickNorm {
		// The quick path, for inputs as unit as float32 makes them: the
		// exact path's square root, division and four dependent steps a
		// component replaced by a short series and two steps. It gives the
		// exact path's indices, or gives up: its results differ from the
		// exact ones by under 1e-9 of a step, so only a rounding within
		// roundDivGuard of a boundary could tell them apart, and there it
		// gives up.
		// float64(...) keeps each product rounded alone: no fused multiply-add.
		s := 1 + float64(d*(float64(0.375*d)-0.5)) // 1/sqrt(1+d), to 0.32·|d|³ < 3e-19
		k := math.Float64frombits(math.Float64bits(s*q.inv) ^ math.Float64bits(v[m])&signBit)
		o := &quatOthers[m]
		x, y, z := v[o[0]&3], v[o[1]&3], v[o[2]&3]
		i0, ok0 := q.quickIndex(float64(x*k) + q.mid)
		i1, ok1 := q.quickIndex(float64(y*k) + q.mid)
		i2, ok2 := q.quickIndex(float64(z*k) + q.mid)
		if ok0 && ok1 && ok2 && q.surelyClear(big*s, secondOf(x, y, z)*s) {
			return q.join(m, [3]uint64{i0, i1, i2}), nil
		}
	}
	return q.packExact(v, norm2, m, big)
}

// quatQuickNorm is how far from 1 a squared norm may be for Pack's quick
// path: 2^-20, ten times what float32 rounding leaves in a unit quaternion.
const quatQuickNorm = 1.0 / (1 << 20)

// signBit is the sign bit of a float64.
const signBit = 1 << 63

// secondOf returns the largest magnitude of three components.
func secondOf(x, y, z float64) float64 {
	return math.Float64frombits(max(math.Float64bits(x)&^signBit, math.Float64bits(y)&^signBit, math.Float64bits(z)&^signBit))
}

// quickIndex rounds y = c/step + half + 0.5 (c the component) down to the
// grid index, capped at steps, and reports whether y lies clear of the
// rounding boundaries by roundDivGuard (when it does not, the exact path
// decides). A y below 1 is index 0, as index has it.
func (q *Quat) quickIndex(y float64) (uint64, bool) {
	k, ok := truncClear(y)
	return min(uint64(max(k, 0)), q.steps), ok
}

// packExact is Pack by the definition: normalize with a square root and a
// division, quantize each component by index, and enforce idempotence. m
// is the component of largest magnitude, big that magnitude.
//
//go:noinline
func (q *Quat) packExact(v [4]float64, norm2 float64, m int, big float64) (uint64, error) {
	// Scale to unit length, negated when the dropped component is
	// negative so that it is positive.
	scale := math.Float64frombits(math.Float64bits(1/math.Sqrt(norm2)) ^ math.Float64bits(v[m])&signBit)
	o := &quatOthers[m] // the other three, in component order
	x, y, z := v[o[0]&3], v[o[1]&3], v[o[2]&3]
	idx := [3]uint64{q.index(x * scale), q.index(y * scale), q.index(z * scale)}
	// Most rotations pass this check, made before quantization, which
	// saves the dependent chain of the exact one below.
	if q.surelyClear(big*math.Abs(scale), secondOf(x, y, z)*math.Abs(scale)) {
		return q.join(m, idx), nil
	}
	// Idempotence: the rebuilt component must stay clearly the largest.
	// Every pass moves one index one step toward the middle of the grid
	// and none passes it (the middle is never the largest while the check
	// fails), so the loop ends within 3*steps/2 passes; the bound is there
	// only to make that visible.
	for pass := uint64(0); ; pass++ {
		if q.clear(idx) {
			break
		}
		if pass > 3*q.steps {
			return 0, ErrInvalidValue
		}
		j := 0
		for i := 1; i < 3; i++ {
			if q.dist(idx[i]) > q.dist(idx[j]) {
				j = i
			}
		}
		if 2*idx[j] > q.steps {
			idx[j]--
		} else {
			idx[j]++
		}
	}
	return q.join(m, idx), nil
}

// join packs the dropped component's index m and the three indices.
func (q *Quat) join(m int, idx [3]uint64) uint64 {
	n := uint(q.n) & 31 // at most 20
	return uint64(m) | idx[0]<<2 | idx[1]<<(2+n) | idx[2]<<(2+2*n)
}

// surelyClear reports, before quantization, that clear will hold for the
// quantized components of a unit quaternion whose dropped component has
// magnitude big and whose next largest has magnitude second. Quantization
// moves each of the three by at most h (half a step): their squares then
// sum to at most 1 - big² + 2√3·h + 3h² (|a|+|b|+|c| <= √3), so the
// rebuilt component is at least sqrt(big² - sureSq), while the largest of
// the three is at most second + h. sureSq and sureAdd carry 1e-12 more for
// floating-point rounding, orders of magnitude more than it can be. When
// this fails, clear decides.
func (q *Quat) surelyClear(big, second float64) bool {
	t := float64(second) + q.sureAdd // second is a product once inlined: float64 keeps it from fusing
	// float64(...) keeps the product rounded alone: no fused multiply-add.
	return float64(big*big)-q.sureSq >= t*t
}

// Unpack decodes Bits() bits produced by Pack. Bits set above Bits() are
// ErrMalformed, and so is a component index of 2^N-1, above the grid. Three components whose squares sum to more than 1 are
// ErrInvalidValue; a rebuilt component that is not larger than each of the
// others by the encoder's margin of 1e-6 is ErrMalformed, since Pack never
// writes it.
func (q Quat) Unpack(u uint64) ([4]float64, error) {
	// rebuild's rule, computed without its branches and calls: the
	// largest magnitude of three grid points (never NaN) as an integer
	// max of their bits, and a NaN d (squares summing above 1) failing
	// the comparison like a short one.
	var out [4]float64
	n := uint(q.n) & 31
	if n == 0 {
		return out, errZeroQuat
	}
	if u>>((2+3*n)&63) != 0 {
		return out, ErrMalformed
	}
	mask := uint64(1)<<n - 1
	i0, i1, i2 := u>>2&mask, u>>((2+n)&63)&mask, u>>((2+2*n)&63)&mask
	if max(i0, i1, i2) > q.steps {
		return out, ErrMalformed
	}
	// value's arithmetic, on locals (value's copy of q, three times,
	// cost more than the arithmetic).
	half, step := int64(q.half), q.step
	a := float64(int64(i0)-half) * step
	b := float64(int64(i1)-half) * step
	c := float64(int64(i2)-half) * step
	s := 1 - float64(a*a) - float64(b*b) - float64(c*c) // float64: no fused multiply-add
	d := math.Sqrt(s)
	big := math.Float64frombits(max(math.Float64bits(a)&^signBit, math.Float64bits(b)&^signBit, math.Float64bits(c)&^signBit))
	if !(d >= big+quatMargin) {
		if s < 0 {
			return out, ErrInvalidValue
		}
		return out, ErrMalformed
	}
	m := u & 3
	o := &quatOthers[m]
	out[o[0]&3], out[o[1]&3], out[o[2]&3], out[m] = a, b, c, d
	return out, nil
}

// Predict returns the packed quaternion that repeats the rotation from
// older to base once more, base·older⁻¹·base, from their packings: what a
// value tagged pred is predicted at. It is computed as 2(r0·r1)r1 − r0,
// the same rotation for unit quaternions and the same for either sign of
// r0 or r1, where r0 and r1 are Unpack's results for older and base, the
// dot product is summed in component order (x, y, z, w) and every product
// and sum is rounded to float64 on its own (no fused multiply-add), and
// the result is packed by Pack. Those are IEEE 754 operations, rounded
// the same in every language, so every decoder that follows this
// arithmetic predicts the same code. Its errors are Unpack's for either
// packing.
func (q Quat) Predict(older, base uint64) (uint64, error) {
	r0, err := q.Unpack(older)
	if err != nil {
		return 0, err
	}
	r1, err := q.Unpack(base)
	if err != nil {
		return 0, err
	}
	// float64(...) keeps each product rounded alone: no fused multiply-add.
	t2 := 2 * (float64(r0[0]*r1[0]) + float64(r0[1]*r1[1]) + float64(r0[2]*r1[2]) + float64(r0[3]*r1[3]))
	var p [4]float64
	for i := range p {
		p[i] = float64(t2*r1[i]) - r0[i]
	}
	return q.Pack(p)
}

// quatOthers lists, for each dropped component, the other three in order.
var quatOthers = [4][3]uint8{{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}}

// index quantizes a component to the grid over [-1/√2, +1/√2]:
// floor(c/step + 0.5) + steps/2, limited to 0..steps (clamping the rounding
// overshoot of components right at the bound). The product by inv serves
// when it is clear of a rounding boundary (see roundDiv).
func (q *Quat) index(c float64) uint64 {
	k, ok := truncClear(float64(c*q.inv) + q.mid) // float64: no fused multiply-add
	if !ok || k < 0 {
		k = int64(math.Floor(c/q.step+0.5)) + int64(q.half)
	}
	return uint64(min(max(k, 0), int64(q.steps)))
}

// value is the grid point of index i: (i - steps/2)·step, exactly 0 for
// the middle index and exactly symmetric about it.
func (q *Quat) value(i uint64) float64 { return float64(int64(i)-int64(q.half)) * q.step } // |i| < 2^20: exact either way

// dist is the magnitude of the grid point of index i, in half steps, as an
// integer so comparisons are exact: |2i - steps|.
func (q *Quat) dist(i uint64) uint64 {
	if 2*i > q.steps {
		return 2*i - q.steps
	}
	return q.steps - 2*i
}

// clear reports what rebuild's second result does, without its square root
// when the answer is far from the boundary: sqrt(s) >= t is s >= t*t for
// non-negative s and t; near equality, where rounding could tell them
// apart, it asks rebuild, which the reader uses.
func (q *Quat) clear(idx [3]uint64) bool {
	a, b, c := q.value(idx[0]), q.value(idx[1]), q.value(idx[2])
	s := 1 - float64(a*a) - float64(b*b) - float64(c*c) // float64: no fused multiply-add
	// The largest magnitude from the integer distances to the middle of
	// the grid (conditional moves, no float max): |value(i)| is dist(i)
	// half steps, give or take an ulp, far inside the band below.
	d := max(q.dist(idx[0]), q.dist(idx[1]), q.dist(idx[2]))
	t := float64(float64(int64(d))*(q.step/2)) + quatMargin // float64: no fused multiply-add
	switch tt := t * t; {
	case s > tt*(1+1e-9):
		return true
	case s < tt*(1-1e-9):
		return false
	}
	_, ok := q.rebuild(idx)
	return ok
}

// rebuild returns the dropped component sqrt(1-a²-b²-c²) of the
// quantization indices idx (NaN when the squares sum above 1) and whether it
// exceeds each of |a|, |b|, |c| by at least the margin. The encoder and the
// decoder share it, so they agree to the last bit on which encodings are
// valid.
func (q *Quat) rebuild(idx [3]uint64) (float64, bool) {
	a, b, c := q.value(idx[0]), q.value(idx[1]), q.value(idx[2])
	s := 1 - float64(a*a) - float64(b*b) - float64(c*c) // float64: no fused multiply-add
	if s < 0 {
		return math.NaN(), false
	}
	d := math.Sqrt(s)
	big := max(math.Abs(a), math.Abs(b), math.Abs(c)) // grid points: never NaN
	return d, d >= big+quatMargin
}

// QuatGrid holds, for every component index of a Quat of up to
// MaxQuatGridBits bits a component, what Unpack computes from it: the
// grid value (as a float64 and rounded to a float32), its square, and the
// least the rebuilt component must reach to exceed it by the encoder's
// margin. A decoder reads three entries instead of computing them; the
// results are Unpack's, bit for bit. Tables are built once per width and
// shared; they are never changed.
type QuatGrid struct {
	n     uint
	steps uint64
	// Pack32's terms, 2^32 times the Quat's: 1/step and steps/2 + 0.5 (a
	// component's index is the floor of c/step + steps/2 + 0.5).
	inv32, mid32 float64
	e            []quatEntry // 2^n entries; the last, off the grid, can never be valid
	mask         uint64      // 2^n - 1
	sh1, sh2     uint8       // 2+n and 2+2n: where Pack32 puts the second and third indexes
	tab          *[1 << MaxQuatGridBits]quatEntry
}

type quatEntry struct {
	val float64 // (i - steps/2)·step, as Unpack computes it
	sq  float64 // float64(val*val)
	thr uint64  // the bits of |val| + 1e-6 (+Inf off the grid): positive floats order as their bits
	f32 float32 // float32(val)
}

// MaxQuatGridBits is the widest component a QuatGrid is built for: 2^10
// entries of 32 bytes.
const MaxQuatGridBits = 10

var quatGrids [MaxQuatGridBits + 1]struct {
	once sync.Once
	t    *QuatGrid
}

// Grid returns the shared table of q's width, or nil when q is wider than
// MaxQuatGridBits (or not made by NewQuat).
func (q *Quat) Grid() *QuatGrid {
	n := q.n
	if n < 2 || n > MaxQuatGridBits {
		return nil
	}
	slot := &quatGrids[n]
	slot.once.Do(func() {
		tab := new([1 << MaxQuatGridBits]quatEntry)
		t := &QuatGrid{n: uint(n), steps: q.steps, inv32: q.inv * (1 << 32), mid32: q.mid * (1 << 32), e: tab[:1<<uint(n)], mask: 1<<uint(n) - 1, tab: tab,
			sh1: uint8(2 + n), sh2: uint8(2 + 2*n)}
		for i := range tab {
			e := &tab[i]
			e.thr = math.Float64bits(math.Inf(1))
			if uint64(i) <= q.steps {
				e.val = q.value(uint64(i))
				e.sq = float64(e.val * e.val)
				e.thr = math.Float64bits(math.Abs(e.val) + quatMargin)
			}
			e.f32 = float32(e.val)
		}
		slot.t = t
	})
	return slot.t
}

// Unpack decodes the 2+3n bits u (bits above them ignored) as Quat.Unpack
// does: it returns the dropped component's index m, the three other
// entries' indices (in component order) and the rebuilt component d, and
// ok exactly when Quat.Unpack returns no error. Read the values with Value
// or Value32.
func (t *QuatGrid) Unpack(u uint64) (m uint64, a, b, c uint64, d float64, ok bool) {
	n := t.n & 15
	mask := uint64(1)<<n - 1
	e := t.e[:mask+1]
	a, b, c = u>>2&mask, u>>(2+n)&mask, u>>(2+2*n)&mask
	ea, eb, ec := &e[a], &e[b], &e[c]
	s := 1 - ea.sq - eb.sq - ec.sq
	d = math.Sqrt(s) // NaN for s < 0: fails the comparison
	return u & 3, a, b, c, d, d >= math.Float64frombits(max(ea.thr, eb.thr, ec.thr))
}

// Rebuild32 is Unpack of the component indices i0, i1 and i2 (the n-bit
// fields above the 2-bit index of the dropped component) with the values
// rounded to float32, as a decoder into float32 components stores them:
// the three values, the rebuilt component, and ok exactly when Unpack
// returns no error. It is small enough to be inlined.
func (t *QuatGrid) Rebuild32(i0, i1, i2 uint64) (a, b, c, d float32, ok bool) {
	const k = 1<<MaxQuatGridBits - 1 // every entry above the grid is invalid
	e := t.tab
	ea, eb, ec := &e[i0&k], &e[i1&k], &e[i2&k]
	dd := math.Sqrt(1 - ea.sq - eb.sq - ec.sq) // NaN below 0: fails the comparison
	return ea.f32, eb.f32, ec.f32, float32(dd), dd >= math.Float64frombits(max(ea.thr, eb.thr, ec.thr))
}

// Pack32 is Quat.Pack of the float32 components x, y, z, w for the inputs
// whose result it can be sure of, with ok true; for the others (a squared
// norm further than 1e-3 from 1, NaN or infinite, which Pack refuses; a
// component whose scaled value lies within 2^-19 of a rounding boundary;
// indices that break the decoder's margin, which Pack then moves) it
// returns ok false, and the caller asks Pack. Its arithmetic:
//
//   - the squared norm is Pack's, to the bit (float32 squares are exact in a
//     float64, and the sum is taken in Pack's order), so its test is Pack's;
//   - the dropped component is the largest magnitude, lowest index on ties,
//     by integer comparisons of the float32 magnitudes' bits (which order as
//     the magnitudes do, so as the float64s Pack compares), strictly greater
//     to replace, which compile to conditional moves;
//   - each index is the floor of y = c·k + mid, k = ±inv/√norm2 (one square
//     root, one division), computed 2^32 times larger (a power of two:
//     the same roundings), so that the integer part of 2^32·y is the index
//     and its low 32 bits the fraction. y is within a few ulps of the real
//     R = c/(step·√norm2) + mid, under 1e-12 for R below 2^10, and Pack
//     returns floor(R) too wherever R lies further than that from an
//     integer (its quick path only where its own guard of 1e-6 holds, its
//     exact path by a product or a division in float64). So where y's
//     fraction lies 2^-19 or more from 0 and from 1, both are floor(R);
//   - Pack keeps these indices exactly when the decoder accepts them (its
//     surelyClear and clear are conservative forms of the decoder's rule,
//     which they fall back on), and the check here is the decoder's rule,
//     read from the tables as Unpack computes it (an index off the grid
//     has an infinite threshold).
//
// TestPack32MatchesPack checks it against Pack on every code of the narrow
// widths, random rotations, ties, near-zero components and bad inputs.
func (t *QuatGrid) Pack32(x, y, z, w float32) (u uint64, ok bool) {
	c := [4]float64{float64(x), float64(y), float64(z), float64(w)}
	// float64(...) keeps each product rounded alone: no fused multiply-add.
	norm2 := float64(c[0]*c[0]) + float64(c[1]*c[1]) + float64(c[2]*c[2]) + float64(c[3]*c[3])
	const sign32 = 1 << 31
	b0, b1, b2, b3 := math.Float32bits(x)&^sign32, math.Float32bits(y)&^sign32, math.Float32bits(z)&^sign32, math.Float32bits(w)&^sign32
	m := uint64(0)
	if b1 > b0 {
		m = 1
	}
	big := max(b0, b1)
	if b2 > big {
		m = 2
	}
	big = max(big, b2)
	if b3 > big {
		m = 3
	}
	// ±2^32·inv/√norm2, negative when the dropped component is, so that it
	// is positive after scaling.
	k := math.Float64frombits(math.Float64bits(t.inv32/math.Sqrt(norm2)) ^ math.Float64bits(c[m])&signBit)
	o := &quatOthers[m]
	// 2^32·y, truncated: y is positive when norm2 passes (a component
	// other than the largest is at most 1/√2 of the unit, y at least
	// about 1/2), so truncation is the floor. A NaN's or a far value's
	// garbage is refused below all the same.
	ya := int64(float64(c[o[0]&3]*k) + t.mid32)
	yb := int64(float64(c[o[1]&3]*k) + t.mid32)
	yc := int64(float64(c[o[2]&3]*k) + t.mid32)
	// The fractions less the guard, as uint32s: in range exactly when at
	// most 2^32 - 2·guard.
	const guard = 1 << 13 // 2^-19 in units of 2^-32
	frac := max(uint32(ya)-guard, uint32(yb)-guard, uint32(yc)-guard)
	const km = 1<<MaxQuatGridBits - 1 // keeps any index inside the table
	a, b, cc := uint64(ya>>32)&km, uint64(yb>>32)&km, uint64(yc>>32)&km
	e := t.tab
	ea, eb, ec := &e[a], &e[b], &e[cc]
	d := math.Sqrt(1 - ea.sq - eb.sq - ec.sq) // NaN below 0: fails the comparison
	u = m | a<<2 | b<<(t.sh1&63) | cc<<(t.sh2&63)
	ok = math.Abs(norm2-1) <= quatNormTolerance && frac <= 1<<32-2*guard &&
		d >= math.Float64frombits(max(ea.thr, eb.thr, ec.thr))
	return u, ok
}

// Value returns the grid value of component index i as Quat.Unpack does.
func (t *QuatGrid) Value(i uint64) float64 { return t.e[i&(uint64(len(t.e))-1)].val }

// Value32 returns float32(Value(i)).
func (t *QuatGrid) Value32(i uint64) float32 { return t.e[i&(uint64(len(t.e))-1)].f32 }

// Others returns the components other than the dropped one m (0..3), in
// increasing order: where Unpack's a, b and c go.
func (t *QuatGrid) Others(m uint64) *[3]uint8 { return &quatOthers[m&3] }
