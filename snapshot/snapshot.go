// Package snapshot sends a game's world state to each client as a stream of
// snapshots that survives packet loss: the Quake 3 model.
//
// The server numbers its snapshots by tick. For every client it keeps a
// Sender, which remembers the last N snapshots it sent (a History) and the
// newest tick the client acknowledged. Each new snapshot is encoded as a
// delta against that acknowledged snapshot when it is still in the ring, and
// in full otherwise. The client's Receiver keeps its own ring of the
// snapshots it decoded, rebuilds each delta from the baseline the packet
// names, and after each Decode the client sends back the Ack that
// Receiver.Ack returns, over whatever channel it likes (typically inside
// its own input packets), for the server's Sender.HandleAck. Lost, late or
// duplicated packets and acknowledgements cost bandwidth, never
// correctness.
//
// A packet is a small header (magic number, a 32-bit form of the codec's
// fingerprint, the tick, the integrity mode, the baseline tick) followed
// by the body written by bitwire's Codec.Encode or Codec.EncodeDelta, now
// and then a hash of the whole state, and a trailer: none, a CRC32C
// (WithChecksum) or a truncated HMAC-SHA256 under a per-connection secret
// (WithMAC). docs/wire-format.md gives its bits, docs/security.md the
// threats and what each mode guards against. A sender never produces a
// packet over its budget (1200 bytes unless configured): it returns
// ErrOverBudget instead.
//
// Against bad packets and acks, whatever the mode:
//   - a receiver accepts a tick at most MaxAhead past the newest it holds
//     (WithMaxAhead), and re-anchors by itself after a run of packets it
//     refused as stale or too far ahead (WithRecoverAfter);
//   - every ack carries a token derived from the packet it acknowledges;
//     HandleAck ignores an ack whose token does not match the packet sent,
//     so neither a spoofed ack nor the ack of a forged or corrupted packet
//     makes the sender use a baseline the receiver does not hold as sent;
//   - a receiver that lacks a delta's baseline, or whose rebuilt state does
//     not match the sender's periodic state hash (WithStateHash), says so
//     in its ack, and the sender sends a full snapshot next.
//
// Ticks are plain uint32 values compared without wrap-around: at 60 ticks a
// second they last more than two years. They must increase on the sender;
// a receiver accepts only ticks newer than the newest it accepted.
//
// The integrity modes, the trailers (Integrity) and the acceptance rule
// (TickWindow) are package integrity's, which package replicate uses too;
// this package's names for them are aliases of the same types and values.
//
// Concurrency: Senders, Receivers, Histories, Integrity and TickWindows are
// not safe for concurrent use; the Codec they share is. A server that reads
// acks on one goroutine and encodes on another passes the acks through a
// channel to the goroutine that owns the Sender (see the package example).
package snapshot

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire/integrity"
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
	// header and a state hash, rounded up to whole bytes, a MAC trailer,
	// plus one byte of body.
	MinBudget = (maxHeaderBits+hashBits+7)/8 + MACSize + 1
	// DefaultTickRate is the tick rate the default MaxAhead assumes.
	DefaultTickRate = 60
	// AheadSeconds is how far ahead, in seconds of ticks, a receiver
	// accepts a tick: DefaultMaxAhead at DefaultTickRate, or WithTickRate.
	// A few seconds: longer than any reordering, short enough that a bad
	// tick inside the window costs little.
	AheadSeconds = 5
	// DefaultMaxAhead is the largest step a receiver accepts from its
	// newest tick to the next unless WithMaxAhead or WithTickRate says
	// otherwise: 5 s at 60 ticks a second.
	DefaultMaxAhead = AheadSeconds * DefaultTickRate
	// DefaultRecoverAfter is the length of a run of refused packets after
	// which a receiver re-anchors (see TickWindow).
	DefaultRecoverAfter = 8
	// ReorderTicks is integrity.ReorderTicks: how far a stale packet may
	// lag the newest accepted tick and still be taken for reordering.
	ReorderTicks = integrity.ReorderTicks
	// DefaultHashEvery is how often a sender puts a state hash in its
	// packets unless WithStateHash says otherwise: every 16th packet.
	DefaultHashEvery = 16
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
	ErrStaleTick = integrity.ErrStaleTick
	// ErrOverBudget: the packet would be larger than the sender's budget.
	// Nothing was sent or recorded; send less state (or raise the budget).
	ErrOverBudget = errors.New("snapshot: packet over budget")
	// ErrFutureTick: a receiver got a tick more than MaxAhead past the
	// newest it accepted (see TickWindow).
	ErrFutureTick = integrity.ErrFutureTick
	// ErrIntegrity: the packet's checksum or MAC trailer does not match its
	// contents: corrupted, forged, or sealed with another secret.
	ErrIntegrity = integrity.ErrIntegrity
	// ErrStateMismatch: the state a receiver rebuilt differs from the state
	// hash the sender put in the packet. The receiver kept nothing and
	// dropped its baselines; its ack asks for a full snapshot.
	ErrStateMismatch = errors.New("snapshot: state hash mismatch")
	// ErrBadAck: Sender.HandleAck was given an ack that does not match a
	// packet the sender sent (a spoofed ack, or the ack of a forged or
	// corrupted packet). The sender ignored it.
	ErrBadAck = integrity.ErrBadAck
)

