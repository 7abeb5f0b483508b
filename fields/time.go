package fields

import (
	"fmt"
	"time"

	"github.com/bitwire/bitwire/bits"
)

// A time is coded as its Unix seconds, zigzagged (see Zigzag), as a bitlen
// value with a 6-bit prefix (see WriteBitlen), then its nanoseconds within
// the second in 30 bits. The location and the monotonic clock reading are
// not coded: a decoded time is in UTC.

const (
	timeWidth  = 6  // bitlen prefix of the seconds
	timeNsBits = 30 // holds 0..999999999

	// TimeMinBits and TimeMaxBits bound the size of a coded time.
	TimeMinBits = timeWidth + 1 + timeNsBits
	TimeMaxBits = timeWidth + 63 + timeNsBits
)

// TimeBits returns the size in bits of t coded by WriteTime.
func TimeBits(t time.Time) int { return BitlenBits(Zigzag(t.Unix()), timeWidth) + timeNsBits }

// WriteTime writes t's Unix seconds and nanoseconds.
func WriteTime(w *bits.Writer, t time.Time) {
	WriteBitlen(w, Zigzag(t.Unix()), timeWidth)
	w.WriteBits(uint64(t.Nanosecond()), timeNsBits)
}

// ReadTime reads a time written by WriteTime, in UTC. Nanoseconds of
// 10^9 or more are ErrOutOfRange.
func ReadTime(r *bits.Reader) (time.Time, error) {
	z, err := ReadBitlen(r, timeWidth)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := r.ReadBits(timeNsBits)
	if err != nil {
		return time.Time{}, err
	}
	if ns >= 1e9 {
		return time.Time{}, fmt.Errorf("%w: %d nanoseconds", ErrOutOfRange, ns)
	}
	return time.Unix(Unzigzag(z), int64(ns)).UTC(), nil
}
