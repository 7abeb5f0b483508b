package conn

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// Magic is the first 16 bits of every connection packet (written low bit
// first: the packet starts with the bytes 0x7F 0xC1). It differs from the
// replication packet's and package snapshot's, so that no receiver takes
// one for another. A change of the format takes a new magic.
const Magic = 0xC17F

// The header of a connection packet: the magic (16 bits), the integrity
// mode of its trailer (2 bits), the direction (1 bit: 0 from the client,
// 1 from the server) and three presence bits. From the client: an ack of
// the state, an input section, a channel section. From the server: an
// input ack, a channel section, the state. Then the sections present, in
// that order; the state, when present, is the replication packet
// (replicate.Peer.Encode's, with its own trailer) from the next byte
// boundary to the end of the body. The body is zero-padded to a byte, and
// the trailer of the mode (snapshot.Integrity) seals all of it.
const (
	magicBits  = 16
	headerBits = magicBits + 2 + 1 + 3
	// ackBits is the state ack without a missing-baseline report: Seq,
	// Mask, Token, MaskToken (32 bits each) and the report's presence bit;
	// with a report, Missing and MissingToken follow (64 bits).
	ackBits      = 4*32 + 1
	inputAckBits = 32
)

// StateBudget returns the Budget to give the Peer (replicate.PeerConfig)
// of a connection whose datagrams are at most budget bytes, with a
// Channel of share bytes and the given integrity mode: what is left for
// the state after the header, the input ack, the share and the trailer.
func StateBudget(budget, share int, mode snapshot.Mode) int {
	return budget - mode.Overhead() - (headerBits+inputAckBits+7)/8 - share - 1
}

// Client is the client's end of a connection: it receives the server's
// packets (state, input ack, messages) and writes its own (the state's
// ack, inputs, messages), one a tick. Inputs and Messages may be nil.
type Client[E, I any] struct {
	State    *replicate.Client[E]
	Inputs   *InputSender[I]
	Messages *Channel
	guard    *snapshot.Integrity
	packets  uint32
	inAck    uint32 // the newest input tick the server played, from its packets
	hasInAck bool
	w        bits.Writer
	r        bits.Reader
}

// NewClient returns the client's end over state, with the trailer of mode
// (and key, for snapshot.ModeMAC), which must be the server end's.
func NewClient[E, I any](state *replicate.Client[E], inputs *InputSender[I], messages *Channel, mode snapshot.Mode, key []byte) (*Client[E, I], error) {
	if state == nil {
		return nil, errors.New("conn: NewClient without a replicate.Client")
	}
	g, err := snapshot.NewIntegrity(mode, key)
	if err != nil {
		return nil, fmt.Errorf("conn: %w", err)
	}
	return &Client[E, I]{State: state, Inputs: inputs, Messages: messages, guard: g}, nil
}

// Server is the server's end of one client's connection: it writes the
// client's packets (messages, the input ack, and the Peer's state within
// what is left of the budget) and receives the client's (the state's ack
// for the Peer, inputs for the queue, messages). Inputs and Messages may
// be nil.
type Server[E, I any] struct {
	Peer     *replicate.Peer[E]
	Inputs   *InputQueue[I]
	Messages *Channel
	budget   int
	guard    *snapshot.Integrity
	packets  uint32
	state    []byte
	w        bits.Writer
	r        bits.Reader
	stats    ServerStats
}

// ServerStats counts a Server end's packets.
type ServerStats struct {
	Packets int   // packets written
	Bytes   int64 // their bytes
	// Overhead is what the connection added to the Peer's packets:
	// headers, input acks, channel sections, padding and trailers, in bits.
	Overhead int64
}

// NewServer returns the server's end over peer, whose datagrams are at
// most budget bytes, with the trailer of mode (and key), which must be the
// client end's. The Peer's own Budget must leave room for the rest
// (StateBudget); a packet over budget is an error of Append, never sent.
func NewServer[E, I any](peer *replicate.Peer[E], inputs *InputQueue[I], messages *Channel, budget int, mode snapshot.Mode, key []byte) (*Server[E, I], error) {
	if peer == nil {
		return nil, errors.New("conn: NewServer without a replicate.Peer")
	}
	g, err := snapshot.NewIntegrity(mode, key)
	if err != nil {
		return nil, fmt.Errorf("conn: %w", err)
	}
	share := 0
	if messages != nil {
		share = messages.cfg.Share
	}
	if StateBudget(budget, share, mode) < replicate.MinBudget {
		return nil, fmt.Errorf("%w: %d bytes leave %d for the state", ErrBudget, budget, StateBudget(budget, share, mode))
	}
	return &Server[E, I]{Peer: peer, Inputs: inputs, Messages: messages, budget: budget, guard: g}, nil
}

// Stats returns the Server end's counters.
func (s *Server[E, I]) Stats() ServerStats { return s.stats }

func writeConnHeader(w *bits.Writer, mode snapshot.Mode, down bool, a, b, c bool) {
	w.WriteBits(Magic, magicBits)
	w.WriteBits(uint64(mode), 2)
	w.WriteBool(down)
	w.WriteBool(a)
	w.WriteBool(b)
	w.WriteBool(c)
}

