package conn

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Input defaults and limits.
const (
	// DefaultRedundancy is how many of the newest inputs each client
	// packet carries: a lost packet's inputs arrive in the next ones.
	DefaultRedundancy = 3
	// MaxRedundancy bounds it.
	MaxRedundancy = 16
	// DefaultInputBuffer is the jitter buffer of an InputQueue, in ticks:
	// the game consumes the first input that many ticks after it arrives,
	// so that later inputs arriving up to that much late are still on time.
	DefaultInputBuffer = 2
	// inputWindow bounds how far ahead of the one the game consumes next
	// an InputQueue keeps inputs.
	inputWindow = 64
	// reanchorAfter is the run of packets with inputs far from the tick
	// played next after which an InputQueue anchors again.
	reanchorAfter = 8
)

// InputSender is the client's side of input commands: it keeps the newest
// inputs, each stamped with the tick it is for, and writes the newest
// Redundancy of those the server has not consumed into every packet. An
// input is a value of a tagged struct I, coded by the codec: the newest in
// full, each older one as a delta against the one after it (consecutive
// inputs differ little, so an unchanged one costs a bit per field).
// Create it with NewInputSender.
type InputSender[I any] struct {
	c     *bitwire.Codec[I]
	n     int
	ring  []stamped[I] // the newest n, oldest first once full at head
	head  int
	count int
	last  uint32
	acked uint32 // the newest stamp the server consumed
	has   bool   // acked is set
	stats InputStats
}

type stamped[I any] struct {
	tick uint32
	in   I
}

// NewInputSender returns an InputSender of inputs coded by c that carries
// the newest redundancy inputs in each packet (DefaultRedundancy when 0,
// at most MaxRedundancy).
func NewInputSender[I any](c *bitwire.Codec[I], redundancy int) (*InputSender[I], error) {
	if c == nil {
		return nil, errors.New("conn: NewInputSender with a nil codec")
	}
	if redundancy == 0 {
		redundancy = DefaultRedundancy
	}
	if redundancy < 1 || redundancy > MaxRedundancy {
		return nil, fmt.Errorf("conn: redundancy %d outside 1..%d", redundancy, MaxRedundancy)
	}
	return &InputSender[I]{c: c, n: redundancy, ring: make([]stamped[I], redundancy)}, nil
}

// Push adds the input for tick, which must be after the last one pushed
// (ErrTickOrder otherwise); in is copied (shallowly: do not change its
// slices or maps after). Usually one a tick, stamped with the server tick
// it is for (interp.Clock.ServerTick plus a margin).
func (s *InputSender[I]) Push(tick uint32, in *I) error {
	if s.count > 0 && int32(tick-s.last) <= 0 {
		return fmt.Errorf("%w: input for tick %d after tick %d", ErrTickOrder, tick, s.last)
	}
	s.ring[s.head] = stamped[I]{tick: tick, in: *in}
	s.head = (s.head + 1) % s.n
	s.count = min(s.count+1, s.n)
	s.last = tick
	s.stats.Pushed++
	return nil
}

// InputStats counts what the input side of a connection did.
type InputStats struct {
	Pushed    int // InputSender: inputs pushed
	Received  int // InputQueue: distinct inputs received on time
	Recovered int // of them, received first in a packet that was not their first (redundancy saved them)
	Consumed  int // inputs handed to the game
	Repeated  int // ticks the game got the last input again, for want of one (lost or late)
	Late      int // inputs received after their tick was played
	Skipped   int // inputs dropped unplayed to catch up with a client running ahead
	// Ahead counts input copies dropped because their tick is a window (64
	// ticks) or more past the tick played next: a forgery, a client whose
	// clock jumped (a run of them re-anchors the queue), or a bug. Every
	// copy is counted, so one such input sent with redundancy counts up to
	// its redundancy.
	Ahead int
	// Reanchored counts the times the queue anchored again after a run of
	// packets whose inputs were all far from the tick it plays next.
	Reanchored int
}

// Stats returns the sender's counters (Pushed).
func (s *InputSender[I]) Stats() InputStats { return s.stats }

