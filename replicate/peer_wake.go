package replicate

import "slices"

// The scan of a tick looks at an entity slot only when something may have
// changed for it since the Peer's last scan: the scan's rules (scanSlots)
// do nothing for a slot that is held or on its way and not waiting, nor
// for one that waits asleep, and such a slot stays so until one of a few
// events. The Peer keeps those events, so that the scan visits the slots
// they name and no other:
//
//   - the entity changed, or is a new incarnation: the Server's change log,
//     fed by Set, read from where this Peer last read it;
//   - an acknowledgement or a missing-baseline report touched its track:
//     Ack marks the slots of the packet;
//   - its Refresh falls due: a heap of due ticks, fed by Ack;
//   - its last send stops counting as on its way (the resend window moved,
//     by time or by a new round-trip estimate): the packet records of the
//     ticks between the window's bounds at the last scan and at this one;
//   - it wakes, or it was awake and waiting at the last scan: a wheel of
//     the next wheelTicks ticks, fed by the scan itself. A bucket's slot
//     that no other event named is not visited: only the passing of ticks
//     moved it, so it is listed for weighing when it waits awake and
//     passed over otherwise (takeAwake), which spares the awake entities,
//     most of a tick's visits, the rules' comparisons.
//
// A slot visited for nothing costs the rules' few comparisons; the rules
// are the same as when every slot was visited, so a tick is the same
// tick (TestScanMatchesFullPass runs both side by side). The Peer falls
// back to visiting every slot when an event may have been missed: its
// first scan, a Relevant func (asked for every entity anyway), a change
// log read too late, or a resend window reaching beyond the packet records.
type waker struct {
	visit []uint64 // the slots the next scan visits, one bit each
	// wheel[t%wheelTicks] holds the slots to visit at the scan of tick t
	// (or the first one after it).
	wheel [wheelTicks][]int32
	dues  []uint64 // a min-heap of due tick << 32 | slot: Refresh timers
	last  uint32   // tick of the last scan; 0: none yet
	// flightFrom is the last scan's bound of the resend window: a send at
	// that tick or later was on its way.
	flightFrom int64
	logAt      int64 // the position in the Server's change log up to which this Peer read it; -1: fell behind
}

// wheelTicks is the span of the wheel: more than maxSleep, a power of 2.
const wheelTicks = 128

// mark makes the next scan visit slot.
func (wk *waker) mark(slot int32) {
	if i := int(slot) >> 6; i < len(wk.visit) {
		wk.visit[i] |= 1 << (uint(slot) & 63)
	}
}

// after makes the scan of tick t (or the first one after it) visit slot;
// t is at most wheelTicks-1 ticks after the current scan.
func (wk *waker) after(t uint32, slot int32) {
	b := &wk.wheel[t%wheelTicks]
	*b = append(*b, slot)
}

