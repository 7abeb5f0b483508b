package bitwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	mbits "math/bits"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Delta encoding: what a receiver holding base needs to rebuild cur. Every
// field of a struct gets one changed bit; an unchanged field costs nothing
// more. Changes are judged on quantized values (eqNode). Writing and reading
// of each form sit side by side below.

// ---- compile-time delta parameters ----

// setDelta computes the dmin/dmax window of a scalar in steps of its
// precision: the difference from the baseline is coded in dbits bits when it
// lies in [dlo, dhi].
func (n *node) setDelta(path string) error {
	s := n.spec
	if !s.hasDelta {
		return nil
	}
	a, _ := parseFloatBound("dmin", s.dmin)
	b, _ := parseFloatBound("dmax", s.dmax)
	step := 1.0
	switch n.code {
	case cStruct:
		return nil // the leaves that inherit the field's coding carry the window
	case cQ:
		step = n.q.Step()
	case cFixed:
		step = n.fx.Prec()
	case cRange, cBits:
	default:
		return badTag(path, "dmin/dmax apply to q, range, bits and fixed codings only")
	}
	lo := math.Ceil(a/step - 1e-9)
	hi := math.Floor(b/step + 1e-9)
	if lo > hi || lo < -(1<<53) || hi > 1<<53 {
		return badTag(path, "dmin=%s dmax=%s holds no whole step of %g", s.dmin, s.dmax, step)
	}
	n.dlo, n.dhi = int64(lo), int64(hi)
	n.dbits = fields.BitsRequired(uint64(n.dhi - n.dlo))
	n.hasD = true
	return nil
}

// ---- quantized scalar values ----

// scalarKey returns the value a scalar is coded as, in the units its delta
// window counts: a quantization index, an integer, a fixed-point integer.
// Two values with the same key encode to the same bits.
func scalarKey(n *node, p unsafe.Pointer) (uint64, error) {
	switch n.code {
	case cBool:
		if *(*bool)(p) {
			return 1, nil
		}
		return 0, nil
	case cBits, cVarint, cBitlen:
		return loadInt(p, n.mem), nil
	case cRange:
		x := loadInt(p, n.mem)
		if n.clamp {
			if n.mem.signed() {
				return uint64(n.irng.Clamp(int64(x))), nil
			}
			return n.urng.Clamp(x), nil
		}
		return x, nil
	case cQ:
		return qKey(n, p)
	case cFloat:
		if n.mem == mF32 {
			return uint64(*(*uint32)(p)), nil
		}
		return *(*uint64)(p), nil
	case cFixed:
		i, err := n.fx.ToInt(loadFloat(p, n.mem))
		return uint64(i), err
	}
	return 0, nil
}

// storeKey stores a key decoded from a delta, checking it is a value the
// field can hold.
func storeKey(n *node, p unsafe.Pointer, k uint64) error {
	switch n.code {
	case cQ:
		if k > n.q.Steps() {
			return fmt.Errorf("%w: quantization index %d over %d", ErrOutOfRange, k, n.q.Steps())
		}
		storeFloat(p, n.mem, n.q.Value(k))
	case cRange:
		if n.mem.signed() {
			if int64(k) < n.irng.Min() || int64(k) > n.irng.Max() {
				return fmt.Errorf("%w: %d outside %d..%d", ErrOutOfRange, int64(k), n.irng.Min(), n.irng.Max())
			}
		} else if k < n.urng.Min() || k > n.urng.Max() {
			return fmt.Errorf("%w: %d outside %d..%d", ErrOutOfRange, k, n.urng.Min(), n.urng.Max())
		}
		storeInt(p, n.mem, k)
	case cBits:
		if n.mem.signed() {
			if !fields.FitsInt(int64(k), n.n) {
				return fmt.Errorf("%w: %d does not fit %d bits", ErrOutOfRange, int64(k), n.n)
			}
		} else if !fields.FitsUint(k, n.n) {
			return fmt.Errorf("%w: %d does not fit %d bits", ErrOutOfRange, k, n.n)
		}
		storeInt(p, n.mem, k)
	case cFixed:
		storeFloat(p, n.mem, n.fx.FromInt(int64(k)))
	}
	return nil
}

// ---- equality after quantization ----

func eqStruct(p *plan, a, b unsafe.Pointer, depth int) bool {
	if depth > DefaultMaxDepth {
		return false
	}
	for i := range p.fields {
		f := &p.fields[i]
		if !eqNode(f.node, ptrAt(a, f.off), ptrAt(b, f.off), depth) {
			return false
		}
	}
	return true
}

