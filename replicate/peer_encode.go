package replicate

import (
	"fmt"
	"slices"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

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
//
// It runs in phases: the tick's scan (at its first Encode), the room the
// budgets leave (room), the removals (takeRemovals), the entities by
// priority (choose), the lists that size the packet exactly (fit), the
// bytes (assemble), and what the acknowledgements will need (remember).
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
	limitBytes, open := p.room()
	if !open {
		return dst, false, nil
	}
	limit := (limitBytes - p.guard.Overhead()) * 8
	// The counts of the three lists (when empty) and the common-baseline
	// bit. The common baseline itself is free: it is named only when a
	// delta refers to it, and that delta then saves more than it costs.
	used := headerBits + 3*countBits(0) + 1
	used = p.takeRemovals(used, limit)
	bodies, err := p.choose(used, limit)
	if err != nil {
		return dst, false, err
	}
	if len(p.chosen) == 0 && len(p.rem) == 0 {
		return dst, false, nil
	}
	lists, err := p.fit(bodies, limit)
	if err != nil {
		return dst, false, err
	}
	if len(p.chosen) == 0 && len(p.remOut) == 0 {
		return dst, false, nil
	}
	p.dropCarried()
	out, token, err := p.assemble(dst, lists, limitBytes)
	if err != nil {
		return dst, false, err
	}
	p.remember(token, len(out)-len(dst))
	return out, true, nil
}

// room returns the largest packet the budgets allow now, in bytes, and
// false when no packet goes now: one was sent this tick already without
// a bandwidth budget, or the bandwidth budget lacks room.
func (p *Peer[E]) room() (int, bool) {
	limitBytes := p.cfg.Budget
	if p.window == nil {
		return limitBytes, p.packets == 0 // one packet a tick
	}
	// A packet waits for room for a whole tick's share (or a full
	// packet, when that is less): a remainder sent as a small packet of
	// its own would spend more on headers.
	room := min(int(p.tokens), p.cfg.Bandwidth-p.wsum)
	if room < max(MinBudget, min(p.cfg.Budget, int(p.perTick))) {
		return 0, false
	}
	return min(limitBytes, room), true
}

// takeRemovals lists in p.rem the pending removals the packet carries
// (sorted, at most half the room, and each once a tick: they are small
// and must not wait behind priorities), and returns used, the bits
// spent so far, with theirs.
func (p *Peer[E]) takeRemovals(used, limit int) int {
	p.rem = p.rem[:0]
	if len(p.pending) == 0 {
		return used
	}
	for _, r := range p.pending {
		if r.carried != p.s.tick { // once a tick is enough
			p.rem = append(p.rem, r.id)
		}
	}
	slices.Sort(p.rem)
	q := newIDSeq()
	for i, id := range p.rem {
		c := q.bits(id)
		if used+c > headerBits+(limit-headerBits)/2 {
			p.rem = p.rem[:i]
			break
		}
		used += c
	}
	return used + countBits(len(p.rem)) - countBits(0)
}

// choose lists in p.chosen the entities of highest priority that fit in
// limit bits besides used, and returns the bits of their bodies. Each is
// costed at an estimate of its entry (id and kind, whose exact size
// depends on the whole list) plus its body: a delta, written to scratch,
// or its full encoding, copied when the packet is assembled. Those that
// do not fit are passed over (up to maxSkips) and retried first by the
// tick's next packet.
func (p *Peer[E]) choose(used, limit int) (bodies int, err error) {
	p.scratch.Reset(p.scratch.Bytes()[:0])
	p.chosen = p.chosen[:0]
	retried, skips := 0, 0
	deferred := p.deferred[:0]
	for skips < maxSkips {
		c, more := p.nextCand(&retried)
		if !more {
			break
		}
		ch, err := p.body(c)
		if err != nil {
			return 0, err
		}
		cost := p.entryBits + int(ch.n)
		if used+cost > limit {
			if p.oversize(p.s.ents[c.slot()].id, int(ch.n)) {
				p.stats.Oversize++
			}
			p.scratch.Truncate(int(ch.off))
			deferred = append(deferred, c)
			skips++
			continue
		}
		used += cost
		bodies += int(ch.n)
		p.chosen = append(p.chosen, ch)
	}
	if len(p.chosen) > 0 {
		low := p.chosen[0].acc
		for _, ch := range p.chosen {
			low = min(low, ch.acc)
		}
		p.threshold = low * 0.75
		p.cut = low
	}
	p.retry = append(p.retry[:0], p.retry[retried:]...)
	p.retry = append(p.retry, deferred...)
	p.deferred = deferred[:0]
	return bodies, nil
}

