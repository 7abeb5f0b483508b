package bitwire

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Delta encoding: what a receiver holding base needs to rebuild cur. Every
// field of a struct gets one changed bit; an unchanged field costs nothing
// more. Changes are judged on quantized values (equal.go), each value once:
// a subtree's delta is written and taken back when nothing in it changed.
// Writing and reading of each form sit side by side below; entity sets are
// in entity.go, maps in maps.go, and the wire codings of windows, relative
// quaternions and index sets in package fields.

// ---- compile-time delta parameters ----

// setDelta compiles the dmin/dmax window of a scalar, in steps of its
// precision (1 for integers). On a container the window belongs to the
// scalars it holds, which inherit the tag.
func (n *node) setDelta(path string) error {
	s := n.spec
	if !s.hasDelta {
		return nil
	}
	switch n.code {
	case cStruct:
		return nil // the leaves that inherit the field's coding carry the window
	case cSlice, cPtr:
		return nil // the elements carry it; a slice's delta goes element by element already
	case cArray:
		// A changed array is sent in full, but one whose elements carry a
		// window goes element by element, as a struct of them would.
		if el := n.elem; !el.hasD && !el.byElem {
			return badTag(path, "dmin/dmax on an array of %s: a window applies to an array's elements when they are q, range, bits or fixed scalars (or arrays of them); for structs, put it on their fields", el.typ)
		}
		n.byElem = true
		return nil
	case cMap:
		return badTag(path, "dmin/dmax on a map: a changed value of a map is sent in full")
	}
	a, _ := parseFloatBound("dmin", s.dmin)
	b, _ := parseFloatBound("dmax", s.dmax)
	if n.row.step == nil {
		return badTag(path, "dmin/dmax apply to q, range, bits and fixed codings only")
	}
	step := n.row.step(n)
	w, err := fields.NewWindow(a, b, step)
	if err != nil {
		return badTag(path, "dmin=%s dmax=%s holds no whole step of %g", s.dmin, s.dmax, step)
	}
	// The escape's unary length is bounded by the value in full: a fixed
	// width, or the largest of a variable one.
	full := -1
	if n.row.width != nil {
		full = n.row.width(n)
	} else if n.row.maxBits != nil {
		full = n.row.maxBits(n)
	}
	n.win, n.hasD = w.WithFullBits(full), true
	return nil
}

// ---- scratch space for index lists ----

type arena struct {
	buf     []int32
	writers []*bits.Writer // spare scratch writers
	quats   []deltaSlot    // the adaptive state of each node coded so far
	saved   []deltaSlot    // a stack of quats saved by saveQuats
	marks   []savedStates  // a stack of states saved by markStates
	rt      *modelRT       // the codec's model (code tables) or trainer, or nil
	words   []uint64       // scratch bit sets (changed fields of model-coded structs)
	flat    flatScratch    // encStructDeltaFlat's scratch
}

// saveQuats saves the quaternion states before a pass that may be undone
// (the fused passes over slices, redone by the plain pass on an error) and
// returns the mark to give restoreQuats or dropQuats.
func (a *arena) saveQuats() int {
	mark := len(a.saved)
	a.saved = append(a.saved, a.quats...)
	return mark
}

// restoreQuats puts back the states saved at mark.
func (a *arena) restoreQuats(mark int) {
	a.quats = append(a.quats[:0], a.saved[mark:]...)
	a.saved = a.saved[:mark]
}

// dropQuats forgets the states saved at mark.
func (a *arena) dropQuats(mark int) { a.saved = a.saved[:mark] }

// deltaSlot is the adaptive state of the relative quaternions or the
// windowed values of one node (one field of one struct type, or the
// element of an array or slice), kept for one delta message: packets are
// lost, so no state crosses messages.
type deltaSlot struct {
	n uintptr // the node's address: nodes live as long as their cached plan,
	// and a pointer-free slot is copied without write barriers
	quat fields.QuatDeltaState
	win  fields.WindowState
}

