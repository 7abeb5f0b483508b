package snapshot

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Ack is a receiver's acknowledgement of one packet, which the client
// carries back to the server (typically inside its own input packets) and
// the server gives to the stream's Sender.HandleAck. Receiver.Ack returns
// the one to send after each Decode.
//
// The token proves that the acknowledging peer holds the packet: it is
// derived from the packet's bytes (see Integrity), so an attacker who
// cannot read the client's traffic cannot forge an ack, and an ack of a
// forged or corrupted packet does not match what the sender sent.
//
// An Ack is AckSize bytes on the wire (docs/wire-format.md, "Acks"):
// AppendBinary and MarshalBinary write it, UnmarshalBinary and ParseAck
// read it; WriteBits and ReadAck do the same within a bit stream.
type Ack struct {
	// Tick is the tick of the acknowledged packet.
	Tick uint32
	// Token is the packet's ack token.
	Token uint32
	// MissingBaseline: the packet was a delta against a snapshot the
	// receiver does not hold. The sender sends a full snapshot next.
	MissingBaseline bool
	// StateMismatch: the packet carried a state hash that differs from the
	// state the receiver rebuilt; the receiver has dropped its baselines.
	// The sender sends a full snapshot next.
	StateMismatch bool
}

// AckSize is the size of an encoded Ack in bytes: 8 bits of flags, the
// tick and the token (32 bits each).
const AckSize = 9

// The ack's flag bits (the first 8 bits); the others are reserved.
const (
	ackMissingBaseline = 1 << 0
	ackStateMismatch   = 1 << 1
	ackFlagBits        = 8
)

// NeedsFull reports whether the ack asks the sender for a full snapshot.
func (a Ack) NeedsFull() bool { return a.MissingBaseline || a.StateMismatch }

// WriteBits writes the ack's 72 bits to w.
func (a Ack) WriteBits(w *bits.Writer) {
	var flags uint64
	if a.MissingBaseline {
		flags |= ackMissingBaseline
	}
	if a.StateMismatch {
		flags |= ackStateMismatch
	}
	w.WriteBits(flags, ackFlagBits)
	w.WriteBits(uint64(a.Tick), 32)
	w.WriteBits(uint64(a.Token), 32)
}

// ReadAck reads an ack written by WriteBits. Reserved flag bits that are
// set are bitwire.ErrMalformed (a newer peer, or garbage); a short input is
// bitwire.ErrUnexpectedEnd.
func ReadAck(r *bits.Reader) (Ack, error) {
	var a Ack
	flags, err := r.ReadBits(ackFlagBits)
	if err != nil {
		return a, fmt.Errorf("snapshot: ack: %w", err)
	}
	if flags&^(ackMissingBaseline|ackStateMismatch) != 0 {
		return a, fmt.Errorf("snapshot: ack: %w: reserved flags %#02x", bitwire.ErrMalformed, flags)
	}
	v, err := r.ReadBits(64)
	if err != nil {
		return a, fmt.Errorf("snapshot: ack: %w", err)
	}
	a.Tick, a.Token = uint32(v), uint32(v>>32)
	a.MissingBaseline = flags&ackMissingBaseline != 0
	a.StateMismatch = flags&ackStateMismatch != 0
	return a, nil
}

// AppendBinary appends the ack's AckSize bytes to dst.
func (a Ack) AppendBinary(dst []byte) ([]byte, error) {
	var w bits.Writer
	w.ResetAppend(dst)
	a.WriteBits(&w)
	return w.Bytes(), nil
}

// MarshalBinary returns the ack's AckSize bytes.
func (a Ack) MarshalBinary() ([]byte, error) {
	return a.AppendBinary(make([]byte, 0, AckSize+8))
}

// ParseAck reads an ack from the start of b and returns it with the number
// of bytes it took (AckSize), so that an ack can sit inside a larger
// datagram. Errors as ReadAck's.
func ParseAck(b []byte) (Ack, int, error) {
	var r bits.Reader
	r.Reset(b)
	a, err := ReadAck(&r)
	if err != nil {
		return Ack{}, 0, err
	}
	return a, AckSize, nil
}

// UnmarshalBinary decodes an ack of exactly AckSize bytes.
func (a *Ack) UnmarshalBinary(b []byte) error {
	got, n, err := ParseAck(b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("snapshot: ack: %w: %d bytes, want %d", bitwire.ErrTrailingData, len(b), AckSize)
	}
	*a = got
	return nil
}