// takeAck drops from the redundancy the inputs the server consumed.
func (s *InputSender[I]) takeAck(tick uint32) {
	if !s.has || int32(tick-s.acked) > 0 {
		s.acked, s.has = tick, true
	}
}

// pending returns the inputs to send, newest first.
func (s *InputSender[I]) pending(dst []*stamped[I]) []*stamped[I] {
	for k := range s.count {
		i := (s.head - 1 - k + 2*s.n) % s.n
		e := &s.ring[i]
		if s.has && int32(e.tick-s.acked) <= 0 {
			break
		}
		dst = append(dst, e)
	}
	return dst
}

// An input section: the count of inputs less one (bitlen, 3-bit prefix
// for 1..16), the newest one's tick (32 bits), then for each older one
// whether its tick is the one before the newer's (1 bit; when not, the
// gap less two, bitlen with a 5-bit prefix); then the newest input in full
// (Codec.Encode) and each older one as a delta against the next newer
// (Codec.EncodeDelta).

func (s *InputSender[I]) write(w *bits.Writer) error {
	var buf [MaxRedundancy]*stamped[I]
	ins := s.pending(buf[:0])
	if len(ins) == 0 {
		return errors.New("conn: internal: an input section without inputs")
	}
	fields.WriteBitlen(w, uint64(len(ins)-1), 3)
	w.WriteBits(uint64(ins[0].tick), 32)
	for k := 1; k < len(ins); k++ {
		gap := ins[k-1].tick - ins[k].tick
		w.WriteBool(gap == 1)
		if gap != 1 {
			fields.WriteBitlen(w, uint64(gap-2), 5)
		}
	}
	if err := s.c.Encode(w, &ins[0].in); err != nil {
		return err
	}
	for k := 1; k < len(ins); k++ {
		if err := s.c.EncodeDelta(w, &ins[k-1].in, &ins[k].in); err != nil {
			return err
		}
	}
	return nil
}

// InputQueue is the server's side of one client's inputs: it keeps the
// inputs received for the ticks ahead, and hands the game one input per
// tick (Next) behind a jitter buffer of a few ticks, repeating the last
// one when the tick's input is missing (counted), and tells the client
// (in the connection's packets) the newest tick consumed, so that the
// client stops resending it. Create it with NewInputQueue.
type InputQueue[I any] struct {
	c      *bitwire.Codec[I]
	buffer int

	started bool
	wait    int    // ticks to wait before the first input is played
	next    uint32 // the stamp the game gets next
	played  bool   // a tick was played: Ack has a value
	last    I      // the input played last (the zero input before the first)
	slots   [inputWindow]slot[I]
	newest  uint32 // the newest stamp received
	off     int    // packets in a row whose inputs were far from next
	scratch [MaxRedundancy]stamped[I]
	stats   InputStats
}

type slot[I any] struct {
	tick uint32
	full bool
	in   I
}

// NewInputQueue returns the InputQueue of one client's inputs coded by c,
// with a jitter buffer of buffer ticks (DefaultInputBuffer when 0; -1 for
// none).
func NewInputQueue[I any](c *bitwire.Codec[I], buffer int) (*InputQueue[I], error) {
	if c == nil {
		return nil, errors.New("conn: NewInputQueue with a nil codec")
	}
	switch {
	case buffer == 0:
		buffer = DefaultInputBuffer
	case buffer == -1:
		buffer = 0
	case buffer < 0 || buffer >= inputWindow/2:
		return nil, fmt.Errorf("conn: input buffer %d outside 0..%d", buffer, inputWindow/2-1)
	}
	return &InputQueue[I]{c: c, buffer: buffer}, nil
}

// Stats returns the queue's counters.
func (q *InputQueue[I]) Stats() InputStats { return q.stats }

