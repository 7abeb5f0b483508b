package gateway

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/replicate"
)

// Gateway is a process's copy of the world, rebuilt from a Publisher's
// stream into a replicate.Server of its own (Server), whose Peers serve
// the gateway's clients. Create it with NewGateway, then loop: Next
// returns once the Server holds the world at a new tick; encode the
// Peers' packets of that tick, take their acks, and call Next again.
//
// The Server is Advanced to every tick the world published and is given
// the same Sets and Removes, in the same order, as the world's own calls
// (those that changed something): its entities have the world's quantized
// states, change ticks and versions. After a gap (a message lost: NATS
// dropped it for a slow gateway, or during a reconnection) and on start,
// the gateway asks for the full state of its cells, skips the ticks until
// it arrives, and sets it at its tick: entities that changed meanwhile
// change at that tick, those gone are removed. Clients wait meanwhile and
// are never told a state is from a tick at which the world had another.
type Gateway[E any] struct {
	nc    *nats.Conn
	c     *bitwire.Codec[E]
	cfg   Config[E]
	fp    uint32
	srv   *replicate.Server[E]
	msgs  chan *nats.Msg
	subs  []*nats.Subscription
	inbox string
	take  []bool // by cell
	cells []cellIn
	where map[uint32]int // id → its cell

	// The tick being rebuilt from the stream (0: none).
	tick    uint32
	done    int             // cells whose last part of tick arrived
	leaves  map[uint32]bool // ids that left a cell this tick (applied at its end)
	syncing bool            // waiting for a full state; the stream is skipped
	asked   time.Time       // when it was last asked for
	full    uint32          // the tick of the full state being received (0: none)
	seen    map[uint32]bool // the ids of that full state so far

	dropped int // messages NATS dropped for the gateway's subscriptions so far

	r       bits.Reader
	scratch E
	stats   GatewayStats
}

// cellIn is what a gateway knows of one cell's stream.
type cellIn struct {
	last uint32 // the tick of the last message applied (0: none)
	part uint16 // the next part expected of the tick in progress
	done bool   // its last part of the tick in progress arrived
}

// GatewayStats counts what a Gateway received and did.
type GatewayStats struct {
	Ticks    int   // world ticks applied from the stream
	Messages int   // bus messages received
	Bytes    int64 // their payload bytes
	Events   int   // events applied
	Syncs    int   // full states applied
	Requests int   // full states asked for
	Gaps     int   // gaps found in the stream (each starts a resync)
	Bad      int   // malformed messages (each starts a resync)
	Skipped  int   // messages skipped while resyncing
	Dropped  int   // messages NATS dropped, the gateway's buffer (Pending) full
}

// NewGateway returns a Gateway of the world on nc whose entities c encodes
// (the Publisher's layout), with a replicate.Server made with opts (give
// the world's WithVersions and WithTickRate when they are not the
// defaults, so that Peers behave as the world's would). It subscribes to
// the cells of cfg.Take and asks for their full state.
func NewGateway[E any](nc *nats.Conn, c *bitwire.Codec[E], cfg Config[E], opts ...replicate.Option) (*Gateway[E], error) {
	if nc == nil || c == nil {
		return nil, errors.New("gateway: NewGateway with a nil connection or codec")
	}
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	srv, err := replicate.NewServer(c, opts...)
	if err != nil {
		return nil, err
	}
	g := &Gateway[E]{nc: nc, c: c, cfg: cfg, fp: fingerprint32(c.Fingerprint()), srv: srv,
		msgs: make(chan *nats.Msg, cfg.Pending), take: make([]bool, cfg.Cells), cells: make([]cellIn, cfg.Cells),
		where: make(map[uint32]int), leaves: make(map[uint32]bool), seen: make(map[uint32]bool), inbox: nats.NewInbox()}
	if cfg.Take == nil {
		for i := range g.take {
			g.take[i] = true
		}
	}
	for _, k := range cfg.Take {
		g.take[k] = true
	}
	// One channel for every subscription: NATS delivers a publisher's
	// messages to a connection in the order they were published, and the
	// channel keeps that order across subjects (a full state and the
	// ticks after it).
	subjects := []string{g.inbox}
	for k, ok := range g.take {
		if ok {
			subjects = append(subjects, cellSubject(cfg.Subject, k))
		}
	}
	for _, s := range subjects {
		sub, err := nc.ChanSubscribe(s, g.msgs)
		if err != nil {
			g.Close()
			return nil, fmt.Errorf("gateway: subscribe %s: %w", s, err)
		}
		g.subs = append(g.subs, sub)
	}
	// The subscriptions first, then the request: an answer that came
	// before NATS had the inbox's would be lost (and asked again).
	_ = nc.FlushTimeout(time.Second)
	g.resync()
	return g, nil
}

// Server returns the gateway's replicate.Server: make the clients' Peers
// with its NewPeer. Do not Advance, Set or Remove it: Next does.
func (g *Gateway[E]) Server() *replicate.Server[E] { return g.srv }