// slot returns node n's state in this message, starting it at the node's
// first value. A message holds few such fields: a linear search.
func (a *arena) slot(n *node) *deltaSlot {
	key := uintptr(unsafe.Pointer(n))
	for i := range a.quats {
		if a.quats[i].n == key {
			return &a.quats[i]
		}
	}
	sl := deltaSlot{n: key}
	if n.code == cQuat {
		sl.quat = fields.NewQuatDeltaState()
	} else {
		sl.win = n.win.NewState()
	}
	a.quats = append(a.quats, sl)
	return &a.quats[len(a.quats)-1]
}

// writer returns an empty scratch writer; release gives it back.
func (a *arena) writer() *bits.Writer {
	if k := len(a.writers); k > 0 {
		w := a.writers[k-1]
		a.writers = a.writers[:k-1]
		w.Reset(w.Bytes()[:0])
		return w
	}
	return new(bits.Writer)
}

func (a *arena) release(w *bits.Writer) { a.writers = append(a.writers, w) }

var arenas = sync.Pool{New: func() any { return new(arena) }}

// take returns an empty list with room for n entries.
func (a *arena) take(n int) []int32 {
	if cap(a.buf)-len(a.buf) < n {
		nb := make([]int32, len(a.buf), 2*cap(a.buf)+n)
		copy(nb, a.buf)
		a.buf = nb
	}
	s := a.buf[len(a.buf) : len(a.buf) : len(a.buf)+n]
	a.buf = a.buf[:len(a.buf)+n]
	return s
}

// ---- structs ----

// encStructDelta writes one changed bit per field (but skip, the id field of
// an entity, which never changes) and each changed field's delta. It
// reports whether any field changed.
func (e *encoder) encStructDelta(p *plan, b, c unsafe.Pointer, skip int) (bool, error) {
	e.depth++
	if e.depth > e.maxDepth {
		return false, &limitError{ErrInvalidValue, "nesting (a cyclic value?)", e.depth, e.maxDepth}
	}
	if e.ar.rt != nil {
		dirty, err := e.encStructDeltaModel(p, b, c, skip)
		if err == nil {
			e.depth--
		}
		return dirty, err
	}
	if dp := p.dflat; dp != nil && e.ar.rt == nil && !e.general && e.depth+dp.depth-1 <= e.maxDepth {
		if changed, ok := e.encStructDeltaFlat(dp, b, c, skip); ok {
			e.depth--
			return changed, nil
		}
	}
	dirty := false
	for i := range p.fields {
		if i == skip {
			continue
		}
		f := &p.fields[i]
		var id, saved, start int
		if e.stats != 0 { // Stats hooks: the field's bits on its path
			id, saved, start = e.enter(f.name)
		}
		pb, pc := ptrAt(b, f.off), ptrAt(c, f.off)
		var changed bool
		var err error
		switch code := f.node.code; {
		case code == cQ:
			// The commonest changed leaves: compare and write with each
			// side quantized once.
			changed, err = e.encQDelta(f.node, pb, pc)
		case code == cQuat:
			changed, err = e.encQuatDelta(f.node, pb, pc)
		default:
			ok := false
			if f.once && !e.general {
				changed, ok = e.encSubtree(f.node, pb, pc)
			}
			if !ok {
				changed = !eqNode(f.node, pb, pc, 0)
				e.w.WriteBool(changed)
				if changed {
					err = e.encValueDelta(f.node, pb, pc)
				}
			}
		}
		if e.stats != 0 {
			e.leave(id, saved, start, changed)
		}
		if err != nil {
			return false, wrapField(err, f.name, e.w.Len())
		}
		dirty = dirty || changed
		if e.debug {
			e.writeSentinel()
		}
	}
	e.depth--
	return dirty, nil
}

