package bitwire

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
)

// Codec is the compiled plan of struct type T. It is safe for concurrent use.
type Codec[T any] struct {
	o       options // WithStats, WithLimits, WithDebug
	p       *plan
	maxBits int
	fp      uint64    // this codec's fingerprint (fps[0] or fps[1])
	fps     [2]uint64 // the fingerprints without and with debug mode
	lfps    [2]uint64 // fps without a model (WithModel)
	mdl     *Model    // the model of WithModel, or nil
	layout  string
}

var codecs sync.Map // reflect.Type -> *Codec[T] (as any)

// For compiles and validates the plan of struct type T, or returns the one
// compiled before. Every tag problem is reported here, as an error wrapping
// ErrBadTag or ErrUnsupportedType that names the field path.
func For[T any]() (*Codec[T], error) {
	t := reflect.TypeFor[T]()
	if c, ok := codecs.Load(t); ok {
		return c.(*Codec[T]), nil
	}
	p, err := compileRoot(t)
	if err != nil {
		return nil, err
	}
	s := messageSchema(p, false)
	c := &Codec[T]{p: p, maxBits: s.MaxBits, layout: layoutSchema(s)}
	c.fps[0] = fingerprint(s)
	s.Debug = true
	c.fps[1] = fingerprint(s)
	c.fp = c.fps[0]
	c.lfps = c.fps
	actual, _ := codecs.LoadOrStore(t, c)
	return actual.(*Codec[T]), nil
}

// MustFor is like For but panics on error. Use it for package-level codec
// variables of types whose tags are known to be right.
func MustFor[T any]() *Codec[T] {
	c, err := For[T]()
	if err != nil {
		panic(err)
	}
	return c
}

// Marshal encodes v into a new byte slice.
func (c *Codec[T]) Marshal(v *T) ([]byte, error) {
	return marshalPlan(c.p, unsafe.Pointer(v), &c.o)
}

// Append encodes v after the bytes of dst and returns the extended slice. On
// error it returns dst unchanged. It allocates nothing when dst has room.
func (c *Codec[T]) Append(dst []byte, v *T) ([]byte, error) {
	return appendPlan(dst, c.p, unsafe.Pointer(v), &c.o)
}

// Unmarshal decodes data into v, which it overwrites. It reuses v's slices,
// strings, maps and pointees where it can. data must hold exactly one value:
// a whole unread byte or non-zero padding bits is ErrTrailingData. On error,
// v may be partly overwritten.
func (c *Codec[T]) Unmarshal(data []byte, v *T) error {
	return unmarshalPlan(data, c.p, unsafe.Pointer(v), &c.o)
}

// Encode writes v to w, after whatever w holds: many values can share one
// packet. On error w is left as it was.
func (c *Codec[T]) Encode(w *bits.Writer, v *T) error {
	return encodeRootOpt(c.p, w, unsafe.Pointer(v), &c.o)
}

// Decode reads one value from r into v. Unlike Unmarshal it does not check
// that the input ends after the value.
func (c *Codec[T]) Decode(r *bits.Reader, v *T) error {
	return decodeRootOpt(c.p, r, unsafe.Pointer(v), &c.o)
}

// Quantize replaces v, in place, with exactly what a receiver decodes from
// its encoding: floats snap to their quantization step, and so on. It fails
// where Marshal would fail.
func (c *Codec[T]) Quantize(v *T) error {
	if v == nil {
		return nilError(c.p)
	}
	o := c.o
	o.stats = nil // quantizing is not sending
	w := bits.GetWriter()
	defer bits.PutWriter(w)
	if err := encodeRootOpt(c.p, w, unsafe.Pointer(v), &o); err != nil {
		return err
	}
	var r bits.Reader
	r.Reset(w.Bytes())
	return decodeRootOpt(c.p, &r, unsafe.Pointer(v), &o)
}

// Equal reports whether a and b are equal after quantization, that is
// whether they encode to the same bits. A value that cannot be encoded is
// equal to nothing.
func (c *Codec[T]) Equal(a, b *T) bool {
	o := c.o
	o.stats = nil
	wa, wb := bits.GetWriter(), bits.GetWriter()
	defer bits.PutWriter(wa)
	defer bits.PutWriter(wb)
	if encodeRootOpt(c.p, wa, unsafe.Pointer(a), &o) != nil || encodeRootOpt(c.p, wb, unsafe.Pointer(b), &o) != nil {
		return false
	}
	return wa.Len() == wb.Len() && bytes.Equal(wa.Bytes(), wb.Bytes())
}

// MaxBits returns the worst-case size of Encode in bits, or -1 when it is
// unbounded (a string, slice or map without maxlen, or a recursive type).
func (c *Codec[T]) MaxBits() int { return c.maxBits }

