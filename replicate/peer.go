package replicate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/snapshot"
)

// PeerConfig is what the application decides for one client. The funcs
// are functions of the client (the Peer they configure: close over what
// they need of it, such as its player's position) and of the entity.
type PeerConfig[E any] struct {
	// Priority returns how much the client needs the entity's current
	// state this tick: each tick the client lacks it, the entity's
	// accumulator for the client grows by this much, and packets take the
	// highest accumulators first; sending resets it to 0. Negative values
	// count as 0. nil: 1 for every entity (oldest change first).
	Priority func(id uint32, e *E) float32
	// Relevant reports whether the client should hold the entity at all.
	// An entity that stops being relevant is removed from the client's
	// view (reliably, like a removal), and sent in full when it is
	// relevant again. nil: every entity is relevant. It is called for
	// every entity every tick, so keep it cheap.
	Relevant func(id uint32, e *E) bool
	// Budget is the largest packet in bytes: DefaultBudget when 0, at
	// least MinBudget.
	Budget int
	// PriorityEvery, when above 1, spares Priority calls: the priority of
	// an entity that has not changed is computed again only every that
	// many ticks (spread over the ticks by slot), and the last value is
	// used in between. 0 or 1: every tick.
	PriorityEvery int
	// Bandwidth, in bytes per second, when not 0: the Peer sends as many
	// packets a tick as it allows, each at most Budget bytes, and over any
	// tick-rate consecutive ticks (one second at the Server's WithTickRate)
	// never more than Bandwidth bytes. When 0, one packet a tick.
	Bandwidth int
	// Integrity is the packets' trailer (snapshot.ModeNone,
	// snapshot.ModeChecksum or snapshot.ModeMAC), which the client's
	// WithIntegrity must match; Key is the connection's secret for
	// snapshot.ModeMAC (at least snapshot.MinKeySize bytes, copied), nil
	// otherwise. The trailer counts towards Budget. docs/security.md weighs
	// the modes.
	Integrity snapshot.Mode
	Key       []byte
	// Refresh is the most ticks the Peer lets the client hold an entity
	// after the last full state of it the client acknowledged before it
	// sends the entity in full again, whether it changed or not: whatever
	// the client came to hold wrongly (a forged or corrupted packet that
	// got through) lasts at most that long, plus the time to send it. 0:
	// DefaultRefreshSeconds at the Server's tick rate; negative: never.
	Refresh int
}

// hotTrack is what a Peer's scan of the world reads of every entity slot
// each tick, kept apart and small: whether the client holds, or is being
// sent, the entity's current state.
type hotTrack struct {
	gen     uint32 // the incarnation this track is about
	have    uint32 // tick of the newest acknowledged state of the client's view; 0: none
	due     uint32 // the client's state is held only before this tick (Refresh); 0: never due
	flight  uint32 // tick of the last send of the client's view; 0: none
	wake    uint32 // a waiting entity is not looked at before this tick (unless it changes)
	seen    uint32 // the tick it was last looked at
	out     bool   // not relevant to the client this tick
	waiting bool   // the client lacked its current state at the last scan
}

// track is the rest of a Peer's knowledge of one entity slot, read for
// candidates and sends. Sends are counted from 1 per incarnation; the
// client's current view of the entity began after send viewFrom (sends
// before it were undone by a removal).
type track struct {
	acc      float32 // the accumulator at the end of tick accTick
	accTick  uint32  // while waiting, acc grows by pr each tick after it
	pr       float32 // the priority last computed
	prTick   uint32  // when
	prDue    uint32  // when to compute it again (PriorityEvery)
	sends    uint32
	viewFrom uint32
	ackedN   uint32 // newest acknowledged send, valid when > viewFrom
	acked    uint32 // its tick
}

// accAt returns the accumulator at tick.
func (t *track) accAt(tick uint32) float32 {
	if tick <= t.accTick {
		return t.acc
	}
	return t.acc + t.pr*float32(tick-t.accTick)
}