// encSubtree writes the changed bit and the delta of a value whose change
// depends on a subtree (a struct, a slice, an entity set, a map), judging it
// while writing: the delta follows a 1 bit and is taken back for a 0 bit if
// nothing in it changed, rather than comparing it first and judging each
// changed value again as it is written. On an error (a value, or a depth
// limit that an unchanged value would not reach) it is taken back too and
// ok is false: the caller compares, and reports the error where it always
// has.
func (e *encoder) encSubtree(n *node, b, c unsafe.Pointer) (changed, ok bool) {
	if n.pod && memEqual(b, c, n.size) {
		e.w.WriteBool(false)
		return false, true
	}
	m := e.markStates()
	e.w.WriteBool(true)
	var err error
	switch n.code {
	case cStruct:
		changed, err = e.encStructDelta(n.sub, b, c, -1)
	case cSlice:
		if n.idField >= 0 {
			changed, err = e.encEntityDelta(n, b, c)
		} else {
			changed, err = e.encSliceDelta(n, b, c)
		}
	default:
		changed, err = e.encMapDelta(n, b, c)
	}
	if err != nil {
		e.rewind(m)
		return false, false
	}
	e.commit(&m)
	if !changed {
		e.unwrite(m)
		e.w.WriteBool(false)
	}
	return changed, true
}

// judgedOnce reports whether the delta encoder judges a field of node n
// while writing it (encSubtree): structs that are not composite, slices and
// maps, at most maxShallow deep, so that no depth limit tells the two ways
// of judging apart.
func judgedOnce(n *node) bool {
	switch n.code {
	case cStruct:
		return !n.spec.composite && n.sub.nest <= maxShallow
	case cSlice, cMap:
		return nodeNest(n, map[*plan]bool{}) <= maxShallow
	}
	return false
}

// encQDelta writes a quantized float's changed bit and, when it changed,
// its value: the same bits as eqNode followed by encValueDelta, with each
// index computed once. It reports whether the value changed.
func (e *encoder) encQDelta(n *node, b, c unsafe.Pointer) (bool, error) {
	if n.pod && memEqual(b, c, n.size) {
		e.w.WriteBool(false)
		return false, nil
	}
	kc, err := qKey(n, c)
	if err != nil {
		e.w.WriteBool(true) // as eqNode would say; the error stops the message
		return true, err
	}
	kb, errb := qKey(n, b)
	if errb == nil && kb == kc {
		e.w.WriteBool(false)
		return false, nil
	}
	e.w.WriteBool(true)
	if n.hasD {
		if errb != nil {
			return true, fmt.Errorf("baseline: %w", errb)
		}
		if e.writeWindow(n, kb, kc) {
			return true, nil
		}
	}
	e.w.WriteBits(kc, n.q.Bits())
	return true, nil
}

// decStructDeltaKernel is decStructDelta by decStructDeltaFlat, for a
// struct whose operations ops it reads (bits: dp.decBits or
// dp.decBitsNoID, > 0), within the depth limit as decStructDelta checks
// it. It reports whether it did; if not, the reader is where it was and
// the caller runs decStructDelta, which reports the error.
func (d *decoder) decStructDeltaKernel(dp *deltaPlan, ops []dop, bits int, b, dst unsafe.Pointer) bool {
	if d.general || d.debug || d.ar.rt != nil || d.depth+dp.depth > d.maxDepth {
		return false // (a model's codes go through decStructDeltaModel)
	}
	m := readMark(*d.r)
	if !dp.decState {
		if d.decStructDeltaFlat(ops, dp.size, bits, b, dst) {
			return true
		}
		d.rewind(&m)
		return false
	}
	states := d.ar.saveQuats()
	if d.decStructDeltaFlat(ops, dp.size, bits, b, dst) {
		d.ar.dropQuats(states)
		return true
	}
	d.ar.restoreQuats(states)
	d.rewind(&m)
	return false
}

