package replicate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/integrity"
)

// Client is the receiving end of one Peer: it applies the packets it
// accepts to its view of the world, keeps the last BaselineDepth states of
// each entity as baselines, and says what to acknowledge. Create it with
// NewClient.
type Client[E any] struct {
	c     *bitwire.Codec[E]
	fp    uint32
	pred  bool // the codec has pred values: a delta may be predicted from two baselines
	max   int
	index map[uint32]int32 // id → slot
	ents  []centity[E]
	free  []int32

	// window bounds the sequence numbers accepted (package integrity's
	// acceptance rule, as for snapshot's ticks; rewinds only without a MAC, see NewClient).
	window   *integrity.TickWindow
	guard    *integrity.Guard
	accepted bool
	newest   uint32 // sequence number of the newest accepted packet
	mask     uint32 // the 32 before it that were accepted
	tick     uint32 // tick of the newest accepted packet
	// tokens are the ack tokens of the newest accepted packet and the 32
	// before it, by sequence number modulo their count.
	tokens [ackWindow + 1]seqToken
	// missing is the newest packet refused with ErrNoBaseline since the
	// newest accepted one (seq 0: none), reported in acks.
	missing seqToken
	expiry  uint32 // WithExpiry; 0: never
	sweep   int    // the next slot the expiry looks at
	// auto: the expiry is the default one (WithExpiry not given), which
	// ages entities by the stream clock instead of by ticks.
	auto bool
	// clock counts the ticks the stream covered: each packet decoded
	// whole (accepted, or refused only as too many) advances it by its
	// distance in ticks from the previous such packet (clockTick), at
	// most maxClockStep, so that an outage of the link (or a forged far
	// tick) does not age every entity at once.
	clock     uint32
	clockTick uint32
	clocked   bool // clockTick is set
	// expireAll: the packet being applied fits the limit only once every
	// expired entity is dropped (read counted them); commit drops them all.
	expireAll bool

	r       bits.Reader
	rem     []uint32
	dec     []decoded
	vals    []E // decoded states, swapped into the view on commit
	updated []uint32
	removed []uint32
	ev      *events[E] // nil until a handler is attached (events.go)
}

type seqToken struct{ seq, token uint32 }

// centity is a held entity: its states, oldest first from head on.
type centity[E any] struct {
	id   uint32
	seen uint32 // the stream clock when its newest state was kept
	// unheld: the slot is free (its id is not held), for the sweep
	unheld bool
	versions[E]
}

// decoded is an entity entry of the packet being decoded.
type decoded struct {
	id   uint32
	slot int32 // -1: not held before this packet
	kind uint8
	base uint32 // the baseline's tick, for a delta
}

// The kinds of entity entries.
const (
	kindCommon = iota // a delta against the common baseline
	kindOwn           // a delta against its own baseline
	kindFull          // a full state
)

// Info describes an accepted packet. Its slices belong to the Client and
// are valid until the next Decode.
type Info struct {
	Seq  uint32
	Tick uint32
	// Updated lists the ids whose state the packet set (created, replaced
	// or changed), ascending; their state is now from Tick.
	Updated []uint32
	// Removed lists the ids the packet removed that the client held, then
	// those the expiry dropped (see WithExpiry).
	Removed []uint32
}

