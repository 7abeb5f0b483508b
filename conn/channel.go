package conn

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Channel defaults.
const (
	// DefaultQueue bounds a Channel's unacknowledged messages, and the
	// received ones waiting to be delivered (in order) or read.
	DefaultQueue = 256
	// DefaultResend is how many packets a Channel waits after sending a
	// message before sending it again while it is not acknowledged: about
	// a round trip at 30 packets a second.
	DefaultResend = 4
	// DefaultShare is the most bytes of a packet a Channel's messages
	// take, by default.
	DefaultShare = 200
	// seqWidth is the bitlen prefix width of sequence numbers and acks.
	seqWidth = 5
)

// The errors of this package, tested with errors.Is.
var (
	// ErrQueueFull: Channel.Send while DefaultQueue (ChannelConfig.Queue)
	// messages are unacknowledged; the message is not queued. Send it
	// again later, or drop it knowingly.
	ErrQueueFull = errors.New("conn: reliable message queue full")
	// ErrMessageTooLarge: a message whose encoding alone exceeds the
	// Channel's share of a packet, which could never be sent.
	ErrMessageTooLarge = errors.New("conn: message larger than the channel's share of a packet")
	// ErrTickOrder: an input stamped with a tick not after the last one.
	ErrTickOrder = errors.New("conn: tick out of order")
	// ErrBadMagic: not a connection packet of this version.
	ErrBadMagic = errors.New("conn: bad magic number")
	// ErrBudget: a configuration whose parts do not fit the packet budget.
	ErrBudget = errors.New("conn: budget too small")
)

// ChannelConfig configures a Channel; zero fields take the defaults.
type ChannelConfig struct {
	// Queue bounds the unacknowledged messages (Send fails with
	// ErrQueueFull beyond it) and the received messages not yet read
	// (beyond it the receiver stops accepting, and the sender resends
	// later: nothing is lost). DefaultQueue when 0.
	Queue int
	// Resend is the packets between sends of an unacknowledged message
	// (ticks, at a packet a tick). DefaultResend when 0.
	Resend int
	// Share is the most bytes a packet's messages take. DefaultShare when
	// 0; a message larger than the share alone is ErrMessageTooLarge.
	Share int
}

// Channel sends and receives ordered, reliable messages of one union
// (bitwire.NewUnion): chat, RPCs, game events. Each side of a connection
// has one. A message is sent in the packets of the connection until the
// other side acknowledges it, again every Resend packets, within the
// Channel's share of each packet; it is delivered exactly once, in the
// order sent, whatever the loss, duplication and reordering of the
// packets. Create it with NewChannel.
type Channel struct {
	u   *bitwire.Union
	cfg ChannelConfig

	// Sending: the unacknowledged messages, oldest first, numbered from
	// base on.
	out     []outMsg
	base    uint32 // seq of out[0]; every seq before is acknowledged
	nextSeq uint32 // seq of the next message sent

	// Receiving: next is the seq to deliver next; early holds the messages
	// received out of order, by seq - next - 1 (at most Queue of them);
	// inbox the messages in order, not yet read.
	next  uint32
	early []any
	inbox []any
	w     bits.Writer
	// owe: an ack is owed (messages arrived, copies included, since the
	// last section written); acked is the ack last written.
	owe   bool
	acked uint32

	stats ChannelStats
}

type outMsg struct {
	enc  []byte
	n    int    // bits
	sent uint32 // the tick it was last sent; 0: never
	ever bool
}

// ChannelStats counts what a Channel did.
type ChannelStats struct {
	Sent      int // messages queued by Send
	Acked     int // of them, acknowledged by the other side
	Sends     int // messages written into packets, resends included
	Resends   int // of them, resends
	Received  int // messages delivered in order
	Duplicate int // messages received again (already delivered or held)
	Refused   int // messages received past the window or the inbox's room (resent later)
}

