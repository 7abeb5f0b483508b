package bitwire

import (
	"math"
	"unsafe"

	"github.com/bitwire/bitwire/bits"

	"github.com/bitwire/bitwire/fields"
)

// The fast path of struct deltas: a struct whose fields are scalar leaves,
// quaternions, composite structs of flat leaves and nested structs of the
// same (the typical entity) is compiled once more into a flat list of delta
// operations in wire order, and encStructDeltaFlat runs that list in one
// pass that judges and writes each field at once: a changed bit and, when
// it is 1, the key, gathered a word at a time. A nested struct or a
// composite is first compared byte for byte (equal: a 0 bit and the next
// field); else its 1 bit and its fields are written as they are judged,
// and taken back for a 0 bit when none of them changed after quantization.
//
// It writes exactly the bits of the general path (encStructDelta's loop).
// Where it meets an error it takes back what it wrote (and the adaptive
// states of what it wrote, when an error can follow them) and the general
// path runs instead: it reports the error at its place, or codes a
// baseline that cannot be quantized as the general path does. The path is
// taken without a model or trainer (their codings go through the general
// path: writeLeafDelta and the struct's changed bits are the seams they
// plug into), without sentinels and without per-field accounting.

// dopKind is the kind of a delta plan operation.
type dopKind uint8

const (
	dopQ32       dopKind = iota // q on a float32, without clamp
	dopRangeInt                 // range on an integer, without clamp or window
	dopBool                     // bool
	dopQuat                     // quaternion
	dopOther                    // another scalar: the general path writes it if it changed
	dopStruct                   // a nested struct: its fields follow, then dopEnd
	dopComposite                // a composite struct: its flat leaves follow, then dopEnd
	dopEnd                      // the end of the innermost open struct or composite
	dopStop                     // the end of the list
	dopFull                     // added to dopQ32..dopQuat: a composite's leaf, its key in full
)

// dop flags.
const (
	dopWide   = 1 << iota // the changed bit and the key fit in one word
	dopWindow             // a q leaf with a dmin/dmax window
	dopUndo               // a write with adaptive state that a later error must undo
	dopI64                // a range on a 64-bit integer: one load
	dopAllQ               // a struct or composite of proven q leaves only (see gather)
)

// dop is one operation of a delta plan, with the constants that judging
// and writing it need, so that the pass seldom follows n.
type dop struct {
	kind  dopKind
	width uint8 // a leaf's key width; dopStruct, dopComposite: the unit its bytes are compared in (spanUnit)
	flags uint8 // dopWide, dopWindow, dopUndo, dopI64
	mem   memKind
	end   int32   // the operation after it: after its dopEnd for a struct or composite
	off   uintptr // from the struct's start
	size  uintptr // dopStruct, dopComposite, dopQuat: the bytes compared first
	// dopRangeInt: a key is the value - lo, in range when at most span;
	// dopStruct, dopComposite: lo is the operation itself, span the bytes
	// from it to the operation after its dopEnd; dopEnd: lo is its struct's
	lo, span uint64
	// dopQ32 whose index Float32Scale proves to be one product and sum:
	// mul, qoff, and the range [qlo, qhi] where it holds (empty: not proven)
	mul, qoff, qlo, qhi float64
	n                   *node
	grid                *fields.QuatGrid // dopQuat of float32 components with tables
}

// dopSize is the size of a dop, the step from one to the next.
const dopSize = unsafe.Sizeof(dop{})

// deltaPlan is the flat delta form of a struct plan.
type deltaPlan struct {
	ops []dop
	top []int // the operation of each field of the struct
	// an entity's operations: those of ops but its id field's, idField
	// (-1 when the struct has no id field)
	noID    []dop
	idField int
	// decBits, decBitsNoID: decodeFlat's bound on the bits of a delta of
	// ops (noID) in decStructDeltaFlat's word loop, 0 when the kernel
	// does not read them; decState: some leaf it hands to the general
	// decoder keeps an adaptive state, which a failed kernel must restore;
	// wordsNoID: the word loop reads every leaf of noID itself, so that an
	// entity set's changed entities are read by words alone (decEntityDelta)
	decBits, decBitsNoID int
	decState, wordsNoID  bool
	size                 uintptr // the struct's size
	depth                int     // struct nesting the operations span, the struct itself being 1
	nest                 int     // the most structs and composites open at once
}

// maxDeltaOps bounds a delta plan, so that the starts of its open structs
// fit in the arena's scratch.
const maxDeltaOps = 64

// deltaKey is a leaf's key in the baseline and in the current value.
type deltaKey struct{ b, c uint64 }

