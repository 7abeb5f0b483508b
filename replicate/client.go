package replicate

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/snapshot"
)

// Client is the receiving end of one Peer: it applies the packets it
// accepts to its view of the world, keeps the last BaselineDepth states of
// each entity as baselines, and says what to acknowledge. Create it with
// NewClient.
type Client[E any] struct {
	c     *bitwire.Codec[E]
	fp    uint32
	max   int
	index map[uint32]int32 // id → slot
	ents  []centity[E]
	free  []int32

	// window bounds the sequence numbers accepted (package snapshot's
	// acceptance rule, without rewinds: packets apply in order only).
	window   *snapshot.TickWindow
	accepted bool
	newest   uint32 // sequence number of the newest accepted packet
	mask     uint32 // the 32 before it that were accepted
	tick     uint32 // tick of the newest accepted packet

	r       bits.Reader
	rem     []uint32
	dec     []decoded
	vals    []E // decoded states, swapped into the view on commit
	updated []uint32
	removed []uint32
}

// centity is a held entity: its states, oldest first from head on.
type centity[E any] struct {
	id   uint32
	vers []version[E]
	head int
}

// decoded is an entity entry of the packet being decoded.
type decoded struct {
	id   uint32
	slot int32 // -1: not held before this packet
}

// Info describes an accepted packet. Its slices belong to the Client and
// are valid until the next Decode.
type Info struct {
	Seq  uint32
	Tick uint32
	// Updated lists the ids whose state the packet set (created, replaced
	// or changed), ascending; their state is now from Tick.
	Updated []uint32
	// Removed lists the ids the packet removed that the client held.
	Removed []uint32
}

