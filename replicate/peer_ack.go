package replicate

import (
	"fmt"
)

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
		p.wake.mark(e.slot)
		switch {
		case e.n > t.ackedN:
			if p.prev != nil {
				p.prev[e.slot].follow(e.n, e.full, t.ackedN, t.acked, h.have != 0)
			}
			t.ackedN, t.acked = e.n, e.tick
			h.have = e.tick
		case p.prev != nil && h.have != 0 && e.n < t.ackedN: // a late ack
			p.prev[e.slot].late(e.n, e.tick, e.full)
		}
		if e.full && p.refresh != 0 && e.tick+p.refresh > h.due {
			h.due = e.tick + p.refresh
			p.wake.due(h.due, e.slot)
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
		if p.prev != nil {
			p.prev[e.slot] = prevAck{}
		}
		p.wake.mark(e.slot)
	}
}

// resendAfter is how many ticks an entity's state, once sent, is left
// alone while its acknowledgement may still come.
func (p *Peer[E]) resendAfter() uint32 { return uint32(p.srtt*1.5) + 1 }

// follow updates pa for the acknowledgement of send n (full when it was a
// full state), the newest acknowledged so far, which follows send prevN of
// tick prevTick: that becomes the older baseline when the client held it
// (held: not before the incarnation's first acknowledgement, nor after a
// missing baseline) and it is not before the newest full send.
func (pa *prevAck) follow(n uint32, full bool, prevN, prevTick uint32, held bool) {
	switch {
	case full:
		*pa = prevAck{floor: n}
	case held && prevN >= pa.floor:
		pa.n, pa.tick = prevN, prevTick
	default:
		pa.n, pa.tick = 0, 0
	}
}

// late updates pa for a late acknowledgement of send n of tick (full when
// it was a full state), older than the newest acknowledged: a newer older
// baseline than pa's, if not before the newest full send.
func (pa *prevAck) late(n, tick uint32, full bool) {
	if full && n > pa.floor {
		pa.floor = n
		if pa.n < n {
			pa.n, pa.tick = 0, 0
		}
		return
	}
	if n > pa.n && n >= pa.floor {
		pa.n, pa.tick = n, tick
	}
}
