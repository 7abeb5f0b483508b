package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// bitlen on an integer (the default coding of an integer without bits=N):
// the index of its highest set bit in a prefix of width bits, then the bits
// below it; signed values carry a sign bit under the message's "any
// negative" flag. fixed codes its step count the same way.
//
// Adaptive bit-length integers (bitlen and fixed codings) and their groups:
// the elements of a slice or array, or struct fields sharing a group name,
// which share one bit length when that is shorter. Signed values depend on
// the message's "any negative" flag.

var bitlenCoder = coder{
	name:    "bitlen",
	tag:     true,
	fits:    isInt,
	fill:    fillBitlen,
	minBits: func(n *node) int { return n.n + 1 },
	maxBits: func(n *node) int {
		sign := 0
		if n.mem.signed() {
			sign = 1
		}
		return sign + n.n + n.mem.sizeBits() - 1
	},
	key:    func(n *node, p unsafe.Pointer) (uint64, error) { return loadInt(p, n.mem), nil },
	signed: func(n *node) bool { return n.mem.signed() },
	group:  true,
	flat: func(n *node) flatCode {
		if n.mem.signed() {
			return flatNone // its sign flag cannot be taken back by a rewind
		}
		return flatBitlenU
	},
	schema: func(n *node, ns *NodeSchema) {
		ns.Type = memName(n.mem)
		ns.Bitlen = &BitlenParams{Width: n.n}
	},
	schemaOK: func(ns *NodeSchema) bool { return ns.Bitlen != nil },
	hash:     func(f *fpHasher, ns *NodeSchema) { f.u64(uint64(ns.Bitlen.Width)) },
	describe: func(ns *NodeSchema) string {
		return fmt.Sprintf("width=%d signed=%v", ns.Bitlen.Width, strings.HasPrefix(ns.Type, "int"))
	},
}

// fillBitlen compiles bitlen, named by the tag (which may give it a group)
// or the default coding of an integer.
func fillBitlen(nd *node, path string, _ reflect.Type, s spec, what string) error {
	nd.n = fields.BitlenWidth(nd.mem.sizeBits())
	if s.coding == cBitlen {
		return s.only(path, what, "group", "id")
	}
	if err := s.only(path, what, "id", "clamp", "dmin"); err != nil {
		return err
	}
	return s.reject(path, what+" (default bitlen coding)", "clamp", "dmin")
}

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

func (e *encoder) encInt(n *node, p unsafe.Pointer) error {
	neg, mag, err := intValue(n, p)
	if err != nil {
		return err
	}
	if neg && !e.neg {
		if e.flagged {
			return errNeedSign // written 0 already: the message starts again
		}
		e.neg = true // the flag comes next, before this value: it is written 1
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
		if !e.flagged && !e.neg && s.anyNeg(count) {
			e.neg = true // the flag is written here, before its first value: 1
		}
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

// anyNeg reports whether one of the first count members of s is negative (a member whose value
// is in error is not: the group's loop reports it).
func (s *seq) anyNeg(count int) bool {
	for i := 0; i < count; i++ {
		if neg, _, err := intValue(s.at(i)); err == nil && neg {
			return true
		}
	}
	return false
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
