package replicate

import (
	"encoding/binary"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/integrity"
)

// The framing of replication packets and acks lives in this file alone:
// docs/wire-format.md ("Replication packets") is the reference, these
// functions are the code. The trailer (none, a CRC32C or an HMAC) and the
// ack tokens are package integrity's (integrity.Guard), applied to the
// whole packet after the body, so the entity coding does not see them.

// Magic is the first 16 bits of every replication packet (written low bit
// first: the packet starts with the bytes 0x7F 0xB4). It differs from
// package snapshot's, so a receiver never mistakes one for the other. A
// change of the format takes a new magic: 0xB17F was the first version,
// without the integrity mode and the trailer; 0xB27F the second, whose
// lists spent a bit per entry and at least six per id gap; 0xB37F the
// third, whose deltas of a codec with pred values were never predicted
// (version 4 starts each with whether it is).
const Magic = 0xB47F

// AckMagic is the first 16 bits of an encoded Ack (bytes 0xA7 0xB2);
// 0xB1A7 was the first version, without tokens.
const AckMagic = 0xB2A7

const (
	magicBits       = 16
	fingerprintBits = 32
	seqBits         = 32
	tickBits        = 32
	modeBits        = 2
	headerBits      = magicBits + fingerprintBits + seqBits + tickBits + modeBits
	headerBytes     = (headerBits + 7) / 8
	// countWidth is the prefix width of the bit-length code of a list's
	// count - 1, valueWidth that of the escape of its values (id gaps,
	// kinds) and distWidth that of the common baseline's tick - baseline -
	// 1: five bits hold the highest set bit of any uint32.
	countWidth = 5
	valueWidth = 5
	distWidth  = 5
	// AckSize is the size of an encoded Ack in bytes, without a
	// missing-baseline report.
	AckSize = 19
	// AckSizeMissing is the size of an encoded Ack in bytes with a
	// missing-baseline report (8 more bytes: the seq of the packet the client
	// could not apply and that packet's ack token).
	AckSizeMissing = AckSize + 8
	// ackMissing is the ack's flag bit of a missing-baseline report; the
	// other flag bits are reserved.
	ackMissing = 1 << 0
)

// Header is the decoded header of a replication packet.
type Header struct {
	// Fingerprint is the 32-bit form of the codec's fingerprint
	// (the folding of snapshot.Fingerprint32: the exclusive or of its halves).
	Fingerprint uint32
	// Seq numbers the packets of one Peer from 1, one more per packet,
	// whatever their tick; acknowledgements name it.
	Seq uint32
	// Tick is the server tick whose states the packet carries.
	Tick uint32
	// Integrity is the packet's integrity mode: which trailer ends it.
	Integrity integrity.Mode
}

func fingerprint32(fp uint64) uint32 { return uint32(fp) ^ uint32(fp>>32) }

func writeHeader(w *bits.Writer, h Header) {
	w.WriteBits(Magic, magicBits)
	w.WriteBits(uint64(h.Fingerprint), fingerprintBits)
	w.WriteBits(uint64(h.Seq), seqBits)
	w.WriteBits(uint64(h.Tick), tickBits)
	w.WriteBits(uint64(h.Integrity), modeBits)
}

func readHeader(r *bits.Reader) (Header, error) {
	var h Header
	if r.Remaining() < magicBits {
		return h, fmt.Errorf("replicate: header: %w", bitwire.ErrUnexpectedEnd)
	}
	m, _ := r.ReadBits(magicBits)
	if m != Magic {
		return h, fmt.Errorf("%w: %#04x, want %#04x", ErrBadMagic, m, Magic)
	}
	if r.Remaining() < headerBits-magicBits {
		return h, fmt.Errorf("replicate: header: %w", bitwire.ErrUnexpectedEnd)
	}
	fp, _ := r.ReadBits(fingerprintBits)
	seq, _ := r.ReadBits(seqBits)
	tick, _ := r.ReadBits(tickBits)
	mode, _ := r.ReadBits(modeBits)
	h.Fingerprint, h.Seq, h.Tick, h.Integrity = uint32(fp), uint32(seq), uint32(tick), integrity.Mode(mode)
	if h.Integrity > integrity.ModeMAC {
		return h, fmt.Errorf("replicate: header: %w: integrity mode %d", bitwire.ErrMalformed, mode)
	}
	if h.Seq == 0 {
		return h, fmt.Errorf("replicate: header: %w: sequence number 0", bitwire.ErrMalformed)
	}
	return h, nil
}

