package gen

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/bitwire/bitwire"
)

// Fingerprint computes a schema's 64-bit fingerprint by the algorithm of
// docs/schema.md, from the schema's wire content alone. Generated code
// carries it as a constant; the generator checks it against the schema's
// own Fingerprint field, so a schema edited by hand, or a divergence
// between the specification and the library, fails generation.
func Fingerprint(s *bitwire.Schema) (uint64, error) {
	f := &fpWalk{h: 0xcbf29ce484222325, s: s}
	if s.Union != nil {
		f.str("bitwire-fpu-1")
		f.u64(uint64(s.WireVersion))
		f.u64(uint64(len(s.Union.Variants)))
		for _, v := range s.Union.Variants {
			f.structRef(v, false)
		}
	} else {
		f.str("bitwire-fp-1")
		f.u64(uint64(s.WireVersion))
		f.flag(s.Debug)
		f.structRef(s.Root, false)
	}
	return f.h, f.err
}

type fpWalk struct {
	h     uint64
	s     *bitwire.Schema
	stack []int
	err   error
}

var fpCoding = map[string]byte{
	"bool": 1, "bits": 2, "range": 3, "q": 4, "float": 5, "fixed": 6,
	"varint": 7, "bitlen": 8, "string": 9, "bytes": 10, "quat": 11,
	"time": 12, "struct": 13, "array": 14, "slice": 15, "ptr": 16, "map": 17,
}

var fpType = map[string]byte{
	"int8": 1, "int16": 2, "int32": 3, "int64": 4,
	"uint8": 5, "uint16": 6, "uint32": 7, "uint64": 8,
	"float32": 9, "float64": 10, "bool": 11, "string": 12, "bytes": 13, "time": 14,
}

// FNV-1a, one byte at a time.
func (f *fpWalk) b(c byte) { f.h = (f.h ^ uint64(c)) * 0x100000001b3 }
func (f *fpWalk) str(s string) {
	for i := 0; i < len(s); i++ {
		f.b(s[i])
	}
}
func (f *fpWalk) u64(v uint64) {
	var x [8]byte
	binary.LittleEndian.PutUint64(x[:], v)
	for _, c := range x {
		f.b(c)
	}
}
func (f *fpWalk) flag(v bool) {
	if v {
		f.b(1)
	} else {
		f.b(0)
	}
}

func (f *fpWalk) structRef(t int, composite bool) {
	if t < 0 || t >= len(f.s.Types) {
		f.err = fmt.Errorf("%w: type reference %d", ErrSchema, t)
		return
	}
	f.b(fpCoding["struct"])
	f.flag(composite)
	for k := len(f.stack) - 1; k >= 0; k-- {
		if f.stack[k] == t { // a cycle: how far up the walk the type is
			f.b(1)
			f.u64(uint64(len(f.stack) - 1 - k))
			return
		}
	}
	f.b(0)
	ts := &f.s.Types[t]
	f.stack = append(f.stack, t)
	f.u64(uint64(len(ts.Fields)))
	for i := range ts.Fields {
		fd := &ts.Fields[i]
		f.u64(uint64(fd.Group + 1))
		f.node(fd.Node)
	}
	f.stack = f.stack[:len(f.stack)-1]
}

func (f *fpWalk) node(n *bitwire.NodeSchema) {
	if n == nil {
		f.err = fmt.Errorf("%w: missing node", ErrSchema)
		return
	}
	if n.Coding == "struct" {
		if n.Ref == nil {
			f.err = fmt.Errorf("%w: struct node without ref", ErrSchema)
			return
		}
		f.structRef(*n.Ref, n.Composite)
		return
	}
	c, ok := fpCoding[n.Coding]
	if !ok {
		f.err = fmt.Errorf("%w: coding %q", ErrSchema, n.Coding)
		return
	}
	f.b(c)
	f.b(fpType[n.Type])
	switch n.Coding {
	case "bits":
		f.u64(uint64(n.Bits.Width))
	case "range":
		f.u64(bound(n.Range.Min, n.Type))
		f.u64(bound(n.Range.Max, n.Type))
	case "q":
		f.u64(math.Float64bits(n.Q.Min))
		f.u64(math.Float64bits(n.Q.Max))
		f.u64(n.Q.Steps)
		f.u64(math.Float64bits(n.Q.Step))
		// zero and kmin are derived, not hashed: a schema whose values
		// disagree with min, max and step (a hand-written one, or one from
		// before wire version 2) would decode on another grid.
		zero := n.Q.Min < 0 && 0 < n.Q.Max
		kmin := int64(0)
		if zero {
			kmin = int64(math.Floor(n.Q.Min/n.Q.Step + 0.5))
		}
		if n.Q.Zero != zero || n.Q.KMin != kmin {
			f.err = fmt.Errorf("%w: q grid [%v, %v] step %v: zero %v and kmin %d, want %v and %d", ErrSchema, n.Q.Min, n.Q.Max, n.Q.Step, n.Q.Zero, n.Q.KMin, zero, kmin)
		}
	case "fixed":
		f.u64(math.Float64bits(n.Fixed.Prec))
		f.u64(uint64(n.Fixed.Width))
	case "varint":
		f.u64(uint64(n.Varint.Group))
	case "bitlen":
		f.u64(uint64(n.Bitlen.Width))
	case "string", "bytes":
		f.u64(uint64(n.MaxLen))
	case "quat":
		f.u64(uint64(n.Quat.Bits))
	case "array":
		f.u64(uint64(n.Count))
		f.node(n.Elem)
		return
	case "slice":
		f.u64(uint64(n.MaxLen))
		id := 0
		if n.Entity != nil {
			id = n.Entity.IDField + 1
		}
		f.u64(uint64(id))
		f.node(n.Elem)
		return
	case "ptr":
		f.node(n.Elem)
		return
	case "map":
		f.u64(uint64(n.MaxLen))
		f.node(n.Key)
		f.node(n.Elem)
		return
	}
	if d := n.Delta; d != nil {
		f.b(1)
		f.u64(uint64(d.Lo))
		f.u64(uint64(d.Hi))
	} else {
		f.b(0)
	}
}

// bound reads a range bound as its 64-bit two's complement pattern.
func bound(s, typ string) uint64 {
	if signed(typ) {
		v, _ := strconv.ParseInt(s, 10, 64)
		return uint64(v)
	}
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}
