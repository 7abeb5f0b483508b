package fields

import (
	"fmt"

	"github.com/bitwire/bitwire/bits"
)

// IntRange codes an int64 known to lie in [min, max] as its offset v-min in
// BitsRequired(max-min) bits. The offset is computed in wrapping uint64
// arithmetic, so the full int64 range works (64 bits). The zero IntRange is
// the range [0, 0], which takes no bits.
type IntRange struct {
	min, max int64
	span     uint64 // max - min
	bits     int
}

// NewIntRange returns the coding of [min, max]. min must not exceed max;
// min == max is allowed and codes the single value in zero bits.
func NewIntRange(min, max int64) (IntRange, error) {
	if min > max {
		return IntRange{}, fmt.Errorf("bitwire: int range min %d > max %d", min, max)
	}
	span := uint64(max) - uint64(min)
	return IntRange{min: min, max: max, span: span, bits: BitsRequired(span)}, nil
}

// Bits returns the size of one coded value: BitsRequired(max-min).
func (r IntRange) Bits() int { return r.bits }

// Min returns the smallest value of the range.
func (r IntRange) Min() int64 { return r.min }

// Max returns the largest value of the range.
func (r IntRange) Max() int64 { return r.max }

// Clamp returns v limited to [min, max].
func (r IntRange) Clamp(v int64) int64 {
	if v < r.min {
		return r.min
	}
	if v > r.max {
		return r.max
	}
	return v
}

// Write writes v-min in Bits() bits. A v outside [min, max] is
// ErrOutOfRange.
func (r IntRange) Write(w *bits.Writer, v int64) error {
	if v < r.min || v > r.max {
		return ErrOutOfRange
	}
	w.WriteBits(uint64(v)-uint64(r.min), r.bits)
	return nil
}

// Read reads a value written by Write. An offset above max-min (possible
// when the range does not fill its bits) is ErrOutOfRange.
func (r IntRange) Read(rd *bits.Reader) (int64, error) {
	u, err := rd.ReadBits(r.bits)
	if err != nil {
		return 0, err
	}
	if u > r.span {
		return 0, ErrOutOfRange
	}
	return int64(uint64(r.min) + u), nil
}

// UintRange codes a uint64 known to lie in [min, max] as its offset v-min in
// BitsRequired(max-min) bits. The zero UintRange is the range [0, 0], which
// takes no bits.
type UintRange struct {
	min, max uint64
	bits     int
}

// NewUintRange returns the coding of [min, max]. min must not exceed max;
// min == max is allowed and codes the single value in zero bits.
func NewUintRange(min, max uint64) (UintRange, error) {
	if min > max {
		return UintRange{}, fmt.Errorf("bitwire: uint range min %d > max %d", min, max)
	}
	return UintRange{min: min, max: max, bits: BitsRequired(max - min)}, nil
}

// Bits returns the size of one coded value: BitsRequired(max-min).
func (r UintRange) Bits() int { return r.bits }

// Min returns the smallest value of the range.
func (r UintRange) Min() uint64 { return r.min }

// Max returns the largest value of the range.
func (r UintRange) Max() uint64 { return r.max }

// Clamp returns v limited to [min, max].
func (r UintRange) Clamp(v uint64) uint64 {
	if v < r.min {
		return r.min
	}
	if v > r.max {
		return r.max
	}
	return v
}

// Write writes v-min in Bits() bits. A v outside [min, max] is
// ErrOutOfRange.
func (r UintRange) Write(w *bits.Writer, v uint64) error {
	if v < r.min || v > r.max {
		return ErrOutOfRange
	}
	w.WriteBits(v-r.min, r.bits)
	return nil
}

// Read reads a value written by Write. An offset above max-min (possible
// when the range does not fill its bits) is ErrOutOfRange.
func (r UintRange) Read(rd *bits.Reader) (uint64, error) {
	u, err := rd.ReadBits(r.bits)
	if err != nil {
		return 0, err
	}
	if u > r.max-r.min {
		return 0, ErrOutOfRange
	}
	return r.min + u, nil
}
