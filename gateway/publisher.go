package gateway

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Publisher is the world process's end of the bus: the application calls
// Advance, Set and Remove exactly as it would on a replicate.Server (the
// same calls, in the same order), then Publish, which sends the tick's
// changes of every cell and answers the gateways' requests for full
// states. Create it with NewPublisher.
//
// Set quantizes once (Codec.Encode), compares the bits with the entity's
// previous ones, and only when they differ decodes them into the new state
// and writes the event: a delta against the previous state
// (Codec.EncodeDelta), or the state in full for an entity that is new or
// entered another cell. Publishing never waits for a gateway: NATS's
// publish is buffered, and a gateway that falls behind loses messages and
// resyncs.
type Publisher[E any] struct {
	nc    *nats.Conn
	out   func(subject string, data []byte) error // nc.Publish; benchmarks capture instead
	c     *bitwire.Codec[E]
	cfg   Config[E]
	fp    uint32
	tick  uint32
	open  bool // Advance was called and Publish not yet
	index map[uint32]int32
	ents  []pubEntity[E]
	cells []cellOut
	syncs chan *nats.Msg
	sub   *nats.Subscription
	enc   bits.Writer // the last Set's encoding
	r     bits.Reader
	msg   []byte
	stats PublisherStats
}

// pubEntity is one entity: its current encoding and state, and the spare
// state the next change is decoded into (so the previous state stays
// intact as the delta's baseline, pointees and all).
type pubEntity[E any] struct {
	id    uint32
	cell  int
	full  []byte
	nbits int
	cur   int // which of val is current
	val   [2]E
}

// cellOut is a cell's message of the tick being built.
type cellOut struct {
	w     bits.Writer
	count uint32
	ids   idStep
	parts [][]byte // closed parts (header and body)
	prev  uint32   // the tick of the cell's last published message
}

// PublisherStats counts what a Publisher sent.
type PublisherStats struct {
	Ticks     int   // ticks published
	Messages  int   // bus messages published (parts of cells' ticks, and full states)
	Bytes     int64 // their payload bytes
	TickBytes int64 // of which the ticks' changes (the rest: full states)
	Events    int   // change, creation and removal events published
	Syncs     int   // full-state requests answered
	Errors    int   // publishes NATS refused (closed, or its reconnect buffer full)
}

// NewPublisher returns a Publisher of the world of entities encoded by c,
// on nc. It subscribes to Subject.sync for the gateways' requests, and
// returns once NATS has the subscription (or after a second).
func NewPublisher[E any](nc *nats.Conn, c *bitwire.Codec[E], cfg Config[E]) (*Publisher[E], error) {
	if nc == nil || c == nil {
		return nil, errors.New("gateway: NewPublisher with a nil connection or codec")
	}
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	p := &Publisher[E]{nc: nc, c: c, cfg: cfg, fp: fingerprint32(c.Fingerprint()), index: make(map[uint32]int32),
		cells: make([]cellOut, cfg.Cells), syncs: make(chan *nats.Msg, 256)}
	sub, err := nc.ChanSubscribe(syncSubject(cfg.Subject), p.syncs)
	if err != nil {
		return nil, fmt.Errorf("gateway: subscribe: %w", err)
	}
	p.sub, p.out = sub, nc.Publish
	// A request that reached NATS before the subscription would be lost
	// (and asked again after the gateway's Retry): wait for NATS to have
	// it. A connection that is down now subscribes when it is back.
	_ = nc.FlushTimeout(time.Second)
	return p, nil
}

// Close unsubscribes from the requests; the connection stays the caller's.
func (p *Publisher[E]) Close() error { return p.sub.Unsubscribe() }

// Stats returns the Publisher's counters.
func (p *Publisher[E]) Stats() PublisherStats { return p.stats }

// Tick returns the current tick (0 before the first Advance).
func (p *Publisher[E]) Tick() uint32 { return p.tick }

// Len returns the number of entities.
func (p *Publisher[E]) Len() int { return len(p.ents) }