// NewClient returns an empty Client of entities encoded by a codec with
// the layout of c (same fingerprint as the Server's).
func NewClient[E any](c *bitwire.Codec[E], opts ...Option) (*Client[E], error) {
	if c == nil {
		return nil, errors.New("replicate: NewClient with a nil codec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Client[E]{c: c, fp: fingerprint32(c.Fingerprint()), max: cfg.maxEntities, index: make(map[uint32]int32),
		window: snapshot.NewTickWindow(MaxAhead, RecoverAfter, false)}, nil
}

// Decode applies one packet and returns what it changed. On any error the
// view is left exactly as it was and the packet must not be acknowledged.
// The errors: ErrBadMagic, ErrProtocolMismatch, ErrStale (a sequence
// number not newer than the newest accepted), ErrFuture (more than
// MaxAhead past it, unless a run of RecoverAfter increasing ones says the
// stream really moved on), ErrNoBaseline, ErrTooManyEntities,
// bitwire.ErrTrailingData (bytes or non-zero padding after the body), and
// the codec's errors for truncated or malformed input. Bad input of any
// kind is an error, never a panic; decoding allocates at most in
// proportion to the packet's size.
func (cl *Client[E]) Decode(packet []byte) (Info, error) {
	cl.r.Reset(packet)
	defer cl.r.Reset(nil)
	h, err := readHeader(&cl.r)
	if err != nil {
		return Info{}, err
	}
	if h.Fingerprint != cl.fp {
		return Info{}, fmt.Errorf("%w: packet %#08x, client %#08x", ErrProtocolMismatch, h.Fingerprint, cl.fp)
	}
	if err := cl.window.Check(h.Seq); err != nil {
		if errors.Is(err, snapshot.ErrFutureTick) {
			return Info{}, fmt.Errorf("%w: packet %d, newest accepted %d (at most %d ahead)", ErrFuture, h.Seq, cl.newest, MaxAhead)
		}
		return Info{}, fmt.Errorf("%w: packet %d, newest accepted %d", ErrStale, h.Seq, cl.newest)
	}
	if err := cl.read(h); err != nil {
		return Info{}, fmt.Errorf("replicate: packet %d (tick %d): %w", h.Seq, h.Tick, err)
	}
	cl.commit(h)
	return Info{Seq: h.Seq, Tick: h.Tick, Updated: cl.updated, Removed: cl.removed}, nil
}

// read decodes the body into the scratch lists without touching the view.
func (cl *Client[E]) read(h Header) error {
	r := &cl.r
	cl.rem, cl.dec = cl.rem[:0], cl.dec[:0]
	prev := int64(-1)
	held := len(cl.index)
	for {
		id, more, err := readID(r, &prev)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		cl.rem = append(cl.rem, id)
		if _, ok := cl.index[id]; ok {
			held--
		}
	}
	var common uint32
	hasCommon, err := r.ReadBool()
	if err != nil {
		return err
	}
	if hasCommon {
		if common, err = readBase(r, h.Tick); err != nil {
			return err
		}
	}
	prev = -1
	ri := 0 // removals are ascending, like the entities: one merge pass
	for k := 0; ; k++ {
		id, more, err := readID(r, &prev)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		for ri < len(cl.rem) && cl.rem[ri] < id {
			ri++
		}
		removedHere := ri < len(cl.rem) && cl.rem[ri] == id
		// The kind: 1 a delta against the common baseline, 01 a delta
		// against its own, 00 a full state (bits in reading order).
		delta, err := r.ReadBool()
		if err != nil {
			return err
		}
		baseTick := common
		if delta && !hasCommon {
			return fmt.Errorf("%w: id %d: a delta against the common baseline of a packet without one", bitwire.ErrMalformed, id)
		}
		if !delta {
			if delta, err = r.ReadBool(); err != nil {
				return err
			}
			if delta {
				if baseTick, err = readBase(r, h.Tick); err != nil {
					return err
				}
			}
		}
		slot, ok := cl.index[id]
		if !ok || removedHere {
			slot = -1
		}
		if k == len(cl.vals) {
			var zero E
			cl.vals = append(cl.vals, zero)
		}
		v := &cl.vals[k]
		if delta {
			var base *E
			if slot >= 0 {
				base = cl.ents[slot].find(baseTick)
			}
			if base == nil {
				return fmt.Errorf("%w: id %d against tick %d", ErrNoBaseline, id, baseTick)
			}
			err = cl.c.DecodeDelta(r, base, v)
			if err != nil {
				return fmt.Errorf("id %d: %w", id, err)
			}
		} else {
			if err := cl.c.Decode(r, v); err != nil {
				return fmt.Errorf("id %d: %w", id, err)
			}
			if slot < 0 {
				held++
			}
		}
		cl.dec = append(cl.dec, decoded{id: id, slot: slot})
	}
	if !r.CheckPadding() {
		return fmt.Errorf("%w (%d bits left)", bitwire.ErrTrailingData, r.Remaining())
	}
	if held > cl.max {
		return fmt.Errorf("%w: %d, limit %d", ErrTooManyEntities, held, cl.max)
	}
	return nil
}

// readBase reads a baseline, coded as tick - baseline - 1.
func readBase(r *bits.Reader, tick uint32) (uint32, error) {
	d, err := fields.ReadBitlen(r, distWidth)
	if err != nil {
		return 0, err
	}
	if d >= uint64(tick) {
		return 0, fmt.Errorf("%w: baseline %d ticks before tick %d", bitwire.ErrMalformed, d+1, tick)
	}
	return tick - uint32(d) - 1, nil
}

// commit applies a packet read whole: removals, then the entities.
func (cl *Client[E]) commit(h Header) {
	cl.updated, cl.removed = cl.updated[:0], cl.removed[:0]
	for _, id := range cl.rem {
		slot, ok := cl.index[id]
		if !ok {
			continue
		}
		delete(cl.index, id)
		cl.free = append(cl.free, slot)
		cl.removed = append(cl.removed, id)
	}
	for k, d := range cl.dec {
		slot := d.slot
		if slot < 0 {
			slot = cl.alloc(d.id)
		}
		ent := &cl.ents[slot]
		var v *version[E]
		if len(ent.vers) < BaselineDepth {
			ent.vers = append(ent.vers, version[E]{})
			v = &ent.vers[len(ent.vers)-1]
		} else {
			v = &ent.vers[ent.head]
			ent.head = (ent.head + 1) % len(ent.vers)
		}
		v.tick = h.Tick
		v.val, cl.vals[k] = cl.vals[k], v.val
		cl.updated = append(cl.updated, d.id)
	}
	if !cl.accepted {
		cl.mask = 0
	} else if shift := h.Seq - cl.newest; shift > ackWindow {
		cl.mask = 0
	} else {
		cl.mask = cl.mask<<shift | 1<<(shift-1)
	}
	cl.accepted, cl.newest, cl.tick = true, h.Seq, h.Tick
	cl.window.Accept(h.Seq)
}

func (cl *Client[E]) alloc(id uint32) int32 {
	var slot int32
	if n := len(cl.free); n > 0 {
		slot = cl.free[n-1]
		cl.free = cl.free[:n-1]
	} else {
		slot = int32(len(cl.ents))
		cl.ents = append(cl.ents, centity[E]{})
	}
	ent := &cl.ents[slot]
	ent.id, ent.vers, ent.head = id, ent.vers[:0], 0
	cl.index[id] = slot
	return slot
}

func (ent *centity[E]) newest() *version[E] {
	i := ent.head - 1
	if i < 0 {
		i = len(ent.vers) - 1
	}
	return &ent.vers[i]
}

// find returns the state of exactly tick, or nil.
func (ent *centity[E]) find(tick uint32) *E {
	for i := range ent.vers {
		if ent.vers[i].tick == tick {
			return &ent.vers[i].val
		}
	}
	return nil
}

// Ack returns the acknowledgement of what the Client accepted so far; the
// zero Ack (Seq 0) before any packet.
func (cl *Client[E]) Ack() Ack {
	if !cl.accepted {
		return Ack{}
	}
	return Ack{Seq: cl.newest, Mask: cl.mask}
}

// Tick returns the tick of the newest accepted packet (0 before any).
func (cl *Client[E]) Tick() uint32 { return cl.tick }

// Len returns the number of entities the Client holds.
func (cl *Client[E]) Len() int { return len(cl.index) }

// Get returns the state the Client holds of id and the tick it is from:
// the server's quantized state of the entity at that tick. The value
// belongs to the Client: read it, and do not keep it past the next Decode.
func (cl *Client[E]) Get(id uint32) (e *E, tick uint32, ok bool) {
	slot, ok := cl.index[id]
	if !ok {
		return nil, 0, false
	}
	v := cl.ents[slot].newest()
	return &v.val, v.tick, true
}

// Range calls f for every entity held, in no particular order, until f
// returns false; e is read-only, as for Get.
func (cl *Client[E]) Range(f func(id, tick uint32, e *E) bool) {
	for id, slot := range cl.index {
		v := cl.ents[slot].newest()
		if !f(id, v.tick, &v.val) {
			return
		}
	}
}

// Reset forgets everything, as for a new connection. The Server side must
// start over too (a new Peer).
func (cl *Client[E]) Reset() {
	for id, slot := range cl.index {
		delete(cl.index, id)
		cl.free = append(cl.free, slot)
	}
	cl.accepted, cl.newest, cl.mask, cl.tick = false, 0, 0, 0
	cl.window.Reset()
}
