package bitwire

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// Adaptive bit-length integers (bitlen and fixed codings) and their groups:
// the elements of a slice or array, or struct fields sharing a group name,
// which share one bit length when that is shorter. Signed values depend on
// the message's "any negative" flag.

// isSigned reports whether an adaptive value carries a sign bit under the
// message's flag.
func isSigned(n *node) bool { return n.sgn }

// intValue returns the sign and magnitude of a bitlen or fixed value.
func intValue(n *node, p unsafe.Pointer) (neg bool, mag uint64, err error) {
	if n.code == cFixed {
		i, err := n.fx.ToInt(loadFloat(p, n.mem))
		if err != nil {
			return false, 0, err
		}
		if !fixedExact(n, i) {
			return false, 0, fmt.Errorf("%w: %d steps of %g are beyond the precision of %s", ErrOutOfRange, i, n.fx.Prec(), n.typ)
		}
		neg, mag = fields.Magnitude(i)
		return neg, mag, nil
	}
	x := loadInt(p, n.mem)
	if n.mem.signed() {
		neg, mag = fields.Magnitude(int64(x))
		return neg, mag, nil
	}
	return false, x, nil
}

// storeSignMag stores a decoded sign and magnitude into a bitlen or fixed
// value.
func storeSignMag(n *node, p unsafe.Pointer, neg bool, mag uint64) error {
	if neg && mag == 0 {
		return fmt.Errorf("%w: negative zero", ErrMalformed)
	}
	var v uint64
	switch {
	case neg:
		if mag > 1<<63 {
			return fmt.Errorf("%w: -%d does not fit int64", ErrOutOfRange, mag)
		}
		v = -mag
	case isSigned(n) && mag > math.MaxInt64:
		return fmt.Errorf("%w: %d does not fit int64", ErrOutOfRange, mag)
	default:
		v = mag
	}
	if n.code == cFixed {
		if !fixedExact(n, int64(v)) {
			return fmt.Errorf("%w: %d steps of %g are beyond the precision of %s", ErrOutOfRange, int64(v), n.fx.Prec(), n.typ)
		}
		storeFloat(p, n.mem, n.fx.FromInt(int64(v)))
		return nil
	}
	if !fitsInt(n.mem, v) {
		return fmt.Errorf("%w: value does not fit %s", ErrOutOfRange, n.typ)
	}
	storeInt(p, n.mem, v)
	return nil
}

// fixedExact reports whether i steps of a fixed-point field survive a trip
// through the field's float type: ToInt(FromInt(i)) == i. Below 2^22 steps
// (float32) or 2^50 (float64) they always do, as long as i·prec stays a
// finite normal number of the type: prec at least the smallest normal
// (2^-126, 2^-1022) and below 1e30 (float32) or 1e290 (float64), where
// 2^22·prec and 2^50·prec are still far from the largest finite value.
// Otherwise, and beyond those counts, the encoder and the decoder both
// refuse the counts that do not survive (ErrOutOfRange): an i·prec that
// overflows to ±Inf, or lands among the subnormals where neighbouring counts
// share one value. So a decoded value always encodes to the same bits and
// Quantize is idempotent.
func fixedExact(n *node, i int64) bool {
	lim, lo, hi := int64(1)<<50, 0x1p-1022, 1e290
	if n.mem == mF32 {
		lim, lo, hi = 1<<22, 0x1p-126, 1e30
	}
	if p := n.fx.Prec(); i > -lim && i < lim && p >= lo && p < hi {
		return true
	}
	f := n.fx.FromInt(i)
	if n.mem == mF32 {
		f = float64(float32(f))
	}
	j, err := n.fx.ToInt(f)
	return err == nil && j == i
}

func (e *encoder) encInt(n *node, p unsafe.Pointer) error {
	neg, mag, err := intValue(n, p)
	if err != nil {
		return err
	}
	if neg && !e.neg {
		return errNeedSign
	}
	if !isSigned(n) {
		fields.WriteBitlen(e.w, mag, n.n)
		return nil
	}
	e.signFlag()
	v := int64(mag) // 2^63 is math.MinInt64, its own negation
	if neg {
		v = -v
	}
	return fields.WriteBitlenInt(e.w, v, n.n, e.neg) // a negative v has e.neg set
}

func (d *decoder) decInt(n *node, p unsafe.Pointer) error {
	neg, mag, err := d.readInt(n)
	if err != nil {
		return err
	}
	return d.storeSignMag(n, p, neg, mag)
}

// readInt reads one individually coded bitlen or fixed value: its sign bit
// (when signed and the message's flag is set), then its magnitude.
func (d *decoder) readInt(n *node) (neg bool, mag uint64, err error) {
	if !isSigned(n) {
		mag, err = fields.ReadBitlen(d.r, n.n)
		return false, mag, err
	}
	if err := d.signFlag(); err != nil {
		return false, 0, err
	}
	v, err := fields.ReadBitlenInt(d.r, n.n, d.neg)
	neg, mag = fields.Magnitude(v)
	return neg, mag, err
}

// storeSignMag stores a decoded value and notes a negative one: a message
// whose flag is set must carry one (see decodeRoot).
func (d *decoder) storeSignMag(n *node, p unsafe.Pointer, neg bool, mag uint64) error {
	if neg {
		d.sawNeg = true
	}
	return storeSignMag(n, p, neg, mag)
}