// NewChannel returns a Channel of the messages of u.
func NewChannel(u *bitwire.Union, cfg ChannelConfig) (*Channel, error) {
	if u == nil {
		return nil, errors.New("conn: NewChannel with a nil union")
	}
	if cfg.Queue == 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Resend == 0 {
		cfg.Resend = DefaultResend
	}
	if cfg.Share == 0 {
		cfg.Share = DefaultShare
	}
	if cfg.Queue < 1 || cfg.Resend < 1 || cfg.Share < 8 {
		return nil, fmt.Errorf("conn: channel config %+v: queue and resend at least 1, share at least 8 bytes", cfg)
	}
	return &Channel{u: u, cfg: cfg}, nil
}

// Stats returns the Channel's counters.
func (c *Channel) Stats() ChannelStats { return c.stats }

// Pending returns the number of messages sent and not yet acknowledged.
func (c *Channel) Pending() int { return len(c.out) }

// Send queues msg, a variant of the Channel's union (a struct or a
// pointer to one), encoded now: later changes to it are not sent. Errors:
// ErrQueueFull, ErrMessageTooLarge, and the union's (bitwire.ErrUnknownTag
// for a type that is no variant, the codec's for a value it cannot
// encode); the message is not queued then.
func (c *Channel) Send(msg any) error {
	if len(c.out) >= c.cfg.Queue {
		return fmt.Errorf("%w: %d messages unacknowledged", ErrQueueFull, len(c.out))
	}
	c.w.Reset(nil)
	if err := c.u.Encode(&c.w, msg); err != nil {
		return fmt.Errorf("conn: %w", err)
	}
	n := c.w.Len()
	// The section alone: its presence bit, the ack, a count, the seq.
	if sectionMax(n) > c.cfg.Share*8 {
		return fmt.Errorf("%w: %d bits, share %d bytes", ErrMessageTooLarge, n, c.cfg.Share)
	}
	c.out = append(c.out, outMsg{enc: append([]byte(nil), c.w.Bytes()...), n: n})
	c.nextSeq++
	c.stats.Sent++
	return nil
}

// countMax is the most bits of a section's count (EncodeCount of up to
// 64 messages: a bitlen with a 5-bit prefix).
const countMax = 11

// sectionMax bounds the bits of a section carrying one message of n bits:
// the ack, the count, the message's seq and the message.
func sectionMax(n int) int { return 2*(seqWidth+32) + countMax + n }

// Receive returns the next message delivered in order (a pointer to a new
// value of its variant, as bitwire.Union.Decode returns), or false when
// there is none.
func (c *Channel) Receive() (any, bool) {
	if len(c.inbox) == 0 {
		return nil, false
	}
	m := c.inbox[0]
	c.inbox[0] = nil
	c.inbox = c.inbox[1:]
	return m, true
}

// due reports whether a section is worth writing at tick (a packet
// count): a message to send, or an ack owed.
func (c *Channel) due(tick uint32) bool {
	if c.owe || c.acked != c.next {
		return true
	}
	for i := range c.out {
		if m := &c.out[i]; !m.ever || tick-m.sent >= uint32(c.cfg.Resend) {
			return true
		}
	}
	return false
}

// A channel section: the ack (the seq the writer delivers next, a
// bitlen with a 5-bit prefix), then the count of messages (the union's
// count framing, EncodeCount), then, when there are any, the seq of the
// first (bitlen), and for each later one its gap from the one before less
// one (bitlen with a 3-bit prefix), then the messages (Union.Encode).

