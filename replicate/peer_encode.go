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