// Advance starts tick, which must be newer than the last, and the last
// tick must have been published (ErrTickOrder otherwise).
func (p *Publisher[E]) Advance(tick uint32) error {
	if tick == 0 || tick <= p.tick || p.open {
		return fmt.Errorf("%w: Advance(%d) after tick %d (published: %v)", ErrTickOrder, tick, p.tick, !p.open)
	}
	p.tick, p.open = tick, true
	for i := range p.cells {
		co := &p.cells[i]
		co.w.Reset(co.w.Bytes()[:0])
		co.count, co.ids, co.parts = 0, idStep{}, co.parts[:0]
	}
	return nil
}

// Set creates or updates the entity id at the current tick, as
// replicate.Server.Set does, and reports whether its quantized state is new
// or differs from the previous one (only then is an event published).
// Errors: ErrTickOrder outside Advance..Publish, ErrCell for a cell out of
// range, the codec's error for a state it cannot encode (nothing changes
// then).
func (p *Publisher[E]) Set(id uint32, e *E) (changed bool, err error) {
	if e == nil {
		return false, fmt.Errorf("gateway: Set of a nil state, id %d", id)
	}
	if !p.open {
		return false, fmt.Errorf("%w: Set of id %d outside a tick", ErrTickOrder, id)
	}
	p.enc.Reset(p.enc.Bytes()[:0])
	if err := p.c.Encode(&p.enc, e); err != nil {
		return false, fmt.Errorf("gateway: id %d: %w", id, err)
	}
	nbits, enc := p.enc.Len(), p.enc.Bytes()
	slot, ok := p.index[id]
	var ent *pubEntity[E]
	next := 0
	if ok {
		ent = &p.ents[slot]
		if ent.nbits == nbits && bytes.Equal(ent.full, enc) {
			return false, nil
		}
		next = 1 - ent.cur
	} else {
		p.ents = append(p.ents, pubEntity[E]{id: id})
		ent = &p.ents[len(p.ents)-1]
	}
	v := &ent.val[next]
	p.r.Reset(enc)
	if err := p.c.Decode(&p.r, v); err != nil {
		if !ok {
			p.ents = p.ents[:len(p.ents)-1]
		}
		return false, fmt.Errorf("gateway: internal: id %d does not decode: %w", id, err)
	}
	cell, err := p.cellOf(id, v)
	if err != nil {
		if !ok {
			p.ents = p.ents[:len(p.ents)-1]
		}
		return false, err
	}
	if !ok {
		p.index[id] = int32(len(p.ents) - 1)
	}
	switch {
	case !ok:
		p.event(cell, opFull, id, func(w *bits.Writer) error { writeStored(w, enc, nbits); return nil })
	case cell != ent.cell:
		p.event(ent.cell, opLeave, id, nil)
		p.event(cell, opFull, id, func(w *bits.Writer) error { writeStored(w, enc, nbits); return nil })
	default:
		base := &ent.val[ent.cur]
		if err := p.event(cell, opDelta, id, func(w *bits.Writer) error { return p.c.EncodeDelta(w, base, v) }); err != nil {
			return false, fmt.Errorf("gateway: id %d: %w", id, err)
		}
	}
	ent.cur, ent.cell = next, cell
	ent.full = append(ent.full[:0], enc...)
	ent.nbits = nbits
	return true, nil
}

func (p *Publisher[E]) cellOf(id uint32, e *E) (int, error) {
	if p.cfg.Cell == nil {
		return 0, nil
	}
	k := p.cfg.Cell(id, e)
	if k < 0 || k >= p.cfg.Cells {
		return 0, fmt.Errorf("%w: id %d in cell %d of %d", ErrCell, id, k, p.cfg.Cells)
	}
	return k, nil
}

// Remove removes the entity id at the current tick and reports whether it
// existed.
func (p *Publisher[E]) Remove(id uint32) (bool, error) {
	if !p.open {
		return false, fmt.Errorf("%w: Remove of id %d outside a tick", ErrTickOrder, id)
	}
	slot, ok := p.index[id]
	if !ok {
		return false, nil
	}
	p.event(p.ents[slot].cell, opRemove, id, nil)
	last := int32(len(p.ents) - 1)
	if slot != last {
		p.ents[slot], p.ents[last] = p.ents[last], p.ents[slot]
		p.index[p.ents[slot].id] = slot
	}
	p.ents[last] = pubEntity[E]{} // its states' pointees go with it
	p.ents = p.ents[:last]
	delete(p.index, id)
	return true, nil
}