func (d *decoder) decStructDelta(p *plan, b, dst unsafe.Pointer, skip int) error {
	d.depth++
	if d.depth > d.maxDepth {
		return &limitError{ErrMalformed, "nesting", d.depth, d.maxDepth}
	}
	if d.ar.rt != nil {
		if err := d.decStructDeltaModel(p, b, dst, skip); err != nil {
			return err
		}
		d.depth--
		return nil
	}
	fields := p.fields
	for i := range fields {
		f := &fields[i]
		n := f.node
		pb, pd := ptrAt(b, f.off), ptrAt(dst, f.off)
		changed := false
		if i != skip {
			var err error
			if changed, err = d.r.ReadBool(); err != nil {
				return wrapField(err, f.name, d.r.Pos())
			}
		}
		var err error
		if !changed {
			if !n.pod {
				copyNode(n, pd, pb)
			} else if pb != pd {
				copyPod(pd, pb, n.size)
			}
			if i == skip {
				continue // the id: neither a changed bit nor a sentinel
			}
		} else {
			switch f.dk {
			case dkQ: // the commonest changed leaves, without two dispatches
				var i uint64
				if i, err = n.q.ReadIndex(d.r); err == nil {
					storeFloat(pd, n.mem, n.q.Value(i))
				}
			case dkRangeInt:
				var v int64
				if v, err = n.irng.Read(d.r); err == nil {
					storeInt(pd, n.mem, uint64(v))
				}
			case dkFlat: // decStruct's flat path, without its call
				if fp := n.sub.flat; !d.general && d.depth+fp.depth <= d.maxDepth {
					m := readMark(*d.r)
					if d.decFlat(fp, pd) == nil {
						break
					}
					d.rewind(&m) // decStruct reports the error with its field path
				}
				err = d.decStruct(n.sub, pd)
			default:
				err = d.decValueDelta(n, pb, pd)
			}
		}
		if err == nil && d.debug {
			err = d.sentinel()
		}
		if err != nil {
			return wrapField(err, f.name, d.r.Pos())
		}
	}
	d.depth--
	return nil
}

// ---- one changed value ----

// encValueDelta writes the new value of a field known to have changed.
func (e *encoder) encValueDelta(n *node, b, c unsafe.Pointer) error {
	switch n.code {
	case cStruct:
		if n.spec.composite {
			return e.encStruct(n.sub, c)
		}
		_, err := e.encStructDelta(n.sub, b, c, -1)
		return err
	case cQuat:
		qc, err := n.quat.Pack(loadQuat(n, c))
		if err != nil {
			return err
		}
		qb, errb := n.quat.Pack(loadQuat(n, b))
		e.writeQuatDelta(n, qb, errb == nil, qc)
		return nil
	case cSlice:
		if n.idField >= 0 {
			_, err := e.encEntityDelta(n, b, c)
			return err
		}
		_, err := e.encSliceDelta(n, b, c)
		return err
	case cPtr:
		pb, pc := *(*unsafe.Pointer)(b), *(*unsafe.Pointer)(c)
		e.w.WriteBool(pc != nil)
		switch {
		case pc == nil:
			return nil
		case pb == nil:
			return e.encNode(n.elem, pc)
		}
		return e.encValueDelta(n.elem, pb, pc)
	case cMap:
		_, err := e.encMapDelta(n, b, c)
		return err
	case cArray:
		if n.byElem {
			return e.encArrayDelta(n, b, c)
		}
	}
	if rt := e.ar.rt; rt != nil {
		if t := rt.lay.table(n.uid); t >= 0 {
			return e.encScalarModel(rt, n, t, b, c)
		}
	}
	if n.hasD {
		kb, err := scalarKey(n, b)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		kc, err := scalarKey(n, c)
		if err != nil {
			return err
		}
		if e.writeWindow(n, kb, kc) {
			return nil
		}
	}
	return e.encNode(n, c)
}

// writeWindow writes a changed scalar's window bit and, when its
// difference from the baseline lies in the window, the difference
// (fields.Window). It reports whether it did; if not, the caller writes the
// value in full.
func (e *encoder) writeWindow(n *node, kb, kc uint64) bool {
	return n.win.Write(e.w, &e.ar.slot(n).win, kb, kc)
}

