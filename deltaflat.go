package bitwire

import (
	"math"
	mbits "math/bits"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// The fast path of struct deltas: a struct whose fields are scalar leaves,
// quaternions, composite structs of flat leaves and nested structs of the
// same (the typical entity) is compiled once more into a flat list of delta
// operations, and encStructDelta runs that list in two loops: the first
// quantizes each side of each leaf once (none when the two are equal bit
// for bit) and sets a changed bit per operation, a struct's bit when any of
// its leaves changed; the second writes the changed bits and each changed
// leaf. No recursion into nested structs, no writing that is taken back
// when a nested struct turns out unchanged.
//
// It writes exactly the bits of the general path (encStructDelta's loop).
// Where the first loop meets an error it gives up before writing anything,
// and the general path runs instead: it reports the error at its place, or
// codes a baseline that cannot be quantized as the general path does. The
// path is taken without a model or trainer (their codings go through the
// general path: writeLeafDelta and the struct's changed bits are the seams
// they plug into), without sentinels and without per-field accounting.

// deltaFlatOn turns the fast path on; tests turn it off to compare it with
// the general path.
var deltaFlatOn = true

// dopKind is the kind of a delta plan operation.
type dopKind uint8

const (
	dopOther     dopKind = iota // another scalar: the general path writes it if it changed
	dopQ32                      // q on a float32, without clamp
	dopRangeInt                 // range on a signed integer, without clamp or window
	dopBool                     // bool
	dopQuat                     // quaternion
	dopStruct                   // a nested struct: its operations follow, up to end
	dopComposite                // a composite struct: its flat leaves follow, up to end
)

// dop is one operation of a delta plan.
type dop struct {
	kind dopKind
	mark bool // it has a changed bit of its own (not a leaf of a composite)
	off  uintptr
	n    *node
	end  int    // the operation after it and, for dopStruct and dopComposite, after its last leaf
	in   uint64 // dopStruct, dopComposite: the mask of the operations inside it
	sub  uint64 // dopStruct: the changed bits of its own fields
	// A leaf's key is written as key - lo in width bits (in a composite,
	// any leaf; on its own, plain ones: not a quaternion or a window).
	lo    uint64
	width uint
	plain bool
}

// deltaPlan is the flat delta form of a struct plan. Operation i owns bit
// i of the masks.
type deltaPlan struct {
	ops     []dop
	top     []int     // the operation of each field of the struct
	structs []dstruct // the struct and composite operations, innermost first
	depth   int       // struct nesting the operations span, the struct itself being 1
	// the leaves by kind, in order, so that judging them needs no dispatch
	q32, rng, bools, quats, others []dleaf
	marks                          uint64 // the changed bits of the struct's own fields
	otherBits                      uint64 // the operations of others
}

// dstruct is a struct or composite operation as the judging needs it: its
// bit, the operations inside it and (a struct) its fields' changed bits.
type dstruct struct{ bit, in, sub uint64 }

// dleaf is a leaf in one of a delta plan's lists by kind.
type dleaf struct {
	bit  uint64 // 1 << its operation
	i    int    // its operation
	mark bool   // it has a changed bit (false: a leaf of a composite)
	off  uintptr
	n    *node
	// a q leaf whose index Float32Scale proves to be one product and sum:
	// mul, off, and the range [lo, hi] where it holds (empty: not proven)
	mul, qoff, lo, hi float64
	// a quaternion of float32 components whose width has tables: Pack32
	// first, Pack where it is not sure
	grid *fields.QuatGrid
}

// maxDeltaOps bounds a delta plan: the changed bits live in one word.
const maxDeltaOps = 64

// deltaKey is a leaf's key in the baseline and in the current value.
type deltaKey struct{ b, c uint64 }

// flattenDelta returns the delta plan of p, or nil when a field of p is
// not on the fast path (slices, maps, pointers, arrays, groups, fields with
// a sign flag) or there are more than maxDeltaOps operations.
func flattenDelta(p *plan) *deltaPlan {
	dp := &deltaPlan{top: make([]int, len(p.fields))}
	if !dp.addStruct(p, 0, 1, dp.top) {
		return nil
	}
	for _, i := range dp.top {
		dp.marks |= 1 << uint(i)
	}
	for i := range dp.ops {
		op := &dp.ops[i]
		switch op.kind {
		case dopQ32:
			op.width, op.plain = uint(op.n.q.Bits()), !op.n.hasD
		case dopRangeInt:
			op.width, op.lo, op.plain = uint(op.n.irng.Bits()), uint64(op.n.irng.Min()), true
		case dopBool:
			op.width, op.plain = 1, true
		case dopQuat:
			op.width = uint(op.n.quat.Bits())
		}
	}
	for i := len(dp.ops) - 1; i >= 0; i-- {
		op := &dp.ops[i]
		if op.kind >= dopStruct {
			dp.structs = append(dp.structs, dstruct{bit: 1 << uint(i), in: op.in, sub: op.sub})
			continue
		}
		op.end = i + 1
		l := dleaf{bit: 1 << uint(i), i: i, mark: op.mark, off: op.off, n: op.n}
		l.lo, l.hi = math.Inf(1), math.Inf(-1) // an empty range: not proven
		if op.kind == dopQ32 {
			if mul, off, ok := op.n.q.Float32Scale(); ok {
				l.mul, l.qoff, l.lo, l.hi = mul, off, op.n.q.Min(), op.n.q.Max()
			}
		}
		if op.kind == dopQuat && op.n.mem == mF32 {
			l.grid = op.n.quat.Grid()
		}
		if op.kind == dopOther {
			dp.otherBits |= l.bit
		}
		list := &dp.others
		switch op.kind {
		case dopQ32:
			list = &dp.q32
		case dopRangeInt:
			list = &dp.rng
		case dopBool:
			list = &dp.bools
		case dopQuat:
			list = &dp.quats
		}
		*list = append([]dleaf{l}, *list...)
	}
	return dp
}

func (dp *deltaPlan) addStruct(p *plan, off uintptr, depth int, top []int) bool {
	dp.depth = max(dp.depth, depth)
	for i := range p.fields {
		f := &p.fields[i]
		if f.grp != nil || f.node.sgn {
			return false
		}
		top[i] = len(dp.ops)
		if !dp.addNode(f.node, off+f.off, depth) {
			return false
		}
	}
	return true
}

func (dp *deltaPlan) addNode(n *node, off uintptr, depth int) bool {
	at := len(dp.ops)
	if at >= maxDeltaOps {
		return false
	}
	op := dop{kind: dopOther, mark: true, off: off, n: n}
	switch n.code {
	case cStruct:
		if n.spec.composite {
			if !compositeFlat(n) {
				return false
			}
			op.kind = dopComposite
			dp.ops = append(dp.ops, op)
			for _, fo := range n.sub.flat.ops {
				if len(dp.ops) >= maxDeltaOps {
					return false
				}
				dp.ops = append(dp.ops, dop{kind: fullKind[fo.code], off: off + fo.off, n: fo.n})
			}
			dp.depth = max(dp.depth, depth+n.sub.flat.depth)
		} else {
			op.kind = dopStruct
			dp.ops = append(dp.ops, op)
			fields := make([]int, len(n.sub.fields))
			if !dp.addStruct(n.sub, off, depth+1, fields) {
				return false
			}
			for _, k := range fields {
				dp.ops[at].sub |= 1 << uint(k)
			}
		}
		o := &dp.ops[at]
		o.end = len(dp.ops)
		for k := at + 1; k < o.end; k++ {
			o.in |= 1 << uint(k)
		}
		return true
	case cSlice, cMap, cPtr, cArray:
		return false
	}
	op.kind = leafKind(n)
	dp.ops = append(dp.ops, op)
	return true
}

// leafKind returns the operation of a scalar leaf.
func leafKind(n *node) dopKind {
	switch {
	case n.code == cQ && n.mem == mF32 && !n.clamp:
		return dopQ32
	case n.code == cRange && n.mem.signed() && !n.clamp && !n.hasD:
		return dopRangeInt
	case n.code == cBool:
		return dopBool
	case n.code == cQuat:
		return dopQuat
	}
	return dopOther
}

// fullKind is the operation of a composite's flat leaf, written in full.
var fullKind = [...]dopKind{flatQ32: dopQ32, flatRangeInt: dopRangeInt, flatBool: dopBool, flatQuat: dopQuat}

// compositeFlat reports whether the composite struct n is coded in full by
// its flat leaves written one after the other with the kernels of
// writeFull: q on float32, signed ranges, bools and quaternions.
func compositeFlat(n *node) bool {
	fp := n.sub.flat
	if fp == nil || n.sub.hasSigned {
		return false
	}
	for _, op := range fp.ops {
		switch op.code {
		case flatQ32, flatRangeInt, flatBool, flatQuat:
		default:
			return false
		}
	}
	return true
}

// encStructDeltaFlat is encStructDelta (without its depth count) by the
// delta plan dp, skipping field skip (-1: none). ok is false when it wrote
// nothing and the general path must run: a value that cannot be coded, or
// a changed leaf of another coding.
func (e *encoder) encStructDeltaFlat(dp *deltaPlan, b, c unsafe.Pointer, skip int) (changed, ok bool) {
	keys := &e.ar.keys
	var mask uint64 // the changed leaves
	// Judge, kind by kind: a key per side of each leaf not equal bit for
	// bit (a leaf of a composite needs its current key in any case).
	for x := range dp.q32 {
		l := &dp.q32[x]
		pb, pc := ptrAt(b, l.off), ptrAt(c, l.off)
		same := *(*uint32)(pb) == *(*uint32)(pc)
		if same && l.mark {
			continue
		}
		q := &l.n.q
		k := &keys[l.i&(maxDeltaOps-1)]
		xc, xb := float64(*(*float32)(pc)), float64(*(*float32)(pb))
		var kc, kb uint64
		if xc >= l.lo && xc <= l.hi {
			kc = uint64(int64(float64(xc*l.mul) + l.qoff)) // float64: no fused multiply-add
		} else {
			var ok bool
			if kc, ok = q.IndexQuick(xc); !ok {
				var err error
				if kc, err = q.Index(xc); err != nil {
					return false, false
				}
			}
		}
		k.c = kc
		if same {
			continue
		}
		if xb >= l.lo && xb <= l.hi {
			kb = uint64(int64(float64(xb*l.mul) + l.qoff))
		} else {
			var ok bool
			if kb, ok = q.IndexQuick(xb); !ok {
				var err error
				if kb, err = q.Index(xb); err != nil {
					return false, false
				}
			}
		}
		k.b = kb
		if kb != kc {
			mask |= l.bit
		}
	}
	for x := range dp.rng {
		l := &dp.rng[x]
		vb, vc := loadInt(ptrAt(b, l.off), l.n.mem), loadInt(ptrAt(c, l.off), l.n.mem)
		if vb == vc && l.mark {
			continue
		}
		if r := &l.n.irng; int64(vc) < r.Min() || int64(vc) > r.Max() {
			return false, false
		}
		keys[l.i&(maxDeltaOps-1)].c = vc
		if vb != vc {
			mask |= l.bit
		}
	}
	for x := range dp.bools {
		l := &dp.bools[x]
		vc := *(*bool)(ptrAt(c, l.off))
		var kc uint64
		if vc {
			kc = 1
		}
		keys[l.i&(maxDeltaOps-1)].c = kc
		if *(*bool)(ptrAt(b, l.off)) != vc {
			mask |= l.bit
		}
	}
	for x := range dp.quats {
		l := &dp.quats[x]
		n := l.n
		pb, pc := ptrAt(b, l.off), ptrAt(c, l.off)
		if l.mark && memEqual(pb, pc, n.size) {
			continue
		}
		qc, ok := packQuatLeaf(l, pc)
		if !ok {
			return false, false
		}
		qb, ok := packQuatLeaf(l, pb)
		if !ok {
			return false, false
		}
		keys[l.i&(maxDeltaOps-1)] = deltaKey{qb, qc}
		if qb != qc {
			mask |= l.bit
		}
	}
	so, others := -1, dp.otherBits
	if skip >= 0 {
		so = dp.top[skip]
		others &^= 1 << (uint(so) & 63)
	}
	if others != 0 {
		for x := range dp.others {
			l := &dp.others[x]
			if l.i != so && !eqNode(l.n, ptrAt(b, l.off), ptrAt(c, l.off), 0) {
				return false, false // written by the general path
			}
		}
	}
	// The changed bits to write: the struct's fields' and, in each changed
	// nested struct, its fields'; a struct changed when a leaf in it did.
	ops := dp.ops
	marks := dp.marks
	if so >= 0 {
		marks &^= 1 << (uint(so) & 63)
	}
	for x := range dp.structs { // innermost first
		if st := &dp.structs[x]; mask&st.in != 0 {
			mask |= st.bit
			marks |= st.sub
		}
	}
	// Write them: before each changed one, the unchanged ones since the
	// last, in one write; after it, its delta.
	w := e.w
	todo := mask & marks
	var done uint64 // the changed bits written or passed
	for todo != 0 {
		i := mbits.TrailingZeros64(todo)
		bit := uint64(1) << (uint(i) & 63)
		todo &^= bit
		z := uint(mbits.OnesCount64(marks&^done&(bit-1))) & 63 // zeros before its one
		done = bit<<1 - 1
		op := &ops[i&(maxDeltaOps-1)]
		n := op.n
		k := &keys[i&(maxDeltaOps-1)]
		if op.plain && z+1+op.width <= 64 { // the zeros, the one and the key at once
			w.WriteBits(1<<z|(k.c-op.lo)<<(z+1), int(z+1+op.width))
			continue
		}
		switch op.kind {
		case dopStruct: // its fields follow
			w.WriteBits(1<<z, int(z+1))
		case dopComposite: // the zeros, the one and the leaves, gathered a word at a time
			acc, na := uint64(1)<<z, z+1
			for j := i + 1; j < op.end; j++ {
				l := &ops[j]
				if na+l.width > 64 {
					w.WriteBits(acc, int(na))
					acc, na = 0, 0
				}
				acc |= (keys[j&(maxDeltaOps-1)].c - l.lo) << (na & 63)
				na += l.width
			}
			w.WriteBits(acc, int(na))
		default:
			w.WriteBits(1<<z, int(z+1))
			switch op.kind {
			case dopQ32:
				if n.hasD && e.writeWindow(n, k.b, k.c) {
					continue
				}
				w.WriteBits(k.c, n.q.Bits())
			case dopRangeInt:
				w.WriteBits(k.c-uint64(n.irng.Min()), n.irng.Bits())
			case dopBool:
				w.WriteBits(k.c, 1)
			default:
				e.writeQuatLeaf(n, k)
			}
		}
	}
	w.WriteBits(0, mbits.OnesCount64(marks&^done))
	return mask != 0, true
}

// packQuatLeaf is Pack of the quaternion leaf l of the struct at p: by
// Pack32 where it is sure (float32 components), else by Pack; ok is false
// when Pack returns an error.
func packQuatLeaf(l *dleaf, p unsafe.Pointer) (uint64, bool) {
	if g := l.grid; g != nil {
		o := &l.n.qoff
		if u, ok := g.Pack32(*(*float32)(ptrAt(p, o[0])), *(*float32)(ptrAt(p, o[1])),
			*(*float32)(ptrAt(p, o[2])), *(*float32)(ptrAt(p, o[3]))); ok {
			return u, true
		}
	}
	u, err := l.n.quat.Pack(loadQuat(l.n, p))
	return u, err == nil
}

// writeQuatLeaf writes a changed quaternion against its baseline, from
// their packed forms.
func (e *encoder) writeQuatLeaf(n *node, k *deltaKey) {
	n.quat.WriteDelta(e.w, &e.ar.slot(n).quat, k.b, true, k.c)
}
