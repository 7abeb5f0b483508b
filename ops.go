package bitwire

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// This file holds the hot path: the encoder and decoder that walk a
// compiled plan over raw memory. Each coding's write and read sit side by
// side (encNode, decNode), calling its fields functions; what else a coding
// needs is its row in coders.go. The flat path (flat.go), adaptive integers
// and their groups (bitlen.go) and maps (maps.go) have files of their own.
// Nothing here calls the reflect API except for allocating a slice or a
// pointee the value does not have yet.

type encoder struct {
	w       *bits.Writer
	neg     bool // the message's "any negative" flag
	flagged bool // the flag has been written
	depth   int
	ar      *arena // scratch index lists (delta encoding)

	// Per-field accounting, when on: a handle into statRuns rather than a
	// pointer, so that the encoder's pointers (the writer) never escape
	// through the accounting code and the plain path stays allocation-free.
	stats    int32 // 0: off
	statPath int   // the current path's id (-1: the message)

	maxDepth int // limits (see Limits)
	maxLen   int
	debug    bool // a sentinel after each top-level field
	general  bool // no fast path (see mark.go): debug mode, or options.general
}

type decoder struct {
	r       *bits.Reader
	neg     bool
	flagged bool // the flag has been read
	sawNeg  bool // a negative value was read
	depth   int
	ar      *arena // scratch index lists (delta decoding)

	maxDepth int // limits (see Limits)
	maxLen   int
	debug    bool // a sentinel after each top-level field
	general  bool // no fast path (see mark.go): debug mode, or options.general
	scratch  [64]byte
	budget   int64 // bytes every decode from this input may allocate in all (Limits.MaxAllocPerByte), once budgeted
	budgeted bool
	allocPer int // Limits.MaxAllocPerByte
}

// charge takes size bytes (count elements of size bytes each) from the
// input's allocation budget, which every decode from the same reader shares
// (the reader's Spent counter), or fails with ErrTooLong before anything is
// allocated.
func (d *decoder) charge(count int, size uintptr) error {
	if !d.budgeted {
		d.startBudget()
	}
	need := int64(count) * int64(size) // count < 2^31, size < 2^32 in practice
	left := d.budget - d.r.Spent()
	if size != 0 && need/int64(size) != int64(count) {
		return &allocError{need: need, left: max(left, 0)}
	}
	if need = allocCost(need); need > left {
		return &allocError{need: need, left: max(left, 0)}
	}
	d.r.Spend(need)
	return nil
}

// chargeElems charges count elements of size bytes each. A zero-size
// element (struct{}, [0]T) allocates nothing, but each one is a step of
// the decoder, and when it takes no bits either nothing else bounds how
// many a few bytes of input may ask for (2^31 of them from 4 bytes): it
// is charged one byte, so that the decoder's work is bounded by the input
// like its memory.
func (d *decoder) chargeElems(count int, size uintptr) error {
	return d.charge(count, max(size, 1))
}

// allocCost is what an allocation of n bytes may take from the heap: Go
// rounds a small allocation up to its size class (at most 1/8 more, and
// to 16 bytes or so for the smallest) and a large one up to whole 8 KiB
// pages.
func allocCost(n int64) int64 {
	switch {
	case n == 0:
		return 0
	case n > 32<<10:
		return n + 8<<10
	}
	return n + n/8 + 16
}

// signFlag writes the message's "any negative" flag if it is not written
// yet: the flag sits just before the first signed adaptive value (or group
// holding one) that the message actually carries.
func (e *encoder) signFlag() {
	if !e.flagged {
		e.w.WriteBool(e.neg)
		e.flagged = true
	}
}

// signFlag reads the flag where the encoder wrote it.
func (d *decoder) signFlag() error {
	if !d.flagged {
		b, err := d.r.ReadBool()
		if err != nil {
			return err
		}
		d.neg, d.flagged = b, true
	}
	return nil
}

// ---- structs ----

func (e *encoder) encStruct(p *plan, base unsafe.Pointer) error {
	e.depth++
	if e.depth > e.maxDepth {
		return &limitError{ErrInvalidValue, "nesting (a cyclic value?)", e.depth, e.maxDepth}
	}
	if fp := p.flat; fp != nil && !e.general && e.depth+fp.depth-1 <= e.maxDepth {
		m := e.mark()
		if e.encFlat(fp, base) == nil {
			e.depth--
			return nil
		}
		e.rewind(m) // the general path below reports the error with its field path
	}
	for i := range p.fields {
		f := &p.fields[i]
		// Stats hooks: each field's bits are accounted on its path (a
		// group's later members, written with the first, count none).
		var id, saved, start int
		if e.stats != 0 {
			id, saved, start = e.enter(f.name)
		}
		if f.grp != nil {
			var err error
			if f.grp.members[0] == i {
				s := seq{base: base, p: p, idx: f.grp.members}
				if err = e.encGroup(&s, len(f.grp.members), f.grp.width); err == nil && e.debug {
					e.writeSentinel()
				}
			}
			if e.stats != 0 {
				e.leave(id, saved, start, true)
			}
			if err != nil {
				return err // the group's error names its member
			}
			continue
		}
		var err error
		if n := f.node; n.code == cStruct {
			err = e.encStruct(n.sub, ptrAt(base, f.off))
		} else {
			err = e.encNode(n, ptrAt(base, f.off))
		}
		if e.stats != 0 {
			e.leave(id, saved, start, true)
		}
		if err != nil {
			return wrapField(err, f.name, e.w.Len())
		}
		if e.debug {
			e.writeSentinel()
		}
	}
	e.depth--
	return nil
}

