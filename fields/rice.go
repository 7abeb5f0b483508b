package fields

import (
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// Rice codes small signed differences (the changed values of deltas) in
// fewer bits when they are small, with a worst case bounded by an escape:
//
//   - m = |v| is split into a quotient m>>k and the k low bits of m;
//   - a quotient below RiceEscape is written in unary (that many 1 bits,
//     then a 0), followed by the k low bits; a quotient of RiceEscape or
//     more is written as RiceEscape 1 bits (the escape) followed by m in
//     width bits, where width is fixed by the caller (the bits any
//     magnitude it can send needs);
//   - a sign bit (1 for negative) follows when m is not 0.
//
// k is the code's parameter, 0..RiceMaxK. An adaptive code chooses k from
// the values already coded (see RiceMean), the reader mirroring the writer,
// so that no parameter is sent.
const (
	// RiceEscape is the unary length that means "escaped".
	RiceEscape = 6
	// RiceMaxK is the largest parameter.
	RiceMaxK = 20
)

// RiceBits returns the size of v in the code with parameter k and escape
// width width.
func RiceBits(v int64, k, width int) int {
	m := abs64(v)
	return riceLen(m, m>>uint(k), k, width)
}

// RiceMaxBits returns the largest size of a value of magnitude at most
// 2^width - 1: the escape, width bits and a sign, or the longest unescaped
// spelling, whichever is longer.
func RiceMaxBits(k, width int) int {
	return max(RiceEscape+width, RiceEscape+k) + 1
}

// WriteRice writes v; |v| must fit in width bits (the caller's bound: it is
// not checked here, on the hot path of deltas).
func WriteRice(w *bits.Writer, v int64, k, width int) {
	m := abs64(v)
	if !writeRiceShort(w, m, k) {
		w.WriteBits(1<<RiceEscape-1, RiceEscape)
		w.WriteBits(m, width)
	}
	if m != 0 {
		w.WriteBits(uint64(v)>>63, 1)
	}
}

// riceLen is RiceBits of a value of magnitude m, given q = m>>k, so that
// a caller that has m and q uses them for the code too (riceCode): a sign
// bit for a nonzero m, then q ones, a 0 and k low bits, or the escape's
// ones and the magnitude in width bits.
func riceLen(m, q uint64, k, width int) int {
	n := int((m | -m) >> 63) // the sign bit of a nonzero m
	if q < RiceEscape {
		return n + int(q) + 1 + k
	}
	return n + RiceEscape + width
}

// riceCode returns the bits WriteRice writes for a value of magnitude m
// (q = m>>k) and sign bit neg (0 or 1, 0 for m = 0) with parameter k,
// first bit lowest, given their count n (riceLen), so that a caller can
// join several codes into one write. As for WriteRice, m must fit in the
// width, and the code must fit in 64 bits. It is small enough to be
// inlined.
func riceCode(m, q, neg uint64, k, n int) uint64 {
	c := 1<<RiceEscape - 1 | m<<RiceEscape // escaped: m follows the ones
	if q < RiceEscape {
		c = 1<<q - 1 | (m^q<<(uint(k)&63))<<(q+1) // q ones, a 0, the k low bits (m ^ q<<k)
	}
	return c | neg<<(uint(n-1)&63) // the sign, last
}

// ReadRice reads a value written by WriteRice with the same k and width.
// An escape holding a magnitude that the unary form could have spelt, and
// a negative zero, are ErrMalformed: each value has one spelling.
func ReadRice(r *bits.Reader, k, width int) (int64, error) {
	m, short, err := readRiceShort(r, k)
	if err != nil {
		return 0, err
	}
	if !short {
		if m, err = r.ReadBits(width); err != nil {
			return 0, err
		}
		if m>>uint(k) < RiceEscape {
			return 0, ErrMalformed
		}
	}
	if m == 0 {
		return 0, nil
	}
	neg, err := r.ReadBool()
	if err != nil {
		return 0, err
	}
	if neg {
		return -int64(m), nil
	}
	return int64(m), nil
}

// writeRiceShort writes m's quotient m>>k in unary (that many 1 bits, then
// a 0) and its k low bits, when the quotient is below RiceEscape, and
// reports whether it did; otherwise it writes nothing.
func writeRiceShort(w *bits.Writer, m uint64, k int) bool {
	q := m >> uint(k)
	if q >= RiceEscape {
		return false
	}
	// q ones, a zero, then the k low bits, in one write when they fit.
	n := int(q) + 1 + k
	u := uint64(1)<<q - 1 | (m&(1<<uint(k)-1))<<(q+1)
	if n <= 64 {
		w.WriteBits(u, n)
	} else {
		w.WriteBits(uint64(1)<<q-1, int(q)+1)
		w.WriteBits(m&(1<<uint(k)-1), k)
	}
	return true
}

// readRiceShort reads what writeRiceShort writes: m and true; or, after
// the escape (RiceEscape 1 bits, consumed), false.
func readRiceShort(r *bits.Reader, k int) (uint64, bool, error) {
	// The unary prefix, at most RiceEscape bits, read through a peek.
	p := r.Peek(RiceEscape + 1)
	q := mbits.TrailingZeros64(^p)
	if q >= RiceEscape {
		return 0, false, r.Skip(RiceEscape)
	}
	if err := r.Skip(q + 1); err != nil {
		return 0, false, err
	}
	lo, err := r.ReadBits(k)
	if err != nil {
		return 0, false, err
	}
	return uint64(q)<<uint(k) | lo, true, nil
}

// The unsigned Rice code with a bit-length escape codes non-negative values
// (gaps between ascending ids, counts) where an occasional value is far
// larger than the others: the same unary quotient and k low bits as the
// signed code, no sign bit, and after the escape the value as an unsigned
// bitlen of prefix width w (see WriteBitlen) instead of a fixed width, so
// that a large value costs about its length rather than the widest.
// A parameter that adapts follows RiceMean, fed AddCapped.

// RiceBitlenBits returns the size of m in the unsigned Rice code with
// parameter k and a bitlen escape of prefix width w.
func RiceBitlenBits(m uint64, k, w int) int {
	if q := m >> uint(k); q < RiceEscape {
		return int(q) + 1 + k
	}
	return RiceEscape + BitlenBits(m, w)
}

// WriteRiceBitlen writes m in the unsigned Rice code with parameter k and
// a bitlen escape of prefix width w; HighBit(m) must fit in w bits.
func WriteRiceBitlen(wr *bits.Writer, m uint64, k, w int) {
	if !writeRiceShort(wr, m, k) {
		wr.WriteBits(1<<RiceEscape-1, RiceEscape)
		WriteBitlen(wr, m, w)
	}
}

// ReadRiceBitlen reads a value written by WriteRiceBitlen with the same k
// and w. An escape holding a value that the unary form could have spelt is
// ErrMalformed: each value has one spelling.
func ReadRiceBitlen(r *bits.Reader, k, w int) (uint64, error) {
	m, short, err := readRiceShort(r, k)
	if err != nil || short {
		return m, err
	}
	if m, err = ReadBitlen(r, w); err != nil {
		return 0, err
	}
	if m>>uint(k) < RiceEscape {
		return 0, ErrMalformed
	}
	return m, nil
}

func abs64(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

// RiceMean is the running mean that an adaptive Rice code derives its
// parameter from: a fixed-point mean of the magnitudes seen, in 1/16ths,
// which moves a quarter of the way toward each new magnitude. Writer and
// reader update it with the same magnitudes in the same order. The zero
// RiceMean is a mean of 0; it belongs to one packet (packets are lost, so
// no state may cross them).
type RiceMean struct{ m16 uint32 }

// NewRiceMean returns a running mean that starts at mean (in whole units).
func NewRiceMean(mean uint32) RiceMean { return RiceMean{m16: min(mean, 1<<20) << 4} }

// K returns the parameter for the current mean μ: the bit length of
// floor(μ·11/16), near log2(μ·ln 2), which minimizes the expected size of
// a geometric distribution of mean μ; at most RiceMaxK.
func (a RiceMean) K() int { return min(riceKOf16(a.m16), RiceMaxK) }

// riceKOf16 is RiceMean's parameter for a mean held as 16μ, before its cap.
func riceKOf16(m16 uint32) int { return mbits.Len32(m16 * 11 >> 8) }

// Add moves the mean toward magnitude m (capped at 2^20).
func (a *RiceMean) Add(m uint64) {
	x := uint32(min(m, 1<<20)) << 4
	if x >= a.m16 {
		a.m16 += (x - a.m16) >> 2
	} else {
		a.m16 -= (a.m16 - x) >> 2
	}
}

// AddCapped moves the mean toward m capped at RiceEscape<<k, k the
// parameter m was coded with: one value escaped far beyond the others
// (the jump between two ranges of ids) then moves the parameter no more
// than a value just at the escape would, instead of spoiling the values
// after it.
func (a *RiceMean) AddCapped(m uint64, k int) { a.Add(min(m, RiceEscape<<uint(k))) }

// The Rice code with an Exp-Golomb escape (wire version 4's code of the
// differences of relative quaternions) grows gracefully where the plain
// escape jumps: a magnitude m with parameter k and unary limit u is
//
//   - when q = m>>k is below u: q ones, a 0, the k low bits of m;
//   - else u ones, then x = m - u<<k in the Exp-Golomb code of order
//     j = k+1: with y = x + 2^j of bit length L, L-1-j ones, a 0, and the
//     L-1 low bits of y;
//
// then a sign bit (1 for negative) when m is not 0. Every magnitude has
// one spelling; a magnitude twice as large costs about two bits more.
const (
	// riceEGMaxOnes bounds the Exp-Golomb part's ones a reader accepts:
	// more would spell a magnitude of over 2^40.
	riceEGMaxOnes = 40
)

// RiceEGBits returns the size of v in the Rice code with parameter k,
// unary limit u and an Exp-Golomb escape.
func RiceEGBits(v int64, k, u int) int {
	_, n := riceEGCode(abs64(v), uint64(v)>>63, k, u)
	return n
}

// riceEGCode returns the bits of a magnitude m and sign neg (0 or 1; 0 for
// m = 0) in the Rice code with an Exp-Golomb escape, first bit lowest, and
// their count, which is at most 64 for magnitudes below 2^20 and k, u at
// most 20 and 3.
func riceEGCode(m, neg uint64, k, u int) (uint64, int) {
	uk := uint(k) & 63
	q := m >> uk
	if q >= uint64(u) {
		return riceEGEscape(m, neg, k, u)
	}
	// q ones, a 0, the k low bits, the sign (neg is 0 for m = 0).
	n := int(q) + 1 + k + int((m|-m)>>63)
	return 1<<q - 1 | (m&(1<<uk-1))<<(q+1) | neg<<(uint(n-1)&63), n
}

// riceEGEscapeLen is the size riceEGEscape gives a magnitude m past the
// unary part (m >> k >= u): u ones, L-1-j ones, a 0, L-1 bits (L the bit
// length of y = m - u<<k + 2^j, j = k+1) and a sign; small enough to be
// inlined.
func riceEGEscapeLen(m uint64, k, u int) int {
	j := uint(k+1) & 63
	l := mbits.Len64(m - uint64(u)<<(uint(k)&63) + 1<<j)
	return u + 2*l - int(j) - 1 + int((m|-m)>>63)
}

// riceEGEscape is riceEGCode of a magnitude past the unary part, out of
// line so that riceEGCode's common case is inlined.
func riceEGEscape(m, neg uint64, k, u int) (uint64, int) {
	uk := uint(k) & 63
	j := uint(k+1) & 63
	y := m - uint64(u)<<uk + 1<<j
	l := uint(mbits.Len64(y))
	ones := l - 1 - j
	c := 1<<uint(u) - 1 | (1<<ones-1)<<uint(u) | (y&(1<<(l-1)-1))<<(uint(u)+ones+1)
	n := u + int(ones) + 1 + int(l) - 1
	if m != 0 {
		c |= neg << (uint(n) & 63)
		n++
	}
	return c, n
}

// WriteRiceEG writes v in the Rice code with parameter k, unary limit u
// and an Exp-Golomb escape.
func WriteRiceEG(w *bits.Writer, v int64, k, u int) {
	m := abs64(v)
	if c, n := riceEGCode(m, uint64(v)>>63, k, u); n <= 64 {
		w.WriteBits(c, n)
		return
	}
	// Long codes (large k, not a quaternion's): the parts one by one.
	uk := uint(k)
	if q := m >> uk; q < uint64(u) {
		w.WriteBits(1<<q-1, int(q)+1)
		w.WriteBits(m&(1<<uk-1), k)
	} else {
		j := uk + 1
		y := m - uint64(u)<<uk + 1<<j
		l := uint(mbits.Len64(y))
		w.WriteBits(1<<uint(u)-1, u)
		w.WriteBits(1<<(l-1-j)-1, int(l-j))
		w.WriteBits(y&(1<<(l-1)-1), int(l)-1)
	}
	if m != 0 {
		w.WriteBits(uint64(v)>>63, 1)
	}
}

// ReadRiceEG reads a value written by WriteRiceEG with the same k and u.
// An Exp-Golomb part of more than 40 ones, and a negative zero, are
// ErrMalformed.
func ReadRiceEG(r *bits.Reader, k, u int) (int64, error) {
	// Each run of ones through a peek: at most u <= 6, then at most
	// riceEGMaxOnes + 1 bits, the 0 that ends it included.
	q := min(mbits.TrailingZeros64(^r.Peek(u)), u)
	n := q
	if q < u {
		n++
	}
	if err := r.Skip(n); err != nil {
		return 0, err
	}
	var m uint64
	if q < u {
		lo, err := r.ReadBits(k)
		if err != nil {
			return 0, err
		}
		m = uint64(q)<<uint(k) | lo
	} else {
		ones := mbits.TrailingZeros64(^r.Peek(riceEGMaxOnes + 1))
		if ones > riceEGMaxOnes {
			return 0, ErrMalformed
		}
		if err := r.Skip(ones + 1); err != nil {
			return 0, err
		}
		j := k + 1
		low, err := r.ReadBits(ones + j)
		if err != nil {
			return 0, err
		}
		y := uint64(1)<<uint(ones+j) | low
		m = y - 1<<uint(j) + uint64(u)<<uint(k)
	}
	if m == 0 {
		return 0, nil
	}
	neg, err := r.ReadBool()
	if err != nil {
		return 0, err
	}
	if neg {
		return -int64(m), nil
	}
	return int64(m), nil
}
