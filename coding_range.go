package bitwire

import (
	"fmt"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// range,min=A,max=B on an integer: v-A in BitsRequired(B-A) bits; with
// clamp, values outside A..B are clamped to it.

var rangeCoder = coder{
	name:  "range",
	tag:   true,
	fits:  isInt,
	fill:  fillRange,
	width: (*node).rangeBits,
	key: func(n *node, p unsafe.Pointer) (uint64, error) {
		x := loadInt(p, n.mem)
		if n.clamp {
			if n.mem.signed() {
				return uint64(n.irng.Clamp(int64(x))), nil
			}
			return n.urng.Clamp(x), nil
		}
		return x, nil
	},
	storeKey: func(n *node, p unsafe.Pointer, k uint64) error {
		if n.mem.signed() {
			if int64(k) < n.irng.Min() || int64(k) > n.irng.Max() {
				return fmt.Errorf("%w: %d outside %d..%d", ErrOutOfRange, int64(k), n.irng.Min(), n.irng.Max())
			}
		} else if k < n.urng.Min() || k > n.urng.Max() {
			return fmt.Errorf("%w: %d outside %d..%d", ErrOutOfRange, k, n.urng.Min(), n.urng.Max())
		}
		storeInt(p, n.mem, k)
		return nil
	},
	step:    unitStep,
	predict: predictLeaf,
	keyBounds: func(n *node) (uint64, uint64, bool) {
		if n.mem.signed() {
			return uint64(n.irng.Min()), uint64(n.irng.Max()), true
		}
		return n.urng.Min(), n.urng.Max(), false
	},
	flat: func(n *node) flatCode {
		if !n.clamp {
			return flatRangeInt
		}
		return flatNode
	},
	schema: func(n *node, ns *NodeSchema) {
		ns.Type, ns.Clamp = memName(n.mem), n.clamp
		if n.mem.signed() {
			ns.Range = &RangeParams{Min: strconv.FormatInt(n.irng.Min(), 10), Max: strconv.FormatInt(n.irng.Max(), 10), Bits: n.irng.Bits()}
		} else {
			ns.Range = &RangeParams{Min: strconv.FormatUint(n.urng.Min(), 10), Max: strconv.FormatUint(n.urng.Max(), 10), Bits: n.urng.Bits()}
		}
	},
	schemaOK: func(ns *NodeSchema) bool { return ns.Range != nil },
	hash: func(f *fpHasher, ns *NodeSchema) {
		f.u64(parseBound(ns.Range.Min, ns.Type))
		f.u64(parseBound(ns.Range.Max, ns.Type))
	},
	describe: func(ns *NodeSchema) string { return fmt.Sprintf("min=%s max=%s", ns.Range.Min, ns.Range.Max) },
}

// rangeSpan returns a range node's min as a word (a signed min as its
// two's complement) and its max - min: a value v is coded as v - lo, and is
// in range when that is at most span, for signed and unsigned types alike.
func (n *node) rangeSpan() (lo, span uint64) {
	if n.mem.signed() {
		return uint64(n.irng.Min()), uint64(n.irng.Max()) - uint64(n.irng.Min())
	}
	return n.urng.Min(), n.urng.Max() - n.urng.Min()
}

// rangeBits returns a range node's width.
func (n *node) rangeBits() int {
	if n.mem.signed() {
		return n.irng.Bits()
	}
	return n.urng.Bits()
}

func fillRange(nd *node, path string, t reflect.Type, s spec, what string) error {
	if err := s.only(path, what, "min", "max", "dmin", "id", "clamp"); err != nil {
		return err
	}
	if !s.hasMin || !s.hasMax {
		return badTag(path, "range needs both min and max")
	}
	size, signed := nd.mem.sizeBits(), nd.mem.signed()
	lo, ulo, err := parseIntBound("min", s.min, !signed)
	if err != nil {
		return badTag(path, "%v", err)
	}
	hi, uhi, err := parseIntBound("max", s.max, !signed)
	if err != nil {
		return badTag(path, "%v", err)
	}
	if signed {
		if lo > hi {
			return badTag(path, "min=%s must not be above max=%s", s.min, s.max)
		}
		if size < 64 && (lo < -1<<(size-1) || hi > 1<<(size-1)-1) {
			return badTag(path, "range %s..%s does not fit %s", s.min, s.max, t)
		}
		nd.irng, err = fields.NewIntRange(lo, hi)
	} else {
		if ulo > uhi {
			return badTag(path, "min=%s must not be above max=%s", s.min, s.max)
		}
		if size < 64 && uhi > 1<<size-1 {
			return badTag(path, "range %s..%s does not fit %s", s.min, s.max, t)
		}
		nd.urng, err = fields.NewUintRange(ulo, uhi)
	}
	if err != nil {
		return badTag(path, "%v", err)
	}
	return nil
}

func (e *encoder) encRange(n *node, p unsafe.Pointer) error {
	x := loadInt(p, n.mem)
	if n.mem.signed() {
		v := int64(x)
		if n.clamp {
			v = n.irng.Clamp(v)
		}
		return n.irng.Write(e.w, v)
	}
	if n.clamp {
		x = n.urng.Clamp(x)
	}
	return n.urng.Write(e.w, x)
}

func (d *decoder) decRange(n *node, p unsafe.Pointer) error {
	if n.mem.signed() {
		v, err := n.irng.Read(d.r)
		return storeIntErr(p, n.mem, uint64(v), err)
	}
	v, err := n.urng.Read(d.r)
	return storeIntErr(p, n.mem, v, err)
}
