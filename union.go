package bitwire

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// ErrUnknownTag: a union message carries a tag with no variant, or a value
// of a type that is not one of the union's variants is marshalled.
var ErrUnknownTag = errors.New("bitwire: unknown union tag")

// Union codes tagged messages: one of several struct types, told apart by
// a tag. Variant i (in the order given to NewUnion) is tag i, written in
// BitsRequired(n-1) bits before the message (no bits for a single variant).
// A Union is safe for concurrent use.
//
// Several messages in one packet: write their count with EncodeCount, then
// each message with Encode; the reader calls DecodeCount and then Decode
// or DecodeInto that many times. (Nothing else marks where the messages
// end: the padding of the last byte could otherwise read as more.)
type Union struct {
	plans []*plan
	index map[reflect.Type]int
	bits  int
	min   int // the fewest bits a message takes, its tag included
	fp    uint64
}

// NewUnion compiles a union of the struct types of variants, given as
// values or pointers (NewUnion(Move{}, Chat{}) or NewUnion((*Move)(nil))).
func NewUnion(variants ...any) (*Union, error) {
	if len(variants) == 0 {
		return nil, fmt.Errorf("%w: a union needs at least one variant", ErrUnsupportedType)
	}
	u := &Union{index: map[reflect.Type]int{}}
	for i, v := range variants {
		t := reflect.TypeOf(v)
		if t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("%w: union variant %d is %T, not a struct or a pointer to one", ErrUnsupportedType, i, v)
		}
		if _, dup := u.index[t]; dup {
			return nil, fmt.Errorf("%w: union variant %s given twice", ErrUnsupportedType, t)
		}
		p, err := planOf(t)
		if err != nil {
			return nil, err
		}
		u.index[t] = i
		u.plans = append(u.plans, p)
	}
	u.bits = fields.BitsRequired(uint64(len(variants) - 1))
	u.min = math.MaxInt
	for _, p := range u.plans {
		u.min = min(u.min, u.bits+minBitsPlan(p))
	}
	u.fp = fingerprint(unionSchema(u.plans))
	return u, nil
}

// TagBits returns the size of the tag in bits.
func (u *Union) TagBits() int { return u.bits }

// Fingerprint is a hash of the union's wire format: the variants' order
// and their schemas' wire content, without Go names (docs/wire-format.md,
// "Fingerprint").
func (u *Union) Fingerprint() uint64 { return u.fp }

// Encode writes v's tag and then v to w. v is a variant's struct or a
// pointer to one. On error w is left as it was.
func (u *Union) Encode(w *bits.Writer, v any) error {
	tag, ptr, err := u.variant(v)
	if err != nil {
		return err
	}
	start := w.Len()
	w.WriteBits(uint64(tag), u.bits)
	if err := encodeRoot(u.plans[tag], w, ptr); err != nil {
		w.Truncate(start)
		return err
	}
	return nil
}

// Decode reads one tagged message from r and returns a pointer to a new
// value of the variant's struct type (*Move for a Move variant).
func (u *Union) Decode(r *bits.Reader) (any, error) {
	tag, err := r.ReadBits(u.bits)
	if err != nil {
		return nil, err
	}
	if tag >= uint64(len(u.plans)) {
		return nil, fmt.Errorf("%w: tag %d, the union has %d variants", ErrUnknownTag, tag, len(u.plans))
	}
	p := u.plans[tag]
	// The new value is charged to the input's allocation budget like
	// everything else the input makes the decoder allocate.
	d := (*options)(nil).decoder(r, nil)
	if err := d.charge(1, p.typ.Size()); err != nil {
		return nil, rootError(p, err, r.Pos())
	}
	v := reflect.New(p.typ)
	if err := decodeRoot(p, r, v.UnsafePointer()); err != nil {
		return nil, err
	}
	return v.Interface(), nil
}

