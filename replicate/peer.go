package replicate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
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
	// Bandwidth, in bytes per second, when not 0: the Peer sends as many
	// packets a tick as it allows, each at most Budget bytes, and over any
	// tick-rate consecutive ticks (one second at the Server's WithTickRate)
	// never more than Bandwidth bytes. When 0, one packet a tick.
	Bandwidth int
}

// track is a Peer's knowledge of one entity slot. A send is counted from 1
// per incarnation; the client's current view of the entity began after
// send viewFrom (sends before it were undone by a removal).
type track struct {
	acc      float32
	gen      uint32 // the incarnation this track is about
	sends    uint32 // sends of this incarnation
	viewFrom uint32
	ackedN   uint32 // newest acknowledged send, valid when > viewFrom
	acked    uint32 // its tick
	sentTick uint32 // tick of the last send
}

// sentEntity is one entity of a packet, for its acknowledgement.
type sentEntity struct {
	slot int32
	gen  uint32
	n    uint32
	tick uint32
}

// record is what a Peer remembers of a packet it sent.
type record struct {
	seq      uint32
	tick     uint32
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
}

// PeerStats counts what a Peer sent.
type PeerStats struct {
	Packets  int   // packets encoded
	Bytes    int64 // their bytes
	Full     int   // entities sent in full
	Delta    int   // entities sent as deltas
	Removals int   // removal entries sent (a removal repeats until acknowledged)
	Acks     int   // packets acknowledged
}

