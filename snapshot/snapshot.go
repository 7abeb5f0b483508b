// Package snapshot sends a game's world state to each client as a stream of
// snapshots that survives packet loss: the Quake 3 model.
//
// The server numbers its snapshots by tick. For every client it keeps a
// Sender, which remembers the last N snapshots it sent (a History) and the
// newest tick the client acknowledged. Each new snapshot is encoded as a
// delta against that acknowledged snapshot when it is still in the ring, and
// in full otherwise. The client's Receiver keeps its own ring of the
// snapshots it decoded, rebuilds each delta from the baseline the packet
// names, and the client acknowledges the tick Decode returns, over whatever
// channel it likes (typically inside its own input packets). Lost, late or
// duplicated packets and acknowledgements cost bandwidth, never
// correctness: the receiver only ever holds states the server sent.
//
// A packet is a small header (magic number, a 32-bit form of the codec's
// fingerprint, the tick, the baseline tick) followed by the body written by
// bitwire's Codec.Encode or Codec.EncodeDelta; docs/wire-format.md gives
// its bits. A sender never produces a packet over its budget (1200 bytes
// unless configured): it returns ErrOverBudget instead.
//
// Ticks are plain uint32 values compared without wrap-around: at 60 ticks a
// second they last more than two years. They must increase on the sender;
// a receiver accepts only ticks newer than the newest it accepted.
//
// Senders, Receivers and Histories are not safe for concurrent use; the
// Codec they share is.
package snapshot

import (
	"errors"
	"fmt"
)

// Defaults of the options.
const (
	// DefaultBudget is the largest packet a Sender produces unless
	// WithBudget says otherwise: the payload of one UDP datagram that is not
	// fragmented on common paths.
	DefaultBudget = 1200
	// DefaultHistorySize is the number of snapshots a Sender or Receiver
	// keeps unless WithHistorySize says otherwise: at 60 ticks a second, an
	// acknowledgement may take about half a second before the sender falls
	// back to a full snapshot.
	DefaultHistorySize = 32
	// MaxHistorySize bounds WithHistorySize.
	MaxHistorySize = 1 << 16
	// MinBudget is the smallest budget WithBudget accepts: the largest
	// header, rounded up to whole bytes, plus one byte of body.
	MinBudget = (maxHeaderBits+7)/8 + 1
)

// The errors of this package, tested with errors.Is. They arrive wrapped
// with details (ticks, sizes). Decoding errors of the body are bitwire's
// (bitwire.ErrUnexpectedEnd, bitwire.ErrMalformed, ... in a
// *bitwire.FieldError).
var (
	// ErrBadMagic: the packet does not start with Magic; it is not a
	// snapshot packet, or one of another version of this header.
	ErrBadMagic = errors.New("snapshot: bad magic number")
	// ErrProtocolMismatch: the packet was encoded by a codec whose layout
	// (fingerprint) differs from the receiver's: the peers run different
	// versions of the state type.
	ErrProtocolMismatch = errors.New("snapshot: protocol mismatch: codec fingerprint differs")
	// ErrNoBaseline: the packet is a delta against a tick the receiver does
	// not hold (never received, or gone from its ring). The receiver keeps
	// its state; the sender falls back to a full snapshot once that baseline
	// leaves its own ring.
	ErrNoBaseline = errors.New("snapshot: baseline not in history")
	// ErrStaleTick: a receiver got a tick not newer than the newest it
	// accepted (a late or duplicated packet), a sender was asked to encode
	// a tick not newer than the last it sent, or a History was given a tick
	// not newer than its newest.
	ErrStaleTick = errors.New("snapshot: stale or duplicate tick")
	// ErrOverBudget: the packet would be larger than the sender's budget.
	// Nothing was sent or recorded; send less state (or raise the budget).
	ErrOverBudget = errors.New("snapshot: packet over budget")
)

// Option configures a Sender or a Receiver.
type Option func(*config) error

type config struct {
	budget  int
	history int
}

// WithBudget sets the largest packet, in bytes, a Sender may produce
// (DefaultBudget unless set); at least MinBudget. A Receiver ignores it.
func WithBudget(bytes int) Option {
	return func(c *config) error {
		if bytes < MinBudget {
			return fmt.Errorf("snapshot: budget %d bytes, under the minimum %d", bytes, MinBudget)
		}
		c.budget = bytes
		return nil
	}
}

// WithHistorySize sets the number of snapshots kept as baselines
// (DefaultHistorySize unless set), 1..MaxHistorySize. A receiver's ring
// should be at least as large as its sender's: then every baseline the
// sender picks is still held by the receiver.
func WithHistorySize(n int) Option {
	return func(c *config) error {
		if n < 1 || n > MaxHistorySize {
			return fmt.Errorf("snapshot: history size %d outside 1..%d", n, MaxHistorySize)
		}
		c.history = n
		return nil
	}
}

func newConfig(opts []Option) (config, error) {
	c := config{budget: DefaultBudget, history: DefaultHistorySize}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}
