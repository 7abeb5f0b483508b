package fields

import (
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// The adaptive bit-length ("bitlen") coding writes an integer as the index
// of its highest set bit in a fixed prefix of W bits, then the bits below
// that leading 1, which is implicit. W depends on the size of the Go integer
// (BitlenWidth): 6 bits for 64-bit integers, 5 for 32-bit ones, and so on.

// maxBitlenWidth is the widest useful prefix: 6 bits hold every HighBit of a
// uint64.
const maxBitlenWidth = 6

// HighBit returns the index of the highest set bit of v, with HighBit(0) =
// HighBit(1) = 0.
func HighBit(v uint64) int { return mbits.Len64(v|1) - 1 }

// BitlenWidth returns the prefix width W used for Go integers of sizeBits
// bits: BitsRequired(sizeBits-1), so 64 -> 6, 32 -> 5, 16 -> 4, 8 -> 3. A
// W-bit prefix holds every HighBit of such an integer (and of its
// magnitude, for the most negative value).
func BitlenWidth(sizeBits int) int {
	if sizeBits <= 1 {
		return 0
	}
	return BitsRequired(uint64(sizeBits - 1))
}

// bitlenWidth limits a prefix width to 0..6. Widths outside are a bug in the
// caller; clamping in both the writer and the reader keeps them consistent
// and keeps bits.Writer from panicking.
// BitlenPrefixBits returns the bits of the prefix that WriteBitlen and
// ReadBitlen write and read for a prefix width w: w limited to 0..6.
func BitlenPrefixBits(w int) int { return bitlenWidth(w) }

func bitlenWidth(w int) int {
	if w < 0 {
		return 0
	}
	if w > maxBitlenWidth {
		return maxBitlenWidth
	}
	return w
}

// BitlenBits returns the size in bits of v coded by WriteBitlen with prefix
// width w: w + max(1, HighBit(v)).
func BitlenBits(v uint64, w int) int {
	return bitlenWidth(w) + bitlenBody(HighBit(v))
}

// bitlenBody is the number of bits after the prefix of a value whose
// HighBit is p: one bit holding 0 or 1 when p is 0, else the p bits below
// the leading 1.
func bitlenBody(p int) int {
	if p == 0 {
		return 1
	}
	return p
}

// WriteBitlen writes v as p = HighBit(v) in w bits, then one bit holding v
// when p is 0, else the low p bits of v (the leading 1 is implicit).
//
// w must be in 0..6 (values outside are clamped to it, as ReadBitlen does)
// and p must fit in w bits, which holds for any value of a Go integer of
// sizeBits bits when w = BitlenWidth(sizeBits). A p that does not fit is
// written truncated, which decodes to a different value: a bug in the
// caller, never a property of the data.
func WriteBitlen(wr *bits.Writer, v uint64, w int) {
	w = bitlenWidth(w)
	p := HighBit(v)
	n := bitlenBody(p)
	if n+w <= 64 {
		// One WriteBits: the prefix, then v shifted past it. The leading 1 of
		// v lands on bit n+w and WriteBits drops it.
		wr.WriteBits(uint64(p)|v<<(uint(w)&63), n+w)
		return
	}
	wr.WriteBits(uint64(p), w)
	wr.WriteBits(v, n)
}

// ReadBitlen reads a value written by WriteBitlen with the same w. Every bit
// pattern is a valid value, so the only error is bits.ErrUnexpectedEnd.
func ReadBitlen(r *bits.Reader, w int) (uint64, error) {
	p64, err := r.ReadBits(bitlenWidth(w))
	if err != nil {
		return 0, err
	}
	p := int(p64) // <= 63
	v, err := r.ReadBits(bitlenBody(p))
	if err != nil {
		return 0, err
	}
	if p > 0 {
		v |= 1 << (uint(p) & 63)
	}
	return v, nil
}

// Magnitude splits v into its sign and its absolute value as a uint64; the
// magnitude of math.MinInt64 is 2^63.
func Magnitude(v int64) (neg bool, mag uint64) {
	if v < 0 {
		return true, -uint64(v)
	}
	return false, uint64(v)
}

// signed rebuilds a signed value from a decoded sign and magnitude. A
// negative zero is ErrMalformed (the writer never sets the sign of zero);
// a magnitude beyond int64 is ErrOutOfRange.
func signed(neg bool, mag uint64) (int64, error) {
	if neg {
		if mag == 0 {
			return 0, ErrMalformed
		}
		if mag > 1<<63 {
			return 0, ErrOutOfRange
		}
		return -int64(mag), nil // 2^63 wraps to math.MinInt64
	}
	if mag > 1<<63-1 {
		return 0, ErrOutOfRange
	}
	return int64(mag), nil
}

// BitlenIntBits returns the size in bits of v coded by WriteBitlenInt with
// prefix width w and the message's "any negative" flag neg.
func BitlenIntBits(v int64, w int, neg bool) int {
	_, mag := Magnitude(v)
	n := BitlenBits(mag, w)
	if neg {
		n++
	}
	return n
}

// WriteBitlenInt writes a signed value. A message that codes signed bitlen
// values carries one "any negative" flag, decided by the caller and passed
// here as neg. When neg is true, v is written as a sign bit (1 = negative)
// followed by its magnitude (see Magnitude) coded as by WriteBitlen; when
// neg is false there is no sign bit and a negative v is ErrOutOfRange.
func WriteBitlenInt(wr *bits.Writer, v int64, w int, neg bool) error {
	sign, mag := Magnitude(v)
	if neg {
		wr.WriteBool(sign)
	} else if sign {
		return ErrOutOfRange
	}
	WriteBitlen(wr, mag, w)
	return nil
}

// ReadBitlenInt reads a value written by WriteBitlenInt with the same w and
// neg. A sign bit of 1 with a magnitude of 0 is ErrMalformed; a magnitude
// beyond the int64 range for its sign is ErrOutOfRange.
func ReadBitlenInt(r *bits.Reader, w int, neg bool) (int64, error) {
	var sign bool
	if neg {
		var err error
		if sign, err = r.ReadBool(); err != nil {
			return 0, err
		}
	}
	mag, err := ReadBitlen(r, w)
	if err != nil {
		return 0, err
	}
	return signed(sign, mag)
}

// BitlenGroupShared reports whether a group of n values is shorter in the
// shared-length mode than coded individually, which is when the encoder
// chooses the shared mode. maxHigh is the largest HighBit in the group,
// individualBits the sum of the individual sizes (sign bits included), w the
// prefix width and signBits whether each value carries a sign bit. Shared
// mode costs w + n*(maxHigh+1) bits, plus n sign bits; the mode bit is paid
// in both modes and left out. Only a strictly shorter shared mode wins.
func BitlenGroupShared(maxHigh, n, individualBits, w int, signBits bool) bool {
	per := maxHigh + 1
	if signBits {
		per++
	}
	return bitlenWidth(w)+n*per < individualBits
}

// WriteBitlenUints writes a group of unsigned values: a slice, an array, or
// fields sharing a group name. A group of 0 or 1 values is coded as by
// WriteBitlen with no mode bit. A larger group starts with a mode bit: 0,
// then each value as by WriteBitlen; or 1, then p = the largest HighBit of
// the group in w bits, then each value in its low p+1 bits. The shared mode
// (1) is chosen only when it is strictly shorter.
func WriteBitlenUints(wr *bits.Writer, vs []uint64, w int) {
	if len(vs) <= 1 {
		for _, v := range vs {
			WriteBitlen(wr, v, w)
		}
		return
	}
	w = bitlenWidth(w)
	maxHigh, individual := 0, 0
	for _, v := range vs {
		p := HighBit(v)
		maxHigh = max(maxHigh, p)
		individual += w + bitlenBody(p)
	}
	if !BitlenGroupShared(maxHigh, len(vs), individual, w, false) {
		wr.WriteBits(0, 1)
		for _, v := range vs {
			WriteBitlen(wr, v, w)
		}
		return
	}
	wr.WriteBits(1|uint64(maxHigh)<<1, 1+w)
	for _, v := range vs {
		wr.WriteBits(v, maxHigh+1)
	}
}

// ReadBitlenUints reads len(dst) values written by WriteBitlenUints with the
// same w into dst. A group coded in the mode the writer would not have
// chosen, or in shared mode with a length larger than its largest value
// needs, is ErrMalformed, so every group has exactly one encoding.
func ReadBitlenUints(r *bits.Reader, dst []uint64, w int) error {
	if len(dst) <= 1 {
		for i := range dst {
			v, err := ReadBitlen(r, w)
			if err != nil {
				return err
			}
			dst[i] = v
		}
		return nil
	}
	w = bitlenWidth(w)
	shared, err := r.ReadBool()
	if err != nil {
		return err
	}
	maxHigh, individual := 0, 0
	if !shared {
		for i := range dst {
			v, err := ReadBitlen(r, w)
			if err != nil {
				return err
			}
			dst[i] = v
			p := HighBit(v)
			maxHigh = max(maxHigh, p)
			individual += w + bitlenBody(p)
		}
		if BitlenGroupShared(maxHigh, len(dst), individual, w, false) {
			return ErrMalformed
		}
		return nil
	}
	p, err := r.ReadBits(w)
	if err != nil {
		return err
	}
	// Check the whole group is there before the loop, so a short input
	// costs nothing.
	if uint64(len(dst))*(p+1) > uint64(r.Remaining()) {
		return bits.ErrUnexpectedEnd
	}
	for i := range dst {
		v, _ := r.ReadBits(int(p) + 1)
		dst[i] = v
		q := HighBit(v)
		maxHigh = max(maxHigh, q)
		individual += w + bitlenBody(q)
	}
	if maxHigh != int(p) || !BitlenGroupShared(maxHigh, len(dst), individual, w, false) {
		return ErrMalformed
	}
	return nil
}

// WriteBitlenInts writes a group of signed values, coded as by
// WriteBitlenUints on their magnitudes, except that when neg is true each
// value is preceded by its sign bit: in individual mode before its prefix,
// in shared mode before its p+1 bits. When neg is false a negative value is
// ErrOutOfRange, and nothing is written.
func WriteBitlenInts(wr *bits.Writer, vs []int64, w int, neg bool) error {
	if !neg {
		for _, v := range vs {
			if v < 0 {
				return ErrOutOfRange
			}
		}
	}
	if len(vs) <= 1 {
		for _, v := range vs {
			_ = WriteBitlenInt(wr, v, w, neg) // cannot fail: checked above
		}
		return nil
	}
	w = bitlenWidth(w)
	sign := 0
	if neg {
		sign = 1
	}
	maxHigh, individual := 0, 0
	for _, v := range vs {
		_, mag := Magnitude(v)
		p := HighBit(mag)
		maxHigh = max(maxHigh, p)
		individual += sign + w + bitlenBody(p)
	}
	if !BitlenGroupShared(maxHigh, len(vs), individual, w, neg) {
		wr.WriteBits(0, 1)
		for _, v := range vs {
			_ = WriteBitlenInt(wr, v, w, neg)
		}
		return nil
	}
	wr.WriteBits(1|uint64(maxHigh)<<1, 1+w)
	for _, v := range vs {
		s, mag := Magnitude(v)
		if neg {
			wr.WriteBool(s)
		}
		wr.WriteBits(mag, maxHigh+1)
	}
	return nil
}

// ReadBitlenInts reads len(dst) values written by WriteBitlenInts with the
// same w and neg into dst. Besides the errors of ReadBitlenUints, a
// negative zero is ErrMalformed and a magnitude beyond int64 is
// ErrOutOfRange.
func ReadBitlenInts(r *bits.Reader, dst []int64, w int, neg bool) error {
	if len(dst) <= 1 {
		for i := range dst {
			v, err := ReadBitlenInt(r, w, neg)
			if err != nil {
				return err
			}
			dst[i] = v
		}
		return nil
	}
	w = bitlenWidth(w)
	sign := 0
	if neg {
		sign = 1
	}
	shared, err := r.ReadBool()
	if err != nil {
		return err
	}
	maxHigh, individual := 0, 0
	if !shared {
		for i := range dst {
			v, err := ReadBitlenInt(r, w, neg)
			if err != nil {
				return err
			}
			dst[i] = v
			_, mag := Magnitude(v)
			p := HighBit(mag)
			maxHigh = max(maxHigh, p)
			individual += sign + w + bitlenBody(p)
		}
		if BitlenGroupShared(maxHigh, len(dst), individual, w, neg) {
			return ErrMalformed
		}
		return nil
	}
	p, err := r.ReadBits(w)
	if err != nil {
		return err
	}
	if uint64(len(dst))*(p+1+uint64(sign)) > uint64(r.Remaining()) {
		return bits.ErrUnexpectedEnd
	}
	for i := range dst {
		var s bool
		if neg {
			s, _ = r.ReadBool()
		}
		mag, _ := r.ReadBits(int(p) + 1)
		v, err := signed(s, mag)
		if err != nil {
			return err
		}
		dst[i] = v
		q := HighBit(mag)
		maxHigh = max(maxHigh, q)
		individual += sign + w + bitlenBody(q)
	}
	if maxHigh != int(p) || !BitlenGroupShared(maxHigh, len(dst), individual, w, neg) {
		return ErrMalformed
	}
	return nil
}
