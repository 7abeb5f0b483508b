package replicate

import (
	"fmt"
	"slices"

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
	// The counts of the three lists (when empty) and the common-baseline
	// bit. The common baseline itself is free: it is named only when a
	// delta refers to it, and that delta then saves more than it costs.
	used := headerBits + 3*countBits(0) + 1

	// Removals first: they are small and must not wait behind priorities.
	p.rem = p.rem[:0]
	if len(p.pending) > 0 {
		for _, r := range p.pending {
			if r.carried != s.tick { // once a tick is enough
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
		used += countBits(len(p.rem)) - countBits(0)
	}
	// The entities are costed at an estimate of their entries (id and
	// kind, whose exact size depends on the whole list) plus their bodies;
	// the packet is then costed exactly, and the lowest in priority dropped
	// while it is over the limit.

	// Entities by priority, each written to scratch.
	p.scratch.Reset(p.scratch.Bytes()[:0])
	p.chosen = p.chosen[:0]
	retried, skips := 0, 0
	deferred := p.deferred[:0]
	for skips < maxSkips {
		c, more := p.nextCand(&retried)
		if !more {
			break
		}
		slot := c.slot()
		ent := &s.ents[slot]
		h, t := &p.hot[slot], &p.tracks[slot]
		off := p.scratch.Len()
		var base *E
		refresh := h.due != 0 && s.tick >= h.due
		if h.have != 0 && t.sends-t.ackedN < BaselineDepth && t.acked < s.tick && !refresh {
			base = ent.at(t.acked)
		}
		// The body goes to scratch; its id and kind (and baseline) are
		// written when the packet is assembled.
		if base != nil {
			if err := s.c.EncodeDelta(&p.scratch, base, &ent.newest().val); err != nil {
				return dst, false, fmt.Errorf("replicate: id %d: %w", ent.id, err)
			}
		} else {
			copyBits(&p.scratch, &p.r, ent.full, 0, ent.nbits)
		}
		n := p.scratch.Len() - off
		cost := p.entryBits + n
		if used+cost > limit {
			p.scratch.Truncate(off)
			deferred = append(deferred, c)
			skips++
			continue
		}
		used += cost
		p.chosen = append(p.chosen, choice{slot: slot, id: ent.id, off: off, n: n, full: base == nil, refresh: refresh, base: t.acked, acc: c.acc()})
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
	common, hasCommon := p.commonBase()
	for used = p.exactBits(common, hasCommon); used > limit && len(p.chosen) > 0; used = p.exactBits(common, hasCommon) {
		// Over the limit: the estimates of the entries were short. Drop
		// the lowest in priority; it waits for the next packet.
		low := 0
		for i, ch := range p.chosen {
			if ch.acc < p.chosen[low].acc {
				low = i
			}
		}
		p.retry = append(p.retry, newCand(p.chosen[low].slot, p.chosen[low].acc))
		p.chosen = slices.Delete(p.chosen, low, low+1)
		common, hasCommon = p.commonBase()
	}
	if len(p.chosen) == 0 && len(p.rem) == 0 {
		return dst, false, nil
	}
	if len(p.pending) > 0 {
		for _, ch := range p.chosen {
			if _, ok := p.pendIdx[ch.id]; ok && ch.full {
				p.dropRemoval(ch.id)
			}
		}
		p.rem = slices.DeleteFunc(p.rem, p.carriedByFull)
	}

	p.seq++
	seq := p.seq
	start := len(dst)
	p.w.ResetAppend(dst)
	defer p.w.ResetAppend(nil)
	writeHeader(&p.w, Header{Fingerprint: s.fp, Seq: seq, Tick: s.tick, Integrity: p.guard.Mode()})
	pb := &p.stats.Bits
	at := p.w.Len()
	pb.Header += int64(at - start*8)
	p.writeIDs(p.rem, false)
	at = tally(&pb.Removals, at, p.w.Len())
	p.w.WriteBool(hasCommon)
	if hasCommon {
		fields.WriteBitlen(&p.w, uint64(s.tick-common-1), distWidth)
	}
	at = tally(&pb.Kinds, at, p.w.Len())
	entries := at
	p.writeIDs(nil, true)
	at = tally(&pb.IDs, at, p.w.Len())
	p.writeKinds(common, hasCommon)
	at = tally(&pb.Kinds, at, p.w.Len())
	entries = at - entries
	src := p.scratch.Bytes()
	for _, ch := range p.chosen {
		copyBits(&p.w, &p.r, src, ch.off, ch.n)
	}
	if len(p.chosen) > 0 {
		p.entryBits = max(1, (entries+len(p.chosen)-1)/len(p.chosen))
	}
	at = tally(&pb.Bodies, at, p.w.Len())
	pb.Padding += int64(-at & 7)
	out, token := p.guard.Seal(p.w.Bytes(), start)
	pb.Trailer += int64(len(out)*8 - (at + -at&7))
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

// entryEstimate is what an entity's id and kind are costed at while it is
// chosen, before the Peer's first packet: about their mean size in a busy
// packet. Later packets take the mean of the packet before, rounded up.
// The packet is costed exactly before it is written (exactBits).
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

// exactBits returns the size of the packet of p.rem (less those carried by
// a full state) and p.chosen (sorted by id), without its padding and trailer.
func (p *Peer[E]) exactBits(common uint32, hasCommon bool) int {
	n := headerBits
	nrem := 0
	q := newIDSeq()
	for _, id := range p.rem {
		if !p.carriedByFull(id) {
			n += q.bits(id)
			nrem++
		}
	}
	n += countBits(nrem) + 1
	if hasCommon {
		n += fields.BitlenBits(uint64(p.s.tick-common-1), distWidth)
	}
	n += countBits(len(p.chosen))
	q = newIDSeq()
	nexc := 0
	var at, vals riceSeq
	last := -1
	for i := range p.chosen {
		ch := &p.chosen[i]
		n += q.bits(ch.id) + ch.n
		if v, ok := exception(ch, p.s.tick, common, hasCommon); ok {
			n += at.bits(uint64(i-last-1)) + vals.bits(v)
			last = i
			nexc++
		}
	}
	return n + countBits(nexc)
}

// writeIDs writes the list of ids, or with entities those of p.chosen.
func (p *Peer[E]) writeIDs(ids []uint32, entities bool) {
	q := newIDSeq()
	if !entities {
		writeCount(&p.w, len(ids))
		for _, id := range ids {
			q.write(&p.w, id)
		}
		return
	}
	writeCount(&p.w, len(p.chosen))
	for i := range p.chosen {
		q.write(&p.w, p.chosen[i].id)
	}
}

// writeKinds writes the list of the entities that are not deltas against
// the common baseline: each its index's gap in the entity list and its
// value (see exception).
func (p *Peer[E]) writeKinds(common uint32, hasCommon bool) {
	n := 0
	for i := range p.chosen {
		if _, ok := exception(&p.chosen[i], p.s.tick, common, hasCommon); ok {
			n++
		}
	}
	writeCount(&p.w, n)
	var at, vals riceSeq
	last := -1
	for i := range p.chosen {
		if v, ok := exception(&p.chosen[i], p.s.tick, common, hasCommon); ok {
			at.write(&p.w, uint64(i-last-1))
			vals.write(&p.w, v)
			last = i
		}
	}
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