func (d *decoder) decValueDelta(n *node, b, dst unsafe.Pointer) error {
	switch n.code {
	case cStruct:
		if n.spec.composite {
			return d.decStruct(n.sub, dst)
		}
		if dp := n.sub.dflat; dp != nil && dp.decBits > 0 && d.decStructDeltaKernel(dp, dp.ops, dp.decBits, b, dst) {
			return nil
		}
		return d.decStructDelta(n.sub, b, dst, -1)
	case cQuat:
		return d.decQuatDelta(n, b, dst)
	case cSlice:
		if n.idField >= 0 {
			return d.decEntityDelta(n, b, dst)
		}
		return d.decSliceDelta(n, b, dst)
	case cPtr:
		present, err := d.r.ReadBool()
		if err != nil {
			return err
		}
		pb, pd := *(*unsafe.Pointer)(b), (*unsafe.Pointer)(dst)
		if !present {
			*pd = nil
			return nil
		}
		if *pd == nil || *pd == pb {
			*pd = reflect.New(n.typ.Elem()).UnsafePointer()
		}
		if pb == nil {
			return d.decNode(n.elem, *pd)
		}
		return d.decValueDelta(n.elem, pb, *pd)
	case cMap:
		return d.decMapDelta(n, b, dst)
	case cArray:
		if n.byElem {
			return d.decArrayDelta(n, b, dst)
		}
	}
	if rt := d.ar.rt; rt != nil {
		if t := rt.lay.table(n.uid); t >= 0 {
			return d.decScalarModel(rt, n, t, b, dst)
		}
	}
	if n.hasD {
		diff, in, err := n.win.Read(d.r, &d.ar.slot(n).win)
		if err != nil {
			return err
		}
		if in {
			kb, err := scalarKey(n, b)
			if err != nil {
				return fmt.Errorf("baseline: %w", err)
			}
			return storeKey(n, dst, kb+uint64(diff))
		}
	}
	return d.decNode(n, dst)
}

// ---- arrays element by element ----

// encArrayDelta writes a changed array whose elements carry a window as a
// struct of its elements would be written: one changed bit an element,
// and each changed element's delta.
func (e *encoder) encArrayDelta(n *node, b, c unsafe.Pointer) error {
	for i := 0; i < n.count; i++ {
		off := uintptr(i) * n.stride
		pb, pc := ptrAt(b, off), ptrAt(c, off)
		changed := !eqNode(n.elem, pb, pc, 0)
		e.w.WriteBool(changed)
		if !changed {
			continue
		}
		if err := e.encValueDelta(n.elem, pb, pc); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", i), e.w.Len())
		}
	}
	return nil
}

func (d *decoder) decArrayDelta(n *node, b, dst unsafe.Pointer) error {
	for i := 0; i < n.count; i++ {
		off := uintptr(i) * n.stride
		pb, pd := ptrAt(b, off), ptrAt(dst, off)
		changed, err := d.r.ReadBool()
		if err == nil && changed {
			err = d.decValueDelta(n.elem, pb, pd)
		} else if err == nil {
			copyNode(n.elem, pd, pb)
		}
		if err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", i), d.r.Pos())
		}
	}
	return nil
}

// ---- quaternions relative to their baseline ----

// encQuatDelta writes a quaternion's changed bit and, when it changed, its
// delta: the same bits as eqNode followed by encValueDelta, with each side
// packed once. It reports whether the quaternion changed.
func (e *encoder) encQuatDelta(n *node, b, c unsafe.Pointer) (bool, error) {
	if n.pod && memEqual(b, c, n.size) {
		e.w.WriteBool(false)
		return false, nil
	}
	qc, err := n.quat.Pack(loadQuat(n, c))
	if err != nil {
		e.w.WriteBool(true) // as eqNode would say; the error stops the message
		return true, err
	}
	qb, errb := n.quat.Pack(loadQuat(n, b))
	if errb == nil && qb == qc {
		e.w.WriteBool(false)
		return false, nil
	}
	e.w.WriteBool(true)
	e.writeQuatDelta(n, qb, errb == nil, qc)
	return true, nil
}

