package replicate

import (
	"encoding/binary"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The framing of replication packets and acks lives in this file alone:
// docs/wire-format.md ("Replication packets") is the reference, these
// functions are the code. A later trailer (a CRC or a MAC) or an ack token
// is added here, after the body and in the ack, without touching the
// entity coding.

// Magic is the first 16 bits of every replication packet (written low bit
// first: the packet starts with the bytes 0x7F 0xB1). It differs from
// package snapshot's, so a receiver never mistakes one for the other.
const Magic = 0xB17F

// AckMagic is the first 16 bits of an encoded Ack (bytes 0xA7 0xB1).
const AckMagic = 0xB1A7

const (
	magicBits       = 16
	fingerprintBits = 32
	seqBits         = 32
	tickBits        = 32
	headerBits      = magicBits + fingerprintBits + seqBits + tickBits
	headerBytes     = headerBits / 8
	// idWidth is the prefix width of the bit-length code of id gaps: five
	// bits hold the highest set bit of any uint32.
	idWidth = 5
	// distWidth is the prefix width of tick - baseline - 1.
	distWidth = 5
	// AckSize is the size of an encoded Ack in bytes.
	AckSize = 10
)

// Header is the decoded header of a replication packet.
type Header struct {
	// Fingerprint is the 32-bit form of the codec's fingerprint
	// (snapshot.Fingerprint32's folding: the exclusive or of its halves).
	Fingerprint uint32
	// Seq numbers the packets of one Peer from 1, one more per packet,
	// whatever their tick; acknowledgements name it.
	Seq uint32
	// Tick is the server tick whose states the packet carries.
	Tick uint32
}

func fingerprint32(fp uint64) uint32 { return uint32(fp) ^ uint32(fp>>32) }

func writeHeader(w *bits.Writer, h Header) {
	w.WriteBits(Magic, magicBits)
	w.WriteBits(uint64(h.Fingerprint), fingerprintBits)
	w.WriteBits(uint64(h.Seq), seqBits)
	w.WriteBits(uint64(h.Tick), tickBits)
}

func readHeader(r *bits.Reader) (Header, error) {
	var h Header
	if r.Remaining() < headerBits {
		return h, fmt.Errorf("replicate: header: %w", bitwire.ErrUnexpectedEnd)
	}
	m, _ := r.ReadBits(magicBits)
	if m != Magic {
		return h, fmt.Errorf("%w: %#04x, want %#04x", ErrBadMagic, m, Magic)
	}
	fp, _ := r.ReadBits(fingerprintBits)
	seq, _ := r.ReadBits(seqBits)
	tick, _ := r.ReadBits(tickBits)
	h.Fingerprint, h.Seq, h.Tick = uint32(fp), uint32(seq), uint32(tick)
	if h.Seq == 0 {
		return h, fmt.Errorf("replicate: header: %w: sequence number 0", bitwire.ErrMalformed)
	}
	return h, nil
}

// ParseHeader decodes the header of a replication packet without its body,
// for tools and logs. It returns ErrBadMagic for a packet that is not one,
// and bitwire.ErrUnexpectedEnd for a packet shorter than the header.
func ParseHeader(packet []byte) (Header, error) {
	var r bits.Reader
	r.Reset(packet)
	return readHeader(&r)
}

// An id list is a run of entries, each announced by a 1 bit and ended by a
// 0 bit; each entry's id is coded as its gap from the previous entry's
// (id - previous - 1; the first entry's gap is its id), in a bit-length
// code with a 5-bit prefix. Ids therefore ascend strictly.

// idBits is the cost of an entry's announcing bit and id gap.
func idBits(gap uint32) int { return 1 + fields.BitlenBits(uint64(gap), idWidth) }

func writeID(w *bits.Writer, id uint32, prev *int64) {
	w.WriteBool(true)
	fields.WriteBitlen(w, uint64(int64(id)-*prev-1), idWidth)
	*prev = int64(id)
}

// readID reads the next entry's id; more is false at the end of the list.
func readID(r *bits.Reader, prev *int64) (id uint32, more bool, err error) {
	more, err = r.ReadBool()
	if err != nil || !more {
		return 0, false, err
	}
	g, err := fields.ReadBitlen(r, idWidth)
	if err != nil {
		return 0, false, err
	}
	v := *prev + 1 + int64(g)
	if v > int64(^uint32(0)) {
		return 0, false, fmt.Errorf("replicate: %w: id gap past 2^32", bitwire.ErrMalformed)
	}
	*prev = v
	return uint32(v), true, nil
}

// copyBits appends n bits of src, starting at bit off, to w.
func copyBits(w *bits.Writer, r *bits.Reader, src []byte, off, n int) {
	r.Reset(src[off/8:])
	_ = r.Skip(off % 8)
	for n > 0 {
		k := min(n, 64)
		v, _ := r.ReadBits(k)
		w.WriteBits(v, k)
		n -= k
	}
}

// Ack acknowledges replication packets: Seq, the newest packet the client
// accepted, and in Mask bit i the packet Seq-1-i (i in 0..31). Acks are
// cumulative, so a lost ack costs nothing when a later one arrives within
// 32 packets.
type Ack struct {
	Seq  uint32
	Mask uint32
}

// AppendAck appends the 10-byte encoding of a: AckMagic, Seq and Mask,
// little-endian.
func AppendAck(dst []byte, a Ack) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, AckMagic)
	dst = binary.LittleEndian.AppendUint32(dst, a.Seq)
	return binary.LittleEndian.AppendUint32(dst, a.Mask)
}

// ParseAck decodes an Ack written by AppendAck; b must be exactly AckSize
// bytes (bitwire.ErrUnexpectedEnd or bitwire.ErrTrailingData otherwise).
func ParseAck(b []byte) (Ack, error) {
	switch {
	case len(b) < AckSize:
		return Ack{}, fmt.Errorf("replicate: ack: %w", bitwire.ErrUnexpectedEnd)
	case len(b) > AckSize:
		return Ack{}, fmt.Errorf("replicate: ack: %w", bitwire.ErrTrailingData)
	case binary.LittleEndian.Uint16(b) != AckMagic:
		return Ack{}, fmt.Errorf("%w: ack", ErrBadMagic)
	}
	return Ack{Seq: binary.LittleEndian.Uint32(b[2:]), Mask: binary.LittleEndian.Uint32(b[6:])}, nil
}
