package bitwire

import "unsafe"

// The fast path for structs made only of fixed-width scalar leaves (bools,
// bits, ranges, quantized and raw floats, varints, quaternions, times), in
// nested structs and arrays as deep as they go: the typical game entity.
// Such a struct is compiled once more into a flat list of leaves at their
// offsets from the struct, and encStruct and decStruct walk that list in one
// loop: no recursion into nested structs and arrays, no group checks, and
// the hottest codings dispatched without a call to encNode or decNode.
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
)

// flatOp is one leaf of a flat plan: its coding and its offset from the
// start of the struct.
type flatOp struct {
	code flatCode
	off  uintptr
	n    *node
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
// path does not code (strings, slices, maps, pointers, adaptive integers,
// groups) or more than maxFlatOps leaves.
func flatten(p *plan) *flatPlan {
	fp := &flatPlan{}
	if !fp.addStruct(p, 0, 1) || len(fp.ops) == 0 {
		return nil
	}
	return fp
}

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
	code := flatNode
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
	case cQ:
		if n.mem == mF32 && !n.clamp {
			code = flatQ32
		}
	case cRange:
		if n.mem.signed() && !n.clamp {
			code = flatRangeInt
		}
	case cBool:
		code = flatBool
	case cBits, cFloat, cVarint, cQuat, cTime:
	default:
		return false
	}
	fp.ops = append(fp.ops, flatOp{code: code, off: off, n: n})
	return true
}

// encFlat writes the leaves of fp for the struct at base. On error the
// writer holds a partial value; the caller rewinds it.
func (e *encoder) encFlat(fp *flatPlan, base unsafe.Pointer) error {
	w := e.w
	for i := range fp.ops {
		op := &fp.ops[i]
		p := unsafe.Add(base, op.off)
		var err error
		switch op.code {
		case flatQ32:
			err = op.n.q.Write(w, float64(*(*float32)(p)))
		case flatRangeInt:
			err = op.n.irng.Write(w, int64(loadInt(p, op.n.mem)))
		case flatBool:
			w.WriteBool(*(*bool)(p))
		default:
			err = e.encNode(op.n, p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decFlat reads the leaves of fp into the struct at base. On error the
// reader has moved on; the caller restores it.
func (d *decoder) decFlat(fp *flatPlan, base unsafe.Pointer) error {
	r := d.r
	for i := range fp.ops {
		op := &fp.ops[i]
		p := unsafe.Add(base, op.off)
		var err error
		switch op.code {
		case flatQ32:
			var v float64
			if v, err = op.n.q.Read(r); err == nil {
				*(*float32)(p) = float32(v)
			}
		case flatRangeInt:
			var v int64
			if v, err = op.n.irng.Read(r); err == nil {
				storeInt(p, op.n.mem, uint64(v))
			}
		case flatBool:
			var b bool
			if b, err = r.ReadBool(); err == nil {
				*(*bool)(p) = b
			}
		default:
			err = d.decNode(op.n, p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