// Stats returns the Gateway's counters.
func (g *Gateway[E]) Stats() GatewayStats { return g.stats }

// Synced reports whether the gateway follows the stream (false while it
// waits for a full state).
func (g *Gateway[E]) Synced() bool { return !g.syncing }

// Close unsubscribes; the connection stays the caller's.
func (g *Gateway[E]) Close() error {
	var err error
	for _, s := range g.subs {
		err = errors.Join(err, s.Unsubscribe())
	}
	g.subs = nil
	return err
}

// Next applies the stream until the Server holds the world at a tick it
// did not hold before, and returns that tick: encode the Peers then. It
// waits for messages, asks again for a full state every Config.Retry while
// it waits for one, and returns ctx's error when ctx ends, ErrClosed when
// the connection is closed, ErrProtocolMismatch for a world of another
// codec layout. Malformed messages and gaps are counted and resynced, not
// returned.
func (g *Gateway[E]) Next(ctx context.Context) (uint32, error) {
	timer := time.NewTimer(g.cfg.Retry)
	defer timer.Stop()
	for {
		select {
		case m := <-g.msgs:
			tick, ok, err := g.handle(m.Subject == g.inbox, m.Data)
			if err != nil {
				return 0, err
			}
			if ok {
				return tick, nil
			}
		case <-timer.C:
			if g.nc.IsClosed() {
				return 0, ErrClosed
			}
			if g.syncing && time.Since(g.asked) >= g.cfg.Retry {
				g.ask()
			}
			timer.Reset(g.cfg.Retry)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// handle applies one message; ok when it completed a tick.
func (g *Gateway[E]) handle(reply bool, data []byte) (tick uint32, ok bool, err error) {
	g.stats.Messages++
	g.stats.Bytes += int64(len(data))
	g.checkDrops()
	h, body, err := parseHeader(data)
	if err != nil {
		g.stats.Bad++
		g.resync()
		return 0, false, nil
	}
	if h.fp != g.fp {
		return 0, false, fmt.Errorf("%w: world %#08x, gateway %#08x", ErrProtocolMismatch, h.fp, g.fp)
	}
	if int(h.cell) >= len(g.take) || !g.take[h.cell] || reply != (h.kind == kindFull) {
		g.stats.Bad++
		return 0, false, nil // not ours: ignored
	}
	if h.kind == kindFull {
		return g.handleFull(h, body)
	}
	if g.syncing {
		g.stats.Skipped++
		return 0, false, nil
	}
	return g.handleTick(h, body)
}

func (g *Gateway[E]) handleTick(h header, body []byte) (uint32, bool, error) {
	cs := &g.cells[h.cell]
	switch {
	case h.part == 0 && g.tick == 0:
		// The first message of a new tick.
		if h.tick <= g.srv.Tick() || h.prev != cs.last {
			return g.gap()
		}
		if err := g.srv.Advance(h.tick); err != nil {
			return g.gap()
		}
		g.tick, g.done = h.tick, 0
		clear(g.leaves)
	case h.tick != g.tick || cs.done || h.part != cs.part || (h.part == 0 && h.prev != cs.last):
		return g.gap()
	}
	if err := g.apply(h, body); err != nil {
		g.stats.Bad++
		g.resync()
		return 0, false, nil
	}
	cs.part++
	if h.flags&flagLast == 0 {
		return 0, false, nil
	}
	cs.done = true
	g.done++
	if g.done < g.taken() {
		return 0, false, nil
	}
	// Every cell of the tick is in: the leaves that no entry into another
	// of the gateway's cells cancelled are removals here.
	for id := range g.leaves {
		if _, err := g.srv.Remove(id); err != nil {
			return g.gap()
		}
		delete(g.where, id)
	}
	tick := g.tick
	g.endTick(tick)
	g.stats.Ticks++
	return tick, true, nil
}

func (g *Gateway[E]) taken() int {
	n := 0
	for _, ok := range g.take {
		if ok {
			n++
		}
	}
	return n
}

// endTick closes the tick in progress: every cell's stream is at tick.
func (g *Gateway[E]) endTick(tick uint32) {
	for k := range g.cells {
		g.cells[k] = cellIn{last: tick}
	}
	g.tick, g.done = 0, 0
}

// apply applies a tick message's events to the Server, in order.
func (g *Gateway[E]) apply(h header, body []byte) error {
	g.r.Reset(body)
	var ids idStep
	for range h.count {
		op, err := g.r.ReadBits(2)
		if err != nil {
			return err
		}
		id, err := ids.read(&g.r)
		if err != nil {
			return err
		}
		switch op {
		case opDelta:
			base, ok := g.srv.Get(id)
			if !ok || g.where[id] != int(h.cell) {
				return fmt.Errorf("%w: a delta of id %d, not held in cell %d", ErrBadMessage, id, h.cell)
			}
			if err := g.c.DecodeDelta(&g.r, base, &g.scratch); err != nil {
				return err
			}
			if _, err := g.srv.Set(id, &g.scratch); err != nil {
				return err
			}
		case opFull:
			if err := g.c.Decode(&g.r, &g.scratch); err != nil {
				return err
			}
			if _, err := g.srv.Set(id, &g.scratch); err != nil {
				return err
			}
			g.where[id] = int(h.cell)
			delete(g.leaves, id)
		case opRemove:
			if _, err := g.srv.Remove(id); err != nil {
				return err
			}
			delete(g.where, id)
			delete(g.leaves, id)
		case opLeave:
			if k, ok := g.where[id]; ok && k == int(h.cell) {
				g.leaves[id] = true
			}
		}
		g.stats.Events++
	}
	return nil
}

// handleFull applies a part of a full state, and ends the resync at its
// last part of the last cell.
func (g *Gateway[E]) handleFull(h header, body []byte) (uint32, bool, error) {
	if !g.syncing {
		g.stats.Skipped++
		return 0, false, nil // an answer to a request already answered
	}
	cs := &g.cells[h.cell]
	if g.full == 0 || h.tick > g.full {
		// The first part of a full state: a newer one replaces one in
		// progress, which was never served.
		if h.part != 0 || h.tick <= g.srv.Tick() {
			g.stats.Skipped++
			return 0, false, nil
		}
		if err := g.srv.Advance(h.tick); err != nil {
			return 0, false, err
		}
		g.full, g.done = h.tick, 0
		clear(g.seen)
		for k := range g.cells {
			g.cells[k] = cellIn{}
		}
	}
	if h.tick != g.full || cs.done || h.part != cs.part {
		g.stats.Skipped++
		return 0, false, nil // a duplicate answer, or one from before
	}
	g.r.Reset(body)
	var ids idStep
	for range h.count {
		op, err := g.r.ReadBits(2)
		if err == nil && op != opFull {
			err = fmt.Errorf("%w: event %d in a full state", ErrBadMessage, op)
		}
		var id uint32
		if err == nil {
			id, err = ids.read(&g.r)
		}
		if err == nil {
			err = g.c.Decode(&g.r, &g.scratch)
		}
		if err == nil {
			_, err = g.srv.Set(id, &g.scratch)
		}
		if err != nil {
			g.stats.Bad++
			g.full = 0
			g.ask()
			return 0, false, nil
		}
		g.where[id] = int(h.cell)
		g.seen[id] = true
		g.stats.Events++
	}
	cs.part++
	if h.flags&flagLast == 0 {
		return 0, false, nil
	}
	cs.done = true
	g.done++
	if g.done < g.taken() {
		return 0, false, nil
	}
	for id := range g.where {
		if !g.seen[id] {
			if _, err := g.srv.Remove(id); err != nil {
				return 0, false, err
			}
			delete(g.where, id)
		}
	}
	tick := g.full
	g.full, g.syncing = 0, false
	g.endTick(tick)
	g.stats.Syncs++
	return tick, true, nil
}

// checkDrops starts a resync as soon as NATS dropped a message for a full
// buffer, rather than at the next message of the cell that lost one.
func (g *Gateway[E]) checkDrops() {
	n := 0
	for _, s := range g.subs {
		if d, err := s.Dropped(); err == nil {
			n += d
		}
	}
	if n == g.dropped {
		return
	}
	g.stats.Dropped += n - g.dropped
	g.dropped = n
	// While resyncing, the stream is skipped anyway, and a full state's
	// lost part shows in its part numbers, or as no answer (Retry).
	if !g.syncing {
		g.stats.Gaps++
		g.resync()
	}
}

// gap starts a resync after a message that does not follow the last.
func (g *Gateway[E]) gap() (uint32, bool, error) {
	g.stats.Gaps++
	g.resync()
	return 0, false, nil
}

// resync drops what is in progress and asks for a full state: at once,
// unless it asked less than an eighth of Retry ago (a run of malformed
// messages must not become a run of requests, each answered with the
// whole world); Next asks again after Retry anyway.
func (g *Gateway[E]) resync() {
	again := g.syncing && time.Since(g.asked) < g.cfg.Retry/8
	g.syncing, g.full, g.tick, g.done = true, 0, 0, 0
	if !again {
		g.ask()
	}
}

// ask requests the full state of the gateway's cells, answered to its
// inbox (on the channel of the stream, so in order with it).
func (g *Gateway[E]) ask() {
	var req []byte
	if g.cfg.Take != nil {
		for k, ok := range g.take {
			if ok {
				req = binary.LittleEndian.AppendUint32(req, uint32(k))
			}
		}
	}
	g.asked = time.Now()
	g.stats.Requests++
	_ = g.nc.PublishRequest(syncSubject(g.cfg.Subject), g.inbox, req) // a lost request is asked again after Retry
}
