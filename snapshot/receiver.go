package snapshot

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Receiver decodes the snapshot packets of one Sender, keeping a ring of the
// snapshots it decoded to serve as baselines. Create it with NewReceiver.
type Receiver[T any] struct {
	c       *bitwire.Codec[T]
	fp      uint32
	hist    *History[T]
	scratch *T // decoded into, then swapped into hist
	r       bits.Reader

	accepted bool   // a packet was accepted since creation or Reset
	newest   uint32 // the newest accepted tick
}

// NewReceiver returns a Receiver of snapshots encoded by a codec with the
// same layout as c, keeping the history size of opts (DefaultHistorySize);
// it ignores WithBudget.
func NewReceiver[T any](c *bitwire.Codec[T], opts ...Option) (*Receiver[T], error) {
	if c == nil {
		return nil, errors.New("snapshot: NewReceiver with a nil codec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Receiver[T]{
		c:       c,
		fp:      Fingerprint32(c.Fingerprint()),
		hist:    NewHistory(c, cfg.history),
		scratch: new(T),
	}, nil
}

// Decode decodes one packet into out and returns its tick, which the caller
// should acknowledge to the sender (see Sender.Ack). out receives a deep
// copy of the snapshot: it shares no memory with the receiver, and its own
// slices and pointees are reused.
//
// On any error, out and the Receiver are left exactly as they were, and the
// returned tick is 0. The errors: ErrBadMagic (not a snapshot packet),
// ErrProtocolMismatch (another layout of T), ErrStaleTick (the tick is not
// newer than the newest accepted: a late or duplicated packet),
// ErrNoBaseline (a delta against a snapshot this receiver does not hold),
// bitwire.ErrTrailingData (bytes or non-zero padding after the body) and
// the codec's decoding errors for truncated or malformed input, such as
// bitwire.ErrUnexpectedEnd. Bad input of any kind is an error, never a
// panic.
func (rc *Receiver[T]) Decode(packet []byte, out *T) (tick uint32, err error) {
	if out == nil {
		return 0, errors.New("snapshot: Decode into a nil value")
	}
	rc.r.Reset(packet)
	defer rc.r.Reset(nil) // keep no hold on the caller's buffer
	h, err := readHeader(&rc.r)
	if err != nil {
		return 0, err
	}
	if h.Fingerprint != rc.fp {
		return 0, fmt.Errorf("%w: packet %#08x, receiver %#08x", ErrProtocolMismatch, h.Fingerprint, rc.fp)
	}
	if rc.accepted && h.Tick <= rc.newest {
		return 0, fmt.Errorf("%w: tick %d, newest accepted %d", ErrStaleTick, h.Tick, rc.newest)
	}
	if h.Delta {
		base, ok := rc.hist.Get(h.Baseline)
		if !ok {
			return 0, fmt.Errorf("%w: tick %d is a delta against %d", ErrNoBaseline, h.Tick, h.Baseline)
		}
		err = rc.c.DecodeDelta(&rc.r, base, rc.scratch)
	} else {
		err = rc.c.Decode(&rc.r, rc.scratch)
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot: tick %d: %w", h.Tick, err)
	}
	if !rc.r.CheckPadding() {
		return 0, fmt.Errorf("snapshot: tick %d: %w (%d bits left)", h.Tick, bitwire.ErrTrailingData, rc.r.Remaining())
	}
	// Commit: only a snapshot decoded whole reaches the ring and out.
	next, err := rc.hist.swap(h.Tick, rc.scratch)
	if err != nil {
		return 0, err
	}
	rc.c.Copy(out, rc.scratch)
	rc.scratch = next
	rc.accepted, rc.newest = true, h.Tick
	return h.Tick, nil
}

// Newest returns the newest tick accepted; ok is false when none was since
// creation or Reset.
func (rc *Receiver[T]) Newest() (tick uint32, ok bool) { return rc.newest, rc.accepted }

// Reset forgets every snapshot received, as for a new connection: the
// receiver then accepts any tick, but only a full snapshot until it holds a
// baseline again.
func (rc *Receiver[T]) Reset() {
	rc.hist.Reset()
	rc.accepted, rc.newest = false, 0
}