// open checks the header and the trailer of pkt and returns the reader at
// the first section and the three presence bits.
func open(r *bits.Reader, g *snapshot.Integrity, pkt []byte, down bool) (body []byte, a, b, c bool, err error) {
	r.Reset(pkt)
	if r.Remaining() < headerBits {
		return nil, false, false, false, fmt.Errorf("conn: header: %w", bitwire.ErrUnexpectedEnd)
	}
	m, _ := r.ReadBits(magicBits)
	if m != Magic {
		return nil, false, false, false, fmt.Errorf("%w: %#04x, want %#04x", ErrBadMagic, m, Magic)
	}
	mode, _ := r.ReadBits(2)
	if snapshot.Mode(mode) != g.Mode() {
		return nil, false, false, false, fmt.Errorf("%w: packet integrity %v, ours %v", replicate.ErrProtocolMismatch, snapshot.Mode(mode), g.Mode())
	}
	dir, _ := r.ReadBool()
	if dir != down {
		return nil, false, false, false, fmt.Errorf("conn: %w: a packet of the other direction", bitwire.ErrMalformed)
	}
	body, _, err = g.Open(pkt)
	if err != nil {
		return nil, false, false, false, fmt.Errorf("conn: %w", err)
	}
	r.Reset(body)
	_, _ = r.ReadBits(headerBits - 3)
	a, _ = r.ReadBool()
	b, _ = r.ReadBool()
	c, _ = r.ReadBool()
	if r.Remaining() < 0 {
		return nil, false, false, false, fmt.Errorf("conn: header: %w", bitwire.ErrUnexpectedEnd)
	}
	return body, a, b, c, nil
}

// Append appends the client's packet of this tick to dst: the state's ack
// when the state changed since the last, the inputs the server has not
// consumed (the newest Redundancy), and the channel's section when it is
// due. Call it once a tick.
func (c *Client[E, I]) Append(dst []byte) ([]byte, error) {
	c.packets++
	ack := c.State.Ack()
	hasAck := ack.Seq != 0 || ack.Missing != 0
	var buf [MaxRedundancy]*stamped[I]
	hasIn := c.Inputs != nil && len(c.Inputs.pending(buf[:0])) > 0
	hasMsg := c.Messages != nil && c.Messages.due(c.packets)
	start := len(dst)
	c.w.ResetAppend(dst)
	defer c.w.ResetAppend(nil)
	writeConnHeader(&c.w, c.guard.Mode(), false, hasAck, hasIn, hasMsg)
	if hasAck {
		writeAck(&c.w, ack)
	}
	if hasIn {
		if err := c.Inputs.write(&c.w); err != nil {
			return dst, fmt.Errorf("conn: inputs: %w", err)
		}
	}
	if hasMsg {
		if err := c.Messages.write(&c.w, c.packets, c.Messages.cfg.Share*8); err != nil {
			return dst, fmt.Errorf("conn: messages: %w", err)
		}
	}
	out, _ := c.guard.Seal(c.w.Bytes(), start)
	return out, nil
}

// InputAck returns the newest input tick the server's queue played, as the
// last server packet that carried it said (for prediction: the inputs
// after it are not yet reflected in the state); ok is false before any.
func (c *Client[E, I]) InputAck() (tick uint32, ok bool) { return c.inAck, c.hasInAck }

// Receive applies one server packet: the input ack, the messages (read
// them with Messages.Receive) and the state (State.Decode, whose Info it
// returns; hasState is false for a packet without one). On an error of the
// header or the trailer nothing changes; a state the replicate.Client
// refuses (a stale packet, a missing baseline) leaves the input ack and
// the messages taken, since they are sound on their own, and returns the
// Client's error.
func (c *Client[E, I]) Receive(pkt []byte) (info replicate.Info, hasState bool, err error) {
	body, hasAck, hasMsg, hasState, err := open(&c.r, c.guard, pkt, true)
	if err != nil {
		return info, false, err
	}
	r := &c.r
	var inAck uint64
	if hasAck {
		if inAck, err = r.ReadBits(inputAckBits); err != nil {
			return info, false, err
		}
	}
	if hasMsg {
		if c.Messages == nil {
			return info, false, fmt.Errorf("conn: %w: messages without a channel", bitwire.ErrMalformed)
		}
		if err := c.Messages.read(r); err != nil {
			return info, false, fmt.Errorf("conn: messages: %w", err)
		}
	}
	if hasAck {
		c.inAck, c.hasInAck = uint32(inAck), true
		if c.Inputs != nil {
			c.Inputs.takeAck(uint32(inAck))
		}
	}
	if !hasState {
		if !r.CheckPadding() {
			return info, false, fmt.Errorf("conn: %w", bitwire.ErrTrailingData)
		}
		return info, false, nil
	}
	at := (r.Pos() + 7) / 8
	if _, err := r.ReadBits(-r.Pos() & 7); err != nil || at > len(body) {
		return info, false, fmt.Errorf("conn: %w", bitwire.ErrUnexpectedEnd)
	}
	info, err = c.State.Decode(body[at:])
	return info, true, err
}