// flattenDelta returns the delta plan of p, or nil when a field of p is
// not on the fast path (slices, maps, pointers, arrays, groups, fields with
// a sign flag) or there are more than maxDeltaOps operations.
func flattenDelta(p *plan) *deltaPlan {
	dp := &deltaPlan{top: make([]int, len(p.fields)), idField: -1}
	if !dp.addStruct(p, 0, 1, dp.top, -1) {
		return nil
	}
	dp.ops = markUndo(append(dp.ops, dop{kind: dopStop}))
	dp.size = p.typ.Size()
	pod := !hasPointers(p.typ)
	dp.decBits, dp.decState, _ = decodeFlat(dp.ops, pod)
	// The operations of an entity, which skip its id field.
	for i := range p.fields {
		if f := &p.fields[i]; f.node.spec.id && f.node.code != cStruct {
			all := dp.ops
			dp.ops = nil
			if dp.addStruct(p, 0, 1, make([]int, len(p.fields)), i) {
				dp.idField, dp.noID = i, markUndo(append(dp.ops, dop{kind: dopStop}))
				dp.decBitsNoID, _, dp.wordsNoID = decodeFlat(dp.noID, pod)
			}
			dp.ops = all
			break
		}
	}
	return dp
}

// decodeFlat returns the most bits a delta of ops takes in the word
// loop of decStructDeltaFlat (every changed bit, and the q, range and
// bool leaves it reads itself), when the kernel reads ops and pays, else
// 0: the struct is pointer-free (pod), and the operations nest a struct or
// a composite, where the general loop pays a call or a take-back point
// for each (for a struct of leaves alone its loop is as short). The
// leaves the loop does not read itself (windows, quaternions, other
// codings, leaves over 56 bits) it hands to the general leaf decoder.
// stateful reports whether one of them keeps an adaptive state, words
// whether there is none.
func decodeFlat(ops []dop, pod bool) (maxBits int, stateful, words bool) {
	if !pod {
		return 0, false, false
	}
	nested, words := false, true
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case dopEnd, dopStop:
			continue
		case dopStruct, dopComposite:
			nested = true
		default:
			if wordLeaf(op) {
				maxBits += int(op.width)
			} else if words = false; op.kind == dopQuat || op.n.hasD {
				stateful = true
			}
		}
		if op.kind < dopFull {
			maxBits++ // its changed bit
		}
	}
	if !nested {
		return 0, false, false
	}
	return maxBits, stateful, words
}

// wordLeaf reports whether deltaWords reads leaf op itself (a q without a
// window, a range of at most 56 bits, a bool), as its switch decides.
func wordLeaf(op *dop) bool {
	switch op.kind % dopFull {
	case dopQ32:
		return op.flags&dopWindow == 0
	case dopRangeInt:
		return op.width <= 56
	case dopBool:
		return true
	}
	return false
}

// decStructDeltaFlat reads what encStructDeltaFlat writes, by the same
// operations (ops: dp.ops, or dp.noID for an entity), into dst, which
// starts as a copy of the baseline b: a changed bit a field and, when it
// is 1, the field's value delta (a nested struct's own changed bits, a
// composite's flat leaves in full). The word loop (deltaWords) reads them
// straight from the input's words as decWords reads full structs, and
// hands a leaf it does not read itself to the general leaf decoder
// (decValueDelta, or decNode for a composite's leaf), through the reader.
// It reports false on an error: the caller then restores the reader, and
// the adaptive states when stateful, and runs the general path, which
// reports the error at its place (rewriting dst whole). Only for
// operations with a bound from decodeFlat (maxBits > 0).
func (d *decoder) decStructDeltaFlat(ops []dop, size uintptr, maxBits int, b, dst unsafe.Pointer) bool {
	if b != dst {
		copyPod(dst, b, size)
	}
	r := d.r
	data, pos := r.Source()
	need := maxBits + 64 // every load of 8 bytes stays in the input
	if pos+need > len(data)*8 {
		// Near the input's end: from a zero-padded copy of the rest,
		// when the word loop reads every leaf.
		at := pos >> 3
		if pos&7+need > padBytes*8 {
			return false
		}
		var buf [padBytes]byte
		copy(buf[:], data[at:])
		next, _, st := deltaWords(ops, 0, unsafe.Pointer(&buf), uint(pos&7), dst)
		if next += uint(at) * 8; st != wordsDone || next > uint(len(data))*8 {
			return false // past the end, or a leaf for the reader: the general path
		}
		r.SkipTo(int(next))
		return true
	}
	src := unsafe.Pointer(unsafe.SliceData(data))
	for i, p := 0, uint(pos); ; {
		next, at, st := deltaWords(ops, i, src, p, dst)
		if st == wordsDone {
			r.SkipTo(int(next))
			return true
		}
		if st == wordsBad {
			return false
		}
		// A leaf for the general decoder, its changed bit read.
		op := &ops[at]
		r.SkipTo(int(next))
		var err error
		if pd := unsafe.Add(dst, op.off); op.kind >= dopFull {
			err = d.decNode(op.n, pd)
		} else {
			err = d.decValueDelta(op.n, unsafe.Add(b, op.off), pd)
		}
		if err != nil {
			return false
		}
		_, q := r.Source()
		if q+need > len(data)*8 {
			return false // the rest might reach past the input: the general path
		}
		p, i = uint(q), at+1
	}
}