func (d *decoder) decStruct(p *plan, base unsafe.Pointer) error {
	d.depth++
	if d.depth > d.maxDepth {
		return &limitError{ErrMalformed, "nesting", d.depth, d.maxDepth}
	}
	if fp := p.flat; fp != nil && !d.general && d.depth+fp.depth-1 <= d.maxDepth {
		m := readMark(*d.r)
		if d.decFlat(fp, base) == nil {
			d.depth--
			return nil
		}
		d.rewind(&m) // the general path below reports the error with its field path
	}
	for i := range p.fields {
		f := &p.fields[i]
		if f.grp != nil {
			if f.grp.members[0] == i {
				s := seq{base: base, p: p, idx: f.grp.members}
				if err := d.decGroup(&s, len(f.grp.members), f.grp.width); err != nil {
					return err
				}
				if err := d.sentinel(); err != nil {
					return wrapField(err, f.grp.name, d.r.Pos())
				}
			}
			continue
		}
		var err error
		if n := f.node; n.code == cStruct {
			err = d.decStruct(n.sub, ptrAt(base, f.off))
		} else {
			err = d.decNode(n, ptrAt(base, f.off))
		}
		if err != nil {
			return wrapField(err, f.name, d.r.Pos())
		}
		if err := d.sentinel(); err != nil {
			return wrapField(err, f.name, d.r.Pos())
		}
	}
	d.depth--
	return nil
}

// sentinel writes the debug sentinel after a top-level field (debug mode).
// The check is inlined at every field; the work is not.
func (e *encoder) sentinel() {
	if e.debug {
		e.writeSentinel()
	}
}

func (e *encoder) writeSentinel() {
	if e.depth == 1 {
		e.w.WriteBits(debugSentinel, 8)
	}
}

// sentinel checks the debug sentinel after a top-level field: a mismatch
// means the field's reader consumed a different number of bits than its
// writer produced.
func (d *decoder) sentinel() error {
	if !d.debug {
		return nil
	}
	return d.checkSentinel()
}

func (d *decoder) checkSentinel() error {
	if d.depth != 1 {
		return nil
	}
	at := d.r.Pos()
	v, err := d.r.ReadBits(8)
	// A *FieldError with the sentinel's own bit: the caller names the
	// field, and the message says the bit once.
	if err != nil {
		return &FieldError{Bit: at, Err: fmt.Errorf("%w: debug sentinel missing after the field: reader and writer disagree", ErrMalformed)}
	}
	if v != debugSentinel {
		return &FieldError{Bit: at, Err: fmt.Errorf("%w: debug sentinel after the field reads %#02x, not %#02x: reader and writer disagree", ErrMalformed, v, debugSentinel)}
	}
	return nil
}

// ---- one node ----

// encNode writes the value at p of node n: a leaf by its coding's writer
// (coding_*.go), a container by its elements.
func (e *encoder) encNode(n *node, p unsafe.Pointer) error {
	switch n.code {
	case cBool:
		return e.encBool(n, p)
	case cBits:
		return e.encBits(n, p)
	case cRange:
		return e.encRange(n, p)
	case cQ:
		return e.encQ(n, p)
	case cFloat:
		return e.encFloat(n, p)
	case cFixed, cBitlen:
		return e.encInt(n, p)
	case cVarint:
		return e.encVarint(n, p)
	case cString:
		return e.encString(n, p)
	case cBytes:
		return e.encBytes(n, p)
	case cQuat:
		return e.encQuat(n, p)
	case cTime:
		return e.encTime(n, p)
	case cStruct:
		return e.encStruct(n.sub, p)
	case cArray:
		return e.encElems(n, p, n.count)
	case cSlice:
		sh := (*sliceHeader)(p)
		if err := e.writeLen(sh.len, n.maxlen); err != nil {
			return err
		}
		return e.encElems(n, sh.data, sh.len)
	case cPtr:
		return e.encPtr(n, *(*unsafe.Pointer)(p))
	case cMap:
		return e.encMap(n, p)
	}
	return nil
}

