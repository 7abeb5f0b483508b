package bitwire

import (
	"errors"
	"fmt"
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
type Union struct {
	plans []*plan
	index map[reflect.Type]int
	bits  int
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
	v := reflect.New(p.typ)
	if err := decodeRoot(p, r, v.UnsafePointer()); err != nil {
		return nil, err
	}
	return v.Interface(), nil
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