// write writes the section at tick (a packet count), taking at most room
// bits.
func (c *Channel) write(w *bits.Writer, tick uint32, room int) error {
	start := w.Len()
	fields.WriteBitlen(w, uint64(c.next), seqWidth)
	c.owe, c.acked = false, c.next
	// Choose the messages due, oldest first, while they fit.
	var pick [64]int
	chosen := pick[:0]
	used := w.Len() - start + countMax
	prev := int64(-1)
	for i := range c.out {
		m := &c.out[i]
		if m.ever && tick-m.sent < uint32(c.cfg.Resend) {
			continue
		}
		seq := c.base + uint32(i)
		var sb int
		if prev < 0 {
			sb = fields.BitlenBits(uint64(seq), seqWidth)
		} else {
			sb = fields.BitlenBits(uint64(int64(seq)-prev-1), 3)
		}
		if used+sb+m.n > room {
			break // in order: a later message must not overtake this one's first send
		}
		used += sb + m.n
		prev = int64(seq)
		chosen = append(chosen, i)
		if len(chosen) == cap(pick) {
			break
		}
	}
	if err := c.u.EncodeCount(w, len(chosen)); err != nil {
		return err
	}
	prev = -1
	for _, i := range chosen {
		seq := int64(c.base) + int64(i)
		if prev < 0 {
			fields.WriteBitlen(w, uint64(seq), seqWidth)
		} else {
			fields.WriteBitlen(w, uint64(seq-prev-1), 3)
		}
		prev = seq
	}
	for _, i := range chosen {
		m := &c.out[i]
		copyBits(w, m.enc, m.n)
		if m.ever {
			c.stats.Resends++
		}
		m.ever, m.sent = true, tick
		c.stats.Sends++
	}
	return nil
}

// read reads a section: takes the ack, then accepts the messages.
func (c *Channel) read(r *bits.Reader) error {
	ack, err := fields.ReadBitlen(r, seqWidth)
	if err != nil {
		return err
	}
	n, err := c.u.DecodeCount(r)
	if err != nil {
		return err
	}
	var seqs [64]uint32
	if n > len(seqs) {
		return fmt.Errorf("conn: %w: %d messages in one section", bitwire.ErrMalformed, n)
	}
	prev := int64(-1)
	for i := range n {
		var v uint64
		if i == 0 {
			v, err = fields.ReadBitlen(r, seqWidth)
		} else {
			v, err = fields.ReadBitlen(r, 3)
			v += uint64(prev) + 1
		}
		if err != nil {
			return err
		}
		if v > uint64(^uint32(0)) {
			return fmt.Errorf("conn: %w: message seq past 2^32", bitwire.ErrMalformed)
		}
		seqs[i], prev = uint32(v), int64(v)
	}
	msgs := make([]any, n)
	for i := range n {
		if msgs[i], err = c.u.Decode(r); err != nil {
			return err
		}
	}
	// The whole section read: now it may change the Channel.
	c.takeAck(uint32(ack))
	c.owe = c.owe || n > 0
	for i := range n {
		c.accept(seqs[i], msgs[i])
	}
	return nil
}

// takeAck drops the messages before ack, which the other side delivered.
// An ack past what was sent is a forgery or a bug: ignored.
func (c *Channel) takeAck(ack uint32) {
	d := ack - c.base
	if int32(d) <= 0 || d > uint32(len(c.out)) {
		return
	}
	clear(c.out[:d])
	c.out = c.out[d:]
	c.base = ack
	c.stats.Acked += int(d)
}

// accept takes one received message.
func (c *Channel) accept(seq uint32, m any) {
	d := seq - c.next
	switch {
	case int32(d) < 0:
		c.stats.Duplicate++
		return
	case int(d) >= c.cfg.Queue || len(c.inbox)+int(d) >= c.cfg.Queue:
		c.stats.Refused++ // not acknowledged: resent later
		return
	}
	for len(c.early) <= int(d) {
		c.early = append(c.early, nil)
	}
	if c.early[d] != nil {
		c.stats.Duplicate++
		return
	}
	c.early[d] = m
	// Deliver the run that starts at next.
	k := 0
	for k < len(c.early) && c.early[k] != nil {
		c.inbox = append(c.inbox, c.early[k])
		k++
	}
	if k > 0 {
		c.next += uint32(k)
		c.stats.Received += k
		rest := copy(c.early, c.early[k:])
		clear(c.early[rest:])
		c.early = c.early[:rest]
	}
}

// copyBits appends the first n bits of src to w.
func copyBits(w *bits.Writer, src []byte, n int) {
	for i := 0; n > 0; i++ {
		k := min(n, 8)
		w.WriteBits(uint64(src[i]), k)
		n -= k
	}
}