// deltaWords' outcomes.
const (
	wordsDone   = iota // every operation read
	wordsBad           // a key out of its range
	wordsReader        // operation at is a leaf for the general decoder
)

// deltaWords is decStructDeltaFlat's loop over ops from operation i and
// the bits at src from bit pos, which hold at least the operations' most
// bits and 8 bytes more. It returns the next bit, and how it stopped: at
// the end, on a key out of its range, or at operation at, a changed leaf
// it does not read itself (next is then past its changed bit).
func deltaWords(ops []dop, i int, src unsafe.Pointer, pos uint, dst unsafe.Pointer) (next uint, at, st int) {
	for {
		op := &ops[i]
		switch op.kind {
		case dopStop:
			return pos, i, wordsDone
		case dopEnd:
			i++
			continue
		}
		v := load8(src, pos>>3) >> (pos & 7) // 57 bits at least
		if op.kind < dopFull {               // a field: its changed bit first
			pos++
			if v&1 == 0 {
				i = int(op.end) // past a struct's or composite's dopEnd
				continue
			}
			v >>= 1
		}
		if op.kind == dopStruct || op.kind == dopComposite {
			i++ // its fields' changed bits, or its leaves in full, follow
			continue
		}
		pd := unsafe.Add(dst, op.off)
		mask := uint64(1)<<(op.width&63) - 1
		switch op.kind % dopFull {
		case dopQ32:
			if op.flags&dopWindow != 0 {
				return pos, i, wordsReader
			}
			x, q := v&mask, &op.n.q
			if x > q.Steps() {
				return pos, i, wordsBad
			}
			*(*float32)(pd) = float32(q.Value(x))
		case dopRangeInt:
			if op.width > 56 {
				return pos, i, wordsReader
			}
			x := v & mask
			if x > op.span {
				return pos, i, wordsBad
			}
			storeInt(pd, op.mem, op.lo+x)
		case dopBool:
			*(*bool)(pd) = v&1 != 0
		default: // a quaternion, another coding
			return pos, i, wordsReader
		}
		pos += uint(op.width)
		i++
	}
}

// markUndo marks the writes with state (a relative quaternion, a window)
// that must be undone when an error follows them: when an operation after
// them can fail.
func markUndo(ops []dop) []dop {
	fallible := false
	for i := len(ops) - 1; i >= 0; i-- {
		op := &ops[i]
		switch op.kind % dopFull {
		case dopBool, dopStruct, dopComposite, dopEnd, dopStop:
		default:
			if fallible && (op.kind == dopQuat || op.flags&dopWindow != 0) {
				op.flags |= dopUndo
			}
			fallible = true
		}
	}
	return ops
}