// seq addresses the members of a group: the elements of an array or slice,
// or the fields of one struct that share a group name.
type seq struct {
	base   unsafe.Pointer
	stride uintptr
	elem   *node
	p      *plan
	idx    []int
}

func (s *seq) at(i int) (*node, unsafe.Pointer) {
	if s.idx != nil {
		f := &s.p.fields[s.idx[i]]
		return f.node, ptrAt(s.base, f.off)
	}
	return s.elem, ptrAt(s.base, uintptr(i)*s.stride)
}

// signed reports whether any member is a signed value.
func (s *seq) signed() bool {
	if s.idx == nil {
		return isSigned(s.elem)
	}
	return s.p.fields[s.idx[0]].grp.signed // computed by the compiler
}

func (s *seq) wrap(err error, i, bit int) error {
	if s.idx != nil {
		return wrapField(err, s.p.fields[s.idx[i]].name, bit)
	}
	return wrapField(err, fmt.Sprintf("[%d]", i), bit)
}

// encGroup writes count values sharing one bit length when that is
// strictly shorter: a mode bit (for two or more values), then either every
// value coded alone, or the shared highest-bit index in width bits and each
// value's sign bit (signed values of a message with the sign flag) and low
// p+1 bits.
func (e *encoder) encGroup(s *seq, count, width int) error {
	if count == 0 {
		return nil
	}
	if count == 1 {
		n, p := s.at(0)
		if err := e.encInt(n, p); err != nil {
			return s.wrap(err, 0, e.w.Len())
		}
		return nil
	}
	if s.signed() {
		e.signFlag()
	}
	// Members that carry a sign bit carry it in both modes, so sign bits
	// do not count on either side of the comparison.
	maxHigh, indiv := 0, 0
	for i := 0; i < count; i++ {
		n, p := s.at(i)
		neg, mag, err := intValue(n, p)
		if err != nil {
			return s.wrap(err, i, e.w.Len())
		}
		if neg && !e.neg {
			return errNeedSign
		}
		indiv += fields.BitlenBits(mag, n.n)
		if h := fields.HighBit(mag); h > maxHigh {
			maxHigh = h
		}
	}
	if !fields.BitlenGroupShared(maxHigh, count, indiv, width, false) {
		e.w.WriteBool(false)
		for i := 0; i < count; i++ {
			n, p := s.at(i)
			if err := e.encInt(n, p); err != nil {
				return s.wrap(err, i, e.w.Len())
			}
		}
		return nil
	}
	e.w.WriteBool(true)
	e.w.WriteBits(uint64(maxHigh), width)
	for i := 0; i < count; i++ {
		n, p := s.at(i)
		neg, mag, _ := intValue(n, p)
		if e.neg && isSigned(n) {
			e.w.WriteBool(neg)
		}
		e.w.WriteBits(mag, maxHigh+1)
	}
	return nil
}

func (d *decoder) decGroup(s *seq, count, width int) error {
	if count == 0 {
		return nil
	}
	shared := false
	if count > 1 && s.signed() {
		if err := d.signFlag(); err != nil {
			return s.wrap(err, 0, d.r.Pos())
		}
	}
	if count > 1 {
		b, err := d.r.ReadBool()
		if err != nil {
			return s.wrap(err, 0, d.r.Pos())
		}
		shared = b
	}
	// The encoder picks the shared mode exactly when it is strictly
	// shorter, with the smallest shared width; anything else is not its
	// output, and is rejected so that every group has one encoding.
	maxHigh, indiv := 0, 0
	if !shared {
		for i := 0; i < count; i++ {
			n, p := s.at(i)
			neg, mag, err := d.readInt(n)
			if err == nil {
				err = d.storeSignMag(n, p, neg, mag)
			}
			if err != nil {
				return s.wrap(err, i, d.r.Pos())
			}
			indiv += fields.BitlenBits(mag, n.n)
			maxHigh = max(maxHigh, fields.HighBit(mag))
		}
		if count > 1 && fields.BitlenGroupShared(maxHigh, count, indiv, width, false) {
			return s.wrap(fmt.Errorf("%w: group coded one by one where a shared length is shorter", ErrMalformed), 0, d.r.Pos())
		}
		return nil
	}
	h, err := d.r.ReadBits(width)
	if err != nil {
		return s.wrap(err, 0, d.r.Pos())
	}
	for i := 0; i < count; i++ {
		n, p := s.at(i)
		neg := false
		if d.neg && isSigned(n) {
			if neg, err = d.r.ReadBool(); err != nil {
				return s.wrap(err, i, d.r.Pos())
			}
		}
		mag, err := d.r.ReadBits(int(h) + 1)
		if err != nil {
			return s.wrap(err, i, d.r.Pos())
		}
		if err := d.storeSignMag(n, p, neg, mag); err != nil {
			return s.wrap(err, i, d.r.Pos())
		}
		indiv += fields.BitlenBits(mag, n.n)
		maxHigh = max(maxHigh, fields.HighBit(mag))
	}
	if maxHigh != int(h) || !fields.BitlenGroupShared(maxHigh, count, indiv, width, false) {
		return s.wrap(fmt.Errorf("%w: shared-length group that is not the shortest coding", ErrMalformed), 0, d.r.Pos())
	}
	return nil
}
