package replicate

import (
	"math/bits"
	"slices"
)

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

// prevAck is, per slot, the acknowledged send before track.ackedN (valid
// when > viewFrom) and its tick: a predicting codec's older baseline
// (peer_encode.go's older). It is kept beside the tracks, and only for a
// codec that predicts, so that every other Peer's passes over its slots
// read no more memory than before.
type prevAck struct {
	n, tick uint32
	// floor is the newest full send acknowledged: no send before it is an
	// older baseline, since the full state may have found the client
	// holding none of the entity's states (expired, or over its limit).
	floor uint32
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

// scan runs once per tick, at the tick's first Encode: it raises the
// accumulators of the entities the client lacks the current state of, and
// lists them as candidates.
func (p *Peer[E]) scan() {
	s := p.s
	tick := s.tick
	if n := len(s.gens); len(p.tracks) < n {
		p.tracks = slices.Grow(p.tracks, n-len(p.tracks))[:n]
		p.hot = slices.Grow(p.hot, n-len(p.hot))[:n]
		if s.pred {
			p.prev = slices.Grow(p.prev, n-len(p.prev))[:n]
		}
	}
	p.hi.reset()
	p.hi2.reset()
	p.lo.reset()
	p.retry = p.retry[:0]
	resend := p.resendAfter()
	relevant := p.cfg.Relevant
	every := uint32(max(p.cfg.PriorityEvery, 1))
	thr := p.threshold
	p.scanThr = thr
	n := len(s.gens)
	hot, tracks, changed := p.hot[:n], p.tracks[:n], s.changed[:n]
	if relevant != nil {
		p.applyRelevance(relevant, tick, every)
	}
	p.gather(tick, resend, n)
	if p.fullPass != nil {
		p.attend = p.fullPass(s.gens, changed, hot, tracks, tick, resend, every, p.attend)
		clear(p.wake.visit)
	} else {
		p.attend = scanSlots(s.gens, changed, hot, tracks, p.wake.visit, tick, resend, every, p.attend)
	}
	p.weigh(tick, every, thr)
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

// weigh looks at the entities the scan found awake (p.attend): their
// priority when it is due, their accumulator against the threshold thr.
// Those at or above it are listed in hi (or hi2, below cut); the others sleep for half the
// ticks they need to reach it (so that a threshold that falls meanwhile
// costs them at most that much of a delay), or stay awake when that is
// under 2 ticks. Each is scheduled for the scan it next needs.
func (p *Peer[E]) weigh(tick, every uint32, thr float32) {
	n := len(p.s.gens)
	hot, tracks := p.hot[:n], p.tracks[:n]
	attend := p.attend
	// The priorities first, in a loop of their own: the call makes the
	// compiler keep a loop's values in memory, and the loop below, which
	// has no call, is most of the work.
	p.prioritize(tick, every)
	// The lists they go to, written by index into room made up front: a
	// sleeper's wake bucket is never the next tick's (it sleeps 2 to
	// maxSleep ticks, fewer than wheelTicks-1), and sleepers are put in
	// their buckets after the loop.
	nb := &p.wake.wheel[(tick+1)%wheelTicks]
	hiN, hi2N, nextN, sleepN := len(p.hi.list), len(p.hi2.list), len(*nb), 0
	hi := slices.Grow(p.hi.list, len(attend))[:hiN+len(attend)]
	hi2 := slices.Grow(p.hi2.list, len(attend))[:hi2N+len(attend)]
	cut := p.cut
	next := slices.Grow(*nb, len(attend))[:nextN+len(attend)]
	sleep := slices.Grow(p.sleepers[:0], len(attend))[:len(attend)]
	for _, slot := range attend {
		h, t := &hot[slot], &tracks[slot]
		acc := t.accAt(tick)
		h.seen = tick
		h.wake = 0
		if acc >= thr {
			if acc >= cut {
				hi[hiN] = newCand(slot, acc)
				hiN++
				next[nextN] = slot
				nextN++
				continue
			}
			hi2[hi2N] = newCand(slot, acc)
			hi2N++
			// Listed, and, when it needs 4 ticks or more to reach cut,
			// asleep for half of them, as below the threshold.
			if need := (cut - acc) / max(t.pr, 1e-9); need >= 4 {
				h.wake = tick + uint32(min(need/2, maxSleep))
				sleep[sleepN] = slot
				sleepN++
				continue
			}
			next[nextN] = slot
			nextN++
			continue
		}
		if need := (thr - acc) / max(t.pr, 1e-9); need >= 4 {
			h.wake = tick + uint32(min(need/2, maxSleep))
			sleep[sleepN] = slot
			sleepN++
			continue
		}
		next[nextN] = slot
		nextN++
	}
	p.hi.list = hi[:hiN]
	p.hi2.list = hi2[:hi2N]
	*nb = next[:nextN]
	for _, slot := range sleep[:sleepN] {
		p.wake.after(hot[slot].wake, slot)
	}
	p.sleepers = sleep[:0]
}

// prioritize computes the priority of each slot weigh attends to that is
// due (every tick with every = 1; else once the entity changed since, or
// every ticks after the last): the Priority callback's value, at least 0,
// or 1 for every slot without a callback.
func (p *Peer[E]) prioritize(tick, every uint32) {
	s := p.s
	n := len(s.gens)
	tracks := p.tracks[:n]
	attend := p.attend
	if prio := p.cfg.Priority; prio == nil {
		for _, slot := range attend {
			tracks[slot].pr = 1
		}
	} else if ids, cur := s.ids[:n], s.cur[:n]; every == 1 {
		// Due every tick (tick >= prDue always): the ticks of the last
		// computation and of the next are not needed, nor kept.
		for _, slot := range attend {
			t := &tracks[slot]
			t.settle(tick - 1)
			v := prio(ids[slot], &cur[slot])
			if v <= 0 {
				v = 0
			}
			t.pr = v
		}
	} else {
		changed := s.changed[:n]
		for _, slot := range attend {
			t := &tracks[slot]
			if t.prTick <= changed[slot] || tick >= t.prDue {
				t.settle(tick - 1)
				v := prio(ids[slot], &cur[slot])
				if v <= 0 { // max(v, 0), which keeps a NaN, and -0 is 0
					v = 0
				}
				t.pr = v
				t.prTick, t.prDue = tick, tick+every
			}
		}
	}
}

// scanSlots is the scan's visit of the entity slots the visit set names
// (see waker), in slot order: plain code over plain slices, with no call
// in its loop (a call would make the compiler keep the loop's values in
// memory), writing into a list grown up front. It clears the visit set. It
// appends to attend (which holds the slots gather's takeAwake listed) the
// entities the client lacks the current state of that
// are awake (see Peer.scan); it starts and stops the waiting of entities
// (h.waiting: the client lacks the entity's current state), and resets the
// tracks of new incarnations. The waiting entities are not listed: only
// listLow needs them all, rarely, and finds them again. A slot visited for
// nothing (held and not waiting, or waiting asleep) is left as it was.
func scanSlots(gens, changed []uint32, hot []hotTrack, tracks []track, visit []uint64, tick, resend, every uint32, attend []int32) []int32 {
	n := len(gens)
	hot, tracks, changed = hot[:n], tracks[:n], changed[:n]
	visit = visit[:(n+63)>>6]
	na := len(attend)
	attend = attend[:cap(attend)]
	for wi, word := range visit {
		if word == 0 {
			continue
		}
		visit[wi] = 0
		if k := bits.OnesCount64(word); na+k > len(attend) {
			attend = slices.Grow(attend[:na], n)
			attend = attend[:cap(attend)]
		}
		for ; word != 0; word &= word - 1 {
			slot := wi<<6 | bits.TrailingZeros64(word)
			if slot >= n {
				break
			}
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
	}
	return attend[:na]
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
		return 0, false
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
	if c, ok := p.hi2.take(); ok {
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
	//
	// The scan's waiting entities (which it does not list) are found
	// again: those still waiting, and those an earlier packet of this tick
	// sent, which its record lists (at most once: an entity sent is a
	// candidate again only through this list). A missing-baseline report
	// since may have taken their flight back, which makes them candidates
	// again. The order does not matter: lo is put in priority order.
	tick, thr := s.tick, p.scanThr
	hot, tracks := p.hot[:len(s.gens)], p.tracks[:len(s.gens)]
	for slot := range hot {
		h := &hot[slot]
		if !h.waiting || h.flight == tick {
			continue
		}
		acc := tracks[slot].accAt(tick)
		if h.seen == tick && acc >= thr {
			continue // in hi
		}
		p.lo.list = append(p.lo.list, newCand(int32(slot), acc))
	}
	for k := 0; k < p.packets; k++ {
		for _, e := range p.recs[(p.seq-uint32(k))%recordRing].ents {
			h := &hot[e.slot]
			if h.flight == tick {
				continue
			}
			acc := tracks[e.slot].accAt(tick)
			if h.seen == tick && acc >= thr {
				continue // in hi
			}
			p.lo.list = append(p.lo.list, newCand(e.slot, acc))
		}
	}
}