// settle folds the growth up to tick into acc, before pr changes or the
// entity stops waiting.
func (t *track) settle(tick uint32) {
	if tick > t.accTick {
		t.acc += t.pr * float32(tick-t.accTick)
		t.accTick = tick
	}
}

// maxSleep bounds how many ticks a waiting entity is not looked at.
const maxSleep = 64

// sentEntity is one entity of a packet, for its acknowledgement.
type sentEntity struct {
	slot int32
	gen  uint32
	n    uint32
	tick uint32
	full bool
}

// record is what a Peer remembers of a packet it sent.
type record struct {
	seq      uint32
	tick     uint32
	token    uint32 // the packet's ack token
	acked    bool
	ents     []sentEntity
	removals []uint32
}

// removal is an id the client may still hold that it must drop; packets
// from sequence number since on carry it.
type removal struct {
	id      uint32
	since   uint32
	carried uint32 // the last tick a packet carried it
}

// choice is an entity placed in the packet being built: its entry, without
// the id, is bits [off, off+n) of the Peer's scratch writer.
type choice struct {
	slot   int32
	id     uint32
	off, n int
	full   bool
	// refresh: sent in full because its Refresh was due
	refresh bool
	base    uint32 // the baseline's tick, for a delta
	acc     float32
}

// PeerStats counts what a Peer sent.
type PeerStats struct {
	Packets  int   // packets encoded
	Bytes    int64 // their bytes
	Full     int   // entities sent in full
	Delta    int   // entities sent as deltas
	Removals int   // removal entries sent (a removal repeats until acknowledged)
	Acks     int   // packets acknowledged
	BadAcks  int   // acks, or their masks or reports, refused for a token that does not match
	Missing  int   // missing-baseline reports taken (their packets' entities resent in full)
	Refresh  int   // entities sent in full because their Refresh was due
}

// Peer is the server's side of one client: what the client holds of each
// entity, as far as acknowledgements tell, and the packets in flight.
// Create it with Server.NewPeer.
type Peer[E any] struct {
	s       *Server[E]
	cfg     PeerConfig[E]
	hot     []hotTrack
	tracks  []track
	seq     uint32
	recs    []record
	pending []removal
	pendIdx map[uint32]int // id → index in pending

	// The current tick's state.
	tick    uint32
	scanned bool
	packets int      // sent this tick
	hi, lo  candList // candidates at or above the threshold, and below
	// threshold is an accumulator most of the tick's packets will not
	// reach: three quarters of the lowest sent in the last packet.
	threshold float32
	wait      []int32 // this tick's slots the client lacks the current state of
	attend    []int32 // those of them awake
	scanThr   float32 // the threshold this tick's scan used
	loListed  bool    // lo holds this tick's candidates below the threshold
	retry     []cand
	deferred  []cand
	rem       []uint32
	chosen    []choice
	scratch   bits.Writer
	w         bits.Writer
	r         bits.Reader

	// Bandwidth: a token bucket, and the bytes of the last tickRate ticks.
	tokens   float64
	perTick  float64
	window   []int
	wsum     int
	lastTick uint32

	srtt    float64 // smoothed ack delay, in ticks
	stats   PeerStats
	guard   *snapshot.Integrity
	refresh uint32 // ticks; 0: never
}