// Fingerprint is a hash of the wire format: of the schema's field order,
// codings and their parameters, and debug mode, but not of Go type or field
// names. Two codecs whose messages have the same bits have the same
// fingerprint, so peers can check they speak the same format; any language
// can compute it from the schema (docs/wire-format.md, "Fingerprint").
func (c *Codec[T]) Fingerprint() uint64 { return c.fp }

// Layout returns a table of the schema: one row per leaf, container and
// composite struct, with its field path (Players[].Pos.X), coding, size in
// bits and options.
func (c *Codec[T]) Layout() string { return c.layout }

// ---- package-level functions: any struct, found through a cache ----

var rootPlans sync.Map // reflect.Type -> *plan

func planOf(t reflect.Type) (*plan, error) {
	if p, ok := rootPlans.Load(t); ok {
		return p.(*plan), nil
	}
	p, err := compileRoot(t)
	if err != nil {
		return nil, err
	}
	rootPlans.Store(t, p)
	return p, nil
}

// valuePointer returns the plan of v's struct type and a pointer to the
// struct: v itself when it is a pointer, else a copy.
func valuePointer(v any) (*plan, unsafe.Pointer, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil, nil, fmt.Errorf("%w: nil", ErrUnsupportedType)
	}
	t := rv.Type()
	if t.Kind() == reflect.Pointer {
		p, err := planOf(t.Elem())
		if err != nil {
			return nil, nil, err
		}
		if rv.IsNil() {
			return nil, nil, nilError(p)
		}
		return p, rv.UnsafePointer(), nil
	}
	p, err := planOf(t)
	if err != nil {
		return nil, nil, err
	}
	cp := reflect.New(t)
	cp.Elem().Set(rv)
	return p, cp.UnsafePointer(), nil
}

func nilError(p *plan) error {
	return &FieldError{Path: p.name, Bit: -1, Err: fmt.Errorf("%w: nil pointer", ErrInvalidValue)}
}

// Marshal encodes v, a struct or a pointer to one, into a new byte slice.
func Marshal(v any) ([]byte, error) {
	p, ptr, err := valuePointer(v)
	if err != nil {
		return nil, err
	}
	return marshalPlan(p, ptr, nil)
}

// Append encodes v, a struct or a pointer to one, after the bytes of dst.
func Append(dst []byte, v any) ([]byte, error) {
	p, ptr, err := valuePointer(v)
	if err != nil {
		return dst, err
	}
	return appendPlan(dst, p, ptr, nil)
}

// Unmarshal decodes data into v, a non-nil pointer to a struct.
func Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer {
		return fmt.Errorf("%w: Unmarshal needs a non-nil pointer to a struct, not %T", ErrUnsupportedType, v)
	}
	p, err := planOf(rv.Type().Elem())
	if err != nil {
		return err
	}
	if rv.IsNil() {
		return nilError(p)
	}
	return unmarshalPlan(data, p, rv.UnsafePointer(), nil)
}

// ---- shared by both ----

func marshalPlan(p *plan, ptr unsafe.Pointer, o *options) ([]byte, error) {
	if ptr == nil {
		return nil, nilError(p)
	}
	w := bits.GetWriter()
	defer bits.PutWriter(w)
	if err := encodeRootOpt(p, w, ptr, o); err != nil {
		return nil, err
	}
	return append([]byte(nil), w.Bytes()...), nil
}

func appendPlan(dst []byte, p *plan, ptr unsafe.Pointer, o *options) ([]byte, error) {
	if ptr == nil {
		return dst, nilError(p)
	}
	if p.flat != nil && p.flat.enc {
		if out, ok := appendWords(dst, p, ptr, o); ok {
			return out, nil
		}
	}
	var w bits.Writer
	w.ResetAppend(dst)
	if err := encodeRootOpt(p, &w, ptr, o); err != nil {
		return dst, err
	}
	return w.Bytes(), nil
}

func unmarshalPlan(data []byte, p *plan, ptr unsafe.Pointer, o *options) error {
	if ptr == nil {
		return nilError(p)
	}
	if p.flat != nil && p.flat.words > 0 && unmarshalWords(data, p, ptr, o) {
		return nil
	}
	var r bits.Reader
	r.Reset(data)
	if err := decodeRootOpt(p, &r, ptr, o); err != nil {
		return err
	}
	if !r.CheckPadding() {
		return &FieldError{Path: p.name, Bit: r.Pos(), Err: ErrTrailingData}
	}
	return nil
}

// encodeRoot writes one message with the default options.
func encodeRoot(p *plan, w *bits.Writer, ptr unsafe.Pointer) error {
	return encodeRootOpt(p, w, ptr, nil)
}

