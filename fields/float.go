package fields

import (
	"math"

	"github.com/bitwire/bitwire/bits"
)

// WriteFloat32 writes the 32 raw IEEE 754 bits of f, low bit first. Every
// value is allowed, and NaN payloads are kept bit-exact.
func WriteFloat32(w *bits.Writer, f float32) {
	w.WriteBits(uint64(math.Float32bits(f)), 32)
}

// ReadFloat32 reads a float32 written by WriteFloat32.
func ReadFloat32(r *bits.Reader) (float32, error) {
	u, err := r.ReadBits(32)
	return math.Float32frombits(uint32(u)), err
}

// WriteFloat64 writes the 64 raw IEEE 754 bits of f, low bit first. Every
// value is allowed, and NaN payloads are kept bit-exact.
func WriteFloat64(w *bits.Writer, f float64) {
	w.WriteBits(math.Float64bits(f), 64)
}

// ReadFloat64 reads a float64 written by WriteFloat64.
func ReadFloat64(r *bits.Reader) (float64, error) {
	u, err := r.ReadBits(64)
	return math.Float64frombits(u), err
}