// NewPeer returns the Peer of a new client, which holds nothing yet.
func (s *Server[E]) NewPeer(cfg PeerConfig[E]) (*Peer[E], error) {
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.Budget < MinBudget {
		return nil, fmt.Errorf("replicate: budget %d bytes, under the minimum %d", cfg.Budget, MinBudget)
	}
	if cfg.Bandwidth < 0 {
		return nil, errors.New("replicate: negative bandwidth")
	}
	guard, err := snapshot.NewIntegrity(cfg.Integrity, cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	if cfg.Budget < MinBudget+guard.Overhead() {
		return nil, fmt.Errorf("replicate: budget %d bytes, under the minimum %d with a %v trailer", cfg.Budget, MinBudget+guard.Overhead(), cfg.Integrity)
	}
	cfg.Key = nil // the guard holds its copy
	p := &Peer[E]{s: s, cfg: cfg, recs: make([]record, recordRing), pendIdx: make(map[uint32]int), srtt: 3, guard: guard}
	switch {
	case cfg.Refresh > 0:
		p.refresh = uint32(cfg.Refresh)
	case cfg.Refresh == 0:
		p.refresh = uint32(DefaultRefreshSeconds * s.cfg.tickRate)
	}
	if cfg.Bandwidth > 0 {
		p.perTick = float64(cfg.Bandwidth) / float64(s.cfg.tickRate)
		p.window = make([]int, s.cfg.tickRate)
		p.tokens = p.perTick
	}
	s.peers = append(s.peers, p)
	return p, nil
}

// RemovePeer forgets p (a client that left). p must not be used again.
func (s *Server[E]) RemovePeer(p *Peer[E]) {
	if i := slices.Index(s.peers, p); i >= 0 {
		s.peers = slices.Delete(s.peers, i, i+1)
	}
}

// Stats returns the Peer's counters.
func (p *Peer[E]) Stats() PeerStats { return p.stats }

// Pending returns the number of removals not yet acknowledged.
func (p *Peer[E]) Pending() int { return len(p.pending) }

// forget is the Server's Remove of slot's incarnation gen, id: the client
// must drop it if it may hold it.
func (p *Peer[E]) forget(slot int32, gen uint32, id uint32) {
	if int(slot) >= len(p.tracks) {
		return
	}
	h, t := &p.hot[slot], &p.tracks[slot]
	if h.gen == gen && t.sends > t.viewFrom {
		p.addRemoval(id)
	}
	*h, *t = hotTrack{}, track{}
}

func (p *Peer[E]) addRemoval(id uint32) {
	if i, ok := p.pendIdx[id]; ok {
		p.pending[i].since, p.pending[i].carried = p.seq+1, 0
		return
	}
	p.pendIdx[id] = len(p.pending)
	p.pending = append(p.pending, removal{id: id, since: p.seq + 1})
}

func (p *Peer[E]) dropRemoval(id uint32) {
	i, ok := p.pendIdx[id]
	if !ok {
		return
	}
	last := len(p.pending) - 1
	if i != last {
		p.pending[i] = p.pending[last]
		p.pendIdx[p.pending[i].id] = i
	}
	p.pending = p.pending[:last]
	delete(p.pendIdx, id)
}

// Ack takes a client's acknowledgement. Acks may arrive late, twice or out
// of order; sequence numbers never sent, or too old for the Peer to
// remember (more than 256 packets back), are ignored. Each part of the ack
// is taken only when its token matches the packets the Peer sent (see
// Ack): a part that does not match changes nothing, and Ack returns
// ErrBadAck (the parts that match are still taken). A missing-baseline
// report that matches makes every entity of that packet go in full next.
func (p *Peer[E]) Ack(a Ack) error {
	var bad error
	if a.Seq != 0 {
		if rec := p.record(a.Seq); rec != nil && rec.token == a.Token {
			p.ack(rec)
		} else {
			bad = fmt.Errorf("%w: packet %d: wrong token or not sent", ErrBadAck, a.Seq)
		}
	}
	if a.Mask != 0 {
		var x uint32
		ok := a.Seq > ackWindow || a.Mask>>(a.Seq-1) == 0 // names no packet before 1
		for i := uint32(0); ok && i < ackWindow; i++ {
			if a.Mask&(1<<i) != 0 {
				rec := p.record(a.Seq - 1 - i)
				ok = rec != nil
				if ok {
					x ^= rec.token
				}
			}
		}
		if ok && x == a.MaskToken {
			for i := uint32(0); i < ackWindow; i++ {
				if a.Mask&(1<<i) != 0 {
					p.ack(p.record(a.Seq - 1 - i))
				}
			}
		} else if bad == nil {
			bad = fmt.Errorf("%w: the mask of packet %d: wrong token or not sent", ErrBadAck, a.Seq)
		}
	}
	if a.Missing != 0 {
		if rec := p.record(a.Missing); rec != nil && rec.token == a.MissingToken {
			p.missingBaseline(rec)
		} else if bad == nil {
			bad = fmt.Errorf("%w: missing-baseline report of packet %d: wrong token or not sent", ErrBadAck, a.Missing)
		}
	}
	if bad != nil {
		p.stats.BadAcks++
	}
	return bad
}

// record returns the record of packet seq, or nil when the Peer did not
// send it or no longer remembers it.
func (p *Peer[E]) record(seq uint32) *record {
	if seq == 0 || seq > p.seq {
		return nil
	}
	rec := &p.recs[seq%recordRing]
	if rec.seq != seq {
		return nil
	}
	return rec
}

func (p *Peer[E]) ack(rec *record) {
	if rec.acked {
		return
	}
	seq := rec.seq
	rec.acked = true
	p.stats.Acks++
	for _, e := range rec.ents {
		if int(e.slot) >= len(p.tracks) {
			continue
		}
		h, t := &p.hot[e.slot], &p.tracks[e.slot]
		if h.gen != e.gen || e.n <= t.viewFrom {
			continue
		}
		if e.n > t.ackedN {
			t.ackedN, t.acked = e.n, e.tick
			h.have = e.tick
		}
		if e.full && p.refresh != 0 {
			h.due = max(h.due, e.tick+p.refresh)
		}
	}
	for _, id := range rec.removals {
		if i, ok := p.pendIdx[id]; ok && p.pending[i].since <= seq {
			p.dropRemoval(id)
		}
	}
	if d := float64(p.s.tick - rec.tick); d >= 0 && d < 1<<20 {
		p.srtt += (d - p.srtt) / 8
	}
}

// missingBaseline takes a client's report that it lacked a baseline of
// packet rec: the entities of rec go in full next, as if the client held
// nothing of them (it holds a view, so removals still reach it).
func (p *Peer[E]) missingBaseline(rec *record) {
	if rec.acked {
		return // the client accepted it after all (a stale report)
	}
	p.stats.Missing++
	for _, e := range rec.ents {
		if int(e.slot) >= len(p.tracks) {
			continue
		}
		h, t := &p.hot[e.slot], &p.tracks[e.slot]
		if h.gen != e.gen {
			continue
		}
		// No acknowledged send of this incarnation counts as a baseline
		// any more (ackedN = sends), nor keeps it held (have = 0); the
		// next send is full.
		h.have, h.flight, h.due = 0, 0, 0
		t.ackedN = t.sends
	}
}

// resendAfter is how many ticks an entity's state, once sent, is left
// alone while its acknowledgement may still come.
func (p *Peer[E]) resendAfter() uint32 { return uint32(p.srtt*1.5) + 1 }

// scan runs once per tick, at the tick's first Encode: it raises the
// accumulators of the entities the client lacks the current state of, and
// lists them as candidates.
func (p *Peer[E]) scan() {
	s := p.s
	tick := s.tick
	if n := len(s.gens); len(p.tracks) < n {
		p.tracks = slices.Grow(p.tracks, n-len(p.tracks))[:n]
		p.hot = slices.Grow(p.hot, n-len(p.hot))[:n]
	}
	p.hi.reset()
	p.lo.reset()
	p.retry = p.retry[:0]
	resend := p.resendAfter()
	prio, relevant := p.cfg.Priority, p.cfg.Relevant
	every := uint32(max(p.cfg.PriorityEvery, 1))
	thr := p.threshold
	p.scanThr = thr
	n := len(s.gens)
	hot, tracks := p.hot[:n], p.tracks[:n]
	changed, ids, cur := s.changed[:n], s.ids[:n], s.cur[:n]
	if relevant != nil {
		p.applyRelevance(relevant, tick, every)
	}
	p.wait, p.attend = scanSlots(s.gens, changed, hot, tracks, tick, resend, every, p.wait, p.attend)
	// The entities that are awake: their priority when it is due, their
	// accumulator against the threshold.
	for _, slot := range p.attend {
		h, t := &hot[slot], &tracks[slot]
		ch := changed[slot]
		if prio == nil {
			t.pr = 1
		} else if t.prTick <= ch || tick >= t.prDue {
			t.settle(tick - 1)
			t.pr = max(prio(ids[slot], &cur[slot]), 0)
			t.prTick, t.prDue = tick, tick+every
		}
		acc := t.accAt(tick)
		h.seen = tick
		if acc >= thr {
			p.hi.list = append(p.hi.list, cand{slot: slot, acc: acc})
			continue
		}
		// Below the threshold: it sleeps for half the ticks it needs to
		// reach it, so that a threshold that falls meanwhile costs it at
		// most that much of a delay.
		h.wake = 0
		if need := (thr - acc) / max(t.pr, 1e-9); need >= 4 {
			h.wake = tick + uint32(min(need/2, maxSleep))
		}
	}
	p.loListed = false
	if p.window != nil {
		// Ticks that left the one-second window give their bytes back.
		gone := min(int(tick-p.lastTick), len(p.window))
		if p.lastTick == 0 {
			gone = len(p.window)
		}
		for k := 0; k < gone; k++ {
			i := int((tick - uint32(k)) % uint32(len(p.window)))
			p.wsum -= p.window[i]
			p.window[i] = 0
		}
		p.tokens = min(p.tokens+p.perTick*float64(max(gone, 1)), 2*p.perTick+float64(p.cfg.Budget))
	}
	p.lastTick = tick
}

// scanSlots is the scan's pass over every entity slot: plain code over
// plain slices, with no call in its loop (a call would make the compiler
// keep the loop's values in memory), writing into lists grown up front. It
// lists in wait every entity the client lacks the current state of, and in
// attend those of them that are awake (see Peer.scan); it starts and stops
// the waiting of entities, and resets the tracks of new incarnations.
func scanSlots(gens, changed []uint32, hot []hotTrack, tracks []track, tick, resend, every uint32, wait, attend []int32) ([]int32, []int32) {
	n := len(gens)
	wait = slices.Grow(wait[:0], n)[:n]
	attend = slices.Grow(attend[:0], n)[:n]
	nw, na := 0, 0
	hot, tracks, changed = hot[:n], tracks[:n], changed[:n]
	for slot := 0; slot < n; slot++ {
		gen := gens[slot]
		if gen == 0 {
			continue
		}
		h := &hot[slot]
		if h.gen != gen {
			*h = hotTrack{gen: gen}
			tracks[slot] = track{prDue: tick + uint32(slot)%every}
		}
		// Ticks start at 1, so a have or flight of 0 is never current; a
		// due of 0 is never reached.
		ch := changed[slot]
		if (h.have >= ch && (tick < h.due || h.due == 0)) || (h.flight >= ch && tick-h.flight <= resend) || h.out {
			if h.waiting { // it stops waiting: its accumulator stops growing
				h.waiting = false
				t := &tracks[slot]
				if tick-1 > t.accTick {
					t.acc += t.pr * float32(tick-1-t.accTick)
					t.accTick = tick - 1
				}
			}
			continue // held, on its way, or not relevant
		}
		wait[nw] = int32(slot)
		nw++
		if !h.waiting {
			h.waiting, h.wake = true, 0
			tracks[slot].accTick = tick - 1
		} else if tick < h.wake {
			// Asleep: its accumulator, growing by its priority, cannot
			// have reached the threshold yet. (A change does not wake it:
			// in a busy world most entities change every few ticks, and
			// its priority is computed again when it wakes.)
			continue
		}
		attend[na] = int32(slot)
		na++
	}
	return wait[:nw], attend[:na]
}

// candList is candidates of one tick, put in priority order a chunk at a
// time as they are taken.
type candList struct {
	list    []cand
	next    int // list[:next] are taken
	ordered int // list[:ordered] are in priority order
}

func (l *candList) reset() { l.list, l.next, l.ordered = l.list[:0], 0, 0 }

func (l *candList) take() (cand, bool) {
	if l.next >= len(l.list) {
		return cand{}, false
	}
	if l.next == l.ordered {
		orderTop(l.list[l.next:], chunk)
		l.ordered = min(l.next+chunk, len(l.list))
	}
	c := l.list[l.next]
	l.next++
	return c, true
}

// applyRelevance asks Relevant about every entity: one that stops being
// relevant is removed from the client's view (reliably, like a removal),
// and marked out so that the scan passes over it.
func (p *Peer[E]) applyRelevance(relevant func(uint32, *E) bool, tick, every uint32) {
	s := p.s
	for slot, gen := range s.gens {
		if gen == 0 {
			continue
		}
		h, t := &p.hot[slot], &p.tracks[slot]
		if h.gen != gen {
			*h = hotTrack{gen: gen}
			*t = track{prDue: tick + uint32(slot)%every}
		}
		h.out = !relevant(s.ids[slot], &s.cur[slot])
		if h.out {
			if t.sends > t.viewFrom {
				p.addRemoval(s.ids[slot])
				t.viewFrom = t.sends
				h.have, h.flight = 0, 0
			}
			t.acc, t.accTick, h.waiting = 0, tick, false
		}
	}
}

// nextCand returns the next candidate in priority order: first those that
// did not fit the previous packet of this tick, then those at or above the
// threshold, then the others (listed only when those run out). The
// threshold spares ordering the many candidates that no packet of the tick
// will reach.
func (p *Peer[E]) nextCand(retried *int) (cand, bool) {
	if *retried < len(p.retry) {
		c := p.retry[*retried]
		*retried++
		return c, true
	}
	if c, ok := p.hi.take(); ok {
		return c, true
	}
	if !p.loListed {
		p.listLow()
	}
	return p.lo.take()
}

// listLow lists the candidates of the tick below the threshold, which scan
// left out: needed only when the packets of the tick take every candidate
// above it.
func (p *Peer[E]) listLow() {
	p.loListed = true
	s := p.s
	// The threshold of this tick's scan, not the current one: a candidate
	// at or above it is in hi (or retry) already. Those sent by an earlier
	// packet of this tick are in flight now.
	tick, thr := s.tick, p.scanThr
	for _, slot := range p.wait {
		h := &p.hot[slot]
		if h.flight == tick {
			continue
		}
		acc := p.tracks[slot].accAt(tick)
		if h.seen == tick && acc >= thr {
			continue // in hi
		}
		p.lo.list = append(p.lo.list, cand{slot: slot, acc: acc})
	}
}

// maxSkips is how many candidates that do not fit a packet are passed
// over, in favour of smaller ones, before the packet is closed.
const maxSkips = 8

// Encode appends to dst the Peer's next packet of the current tick and
// returns it; ok is false, and dst is returned unchanged, when there is
// nothing (more) to send this tick, or the bandwidth budget allows no
// more. Call it until ok is false (once, without a Bandwidth).
//
// The packet holds, in this order, the pending removals (at most half the
// budget), then the entities of highest priority that fit: each a delta
// against the newest state the client acknowledged, or in full. Every
// packet is at most Budget bytes. After the first Encode of a tick, the
// tick's entities are frozen (Set and Remove fail until Advance); Peers
// may encode concurrently.
func (p *Peer[E]) Encode(dst []byte) (out []byte, ok bool, err error) {
	s := p.s
	if !s.started {
		return dst, false, fmt.Errorf("%w: Encode before the first Advance", ErrTickOrder)
	}
	if !s.sealed.Load() {
		s.sealed.Store(true)
	}
	if !p.scanned || p.tick != s.tick {
		p.tick, p.scanned, p.packets = s.tick, true, 0
		p.scan()
	}
	limitBytes := p.cfg.Budget
	if p.window == nil && p.packets > 0 {
		return dst, false, nil // one packet a tick
	}
	if p.window != nil {
		// A packet waits for room for a whole tick's share (or a full
		// packet, when that is less): a remainder sent as a small packet of
		// its own would spend more on headers.
		room := min(int(p.tokens), p.cfg.Bandwidth-p.wsum)
		if room < max(MinBudget, min(p.cfg.Budget, int(p.perTick))) {
			return dst, false, nil
		}
		limitBytes = min(limitBytes, room)
	}
	limit := (limitBytes - p.guard.Overhead()) * 8
	// The two end-of-list bits and the common-baseline bit. The common
	// baseline itself is free: it is named only when a delta refers to
	// it, and that delta then saves more than it costs (1 bit instead of
	// 2 plus the distance costed below).
	used := headerBits + 3

	// Removals first: they are small and must not wait behind priorities.
	p.rem = p.rem[:0]
	if len(p.pending) > 0 {
		for _, r := range p.pending {
			if r.carried != s.tick { // once a tick is enough
				p.rem = append(p.rem, r.id)
			}
		}
		slices.Sort(p.rem)
		prev := int64(-1)
		for i, id := range p.rem {
			c := idBits(uint32(int64(id) - prev - 1))
			if used+c > headerBits+(limit-headerBits)/2 {
				p.rem = p.rem[:i]
				break
			}
			used += c
			prev = int64(id)
		}
	}

	// Entities by priority, each written to scratch; its id is costed at
	// the id itself, which no gap exceeds.
	p.scratch.Reset(p.scratch.Bytes()[:0])
	p.chosen = p.chosen[:0]
	retried, skips := 0, 0
	deferred := p.deferred[:0]
	for skips < maxSkips {
		c, more := p.nextCand(&retried)
		if !more {
			break
		}
		ent := &s.ents[c.slot]
		h, t := &p.hot[c.slot], &p.tracks[c.slot]
		off := p.scratch.Len()
		var base *E
		refresh := h.due != 0 && s.tick >= h.due
		if h.have != 0 && t.sends-t.ackedN < BaselineDepth && t.acked < s.tick && !refresh {
			base = ent.at(t.acked)
		}
		// The body goes to scratch; its kind (and baseline) is written when
		// the packet is assembled, and costed here at its longest form.
		kindBits := 2
		if base != nil {
			kindBits = 2 + fields.BitlenBits(uint64(s.tick-t.acked-1), distWidth)
			if err := s.c.EncodeDelta(&p.scratch, base, &ent.newest().val); err != nil {
				return dst, false, fmt.Errorf("replicate: id %d: %w", ent.id, err)
			}
		} else {
			copyBits(&p.scratch, &p.r, ent.full, 0, ent.nbits)
		}
		n := p.scratch.Len() - off
		cost := idBits(ent.id) + kindBits + n
		if used+cost > limit {
			p.scratch.Truncate(off)
			deferred = append(deferred, c)
			skips++
			continue
		}
		used += cost
		p.chosen = append(p.chosen, choice{slot: c.slot, id: ent.id, off: off, n: n, full: base == nil, refresh: refresh, base: t.acked, acc: c.acc})
	}
	if len(p.chosen) > 0 {
		low := p.chosen[0].acc
		for _, ch := range p.chosen {
			low = min(low, ch.acc)
		}
		p.threshold = low * 0.75
	}
	p.retry = append(p.retry[:0], p.retry[retried:]...)
	p.retry = append(p.retry, deferred...)
	p.deferred = deferred[:0]
	if len(p.chosen) == 0 && len(p.rem) == 0 {
		return dst, false, nil
	}

	// A full state replaces whatever the client holds of the id, so a
	// removal still pending for it (an earlier incarnation, or the view
	// before it was irrelevant) is carried by this packet and then
	// dropped; were it repeated later, it would remove the new state.
	slices.SortFunc(p.chosen, func(a, b choice) int { return cmpID(a.id, b.id) })
	for i := 1; i < len(p.chosen); i++ {
		if p.chosen[i].id == p.chosen[i-1].id {
			return dst, false, fmt.Errorf("replicate: internal: id %d chosen twice for one packet", p.chosen[i].id)
		}
	}
	if len(p.pending) > 0 {
		for _, ch := range p.chosen {
			if _, ok := p.pendIdx[ch.id]; ok && ch.full {
				p.dropRemoval(ch.id)
				if i, found := slices.BinarySearch(p.rem, ch.id); found {
					p.rem = slices.Delete(p.rem, i, i+1)
				}
			}
		}
	}

	p.seq++
	seq := p.seq
	start := len(dst)
	p.w.ResetAppend(dst)
	defer p.w.ResetAppend(nil)
	writeHeader(&p.w, Header{Fingerprint: s.fp, Seq: seq, Tick: s.tick, Integrity: p.guard.Mode()})
	prev := int64(-1)
	for _, id := range p.rem {
		writeID(&p.w, id, &prev)
	}
	p.w.WriteBool(false)
	common, hasCommon := p.commonBase()
	p.w.WriteBool(hasCommon)
	if hasCommon {
		fields.WriteBitlen(&p.w, uint64(s.tick-common-1), distWidth)
	}
	prev = -1
	src := p.scratch.Bytes()
	for _, ch := range p.chosen {
		writeID(&p.w, ch.id, &prev)
		switch {
		case ch.full:
			p.w.WriteBits(0b00, 2)
		case hasCommon && ch.base == common:
			p.w.WriteBool(true)
		default:
			p.w.WriteBits(0b10, 2) // 0, then 1, low bit first
			fields.WriteBitlen(&p.w, uint64(s.tick-ch.base-1), distWidth)
		}
		copyBits(&p.w, &p.r, src, ch.off, ch.n)
	}
	p.w.WriteBool(false)
	out, token := p.guard.Seal(p.w.Bytes(), start)
	size := len(out) - start
	if size > limitBytes {
		return dst, false, fmt.Errorf("replicate: internal: packet of %d bytes over the limit %d", size, limitBytes)
	}

	rec := &p.recs[seq%recordRing]
	rec.seq, rec.tick, rec.token, rec.acked = seq, s.tick, token, false
	rec.ents = rec.ents[:0]
	rec.removals = append(rec.removals[:0], p.rem...)
	for _, ch := range p.chosen {
		h, t := &p.hot[ch.slot], &p.tracks[ch.slot]
		t.sends++
		t.acc, t.accTick, h.waiting = 0, s.tick, false
		h.flight = s.tick
		rec.ents = append(rec.ents, sentEntity{slot: ch.slot, gen: h.gen, n: t.sends, tick: s.tick, full: ch.full})
		if ch.refresh {
			p.stats.Refresh++
		}
		if ch.full {
			p.stats.Full++
		} else {
			p.stats.Delta++
		}
	}
	for _, id := range p.rem {
		p.pending[p.pendIdx[id]].carried = s.tick
	}
	p.packets++
	p.stats.Packets++
	p.stats.Bytes += int64(size)
	p.stats.Removals += len(p.rem)
	if p.window != nil {
		p.tokens -= float64(size)
		p.window[s.tick%uint32(len(p.window))] += size
		p.wsum += size
	}
	return out, true, nil
}

// commonBase returns the baseline tick the packet names once, so that each
// delta against it takes one bit: the majority of the deltas' baselines
// when there is one (Boyer and Moore's vote, one pass), else the vote's
// last candidate, which still serves some.
func (p *Peer[E]) commonBase() (uint32, bool) {
	var cand uint32
	n, any := 0, false
	for _, ch := range p.chosen {
		if ch.full {
			continue
		}
		any = true
		switch {
		case n == 0:
			cand, n = ch.base, 1
		case ch.base == cand:
			n++
		default:
			n--
		}
	}
	if any && n == 0 {
		// No majority: take the first delta's baseline.
		for _, ch := range p.chosen {
			if !ch.full {
				return ch.base, true
			}
		}
	}
	return cand, any
}

func cmpID(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