func eqNode(n *node, a, b unsafe.Pointer, depth int) bool {
	if n.pod && memEqual(a, b, n.size) {
		return true // the same bits code the same way
	}
	switch n.code {
	case cString:
		return *(*string)(a) == *(*string)(b)
	case cBytes:
		return bytes.Equal(*(*[]byte)(a), *(*[]byte)(b))
	case cQuat:
		qa, ea := n.quat.Pack(loadQuat(n, a))
		qb, eb := n.quat.Pack(loadQuat(n, b))
		return ea == nil && eb == nil && qa == qb
	case cTime:
		ta, tb := (*time.Time)(a), (*time.Time)(b)
		return ta.Unix() == tb.Unix() && ta.Nanosecond() == tb.Nanosecond()
	case cStruct:
		return eqStruct(n.sub, a, b, depth+1)
	case cArray:
		return eqElems(n, a, b, n.count, depth)
	case cSlice:
		sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
		return sa.len == sb.len && eqElems(n, sa.data, sb.data, sa.len, depth)
	case cPtr:
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa == nil || pb == nil {
			return pa == nil && pb == nil
		}
		return eqNode(n.elem, pa, pb, depth+1)
	case cMap:
		ma, mb := reflect.NewAt(n.typ, a).Elem(), reflect.NewAt(n.typ, b).Elem()
		if ma.Len() != mb.Len() {
			return false
		}
		it := ma.MapRange()
		for it.Next() {
			vb := mb.MapIndex(it.Key())
			if !vb.IsValid() {
				return false
			}
			va := reflect.New(n.typ.Elem())
			va.Elem().Set(it.Value())
			cb := reflect.New(n.typ.Elem())
			cb.Elem().Set(vb)
			if !eqNode(n.elem, va.UnsafePointer(), cb.UnsafePointer(), depth+1) {
				return false
			}
		}
		return true
	}
	ka, ea := scalarKey(n, a)
	kb, eb := scalarKey(n, b)
	return ea == nil && eb == nil && ka == kb
}

func eqElems(n *node, a, b unsafe.Pointer, count, depth int) bool {
	for i := 0; i < count; i++ {
		off := uintptr(i) * n.stride
		if !eqNode(n.elem, ptrAt(a, off), ptrAt(b, off), depth) {
			return false
		}
	}
	return true
}

// ---- deep copy (what an unchanged field takes from the baseline) ----

func copyStruct(p *plan, dst, src unsafe.Pointer) {
	if dst == src {
		return
	}
	for i := range p.fields {
		f := &p.fields[i]
		copyNode(f.node, ptrAt(dst, f.off), ptrAt(src, f.off))
	}
}

// copyNode makes dst's value equal to src's without sharing any mutable
// memory with it (slices, pointees and maps are copied), reusing dst's own
// storage where it can.
func copyNode(n *node, dst, src unsafe.Pointer) {
	if dst == src {
		return
	}
	if n.pod {
		copyPod(dst, src, n.size)
		return
	}
	// Every scalar is pointer-free and was copied above; what is left holds
	// pointers somewhere.
	switch n.code {
	case cString:
		*(*string)(dst) = *(*string)(src)
	case cBytes:
		s, d := *(*[]byte)(src), (*[]byte)(dst)
		if s == nil {
			*d = nil
			return
		}
		buf := *d
		if cap(buf) < len(s) || (len(buf) > 0 && &buf[:1][0] == &s[:1][0]) {
			buf = make([]byte, len(s))
		}
		buf = buf[:len(s)]
		copy(buf, s)
		*d = buf
	case cQuat:
		// a struct with X, Y, Z, W and fields of its own, some with
		// pointers: only the components belong to this node
		storeQuat(n, dst, loadQuat(n, src))
	case cTime:
		*(*time.Time)(dst) = *(*time.Time)(src)
	case cStruct:
		copyStruct(n.sub, dst, src)
	case cArray:
		for i := 0; i < n.count; i++ {
			off := uintptr(i) * n.stride
			copyNode(n.elem, ptrAt(dst, off), ptrAt(src, off))
		}
	case cSlice:
		ss, ds := (*sliceHeader)(src), (*sliceHeader)(dst)
		if ss.len == 0 {
			*ds = sliceHeader{}
			return
		}
		growSlice(n, ds, ss.len, ss.data)
		for i := 0; i < ss.len; i++ {
			off := uintptr(i) * n.stride
			copyNode(n.elem, ptrAt(ds.data, off), ptrAt(ss.data, off))
		}
	case cPtr:
		sp, dp := *(*unsafe.Pointer)(src), (*unsafe.Pointer)(dst)
		if sp == nil {
			*dp = nil
			return
		}
		if *dp == nil || *dp == sp {
			*dp = reflect.New(n.typ.Elem()).UnsafePointer()
		}
		copyNode(n.elem, *dp, sp)
	case cMap:
		sm := reflect.NewAt(n.typ, src).Elem()
		dm := reflect.NewAt(n.typ, dst).Elem()
		if sm.Len() == 0 {
			dm.SetZero()
			return
		}
		dm.Set(copyMap(n, sm, sm.Len()))
	}
}

// copyMap returns a deep copy of map m (of map node n) with room for size
// entries. Keys and values go through two scratch values, without an
// allocation per entry; a value holding pointers is copied deeply into a
// third.
func copyMap(n *node, m reflect.Value, size int) reflect.Value {
	nm := reflect.MakeMapWithSize(n.typ, size)
	k := reflect.New(n.typ.Key()).Elem()
	sv := reflect.New(n.typ.Elem())
	dv := sv
	if !n.elem.pod {
		dv = reflect.New(n.typ.Elem())
	}
	it := m.MapRange()
	for it.Next() {
		k.SetIterKey(it)
		sv.Elem().SetIterValue(it)
		if !n.elem.pod {
			dv.Elem().SetZero()
			copyNode(n.elem, dv.UnsafePointer(), sv.UnsafePointer())
		}
		nm.SetMapIndex(k, dv.Elem())
	}
	return nm
}

// growSlice makes ds a slice of length l with storage of its own: it reuses
// ds's array when it is large enough and is not avoid (the baseline's).
func growSlice(n *node, ds *sliceHeader, l int, avoid unsafe.Pointer) {
	if ds.cap < l || ds.data == avoid {
		nv := reflect.MakeSlice(n.typ, l, l)
		ds.data, ds.cap = nv.UnsafePointer(), l
	}
	ds.len = l
}