// body returns candidate c as a choice: a delta against the newest state
// the client acknowledged and still holds (written to scratch, or copied
// there from the tick's shared deltas), or its full encoding when there
// is none, or its Refresh is due.
func (p *Peer[E]) body(c cand) (choice, error) {
	s := p.s
	slot := c.slot()
	ent := &s.ents[slot]
	h, t := &p.hot[slot], &p.tracks[slot]
	off := p.scratch.Len()
	var base *version[E]
	refresh := h.due != 0 && s.tick >= h.due
	if h.have != 0 && t.sends-t.ackedN < BaselineDepth && t.acked < s.tick && !refresh {
		base = ent.at(t.acked)
	}
	n := ent.nbits
	var older *version[E]
	if base != nil {
		key := deltaKey{base: base.tick}
		if s.pred {
			older, key.dist = p.older(slot, t, ent)
			if older != nil {
				key.older = older.tick
			}
		}
		// Another Peer's client may hold the same baselines: its delta is
		// this one (only with several Peers is it worth the lookups).
		shared := len(s.peers) > 1
		var ok bool
		if shared {
			n, ok = s.deltas.lookup(&p.scratch, s.tick, slot, key)
		}
		if !ok {
			if err := p.writeDelta(ent, base, older, key.dist); err != nil {
				return choice{}, fmt.Errorf("replicate: id %d: %w", ent.id, err)
			}
			n = p.scratch.Len() - off
			if shared {
				s.deltas.store(s.tick, slot, key, p.scratch.Bytes(), off, n)
			}
		}
	}
	return choice{slot: slot, id: ent.id, off: int32(off), n: int32(n), full: base == nil, refresh: refresh, pred: older != nil, base: t.acked, acc: c.acc()}, nil
}

// older returns the older baseline of a predicting codec's delta against
// the client's newest acknowledged state (wire-format.md, "Replication
// packets", Body), and how many ticks the packet that brought it to the
// client is before the baseline's packet: the client holds its states by
// those ticks, and an entity that did not change between the two packets
// has one version for both. It is the acknowledged send before the
// baseline, if the client still holds it (fewer than BaselineDepth sends
// since), the server still has it, and it is less than twice as far
// before the baseline as the baseline is before this tick (a prediction
// from further back would be worse than none at constant velocity); nil
// otherwise. Only a codec with pred values calls it.
func (p *Peer[E]) older(slot int32, t *track, ent *entity[E]) (*version[E], uint32) {
	s := p.s
	prev := p.prev[slot]
	if prev.n <= t.viewFrom || t.sends-prev.n >= BaselineDepth {
		return nil, 0
	}
	d, ahead := t.acked-prev.tick, s.tick-t.acked
	if prev.tick >= t.acked || d >= 2*ahead || d > 1<<31 { // d - 1 must fit the bitlen
		return nil, 0
	}
	v := ent.at(prev.tick)
	if v == nil {
		return nil, 0
	}
	return v, d
}

// writeDelta writes to scratch the delta body of ent against base: for a
// predicting codec, first whether it is predicted from older (1 bit) and
// then dist, the ticks from older's packet to base's, less one, as a
// bitlen of distWidth.
func (p *Peer[E]) writeDelta(ent *entity[E], base, older *version[E], dist uint32) error {
	s := p.s
	cur := &ent.newest().val
	if !s.pred {
		return s.c.EncodeDelta(&p.scratch, &base.val, cur)
	}
	mark := p.scratch.Len()
	p.scratch.WriteBool(older != nil)
	if older == nil {
		return s.c.EncodeDelta(&p.scratch, &base.val, cur)
	}
	fields.WriteBitlen(&p.scratch, uint64(dist-1), distWidth)
	if err := s.c.EncodePredicted(&p.scratch, &older.val, &base.val, cur); err != nil {
		p.scratch.Truncate(mark)
		return err
	}
	return nil
}

