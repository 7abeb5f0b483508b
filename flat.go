package bitwire

import (
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// The fast path for structs made only of scalar leaves without a sign flag
// (bools, bits, ranges, quantized and raw floats, varints, unsigned bitlen
// integers, quaternions, times), in nested structs and arrays as deep as
// they go: the typical game entity. Such a struct is compiled once more
// into a flat list of leaves at their offsets from the struct, and the
// root, encStruct/decStruct, slices of such structs and composite delta
// fields walk that list in one loop: no recursion into nested structs and
// arrays, no group checks, and the hottest codings dispatched without a
// call to encNode or decNode.
//
// The flat path produces exactly the bits of the general path. On any error
// it rewinds, and the general path runs again to report the error with its
// field path, so error messages are the same too.

// flatCode selects how one flat leaf is coded.
type flatCode uint8

const (
	flatNode     flatCode = iota // any other leaf: through encNode / decNode
	flatQ32                      // q on a float32, without clamp
	flatRangeInt                 // range on a signed integer, without clamp
	flatBool                     // bool
	flatBitlenU                  // bitlen on an unsigned integer (no sign flag)
	flatQuat                     // quaternion

	flatNone flatCode = 255 // not on the flat path (coder.flat)
)

// flatOp is one leaf of a flat plan: its coding and its offset from the
// start of the struct. The first leaf of a run (see flatten) also holds the
// run's length in leaves and in bits.
type flatOp struct {
	code  flatCode
	off   uintptr
	n     *node
	width int    // bits, for the fixed-width codings that runs are made of
	mask  uint64 // 2^width - 1
	count int    // the first leaf of a run: how many leaves it spans
	bits  int    // and their bits
}

// flatPlan is the flat form of a struct plan.
type flatPlan struct {
	ops   []flatOp
	depth int // struct nesting the leaves span: 1 when none is in a nested struct
}

// maxFlatOps bounds a flat plan: an array of structs is unrolled into its
// leaves, so a big one would make a big list.
const maxFlatOps = 1024

// flatten returns the flat form of p, or nil when p has a field the flat
// path does not code (strings, slices, maps, pointers, signed adaptive
// integers, whose sign flag a rewind could not take back, fixed-point
// numbers, groups) or more than maxFlatOps leaves.
//
// Consecutive fixed-width leaves (q on float32, ranges on signed integers,
// bools, quaternions) are grouped into runs of at most maxRunBits bits,
// which decFlat reads with one ReadBits: the typical entity is a few reads
// rather than a dozen. (encFlat writes leaf by leaf: WriteBits is inlined,
// and accumulating a run measured slower.)
func flatten(p *plan) *flatPlan {
	fp := &flatPlan{}
	if !fp.addStruct(p, 0, 1) || len(fp.ops) == 0 {
		return nil
	}
	start := -1 // the first leaf of the open run
	for i := range fp.ops {
		op := &fp.ops[i]
		op.mask = 1<<uint(op.width) - 1
		if op.width == 0 {
			start = -1
			continue
		}
		if start < 0 || fp.ops[start].bits+op.width > maxRunBits {
			start = i
		}
		fp.ops[start].count++
		fp.ops[start].bits += op.width
	}
	return fp
}

// maxRunBits bounds a run: what one ReadBits takes from a full cache.
const maxRunBits = 56

func (fp *flatPlan) addStruct(p *plan, off uintptr, depth int) bool {
	fp.depth = max(fp.depth, depth)
	for i := range p.fields {
		f := &p.fields[i]
		if f.grp != nil || !fp.addNode(f.node, off+f.off, depth) {
			return false
		}
	}
	return true
}

func (fp *flatPlan) addNode(n *node, off uintptr, depth int) bool {
	if len(fp.ops) >= maxFlatOps {
		return false
	}
	switch n.code {
	case cStruct:
		return fp.addStruct(n.sub, off, depth+1)
	case cArray:
		if n.elem.groupable() {
			return false
		}
		for i := 0; i < n.count; i++ {
			if !fp.addNode(n.elem, off+uintptr(i)*n.stride, depth) {
				return false
			}
		}
		return true
	}
	r := n.row
	if r.flat == nil {
		return false
	}
	code := r.flat(n)
	if code == flatNone {
		return false
	}
	op := flatOp{code: code, off: off, n: n}
	if code != flatNode && r.width != nil {
		op.width = r.width(n) // a fixed-width kernel: runs are made of these
	}
	fp.ops = append(fp.ops, op)
	return true
}

// encFlat writes the leaves of fp for the struct at base. On error the
// writer holds a partial value; the caller rewinds it and runs the general
// path, which returns the real error: so the errors here need not be the
// right ones, only non-nil. The hottest codings are written through the
// inlinable parts of their fields API (Quantizer.Index, IntRange bounds,
// Writer.WriteBits) rather than through Write, which saves a call each.
func (e *encoder) encFlat(fp *flatPlan, base unsafe.Pointer) error {
	return e.encFlats(fp, base, 1, 0)
}

// encFlats is encFlat of count structs stride bytes apart, in one loop: an
// array or slice of them costs no call per element.
func (e *encoder) encFlats(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr) error {
	w := e.w
	ops := fp.ops
	for k := 0; k < count; k++ {
		base := unsafe.Add(first, uintptr(k)*stride)
		for i := range ops {
			op := &ops[i]
			p := unsafe.Add(base, op.off)
			switch op.code {
			case flatQ32:
				q := &op.n.q
				x, err := q.Index(float64(*(*float32)(p)))
				if err != nil {
					return err
				}
				w.WriteBits(x, q.Bits())
			case flatRangeInt:
				r := &op.n.irng
				v := int64(loadInt(p, op.n.mem))
				if v < r.Min() || v > r.Max() {
					return ErrOutOfRange
				}
				w.WriteBits(uint64(v)-uint64(r.Min()), r.Bits())
			case flatBool:
				var b uint64
				if *(*bool)(p) {
					b = 1
				}
				w.WriteBits(b, 1)
			case flatBitlenU:
				fields.WriteBitlen(w, loadInt(p, op.n.mem), op.n.n)
			case flatQuat:
				u, err := op.n.quat.Pack(loadQuat(op.n, p))
				if err != nil {
					return err
				}
				w.WriteBits(u, op.n.quat.Bits())
			default:
				if err := e.encNode(op.n, p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// decFlat reads the leaves of fp into the struct at base. On error the
// reader has moved on; the caller restores it and runs the general path,
// which returns the real error.
func (d *decoder) decFlat(fp *flatPlan, base unsafe.Pointer) error {
	return d.decFlats(fp, base, 1, 0)
}

// decFlats is decFlat of count structs stride bytes apart, in one loop: an
// array or slice of them costs no call per element.
func (d *decoder) decFlats(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr) error {
	r := d.r
	ops := fp.ops
	var v uint64 // the open run's bits not yet taken
	for k := 0; k < count; k++ {
		base := unsafe.Add(first, uintptr(k)*stride)
		for i := range ops {
			op := &ops[i]
			p := unsafe.Add(base, op.off)
			if op.count > 0 {
				var err error
				if v, err = r.ReadBits(op.bits); err != nil {
					return err
				}
			}
			x := v & op.mask
			v >>= uint(op.width) & 63
			switch op.code {
			case flatQ32:
				q := &op.n.q
				if x > q.Steps() {
					return ErrOutOfRange
				}
				*(*float32)(p) = float32(q.Value(x))
			case flatRangeInt:
				rng := &op.n.irng
				if x > uint64(rng.Max())-uint64(rng.Min()) {
					return ErrOutOfRange
				}
				storeInt(p, op.n.mem, uint64(rng.Min())+x)
			case flatBool:
				*(*bool)(p) = x != 0
			case flatQuat:
				q, err := op.n.quat.Unpack(x)
				if err != nil {
					return err
				}
				storeQuat(op.n, p, q)
			case flatBitlenU:
				// An unsigned value has no sign bit and sets no flag: the
				// magnitude is the value (decInt's general path reports the
				// error of one the type cannot hold).
				u, err := fields.ReadBitlen(r, op.n.n)
				if err != nil {
					return err
				}
				if !fitsInt(op.n.mem, u) {
					return ErrOutOfRange
				}
				storeInt(p, op.n.mem, u)
			default:
				if err := d.decNode(op.n, p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
