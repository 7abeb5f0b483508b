package snapshot

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Magic is the first 16 bits of every snapshot packet (written low bit
// first, so the packet starts with the bytes 0x7E 0xB2). A change of the
// header takes a new magic number: 0xB17E was the first version, without
// the integrity mode, the state hash and the trailer.
const Magic = 0xB27E

// The header's fields, in order. docs/wire-format.md ("Snapshot packets")
// is the reference; writeHeader and readHeader below are the code.
const (
	magicBits       = 16
	fingerprintBits = 32
	tickBits        = 32
	modeBits        = 2
	hashBits        = 32
	// distanceWidth is the prefix width of the bit-length code of
	// tick-baseline-1: five bits hold the highest set bit of any uint32.
	distanceWidth = 5
	// maxHeaderBits is the largest header: a delta whose distance takes
	// the longest bit-length code (5 + 31 bits).
	maxHeaderBits = magicBits + fingerprintBits + tickBits + modeBits + 1 + 1 + distanceWidth + 31
)

// Header is the decoded header of a snapshot packet.
type Header struct {
	// Fingerprint is the 32-bit form of the encoding codec's fingerprint
	// (Fingerprint32).
	Fingerprint uint32
	// Tick is the snapshot's tick.
	Tick uint32
	// Integrity is the packet's integrity mode: which trailer ends it.
	Integrity Mode
	// Hashed reports whether a 32-bit hash of the whole state follows the
	// body (see WithStateHash).
	Hashed bool
	// Delta reports whether the body is a delta against the snapshot of
	// Baseline; when false it is a full snapshot and Baseline is 0.
	Delta bool
	// Baseline is the tick the delta was encoded against, always before
	// Tick.
	Baseline uint32
}

// Fingerprint32 folds a codec's 64-bit Fingerprint into the 32 bits a packet
// carries: the exclusive or of its two halves, so that every bit of the
// hash counts.
//
// 32 bits, not 64: the fingerprint only has to catch peers built with
// different layouts of the state, not an attacker (any input is decoded
// safely anyway), and two different layouts then match with a chance of one
// in four billion, while every packet saves four bytes.
func Fingerprint32(fp uint64) uint32 { return uint32(fp) ^ uint32(fp>>32) }

// writeHeader writes h. h.Baseline must be before h.Tick when h.Delta.
func writeHeader(w *bits.Writer, h Header) {
	w.WriteBits(Magic, magicBits)
	w.WriteBits(uint64(h.Fingerprint), fingerprintBits)
	w.WriteBits(uint64(h.Tick), tickBits)
	w.WriteBits(uint64(h.Integrity), modeBits)
	w.WriteBool(h.Hashed)
	w.WriteBool(h.Delta)
	if h.Delta {
		// The distance is at least 1, so distance-1 is coded: a baseline 1
		// to 4 ticks back takes 6 bits, 5 to 8 back 7 bits, 9 to 16 back 8.
		fields.WriteBitlen(w, uint64(h.Tick-h.Baseline-1), distanceWidth)
	}
}

// readHeader reads a header. It checks the magic number, the integrity
// mode (3 is reserved) and the baseline distance, not the fingerprint.
func readHeader(r *bits.Reader) (Header, error) {
	var h Header
	m, err := r.ReadBits(magicBits)
	if err != nil {
		return h, headerError(err)
	}
	if m != Magic {
		return h, fmt.Errorf("%w: %#04x, want %#04x", ErrBadMagic, m, Magic)
	}
	fp, err := r.ReadBits(fingerprintBits)
	if err != nil {
		return h, headerError(err)
	}
	h.Fingerprint = uint32(fp)
	tick, err := r.ReadBits(tickBits)
	if err != nil {
		return h, headerError(err)
	}
	h.Tick = uint32(tick)
	mode, err := r.ReadBits(modeBits)
	if err != nil {
		return h, headerError(err)
	}
	if mode > uint64(ModeMAC) {
		return h, fmt.Errorf("snapshot: header: %w: integrity mode %d", bitwire.ErrMalformed, mode)
	}
	h.Integrity = Mode(mode)
	if h.Hashed, err = r.ReadBool(); err != nil {
		return h, headerError(err)
	}
	if h.Delta, err = r.ReadBool(); err != nil {
		return h, headerError(err)
	}
	if h.Delta {
		d, err := fields.ReadBitlen(r, distanceWidth)
		if err != nil {
			return h, headerError(err)
		}
		// d+1 is the distance; d < 2^32 always holds with a 5-bit prefix.
		if d >= uint64(h.Tick) {
			return h, fmt.Errorf("snapshot: header: %w: baseline %d ticks before tick %d", bitwire.ErrMalformed, d+1, h.Tick)
		}
		h.Baseline = h.Tick - uint32(d) - 1
	}
	return h, nil
}

func headerError(err error) error {
	return fmt.Errorf("snapshot: header: %w", err)
}

// ParseHeader decodes the header of a snapshot packet without decoding its
// body, for tools and logs. It returns ErrBadMagic for a packet that is not
// a snapshot packet, and bitwire.ErrUnexpectedEnd when the packet ends
// within the header. It does not compare the fingerprint with any codec's,
// nor check the trailer: a header read from an unchecked packet is only a
// claim.
func ParseHeader(packet []byte) (Header, error) {
	var r bits.Reader
	r.Reset(packet)
	return readHeader(&r)
}