// Option configures a Sender or a Receiver.
type Option func(*config) error

type config struct {
	budget       int
	history      int
	mode         Mode
	key          []byte
	maxAhead     uint32
	recoverAfter int
	hashEvery    int
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

// WithChecksum ends every packet with a CRC32C (ModeChecksum). Both peers
// must use it: a receiver refuses the packets of a sender in another mode
// with ErrProtocolMismatch. Without it (or a MAC), a corrupted packet is
// often accepted as a wrong state: 318 of 1,200 single-bit flips of
// genuine packets were, 26.5% (docs/security.md, "Choosing a mode").
func WithChecksum() Option {
	return func(c *config) error {
		c.mode, c.key = ModeChecksum, nil
		return nil
	}
}

// WithMAC ends every packet with an HMAC-SHA256 under key, truncated to
// MACSize bytes (ModeMAC). key is the connection's secret, at least
// MinKeySize bytes, which the application agreed with the peer (this
// package does no key exchange); it is copied. Both peers must use it with
// the same key.
func WithMAC(key []byte) Option {
	return func(c *config) error {
		if len(key) < MinKeySize {
			return fmt.Errorf("snapshot: MAC key of %d bytes, want at least %d", len(key), MinKeySize)
		}
		c.mode, c.key = ModeMAC, append([]byte(nil), key...)
		return nil
	}
}

// WithMaxAhead sets how many ticks past its newest a receiver accepts
// (DefaultMaxAhead unless set), at least 1. A Sender ignores it.
func WithMaxAhead(ticks uint32) Option {
	return func(c *config) error {
		if ticks < 1 {
			return errors.New("snapshot: max ahead of 0 ticks")
		}
		c.maxAhead = ticks
		return nil
	}
}

// WithTickRate sets MaxAhead from the stream's tick rate: AheadSeconds
// seconds of ticks. A Sender ignores it.
func WithTickRate(hz int) Option {
	return func(c *config) error {
		if hz < 1 || hz > 100000 {
			return fmt.Errorf("snapshot: tick rate %d outside 1..100000", hz)
		}
		c.maxAhead = uint32(hz * AheadSeconds)
		return nil
	}
}

// WithRecoverAfter sets the run of refused packets after which a receiver
// re-anchors (DefaultRecoverAfter unless set; 0 never re-anchors, which
// leaves a receiver that accepted a bad tick refusing the honest stream
// until the sender's ticks pass it). A Sender ignores it.
func WithRecoverAfter(packets int) Option {
	return func(c *config) error {
		if packets < 0 || packets > MaxHistorySize {
			return fmt.Errorf("snapshot: recover after %d packets, outside 0..%d", packets, MaxHistorySize)
		}
		c.recoverAfter = packets
		return nil
	}
}

// WithStateHash makes a sender put a 32-bit hash of the whole state in
// every packet-th packet (DefaultHashEvery unless set; 0 never): a
// receiver whose rebuilt state differs refuses the packet with
// ErrStateMismatch and asks for a full snapshot. It bounds how long a
// wrong state can last, whatever got it through. A hash costs 4 bytes and
// a full encoding of the state on each side. A Receiver ignores it (it
// checks every hash it gets).
func WithStateHash(packets int) Option {
	return func(c *config) error {
		if packets < 0 {
			return fmt.Errorf("snapshot: state hash every %d packets", packets)
		}
		c.hashEvery = packets
		return nil
	}
}

func newConfig(opts []Option) (config, error) {
	c := config{budget: DefaultBudget, history: DefaultHistorySize, maxAhead: DefaultMaxAhead,
		recoverAfter: DefaultRecoverAfter, hashEvery: DefaultHashEvery}
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