// Peer is the server's side of one client: what the client holds of each
// entity, as far as acknowledgements tell, and the packets in flight.
// Create it with Server.NewPeer.
type Peer[E any] struct {
	s       *Server[E]
	cfg     PeerConfig[E]
	tracks  []track
	seq     uint32
	recs    []record
	pending []removal
	pendIdx map[uint32]int // id → index in pending

	// The current tick's state.
	tick     uint32
	scanned  bool
	packets  int // sent this tick
	cands    []cand
	next     int // cands[:next] are taken (sent or retried)
	ordered  int // cands[:ordered] are in priority order
	retry    []cand
	deferred []cand
	rem      []uint32
	chosen   []choice
	scratch  bits.Writer
	w        bits.Writer
	r        bits.Reader

	// Bandwidth: a token bucket, and the bytes of the last tickRate ticks.
	tokens   float64
	perTick  float64
	window   []int
	wsum     int
	lastTick uint32

	srtt  float64 // smoothed ack delay, in ticks
	stats PeerStats
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
	p := &Peer[E]{s: s, cfg: cfg, recs: make([]record, recordRing), pendIdx: make(map[uint32]int), srtt: 3}
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
	t := &p.tracks[slot]
	if t.gen == gen && t.sends > t.viewFrom {
		p.addRemoval(id)
	}
	*t = track{}
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
// remember (more than 1024 packets back), are ignored.
func (p *Peer[E]) Ack(a Ack) {
	p.ack(a.Seq)
	for i := 0; i < ackWindow; i++ {
		if a.Mask&(1<<uint(i)) != 0 && a.Seq > uint32(i)+1 {
			p.ack(a.Seq - 1 - uint32(i))
		}
	}
}

func (p *Peer[E]) ack(seq uint32) {
	if seq == 0 || seq > p.seq {
		return
	}
	rec := &p.recs[seq%recordRing]
	if rec.seq != seq || rec.acked {
		return
	}
	rec.acked = true
	p.stats.Acks++
	for _, e := range rec.ents {
		if int(e.slot) >= len(p.tracks) {
			continue
		}
		t := &p.tracks[e.slot]
		if t.gen == e.gen && e.n > t.viewFrom && e.n > t.ackedN {
			t.ackedN, t.acked = e.n, e.tick
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
	}
	p.cands, p.retry = p.cands[:0], p.retry[:0]
	p.next, p.ordered = 0, 0
	resend := p.resendAfter()
	prio, relevant := p.cfg.Priority, p.cfg.Relevant
	tracks := p.tracks[:len(s.gens)]
	for slot, gen := range s.gens {
		if gen == 0 {
			continue
		}
		t := &tracks[slot]
		if t.gen != gen {
			*t = track{gen: gen}
		}
		if relevant != nil {
			ent := &s.ents[slot]
			if !relevant(ent.id, &ent.newest().val) {
				if t.sends > t.viewFrom {
					p.addRemoval(ent.id)
					t.viewFrom = t.sends
				}
				t.acc = 0
				continue
			}
		}
		ch := s.changed[slot]
		if t.ackedN > t.viewFrom && t.acked >= ch {
			continue // the client holds the current state
		}
		if t.sends > t.viewFrom && t.sentTick >= ch && tick-t.sentTick <= resend {
			continue // the current state is on its way
		}
		pr := float32(1)
		if prio != nil {
			ent := &s.ents[slot]
			pr = max(prio(ent.id, &ent.newest().val), 0)
		}
		t.acc += pr
		p.cands = append(p.cands, cand{slot: int32(slot), acc: t.acc})
	}
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

// nextCand returns the next candidate in priority order: first those that
// did not fit the previous packet of this tick, then the rest.
func (p *Peer[E]) nextCand(retried *int) (cand, bool) {
	if *retried < len(p.retry) {
		c := p.retry[*retried]
		*retried++
		return c, true
	}
	if p.next >= len(p.cands) {
		return cand{}, false
	}
	if p.next == p.ordered {
		orderTop(p.cands[p.next:], chunk)
		p.ordered = min(p.next+chunk, len(p.cands))
	}
	c := p.cands[p.next]
	p.next++
	return c, true
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
		room := min(int(p.tokens), p.cfg.Bandwidth-p.wsum)
		if room < MinBudget {
			return dst, false, nil
		}
		limitBytes = min(limitBytes, room)
	}
	limit := limitBytes * 8
	used := headerBits + 2 // the two end-of-list bits

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
		t := &p.tracks[c.slot]
		off := p.scratch.Len()
		var base *E
		if t.ackedN > t.viewFrom && t.sends-t.ackedN < BaselineDepth && t.acked < s.tick {
			base = ent.at(t.acked)
		}
		if base != nil {
			p.scratch.WriteBool(true)
			fields.WriteBitlen(&p.scratch, uint64(s.tick-t.acked-1), distWidth)
			if err := s.c.EncodeDelta(&p.scratch, base, &ent.newest().val); err != nil {
				return dst, false, fmt.Errorf("replicate: id %d: %w", ent.id, err)
			}
		} else {
			p.scratch.WriteBool(false)
			copyBits(&p.scratch, &p.r, ent.full, 0, ent.nbits)
		}
		n := p.scratch.Len() - off
		cost := idBits(ent.id) + n
		if used+cost > limit {
			p.scratch.Truncate(off)
			deferred = append(deferred, c)
			skips++
			continue
		}
		used += cost
		p.chosen = append(p.chosen, choice{slot: c.slot, id: ent.id, off: off, n: n, full: base == nil})
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
	writeHeader(&p.w, Header{Fingerprint: s.fp, Seq: seq, Tick: s.tick})
	prev := int64(-1)
	for _, id := range p.rem {
		writeID(&p.w, id, &prev)
	}
	p.w.WriteBool(false)
	prev = -1
	src := p.scratch.Bytes()
	for _, ch := range p.chosen {
		writeID(&p.w, ch.id, &prev)
		copyBits(&p.w, &p.r, src, ch.off, ch.n)
	}
	p.w.WriteBool(false)
	out = p.w.Bytes()
	size := len(out) - start
	if size > limitBytes {
		return dst, false, fmt.Errorf("replicate: internal: packet of %d bytes over the limit %d", size, limitBytes)
	}

	rec := &p.recs[seq%recordRing]
	rec.seq, rec.tick, rec.acked = seq, s.tick, false
	rec.ents = rec.ents[:0]
	rec.removals = append(rec.removals[:0], p.rem...)
	for _, ch := range p.chosen {
		t := &p.tracks[ch.slot]
		t.sends++
		t.sentTick = s.tick
		t.acc = 0
		rec.ents = append(rec.ents, sentEntity{slot: ch.slot, gen: t.gen, n: t.sends, tick: s.tick})
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

func cmpID(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
