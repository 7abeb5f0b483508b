package snapshot

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Receiver decodes the snapshot packets of one Sender, keeping a ring of the
// snapshots it decoded to serve as baselines. Create it with NewReceiver.
//
// A Receiver is not safe for concurrent use: call all its methods from one
// goroutine (the one reading the stream), or under one lock.
type Receiver[T any] struct {
	c       *bitwire.Codec[T]
	fp      uint32
	guard   *Integrity
	window  *TickWindow
	hist    *History[T]
	scratch *T // decoded into, then swapped into hist
	r       bits.Reader
	hw      bits.Writer       // the state hash's encoding
	hc      *bitwire.Codec[T] // c without stats or debug sentinels: the hash's codec

	ack   Ack  // what the last Decode asks to send back
	ackOK bool // whether it asks for anything

	frag fragReceiver // blocks being reassembled (fragment.go)
}

// NewReceiver returns a Receiver of snapshots encoded by a codec with the
// same layout as c, with the history size, integrity mode and acceptance
// window of opts (DefaultHistorySize, ModeNone, DefaultMaxAhead,
// DefaultRecoverAfter); it ignores WithBudget and WithStateHash.
func NewReceiver[T any](c *bitwire.Codec[T], opts ...Option) (*Receiver[T], error) {
	if c == nil {
		return nil, errors.New("snapshot: NewReceiver with a nil codec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	guard, err := NewIntegrity(cfg.mode, cfg.key)
	if err != nil {
		return nil, err
	}
	return &Receiver[T]{
		c:     c,
		hc:    c.WithStats(nil).WithDebug(false),
		fp:    Fingerprint32(c.Fingerprint()),
		guard: guard,
		// With a MAC every tick accepted is the sender's: no rewinds.
		window:  NewTickWindow(cfg.maxAhead, cfg.recoverAfter, cfg.mode != ModeMAC),
		hist:    NewHistory(c, cfg.history),
		scratch: new(T),
	}, nil
}

// Decode decodes one packet into out and returns its tick. out receives a
// deep copy of the snapshot: it shares no memory with the receiver, and
// its own slices and pointees are reused. After every call, Ack says what
// to send back to the sender.
//
// On any error, out is left as it was, the returned tick is 0, and the
// Receiver keeps what it held (except after ErrStateMismatch). The checks,
// in order: ErrBadMagic (not a snapshot packet); ErrProtocolMismatch
// (another layout of T, or another integrity mode); ErrIntegrity (the
// trailer does not match); ErrStaleTick (the tick is not newer than the
// newest accepted: a late or duplicated packet); ErrFutureTick (more than
// MaxAhead past it); ErrNoBaseline (a delta against a snapshot this
// receiver does not hold: its ack asks for a full snapshot); the codec's
// decoding errors for truncated or malformed input, such as
// bitwire.ErrUnexpectedEnd; bitwire.ErrTrailingData (bytes or non-zero
// padding after the body); ErrStateMismatch (the rebuilt state differs
// from the packet's state hash: the receiver drops every baseline, since
// one of them is wrong, and its ack asks for a full snapshot). Bad input
// of any kind is an error, never a panic.
//
// A fragment packet (FragmentMagic, Sender.EncodeFragments) is collected:
// ErrIncomplete until its block is whole, which is then decoded as a
// packet (fragment.go has the checks).
//
// A run of packets refused as stale or too far ahead makes the receiver
// re-anchor (see TickWindow); a packet accepted behind the newest tick
// then drops the snapshots of that tick and later ones.
//
// Decode must not run concurrently with any other method of the Receiver.
func (rc *Receiver[T]) Decode(packet []byte, out *T) (tick uint32, err error) {
	rc.ack, rc.ackOK = Ack{}, false
	if out == nil {
		return 0, errors.New("snapshot: Decode into a nil value")
	}
	if IsFragment(packet) {
		return rc.decodeFragment(packet, out)
	}
	defer rc.r.Reset(nil) // keep no hold on the caller's buffer
	// The header is read before the trailer is checked, for its magic,
	// fingerprint and mode: nothing else of it is used before the check.
	rc.r.Reset(packet)
	h, err := readHeader(&rc.r)
	if err != nil {
		return 0, err
	}
	if h.Fingerprint != rc.fp {
		return 0, fmt.Errorf("%w: packet %#08x, receiver %#08x", ErrProtocolMismatch, h.Fingerprint, rc.fp)
	}
	if h.Integrity != rc.guard.Mode() {
		return 0, fmt.Errorf("%w: packet's integrity mode %v, receiver's %v", ErrProtocolMismatch, h.Integrity, rc.guard.Mode())
	}
	body, token, err := rc.guard.Open(packet)
	if err != nil {
		return 0, err
	}
	if err := rc.window.Check(h.Tick); err != nil {
		return 0, err
	}
	rc.r.Reset(body)
	if _, err := readHeader(&rc.r); err != nil {
		return 0, err // the header ran into the trailer
	}
	if h.Delta {
		base, ok := rc.hist.Get(h.Baseline)
		if !ok {
			rc.ack, rc.ackOK = Ack{Tick: h.Tick, Token: token, MissingBaseline: true}, true
			return 0, fmt.Errorf("%w: tick %d is a delta against %d", ErrNoBaseline, h.Tick, h.Baseline)
		}
		var older *T
		if rc.c.Predicts() {
			if older, err = rc.predictedFrom(h, token); err != nil {
				return 0, err
			}
		}
		err = rc.c.DecodePredicted(&rc.r, older, base, rc.scratch)
	} else {
		err = rc.c.Decode(&rc.r, rc.scratch)
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot: tick %d: %w", h.Tick, err)
	}
	var sum uint64
	if h.Hashed {
		if sum, err = rc.r.ReadBits(hashBits); err != nil {
			return 0, fmt.Errorf("snapshot: tick %d: state hash: %w", h.Tick, err)
		}
	}
	if !rc.r.CheckPadding() {
		return 0, fmt.Errorf("snapshot: tick %d: %w (%d bits left)", h.Tick, bitwire.ErrTrailingData, rc.r.Remaining())
	}
	if h.Hashed {
		if err := rc.checkStateHash(h, token, uint32(sum)); err != nil {
			return 0, err
		}
	}
	// Commit: only a snapshot decoded whole reaches the ring and out.
	if rc.window.Accept(h.Tick) {
		rc.hist.dropFrom(h.Tick)
	}
	next, err := rc.hist.swap(h.Tick, token, rc.scratch)
	if err != nil {
		return 0, err
	}
	rc.c.Copy(out, rc.scratch)
	rc.scratch = next
	rc.ack, rc.ackOK = Ack{Tick: h.Tick, Token: token}, true
	return h.Tick, nil
}

// predictedFrom reads the prediction prefix of a delta with header h and
// returns the older snapshot the delta is predicted from, nil when it is
// not predicted. When the receiver does not hold that snapshot, it sets
// the ack to ask for a full snapshot.
func (rc *Receiver[T]) predictedFrom(h Header, token uint32) (*T, error) {
	d, err := readPrediction(&rc.r, h.Baseline)
	if err != nil {
		return nil, fmt.Errorf("snapshot: tick %d: %w", h.Tick, err)
	}
	if d == 0 {
		return nil, nil
	}
	older, ok := rc.hist.Get(h.Baseline - d)
	if !ok {
		rc.ack, rc.ackOK = Ack{Tick: h.Tick, Token: token, MissingBaseline: true}, true
		return nil, fmt.Errorf("%w: tick %d is a delta against %d predicted from %d", ErrNoBaseline, h.Tick, h.Baseline, h.Baseline-d)
	}
	return older, nil
}

// checkStateHash compares the hash of the state decoded into rc.scratch
// with sum, the one of the packet with header h. On a mismatch it drops
// every baseline and sets the ack to ask for a full snapshot.
func (rc *Receiver[T]) checkStateHash(h Header, token, sum uint32) error {
	got, err := StateHash(rc.hc, &rc.hw, rc.scratch)
	if err != nil {
		return fmt.Errorf("snapshot: tick %d: state hash: %w", h.Tick, err)
	}
	if got != sum {
		// The packet passed every other check, so the baseline it was
		// rebuilt from is wrong (or, without integrity, the packet):
		// no baseline can be trusted any more.
		rc.hist.Reset()
		rc.ack, rc.ackOK = Ack{Tick: h.Tick, Token: token, StateMismatch: true}, true
		return fmt.Errorf("%w: tick %d: rebuilt %#08x, sender's %#08x", ErrStateMismatch, h.Tick, got, sum)
	}
	return nil
}

// Ack returns the acknowledgement the last Decode calls for, to be sent
// to the sender's HandleAck: after a packet was accepted, its tick and
// token; after ErrNoBaseline or ErrStateMismatch, the packet's tick and
// token with a request for a full snapshot. ok is false after any other
// error (there is nothing to acknowledge: the packet may not even be the
// sender's). Ack must not run concurrently with any other method of the
// Receiver.
func (rc *Receiver[T]) Ack() (a Ack, ok bool) { return rc.ack, rc.ackOK }

// Newest returns the newest tick accepted; ok is false when none was since
// creation or Reset. It must not run concurrently with any other method of
// the Receiver.
func (rc *Receiver[T]) Newest() (tick uint32, ok bool) { return rc.window.Newest() }

// Mode returns the Receiver's integrity mode. It must not run concurrently
// with any other method of the Receiver.
func (rc *Receiver[T]) Mode() Mode { return rc.guard.Mode() }

// Reset forgets every snapshot received, as for a new connection: the
// receiver then accepts any tick, but only a full snapshot until it holds a
// baseline again. It drops the block it was collecting too (whose tick
// would refuse the new connection's older ones), keeping ReassemblyStats
// and SetMaxBlock. It must not run concurrently with any other method of
// the Receiver.
func (rc *Receiver[T]) Reset() {
	rc.hist.Reset()
	rc.window.Reset()
	rc.ack, rc.ackOK = Ack{}, false
	rc.frag.active = false
}