// addStruct adds the operations of the fields of p but field skip (-1:
// none) at off, recording each field's first operation in top.
func (dp *deltaPlan) addStruct(p *plan, off uintptr, depth int, top []int, skip int) bool {
	dp.depth = max(dp.depth, depth)
	for i := range p.fields {
		f := &p.fields[i]
		if i == skip {
			top[i] = -1
			continue
		}
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

// add appends op, a leaf of kind k of node n at off, with its constants.
func (dp *deltaPlan) add(k dopKind, n *node, off uintptr) bool {
	if len(dp.ops) >= maxDeltaOps {
		return false
	}
	op := dop{kind: k, mem: n.mem, off: off, n: n, end: int32(len(dp.ops) + 1)}
	op.qlo, op.qhi = math.Inf(1), math.Inf(-1) // an empty range: not proven
	width := 0
	switch k % dopFull {
	case dopQ32:
		width = n.q.Bits()
		if mul, qoff, ok := n.q.Float32Scale(); ok {
			op.mul, op.qoff, op.qlo, op.qhi = mul, qoff, n.q.Min(), n.q.Max()
		}
		if n.hasD && k == dopQ32 {
			op.flags |= dopWindow
		}
	case dopRangeInt:
		op.lo, op.span = n.rangeSpan()
		width = n.rangeBits()
		if n.mem.sizeBits() == 64 {
			op.flags |= dopI64
		}
	case dopBool:
		width = 1
	case dopQuat:
		width = n.quat.Bits()
		op.size = n.size
		if n.mem == mF32 {
			op.grid = n.quat.Grid()
		}
	}
	op.width = uint8(width)
	if width < 64 {
		op.flags |= dopWide
	}
	dp.ops = append(dp.ops, op)
	return true
}

func (dp *deltaPlan) addNode(n *node, off uintptr, depth int) bool {
	at := len(dp.ops)
	switch n.code {
	case cStruct:
		if len(dp.ops)+2 > maxDeltaOps {
			return false
		}
		// compared first in words of its alignment (at most 8 bytes)
		op := dop{kind: dopStruct, off: off, n: n, size: n.size, width: spanUnit(n.size)}
		if n.spec.composite {
			if !compositeFlat(n) {
				return false
			}
			op.kind = dopComposite
			dp.ops = append(dp.ops, op)
			for _, fo := range n.sub.flat.ops {
				if !dp.add(fullKind[fo.code]+dopFull, fo.n, off+fo.off) {
					return false
				}
			}
			dp.depth = max(dp.depth, depth+n.sub.flat.depth)
		} else {
			dp.ops = append(dp.ops, op)
			fields := make([]int, len(n.sub.fields))
			if !dp.addStruct(n.sub, off, depth+1, fields, -1) {
				return false
			}
		}
		if len(dp.ops) >= maxDeltaOps {
			return false
		}
		dp.ops = append(dp.ops, dop{kind: dopEnd})
		dp.ops[at].end = int32(len(dp.ops))
		dp.ops[len(dp.ops)-1].end = int32(len(dp.ops))
		dp.ops[len(dp.ops)-1].lo = uint64(at)
		dp.ops[at].lo = uint64(at)
		dp.ops[at].span = uint64(len(dp.ops)-at) * uint64(dopSize)
		// Its fields all q leaves on float32s with proven keys: a loop of
		// their own.
		allQ := true
		for k := at + 1; k < len(dp.ops)-1; k++ {
			if o := &dp.ops[k]; o.kind%dopFull != dopQ32 || o.flags&dopWindow != 0 || o.qlo > o.qhi {
				allQ = false
			}
		}
		if allQ {
			dp.ops[at].flags |= dopAllQ
		}
		return true
	case cSlice, cMap, cPtr, cArray:
		return false
	}
	return dp.add(leafKind(n), n, off)
}

// leafKind returns the operation of a scalar leaf.
func leafKind(n *node) dopKind {
	switch {
	case n.code == cQ && n.mem == mF32 && !n.clamp:
		return dopQ32
	case n.code == cRange && !n.clamp && !n.hasD:
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

// flatScratch is encStructDeltaFlat's scratch in the arena: the bits it
// gathers, in whole words then acc, and where each open struct's changed
// bit is among them (by the struct's operation).
type flatScratch struct {
	opened [maxDeltaOps]int
	words  [flatWords]uint64
}

// flatWords bounds the words a delta plan gathers: 64 operations of at
// most 65 bits each.
const flatWords = 128

// encStructDeltaFlat is encStructDelta (without its depth count) by the
// delta plan dp, skipping field skip (-1: none). ok is false when it wrote
// nothing and the general path must run: a value that cannot be coded, or
// a changed leaf of another coding.
//
// Its bits are gathered in the arena and written at the end or before a
// write of another kind (a quaternion's or a window's), so that taking
// back a struct's bits costs no call. Its inner loop calls nothing; an
// operation that needs a call leaves it for the loop around it.
func (e *encoder) encStructDeltaFlat(dp *deltaPlan, b, c unsafe.Pointer, skip int) (changed, ok bool) {
	w := e.w
	m := e.mark()
	ops := dp.ops
	if skip >= 0 {
		if skip != dp.idField {
			return false, false // the general path skips any field
		}
		ops = dp.noID
	}
	fs := &e.ar.flat
	var r flatRun
	for {
		gather(ops, b, c, fs, &r)
		op := (*dop)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(ops)), r.at))
		if op.kind == dopStop {
			break
		}
		// Operation op, the slow way: v in nv bits to gather.
		v, nv, ok := e.slowDeltaOp(op, b, c, &r, fs, &m)
		if !ok {
			e.rewind(m)
			return false, false
		}
		r.put(fs, v, nv)
		r.at += dopSize
	}
	if r.nw == 0 {
		w.WriteBits(r.acc, int(r.na))
	} else {
		flushWords(w, fs, r.nw, r.acc, r.na)
	}
	e.commit(&m)
	return r.ds&1 != 0, true
}

// slowDeltaOp judges and codes operation op, which gather left: the
// windowed and wide leaves, which write their own bits (after the run so
// far), and those a key of which is off the proven range. It returns v in
// nv bits to gather, or ok false for the general path (op's value or key
// is not what the operations can code; m is the struct's take-back, whose
// adaptive states are saved before a leaf that changes them).
func (e *encoder) slowDeltaOp(op *dop, b, c unsafe.Pointer, r *flatRun, fs *flatScratch, m *mark) (v uint64, nv uint, ok bool) {
	w := e.w
	pb, pc := ptrAt(b, op.off), ptrAt(c, op.off)
	nv = 1
	switch op.kind {
	case dopQ32, dopQ32 + dopFull:
		return e.slowQ32Op(op, pb, pc, r, fs, m)
	case dopRangeInt, dopRangeInt + dopFull:
		vb, vc := loadInt(pb, op.mem), loadInt(pc, op.mem)
		if vc-op.lo > op.span {
			return 0, 0, false
		}
		if op.kind != dopRangeInt { // not reached: gather takes them
			if vb != vc {
				r.ds |= 1
			}
			v, nv = vc-op.lo, uint(op.width)
			break
		}
		r.ds |= 1 // a key too wide to gather with its 1 bit
		r.flushOne(w, fs)
		w.WriteBits(vc-op.lo, int(op.width))
		nv = 0
	case dopQuat + dopFull: // a composite's leaf
		kc, okc := packQuatOp(op, pc)
		if !okc {
			return 0, 0, false
		}
		if !memEqual(pb, pc, op.size) {
			kb, okb := packQuatOp(op, pb)
			if !okb {
				return 0, 0, false
			}
			if kb != kc {
				r.ds |= 1
			}
		}
		v, nv = kc, uint(op.width)
	case dopQuat:
		if memEqual(pb, pc, op.size) {
			break
		}
		kb, kc, okq := packQuatPair(op, pb, pc)
		if !okq {
			return 0, 0, false
		}
		if kb == kc {
			break
		}
		r.ds |= 1
		if op.flags&dopUndo != 0 {
			e.saveStates(m)
		}
		r.flushOne(w, fs)
		nv = 0
		e.writeQuatLeaf(op.n, &deltaKey{kb, kc})
	default: // dopOther
		if !eqNode(op.n, pb, pc, 0) {
			return 0, 0, false // written by the general path
		}
	}
	return v, nv, true
}

// slowQ32Op is slowDeltaOp of a float32 q leaf (pb, pc its values): one
// whose key is off the proven range, or, windowed, written by its window.
func (e *encoder) slowQ32Op(op *dop, pb, pc unsafe.Pointer, r *flatRun, fs *flatScratch, m *mark) (v uint64, nv uint, ok bool) {
	w := e.w
	ub, uc := *(*uint32)(pb), *(*uint32)(pc)
	kc, okc := q32Key(op, uc)
	if !okc {
		return 0, 0, false
	}
	kb, okb := q32Key(op, ub)
	if !okb && (op.kind == dopQ32 || ub != uc) {
		return 0, 0, false
	}
	if op.kind != dopQ32 { // a composite's leaf
		if ub != uc && kb != kc {
			r.ds |= 1
		}
		return kc, uint(op.width), true
	}
	if kb == kc {
		return 0, 1, true
	}
	r.ds |= 1
	if op.flags&dopWindow == 0 {
		return 1 | kc<<1, uint(op.width) + 1, true
	}
	if op.flags&dopUndo != 0 {
		e.saveStates(m)
	}
	r.flushOne(w, fs)
	if !e.writeWindow(op.n, kb, kc) {
		w.WriteBits(kc, int(op.width))
	}
	return 0, 0, true
}

// put gathers the low nv bits of v (at most 64).
func (r *flatRun) put(fs *flatScratch, v uint64, nv uint) {
	r.acc |= v << (r.na & 63)
	if r.na += nv; r.na >= 64 {
		fs.words[r.nw&(flatWords-1)] = r.acc
		r.nw++
		r.na -= 64
		r.acc = v >> 1 >> ((nv - r.na - 1) & 63)
	}
}

// flushOne writes the bits gathered and a 1 bit after them, and empties
// the gathering: a write of another kind follows.
func (r *flatRun) flushOne(w *bits.Writer, fs *flatScratch) {
	if r.nw == 0 {
		w.WriteBits(r.acc|1<<(r.na&63), int(r.na)+1)
	} else {
		flushWords(w, fs, r.nw, r.acc, r.na|1<<7)
	}
	r.acc, r.na, r.nw = 0, 0, 0
}

// flatRun is the state of encStructDeltaFlat's pass: the operation it is
// at, the bits it gathered (whole words in the scratch, then acc: na bits,
// 0 to 63) and whether its open structs changed (bit 0 of ds: a field of
// the innermost one did, above it those around it).
type flatRun struct {
	at      uintptr // the operation's byte offset in the list
	nw      int
	acc, ds uint64
	na      uint
}

// gather runs operations from r.at on, judging and gathering them, until
// the end or an operation that needs a call (left at r.at). It calls
// nothing, so that its state stays in registers.
func gather(ops []dop, b, c unsafe.Pointer, fs *flatScratch, r *flatRun) {
	// The operations by address: the list ends with dopStop, and a struct
	// knows the bytes to the operation after it.
	base := unsafe.Pointer(unsafe.SliceData(ops))
	at := unsafe.Add(base, r.at)
	nw, acc, ds, na := r.nw, r.acc, r.ds, r.na
	var kb, kc uint64
	var okb, okc bool
	for ; ; at = unsafe.Add(at, dopSize) {
		op := (*dop)(at)
		pb, pc := ptrAt(b, op.off), ptrAt(c, op.off)
		v, nv := uint64(0), uint(1)
		switch op.kind {
		case dopQ32:
			ub, uc := *(*uint32)(pb), *(*uint32)(pc)
			if ub == uc {
				goto zero
			}
			xb, xc := float64(math.Float32frombits(ub)), float64(math.Float32frombits(uc))
			if xc >= op.qlo && xc <= op.qhi && xb >= op.qlo && xb <= op.qhi {
				kc = uint64(int64(float64(xc*op.mul) + op.qoff)) // float64: no fused multiply-add
				kb = uint64(int64(float64(xb*op.mul) + op.qoff))
			} else {
				q := &op.n.q
				if kc, okc = q.IndexQuick(xc); !okc {
					goto out
				}
				if kb, okb = q.IndexQuick(xb); !okb {
					goto out
				}
			}
			if kb == kc {
				goto zero
			}
			if op.flags&dopWindow != 0 {
				goto out
			}
			ds |= 1
			v, nv = 1|kc<<1, uint(op.width)+1 // q widths are at most 53
		case dopRangeInt:
			var vb, vc uint64
			if op.flags&dopI64 != 0 {
				vb, vc = *(*uint64)(pb), *(*uint64)(pc)
			} else {
				vb, vc = loadInt(pb, op.mem), loadInt(pc, op.mem)
			}
			if vb == vc {
				goto zero
			}
			if vc-op.lo > op.span || op.flags&dopWide == 0 {
				goto out
			}
			ds |= 1
			v, nv = 1|(vc-op.lo)<<1, uint(op.width)+1
		case dopBool:
			vb, vc := *(*bool)(pb), *(*bool)(pc)
			if vb == vc {
				goto zero
			}
			ds |= 1
			v, nv = 1|uint64(b2u(vc))<<1, 2
		case dopStruct, dopComposite:
			if op.flags&dopAllQ == 0 && op.n.pod && spanEqual(pb, pc, op.size, uintptr(op.width)) {
				at = unsafe.Add(at, uintptr(op.span)-dopSize)
				goto zero
			}
			if op.flags&dopAllQ != 0 {
				// Its 1 bit and its fields, taken back for a 0 if none
				// changed; the general way below when a value is off the
				// proven range.
				pos := nw<<6 + int(na)
				acc, na, nw = gatherBits(fs, acc, na, nw, 1, 1)
				var ch uint64 // not 0: a key changed
				l := (*dop)(unsafe.Add(at, dopSize))
				if op.kind == dopComposite {
					for ; l.kind != dopEnd; l = (*dop)(unsafe.Add(unsafe.Pointer(l), dopSize)) {
						xb := float64(*(*float32)(ptrAt(b, l.off)))
						xc := float64(*(*float32)(ptrAt(c, l.off)))
						if !(xc >= l.qlo && xc <= l.qhi && xb >= l.qlo && xb <= l.qhi) {
							break
						}
						kc = uint64(int64(float64(xc*l.mul) + l.qoff)) // float64: no fused multiply-add
						kb = uint64(int64(float64(xb*l.mul) + l.qoff))
						ch |= kb ^ kc
						acc, na, nw = gatherBits(fs, acc, na, nw, kc, uint(l.width))
					}
				} else {
					for ; l.kind != dopEnd; l = (*dop)(unsafe.Add(unsafe.Pointer(l), dopSize)) {
						ub, uc := *(*uint32)(ptrAt(b, l.off)), *(*uint32)(ptrAt(c, l.off))
						if ub != uc {
							xb, xc := float64(math.Float32frombits(ub)), float64(math.Float32frombits(uc))
							if !(xc >= l.qlo && xc <= l.qhi && xb >= l.qlo && xb <= l.qhi) {
								break
							}
							kc = uint64(int64(float64(xc*l.mul) + l.qoff))
							kb = uint64(int64(float64(xb*l.mul) + l.qoff))
							if kb != kc {
								ch = 1
								acc, na, nw = gatherBits(fs, acc, na, nw, 1|kc<<1, uint(l.width)+1)
								continue
							}
						}
						acc, na, nw = gatherBits(fs, acc, na, nw, 0, 1)
					}
				}
				if l.kind == dopEnd && ch != 0 {
					at = unsafe.Pointer(l)
					ds |= 1
					continue
				}
				if k := pos >> 6; k < nw { // take back
					acc, nw = fs.words[k&(flatWords-1)], k
				}
				na = uint(pos) & 63
				acc &= 1<<na - 1
				if l.kind == dopEnd {
					at = unsafe.Pointer(l)
					goto zero
				}
				if op.n.pod && spanEqual(pb, pc, op.size, uintptr(op.width)) {
					at = unsafe.Add(at, uintptr(op.span)-dopSize)
					goto zero
				}
			}
			// Its 1 bit, taken back at its end if nothing in it changed.
			fs.opened[op.lo&(maxDeltaOps-1)] = nw<<6 + int(na)
			ds <<= 1
			v = 1
		case dopEnd:
			nv = 0
			if ds&1 == 0 { // take back its 1 bit and its fields, gather a 0
				pos := fs.opened[op.lo&(maxDeltaOps-1)]
				if k := pos >> 6; k < nw {
					acc, nw = fs.words[k&(flatWords-1)], k
				}
				na = uint(pos) & 63
				acc &= 1<<na - 1
				nv = 1
			}
			ds = ds>>1 | ds&1
		case dopQ32 + dopFull:
			ub, uc := *(*uint32)(pb), *(*uint32)(pc)
			xb, xc := float64(math.Float32frombits(ub)), float64(math.Float32frombits(uc))
			if xc >= op.qlo && xc <= op.qhi && xb >= op.qlo && xb <= op.qhi {
				kc = uint64(int64(float64(xc*op.mul) + op.qoff))
				kb = uint64(int64(float64(xb*op.mul) + op.qoff))
			} else {
				q := &op.n.q
				if kc, okc = q.IndexQuick(xc); !okc {
					goto out
				}
				if kb, okb = q.IndexQuick(xb); !okb {
					goto out
				}
			}
			if kb != kc {
				ds |= 1
			}
			v, nv = kc, uint(op.width)
		case dopRangeInt + dopFull:
			var vb, vc uint64
			if op.flags&dopI64 != 0 {
				vb, vc = *(*uint64)(pb), *(*uint64)(pc)
			} else {
				vb, vc = loadInt(pb, op.mem), loadInt(pc, op.mem)
			}
			if vc-op.lo > op.span {
				goto out
			}
			if vb != vc {
				ds |= 1
			}
			v, nv = vc-op.lo, uint(op.width)
		case dopBool + dopFull:
			vb, vc := *(*bool)(pb), *(*bool)(pc)
			if vb != vc {
				ds |= 1
			}
			v = uint64(b2u(vc))
		case dopStop:
			goto out
		default:
			goto out
		}
		acc |= v << (na & 63)
		if na += nv; na >= 64 { // a whole word: v's bits past it start acc
			fs.words[nw&(flatWords-1)] = acc
			nw++
			na -= 64
			acc = v >> 1 >> ((nv - na - 1) & 63)
		}
		continue
	zero: // an unchanged field's 0 bit
		if na++; na == 64 {
			fs.words[nw&(flatWords-1)] = acc
			nw++
			acc, na = 0, 0
		}
	}
out:
	r.at = uintptr(at) - uintptr(base)
	r.nw, r.acc, r.ds, r.na = nw, acc, ds, na
}

// gatherBits gathers the low nv bits of v (at most 64) after the na bits
// of acc and the nw words before them.
func gatherBits(fs *flatScratch, acc uint64, na uint, nw int, v uint64, nv uint) (uint64, uint, int) {
	acc |= v << (na & 63)
	if na += nv; na >= 64 { // a whole word: v's bits past it start acc
		fs.words[nw&(flatWords-1)] = acc
		nw++
		na -= 64
		acc = v >> 1 >> ((nv - na - 1) & 63)
	}
	return acc, na, nw
}

// flushWords writes the nw words gathered in fs, then the low na&127 bits
// of acc (at most 63) and, when na has bit 7, a 1 bit after them.
func flushWords(w *bits.Writer, fs *flatScratch, nw int, acc uint64, na uint) {
	for k := 0; k < nw; k++ {
		w.WriteBits(fs.words[k&(flatWords-1)], 64)
	}
	n := na & 127
	if na&(1<<7) == 0 {
		w.WriteBits(acc, int(n))
		return
	}
	w.WriteBits(acc|1<<(n&63), int(n)+1)
}

// spanEqual reports whether the size bytes at a and b are equal, compared
// unit bytes at a time (8, 4, 2 or 1, dividing size). Byte arrays compare
// in one load each where the machine loads unaligned words, byte by byte
// elsewhere. It is small enough to be inlined: gather calls nothing.
func spanEqual(a, b unsafe.Pointer, size, unit uintptr) bool {
	for k := uintptr(0); k < size; k += unit {
		x, y := ptrAt(a, k), ptrAt(b, k)
		if unit == 4 && *(*[4]byte)(x) != *(*[4]byte)(y) ||
			unit == 2 && *(*[2]byte)(x) != *(*[2]byte)(y) ||
			unit == 8 && *(*[8]byte)(x) != *(*[8]byte)(y) ||
			unit == 1 && *(*byte)(x) != *(*byte)(y) {
			return false
		}
	}
	return true
}

// spanUnit is the unit spanEqual compares size bytes in: the largest of
// 8, 4, 2 and 1 that divides it.
func spanUnit(size uintptr) uint8 {
	for _, u := range []uintptr{8, 4, 2} {
		if size%u == 0 {
			return uint8(u)
		}
	}
	return 1
}

// b2u is 1 for true.
func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// q32Key is the index of the float32 with bits u in the q leaf op, and
// false when it has none.
func q32Key(op *dop, u uint32) (uint64, bool) {
	x := float64(math.Float32frombits(u))
	if x >= op.qlo && x <= op.qhi {
		return uint64(int64(float64(x*op.mul) + op.qoff)), true // float64: no fused multiply-add
	}
	return q32KeySlow(&op.n.q, x)
}

// q32KeySlow is q32Key off the proven range.
func q32KeySlow(q *fields.Quantizer, x float64) (uint64, bool) {
	if k, ok := q.IndexQuick(x); ok {
		return k, true
	}
	k, err := q.Index(x)
	return k, err == nil
}

// packQuatOp is Pack of the quaternion leaf op of the struct at p: by
// Pack32 where it is sure (float32 components), else by Pack; ok is false
// when Pack returns an error.
func packQuatOp(op *dop, p unsafe.Pointer) (uint64, bool) {
	if g := op.grid; g != nil {
		o := &op.n.qoff
		if u, ok := g.Pack32(*(*float32)(ptrAt(p, o[0])), *(*float32)(ptrAt(p, o[1])),
			*(*float32)(ptrAt(p, o[2])), *(*float32)(ptrAt(p, o[3]))); ok {
			return u, true
		}
	}
	u, err := op.n.quat.Pack(loadQuat(op.n, p))
	return u, err == nil
}

// packQuatPair is packQuatOp of the baseline at pb and the current value
// at pc, in one call.
func packQuatPair(op *dop, pb, pc unsafe.Pointer) (kb, kc uint64, ok bool) {
	if g := op.grid; g != nil {
		o := &op.n.qoff
		kc, okc := g.Pack32(*(*float32)(ptrAt(pc, o[0])), *(*float32)(ptrAt(pc, o[1])),
			*(*float32)(ptrAt(pc, o[2])), *(*float32)(ptrAt(pc, o[3])))
		kb, okb := g.Pack32(*(*float32)(ptrAt(pb, o[0])), *(*float32)(ptrAt(pb, o[1])),
			*(*float32)(ptrAt(pb, o[2])), *(*float32)(ptrAt(pb, o[3])))
		if okb && okc {
			return kb, kc, true
		}
	}
	if kc, ok = packQuatOp(op, pc); !ok {
		return 0, 0, false
	}
	kb, ok = packQuatOp(op, pb)
	return kb, kc, ok
}

// writeQuatLeaf writes a changed quaternion against its baseline, from
// their packed forms.
func (e *encoder) writeQuatLeaf(n *node, k *deltaKey) {
	n.quat.WriteDelta(e.w, &e.ar.slot(n).quat, k.b, true, k.c)
}