// DecodeInto reads one tagged message from r into the caller's value of its
// variant and returns the tag: dst holds one pointer per variant, in the
// order given to NewUnion (u.DecodeInto(r, &move, &chat) for NewUnion(Move{},
// Chat{})), and the message is decoded into dst[tag], reusing its slices,
// strings and maps as Unmarshal does. It allocates nothing of its own. A
// dst of the wrong length or types is ErrUnsupportedType.
func (u *Union) DecodeInto(r *bits.Reader, dst ...any) (int, error) {
	if len(dst) != len(u.plans) {
		return 0, fmt.Errorf("%w: DecodeInto needs %d destinations, one per variant, not %d", ErrUnsupportedType, len(u.plans), len(dst))
	}
	tag, err := r.ReadBits(u.bits)
	if err != nil {
		return 0, err
	}
	if tag >= uint64(len(u.plans)) {
		return 0, fmt.Errorf("%w: tag %d, the union has %d variants", ErrUnknownTag, tag, len(u.plans))
	}
	p := u.plans[tag]
	rv := reflect.ValueOf(dst[tag])
	if rv.Kind() != reflect.Pointer || rv.Type().Elem() != p.typ || rv.IsNil() {
		return 0, fmt.Errorf("%w: DecodeInto destination %d is %T, not a non-nil *%s", ErrUnsupportedType, tag, dst[tag], p.typ.Name())
	}
	if err := decodeRoot(p, r, rv.UnsafePointer()); err != nil {
		return 0, err
	}
	return int(tag), nil
}

// EncodeCount writes the number of messages that follow in a packet of
// several (see Union), as a length without maxlen is written:
// docs/wire-format.md, "Lengths" (6 bits for up to 31 messages).
func (u *Union) EncodeCount(w *bits.Writer, n int) error {
	if n < 0 || n > DefaultMaxLen {
		return fmt.Errorf("%w: %d messages", ErrTooLong, n)
	}
	return fields.WriteLen(w, n, 0)
}

// DecodeCount reads the count EncodeCount wrote. A count over
// DefaultMaxLen, or over what the rest of the input could hold (each
// message takes at least its tag and the fewest bits of the smallest
// variant), is an error before any message is read. When a message can
// take no bits at all (a single variant whose struct sends nothing), each
// counts as one byte against the input's allocation budget
// (Limits.MaxAllocPerByte): over it is ErrTooLong.
func (u *Union) DecodeCount(r *bits.Reader) (int, error) {
	n, err := fields.ReadLen(r, 0)
	if err != nil {
		return 0, err
	}
	if n > DefaultMaxLen {
		return 0, &limitError{ErrTooLong, "message count", n, DefaultMaxLen}
	}
	if u.min > 0 && n > r.Remaining()/u.min {
		return 0, &limitError{ErrUnexpectedEnd, "message count (against the input left)", n, r.Remaining() / u.min}
	}
	if u.min == 0 {
		// Messages that may take no bits: each is charged a byte of the
		// input's allocation budget, as zero-size elements are
		// (chargeElems), so the count is bounded by the input too.
		d := (*options)(nil).decoder(r, nil)
		if err := d.chargeElems(n, 0); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Marshal encodes v, a variant's struct or a pointer to one, with its tag.
func (u *Union) Marshal(v any) ([]byte, error) {
	w := bits.GetWriter()
	defer bits.PutWriter(w)
	if err := u.Encode(w, v); err != nil {
		return nil, err
	}
	return append([]byte(nil), w.Bytes()...), nil
}

// Unmarshal decodes one tagged message that fills data exactly and returns
// a pointer to a new value of its variant's type.
func (u *Union) Unmarshal(data []byte) (any, error) {
	var r bits.Reader
	r.Reset(data)
	v, err := u.Decode(&r)
	if err != nil {
		return nil, err
	}
	if !r.CheckPadding() {
		return nil, &FieldError{Path: reflect.TypeOf(v).Elem().Name(), Bit: r.Pos(), Err: ErrTrailingData}
	}
	return v, nil
}

func (u *Union) variant(v any) (int, unsafe.Pointer, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return 0, nil, fmt.Errorf("%w: nil is not a union variant", ErrUnknownTag)
	}
	base := t
	if t.Kind() == reflect.Pointer {
		base = t.Elem()
	}
	tag, ok := u.index[base]
	if !ok {
		return 0, nil, fmt.Errorf("%w: %s is not a variant of this union", ErrUnknownTag, t)
	}
	_, ptr, err := valuePointer(v)
	return tag, ptr, err
}
