package fields

import (
	"fmt"
	"math"

	"github.com/bitwire/bitwire/bits"
)

// fixedWidth is the bitlen prefix width of fixed-point values, which are
// int64s.
const fixedWidth = 6

// Fixed codes a float as a fixed-point decimal: the integer round(v/prec)
// (halves away from zero), written as a signed bitlen value with W = 6 (see
// WriteBitlenInt). Unlike a Quantizer it has no range: small values are
// short and large ones long. Values up to 2^50 steps from zero survive
// decoding and re-encoding unchanged; beyond that a float64 no longer holds
// every integer, and the decoded value may re-encode one step away. The
// zero Fixed is not usable; call NewFixed.
type Fixed struct {
	prec float64
}

// NewFixed returns the fixed-point coding with step prec, which must be
// finite and > 0.
func NewFixed(prec float64) (Fixed, error) {
	if !(prec > 0) || math.IsInf(prec, 0) {
		return Fixed{}, fmt.Errorf("bitwire: fixed-point precision %v is not a finite number > 0", prec)
	}
	return Fixed{prec: prec}, nil
}

// Prec returns the step.
func (f Fixed) Prec() float64 { return f.prec }

// ToInt returns round(v/prec), halves away from zero. A NaN or infinite v
// is ErrInvalidValue; a result of magnitude 2^63 or more is ErrOutOfRange.
// ToInt(FromInt(i)) == i for every |i| < 2^50.
func (f Fixed) ToInt(v float64) (int64, error) {
	if v-v != 0 {
		return 0, ErrInvalidValue
	}
	x := math.Round(v / f.prec)
	// Also catches an infinite quotient, and NaN from a zero Fixed.
	if !(x > -1<<63 && x < 1<<63) {
		return 0, ErrOutOfRange
	}
	return int64(x), nil
}

// FromInt returns i*prec.
func (f Fixed) FromInt(i int64) float64 { return float64(i) * f.prec }

// Write writes ToInt(v) with WriteBitlenInt(w, i, 6, neg). When neg is
// false, a v that rounds to a negative integer is ErrOutOfRange.
func (f Fixed) Write(w *bits.Writer, v float64, neg bool) error {
	i, err := f.ToInt(v)
	if err != nil {
		return err
	}
	return WriteBitlenInt(w, i, fixedWidth, neg)
}

// Read reads a value written by Write with the same neg and returns
// FromInt of the decoded integer.
func (f Fixed) Read(r *bits.Reader, neg bool) (float64, error) {
	i, err := ReadBitlenInt(r, fixedWidth, neg)
	if err != nil {
		return 0, err
	}
	return f.FromInt(i), nil
}
