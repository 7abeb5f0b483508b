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
//
// A Sender is not safe for concurrent use: every method, HandleAck and Ack
// included, must be called from the goroutine that calls Encode (or under
// one lock). A server that reads acks on another goroutine passes them to
// that one through a channel.
type Sender[T any] struct {
	c         *bitwire.Codec[T]
	fp        uint32
	budget    int
	guard     *Integrity
	hashEvery int
	hist      *History[T] // what the receiver rebuilds from each packet sent
	scratch   *T          // decoded into, then swapped into hist
	w         bits.Writer
	hw        bits.Writer       // the state hash's encoding
	hc        *bitwire.Codec[T] // c without stats or debug sentinels: the hash's codec
	r         bits.Reader

	sent  bool   // a packet was sent since creation or Reset
	last  uint32 // its tick
	count int    // packets sent since creation or Reset
	acked bool   // an acknowledgement was taken
	ack   uint32 // the newest acknowledged tick
	// floor: acks of ticks up to floor are ignored. A receiver that asked
	// for a full snapshot may no longer hold what it acknowledged before.
	floor    uint32
	hasFloor bool

	overBudget int // Encode calls refused with ErrOverBudget (OverBudget)

	frag fragSender // EncodeFragments (fragment.go)
}

// NewSender returns a Sender of snapshots encoded by c, with the budget,
// history size, integrity mode and state-hash period of opts
// (DefaultBudget, DefaultHistorySize, ModeNone, DefaultHashEvery).
func NewSender[T any](c *bitwire.Codec[T], opts ...Option) (*Sender[T], error) {
	if c == nil {
		return nil, errors.New("snapshot: NewSender with a nil codec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	guard, err := NewIntegrity(cfg.mode, cfg.key)
	if err != nil {
		return nil, err
	}
	return &Sender[T]{
		c:         c,
		hc:        c.WithStats(nil).WithDebug(false),
		fp:        Fingerprint32(c.Fingerprint()),
		budget:    cfg.budget,
		guard:     guard,
		hashEvery: cfg.hashEvery,
		hist:      NewHistory(c, cfg.history),
		scratch:   new(T),
	}, nil
}

// Budget returns the largest packet, in bytes, the Sender produces. Like
// every method of a Sender, it must not run concurrently with another.
func (s *Sender[T]) Budget() int { return s.budget }

// Mode returns the Sender's integrity mode. Like every method of a
// Sender, it must not run concurrently with another.
func (s *Sender[T]) Mode() Mode { return s.guard.Mode() }

// Encode appends to dst the packet of the snapshot state at tick and
// returns the extended slice. The packet is a delta against the baseline
// that Baseline reports, or a full snapshot when there is none; it is at
// most Budget bytes long, trailer included. Every DefaultHashEvery-th
// packet (WithStateHash) also carries the hash of the whole state. The
// Sender then keeps what the receiver will rebuild from it (the quantized
// state) and the packet's ack token as a possible baseline for later
// packets; state itself is not retained.
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
//
// Encode must not run concurrently with any other method of the Sender.
func (s *Sender[T]) Encode(dst []byte, tick uint32, state *T) ([]byte, error) {
	if state == nil {
		return dst, fmt.Errorf("snapshot: Encode of a nil state at tick %d", tick)
	}
	if s.sent && tick <= s.last {
		return dst, fmt.Errorf("%w: sender: tick %d, last sent %d", ErrStaleTick, tick, s.last)
	}
	base, baseTick, delta := s.baseline()
	hashed := s.hashEvery > 0 && s.count%s.hashEvery == s.hashEvery-1
	h := Header{Fingerprint: s.fp, Tick: tick, Integrity: s.guard.Mode(), Hashed: hashed, Delta: delta, Baseline: baseTick}
	var pr prediction[T]
	if delta && s.c.Predicts() {
		pr = s.prediction(baseTick, tick)
	}

	start := len(dst)
	defer s.w.ResetAppend(nil) // keep no hold on the caller's buffer
	out, headerBits, err := s.write(dst, h, pr, base, state)
	if err == nil && delta && s.size(start, hashed) > s.budget {
		// A delta over the budget: a full snapshot may still fit, and
		// the receiver needs no baseline for it.
		base, delta, pr = nil, false, prediction[T]{}
		h.Delta, h.Baseline = false, 0
		out, headerBits, err = s.write(dst, h, pr, nil, state)
	}
	if err != nil {
		return dst, err
	}
	if n := s.size(start, hashed); n > s.budget {
		s.overBudget++
		return dst, fmt.Errorf("%w: %d bytes at tick %d, budget %d", ErrOverBudget, n, tick, s.budget)
	}

	// Keep what the receiver will rebuild, by decoding the packet itself:
	// the sender's baselines are then the receiver's by construction.
	s.r.Reset(out[start:])
	if err := s.r.Skip(headerBits); err != nil {
		return dst, err
	}
	if delta {
		err = s.c.DecodePredicted(&s.r, pr.older, base, s.scratch)
	} else {
		err = s.c.Decode(&s.r, s.scratch)
	}
	if errors.Is(err, bitwire.ErrTooLong) {
		// Over the decoder's allocation budget: a receiver with the same
		// limits would refuse the packet too.
		return dst, fmt.Errorf("snapshot: tick %d would not decode within the allocation budget (raise Limits.MaxAllocPerByte on both ends for types much larger in memory than on the wire): %w", tick, err)
	}
	if err != nil {
		return dst, fmt.Errorf("snapshot: internal: tick %d does not decode: %w", tick, err)
	}
	if hashed {
		sum, err := StateHash(s.hc, &s.hw, s.scratch)
		if err != nil {
			return dst, fmt.Errorf("snapshot: internal: tick %d: state hash: %w", tick, err)
		}
		s.w.WriteBits(uint64(sum), hashBits)
		out = s.w.Bytes()
	}
	out, token := s.guard.Seal(out, start)
	if s.scratch, err = s.hist.swap(tick, token, s.scratch); err != nil {
		return dst, err
	}
	s.sent, s.last = true, tick
	s.count++
	return out, nil
}

// size returns the size in bytes of the packet being written after
// dst[:start], with its state hash when hashed and its trailer.
func (s *Sender[T]) size(start int, hashed bool) int {
	n := s.w.Len() - start*8
	if hashed {
		n += hashBits
	}
	return (n+7)/8 + s.guard.Overhead()
}

// write appends the header h and the body (a delta against base when
// h.Delta, else the full state) after dst, and returns the bytes and the
// size in bits of what precedes the codec's message: the header, and a
// delta's prediction prefix when the codec predicts. s.w holds the bits,
// for more to follow.
func (s *Sender[T]) write(dst []byte, h Header, pr prediction[T], base, state *T) ([]byte, int, error) {
	start := len(dst)
	s.w.ResetAppend(dst)
	writeHeader(&s.w, h)
	if h.Delta && s.c.Predicts() {
		writePrediction(&s.w, pr.distance)
	}
	headerBits := s.w.Len() - start*8
	var err error
	if h.Delta {
		err = s.c.EncodePredicted(&s.w, pr.older, base, state)
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

// prediction is the older baseline of a delta of a codec that predicts:
// the snapshot distance ticks before the baseline, or none (distance 0,
// older nil).
type prediction[T any] struct {
	older    *T
	distance uint32
}

// prediction returns the older baseline for a delta of tick against
// baseTick: the acknowledged snapshot before baseTick whose distance from
// it is nearest to tick-baseTick, so that base + (base - older) follows a
// line through both in time (exactly when the two distances are equal).
// One at twice that distance or more would predict worse than none, for a
// value moving at constant velocity: then there is none.
func (s *Sender[T]) prediction(baseTick, tick uint32) prediction[T] {
	older, v, ok := s.hist.ackedBefore(baseTick, tick-baseTick)
	if !ok {
		return prediction[T]{}
	}
	return prediction[T]{older: v, distance: baseTick - older}
}

// Baseline returns the tick the next Encode will encode against: the
// newest acknowledged tick while its snapshot is still in the ring. ok is
// false when the next packet will be a full snapshot. It must not run
// concurrently with any other method of the Sender.
func (s *Sender[T]) Baseline() (tick uint32, ok bool) {
	_, tick, ok = s.baseline()
	return tick, ok
}

// HandleAck takes an acknowledgement from the network: the Ack a
// Receiver returned for one of this Sender's packets. It checks the ack's
// token against the packet the Sender sent at that tick and returns
// ErrBadAck, changing nothing, when it does not match or when no packet
// of that tick is in the ring (a spoofed ack, or the ack of a forged or
// corrupted packet; such acks are safe to count and drop).
//
// A matching ack of a packet the receiver decoded makes its tick the
// baseline of the next packets when it is newer than the newest one taken
// (older and repeated acks change nothing). A matching ack that asks for
// a full snapshot (MissingBaseline, StateMismatch) drops every
// acknowledgement: the next packet is full, and acks of the ticks sent so
// far are ignored from then on, since the receiver may have dropped what
// they acknowledged.
//
// HandleAck must not run concurrently with any other method of the Sender:
// call it from the goroutine that calls Encode, for example after draining
// a channel that the goroutine reading the network fills.
func (s *Sender[T]) HandleAck(a Ack) error {
	if s.hasFloor && a.Tick <= s.floor {
		return nil // from before the last fallback
	}
	token, ok := s.hist.token(a.Tick)
	if !ok {
		if oldest, any := s.hist.Oldest(); any && a.Tick < oldest {
			return nil // an old ack, late: harmless
		}
		return fmt.Errorf("%w: tick %d is not in the sender's ring", ErrBadAck, a.Tick)
	}
	if token != a.Token {
		// The expected token stays out of the message: it is what a
		// spoofer needs.
		return fmt.Errorf("%w: tick %d: wrong token", ErrBadAck, a.Tick)
	}
	if a.NeedsFull() {
		s.acked, s.ack = false, 0
		s.floor, s.hasFloor = s.last, true
		s.hist.clearAcked()
		return nil
	}
	s.take(a.Tick)
	return nil
}

// Ack records that the client received the snapshot of tick, trusting the
// caller: it checks no token. Use it only for acknowledgements that cannot
// be spoofed (a reliable authenticated channel, tests); acks from the
// network go to HandleAck. Acks of ticks that are not in the ring (never
// sent, or too old to serve as a baseline) and acks not newer than the
// newest one taken are ignored, so acknowledgements may arrive late, twice
// or out of order.
//
// Ack must not run concurrently with any other method of the Sender.
func (s *Sender[T]) Ack(tick uint32) {
	if s.hasFloor && tick <= s.floor {
		return
	}
	if _, ok := s.hist.Get(tick); !ok {
		return
	}
	s.take(tick)
}

// take records the acknowledgement of tick, which is in the ring (an older
// baseline for predictions, prediction.go), and makes it the newest
// acknowledged tick when it is newer.
func (s *Sender[T]) take(tick uint32) {
	s.hist.markAcked(tick)
	if s.acked && tick <= s.ack {
		return
	}
	s.acked, s.ack = true, tick
}

// Acked returns the newest acknowledged tick; ok is false when none was
// taken since creation, Reset or a request for a full snapshot. It must
// not run concurrently with any other method of the Sender.
func (s *Sender[T]) Acked() (tick uint32, ok bool) { return s.ack, s.acked }

// Last returns the tick of the last packet encoded; ok is false when none
// was since creation or Reset. It must not run concurrently with any other
// method of the Sender.
func (s *Sender[T]) Last() (tick uint32, ok bool) { return s.last, s.sent }

// Reset forgets the snapshots sent and the acknowledgements, as for a new
// connection: the next packet is a full snapshot, with any tick. A
// receiver takes ticks that start again from a lower number only after its
// own Reset (or, without a MAC, after a run of them: see TickWindow). It
// must not run concurrently with any other method of the Sender.
func (s *Sender[T]) Reset() {
	s.hist.Reset()
	s.sent, s.last, s.count = false, 0, 0
	s.acked, s.ack = false, 0
	s.floor, s.hasFloor = 0, false
}