// decNode reads the value at p of node n, as encNode wrote it.
func (d *decoder) decNode(n *node, p unsafe.Pointer) error {
	switch n.code {
	case cBool:
		return d.decBool(n, p)
	case cBits:
		return d.decBits(n, p)
	case cRange:
		return d.decRange(n, p)
	case cQ:
		return d.decQ(n, p)
	case cFloat:
		return d.decFloat(n, p)
	case cFixed, cBitlen:
		return d.decInt(n, p)
	case cVarint:
		return d.decVarint(n, p)
	case cString:
		return d.decString(n, p)
	case cBytes:
		return d.decBytes(n, p)
	case cQuat:
		return d.decQuat(n, p)
	case cTime:
		return d.decTime(n, p)
	case cStruct:
		return d.decStruct(n.sub, p)
	case cArray:
		return d.decElems(n, p, n.count)
	case cSlice:
		return d.decSlice(n, p)
	case cPtr:
		return d.decPtr(n, p)
	case cMap:
		return d.decMap(n, p)
	}
	return nil
}

// ---- lengths ----

func (e *encoder) writeLen(l, maxlen int) error {
	if maxlen == 0 && l > e.maxLen {
		return &limitError{ErrTooLong, "length", l, e.maxLen}
	}
	return fields.WriteLen(e.w, l, maxlen)
}

// readLen reads a length and checks it against the limits and against what
// the rest of the input can hold at minBits bits an element, before the
// caller allocates anything.
func (d *decoder) readLen(n *node, minBits int) (int, error) {
	l, err := fields.ReadLen(d.r, n.maxlen)
	if err != nil {
		return 0, err
	}
	if n.maxlen == 0 && l > d.maxLen {
		return 0, &limitError{ErrTooLong, "length", l, d.maxLen}
	}
	if minBits > 0 && l > d.r.Remaining()/minBits {
		return 0, &limitError{ErrUnexpectedEnd, "length (against the input left)", l, d.r.Remaining() / minBits}
	}
	return l, nil
}

// ---- arrays and slices ----

func (e *encoder) encElems(n *node, base unsafe.Pointer, count int) error {
	if e.stats != 0 {
		id, saved, start := e.enter("[]")
		defer e.leave(id, saved, start, true)
	}
	el := n.elem
	if el.groupable() {
		s := seq{base: base, stride: n.stride, elem: el}
		return e.encGroup(&s, count, el.n)
	}
	if el.code == cStruct && !e.general {
		// Structs with a flat plan, one after the other without the
		// per-element dispatch; an error rewinds the whole run and the
		// loop below reports it.
		if fp := el.sub.flat; fp != nil && e.depth+fp.depth <= e.maxDepth {
			m := e.mark()
			if e.encFlats(fp, base, count, n.stride) == nil {
				return nil
			}
			e.rewind(m)
		}
	}
	for i := 0; i < count; i++ {
		if err := e.encNode(el, ptrAt(base, uintptr(i)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", i), e.w.Len())
		}
	}
	return nil
}

func (d *decoder) decElems(n *node, base unsafe.Pointer, count int) error {
	el := n.elem
	if el.groupable() {
		s := seq{base: base, stride: n.stride, elem: el}
		return d.decGroup(&s, count, el.n)
	}
	if el.code == cStruct && !d.general {
		// as in encElems
		if fp := el.sub.flat; fp != nil && d.depth+fp.depth <= d.maxDepth {
			m := readMark(*d.r)
			if d.decFlats(fp, base, count, n.stride) == nil {
				return nil
			}
			d.rewind(&m)
		}
	}
	for i := 0; i < count; i++ {
		if err := d.decNode(el, ptrAt(base, uintptr(i)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", i), d.r.Pos())
		}
	}
	return nil
}

// decSlice reads a slice: its length, checked against the input left before
// anything is allocated, then its elements.
func (d *decoder) decSlice(n *node, p unsafe.Pointer) error {
	l, err := d.readLen(n, n.emin)
	if err != nil {
		return err
	}
	sh := (*sliceHeader)(p)
	if l == 0 {
		*sh = sliceHeader{}
		return nil
	}
	if sh.cap < l || n.stride == 0 { // zero-size elements: charged even when they fit (chargeElems)
		if err := d.chargeElems(l, n.stride); err != nil {
			return err
		}
	}
	if sh.cap < l {
		nv := reflect.MakeSlice(n.typ, l, l)
		sh.data, sh.cap = nv.UnsafePointer(), l
	}
	sh.len = l
	return d.decElems(n, sh.data, l)
}

// decPtr reads a presence bit and, when set, the pointee, allocating it if
// the pointer is nil.
func (d *decoder) decPtr(n *node, p unsafe.Pointer) error {
	present, err := d.r.ReadBool()
	if err != nil {
		return err
	}
	pp := (*unsafe.Pointer)(p)
	if !present {
		*pp = nil
		return nil
	}
	if *pp == nil {
		if err := d.charge(1, n.elem.size); err != nil {
			return err
		}
		*pp = reflect.New(n.typ.Elem()).UnsafePointer()
	}
	return d.decNode(n.elem, *pp)
}

// encPtr writes a presence bit and, for a non-nil pointer, the pointee.
func (e *encoder) encPtr(n *node, q unsafe.Pointer) error {
	e.w.WriteBool(q != nil)
	if q != nil {
		return e.encNode(n.elem, q)
	}
	return nil
}
