package bitwire

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// bits=N on an integer: N bits, two's complement when signed; with clamp,
// values outside the width are clamped to it.

var bitsCoder = coder{
	name:  "bits",
	fits:  isInt,
	fill:  fillBits,
	width: func(n *node) int { return n.n },
	// The key is the value encBits writes, clamped with clamp: a window's
	// difference and equality are of what the receiver gets.
	key: func(n *node, p unsafe.Pointer) (uint64, error) { return clampBits(n, loadInt(p, n.mem)), nil },
	storeKey: func(n *node, p unsafe.Pointer, k uint64) error {
		if n.mem.signed() {
			if !fields.FitsInt(int64(k), n.n) {
				return fmt.Errorf("%w: %d does not fit %d bits", ErrOutOfRange, int64(k), n.n)
			}
		} else if !fields.FitsUint(k, n.n) {
			return fmt.Errorf("%w: %d does not fit %d bits", ErrOutOfRange, k, n.n)
		}
		storeInt(p, n.mem, k)
		return nil
	},
	step:    unitStep,
	predict: predictLeaf,
	keyBounds: func(n *node) (uint64, uint64, bool) {
		if n.mem.signed() {
			return uint64(int64(-1) << (n.n - 1)), uint64(1)<<(n.n-1) - 1, true
		}
		return 0, ^uint64(0) >> (64 - n.n), false
	},
	flat: flatVia,
	schema: func(n *node, ns *NodeSchema) {
		ns.Type, ns.Clamp = memName(n.mem), n.clamp
		ns.Bits = &BitsParams{Width: n.n}
	},
	schemaOK: func(ns *NodeSchema) bool { return ns.Bits != nil },
	hash:     func(f *fpHasher, ns *NodeSchema) { f.u64(uint64(ns.Bits.Width)) },
	describe: func(ns *NodeSchema) string {
		return fmt.Sprintf("n=%d signed=%v", ns.Bits.Width, strings.HasPrefix(ns.Type, "int"))
	},
}

func fillBits(nd *node, path string, t reflect.Type, s spec, what string) error {
	if err := s.only(path, what, "bits", "dmin", "id", "clamp"); err != nil {
		return err
	}
	if s.bits > nd.mem.sizeBits() {
		return badTag(path, "bits=%d is wider than %s", s.bits, t)
	}
	nd.n = s.bits
	return nil
}

func (e *encoder) encBits(n *node, p unsafe.Pointer) error {
	return e.writeBits(n, loadInt(p, n.mem))
}

// writeBits writes a fixed-width integer, clamped to its width with clamp.
func (e *encoder) writeBits(n *node, x uint64) error {
	x = clampBits(n, x)
	if n.mem.signed() {
		return fields.WriteInt(e.w, int64(x), n.n)
	}
	return fields.WriteUint(e.w, x, n.n)
}

func (d *decoder) decBits(n *node, p unsafe.Pointer) error {
	if n.mem.signed() {
		v, err := fields.ReadInt(d.r, n.n)
		return storeIntErr(p, n.mem, uint64(v), err)
	}
	v, err := fields.ReadUint(d.r, n.n)
	return storeIntErr(p, n.mem, v, err)
}

// clampBits is x (as loadInt gives it) clamped to n's width when n has
// clamp, else x.
func clampBits(n *node, x uint64) uint64 {
	if !n.clamp || n.n >= 64 {
		return x
	}
	if n.mem.signed() {
		return uint64(min(max(int64(x), -1<<(n.n-1)), 1<<(n.n-1)-1))
	}
	return min(x, 1<<n.n-1)
}