// writeQuatDelta writes a changed quaternion against its baseline
// (fields.Quat.WriteDelta); okb tells whether the baseline could be packed
// at all.
func (e *encoder) writeQuatDelta(n *node, qb uint64, okb bool, qc uint64) {
	if rt := e.ar.rt; rt != nil {
		e.writeQuatModel(rt, n, qb, okb, qc)
		return
	}
	n.quat.WriteDelta(e.w, &e.ar.slot(n).quat, qb, okb, qc)
}

func (d *decoder) decQuatDelta(n *node, b, dst unsafe.Pointer) error {
	bq := loadQuat(n, b)
	var u uint64
	var err error
	if rt := d.ar.rt; rt != nil {
		u, err = n.quat.ReadDeltaCodes(d.r, rt.quats[n.uid-rt.lay.base], &bq)
	} else {
		u, err = n.quat.ReadDelta(d.r, &d.ar.slot(n).quat, &bq)
	}
	if err != nil {
		return err
	}
	return storePacked(n, dst, u)
}

// storePacked stores the quaternion of packed code u at dst.
func storePacked(n *node, dst unsafe.Pointer, u uint64) error {
	v, err := n.quat.Unpack(u)
	if err != nil {
		return err
	}
	storeQuat(n, dst, v)
	return nil
}

// ---- slices matched by index ----

// encSliceDelta writes the new length, the set of changed indexes among
// those both slices have, their deltas, then the appended elements in full.
// It reports whether the slice changed.
func (e *encoder) encSliceDelta(n *node, b, c unsafe.Pointer) (bool, error) {
	if el := n.elem; !e.general && el.code == cStruct && !el.spec.composite && el.sub.nest <= maxShallow {
		m := e.markStates()
		if changed, err := e.encSliceDeltaFused(n, b, c); err == nil {
			e.commit(&m)
			return changed, nil
		}
		// as in encEntityDelta: the plain pass places the error
		e.rewind(m)
	}
	sb, sc := (*sliceHeader)(b), (*sliceHeader)(c)
	if err := e.writeLen(sc.len, n.maxlen); err != nil {
		return false, err
	}
	if e.stats != 0 {
		id, saved, start := e.enter("[]")
		defer e.leave(id, saved, start, true)
	}
	common := min(sb.len, sc.len)
	mark := len(e.ar.buf)
	defer func() { e.ar.buf = e.ar.buf[:mark] }()
	changed := e.ar.take(common)
	for i := 0; i < common; i++ {
		off := uintptr(i) * n.stride
		if !eqNode(n.elem, ptrAt(sb.data, off), ptrAt(sc.data, off), 0) {
			changed = append(changed, int32(i))
		}
	}
	e.writeIndexSet(changed, common, false)
	for _, i := range changed {
		off := uintptr(i) * n.stride
		if err := e.encValueDelta(n.elem, ptrAt(sb.data, off), ptrAt(sc.data, off)); err != nil {
			return false, wrapField(err, fmt.Sprintf("[%d]", i), e.w.Len())
		}
	}
	for i := common; i < sc.len; i++ {
		if err := e.encNode(n.elem, ptrAt(sc.data, uintptr(i)*n.stride)); err != nil {
			return false, wrapField(err, fmt.Sprintf("[%d]", i), e.w.Len())
		}
	}
	return sb.len != sc.len || len(changed) > 0, nil
}