// encodeRootOpt writes one message with options o. When the message carries
// signed adaptive integers, one "any negative" flag bit sits just before the
// first of them; it is first written as 0, and if a negative value turns up
// the writer rewinds and encodes the message again with the flag set.
func encodeRootOpt(p *plan, w *bits.Writer, ptr unsafe.Pointer, o *options) error {
	if ptr == nil {
		return nilError(p)
	}
	if fp := p.flat; fp != nil && o.plain() {
		// A flat root (no sign flag: flat plans hold no signed adaptive
		// values) needs none of the set-up below; on an error the general
		// path runs and reports it.
		e := o.encoder(w, nil, 0)
		m := e.mark()
		if e.depth = 1; fp.depth <= e.maxDepth && e.encFlat(fp, ptr) == nil {
			return nil
		}
		e.rewind(m)
	}
	h := startStats(o.statsOf())
	e := o.encoder(w, nil, h)
	m := e.mark()
	err := e.encStruct(p, ptr)
	if err == errNeedSign {
		e.rewind(m)
		restartStats(h)
		e = o.encoder(w, nil, h)
		e.neg = true
		err = e.encStruct(p, ptr)
	}
	if err != nil {
		e.rewind(m)
		endStats(h, false)
		return rootError(p, err, w.Len())
	}
	endStats(h, true)
	return nil
}

// decodeRoot reads one message with the default options.
func decodeRoot(p *plan, r *bits.Reader, ptr unsafe.Pointer) error {
	return decodeRootOpt(p, r, ptr, nil)
}

// decodeRootOpt reads one message with options o and checks its sign flag
// (see encodeRootOpt).
func decodeRootOpt(p *plan, r *bits.Reader, ptr unsafe.Pointer, o *options) error {
	if ptr == nil {
		return nilError(p)
	}
	d := o.decoder(r, nil)
	if fp := p.flat; fp != nil && o.plain() {
		// as in encodeRootOpt
		saved := *r
		if d.depth = 1; fp.depth <= d.maxDepth && d.decFlat(fp, ptr) == nil {
			return nil
		}
		*r, d.depth = saved, 0
	}
	if err := d.decStruct(p, ptr); err != nil {
		return rootError(p, err, r.Pos())
	}
	return d.checkSign(p)
}

// checkSign rejects a message whose "any negative" flag is set but which
// carries no negative value: the encoder never writes that.
func (d *decoder) checkSign(p *plan) error {
	if d.neg && !d.sawNeg {
		return rootError(p, fmt.Errorf("%w: sign flag set on a message without negative values", ErrMalformed), d.r.Pos())
	}
	return nil
}

func rootError(p *plan, err error, bit int) error {
	return wrapField(err, p.name, bit)
}

// ---- delta encoding ----

// MarshalDelta encodes what a receiver holding base needs to rebuild cur.
func (c *Codec[T]) MarshalDelta(base, cur *T) ([]byte, error) {
	w := bits.GetWriter()
	defer bits.PutWriter(w)
	if err := encodeDeltaRoot(c.p, w, unsafe.Pointer(base), unsafe.Pointer(cur), &c.o); err != nil {
		return nil, err
	}
	return append([]byte(nil), w.Bytes()...), nil
}

// AppendDelta appends the delta from base to cur to dst. On error it returns
// dst unchanged.
func (c *Codec[T]) AppendDelta(dst []byte, base, cur *T) ([]byte, error) {
	return appendDeltaPlan(dst, c.p, unsafe.Pointer(base), unsafe.Pointer(cur), &c.o)
}

// UnmarshalDelta rebuilds into v the value whose delta from base is data.
// v may be base itself. On error, v may be partly overwritten.
func (c *Codec[T]) UnmarshalDelta(data []byte, base, v *T) error {
	return unmarshalDeltaPlan(data, c.p, unsafe.Pointer(base), unsafe.Pointer(v), &c.o)
}

// EncodeDelta writes the delta from base to cur to w. On error w is left as
// it was.
func (c *Codec[T]) EncodeDelta(w *bits.Writer, base, cur *T) error {
	return encodeDeltaRoot(c.p, w, unsafe.Pointer(base), unsafe.Pointer(cur), &c.o)
}

// DecodeDelta reads a delta from r and rebuilds the value into v.
func (c *Codec[T]) DecodeDelta(r *bits.Reader, base, v *T) error {
	return decodeDeltaRoot(c.p, r, unsafe.Pointer(base), unsafe.Pointer(v), &c.o)
}

