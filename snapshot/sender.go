package snapshot

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Sender encodes the snapshots of one client: each against the newest
// snapshot the client acknowledged that is still in the sender's ring, or
// in full when there is none. Create one per client with NewSender.
type Sender[T any] struct {
	c       *bitwire.Codec[T]
	fp      uint32
	budget  int
	hist    *History[T] // what the receiver rebuilds from each packet sent
	scratch *T          // decoded into, then swapped into hist
	w       bits.Writer
	r       bits.Reader

	sent  bool   // a packet was sent since creation or Reset
	last  uint32 // its tick
	acked bool   // an acknowledgement was taken
	ack   uint32 // the newest acknowledged tick
}

// NewSender returns a Sender of snapshots encoded by c, with the budget
// and history size of opts (DefaultBudget, DefaultHistorySize).
func NewSender[T any](c *bitwire.Codec[T], opts ...Option) (*Sender[T], error) {
	if c == nil {
		return nil, errors.New("snapshot: NewSender with a nil codec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Sender[T]{
		c:       c,
		fp:      Fingerprint32(c.Fingerprint()),
		budget:  cfg.budget,
		hist:    NewHistory(c, cfg.history),
		scratch: new(T),
	}, nil
}

// Budget returns the largest packet, in bytes, the Sender produces.
func (s *Sender[T]) Budget() int { return s.budget }

// Encode appends to dst the packet of the snapshot state at tick and
// returns the extended slice. The packet is a delta against the baseline
// that Baseline reports, or a full snapshot when there is none; it ends on
// a byte boundary and is at most Budget bytes long. The Sender then keeps
// what the receiver will rebuild from it (the quantized state) as a
// possible baseline for later packets; state itself is not retained.
//
// A delta larger than the budget falls back to a full snapshot when that
// fits (the only case in which a full snapshot goes out while an
// acknowledged baseline is in the ring).
//
// Errors leave dst's contents and the Sender as they were: a tick not
// newer than the last one encoded is ErrStaleTick; a packet larger than the
// budget is ErrOverBudget; a state the codec cannot encode is the codec's
// error. Once its buffers have grown, Encode allocates nothing when dst has
// room for the packet plus 8 bytes.
func (s *Sender[T]) Encode(dst []byte, tick uint32, state *T) ([]byte, error) {
	if state == nil {
		return dst, fmt.Errorf("snapshot: Encode of a nil state at tick %d", tick)
	}
	if s.sent && tick <= s.last {
		return dst, fmt.Errorf("%w: sender: tick %d, last sent %d", ErrStaleTick, tick, s.last)
	}
	base, baseTick, delta := s.baseline()
	h := Header{Fingerprint: s.fp, Tick: tick, Delta: delta, Baseline: baseTick}

	start := len(dst)
	defer s.w.ResetAppend(nil) // keep no hold on the caller's buffer
	out, headerBits, err := s.write(dst, h, base, state)
	if err == nil && delta && len(out)-start > s.budget {
		// A delta over the budget: a full snapshot may still fit, and
		// the receiver needs no baseline for it.
		base, delta = nil, false
		h.Delta, h.Baseline = false, 0
		out, headerBits, err = s.write(dst, h, nil, state)
	}
	if err != nil {
		return dst, err
	}
	packet := out[start:]
	if len(packet) > s.budget {
		return dst, fmt.Errorf("%w: %d bytes at tick %d, budget %d", ErrOverBudget, len(packet), tick, s.budget)
	}

	// Keep what the receiver will rebuild, by decoding the packet itself:
	// the sender's baselines are then the receiver's by construction.
	s.r.Reset(packet)
	if err := s.r.Skip(headerBits); err != nil {
		return dst, err
	}
	if delta {
		err = s.c.DecodeDelta(&s.r, base, s.scratch)
	} else {
		err = s.c.Decode(&s.r, s.scratch)
	}
	if err != nil {
		return dst, fmt.Errorf("snapshot: internal: tick %d does not decode: %w", tick, err)
	}
	if s.scratch, err = s.hist.swap(tick, s.scratch); err != nil {
		return dst, err
	}
	s.sent, s.last = true, tick
	return out, nil
}

// write appends the header h and the body (a delta against base when
// h.Delta, else the full state) after dst, and returns the bytes and the
// header's size in bits.
func (s *Sender[T]) write(dst []byte, h Header, base, state *T) ([]byte, int, error) {
	start := len(dst)
	s.w.ResetAppend(dst)
	writeHeader(&s.w, h)
	headerBits := s.w.Len() - start*8
	var err error
	if h.Delta {
		err = s.c.EncodeDelta(&s.w, base, state)
	} else {
		err = s.c.Encode(&s.w, state)
	}
	if err != nil {
		return dst, 0, err
	}
	return s.w.Bytes(), headerBits, nil
}

// baseline returns the snapshot the next packet is encoded against.
func (s *Sender[T]) baseline() (*T, uint32, bool) {
	if !s.acked {
		return nil, 0, false
	}
	v, ok := s.hist.Get(s.ack)
	if !ok {
		return nil, 0, false
	}
	return v, s.ack, true
}

// Baseline returns the tick the next Encode will encode against: the
// newest acknowledged tick while its snapshot is still in the ring. ok is
// false when the next packet will be a full snapshot.
func (s *Sender[T]) Baseline() (tick uint32, ok bool) {
	_, tick, ok = s.baseline()
	return tick, ok
}

// Ack records that the client received the snapshot of tick. Acks of ticks
// that are not in the ring (never sent, or too old to serve as a baseline)
// and acks not newer than the newest one taken are ignored, so
// acknowledgements may arrive late, twice or out of order.
func (s *Sender[T]) Ack(tick uint32) {
	if s.acked && tick <= s.ack {
		return
	}
	if _, ok := s.hist.Get(tick); !ok {
		return
	}
	s.acked, s.ack = true, tick
}

// Acked returns the newest acknowledged tick; ok is false when none was
// taken since creation or Reset.
func (s *Sender[T]) Acked() (tick uint32, ok bool) { return s.ack, s.acked }

// Last returns the tick of the last packet encoded; ok is false when none
// was since creation or Reset.
func (s *Sender[T]) Last() (tick uint32, ok bool) { return s.last, s.sent }

// Reset forgets the snapshots sent and the acknowledgements, as for a new
// connection: the next packet is a full snapshot, with any tick.
func (s *Sender[T]) Reset() {
	s.hist.Reset()
	s.sent, s.last = false, 0
	s.acked, s.ack = false, 0
}