// ParseHeader decodes the header of a replication packet without its body
// or trailer, for tools and logs: nothing is checked against a trailer. It
// returns ErrBadMagic for a packet that is not one, bitwire.ErrUnexpectedEnd
// for a packet shorter than the header, and bitwire.ErrMalformed for
// integrity mode 3 or sequence number 0.
func ParseHeader(packet []byte) (Header, error) {
	var r bits.Reader
	r.Reset(packet)
	return readHeader(&r)
}

// Lists (removals, entities, and the entities that are not deltas against
// the common baseline) are coded as a count, then their values: each list
// an unsigned Rice code whose parameter follows a running mean of the
// values before it in the list (fields.RiceMean, fed AddCapped), with an
// escape to a bit-length code, so that dense ids cost a bit or two, sparse
// ones about the log of their spacing, and a jump between two ranges of
// ids about its length. Ids are coded as their gap from the previous
// entry's (id - previous - 1; the first entry's gap is its id), so they
// ascend strictly.

// riceSeq codes the values of one list: the running mean and its
// parameter.
type riceSeq struct{ mean fields.RiceMean }

func (q *riceSeq) write(w *bits.Writer, v uint64) {
	k := q.mean.K()
	fields.WriteRiceBitlen(w, v, k, valueWidth)
	q.mean.AddCapped(v, k)
}

// bits returns the size of v and advances as write would.
func (q *riceSeq) bits(v uint64) int {
	k := q.mean.K()
	q.mean.AddCapped(v, k)
	return fields.RiceBitlenBits(v, k, valueWidth)
}

func (q *riceSeq) read(r *bits.Reader) (uint64, error) {
	k := q.mean.K()
	v, err := fields.ReadRiceBitlen(r, k, valueWidth)
	if err != nil {
		return 0, err
	}
	q.mean.AddCapped(v, k)
	return v, nil
}

// A count is a 0 bit for none, or a 1 bit and count - 1 as an unsigned
// bitlen with a 5-bit prefix.
func countBits(n int) int {
	if n == 0 {
		return 1
	}
	return 1 + fields.BitlenBits(uint64(n-1), countWidth)
}

func writeCount(w *bits.Writer, n int) {
	w.WriteBool(n != 0)
	if n != 0 {
		fields.WriteBitlen(w, uint64(n-1), countWidth)
	}
}

// readCount reads a count of entries that take at least one bit each: one
// greater than the bits left is ErrUnexpectedEnd, so that a decoder never
// allocates for more entries than the packet can hold.
func readCount(r *bits.Reader) (int, error) {
	some, err := r.ReadBool()
	if err != nil || !some {
		return 0, err
	}
	n, err := fields.ReadBitlen(r, countWidth)
	if err != nil {
		return 0, err
	}
	if n >= uint64(r.Remaining()) {
		return 0, fmt.Errorf("replicate: %w: a list of %d entries in %d bits", bitwire.ErrUnexpectedEnd, n+1, r.Remaining())
	}
	return int(n) + 1, nil
}

// idSeq codes the ids of one list as gaps.
type idSeq struct {
	riceSeq
	prev int64
}

func newIDSeq() idSeq { return idSeq{prev: -1} }

func (q *idSeq) write(w *bits.Writer, id uint32) {
	q.riceSeq.write(w, uint64(int64(id)-q.prev-1))
	q.prev = int64(id)
}

func (q *idSeq) bits(id uint32) int {
	n := q.riceSeq.bits(uint64(int64(id) - q.prev - 1))
	q.prev = int64(id)
	return n
}

func (q *idSeq) read(r *bits.Reader) (uint32, error) {
	g, err := q.riceSeq.read(r)
	if err != nil {
		return 0, err
	}
	if g > uint64(^uint32(0)) || q.prev+1+int64(g) > int64(^uint32(0)) {
		return 0, fmt.Errorf("replicate: %w: id gap past 2^32", bitwire.ErrMalformed)
	}
	q.prev += 1 + int64(g)
	return uint32(q.prev), nil
}

// copyBits appends n bits of src, starting at bit off, to w: 56 at a time,
// read as one little-endian word (the bits of a byte are in stream order).
// src must hold them.
func copyBits(w *bits.Writer, src []byte, off, n int) {
	for n > 0 {
		i := off >> 3
		var v uint64
		if i+8 <= len(src) {
			v = binary.LittleEndian.Uint64(src[i:])
		} else {
			var b [8]byte
			copy(b[:], src[i:])
			v = binary.LittleEndian.Uint64(b[:])
		}
		k := min(n, 56)
		w.WriteBits(v>>uint(off&7), k)
		off += k
		n -= k
	}
}

