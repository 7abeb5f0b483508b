package bitwire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The errors bitwire returns. Test for them with errors.Is: they arrive
// wrapped in a *FieldError that names the field path and the bit offset.
var (
	// ErrUnexpectedEnd: the input ended in the middle of a value. It is the
	// same value as bits.ErrUnexpectedEnd.
	ErrUnexpectedEnd = bits.ErrUnexpectedEnd
	// ErrOutOfRange: a value lies outside the range its tag declares (on
	// encode, unless the field has clamp), or a decoded value does not fit
	// the declared range or the field's Go type.
	ErrOutOfRange = fields.ErrOutOfRange
	// ErrInvalidValue: NaN or ±Inf where a finite number is needed, a
	// quaternion that is not of unit length, or a cyclic value.
	ErrInvalidValue = fields.ErrInvalidValue
	// ErrTooLong: a string, slice or map longer than its maxlen (or the
	// default limit when it has none), or, when decoding, an input that
	// would make the decoder allocate more than its budget
	// (Limits.MaxAllocPerByte), which the encoder does not check: a valid
	// value whose elements are much larger in memory than on the wire can
	// encode and then be refused by a decoder with the same limits.
	ErrTooLong = fields.ErrTooLong
	// ErrMalformed: input no encoder produces, such as an overlong varint,
	// a duplicated map key or nesting deeper than the decode limit.
	ErrMalformed = fields.ErrMalformed
	// ErrTrailingData: Unmarshal found a whole unread byte, or non-zero
	// padding bits, after the value.
	ErrTrailingData = errors.New("bitwire: trailing data after the value")
	// ErrBadTag: For found a malformed or misapplied net tag.
	ErrBadTag = errors.New("bitwire: bad net tag")
	// ErrUnsupportedType: For found a field of a kind bitwire cannot code
	// (chan, func, interface, complex, unsafe.Pointer).
	ErrUnsupportedType = errors.New("bitwire: unsupported type")
)

// FieldError is the error type of every failure bitwire reports about a
// field: it names the field path (such as "Player.Pos.X" or
// "World.Crates[3].Rot"; For's paths write a slice or array element as
// "[]" and a map value as "{}", as Layout does, such as
// "World.Players[].Pos.X", and a field repeated in a row, the links of a
// recursive type, once with a count, such as "Node.Next×100.Pos") and, for encoding and decoding, the bit offset in
// the message where the failure happened. Unwrap gives the sentinel error.
type FieldError struct {
	Path string // the field path, starting with the type name
	Bit  int    // bit offset in the message; -1 when not applicable (For)
	Err  error  // the cause, one of the sentinel errors possibly wrapped
}

// Error returns the path, the cause and, when known, the bit offset:
// "Player.Pos.X: bitwire: value out of range (at bit 17)".
func (e *FieldError) Error() string {
	if e.Bit < 0 {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: %v (at bit %d)", e.Path, e.Err, e.Bit)
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// errNeedSign is the internal signal that a message needs its "any
// negative" flag set after it was written 0 (a negative value met before
// the flag is written sets it in the same pass); the encoder rewinds and
// encodes again. It never escapes to a caller.
var errNeedSign = errors.New("bitwire: internal: message needs the sign flag")

// wrapField prefixes err's path with name (a field name or "[i]"). bit is
// the offset recorded when err is not yet a *FieldError.
func wrapField(err error, name string, bit int) error {
	if err == errNeedSign {
		return err
	}
	fe, ok := err.(*FieldError)
	if !ok {
		ok = errors.As(err, &fe)
	}
	if ok {
		switch {
		case name == "": // an unnamed root type
		case fe.Path == "":
			fe.Path = name
		case strings.HasPrefix(fe.Path, "["), strings.HasPrefix(fe.Path, "{"):
			fe.Path = name + fe.Path
		default:
			fe.Path = joinPath(name, fe.Path)
		}
		return err
	}
	return &FieldError{Path: name, Bit: bit, Err: err}
}

// joinPath returns name.rest, writing a field that repeats itself in a row
// (the links of a recursive type) once with a count: Next×3.X for
// Next.Next.Next.X.
func joinPath(name, rest string) string {
	head, tail, _ := strings.Cut(rest, ".")
	base, count, _ := strings.Cut(head, "×")
	if base != name {
		return name + "." + rest
	}
	n := 1
	if count != "" {
		if _, err := fmt.Sscanf(count, "%d", &n); err != nil {
			return name + "." + rest
		}
	}
	joined := fmt.Sprintf("%s×%d", name, n+1)
	if tail != "" || strings.Contains(rest, ".") {
		joined += "." + tail
	}
	return joined
}

// allocError reports a decode over its allocation budget (ErrTooLong),
// formatted only when printed.
type allocError struct{ need, left int64 }

func (e *allocError) Error() string {
	return fmt.Sprintf("%v: decoding needs to allocate %d bytes, more than the %d left of its budget (see Limits.MaxAllocPerByte)", ErrTooLong, e.need, e.left)
}

func (e *allocError) Unwrap() error { return ErrTooLong }

// limitError reports a length or a nesting over its bound. It is formatted
// only when printed, so that rejecting hostile input stays cheap.
type limitError struct {
	err      error
	what     string
	n, limit int
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%v: %s %d, over %d", e.err, e.what, e.n, e.limit)
}

func (e *limitError) Unwrap() error { return e.err }
