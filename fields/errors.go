package fields

import "errors"

// The errors a coding returns for bad values and bad input. The root package
// bitwire re-exports these same values, so errors.Is works across both.
// Reading past the end of the input is bits.ErrUnexpectedEnd.
var (
	// ErrOutOfRange is returned for a value outside the range a coding can
	// represent: below min or above max, too wide for its bit count, a
	// negative value where no sign bit is coded, or a decoded index or
	// offset beyond the declared range.
	ErrOutOfRange = errors.New("bitwire: value out of range")

	// ErrInvalidValue is returned for a float that is NaN or ±Inf where a
	// finite value is needed, and for a quaternion that is not of unit
	// length (or, when decoding, whose three components leave no room for
	// the fourth).
	ErrInvalidValue = errors.New("bitwire: invalid value")

	// ErrMalformed is returned for input that no conforming encoder writes:
	// an overlong or non-minimal varint, a negative zero in a signed
	// bit-length integer, a bit-length group coded in the longer of its
	// two modes, and the like.
	ErrMalformed = errors.New("bitwire: malformed input")

	// ErrTooLong is returned for a string, byte slice or other length that
	// is over its declared maxlen (or, with no maxlen, not below 2^32).
	// Package bitwire also returns it for a decode over its allocation
	// budget.
	ErrTooLong = errors.New("bitwire: length over maxlen or allocation over budget")
)
