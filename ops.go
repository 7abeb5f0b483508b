package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"time"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// This file holds the hot path: the encoder and decoder that walk a
// compiled plan over raw memory. Each coding's write and read sit side by
// side. Nothing here calls the reflect API except for maps and for
// allocating a slice or a pointee the value does not have yet.

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
	scratch  [64]byte
	budget   int64 // bytes this decode may still allocate (Limits.MaxAllocPerByte), once budgeted
	budgeted bool
	allocPer int // Limits.MaxAllocPerByte
}

// charge takes size bytes (count elements of size bytes each) from the
// decode's allocation budget, or fails with ErrTooLong before anything is
// allocated.
func (d *decoder) charge(count int, size uintptr) error {
	if !d.budgeted {
		d.startBudget()
	}
	need := int64(count) * int64(size) // count < 2^31, size < 2^32 in practice
	if size != 0 && (need/int64(size) != int64(count) || need > d.budget) {
		return &allocError{need: need, left: d.budget}
	}
	d.budget -= need
	return nil
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

type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// ---- memory access ----

func loadInt(p unsafe.Pointer, m memKind) uint64 {
	switch m {
	case mU8:
		return uint64(*(*uint8)(p))
	case mU16:
		return uint64(*(*uint16)(p))
	case mU32:
		return uint64(*(*uint32)(p))
	case mU64:
		return *(*uint64)(p)
	case mI8:
		return uint64(int64(*(*int8)(p)))
	case mI16:
		return uint64(int64(*(*int16)(p)))
	case mI32:
		return uint64(int64(*(*int32)(p)))
	case mI64:
		return uint64(*(*int64)(p))
	}
	return 0
}

func storeInt(p unsafe.Pointer, m memKind, v uint64) {
	switch m {
	case mU8, mI8:
		*(*uint8)(p) = uint8(v)
	case mU16, mI16:
		*(*uint16)(p) = uint16(v)
	case mU32, mI32:
		*(*uint32)(p) = uint32(v)
	case mU64, mI64:
		*(*uint64)(p) = v
	}
}

// fitsInt reports whether v (sign-extended for signed kinds) is a value of m.
func fitsInt(m memKind, v uint64) bool {
	switch m {
	case mU8:
		return v <= math.MaxUint8
	case mU16:
		return v <= math.MaxUint16
	case mU32:
		return v <= math.MaxUint32
	case mI8:
		return int64(v) >= math.MinInt8 && int64(v) <= math.MaxInt8
	case mI16:
		return int64(v) >= math.MinInt16 && int64(v) <= math.MaxInt16
	case mI32:
		return int64(v) >= math.MinInt32 && int64(v) <= math.MaxInt32
	}
	return true
}

func loadFloat(p unsafe.Pointer, m memKind) float64 {
	if m == mF32 {
		return float64(*(*float32)(p))
	}
	return *(*float64)(p)
}

func storeFloat(p unsafe.Pointer, m memKind, v float64) {
	if m == mF32 {
		*(*float32)(p) = float32(v)
	} else {
		*(*float64)(p) = v
	}
}

// ---- structs ----

func (e *encoder) encStruct(p *plan, base unsafe.Pointer) error {
	e.depth++
	if e.depth > e.maxDepth {
		return &limitError{ErrInvalidValue, "nesting (a cyclic value?)", e.depth, e.maxDepth}
	}
	if e.stats != 0 {
		if err := e.encStructStats(p, base); err != nil {
			return err
		}
		e.depth--
		return nil
	}
	if fp := p.flat; fp != nil && !e.debug && e.depth+fp.depth-1 <= e.maxDepth {
		start := e.w.Len()
		if e.encFlat(fp, base) == nil {
			e.depth--
			return nil
		}
		e.w.Truncate(start) // the general path below reports the error with its field path
	}
	for i := range p.fields {
		f := &p.fields[i]
		if f.grp != nil {
			if f.grp.members[0] == i {
				s := seq{base: base, p: p, idx: f.grp.members}
				if err := e.encGroup(&s, len(f.grp.members), f.grp.width); err != nil {
					return err
				}
				if e.debug {
					e.writeSentinel()
				}
			}
			continue
		}
		// The commonest nodes are coded here, saving a call to the big
		// encNode per leaf; everything else goes through encNode.
		n, fp := f.node, ptrAt(base, f.off)
		var err error
		switch n.code {
		case cQ:
			if n.clamp {
				err = n.q.WriteClamp(e.w, loadFloat(fp, n.mem))
			} else {
				err = n.q.Write(e.w, loadFloat(fp, n.mem))
			}
		case cRange:
			if n.mem.signed() && !n.clamp {
				err = n.irng.Write(e.w, int64(loadInt(fp, n.mem)))
			} else {
				err = e.encNode(n, fp)
			}
		case cBool:
			e.w.WriteBool(*(*bool)(fp))
		case cStruct:
			err = e.encStruct(n.sub, fp)
		default:
			err = e.encNode(n, fp)
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
	if fp := p.flat; fp != nil && !d.debug && d.depth+fp.depth-1 <= d.maxDepth {
		saved := *d.r
		if d.decFlat(fp, base) == nil {
			d.depth--
			return nil
		}
		*d.r = saved // the general path below reports the error with its field path
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
		// The commonest nodes are decoded here, as in encStruct.
		n, fp := f.node, ptrAt(base, f.off)
		var err error
		switch n.code {
		case cQ:
			var v float64
			if v, err = n.q.Read(d.r); err == nil {
				storeFloat(fp, n.mem, v)
			}
		case cRange:
			if n.mem.signed() {
				var v int64
				if v, err = n.irng.Read(d.r); err == nil {
					storeInt(fp, n.mem, uint64(v))
				}
			} else {
				err = d.decNode(n, fp)
			}
		case cBool:
			var b bool
			if b, err = d.r.ReadBool(); err == nil {
				*(*bool)(fp) = b
			}
		case cStruct:
			err = d.decStruct(n.sub, fp)
		default:
			err = d.decNode(n, fp)
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

func (e *encoder) encNode(n *node, p unsafe.Pointer) error {
	w := e.w
	switch n.code {
	case cBool:
		w.WriteBool(*(*bool)(p))
	case cBits:
		x := loadInt(p, n.mem)
		if n.mem.signed() {
			v := int64(x)
			if n.clamp && n.n < 64 {
				v = min(max(v, -1<<(n.n-1)), 1<<(n.n-1)-1)
			}
			return fields.WriteInt(w, v, n.n)
		}
		if n.clamp && n.n < 64 {
			x = min(x, 1<<n.n-1)
		}
		return fields.WriteUint(w, x, n.n)
	case cRange:
		x := loadInt(p, n.mem)
		if n.mem.signed() {
			v := int64(x)
			if n.clamp {
				v = n.irng.Clamp(v)
			}
			return n.irng.Write(w, v)
		}
		if n.clamp {
			x = n.urng.Clamp(x)
		}
		return n.urng.Write(w, x)
	case cQ:
		if n.clamp {
			return n.q.WriteClamp(w, loadFloat(p, n.mem))
		}
		return n.q.Write(w, loadFloat(p, n.mem))
	case cFloat:
		if n.mem == mF32 {
			w.WriteBits(uint64(*(*uint32)(p)), 32)
		} else {
			w.WriteBits(*(*uint64)(p), 64)
		}
	case cFixed, cBitlen:
		return e.encInt(n, p)
	case cVarint:
		x := loadInt(p, n.mem)
		if n.mem.signed() {
			x = fields.Zigzag(int64(x))
		}
		fields.WriteVarint(w, x, n.n)
	case cString:
		s := *(*string)(p)
		if n.maxlen == 0 && len(s) > e.maxLen {
			return fmt.Errorf("%w: %d bytes, over the limit %d", ErrTooLong, len(s), e.maxLen)
		}
		return fields.WriteString(w, s, n.maxlen)
	case cBytes:
		b := *(*[]byte)(p)
		if n.maxlen == 0 && len(b) > e.maxLen {
			return fmt.Errorf("%w: %d bytes, over the limit %d", ErrTooLong, len(b), e.maxLen)
		}
		return fields.WriteBytes(w, b, n.maxlen)
	case cQuat:
		return n.quat.Write(w, loadQuat(n, p))
	case cTime:
		t := (*time.Time)(p)
		fields.WriteBitlen(w, fields.Zigzag(t.Unix()), 6)
		w.WriteBits(uint64(t.Nanosecond()), 30)
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
		q := *(*unsafe.Pointer)(p)
		w.WriteBool(q != nil)
		if q != nil {
			return e.encNode(n.elem, q)
		}
	case cMap:
		return e.encMap(n, p)
	}
	return nil
}

func (d *decoder) decNode(n *node, p unsafe.Pointer) error {
	r := d.r
	switch n.code {
	case cBool:
		b, err := r.ReadBool()
		if err != nil {
			return err
		}
		*(*bool)(p) = b
	case cBits:
		if n.mem.signed() {
			v, err := fields.ReadInt(r, n.n)
			if err != nil {
				return err
			}
			storeInt(p, n.mem, uint64(v))
			return nil
		}
		v, err := fields.ReadUint(r, n.n)
		if err != nil {
			return err
		}
		storeInt(p, n.mem, v)
	case cRange:
		if n.mem.signed() {
			v, err := n.irng.Read(r)
			if err != nil {
				return err
			}
			storeInt(p, n.mem, uint64(v))
			return nil
		}
		v, err := n.urng.Read(r)
		if err != nil {
			return err
		}
		storeInt(p, n.mem, v)
	case cQ:
		v, err := n.q.Read(r)
		if err != nil {
			return err
		}
		storeFloat(p, n.mem, v)
	case cFloat:
		if n.mem == mF32 {
			v, err := r.ReadBits(32)
			if err != nil {
				return err
			}
			*(*uint32)(p) = uint32(v)
		} else {
			v, err := r.ReadBits(64)
			if err != nil {
				return err
			}
			*(*uint64)(p) = v
		}
	case cFixed, cBitlen:
		return d.decInt(n, p)
	case cVarint:
		v, err := fields.ReadVarint(r, n.n)
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
	case cString:
		l, err := d.readLen(n, 8)
		if err != nil {
			return err
		}
		sp := (*string)(p)
		if l <= len(d.scratch) {
			buf := d.scratch[:l]
			if err := r.ReadBytes(buf); err != nil {
				return err
			}
			if *sp != string(buf) { // unchanged strings cost no allocation
				*sp = string(buf)
			}
			return nil
		}
		if err := d.charge(l, 1); err != nil {
			return err
		}
		buf := make([]byte, l)
		if err := r.ReadBytes(buf); err != nil {
			return err
		}
		*sp = unsafe.String(&buf[0], l)
	case cBytes:
		bp := (*[]byte)(p)
		l, err := d.readLen(n, 8)
		if err != nil {
			return err
		}
		if l == 0 {
			*bp = nil
			return nil
		}
		b := *bp
		if cap(b) < l {
			if err := d.charge(l, 1); err != nil {
				return err
			}
			b = make([]byte, l)
		}
		b = b[:l]
		if err := r.ReadBytes(b); err != nil {
			return err
		}
		*bp = b
	case cQuat:
		q, err := n.quat.Read(r)
		if err != nil {
			return err
		}
		storeQuat(n, p, q)
	case cTime:
		z, err := fields.ReadBitlen(r, 6)
		if err != nil {
			return err
		}
		ns, err := r.ReadBits(30)
		if err != nil {
			return err
		}
		if ns >= 1e9 {
			return fmt.Errorf("%w: %d nanoseconds", ErrOutOfRange, ns)
		}
		*(*time.Time)(p) = time.Unix(fields.Unzigzag(z), int64(ns)).UTC()
	case cStruct:
		return d.decStruct(n.sub, p)
	case cArray:
		return d.decElems(n, p, n.count)
	case cSlice:
		l, err := d.readLen(n, n.emin)
		if err != nil {
			return err
		}
		sh := (*sliceHeader)(p)
		if l == 0 {
			*sh = sliceHeader{}
			return nil
		}
		if sh.cap < l {
			if err := d.charge(l, n.stride); err != nil {
				return err
			}
			nv := reflect.MakeSlice(n.typ, l, l)
			sh.data, sh.cap = nv.UnsafePointer(), l
		}
		sh.len = l
		return d.decElems(n, sh.data, l)
	case cPtr:
		present, err := r.ReadBool()
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
	if el.code == cStruct && e.stats == 0 && !e.debug {
		// Structs with a flat plan, one after the other without the
		// per-element dispatch; an error rewinds the whole run and the
		// loop below reports it.
		if fp := el.sub.flat; fp != nil && e.depth+fp.depth <= e.maxDepth {
			start := e.w.Len()
			if e.encFlats(fp, base, count, n.stride) == nil {
				return nil
			}
			e.w.Truncate(start)
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
	if el.code == cStruct && !d.debug {
		// as in encElems
		if fp := el.sub.flat; fp != nil && d.depth+fp.depth <= d.maxDepth {
			saved := *d.r
			if d.decFlats(fp, base, count, n.stride) == nil {
				return nil
			}
			*d.r = saved
		}
	}
	for i := 0; i < count; i++ {
		if err := d.decNode(el, ptrAt(base, uintptr(i)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", i), d.r.Pos())
		}
	}
	return nil
}

// ---- adaptive bit-length integers and their groups ----

func isSigned(n *node) bool { return n.code == cFixed || n.mem.signed() }

// intValue returns the sign and magnitude of a bitlen or fixed value.
func intValue(n *node, p unsafe.Pointer) (neg bool, mag uint64, err error) {
	if n.code == cFixed {
		i, err := n.fx.ToInt(loadFloat(p, n.mem))
		if err != nil {
			return false, 0, err
		}
		if !fixedExact(n, i) {
			return false, 0, fmt.Errorf("%w: %d steps of %g are beyond the precision of %s", ErrOutOfRange, i, n.fx.Prec(), n.typ)
		}
		neg, mag = fields.Magnitude(i)
		return neg, mag, nil
	}
	x := loadInt(p, n.mem)
	if n.mem.signed() {
		neg, mag = fields.Magnitude(int64(x))
		return neg, mag, nil
	}
	return false, x, nil
}

// storeInt stores a decoded sign and magnitude into a bitlen or fixed value.
func storeSignMag(n *node, p unsafe.Pointer, neg bool, mag uint64) error {
	if neg && mag == 0 {
		return fmt.Errorf("%w: negative zero", ErrMalformed)
	}
	var v uint64
	switch {
	case neg:
		if mag > 1<<63 {
			return fmt.Errorf("%w: -%d does not fit int64", ErrOutOfRange, mag)
		}
		v = -mag
	case isSigned(n) && mag > math.MaxInt64:
		return fmt.Errorf("%w: %d does not fit int64", ErrOutOfRange, mag)
	default:
		v = mag
	}
	if n.code == cFixed {
		if !fixedExact(n, int64(v)) {
			return fmt.Errorf("%w: %d steps of %g are beyond the precision of %s", ErrOutOfRange, int64(v), n.fx.Prec(), n.typ)
		}
		storeFloat(p, n.mem, n.fx.FromInt(int64(v)))
		return nil
	}
	if !fitsInt(n.mem, v) {
		return fmt.Errorf("%w: value does not fit %s", ErrOutOfRange, n.typ)
	}
	storeInt(p, n.mem, v)
	return nil
}

// fixedExact reports whether i steps of a fixed-point field survive a trip
// through the field's float type: ToInt(FromInt(i)) == i. Below 2^22 steps
// (float32) or 2^50 (float64) they always do. Beyond, the encoder and the
// decoder both refuse the counts that do not (ErrOutOfRange), so a decoded
// value always encodes to the same bits and Quantize is idempotent.
func fixedExact(n *node, i int64) bool {
	lim := int64(1) << 50
	if n.mem == mF32 {
		lim = 1 << 22
	}
	if i > -lim && i < lim && (n.mem != mF32 || n.fx.Prec() < 1e30) {
		return true
	}
	f := n.fx.FromInt(i)
	if n.mem == mF32 {
		f = float64(float32(f))
	}
	j, err := n.fx.ToInt(f)
	return err == nil && j == i
}

func (e *encoder) encInt(n *node, p unsafe.Pointer) error {
	neg, mag, err := intValue(n, p)
	if err != nil {
		return err
	}
	if neg && !e.neg {
		return errNeedSign
	}
	if isSigned(n) {
		e.signFlag()
		if e.neg {
			e.w.WriteBool(neg)
		}
	}
	fields.WriteBitlen(e.w, mag, n.n)
	return nil
}

func (d *decoder) decInt(n *node, p unsafe.Pointer) error {
	neg, mag, err := d.readInt(n)
	if err != nil {
		return err
	}
	return d.storeSignMag(n, p, neg, mag)
}

// readInt reads one individually coded bitlen or fixed value: its sign bit
// (when signed and the message's flag is set), then its magnitude.
func (d *decoder) readInt(n *node) (neg bool, mag uint64, err error) {
	if isSigned(n) {
		if err := d.signFlag(); err != nil {
			return false, 0, err
		}
		if d.neg {
			if neg, err = d.r.ReadBool(); err != nil {
				return false, 0, err
			}
		}
	}
	mag, err = fields.ReadBitlen(d.r, n.n)
	return neg, mag, err
}

// storeSignMag stores a decoded value and notes a negative one: a message
// whose flag is set must carry one (see decodeRoot).
func (d *decoder) storeSignMag(n *node, p unsafe.Pointer, neg bool, mag uint64) error {
	if neg {
		d.sawNeg = true
	}
	return storeSignMag(n, p, neg, mag)
}

// seq addresses the members of a group: the elements of an array or slice,
// or the fields of one struct that share a group name.
type seq struct {
	base   unsafe.Pointer
	stride uintptr
	elem   *node
	p      *plan
	idx    []int
}

func (s *seq) at(i int) (*node, unsafe.Pointer) {
	if s.idx != nil {
		f := &s.p.fields[s.idx[i]]
		return f.node, ptrAt(s.base, f.off)
	}
	return s.elem, ptrAt(s.base, uintptr(i)*s.stride)
}

// signed reports whether any member is a signed value.
func (s *seq) signed() bool {
	if s.idx == nil {
		return isSigned(s.elem)
	}
	return s.p.fields[s.idx[0]].grp.signed // computed by the compiler
}

func (s *seq) wrap(err error, i, bit int) error {
	if s.idx != nil {
		return wrapField(err, s.p.fields[s.idx[i]].name, bit)
	}
	return wrapField(err, fmt.Sprintf("[%d]", i), bit)
}

// encGroup writes count values sharing one bit length when that is
// strictly shorter: a mode bit (for two or more values), then either every
// value coded alone, or the shared highest-bit index in width bits and each
// value's sign bit (signed values of a message with the sign flag) and low
// p+1 bits.
func (e *encoder) encGroup(s *seq, count, width int) error {
	if count == 0 {
		return nil
	}
	if count == 1 {
		n, p := s.at(0)
		if err := e.encInt(n, p); err != nil {
			return s.wrap(err, 0, e.w.Len())
		}
		return nil
	}
	if s.signed() {
		e.signFlag()
	}
	maxHigh, indiv, signBits := 0, 0, 0
	for i := 0; i < count; i++ {
		n, p := s.at(i)
		neg, mag, err := intValue(n, p)
		if err != nil {
			return s.wrap(err, i, e.w.Len())
		}
		if neg && !e.neg {
			return errNeedSign
		}
		if e.neg && isSigned(n) {
			signBits++
		}
		indiv += fields.BitlenBits(mag, n.n)
		if h := fields.HighBit(mag); h > maxHigh {
			maxHigh = h
		}
	}
	shared := width + count*(maxHigh+1)
	if shared >= indiv {
		e.w.WriteBool(false)
		for i := 0; i < count; i++ {
			n, p := s.at(i)
			if err := e.encInt(n, p); err != nil {
				return s.wrap(err, i, e.w.Len())
			}
		}
		return nil
	}
	e.w.WriteBool(true)
	e.w.WriteBits(uint64(maxHigh), width)
	for i := 0; i < count; i++ {
		n, p := s.at(i)
		neg, mag, _ := intValue(n, p)
		if e.neg && isSigned(n) {
			e.w.WriteBool(neg)
		}
		e.w.WriteBits(mag, maxHigh+1)
	}
	return nil
}

func (d *decoder) decGroup(s *seq, count, width int) error {
	if count == 0 {
		return nil
	}
	shared := false
	if count > 1 && s.signed() {
		if err := d.signFlag(); err != nil {
			return s.wrap(err, 0, d.r.Pos())
		}
	}
	if count > 1 {
		b, err := d.r.ReadBool()
		if err != nil {
			return s.wrap(err, 0, d.r.Pos())
		}
		shared = b
	}
	// The encoder picks the shared mode exactly when it is strictly
	// shorter, with the smallest shared width; anything else is not its
	// output, and is rejected so that every group has one encoding.
	maxHigh, indiv := 0, 0
	if !shared {
		for i := 0; i < count; i++ {
			n, p := s.at(i)
			neg, mag, err := d.readInt(n)
			if err == nil {
				err = d.storeSignMag(n, p, neg, mag)
			}
			if err != nil {
				return s.wrap(err, i, d.r.Pos())
			}
			indiv += fields.BitlenBits(mag, n.n)
			maxHigh = max(maxHigh, fields.HighBit(mag))
		}
		if count > 1 && width+count*(maxHigh+1) < indiv {
			return s.wrap(fmt.Errorf("%w: group coded one by one where a shared length is shorter", ErrMalformed), 0, d.r.Pos())
		}
		return nil
	}
	h, err := d.r.ReadBits(width)
	if err != nil {
		return s.wrap(err, 0, d.r.Pos())
	}
	for i := 0; i < count; i++ {
		n, p := s.at(i)
		neg := false
		if d.neg && isSigned(n) {
			if neg, err = d.r.ReadBool(); err != nil {
				return s.wrap(err, i, d.r.Pos())
			}
		}
		mag, err := d.r.ReadBits(int(h) + 1)
		if err != nil {
			return s.wrap(err, i, d.r.Pos())
		}
		if err := d.storeSignMag(n, p, neg, mag); err != nil {
			return s.wrap(err, i, d.r.Pos())
		}
		indiv += fields.BitlenBits(mag, n.n)
		maxHigh = max(maxHigh, fields.HighBit(mag))
	}
	if maxHigh != int(h) || width+count*(maxHigh+1) >= indiv {
		return s.wrap(fmt.Errorf("%w: shared-length group that is not the shortest coding", ErrMalformed), 0, d.r.Pos())
	}
	return nil
}

// ---- quaternions ----

func loadQuat(n *node, p unsafe.Pointer) [4]float64 {
	o := &n.qoff
	if n.mem == mF32 { // the common case, unrolled
		return [4]float64{float64(*(*float32)(ptrAt(p, o[0]))), float64(*(*float32)(ptrAt(p, o[1]))),
			float64(*(*float32)(ptrAt(p, o[2]))), float64(*(*float32)(ptrAt(p, o[3])))}
	}
	return [4]float64{*(*float64)(ptrAt(p, o[0])), *(*float64)(ptrAt(p, o[1])),
		*(*float64)(ptrAt(p, o[2])), *(*float64)(ptrAt(p, o[3]))}
}

func storeQuat(n *node, p unsafe.Pointer, q [4]float64) {
	o := &n.qoff
	if n.mem == mF32 { // the common case, unrolled as in loadQuat
		*(*float32)(ptrAt(p, o[0])), *(*float32)(ptrAt(p, o[1])) = float32(q[0]), float32(q[1])
		*(*float32)(ptrAt(p, o[2])), *(*float32)(ptrAt(p, o[3])) = float32(q[2]), float32(q[3])
		return
	}
	for i := range q {
		storeFloat(ptrAt(p, o[i]), n.mem, q[i])
	}
}

// ---- maps (the one coding that uses reflect on the hot path) ----

func (e *encoder) encMap(n *node, p unsafe.Pointer) error {
	mv := reflect.NewAt(n.typ, p).Elem()
	l := mv.Len()
	if err := e.writeLen(l, n.maxlen); err != nil {
		return err
	}
	if l == 0 {
		return nil
	}
	keys, vals := sortedEntries(n, p)
	if nanKey(n, keys) {
		// NaN keys have no order (the encoding would vary from one
		// Marshal to the next) and cannot be looked up.
		return fmt.Errorf("%w: NaN map key", ErrInvalidValue)
	}
	for i, k := range keys {
		if err := e.encNode(n.key, k.Addr().UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("{%v}", k), e.w.Len())
		}
		if err := e.encNode(n.elem, vals[i].UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("[%v]", k), e.w.Len())
		}
	}
	return nil
}

func (d *decoder) decMap(n *node, p unsafe.Pointer) error {
	l, err := d.readLen(n, n.emin)
	if err != nil {
		return err
	}
	mv := reflect.NewAt(n.typ, p).Elem()
	if l == 0 {
		mv.SetZero()
		return nil
	}
	// A map holds at most as many entries as its key type has values
	// (two for bool, 256 for 8-bit keys): more would repeat a key, which
	// readEntries rejects.
	if err := d.charge(1, mapCost(n, min(l, keyRange(n)))); err != nil {
		return err
	}
	if mv.IsNil() {
		mv.Set(reflect.MakeMapWithSize(n.typ, min(l, keyRange(n))))
	} else {
		mv.Clear()
	}
	if err := d.readEntries(n, mv, l); err != nil {
		return err
	}
	if mv.Len() != l {
		return fmt.Errorf("%w: duplicate map key", ErrMalformed)
	}
	return nil
}

// readEntries reads count key-value pairs of map node n into m. The keys
// must come in strictly ascending order, the one order the encoder writes,
// and must not be in m already: an out-of-order or repeated key is
// ErrMalformed as soon as it is read, before anything is decoded for the
// entries after it.
func (d *decoder) readEntries(n *node, m reflect.Value, count int) error {
	if count == 0 {
		return nil
	}
	// The scratch key, previous key and value.
	if err := d.charge(1, 2*n.typ.Key().Size()+n.typ.Elem().Size()); err != nil {
		return err
	}
	k := reflect.New(n.typ.Key())
	v := reflect.New(n.typ.Elem())
	prev := reflect.New(n.typ.Key()).Elem()
	check := m.Len() > 0 // entries already there: look each key up
	for i := 0; i < count; i++ {
		k.Elem().SetZero()
		v.Elem().SetZero()
		if err := d.decNode(n.key, k.UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		if n.key.code == cFloat && math.IsNaN(loadFloat(k.UnsafePointer(), n.key.mem)) {
			return wrapField(fmt.Errorf("%w: NaN map key", ErrInvalidValue), fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		if i > 0 && !keyBefore(prev, k.Elem()) {
			return wrapField(fmt.Errorf("%w: map key %v after %v: keys must be in ascending order, each once", ErrMalformed, k.Elem(), prev), fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		if check && m.MapIndex(k.Elem()).IsValid() {
			return wrapField(fmt.Errorf("%w: duplicate map key %v", ErrMalformed, k.Elem()), fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		prev.Set(k.Elem())
		if err := d.decNode(n.elem, v.UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("[%v]", k.Elem()), d.r.Pos())
		}
		m.SetMapIndex(k.Elem(), v.Elem())
	}
	return nil
}

// keyRange is how many distinct keys map node n's key type has, capped at
// MaxInt32.
func keyRange(n *node) int {
	switch n.typ.Key().Kind() {
	case reflect.Bool:
		return 2
	case reflect.Int8, reflect.Uint8:
		return 1 << 8
	case reflect.Int16, reflect.Uint16:
		return 1 << 16
	}
	return math.MaxInt32
}

// mapCost is what a map of node n with count entries costs in memory, at
// most: each entry's key and value (stored apart when over 128 bytes) and
// two words of bookkeeping, and a first group of eight slots.
func mapCost(n *node, count int) uintptr {
	k, v := n.typ.Key().Size(), n.typ.Elem().Size()
	return uintptr(count)*(k+v+16) + 8*(min(k, 128)+min(v, 128)+1) + 64
}

// keyBefore reports whether map key a orders strictly before key b, in the
// order of keyLess.
func keyBefore(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Bool:
		return !a.Bool() && b.Bool()
	case reflect.String:
		return a.String() < b.String()
	case reflect.Float32, reflect.Float64:
		return a.Float() < b.Float()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() < b.Int()
	}
	return a.Uint() < b.Uint()
}

// sortIndexes orders idx by the keys they point to.
func sortIndexes(keys []reflect.Value, idx []int) {
	less := keyLess(keys)
	sort.Slice(idx, func(a, b int) bool { return less(idx[a], idx[b]) })
}

func keyLess(keys []reflect.Value) func(i, j int) bool {
	switch keys[0].Kind() {
	case reflect.Bool:
		return func(i, j int) bool { return !keys[i].Bool() && keys[j].Bool() }
	case reflect.String:
		return func(i, j int) bool { return keys[i].String() < keys[j].String() }
	case reflect.Float32, reflect.Float64:
		return func(i, j int) bool { return keys[i].Float() < keys[j].Float() }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(i, j int) bool { return keys[i].Int() < keys[j].Int() }
	}
	return func(i, j int) bool { return keys[i].Uint() < keys[j].Uint() }
}
