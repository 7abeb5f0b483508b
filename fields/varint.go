package fields

import (
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// Zigzag maps a signed integer to an unsigned one so that values of small
// magnitude stay small: 0, -1, 1, -2, 2, ... become 0, 1, 2, 3, 4, ....
func Zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// Unzigzag is the inverse of Zigzag.
func Unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// varintGroup limits a group size to 1..64. Sizes outside it are a bug in the
// caller; clamping in both the writer and the reader keeps them consistent
// and keeps bits.Writer from panicking.
func varintGroup(g int) int {
	if g < 1 {
		return 1
	}
	if g > 64 {
		return 64
	}
	return g
}

// VarintBits returns the size in bits of v coded by WriteVarint with group
// size g: (g+1) bits for each of the max(1, ceil(BitsRequired(v)/g)) groups.
func VarintBits(v uint64, g int) int {
	g = varintGroup(g)
	groups := (mbits.Len64(v) + g - 1) / g
	if groups == 0 {
		groups = 1
	}
	return groups * (g + 1)
}

// WriteVarint writes v in groups of g bits, least significant group first,
// each followed by a continuation bit that is 1 when another group follows.
// Zero is one all-zero group. g must be in 1..64 (values outside are clamped
// to it, as ReadVarint does). Signed values are written as Zigzag(v).
func WriteVarint(w *bits.Writer, v uint64, g int) {
	g = varintGroup(g)
	if g == 64 {
		w.WriteBits(v, 64)
		w.WriteBits(0, 1)
		return
	}
	mask := uint64(1)<<uint(g) - 1
	for v > mask {
		// One WriteBits per group: the g low bits, then a continuation 1.
		w.WriteBits(v&mask|(mask+1), g+1)
		v >>= uint(g)
	}
	w.WriteBits(v, g+1) // v <= mask, so the continuation bit is 0
}

// ReadVarint reads a value written by WriteVarint with the same g. Any
// spelling WriteVarint does not produce is ErrMalformed: more than
// ceil(64/g) groups, a group with bits that would land above bit 63, or a
// final group of zeros after the first (a non-minimal encoding). So every
// value has exactly one encoding, and a reader never loops more than
// ceil(64/g) times.
func ReadVarint(r *bits.Reader, g int) (uint64, error) {
	g = varintGroup(g)
	if g == 64 {
		v, err := r.ReadBits(64)
		if err != nil {
			return 0, err
		}
		more, err := r.ReadBool()
		if err != nil {
			return 0, err
		}
		if more {
			return 0, ErrMalformed
		}
		return v, nil
	}
	maxGroups := (64 + g - 1) / g
	mask := uint64(1)<<uint(g) - 1
	var v uint64
	for k := 0; k < maxGroups; k++ {
		u, err := r.ReadBits(g + 1)
		if err != nil {
			return 0, err
		}
		group := u & mask
		shift := uint(k * g)
		if group<<shift>>shift != group { // bits above bit 63
			return 0, ErrMalformed
		}
		v |= group << shift
		if u>>uint(g) == 0 {
			if group == 0 && k > 0 {
				return 0, ErrMalformed
			}
			return v, nil
		}
	}
	return 0, ErrMalformed
}