// NewClient returns an empty Client of entities encoded by a codec with
// the layout of c (same fingerprint as the Server's), with the integrity
// mode of WithIntegrity (none unless given), which must be its Peer's.
//
// Without a MAC, a run of RecoverAfter stale packets with increasing
// sequence numbers re-anchors the Client backward (see
// integrity.TickWindow): a forged or corrupted packet with a sequence number
// ahead of the sender's locks it out for at most that run, and a forged
// burst that re-anchors it costs the genuine stream nothing. With a MAC
// every accepted packet is the sender's and no run re-anchors backward.
//
// The Client expires entities the server no longer sends (made up by a
// forged or corrupted packet) unless WithExpiry(0) or WithRefresh(-1)
// says otherwise: give it its Peer's Refresh and the Server's tick rate
// (WithRefresh, WithTickRate) when they are not the defaults.
func NewClient[E any](c *bitwire.Codec[E], opts ...Option) (*Client[E], error) {
	if c == nil {
		return nil, errors.New("replicate: NewClient with a nil codec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	guard, err := integrity.New(cfg.integrity, cfg.key)
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	return &Client[E]{c: c, fp: fingerprint32(c.Fingerprint()), pred: c.Predicts(), max: cfg.maxEntities, index: make(map[uint32]int32),
		window: integrity.NewTickWindow(MaxAhead, RecoverAfter, cfg.integrity != integrity.ModeMAC), guard: guard, expiry: cfg.expiryTicks(), auto: !cfg.expirySet}, nil
}

// Decode applies one packet and returns what it changed. On any error the
// view is left exactly as it was and the packet must not be acknowledged
// (Ack says what to send). The errors: ErrBadMagic, ErrProtocolMismatch
// (another codec layout or integrity mode), ErrIntegrity (a trailer that
// does not match), ErrStale (a sequence number not newer than the newest
// accepted), ErrFuture (more than MaxAhead past it, unless a run of
// RecoverAfter increasing ones says the stream really moved on),
// ErrNoBaseline (reported in the next acks, as are the body errors
// below), ErrTooManyEntities,
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
	if h.Integrity != cl.guard.Mode() {
		return Info{}, fmt.Errorf("%w: packet integrity %v, client %v", ErrProtocolMismatch, h.Integrity, cl.guard.Mode())
	}
	body, token, err := cl.guard.Open(packet)
	if err == nil && len(body)*8 < headerBits {
		err = bitwire.ErrUnexpectedEnd
	}
	if err != nil {
		return Info{}, fmt.Errorf("replicate: packet %d: %w", h.Seq, err)
	}
	cl.r.Reset(body)
	_ = cl.r.Skip(headerBits)
	if err := cl.window.Check(h.Seq); err != nil {
		if errors.Is(err, integrity.ErrFutureTick) {
			return Info{}, fmt.Errorf("%w: packet %d, newest accepted %d (at most %d ahead)", ErrFuture, h.Seq, cl.newest, MaxAhead)
		}
		return Info{}, fmt.Errorf("%w: packet %d, newest accepted %d", ErrStale, h.Seq, cl.newest)
	}
	if err := cl.read(h); err != nil {
		// A body the client cannot apply, which passed the trailer: a
		// baseline it lacks, or (without a MAC) one a forgery altered, so
		// that the sender's delta makes no sense against it. The ack
		// reports it, and the sender sends those entities in full.
		if !errors.Is(err, ErrTooManyEntities) {
			cl.missing = seqToken{h.Seq, token}
		}
		return Info{}, fmt.Errorf("replicate: packet %d (tick %d): %w", h.Seq, h.Tick, err)
	}
	cl.ev.prepare(cl)
	cl.commit(h, token)
	cl.ev.fire(cl)
	return Info{Seq: h.Seq, Tick: h.Tick, Updated: cl.updated, Removed: cl.removed}, nil
}

// read decodes the body into the scratch lists without touching the view:
// the removals, the entities of the packet (and the common baseline), their
// kinds, then their bodies.
func (cl *Client[E]) read(h Header) error {
	cl.rem, cl.dec = cl.rem[:0], cl.dec[:0]
	gone, err := cl.readRemovals()
	if err != nil {
		return err
	}
	common, hasCommon, err := cl.readEntities(h)
	if err != nil {
		return err
	}
	if err := cl.readKinds(h, common, hasCommon); err != nil {
		return err
	}
	added, err := cl.readBodies(hasCommon)
	if err != nil {
		return err
	}
	if !cl.r.CheckPadding() {
		return fmt.Errorf("%w (%d bits left)", bitwire.ErrTrailingData, cl.r.Remaining())
	}
	return cl.checkHeld(h, len(cl.index)-gone+added)
}

// readRemovals reads the removed ids into cl.rem and returns how many of
// them the client holds.
func (cl *Client[E]) readRemovals() (held int, err error) {
	r := &cl.r
	n, err := readCount(r)
	if err != nil {
		return 0, err
	}
	q := newIDSeq()
	for range n {
		id, err := q.read(r)
		if err != nil {
			return 0, err
		}
		cl.rem = append(cl.rem, id)
		if _, ok := cl.index[id]; ok {
			held++
		}
	}
	return held, nil
}

// readEntities reads the common baseline, when the packet has one, and the
// ids of the entities it carries into cl.dec, each at first a delta
// against the common baseline, with its slot (-1 for one the client does
// not hold, or that the packet removes).
func (cl *Client[E]) readEntities(h Header) (common uint32, hasCommon bool, err error) {
	r := &cl.r
	if hasCommon, err = r.ReadBool(); err != nil {
		return 0, false, err
	}
	if hasCommon {
		if common, err = readBase(r, h.Tick); err != nil {
			return 0, false, err
		}
	}
	n, err := readCount(r)
	if err != nil {
		return 0, false, err
	}
	q := newIDSeq()
	ri := 0 // removals are ascending, like the entities: one merge pass
	for range n {
		id, err := q.read(r)
		if err != nil {
			return 0, false, err
		}
		for ri < len(cl.rem) && cl.rem[ri] < id {
			ri++
		}
		slot, ok := cl.index[id]
		if !ok || (ri < len(cl.rem) && cl.rem[ri] == id) {
			slot = -1
		}
		cl.dec = append(cl.dec, decoded{id: id, slot: slot, kind: kindCommon, base: common})
	}
	return common, hasCommon, nil
}

// readKinds reads the entities that are not deltas against the common
// baseline, by index, each with 0 for a full state or tick - baseline.
func (cl *Client[E]) readKinds(h Header, common uint32, hasCommon bool) error {
	r := &cl.r
	n, err := readCount(r)
	if err != nil {
		return err
	}
	var at, vals riceSeq
	last := -1
	for range n {
		g, err := at.read(r)
		if err != nil {
			return err
		}
		if g >= uint64(len(cl.dec)-last-1) {
			return fmt.Errorf("%w: a kind past the %d entities", bitwire.ErrMalformed, len(cl.dec))
		}
		last += 1 + int(g)
		d := &cl.dec[last]
		v, err := vals.read(r)
		switch {
		case err != nil:
			return err
		case v == 0:
			d.kind = kindFull
		case v > uint64(h.Tick):
			return fmt.Errorf("%w: id %d: baseline %d ticks before tick %d", bitwire.ErrMalformed, d.id, v, h.Tick)
		case hasCommon && h.Tick-uint32(v) == common:
			return fmt.Errorf("%w: id %d: its own baseline is the common one", bitwire.ErrMalformed, d.id)
		default:
			d.kind, d.base = kindOwn, h.Tick-uint32(v)
		}
	}
	return nil
}

// readBodies decodes each entity's state or delta into cl.vals and returns
// how many full states are of entities the client did not hold.
func (cl *Client[E]) readBodies(hasCommon bool) (added int, err error) {
	r := &cl.r
	for k := range cl.dec {
		d := &cl.dec[k]
		if k == len(cl.vals) {
			var zero E
			cl.vals = append(cl.vals, zero)
		}
		v := &cl.vals[k]
		if d.kind == kindFull {
			if err := cl.c.Decode(r, v); err != nil {
				return 0, fmt.Errorf("id %d: %w", d.id, err)
			}
			if d.slot < 0 {
				added++
			}
			continue
		}
		if d.kind == kindCommon && !hasCommon {
			return 0, fmt.Errorf("%w: id %d: a delta against the common baseline of a packet without one", bitwire.ErrMalformed, d.id)
		}
		var base *E
		if d.slot >= 0 {
			base = cl.ents[d.slot].find(d.base)
		}
		if base == nil {
			return 0, fmt.Errorf("%w: id %d against tick %d", ErrNoBaseline, d.id, d.base)
		}
		older, err := cl.readOlder(d)
		if err != nil {
			return 0, err
		}
		if err := cl.c.DecodePredicted(r, older, base, v); err != nil {
			return 0, fmt.Errorf("id %d: %w", d.id, err)
		}
	}
	return added, nil
}

// readOlder reads, for a predicting codec, whether delta d is predicted
// from an older baseline and which (its distance before d's baseline),
// and returns the state of that tick the client holds; nil when the
// codec does not predict or the delta is not predicted.
func (cl *Client[E]) readOlder(d *decoded) (*E, error) {
	r := &cl.r
	if !cl.pred {
		return nil, nil
	}
	on, err := r.ReadBool()
	if err != nil || !on {
		return nil, err
	}
	older, err := readBase(r, d.base)
	if err != nil {
		return nil, fmt.Errorf("id %d: the older baseline: %w", d.id, err)
	}
	o := cl.ents[d.slot].find(older)
	if o == nil {
		return nil, fmt.Errorf("%w: id %d predicted from tick %d", ErrNoBaseline, d.id, older)
	}
	return o, nil
}

// checkHeld checks that the client would hold at most its limit of
// entities after the packet (held of them): when not, the entities the
// expiry would drop are not counted (marking the packet to expire them),
// and if that is not enough the packet is refused.
func (cl *Client[E]) checkHeld(h Header, held int) error {
	cl.expireAll = false
	if held > cl.max {
		clock := cl.clockAt(h.Tick)
		if held-cl.expired(h.Tick, clock) > cl.max {
			// The stream goes on meanwhile: what a forgery made up ages
			// even while every genuine packet is refused.
			cl.clock, cl.clockTick, cl.clocked = clock, h.Tick, true
			return fmt.Errorf("%w: %d, limit %d", ErrTooManyEntities, held, cl.max)
		}
		cl.expireAll = true
	}
	return nil
}

// expired counts the entities held, and neither removed nor set by the
// packet being read, that the expiry would drop at tick: made-up ones,
// when a forgery filled the client, which must not refuse the genuine
// stream for good. It looks at every entity, but only for a packet that
// would otherwise be refused as too many.
func (cl *Client[E]) expired(tick, clock uint32) int {
	if cl.expiry == 0 {
		return 0
	}
	n := 0
	for _, slot := range cl.index {
		n += b2i(cl.stale(&cl.ents[slot], tick, clock))
	}
	for _, d := range cl.dec {
		if d.slot >= 0 {
			n -= b2i(cl.stale(&cl.ents[d.slot], tick, clock))
		}
	}
	for _, id := range cl.rem {
		if slot, ok := cl.index[id]; ok {
			n -= b2i(cl.stale(&cl.ents[slot], tick, clock))
		}
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stale says whether the expiry drops ent at the packet of tick, after
// which the stream clock reads clock. The default expiry: the clock moved
// on by more than the expiry since ent's newest state was kept. With
// WithExpiry: its newest state is more than the expiry away from tick
// (either way: a made-up future tick counts too), the rule the TypeScript
// and C# clients follow too.
func (cl *Client[E]) stale(ent *centity[E], tick, clock uint32) bool {
	if cl.auto {
		return clock-ent.seen > cl.expiry
	}
	t := ent.newest().tick
	return max(t, tick)-min(t, tick) > cl.expiry
}

// maxClockStep bounds how far one accepted packet moves the stream clock:
// a few ticks, so that packets sent every few ticks count in full.
const maxClockStep = 8

// clockAt returns the stream clock once the packet of tick is accepted.
func (cl *Client[E]) clockAt(tick uint32) uint32 {
	if !cl.clocked {
		return cl.clock
	}
	return cl.clock + min(max(tick, cl.clockTick)-min(tick, cl.clockTick), maxClockStep)
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
func (cl *Client[E]) commit(h Header, token uint32) {
	cl.updated, cl.removed = cl.updated[:0], cl.removed[:0]
	held := len(cl.index)
	cl.clock, cl.clockTick, cl.clocked = cl.clockAt(h.Tick), h.Tick, true
	for _, id := range cl.rem {
		slot, ok := cl.index[id]
		if !ok {
			continue
		}
		delete(cl.index, id)
		cl.free = append(cl.free, slot)
		cl.ents[slot].unheld = true
		cl.removed = append(cl.removed, id)
	}
	for k, d := range cl.dec {
		slot := d.slot
		if slot < 0 {
			slot = cl.alloc(d.id)
		}
		ent := &cl.ents[slot]
		ent.dropFrom(h.Tick)
		v := ent.push(BaselineDepth)
		v.tick = h.Tick
		ent.seen = cl.clock
		v.val, cl.vals[k] = cl.vals[k], v.val
		cl.updated = append(cl.updated, d.id)
	}
	// A re-anchoring backward (h.Seq not after newest) starts the mask
	// afresh: the packets it named are not the sender's.
	if !cl.accepted || h.Seq <= cl.newest {
		cl.mask = 0
	} else if shift := h.Seq - cl.newest; shift > ackWindow {
		cl.mask = 0
	} else {
		cl.mask = cl.mask<<shift | 1<<(shift-1)
	}
	cl.accepted, cl.newest, cl.tick = true, h.Seq, h.Tick
	cl.tokens[h.Seq%uint32(len(cl.tokens))] = seqToken{h.Seq, token}
	if h.Seq > cl.missing.seq {
		cl.missing = seqToken{}
	}
	cl.window.Accept(h.Seq)
	if cl.expiry != 0 {
		// The sweep keeps ahead of what packets add, and goes round a
		// large view in a bounded number of packets.
		n := expirySweep
		if cl.auto {
			n += 2*max(len(cl.index)-held, 0) + len(cl.ents)/sweepRound
		}
		if cl.expireAll {
			n = len(cl.ents)
		}
		cl.expire(h.Tick, n)
	}
}

// Each accepted packet's expiry looks at expirySweep slots; the default
// expiry also at two for each entity the packet added, and one in
// sweepRound of all: the view is then swept within sweepRound packets
// whatever its size, and entities a stream of forged packets makes up are
// swept faster than they come. (WithExpiry keeps to expirySweep, as the
// TypeScript and C# clients do.)
const (
	expirySweep = 32
	sweepRound  = 256
)

// expire drops the entities, among the next n slots, that are stale at
// tick.
func (cl *Client[E]) expire(tick uint32, n int) {
	for k := 0; k < n && len(cl.ents) > 0; k++ {
		if cl.sweep >= len(cl.ents) {
			cl.sweep = 0
		}
		slot := int32(cl.sweep)
		cl.sweep++
		ent := &cl.ents[slot]
		if ent.unheld {
			continue // a free slot
		}
		if cl.stale(ent, tick, cl.clock) {
			delete(cl.index, ent.id)
			cl.free = append(cl.free, slot)
			ent.unheld = true
			cl.removed = append(cl.removed, ent.id)
		}
	}
}

// dropFrom drops the kept states of tick or later, before a state of tick
// is kept. In the sender's stream an entity's ticks only increase, so this
// drops nothing; after a forged or corrupted packet it drops the states it
// brought (a future tick), or the genuine states it shadowed (the same
// tick: the sender's later deltas against them then fail with
// ErrNoBaseline, which the ack reports, and the sender sends full states).
func (ent *centity[E]) dropFrom(tick uint32) {
	drop := false
	for i := range ent.vers {
		drop = drop || ent.vers[i].tick >= tick
	}
	if !drop {
		return
	}
	// Oldest first, then keep those before tick in order; swaps keep each
	// state's storage for reuse.
	v := ent.vers
	slices.Reverse(v[:ent.head])
	slices.Reverse(v[ent.head:])
	slices.Reverse(v)
	ent.head = 0
	k := 0
	for i := range v {
		if v[i].tick < tick {
			v[k], v[i] = v[i], v[k]
			k++
		}
	}
	ent.vers = v[:k]
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
	ent.id, ent.unheld = id, false
	ent.reset()
	cl.index[id] = slot
	return slot
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

// Ack returns the acknowledgement of what the Client accepted so far, with
// the packets' tokens, and the newest packet refused with ErrNoBaseline
// since then; the zero Ack (Seq 0) before any packet.
func (cl *Client[E]) Ack() Ack {
	a := Ack{Missing: cl.missing.seq, MissingToken: cl.missing.token}
	if !cl.accepted {
		return a
	}
	a.Seq, a.Mask = cl.newest, cl.mask
	a.Token = cl.tokenOf(cl.newest)
	for i := uint32(0); i < ackWindow; i++ {
		if cl.mask&(1<<i) != 0 {
			a.MaskToken ^= cl.tokenOf(cl.newest - 1 - i)
		}
	}
	return a
}

func (cl *Client[E]) tokenOf(seq uint32) uint32 {
	t := cl.tokens[seq%uint32(len(cl.tokens))]
	if t.seq != seq {
		return 0 // not kept: the mask never names such a packet
	}
	return t.token
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
		cl.ents[slot].unheld = true
	}
	cl.accepted, cl.newest, cl.mask, cl.tick = false, 0, 0, 0
	cl.tokens, cl.missing = [ackWindow + 1]seqToken{}, seqToken{}
	cl.window.Reset()
	cl.clocked = false
}