// Ack acknowledges replication packets: Seq, the newest packet the client
// accepted, and in Mask bit i the packet Seq-1-i (i in 0..31). Acks are
// cumulative, so a lost ack costs nothing when a later one arrives within
// 32 packets.
//
// The tokens prove that the client holds the packets it acknowledges:
// each packet has a 32-bit ack token derived from its bytes
// (integrity.Guard: the CRC32C of the packet, or with a MAC bytes of the
// HMAC that are not transmitted), which an attacker who cannot read the
// client's traffic (with a MAC: anyone without the key) cannot compute.
// Token is the token of packet Seq, MaskToken the exclusive or of the
// tokens of the packets Mask names (0 when Mask is 0). A Peer takes Seq
// only when Token matches the packet it sent, and the Mask only when
// MaskToken does (ErrBadAck otherwise), so a spoofed ack changes nothing,
// and the ack of a forged packet the client accepted does not pass for the
// genuine packet of that sequence number.
type Ack struct {
	Seq       uint32
	Mask      uint32
	Token     uint32
	MaskToken uint32
	// Missing, when not 0, is a packet the client refused with
	// ErrNoBaseline, and MissingToken its token: the Peer then sends every
	// entity of that packet in full, at once, instead of after
	// BaselineDepth sends.
	Missing      uint32
	MissingToken uint32
}

// AppendAck appends the encoding of a, little-endian and byte-aligned:
// AckMagic, a flags byte (bit 0: a missing-baseline report follows), Seq,
// Mask, Token and MaskToken, then Missing and MissingToken when Missing is
// not 0: AckSize bytes, or AckSizeMissing.
func AppendAck(dst []byte, a Ack) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, AckMagic)
	var flags byte
	if a.Missing != 0 {
		flags |= ackMissing
	}
	dst = append(dst, flags)
	dst = binary.LittleEndian.AppendUint32(dst, a.Seq)
	dst = binary.LittleEndian.AppendUint32(dst, a.Mask)
	dst = binary.LittleEndian.AppendUint32(dst, a.Token)
	dst = binary.LittleEndian.AppendUint32(dst, a.MaskToken)
	if a.Missing != 0 {
		dst = binary.LittleEndian.AppendUint32(dst, a.Missing)
		dst = binary.LittleEndian.AppendUint32(dst, a.MissingToken)
	}
	return dst
}

// ParseAck decodes an Ack written by AppendAck; b must be exactly its
// size (bitwire.ErrUnexpectedEnd or bitwire.ErrTrailingData otherwise).
// Another magic is ErrBadMagic; a reserved flag bit, or a missing-baseline
// report naming packet 0, is bitwire.ErrMalformed.
func ParseAck(b []byte) (Ack, error) {
	if len(b) < 3 {
		return Ack{}, fmt.Errorf("replicate: ack: %w", bitwire.ErrUnexpectedEnd)
	}
	if binary.LittleEndian.Uint16(b) != AckMagic {
		return Ack{}, fmt.Errorf("%w: ack", ErrBadMagic)
	}
	flags := b[2]
	if flags&^ackMissing != 0 {
		return Ack{}, fmt.Errorf("replicate: ack: %w: reserved flags %#02x", bitwire.ErrMalformed, flags)
	}
	size := AckSize
	if flags&ackMissing != 0 {
		size = AckSizeMissing
	}
	switch {
	case len(b) < size:
		return Ack{}, fmt.Errorf("replicate: ack: %w", bitwire.ErrUnexpectedEnd)
	case len(b) > size:
		return Ack{}, fmt.Errorf("replicate: ack: %w", bitwire.ErrTrailingData)
	}
	a := Ack{Seq: binary.LittleEndian.Uint32(b[3:]), Mask: binary.LittleEndian.Uint32(b[7:]),
		Token: binary.LittleEndian.Uint32(b[11:]), MaskToken: binary.LittleEndian.Uint32(b[15:])}
	if size == AckSizeMissing {
		a.Missing, a.MissingToken = binary.LittleEndian.Uint32(b[19:]), binary.LittleEndian.Uint32(b[23:])
		if a.Missing == 0 {
			return Ack{}, fmt.Errorf("replicate: ack: %w: missing-baseline report of packet 0", bitwire.ErrMalformed)
		}
	}
	return a, nil
}
