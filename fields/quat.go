package fields

import (
	"errors"
	"math"

	"github.com/bitwire/bitwire/bits"
)

// Quat codes a unit quaternion (a rotation) in the "smallest three" form:
// the 2-bit index of the component of largest magnitude, which is dropped
// and rebuilt by the reader from the unit length, then the other three, in
// increasing component order, each quantized to N bits over
// [-1/√2, +1/√2]. Since q and -q are the same rotation, the sign is chosen
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
	steps uint64  // 2^n - 1 intervals over [-1/√2, +1/√2]
	step  float64 // 2/√2 / steps
	inv   float64 // 1/step
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
	steps := uint64(1)<<uint(n) - 1
	step := 2 * invSqrt2 / float64(steps)
	return Quat{n: n, steps: steps, step: step, inv: 1 / step}, nil
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
	norm2 := v[0]*v[0] + v[1]*v[1] + v[2]*v[2] + v[3]*v[3]
	if !(math.Abs(norm2-1) <= quatNormTolerance) {
		return 0, ErrInvalidValue
	}
	a0, a1, a2, a3 := math.Abs(v[0]), math.Abs(v[1]), math.Abs(v[2]), math.Abs(v[3])
	m, big := 0, a0 // the lowest index wins ties
	if a1 > big {
		m, big = 1, a1
	}
	if a2 > big {
		m, big = 2, a2
	}
	if a3 > big {
		m = 3
	}
	scale := 1 / math.Sqrt(norm2)
	if v[m] < 0 {
		scale = -scale
	}
	var o [3]float64 // the other three, in component order
	switch m {
	case 0:
		o = [3]float64{v[1], v[2], v[3]}
	case 1:
		o = [3]float64{v[0], v[2], v[3]}
	case 2:
		o = [3]float64{v[0], v[1], v[3]}
	default:
		o = [3]float64{v[0], v[1], v[2]}
	}
	idx := [3]uint64{q.index(o[0] * scale), q.index(o[1] * scale), q.index(o[2] * scale)}
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
	n := uint(q.n)
	return uint64(m) | idx[0]<<2 | idx[1]<<(2+n) | idx[2]<<(2+2*n), nil
}

// Unpack decodes Bits() bits produced by Pack. Bits set above Bits() are
// ErrMalformed. Three components whose squares sum to more than 1 are
// ErrInvalidValue; a rebuilt component that is not larger than each of the
// others by the encoder's margin of 1e-6 is ErrMalformed, since Pack never
// writes it.
func (q Quat) Unpack(u uint64) ([4]float64, error) {
	var out [4]float64
	if q.n == 0 {
		return out, errZeroQuat
	}
	if u>>uint(q.Bits()) != 0 {
		return out, ErrMalformed
	}
	m := int(u & 3)
	mask := q.steps
	n := uint(q.n)
	idx := [3]uint64{u >> 2 & mask, u >> (2 + n) & mask, u >> (2 + 2*n) & mask}
	d, ok := q.rebuild(idx)
	if !ok {
		if math.IsNaN(d) {
			return out, ErrInvalidValue
		}
		return out, ErrMalformed
	}
	k := 0
	for i := 0; i < 4; i++ {
		if i == m {
			out[i] = d
		} else {
			out[i] = q.value(idx[k])
			k++
		}
	}
	return out, nil
}

// index quantizes a component to the grid over [-1/√2, +1/√2], clamping
// the rounding overshoot of components right at the bound.
func (q Quat) index(c float64) uint64 {
	x := c + invSqrt2
	if !(x > 0) {
		return 0
	}
	i := roundDiv(x, q.step, q.inv)
	if i > q.steps {
		i = q.steps
	}
	return i
}

// value is the grid point of index i.
func (q Quat) value(i uint64) float64 { return float64(i)*q.step - invSqrt2 }

// dist is the magnitude of the grid point of index i, in half steps, as an
// integer so comparisons are exact: |2i - steps|.
func (q Quat) dist(i uint64) uint64 {
	if 2*i > q.steps {
		return 2*i - q.steps
	}
	return q.steps - 2*i
}

// rebuild returns the dropped component sqrt(1-a²-b²-c²) of the
// quantization indices idx (NaN when the squares sum above 1) and whether it
// exceeds each of |a|, |b|, |c| by at least the margin. The encoder and the
// decoder share it, so they agree to the last bit on which encodings are
// valid.
// clear reports what rebuild's second result does, without its square root
// when the answer is far from the boundary: sqrt(s) >= t is s >= t*t for
// non-negative s and t; near equality, where rounding could tell them
// apart, it asks rebuild, which the reader uses.
func (q Quat) clear(idx [3]uint64) bool {
	a, b, c := q.value(idx[0]), q.value(idx[1]), q.value(idx[2])
	s := 1 - a*a - b*b - c*c
	t := max(math.Abs(a), math.Abs(b), math.Abs(c)) + quatMargin
	switch tt := t * t; {
	case s > tt*(1+1e-9):
		return true
	case s < tt*(1-1e-9):
		return false
	}
	_, ok := q.rebuild(idx)
	return ok
}

func (q Quat) rebuild(idx [3]uint64) (float64, bool) {
	a, b, c := q.value(idx[0]), q.value(idx[1]), q.value(idx[2])
	s := 1 - a*a - b*b - c*c
	if s < 0 {
		return math.NaN(), false
	}
	d := math.Sqrt(s)
	big := max(math.Abs(a), math.Abs(b), math.Abs(c)) // grid points: never NaN
	return d, d >= big+quatMargin
}