// fit sorts the chosen entities by id and writes the packet's lists,
// which sizes it exactly; while it is over limit (the estimates of the
// entries were short) the entity of lowest priority waits for the next
// packet and the lists are written again.
func (p *Peer[E]) fit(bodies, limit int) (listBits, error) {
	if err := p.sortChosen(); err != nil {
		return listBits{}, err
	}
	for {
		common, hasCommon := p.commonBase()
		lists := p.writeLists(common, hasCommon)
		if headerBits+lists.total+bodies <= limit || len(p.chosen) == 0 {
			return lists, nil
		}
		low := 0
		for i, ch := range p.chosen {
			if ch.acc < p.chosen[low].acc {
				low = i
			}
		}
		p.retry = append(p.retry, newCand(p.chosen[low].slot, p.chosen[low].acc))
		bodies -= int(p.chosen[low].n)
		p.chosen = slices.Delete(p.chosen, low, low+1)
	}
}

// dropCarried drops the pending removals the packet's full states carry:
// a full state replaces whatever the client holds of the id, so a
// removal still pending for it (an earlier incarnation, or the view
// before it was irrelevant) is carried by this packet and then dropped;
// were it repeated later, it would remove the new state. The packet's
// removals become those its lists name (p.remOut).
func (p *Peer[E]) dropCarried() {
	if len(p.pending) > 0 {
		for _, ch := range p.chosen {
			if _, ok := p.pendIdx[ch.id]; ok && ch.full {
				p.dropRemoval(ch.id)
			}
		}
	}
	p.rem, p.remOut = p.remOut, p.rem
}

// assemble appends the packet to dst: the header, the lists, the bodies,
// the padding and the trailer; it returns it with its ack token, and
// counts its bits in the Peer's stats.
func (p *Peer[E]) assemble(dst []byte, lists listBits, limitBytes int) ([]byte, uint32, error) {
	s := p.s
	p.seq++
	start := len(dst)
	p.w.ResetAppend(dst)
	defer p.w.ResetAppend(nil)
	writeHeader(&p.w, Header{Fingerprint: s.fp, Seq: p.seq, Tick: s.tick, Integrity: p.guard.Mode()})
	p.w.WriteFrom(&p.lists)
	pb := &p.stats.Bits
	pb.Header += headerBits
	pb.Removals += int64(lists.removals)
	pb.Kinds += int64(lists.common + lists.kinds)
	pb.IDs += int64(lists.ids)
	if len(p.chosen) > 0 {
		entries := lists.ids + lists.kinds
		p.entryBits = max(1, (entries+len(p.chosen)-1)/len(p.chosen))
	}
	src := p.scratch.Bytes()
	bodies := 0
	for _, ch := range p.chosen {
		if ch.full {
			copyBits(&p.w, s.ents[ch.slot].full, 0, int(ch.n))
		} else {
			copyBits(&p.w, src, int(ch.off), int(ch.n))
		}
		bodies += int(ch.n)
	}
	at := p.w.Len()
	pb.Bodies += int64(bodies)
	pb.Padding += int64(-at & 7)
	out, token := p.guard.Seal(p.w.Bytes(), start)
	pb.Trailer += int64(len(out)*8 - (at + -at&7))
	if size := len(out) - start; size > limitBytes {
		return dst, 0, fmt.Errorf("replicate: internal: packet of %d bytes over the limit %d", size, limitBytes)
	}
	return out, token, nil
}