// due makes the scan of tick t (or the first one after it) visit slot.
func (wk *waker) due(t uint32, slot int32) {
	h := append(wk.dues, uint64(t)<<32|uint64(uint32(slot)))
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if h[up] <= h[i] {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
	wk.dues = h
}

// popDue marks the slots whose Refresh timers fell due by tick.
func (wk *waker) popDue(tick uint32) {
	h := wk.dues
	for len(h) > 0 && uint32(h[0]>>32) <= tick {
		wk.mark(int32(uint32(h[0])))
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			c := 2*i + 1
			if c >= len(h) {
				break
			}
			if c+1 < len(h) && h[c+1] < h[c] {
				c++
			}
			if h[i] <= h[c] {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	wk.dues = h
}

// gather fills the visit set of the scan of tick with the slots events
// named since the last scan, or with every slot when one may have been
// missed; n is the number of slots, resend the scan's resend window. The
// slots of the wheel's buckets that no other event named go to p.attend
// directly when they are awake and waiting (see takeAwake), without a
// visit.
func (p *Peer[E]) gather(tick, resend uint32, n int) {
	wk := &p.wake
	words := (n + 63) >> 6
	if len(wk.visit) < words {
		wk.visit = slices.Grow(wk.visit, words-len(wk.visit))[:words]
	}
	all := wk.last == 0 || p.cfg.Relevant != nil || p.fullPass != nil
	// The wheel's ticks since the last scan (all of them after a gap of
	// its span or more), read last.
	gap := min(tick-wk.last, wheelTicks)
	visit := wk.visit[:words]
	wk.popDue(tick)
	// The Server's changes since the last scan.
	s := p.s
	if wk.logAt < s.logBase {
		all = true
	} else if !all {
		markAll(visit, s.changeLog[wk.logAt-s.logBase:])
	}
	wk.logAt = s.logBase + int64(len(s.changeLog))
	// The sends whose status in the resend window changed: those of the
	// ticks between the last scan's bound and this one's.
	from := int64(tick) - int64(resend)
	if !all {
		all = !p.markSends(min(from, wk.flightFrom), max(from, wk.flightFrom))
	}
	wk.flightFrom = from
	wk.last = tick
	if all {
		for i := range wk.visit[:words] {
			wk.visit[i] = ^uint64(0)
		}
		if r := n & 63; r != 0 {
			wk.visit[words-1] = 1<<r - 1
		}
		clear(wk.visit[words:])
	}
	// Every other event is marked now: a bucket's slot that none named is
	// one whose state only the passing of ticks moves.
	attend := p.attend[:0]
	for t := tick - gap + 1; t != tick+1; t++ {
		b := &wk.wheel[t%wheelTicks]
		if !all {
			attend = takeAwake(s.gens[:n], p.hot[:n], visit, *b, tick, attend)
		}
		*b = (*b)[:0]
	}
	p.attend = attend
}

// takeAwake appends to attend the slots of a wheel bucket that no event
// other than the wheel named since the last scan (their bits in visit are
// clear) and that are awake and waiting: for such a slot the scan's rules
// (scanSlots) come out as they did when it was last looked at, because
// what they compare (acks, changes, Refresh timers, the resend window)
// moves only through the events that set visit bits. A slot waiting and
// awake then is listed, one held, on its way or asleep (a stale entry of
// a bucket, or a sleeper whose wake tick moved) is left as it was. A slot
// of a new incarnation is given to the visit instead. h.seen marks those
// listed, so that one in two buckets is listed once; weigh sets it for
// every listed slot anyway.
func takeAwake(gens []uint32, hot []hotTrack, visit []uint64, bucket []int32, tick uint32, attend []int32) []int32 {
	// Written by index into room made up front: an append's call in the
	// loop would make the compiler keep the loop's values in memory.
	na := len(attend)
	attend = slices.Grow(attend, len(bucket))
	out := attend[:na+len(bucket)]
	hot = hot[:len(gens)]
	for _, s := range bucket {
		slot := uint32(s)
		if slot >= uint32(len(hot)) {
			continue
		}
		h := &hot[slot]
		// The common case first, on the track alone: held or on its way
		// (not waiting), asleep, or listed already.
		if !h.waiting || tick < h.wake || h.seen == tick {
			continue
		}
		wi, bit := slot>>6, uint64(1)<<(slot&63)
		if wi >= uint32(len(visit)) || visit[wi]&bit != 0 {
			continue // visited
		}
		if h.gen != gens[slot] {
			// A removed slot's track was cleared (it is not waiting); this
			// is a new incarnation that its change did not name.
			visit[wi] |= bit
			continue
		}
		h.seen = tick
		out[na] = s
		na++
	}
	return out[:na]
}

// markAll sets the bits of slots in visit (those it has: a slot is
// always under the number of slots the last scan saw).
func markAll(visit []uint64, slots []int32) {
	for _, slot := range slots {
		if i := int(uint32(slot) >> 6); i < len(visit) {
			visit[i] |= 1 << (uint32(slot) & 63)
		}
	}
}

// markSends marks the slots sent by the packets of the ticks in [lo, hi),
// walking the records back from the newest; it reports false when the
// records do not reach back that far.
func (p *Peer[E]) markSends(lo, hi int64) bool {
	if lo >= hi {
		return true
	}
	for k := uint32(0); ; k++ {
		seq := p.seq - k
		if seq == 0 {
			return true
		}
		if k == recordRing {
			return false
		}
		rec := &p.recs[seq%recordRing]
		if rec.seq != seq {
			return false
		}
		t := int64(rec.tick)
		if t < lo {
			return true
		}
		if t < hi {
			for _, e := range rec.ents {
				p.wake.mark(e.slot)
			}
		}
	}
}
