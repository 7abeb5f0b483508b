package fields

import (
	"fmt"
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// BitsRequired returns the number of bits needed to write every value in
// 0..x: BitsRequired(0) = 0, (1) = 1, (2) = 2, (3) = 2, (4) = 3, and
// BitsRequired(math.MaxUint64) = 64. It is math/bits.Len64.
func BitsRequired(x uint64) int { return mbits.Len64(x) }

// errWidth is the error for a bit count outside what a coding supports. It
// is kept out of line so that the functions calling it stay inlinable.
//
//go:noinline
func errWidth(what string, n, lo, hi int) error {
	return fmt.Errorf("bitwire: %s %d outside %d..%d", what, n, lo, hi)
}

// WriteUint writes v in exactly n bits, low bit first. n must be in 0..64;
// a v that does not fit in n bits (v >= 2^n) is ErrOutOfRange.
func WriteUint(w *bits.Writer, v uint64, n int) error {
	if uint(n) > 64 {
		return errWidth("bit count", n, 0, 64)
	}
	if n < 64 && v>>uint(n) != 0 {
		return ErrOutOfRange
	}
	w.WriteBits(v, n)
	return nil
}

// ReadUint reads an n-bit unsigned integer written by WriteUint.
func ReadUint(r *bits.Reader, n int) (uint64, error) {
	if uint(n) > 64 {
		return 0, errWidth("bit count", n, 0, 64)
	}
	return r.ReadBits(n)
}

// WriteInt writes v as an n-bit two's complement integer. n must be in
// 1..64; v outside [-2^(n-1), 2^(n-1)-1] is ErrOutOfRange.
func WriteInt(w *bits.Writer, v int64, n int) error {
	if uint(n-1) > 63 {
		return errWidth("bit count", n, 1, 64)
	}
	// v fits iff shifting out the n-1 value bits leaves only copies of the
	// sign: 0 or -1.
	if s := v >> uint(n-1); s != 0 && s != -1 {
		return ErrOutOfRange
	}
	w.WriteBits(uint64(v), n)
	return nil
}

// ReadInt reads an n-bit two's complement integer written by WriteInt and
// sign-extends it.
func ReadInt(r *bits.Reader, n int) (int64, error) {
	if uint(n-1) > 63 {
		return 0, errWidth("bit count", n, 1, 64)
	}
	u, err := r.ReadBits(n)
	if err != nil {
		return 0, err
	}
	shift := uint(64 - n)
	return int64(u<<shift) >> shift, nil
}

// FitsInt reports whether v is a value of a Go signed integer of sizeBits
// bits (8, 16, 32 or 64; any of 1..64 works). Decoders of the variable-length
// codings use it to reject values too large for the destination type.
func FitsInt(v int64, sizeBits int) bool {
	if sizeBits >= 64 {
		return true
	}
	if sizeBits <= 0 {
		return false
	}
	s := v >> uint(sizeBits-1)
	return s == 0 || s == -1
}

// FitsUint reports whether v is a value of a Go unsigned integer of sizeBits
// bits (8, 16, 32 or 64; any of 0..64 works).
func FitsUint(v uint64, sizeBits int) bool {
	if sizeBits >= 64 {
		return true
	}
	if sizeBits <= 0 {
		return v == 0
	}
	return v>>uint(sizeBits) == 0
}