// remember records the packet just assembled (its sequence number is
// p.seq) for its acknowledgement: its entities and removals; the
// entities' accumulators start again, and they are on their way. It
// counts the packet in the stats and the bandwidth budget.
func (p *Peer[E]) remember(token uint32, size int) {
	s := p.s
	rec := &p.recs[p.seq%recordRing]
	rec.seq, rec.tick, rec.token, rec.acked = p.seq, s.tick, token, false
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
			if ch.pred {
				p.stats.Predicted++
			}
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

// entryEstimate is what an entity's id and kind are costed at while it is
// chosen, before the Peer's first packet: about their mean size in a busy
// packet. Later packets take the mean of the packet before, rounded up.
// The packet's lists are then written, which sizes it exactly
// (writeLists).
const entryEstimate = 6

func tally(n *int64, from, to int) int {
	*n += int64(to - from)
	return to
}

// exception reports whether ch is an entry of the kinds list (not a delta
// against the common baseline), and its value there: 0 for a full state,
// tick - baseline for a delta against its own baseline.
func exception(ch *choice, tick, common uint32, hasCommon bool) (uint64, bool) {
	switch {
	case ch.full:
		return 0, true
	case hasCommon && ch.base == common:
		return 0, false
	}
	return uint64(tick - ch.base), true
}

// carriedByFull reports whether the packet's removals leave out id: a full
// state of it replaces whatever the client holds, so a pending removal of
// it is carried by the full state.
func (p *Peer[E]) carriedByFull(id uint32) bool {
	i, ok := slices.BinarySearchFunc(p.chosen, id, func(ch choice, id uint32) int { return cmpID(ch.id, id) })
	return ok && p.chosen[i].full
}

// listBits is the size of each part of the lists a packet's entities
// follow, and their total.
type listBits struct {
	removals, common, ids, kinds, total int
}

// writeLists writes to p.lists the lists of the packet of p.rem (less
// those carried by a full state, which it lists in p.remOut) and p.chosen
// (sorted by id), with the common baseline between them, and returns
// their sizes.
func (p *Peer[E]) writeLists(common uint32, hasCommon bool) listBits {
	w := &p.lists
	w.Reset(w.Bytes()[:0])
	var n listBits
	p.remOut = p.remOut[:0]
	for _, id := range p.rem {
		if !p.carriedByFull(id) {
			p.remOut = append(p.remOut, id)
		}
	}
	writeIDs(w, p.remOut)
	n.removals = w.Len()
	w.WriteBool(hasCommon)
	if hasCommon {
		fields.WriteBitlen(w, uint64(p.s.tick-common-1), distWidth)
	}
	n.common = w.Len() - n.removals
	writeCount(w, len(p.chosen))
	q := newIDSeq()
	for i := range p.chosen {
		q.write(w, p.chosen[i].id)
	}
	n.ids = w.Len() - n.removals - n.common
	p.writeKinds(w, common, hasCommon)
	n.total = w.Len()
	n.kinds = n.total - n.removals - n.common - n.ids
	return n
}

// writeIDs writes a list of ids.
func writeIDs(w *bits.Writer, ids []uint32) {
	writeCount(w, len(ids))
	q := newIDSeq()
	for _, id := range ids {
		q.write(w, id)
	}
}

// writeKinds writes the list of the entities that are not deltas against
// the common baseline: each its index's gap in the entity list and its
// value (see exception).
func (p *Peer[E]) writeKinds(w *bits.Writer, common uint32, hasCommon bool) {
	n := 0
	for i := range p.chosen {
		if _, ok := exception(&p.chosen[i], p.s.tick, common, hasCommon); ok {
			n++
		}
	}
	writeCount(w, n)
	var at, vals riceSeq
	last := -1
	for i := range p.chosen {
		if v, ok := exception(&p.chosen[i], p.s.tick, common, hasCommon); ok {
			at.write(w, uint64(i-last-1))
			vals.write(w, v)
			last = i
		}
	}
}

// sortChosen puts p.chosen in the order of their ids: it sorts words of
// the id above and the index below, whose integer order is that order,
// and moves the choices after them.
func (p *Peer[E]) sortChosen() error {
	keys := p.keys[:0]
	for i := range p.chosen {
		keys = append(keys, uint64(p.chosen[i].id)<<32|uint64(i))
	}
	slices.Sort(keys)
	sorted := p.sorted[:0]
	for i, k := range keys {
		if i > 0 && k>>32 == keys[i-1]>>32 {
			return fmt.Errorf("replicate: internal: id %d chosen twice for one packet", k>>32)
		}
		sorted = append(sorted, p.chosen[uint32(k)])
	}
	p.keys = keys
	p.chosen, p.sorted = sorted, p.chosen
	return nil
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