// ---- scratch space for index lists ----

type arena struct {
	buf     []int32
	writers []*bits.Writer // spare scratch writers
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
	if e.stats != 0 {
		if err := e.encStructDeltaStats(p, b, c, skip); err != nil {
			return false, err
		}
		e.depth--
		return true, nil
	}
	dirty := false
	for i := range p.fields {
		if i == skip {
			continue
		}
		f := &p.fields[i]
		pb, pc := ptrAt(b, f.off), ptrAt(c, f.off)
		if code := f.node.code; code == cQ || code == cQuat {
			// The commonest changed leaves: compare and write with
			// each side quantized once.
			var changed bool
			var err error
			if code == cQ {
				changed, err = e.encQDelta(f.node, pb, pc)
			} else {
				changed, err = e.encQuatDelta(f.node, pb, pc)
			}
			if err != nil {
				return false, wrapField(err, f.name, e.w.Len())
			}
			dirty = dirty || changed
			if e.debug {
				e.writeSentinel()
			}
			continue
		}
		if f.node.code == cStruct && !f.node.spec.composite && f.node.sub.nest <= maxShallow {
			// A nested struct: its delta, taken back if no field of it
			// changed, rather than comparing it first. On an error (a
			// value, or a depth limit that an unchanged struct would not
			// reach) it is taken back too, and the comparison below
			// decides, and reports the error where it always has.
			if f.node.pod && memEqual(pb, pc, f.node.size) {
				e.w.WriteBool(false)
				if e.debug {
					e.writeSentinel()
				}
				continue
			}
			at, flagged, depth := e.w.Len(), e.flagged, e.depth
			e.w.WriteBool(true)
			changed, err := e.encStructDelta(f.node.sub, pb, pc, -1)
			if err == nil {
				if !changed {
					e.w.Truncate(at)
					e.flagged = flagged
					e.w.WriteBool(false)
				}
				dirty = dirty || changed
				if e.debug {
					e.writeSentinel()
				}
				continue
			}
			e.w.Truncate(at)
			e.flagged, e.depth = flagged, depth
		}
		changed := !eqNode(f.node, pb, pc, 0)
		e.w.WriteBool(changed)
		if changed {
			dirty = true
			if err := e.encValueDelta(f.node, pb, pc); err != nil {
				return false, wrapField(err, f.name, e.w.Len())
			}
		}
		if e.debug {
			e.writeSentinel()
		}
	}
	e.depth--
	return dirty, nil
}