// Append appends the server's packet for this client to dst: the input
// ack, the channel's section when due (at most its share), and the
// Peer's next packet of the tick (Peer.Encode); ok is false when there is
// nothing to send. With a bandwidth budget, call it until ok is false, as
// Peer.Encode.
func (s *Server[E, I]) Append(dst []byte) (out []byte, ok bool, err error) {
	st, hasState, err := s.Peer.Encode(s.state[:0])
	if err != nil {
		return dst, false, err
	}
	s.state = st
	var inAck uint32
	hasAck := false
	if s.Inputs != nil {
		inAck, hasAck = s.Inputs.Ack()
	}
	hasMsg := s.Messages != nil && s.Messages.due(s.packets+1)
	if !hasState && !hasMsg {
		return dst, false, nil
	}
	s.packets++
	start := len(dst)
	s.w.ResetAppend(dst)
	defer s.w.ResetAppend(nil)
	writeConnHeader(&s.w, s.guard.Mode(), true, hasAck, hasMsg, hasState)
	if hasAck {
		s.w.WriteBits(uint64(inAck), inputAckBits)
	}
	if hasMsg {
		room := (s.budget-s.guard.Overhead()-len(st))*8 - s.w.Len() - 7
		if err := s.Messages.write(&s.w, s.packets, min(room, s.Messages.cfg.Share*8)); err != nil {
			return dst, false, fmt.Errorf("conn: messages: %w", err)
		}
	}
	if hasState {
		s.w.WriteBits(0, -s.w.Len()&7)
		s.w.WriteBytes(st)
	}
	out, _ = s.guard.Seal(s.w.Bytes(), start)
	size := len(out) - start
	if size > s.budget {
		return dst, false, fmt.Errorf("%w: a packet of %d bytes, budget %d (the Peer's Budget over StateBudget?)", ErrBudget, size, s.budget)
	}
	s.stats.Packets++
	s.stats.Bytes += int64(size)
	s.stats.Overhead += int64(size-len(st)) * 8
	return out, true, nil
}

// Receive applies one client packet: the state's ack (Peer.Ack, whose
// error it returns: a spoofed ack is refused there), the inputs (to the
// queue) and the messages. On an error of the header or the trailer
// nothing changes; each section is applied once it is read whole, so a
// malformed section (a bug of the sender's, once the trailer passed)
// leaves the sections before it applied.
func (s *Server[E, I]) Receive(pkt []byte) error {
	_, hasAck, hasIn, hasMsg, err := open(&s.r, s.guard, pkt, false)
	if err != nil {
		return err
	}
	r := &s.r
	var ack replicate.Ack
	if hasAck {
		if ack, err = readAck(r); err != nil {
			return err
		}
	}
	if hasIn {
		if s.Inputs == nil {
			return fmt.Errorf("conn: %w: inputs without a queue", bitwire.ErrMalformed)
		}
		if err := s.Inputs.read(r); err != nil {
			return fmt.Errorf("conn: inputs: %w", err)
		}
	}
	if hasMsg {
		if s.Messages == nil {
			return fmt.Errorf("conn: %w: messages without a channel", bitwire.ErrMalformed)
		}
		if err := s.Messages.read(r); err != nil {
			return fmt.Errorf("conn: messages: %w", err)
		}
	}
	if !r.CheckPadding() {
		return fmt.Errorf("conn: %w", bitwire.ErrTrailingData)
	}
	if hasAck {
		return s.Peer.Ack(ack)
	}
	return nil
}

func writeAck(w *bits.Writer, a replicate.Ack) {
	w.WriteBits(uint64(a.Seq), 32)
	w.WriteBits(uint64(a.Mask), 32)
	w.WriteBits(uint64(a.Token), 32)
	w.WriteBits(uint64(a.MaskToken), 32)
	w.WriteBool(a.Missing != 0)
	if a.Missing != 0 {
		w.WriteBits(uint64(a.Missing), 32)
		w.WriteBits(uint64(a.MissingToken), 32)
	}
}

func readAck(r *bits.Reader) (replicate.Ack, error) {
	var v [4]uint64
	for i := range v {
		x, err := r.ReadBits(32)
		if err != nil {
			return replicate.Ack{}, err
		}
		v[i] = x
	}
	a := replicate.Ack{Seq: uint32(v[0]), Mask: uint32(v[1]), Token: uint32(v[2]), MaskToken: uint32(v[3])}
	miss, err := r.ReadBool()
	if err != nil || !miss {
		return a, err
	}
	m, err := r.ReadBits(32)
	if err != nil {
		return a, err
	}
	t, err := r.ReadBits(32)
	if err != nil {
		return a, err
	}
	if m == 0 {
		return a, fmt.Errorf("conn: %w: missing-baseline report of packet 0", bitwire.ErrMalformed)
	}
	a.Missing, a.MissingToken = uint32(m), uint32(t)
	return a, nil
}