// event appends an event to cell's message, closing a part first when the
// message would grow past MaxMessage. body writes the entity's bits.
func (p *Publisher[E]) event(cell int, op uint8, id uint32, body func(*bits.Writer) error) error {
	co := &p.cells[cell]
	if co.count > 0 && (co.w.Len()+7)/8+headerSize > p.cfg.MaxMessage*7/8 {
		p.closePart(co, kindTick, cell, false)
	}
	at := co.w.Len()
	saved := co.ids
	co.w.WriteBits(uint64(op), 2)
	co.ids.write(&co.w, id)
	if body != nil {
		if err := body(&co.w); err != nil {
			co.w.Truncate(at)
			co.ids = saved
			return err
		}
	}
	co.count++
	p.stats.Events++
	return nil
}

// closePart turns the cell's pending events into a part, the last of
// the cell's message or not.
func (p *Publisher[E]) closePart(co *cellOut, kind uint8, cell int, last bool) {
	h := header{kind: kind, part: uint16(len(co.parts)), fp: p.fp, tick: p.tick, cell: uint32(cell), count: co.count}
	if last {
		h.flags = flagLast
	}
	if kind == kindTick {
		h.prev = co.prev
	}
	msg := appendHeader(make([]byte, 0, headerSize+(co.w.Len()+7)/8), h)
	msg = sealMessage(append(msg, co.w.Bytes()...))
	co.parts = append(co.parts, msg)
	co.w.Reset(co.w.Bytes()[:0])
	co.count, co.ids = 0, idStep{}
}

// Publish ends the tick: it sends every cell's message of the tick (at
// least one part each, empty when nothing changed there), then answers
// the requests for full states that arrived since the last Publish with
// the state at this tick. NATS errors are counted (PublisherStats.Errors),
// not returned: a gateway that missed a message finds the gap and resyncs.
// The error is ErrTickOrder when no tick is open.
func (p *Publisher[E]) Publish() error {
	if !p.open {
		return fmt.Errorf("%w: Publish outside a tick", ErrTickOrder)
	}
	p.open = false
	for i := range p.cells {
		co := &p.cells[i]
		p.closePart(co, kindTick, i, true)
		for _, m := range co.parts {
			p.send(cellSubject(p.cfg.Subject, i), m, true)
		}
		co.prev = p.tick
	}
	p.stats.Ticks++
	for {
		select {
		case m := <-p.syncs:
			p.answer(m)
			continue
		default:
		}
		break
	}
	return nil
}

func (p *Publisher[E]) send(subject string, m []byte, tick bool) {
	if err := p.out(subject, m); err != nil {
		p.stats.Errors++
		return
	}
	p.stats.Messages++
	p.stats.Bytes += int64(len(m))
	if tick {
		p.stats.TickBytes += int64(len(m))
	}
}

// answer sends the full state of the cells a request names (a list of
// little-endian uint32 cells; empty: all) to its reply subject.
func (p *Publisher[E]) answer(m *nats.Msg) {
	if m.Reply == "" || len(m.Data)%4 != 0 {
		return
	}
	want := make([]bool, p.cfg.Cells)
	if len(m.Data) == 0 {
		for i := range want {
			want[i] = true
		}
	}
	for i := 0; i+4 <= len(m.Data); i += 4 {
		if k := binary.LittleEndian.Uint32(m.Data[i:]); k < uint32(p.cfg.Cells) {
			want[k] = true
		}
	}
	p.stats.Syncs++
	var co cellOut
	for cell, ok := range want {
		if !ok {
			continue
		}
		co.parts, co.count, co.ids = co.parts[:0], 0, idStep{}
		co.w.Reset(co.w.Bytes()[:0])
		for i := range p.ents {
			ent := &p.ents[i]
			if ent.cell != cell {
				continue
			}
			if co.count > 0 && (co.w.Len()+7)/8+headerSize > p.cfg.MaxMessage*7/8 {
				p.closePart(&co, kindFull, cell, false)
			}
			co.w.WriteBits(opFull, 2)
			co.ids.write(&co.w, ent.id)
			writeStored(&co.w, ent.full, ent.nbits)
			co.count++
		}
		p.closePart(&co, kindFull, cell, true)
		for _, msg := range co.parts {
			p.send(m.Reply, msg, false)
		}
	}
}
