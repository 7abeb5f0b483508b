package fields

import (
	"math"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
)

// lenWidth is the bitlen prefix width of a length with no declared maxlen.
const lenWidth = 5

// maxUnboundedLen is the bound on a length with no declared maxlen: with a
// 5-bit prefix the bitlen coding holds values below 2^32.
const maxUnboundedLen = 1<<32 - 1

// LenBits returns the size in bits of the length n coded by WriteLen with
// the given maxlen.
func LenBits(n, maxlen int) int {
	if maxlen > 0 {
		return BitsRequired(uint64(maxlen))
	}
	return BitlenBits(uint64(n), lenWidth)
}

// WriteLen writes a length n (of a string, byte slice, slice or map). With a
// declared maxlen > 0 it takes BitsRequired(maxlen) bits, and n > maxlen is
// ErrTooLong. With maxlen == 0 (no limit declared) it is an unsigned bitlen
// value with W = 5, and n >= 2^32 is ErrTooLong. A negative n or maxlen is
// ErrOutOfRange.
func WriteLen(w *bits.Writer, n, maxlen int) error {
	if n < 0 || maxlen < 0 {
		return ErrOutOfRange
	}
	if maxlen > 0 {
		if n > maxlen {
			return ErrTooLong
		}
		w.WriteBits(uint64(n), BitsRequired(uint64(maxlen)))
		return nil
	}
	if uint64(n) > maxUnboundedLen {
		return ErrTooLong
	}
	WriteBitlen(w, uint64(n), lenWidth)
	return nil
}

// ReadLen reads a length written by WriteLen with the same maxlen. A length
// over maxlen (or over what an int holds) is ErrTooLong. ReadLen does not
// check the length against the remaining input, since what each counted
// item costs is up to the caller.
func ReadLen(r *bits.Reader, maxlen int) (int, error) {
	if maxlen < 0 {
		return 0, ErrOutOfRange
	}
	var u uint64
	var err error
	if maxlen > 0 {
		u, err = r.ReadBits(BitsRequired(uint64(maxlen)))
		if err == nil && u > uint64(maxlen) {
			err = ErrTooLong
		}
	} else {
		u, err = ReadBitlen(r, lenWidth)
		if err == nil && u > math.MaxInt {
			err = ErrTooLong
		}
	}
	if err != nil {
		return 0, err
	}
	return int(u), nil
}

// readByteLen reads the length of a string or byte slice and checks it
// against the remaining input, before anything is allocated for it.
func readByteLen(r *bits.Reader, maxlen int) (int, error) {
	n, err := ReadLen(r, maxlen)
	if err != nil {
		return 0, err
	}
	if uint64(n)*8 > uint64(r.Remaining()) {
		return 0, bits.ErrUnexpectedEnd
	}
	return n, nil
}

// WriteString writes the length of s (see WriteLen) followed by its bytes,
// 8 bits each, with no alignment. s need not be valid UTF-8.
func WriteString(w *bits.Writer, s string, maxlen int) error {
	if err := WriteLen(w, len(s), maxlen); err != nil {
		return err
	}
	// bits.Writer.WriteBytes only reads its argument, so the string's own
	// bytes can be passed without a copy.
	w.WriteBytes(unsafe.Slice(unsafe.StringData(s), len(s)))
	return nil
}

// ReadString reads a string written by WriteString with the same maxlen. It
// allocates the string's bytes, once, and only after checking the length
// against maxlen and against the remaining input (bits.ErrUnexpectedEnd),
// so a hostile length never allocates.
func ReadString(r *bits.Reader, maxlen int) (string, error) {
	n, err := readByteLen(r, maxlen)
	if err != nil || n == 0 {
		return "", err
	}
	buf := make([]byte, n)
	_ = r.ReadBytes(buf) // cannot fail: checked by readByteLen
	// buf is never touched again, so it can back the string.
	return unsafe.String(&buf[0], n), nil
}

// WriteBytes writes the length of b (see WriteLen) followed by its bytes, 8
// bits each, with no alignment.
func WriteBytes(w *bits.Writer, b []byte, maxlen int) error {
	if err := WriteLen(w, len(b), maxlen); err != nil {
		return err
	}
	w.WriteBytes(b)
	return nil
}

// ReadBytes reads bytes written by WriteBytes with the same maxlen into
// dst[:n], reusing dst's storage when cap(dst) >= n and allocating a new
// slice otherwise, and returns dst[:n] (or the new slice). The length is
// checked against maxlen and against the remaining input
// (bits.ErrUnexpectedEnd) before anything is allocated. An empty result has
// length 0 and is nil only when dst is.
func ReadBytes(r *bits.Reader, dst []byte, maxlen int) ([]byte, error) {
	n, err := readByteLen(r, maxlen)
	if err != nil {
		return dst[:0], err
	}
	if cap(dst) >= n {
		dst = dst[:n]
	} else {
		dst = make([]byte, n)
	}
	_ = r.ReadBytes(dst)
	return dst, nil
}