// MarshalDelta encodes what a receiver holding base needs to rebuild cur;
// both are the same struct type, as values or pointers.
func MarshalDelta(base, cur any) ([]byte, error) {
	return AppendDelta(nil, base, cur)
}

// AppendDelta appends the delta from base to cur to dst.
func AppendDelta(dst []byte, base, cur any) ([]byte, error) {
	p, pc, err := valuePointer(cur)
	if err != nil {
		return dst, err
	}
	pb2, pb, err := valuePointer(base)
	if err != nil {
		return dst, err
	}
	if pb2 != p {
		return dst, fmt.Errorf("%w: base is %T, cur is %T", ErrUnsupportedType, base, cur)
	}
	return appendDeltaPlan(dst, p, pb, pc, nil)
}

// UnmarshalDelta rebuilds into v (a non-nil pointer to a struct) the value
// whose delta from base (the same struct type, as a value or a pointer) is
// data.
func UnmarshalDelta(data []byte, base, v any) error {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer {
		return fmt.Errorf("%w: UnmarshalDelta needs a non-nil pointer to a struct, not %T", ErrUnsupportedType, v)
	}
	p, err := planOf(rv.Type().Elem())
	if err != nil {
		return err
	}
	if rv.IsNil() {
		return nilError(p)
	}
	pb2, pb, err := valuePointer(base)
	if err != nil {
		return err
	}
	if pb2 != p {
		return fmt.Errorf("%w: base is %T, v is %T", ErrUnsupportedType, base, v)
	}
	return unmarshalDeltaPlan(data, p, pb, rv.UnsafePointer(), nil)
}

func appendDeltaPlan(dst []byte, p *plan, b, c unsafe.Pointer, o *options) ([]byte, error) {
	var w bits.Writer
	w.ResetAppend(dst)
	if err := encodeDeltaRoot(p, &w, b, c, o); err != nil {
		return dst, err
	}
	return w.Bytes(), nil
}

func unmarshalDeltaPlan(data []byte, p *plan, b, v unsafe.Pointer, o *options) error {
	var r bits.Reader
	r.Reset(data)
	if err := decodeDeltaRoot(p, &r, b, v, o); err != nil {
		return err
	}
	if !r.CheckPadding() {
		return &FieldError{Path: p.name, Bit: r.Pos(), Err: ErrTrailingData}
	}
	return nil
}

func encodeDeltaRoot(p *plan, w *bits.Writer, b, c unsafe.Pointer, o *options) error {
	if b == nil || c == nil {
		return nilError(p)
	}
	ar := arenas.Get().(*arena)
	defer func() {
		ar.buf, ar.quats, ar.saved, ar.marks, ar.rt, ar.words = ar.buf[:0], ar.quats[:0], ar.saved[:0], ar.marks[:0], nil, ar.words[:0]
		arenas.Put(ar)
	}()
	if o != nil && o.model != nil {
		if o.model.err != nil {
			return rootError(p, o.model.err, w.Len())
		}
		ar.rt = o.model
	}
	h := startStats(o.statsOf())
	e := o.encoder(w, ar, h)
	m := e.markStates()
	_, err := e.encStructDelta(p, b, c, -1)
	if err == errNeedSign {
		e.rewind(m)
		restartStats(h)
		e = o.encoder(w, ar, h)
		m = e.markStates()
		e.neg = true
		_, err = e.encStructDelta(p, b, c, -1)
	}
	if err != nil {
		e.rewind(m)
		endStats(h, false)
		return rootError(p, err, w.Len())
	}
	endStats(h, true)
	return nil
}

func decodeDeltaRoot(p *plan, r *bits.Reader, b, v unsafe.Pointer, o *options) error {
	if b == nil || v == nil {
		return nilError(p)
	}
	ar := arenas.Get().(*arena)
	defer func() {
		ar.buf, ar.quats, ar.saved, ar.rt, ar.words = ar.buf[:0], ar.quats[:0], ar.saved[:0], nil, ar.words[:0] // a decoder takes no marks
		arenas.Put(ar)
	}()
	if o != nil && o.model != nil {
		if o.model.err != nil {
			return rootError(p, o.model.err, r.Pos())
		}
		ar.rt = o.model
	}
	d := o.decoder(r, ar)
	dst := v
	if b == v {
		dst = reflect.New(p.typ).UnsafePointer()
	}
	if dp := p.dflat; dp == nil || dp.decBits == 0 || !d.decStructDeltaKernel(dp, dp.ops, dp.decBits, b, dst) {
		if err := d.decStructDelta(p, b, dst, -1); err != nil {
			return rootError(p, err, r.Pos())
		}
	}
	if err := d.checkSign(p); err != nil {
		return err
	}
	if dst != v {
		copyStruct(p, v, dst)
	}
	return nil
}