// qKey is scalarKey of a cQ node.
func qKey(n *node, p unsafe.Pointer) (uint64, error) {
	if n.clamp {
		return n.q.IndexClamp(loadFloat(p, n.mem))
	}
	return n.q.Index(loadFloat(p, n.mem))
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

func (d *decoder) decStructDelta(p *plan, b, dst unsafe.Pointer, skip int) error {
	d.depth++
	if d.depth > d.maxDepth {
		return &limitError{ErrMalformed, "nesting", d.depth, d.maxDepth}
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
				if fp := n.sub.flat; !d.debug && d.depth+fp.depth <= d.maxDepth {
					saved := *d.r
					if d.decFlat(fp, pd) == nil {
						break
					}
					*d.r = saved // decStruct reports the error with its field path
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

// copyPod copies size bytes of a pointer-free value; the common sizes are
// single moves.
func copyPod(dst, src unsafe.Pointer, size uintptr) {
	switch size {
	case 4:
		*(*uint32)(dst) = *(*uint32)(src)
	case 8:
		*(*uint64)(dst) = *(*uint64)(src)
	case 1:
		*(*uint8)(dst) = *(*uint8)(src)
	case 2:
		*(*uint16)(dst) = *(*uint16)(src)
	default:
		copy(unsafe.Slice((*byte)(dst), size), unsafe.Slice((*byte)(src), size))
	}
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
			return e.encEntityDelta(n, b, c)
		}
		return e.encSliceDelta(n, b, c)
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
		return e.encMapDelta(n, b, c)
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

// writeWindow writes the in-window bit of a scalar with dmin/dmax and, when
// the difference from the baseline lies in the window, the difference. It
// reports whether it did; if not, the caller writes the value in full.
func (e *encoder) writeWindow(n *node, kb, kc uint64) bool {
	diff := int64(kc - kb)
	in := diff >= n.dlo && diff <= n.dhi
	e.w.WriteBool(in)
	if in {
		e.w.WriteBits(uint64(diff-n.dlo), n.dbits)
	}
	return in
}

func (d *decoder) decValueDelta(n *node, b, dst unsafe.Pointer) error {
	switch n.code {
	case cStruct:
		if n.spec.composite {
			return d.decStruct(n.sub, dst)
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
	}
	if n.hasD {
		in, err := d.r.ReadBool()
		if err != nil {
			return err
		}
		if in {
			off, err := d.r.ReadBits(n.dbits)
			if err != nil {
				return err
			}
			kb, err := scalarKey(n, b)
			if err != nil {
				return fmt.Errorf("baseline: %w", err)
			}
			return storeKey(n, dst, kb+uint64(int64(off)+n.dlo))
		}
	}
	return d.decNode(n, dst)
}

// ---- quaternions relative to their baseline ----

// quatRelWidth is the prefix width of a relative quaternion: it holds the
// highest set bit of a zigzagged component difference, at most n.
func quatRelWidth(n int) int { return fields.BitsRequired(uint64(n)) }

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

// writeQuatDelta writes one bit: 1 when the quaternion qc is coded relative
// to its baseline qb (same dropped component; the three index differences,
// zigzagged, share one bit length), 0 when it is absolute. okb tells
// whether the baseline could be packed at all.
func (e *encoder) writeQuatDelta(n *node, qb uint64, okb bool, qc uint64) {
	nb := (n.quat.Bits() - 2) / 3
	if okb && qb&3 == qc&3 {
		var z [3]uint64
		high := 0
		mask := uint64(1)<<uint(nb) - 1
		for i := 0; i < 3; i++ {
			sh := uint(2 + i*nb)
			z[i] = fields.Zigzag(int64(qc>>sh&mask) - int64(qb>>sh&mask))
			if h := fields.HighBit(z[i]); h > high {
				high = h
			}
		}
		w := quatRelWidth(nb)
		if w+3*(high+1) < n.quat.Bits() {
			e.w.WriteBool(true)
			e.w.WriteBits(uint64(high), w)
			for i := 0; i < 3; i++ {
				e.w.WriteBits(z[i], high+1)
			}
			return
		}
	}
	e.w.WriteBool(false)
	e.w.WriteBits(qc, n.quat.Bits())
}

func (d *decoder) decQuatDelta(n *node, b, dst unsafe.Pointer) error {
	rel, err := d.r.ReadBool()
	if err != nil {
		return err
	}
	if !rel {
		return d.decNode(n, dst)
	}
	qb, err := n.quat.Pack(loadQuat(n, b))
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	nb := (n.quat.Bits() - 2) / 3
	h, err := d.r.ReadBits(quatRelWidth(nb))
	if err != nil {
		return err
	}
	if int(h) >= nb+1 {
		return fmt.Errorf("%w: relative quaternion width %d", ErrMalformed, h+1)
	}
	mask := uint64(1)<<uint(nb) - 1
	q := qb & 3
	for i := 0; i < 3; i++ {
		z, err := d.r.ReadBits(int(h) + 1)
		if err != nil {
			return err
		}
		sh := uint(2 + i*nb)
		v := int64(qb>>sh&mask) + fields.Unzigzag(z)
		if v < 0 || uint64(v) > mask {
			return fmt.Errorf("%w: relative quaternion component out of range", ErrMalformed)
		}
		q |= uint64(v) << sh
	}
	v, err := n.quat.Unpack(q)
	if err != nil {
		return err
	}
	storeQuat(n, dst, v)
	return nil
}

// ---- index sets ----

// An index set is a sorted set of indexes in [0, n): its count (bitlen,
// width 5; omitted when the reader can infer it), then, unless the count is
// 0 or n, one bit choosing a bitmask of n bits (0) or Rice-coded gaps (1):
// a 5-bit parameter k, then each gap (the first index, then the distance to
// the previous index minus one) as gap>>k one-bits, a zero bit and the low
// k bits of the gap.

func riceCost(idx []int32, k int) int {
	total, prev := 0, int32(-1)
	for _, i := range idx {
		g := int(i - prev - 1)
		total += g>>uint(k) + 1 + k
		prev = i
	}
	return total
}

// bestRiceK returns the k in 0..min(23, kmax) of least riceCost (the least
// such k on ties) and that cost. The cost is convex in k: from k to k+1 it
// changes by c minus the sum over gaps of floor(g/2^k) - floor(g/2^(k+1)),
// and each of those terms only shrinks as k grows. So a walk from a guess
// (the bit length of the mean gap) to the first k that its neighbours do
// not beat finds the minimum, in a few passes rather than one per k.
func bestRiceK(idx []int32, kmax int) (int, int) {
	kmax = min(kmax, 23)
	mean := (int(idx[len(idx)-1]) + 1) / len(idx)
	k := min(fields.BitsRequired(uint64(mean))-1, kmax)
	k = max(k, 0)
	cost := riceCost(idx, k)
	for k > 0 { // down, through ties, to the least k of least cost
		c := riceCost(idx, k-1)
		if c > cost {
			break
		}
		k, cost = k-1, c
	}
	for k < kmax { // or up, while strictly better
		c := riceCost(idx, k+1)
		if c >= cost {
			break
		}
		k, cost = k+1, c
	}
	return k, cost
}

func (e *encoder) writeIndexSet(idx []int32, n int, countKnown bool) {
	c := len(idx)
	if !countKnown {
		fields.WriteBitlen(e.w, uint64(c), 5)
	}
	if c == 0 || c == n {
		return
	}
	// The bitmask wins whenever n ≤ 5 + c: a Rice code takes at least one
	// bit a gap. Otherwise try every useful k (beyond BitsRequired(n) every
	// quotient is 0 and a larger k only costs more).
	bestK, useMask := 0, n <= 5+c
	if !useMask {
		var best int
		bestK, best = bestRiceK(idx, fields.BitsRequired(uint64(n)))
		useMask = n <= 5+best
	}
	if useMask {
		e.w.WriteBool(false)
		// the bitmask, 64 bits at a time
		var word uint64
		j := 0
		for i := 0; i < n; i++ {
			if j < c && int(idx[j]) == i {
				word |= 1 << uint(i&63)
				j++
			}
			if i&63 == 63 {
				e.w.WriteBits(word, 64)
				word = 0
			}
		}
		if n&63 != 0 {
			e.w.WriteBits(word, n&63)
		}
		return
	}
	e.w.WriteBool(true)
	e.w.WriteBits(uint64(bestK), 5)
	prev := int32(-1)
	for _, i := range idx {
		g := uint64(i - prev - 1)
		q := g >> uint(bestK)
		for ; q >= 63; q -= 63 {
			e.w.WriteBits(1<<63-1, 63)
		}
		e.w.WriteBits(1<<q-1, int(q)+1) // q ones, then a zero
		e.w.WriteBits(g, bestK)
		prev = i
	}
}

// readIndexSet reads a set of indexes in [0, n); count < 0 means the count
// is coded.
func (d *decoder) readIndexSet(ar *arena, n, count int) ([]int32, error) {
	if count < 0 {
		c, err := fields.ReadBitlen(d.r, 5)
		if err != nil {
			return nil, err
		}
		if c > uint64(n) {
			return nil, fmt.Errorf("%w: index set of %d in %d", ErrMalformed, c, n)
		}
		count = int(c)
	}
	idx := ar.take(count)
	if count == n {
		for i := 0; i < n; i++ {
			idx = append(idx, int32(i))
		}
		return idx, nil
	}
	if count == 0 {
		return idx, nil
	}
	rice, err := d.r.ReadBool()
	if err != nil {
		return nil, err
	}
	if !rice {
		if n > d.r.Remaining() {
			return nil, ErrUnexpectedEnd
		}
		for base := 0; base < n; base += 64 {
			word, _ := d.r.ReadBits(min(64, n-base))
			for word != 0 {
				if len(idx) == count {
					return nil, fmt.Errorf("%w: bitmask holds more than %d indexes", ErrMalformed, count)
				}
				idx = append(idx, int32(base+mbits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
		if len(idx) != count {
			return nil, fmt.Errorf("%w: bitmask holds %d indexes, not %d", ErrMalformed, len(idx), count)
		}
		return idx, nil
	}
	k, err := d.r.ReadBits(5)
	if err != nil {
		return nil, err
	}
	if k >= 24 {
		return nil, fmt.Errorf("%w: Rice parameter %d", ErrMalformed, k)
	}
	prev := int64(-1)
	for j := 0; j < count; j++ {
		var q int64
		for {
			one, err := d.r.ReadBool()
			if err != nil {
				return nil, err
			}
			if !one {
				break
			}
			q++
			if q > int64(n) {
				return nil, fmt.Errorf("%w: index gap past %d", ErrMalformed, n)
			}
		}
		low, err := d.r.ReadBits(int(k))
		if err != nil {
			return nil, err
		}
		i := prev + 1 + q<<k + int64(low)
		if i >= int64(n) {
			return nil, fmt.Errorf("%w: index %d past %d", ErrMalformed, i, n)
		}
		idx = append(idx, int32(i))
		prev = i
	}
	return idx, nil
}

// ---- slices matched by index ----

// encSliceDelta writes the new length, the set of changed indexes among
// those both slices have, their deltas, then the appended elements in full.
func (e *encoder) encSliceDelta(n *node, b, c unsafe.Pointer) error {
	sb, sc := (*sliceHeader)(b), (*sliceHeader)(c)
	if err := e.writeLen(sc.len, n.maxlen); err != nil {
		return err
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
			return wrapField(err, fmt.Sprintf("[%d]", i), e.w.Len())
		}
	}
	for i := common; i < sc.len; i++ {
		if err := e.encNode(n.elem, ptrAt(sc.data, uintptr(i)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", i), e.w.Len())
		}
	}
	return nil
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
	if err := d.charge(l-common, n.stride); err != nil { // the common part is the baseline's
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

// ---- entity sets: slices of structs matched by id ----

// encEntityDelta writes: the new length; the removed entities (a set of
// baseline indexes); where new entities go (a set of new indexes, whose
// count the reader infers); which survivors changed (a set of survivor
// ordinals); each changed survivor's delta without its id; then each new
// entity in full. Entities are matched in one pass that assumes ids ascend
// (or keep their order); any order is coded correctly, but an entity out of
// order may be sent as removed and new.
func (e *encoder) encEntityDelta(n *node, b, c unsafe.Pointer) error {
	if e.stats == 0 && n.elem.sub.nest <= maxShallow {
		start, flagged, depth := e.w.Len(), e.flagged, e.depth
		if e.encEntityDeltaFused(n, b, c) == nil {
			return nil
		}
		// The fused pass locates errors inside its scratch writer; the
		// plain pass below finds the same error at its place in the message.
		e.w.Truncate(start)
		e.flagged, e.depth = flagged, depth
	}
	sb, sc := (*sliceHeader)(b), (*sliceHeader)(c)
	if err := e.writeLen(sc.len, n.maxlen); err != nil {
		return err
	}
	if e.stats != 0 {
		e.noteUnordered(n, sc)
	}
	if e.stats != 0 {
		id, saved, start := e.enter("[]")
		defer e.leave(id, saved, start, true)
	}
	mark := len(e.ar.buf)
	defer func() { e.ar.buf = e.ar.buf[:mark] }()
	removed := e.ar.take(sb.len)
	added := e.ar.take(sc.len)
	common := min(sb.len, sc.len)
	changed := e.ar.take(common)  // survivor ordinals
	changedB := e.ar.take(common) // their baseline indexes
	changedC := e.ar.take(common) // and new indexes
	idf := &n.elem.sub.fields[n.idField]
	idOff, idMem := idf.off, idf.node.mem
	survivors := 0
	i, j := 0, 0
	for i < sb.len && j < sc.len {
		pb, pc := ptrAt(sb.data, uintptr(i)*n.stride), ptrAt(sc.data, uintptr(j)*n.stride)
		ib, ic := loadInt(ptrAt(pb, idOff), idMem), loadInt(ptrAt(pc, idOff), idMem)
		switch {
		case ib == ic:
			if !eqNode(n.elem, pb, pc, 0) {
				changed = append(changed, int32(survivors))
				changedB, changedC = append(changedB, int32(i)), append(changedC, int32(j))
			}
			survivors++
			i++
			j++
		case ib < ic:
			removed = append(removed, int32(i))
			i++
		default:
			added = append(added, int32(j))
			j++
		}
	}
	added = e.writeEntitySets(sb.len, sc.len, i, j, removed, added, changed, survivors)
	for k := range changed {
		pb, pc := ptrAt(sb.data, uintptr(changedB[k])*n.stride), ptrAt(sc.data, uintptr(changedC[k])*n.stride)
		if _, err := e.encStructDelta(n.elem.sub, pb, pc, n.idField); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", changedC[k]), e.w.Len())
		}
	}
	return e.encAdded(n, sc, added)
}

// encEntityDeltaFused writes what encEntityDelta writes, judging and
// encoding each survivor in one pass: a survivor's delta goes to a scratch
// writer while the entities are matched, and is dropped again if no field
// changed. Runs of survivors that are equal byte for byte (pointer-free
// elements only) are skipped a block at a time. Its errors carry bit
// offsets of the scratch writer; encEntityDelta reruns the plain pass for
// them.
func (e *encoder) encEntityDeltaFused(n *node, b, c unsafe.Pointer) error {
	sb, sc := (*sliceHeader)(b), (*sliceHeader)(c)
	if err := e.writeLen(sc.len, n.maxlen); err != nil {
		return err
	}
	mark := len(e.ar.buf)
	sw := e.ar.writer()
	defer func() { e.ar.buf = e.ar.buf[:mark]; e.ar.release(sw) }()
	// The survivors' encoder: e with the scratch writer. (A local copy,
	// since storing sw into e.w would make every writer escape.)
	se := *e
	se.w = sw
	removed := e.ar.take(sb.len)
	added := e.ar.take(sc.len)
	changed := e.ar.take(min(sb.len, sc.len)) // survivor ordinals
	idf := &n.elem.sub.fields[n.idField]
	idOff, idMem := idf.off, idf.node.mem
	pod := n.elem.pod
	survivors := 0
	i, j := 0, 0
	for i < sb.len && j < sc.len {
		pb, pc := ptrAt(sb.data, uintptr(i)*n.stride), ptrAt(sc.data, uintptr(j)*n.stride)
		if pod {
			if run := equalRun(pb, pc, min(sb.len-i, sc.len-j), n.stride); run > 0 {
				survivors += run
				i += run
				j += run
				continue
			}
		}
		ib, ic := loadInt(ptrAt(pb, idOff), idMem), loadInt(ptrAt(pc, idOff), idMem)
		switch {
		case ib == ic:
			at, flagged := sw.Len(), se.flagged
			ch, err := se.encStructDelta(n.elem.sub, pb, pc, n.idField)
			if err != nil {
				return err
			}
			if ch {
				changed = append(changed, int32(survivors))
			} else {
				sw.Truncate(at) // only unchanged bits: the survivor is unchanged
				se.flagged = flagged
			}
			survivors++
			i++
			j++
		case ib < ic:
			removed = append(removed, int32(i))
			i++
		default:
			added = append(added, int32(j))
			j++
		}
	}
	added = e.writeEntitySets(sb.len, sc.len, i, j, removed, added, changed, survivors)
	e.w.WriteFrom(sw)
	e.flagged = se.flagged
	return e.encAdded(n, sc, added)
}

// writeEntitySets ends the matching of nb baseline entities with nc new
// ones, stopped at i and j (what is left of either side was removed or is
// new), and writes the three index sets. It returns the full added set.
func (e *encoder) writeEntitySets(nb, nc, i, j int, removed, added, changed []int32, survivors int) []int32 {
	for ; i < nb; i++ {
		removed = append(removed, int32(i))
	}
	for ; j < nc; j++ {
		added = append(added, int32(j))
	}
	e.writeIndexSet(removed, nb, false)
	e.writeIndexSet(added, nc, true)
	e.writeIndexSet(changed, survivors, false)
	return added
}

// encAdded writes the new entities of an entity set in full.
func (e *encoder) encAdded(n *node, sc *sliceHeader, added []int32) error {
	for _, j := range added {
		if err := e.encNode(n.elem, ptrAt(sc.data, uintptr(j)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", j), e.w.Len())
		}
	}
	return nil
}

func (d *decoder) decEntityDelta(n *node, b, dst unsafe.Pointer) error {
	sb, sd := (*sliceHeader)(b), (*sliceHeader)(dst)
	l, err := d.readLen(n, 0) // the elements are bounded below, by what is new
	if err != nil {
		return err
	}
	mark := len(d.ar.buf)
	defer func() { d.ar.buf = d.ar.buf[:mark] }()
	removed, err := d.readIndexSet(d.ar, sb.len, -1)
	if err != nil {
		return err
	}
	surv := sb.len - len(removed)
	nAdded := l - surv
	if nAdded < 0 {
		return fmt.Errorf("%w: %d entities after removing %d of %d", ErrMalformed, l, len(removed), sb.len)
	}
	if nAdded > 0 && nAdded > d.r.Remaining()/max(1, n.emin) {
		return fmt.Errorf("%w: %d new entities need more input than remains", ErrUnexpectedEnd, nAdded)
	}
	if err := d.charge(nAdded, n.stride); err != nil { // survivors are the baseline's
		return err
	}
	added, err := d.readIndexSet(d.ar, l, nAdded)
	if err != nil {
		return err
	}
	changed, err := d.readIndexSet(d.ar, surv, -1)
	if err != nil {
		return err
	}
	if l == 0 {
		*sd = sliceHeader{}
		return nil
	}
	growSlice(n, sd, l, sb.data)
	// The new slice is walked in stretches between events (a new entity,
	// a removed one, a changed survivor); each stretch is a run of
	// unchanged survivors, contiguous on both sides, copied at once.
	const none = math.MaxInt
	at := func(set []int32, k int) int { // the k-th entry of set, or none
		if k < len(set) {
			return int(set[k])
		}
		return none
	}
	bi, ai, ri, ci, k := 0, 0, 0, 0, 0 // baseline index, set positions, survivor ordinal
	na, nr, nc := at(added, 0), at(removed, 0), at(changed, 0)
	for j := 0; j < l; {
		if na == j {
			ai++
			na = at(added, ai)
			j++
			continue
		}
		if nr == bi {
			ri++
			nr = at(removed, ri)
			bi++
			continue
		}
		if bi >= sb.len {
			return fmt.Errorf("%w: entity set survivors run past the baseline", ErrMalformed)
		}
		if nc == k {
			ci++
			nc = at(changed, ci)
			pb, pd := ptrAt(sb.data, uintptr(bi)*n.stride), ptrAt(sd.data, uintptr(j)*n.stride)
			if err := d.decStructDelta(n.elem.sub, pb, pd, n.idField); err != nil {
				return wrapField(err, fmt.Sprintf("[%d]", j), d.r.Pos())
			}
			j, bi, k = j+1, bi+1, k+1
			continue
		}
		run := min(na-j, nr-bi, nc-k, l-j, sb.len-bi)
		if n.elem.pod {
			sz := uintptr(run) * n.stride
			copy(unsafe.Slice((*byte)(ptrAt(sd.data, uintptr(j)*n.stride)), sz),
				unsafe.Slice((*byte)(ptrAt(sb.data, uintptr(bi)*n.stride)), sz))
		} else {
			for x := 0; x < run; x++ {
				copyNode(n.elem, ptrAt(sd.data, uintptr(j+x)*n.stride), ptrAt(sb.data, uintptr(bi+x)*n.stride))
			}
		}
		j, bi, k = j+run, bi+run, k+run
	}
	for _, j := range added {
		if err := d.decNode(n.elem, ptrAt(sd.data, uintptr(j)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", j), d.r.Pos())
		}
	}
	return nil
}

// ---- maps matched by key ----

// sortedEntries returns a map's keys and values (as addressable copies) in
// key order.
func sortedEntries(n *node, p unsafe.Pointer) (keys, vals []reflect.Value) {
	m := reflect.NewAt(n.typ, p).Elem()
	it := m.MapRange()
	for it.Next() {
		k := reflect.New(n.typ.Key())
		k.Elem().Set(it.Key())
		v := reflect.New(n.typ.Elem())
		v.Elem().Set(it.Value())
		keys = append(keys, k.Elem())
		vals = append(vals, v)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sortIndexes(keys, order)
	ks, vs := make([]reflect.Value, len(keys)), make([]reflect.Value, len(keys))
	for i, o := range order {
		ks[i], vs[i] = keys[o], vals[o]
	}
	return ks, vs
}

// encMapDelta writes: the removed keys (a set of indexes into the
// baseline's sorted keys), the changed survivors (a set of survivor
// ordinals) and their value deltas, then the count of added entries and each
// added key and value in full, in key order.
func (e *encoder) encMapDelta(n *node, b, c unsafe.Pointer) error {
	bk, bv := sortedEntries(n, b)
	if nanKey(n, bk) {
		return fmt.Errorf("baseline: %w: NaN map key", ErrInvalidValue)
	}
	cm := reflect.NewAt(n.typ, c).Elem()
	if (n.maxlen > 0 && cm.Len() > n.maxlen) || (n.maxlen == 0 && cm.Len() > e.maxLen) {
		return fmt.Errorf("%w: %d entries", ErrTooLong, cm.Len())
	}
	var removed, changed []int32
	var survB []int
	for i, k := range bk {
		v := cm.MapIndex(k)
		if !v.IsValid() {
			removed = append(removed, int32(i))
			continue
		}
		cv := reflect.New(n.typ.Elem())
		cv.Elem().Set(v)
		if !eqNode(n.elem, bv[i].UnsafePointer(), cv.UnsafePointer(), 0) {
			changed = append(changed, int32(len(survB)))
		}
		survB = append(survB, i)
	}
	e.writeIndexSet(removed, len(bk), false)
	e.writeIndexSet(changed, len(survB), false)
	for _, s := range changed {
		i := survB[s]
		cv := reflect.New(n.typ.Elem())
		cv.Elem().Set(cm.MapIndex(bk[i]))
		if err := e.encValueDelta(n.elem, bv[i].UnsafePointer(), cv.UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("[%v]", bk[i]), e.w.Len())
		}
	}
	ck, cv := sortedEntries(n, c)
	if nanKey(n, ck) {
		return fmt.Errorf("%w: NaN map key", ErrInvalidValue)
	}
	bm := reflect.NewAt(n.typ, b).Elem()
	var added []int
	for i, k := range ck {
		if !bm.MapIndex(k).IsValid() {
			added = append(added, i)
		}
	}
	fields.WriteBitlen(e.w, uint64(len(added)), 5)
	for _, i := range added {
		if err := e.encNode(n.key, ck[i].Addr().UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("{%v}", ck[i]), e.w.Len())
		}
		if err := e.encNode(n.elem, cv[i].UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("[%v]", ck[i]), e.w.Len())
		}
	}
	return nil
}

func (d *decoder) decMapDelta(n *node, b, dst unsafe.Pointer) error {
	bm := reflect.NewAt(n.typ, b).Elem()
	nb := bm.Len()
	mark := len(d.ar.buf)
	defer func() { d.ar.buf = d.ar.buf[:mark] }()
	removed, err := d.readIndexSet(d.ar, nb, -1)
	if err != nil {
		return err
	}
	surv := nb - len(removed)
	changed, err := d.readIndexSet(d.ar, surv, -1)
	if err != nil {
		return err
	}
	var nm reflect.Value
	var bk, bv []reflect.Value
	if len(removed) == 0 && len(changed) == 0 {
		// Every entry survives unchanged: copy the baseline in the map's
		// own order, without sorting its keys.
		nm = copyMap(n, bm, nb)
	} else {
		bk, bv = sortedEntries(n, b)
		nm = reflect.MakeMapWithSize(n.typ, surv)
	}
	k, ci := 0, 0
	for i := range bk {
		if len(removed) > 0 && int(removed[0]) == i {
			removed = removed[1:]
			continue
		}
		v := reflect.New(n.typ.Elem())
		if ci < len(changed) && int(changed[ci]) == k {
			ci++
			if err := d.decValueDelta(n.elem, bv[i].UnsafePointer(), v.UnsafePointer()); err != nil {
				return wrapField(err, fmt.Sprintf("[%v]", bk[i]), d.r.Pos())
			}
		} else {
			copyNode(n.elem, v.UnsafePointer(), bv[i].UnsafePointer())
		}
		nm.SetMapIndex(bk[i], v.Elem())
		k++
	}
	cnt, err := fields.ReadBitlen(d.r, 5)
	if err != nil {
		return err
	}
	if cnt > 0 && cnt > uint64(d.r.Remaining()/max(1, n.emin)) {
		return fmt.Errorf("%w: %d new entries need more input than remains", ErrUnexpectedEnd, cnt)
	}
	total := surv + int(cnt)
	if (n.maxlen > 0 && total > n.maxlen) || (n.maxlen == 0 && total > d.maxLen) {
		return fmt.Errorf("%w: %d entries", ErrTooLong, total)
	}
	if err := d.charge(1, mapCost(n, min(int(cnt), keyRange(n)))); err != nil {
		return err
	}
	if err := d.readEntries(n, nm, int(cnt)); err != nil {
		return err
	}
	if nm.Len() != total {
		return fmt.Errorf("%w: duplicate map key", ErrMalformed)
	}
	dm := reflect.NewAt(n.typ, dst).Elem()
	if total == 0 {
		dm.SetZero()
	} else {
		dm.Set(nm)
	}
	return nil
}

// memEqual reports whether size bytes at a and b are equal. The sizes of
// single floats and integers are one comparison, without a call.
func memEqual(a, b unsafe.Pointer, size uintptr) bool {
	switch size {
	case 4:
		return *(*uint32)(a) == *(*uint32)(b)
	case 8:
		return *(*uint64)(a) == *(*uint64)(b)
	}
	return a == b || string(unsafe.Slice((*byte)(a), size)) == string(unsafe.Slice((*byte)(b), size))
}

// equalRun returns how many leading elements of two arrays of count
// elements, stride bytes apart, are equal byte for byte.
func equalRun(a, b unsafe.Pointer, count int, stride uintptr) int {
	size := uintptr(count) * stride
	d := firstDiff(unsafe.Slice((*byte)(a), size), unsafe.Slice((*byte)(b), size))
	return int(uintptr(d) / stride)
}

// firstDiff returns the index of the first byte where a and b differ, or
// len(a) when b starts with a. It skips equal stretches a block at a time
// (one vectorised memory comparison each) and finds the difference in the
// block that has one eight bytes at a time.
func firstDiff(a, b []byte) int {
	const block = 256
	n := len(a)
	b = b[:n]
	i := 0
	for i+block <= n && string(a[i:i+block]) == string(b[i:i+block]) {
		i += block
	}
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// nanKey reports whether a float-keyed map has a NaN key: NaN has no order
// and cannot be looked up, so such maps are refused.
func nanKey(n *node, keys []reflect.Value) bool {
	if n.key.code != cFloat {
		return false
	}
	for _, k := range keys {
		if f := k.Float(); f != f {
			return true
		}
	}
	return false
}