// Next returns the input the game applies this tick (call it once a
// tick) and its stamp; fresh is false when the tick's input is missing
// and the last one is repeated (the zero input before any), or while the
// jitter buffer fills. The value belongs to the queue until the next call.
func (q *InputQueue[I]) Next() (in *I, tick uint32, fresh bool) {
	if !q.started || q.wait > 0 {
		if q.started {
			q.wait--
		}
		return &q.last, 0, false
	}
	// A client running ahead (its clock faster, or a burst after a stall):
	// skip to keep the buffer's depth.
	for int32(q.newest-q.next) > int32(2*q.buffer+2) {
		if s := &q.slots[q.next%inputWindow]; !(s.full && s.tick == q.next) {
			q.stats.Repeated++ // never arrived: counted as a gap, skipped
		} else {
			q.stats.Skipped++
			s.full = false
		}
		q.next++
	}
	t := q.next
	q.next++
	q.played = true
	s := &q.slots[t%inputWindow]
	if s.full && s.tick == t {
		q.last, s.full = s.in, false
		q.stats.Consumed++
		return &q.last, t, true
	}
	q.stats.Repeated++
	return &q.last, t, false
}

// Ack returns the newest stamp played (consumed or repeated), which the
// connection's packets carry to the client; ok is false before any.
func (q *InputQueue[I]) Ack() (tick uint32, ok bool) {
	if !q.played {
		return 0, false
	}
	return q.next - 1, true
}

// read reads an input section; nothing changes on an error.
func (q *InputQueue[I]) read(r *bits.Reader) error {
	n64, err := fields.ReadBitlen(r, 3)
	if err != nil {
		return err
	}
	if n64 >= MaxRedundancy {
		return fmt.Errorf("conn: %w: %d inputs in a section", bitwire.ErrMalformed, n64+1)
	}
	n := int(n64) + 1
	t, err := r.ReadBits(32)
	if err != nil {
		return err
	}
	ins := q.scratch[:n]
	ins[0].tick = uint32(t)
	for k := 1; k < n; k++ {
		one, err := r.ReadBool()
		if err != nil {
			return err
		}
		gap := uint64(1)
		if !one {
			g, err := fields.ReadBitlen(r, 5)
			if err != nil {
				return err
			}
			gap = g + 2
		}
		if gap > uint64(ins[k-1].tick) {
			return fmt.Errorf("conn: %w: input ticks before 0", bitwire.ErrMalformed)
		}
		ins[k].tick = ins[k-1].tick - uint32(gap)
	}
	if err := q.c.Decode(r, &ins[0].in); err != nil {
		return err
	}
	for k := 1; k < n; k++ {
		if err := q.c.DecodeDelta(r, &ins[k-1].in, &ins[k].in); err != nil {
			return err
		}
	}
	if q.started {
		// Packets whose newest input is far from the tick played next, one
		// after another, mean the client's ticks moved (a restart, a
		// clock reset) or the anchor was wrong: anchor again.
		if d := int32(ins[0].tick - q.next); d < -inputWindow || d >= inputWindow {
			q.off++
		} else {
			q.off = 0
		}
		if q.off >= reanchorAfter {
			q.started, q.off = false, 0
			q.stats.Reanchored++
		}
	}
	if !q.started {
		// The first input anchors the queue: it is played buffer ticks
		// from now, the ones after it a tick apart.
		q.started, q.wait, q.next, q.newest = true, q.buffer, ins[n-1].tick, ins[0].tick
		clear(q.slots[:])
	}
	for k := n - 1; k >= 0; k-- {
		q.store(&ins[k], k > 0)
	}
	return nil
}

func (q *InputQueue[I]) store(e *stamped[I], redundant bool) {
	d := e.tick - q.next
	switch {
	case int32(d) < 0:
		// Its tick was played: too late, unless it was played already.
		if s := &q.slots[e.tick%inputWindow]; int32(d) >= -inputWindow && s.tick != e.tick && !s.full {
			// The first copy of an input whose tick went by without it
			// (the slot remembers the tick, so later copies are not
			// counted again; a slot holding an input ahead is kept).
			q.stats.Late++
			s.tick = e.tick
		}
		return
	case d >= inputWindow:
		q.stats.Ahead++ // no slot can hold it without overwriting one still to play
		return
	}
	s := &q.slots[e.tick%inputWindow]
	if s.full && s.tick == e.tick {
		return // a copy
	}
	s.tick, s.full, s.in = e.tick, true, e.in
	q.stats.Received++
	if redundant {
		q.stats.Recovered++
	}
	if int32(e.tick-q.newest) > 0 {
		q.newest = e.tick
	}
}
