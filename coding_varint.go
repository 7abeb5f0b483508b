package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// varint[,group=G] on an integer: groups of G bits (7 by default), each
// followed by a continuation bit; zigzagged when signed.

var varintCoder = coder{
	name:    "varint",
	tag:     true,
	fits:    isInt,
	fill:    fillVarint,
	minBits: func(n *node) int { return n.n + 1 },
	// the widest value: all ones (zigzagged, the most negative)
	maxBits: func(n *node) int { return fields.VarintBits(math.MaxUint64>>uint(64-n.mem.sizeBits()), n.n) },
	key:     func(n *node, p unsafe.Pointer) (uint64, error) { return loadInt(p, n.mem), nil },
	flat:    flatVia,
	schema: func(n *node, ns *NodeSchema) {
		ns.Type = memName(n.mem)
		ns.Varint = &VarintParams{Group: n.n}
	},
	schemaOK: func(ns *NodeSchema) bool { return ns.Varint != nil },
	hash:     func(f *fpHasher, ns *NodeSchema) { f.u64(uint64(ns.Varint.Group)) },
	describe: func(ns *NodeSchema) string {
		return fmt.Sprintf("group=%d signed=%v", ns.Varint.Group, strings.HasPrefix(ns.Type, "int"))
	},
}

func fillVarint(nd *node, path string, _ reflect.Type, s spec, what string) error {
	if err := s.only(path, what, "group", "id"); err != nil {
		return err
	}
	nd.n = 7
	if s.hasGroup {
		var g int
		if _, err := fmt.Sscanf(s.group, "%d", &g); err != nil || fmt.Sprint(g) != s.group || g < 1 || g > 64 {
			return badTag(path, "varint group=%s must be an integer in 1..64", s.group)
		}
		nd.n = g
	}
	return nil
}

func (e *encoder) encVarint(n *node, p unsafe.Pointer) error {
	x := loadInt(p, n.mem)
	if n.mem.signed() {
		x = fields.Zigzag(int64(x))
	}
	fields.WriteVarint(e.w, x, n.n)
	return nil
}

// decVarint reads a varint, unzigzagged when signed, and checks it fits.
func (d *decoder) decVarint(n *node, p unsafe.Pointer) error {
	v, err := fields.ReadVarint(d.r, n.n)
	if err != nil {
		return err
	}
	if n.mem.signed() {
		v = uint64(fields.Unzigzag(v))
	}
	if !fitsInt(n.mem, v) {
		return fmt.Errorf("%w: varint does not fit %s", ErrOutOfRange, n.typ)
	}
	storeInt(p, n.mem, v)
	return nil
}