// encSliceDeltaFused writes what encSliceDelta writes for a slice of
// structs, judging and encoding each element both slices have in one pass,
// as encEntityDeltaFused does for entities: an element's delta goes to a
// scratch writer, and is dropped again if no field of it changed. Its
// errors carry bit offsets of the scratch writer; encSliceDelta reruns the
// plain pass for them.
func (e *encoder) encSliceDeltaFused(n *node, b, c unsafe.Pointer) (bool, error) {
	sb, sc := (*sliceHeader)(b), (*sliceHeader)(c)
	if err := e.writeLen(sc.len, n.maxlen); err != nil {
		return false, err
	}
	common := min(sb.len, sc.len)
	mark := len(e.ar.buf)
	sw := e.ar.writer()
	defer func() { e.ar.buf = e.ar.buf[:mark]; e.ar.release(sw) }()
	se := *e // with the scratch writer, as in encEntityDeltaFused
	se.w = sw
	changed := e.ar.take(common)
	el := n.elem
	for i := 0; i < common; i++ {
		off := uintptr(i) * n.stride
		pb, pc := ptrAt(sb.data, off), ptrAt(sc.data, off)
		if el.pod && memEqual(pb, pc, el.size) {
			continue
		}
		m := se.mark()
		ch, err := se.encStructDelta(el.sub, pb, pc, -1)
		if err != nil {
			return false, err
		}
		if ch {
			changed = append(changed, int32(i))
		} else {
			se.unwrite(m)
		}
	}
	e.writeIndexSet(changed, common, false)
	e.w.WriteFrom(sw)
	e.flagged, e.neg = se.flagged, se.neg
	for i := common; i < sc.len; i++ {
		if err := e.encNode(el, ptrAt(sc.data, uintptr(i)*n.stride)); err != nil {
			return false, wrapField(err, fmt.Sprintf("[%d]", i), e.w.Len())
		}
	}
	return sb.len != sc.len || len(changed) > 0, nil
}

func (d *decoder) decSliceDelta(n *node, b, dst unsafe.Pointer) error {
	sb, sd := (*sliceHeader)(b), (*sliceHeader)(dst)
	l, err := d.readLen(n, 0) // the elements are bounded below, by what is new
	if err != nil {
		return err
	}
	common := min(sb.len, l)
	if added := l - common; added > 0 && n.emin > 0 && added > d.r.Remaining()/n.emin {
		return fmt.Errorf("%w: %d new elements need more input than remains", ErrUnexpectedEnd, added)
	}
	if err := d.chargeElems(l-common, n.stride); err != nil { // the common part is the baseline's
		return err
	}
	mark := len(d.ar.buf)
	defer func() { d.ar.buf = d.ar.buf[:mark] }()
	changed, err := d.readIndexSet(d.ar, common, -1)
	if err != nil {
		return err
	}
	if l == 0 {
		*sd = sliceHeader{}
		return nil
	}
	growSlice(n, sd, l, sb.data)
	j := 0
	for i := 0; i < common; i++ {
		off := uintptr(i) * n.stride
		pb, pd := ptrAt(sb.data, off), ptrAt(sd.data, off)
		if j < len(changed) && int(changed[j]) == i {
			j++
			if err := d.decValueDelta(n.elem, pb, pd); err != nil {
				return wrapField(err, fmt.Sprintf("[%d]", i), d.r.Pos())
			}
			continue
		}
		copyNode(n.elem, pd, pb)
	}
	for i := common; i < l; i++ {
		if err := d.decNode(n.elem, ptrAt(sd.data, uintptr(i)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", i), d.r.Pos())
		}
	}
	return nil
}

// writeIndexSet writes an index set (fields.WriteIndexSet).
func (e *encoder) writeIndexSet(idx []int32, n int, countKnown bool) {
	fields.WriteIndexSet(e.w, idx, n, countKnown)
}

// readIndexSet reads a set of indexes in [0, n) into scratch space of ar;
// count < 0 means the count is coded.
func (d *decoder) readIndexSet(ar *arena, n, count int) ([]int32, error) {
	if count < 0 {
		c, err := fields.ReadIndexCount(d.r, n)
		if err != nil {
			return nil, err
		}
		count = c
	}
	return fields.ReadIndexSet(d.r, ar.take(count), n, count)
}
