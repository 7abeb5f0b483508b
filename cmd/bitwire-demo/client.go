package main

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// clientStats counts what one client saw. Each client's loop owns its own;
// they are read once the loops have ended.
type clientStats struct {
	Received   int `json:"received"`    // datagrams read from the socket
	Accepted   int `json:"accepted"`    // packets applied
	Stale      int `json:"stale"`       // replicate.ErrStale: late, reordered or duplicated
	NoBaseline int `json:"no_baseline"` // replicate.ErrNoBaseline: an entity's baseline not held
	Recovering int `json:"recovering"`  // replicate.ErrFuture: a genuine packet refused after a forged one moved the client ahead
	Errors     int `json:"errors"`      // any other decoding error: a bug
	Checked    int `json:"checked"`     // entity states checked against the server's
	Desyncs    int `json:"desyncs"`     // entity states that differ from the server's at their tick
	AcksSent   int `json:"acks_sent"`
	Lingering  int `json:"lingering"` // removed entities still held at a staleness sample
}

// client is one player's connection: a socket on 127.0.0.1, a
// replicate.Client, and the network conditioner through which everything
// passes.
type client struct {
	id      int
	rate    int
	conn    *net.UDPConn
	server  *net.UDPAddr
	rc      *replicate.Client[Entity]
	truth   *truth
	cond    *conditioner
	in      chan []byte
	desyncs *atomic.Int64 // shared by all clients, for the progress line
	logf    func(format string, args ...any)
	stats   clientStats
	ackBuf  []byte

	forger     *forger           // inject.go
	inj        injectStats       // what the attacks did to this client
	refusedRun int               // genuine packets refused in a row
	wrongSince map[uint32]uint32 // entities held wrong, since which tick

	// Staleness samples, in ticks, of entities near the client's player
	// and far from it; one sample a second, staggered over the clients.
	near, far  []uint32
	nextSample uint32
}

func newClient(cfg Config, id int, conn *net.UDPConn, server *net.UDPAddr, codec *bitwire.Codec[Entity], truth *truth, cond *conditioner, desyncs *atomic.Int64, logf func(string, ...any)) (*client, error) {
	rc, err := replicate.NewClient(codec, clientOptions(cfg, id)...)
	if err != nil {
		return nil, err
	}
	rate := cfg.Rate
	c := &client{
		id: id, rate: rate, conn: conn, server: server, rc: rc, truth: truth, cond: cond, desyncs: desyncs, logf: logf,
		in:         make(chan []byte, 256),
		nextSample: uint32(rate + id*7%rate),
	}
	c.forger = newForger(cfg, id, codec, &c.inj)
	return c, nil
}

// anyHeld returns an entity the client holds (the first of a map's
// randomized order), for the forger.
func (c *client) anyHeld() (id uint32, e *Entity, ok bool) {
	c.rc.Range(func(i, _ uint32, v *Entity) bool {
		id, e, ok = i, v, true
		return false
	})
	return id, e, ok
}

// read runs until the socket is closed or ctx ends, handing each datagram
// from the server to the loop.
func (c *client) read(ctx context.Context) {
	buf := make([]byte, 2048)
	for {
		n, from, err := c.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return
			}
			continue
		}
		if !sameAddr(from, c.server) {
			continue
		}
		pkt := append([]byte(nil), buf[:n]...)
		select {
		case c.in <- pkt:
		case <-ctx.Done():
			return
		}
	}
}

// loop runs the conditioner and handles what comes out of it: snapshots to
// decode and check, acks to send. It ends with ctx.
func (c *client) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			c.cond.stats.PendingAtFinish = len(c.cond.q)
			return
		case pkt := <-c.in:
			c.stats.Received++
			c.cond.admit(time.Now(), inbound, pkt)
			if bad := c.forger.forge(pkt, c.anyHeld); bad != nil {
				c.cond.admitForged(time.Now(), bad)
			}
		case <-timer.C:
		}
		now := time.Now()
		for {
			q, ok := c.cond.pop(now)
			if !ok {
				break
			}
			if q.dir == inbound {
				c.handle(now, q.data, q.forged)
			} else {
				c.conn.WriteToUDP(q.data, c.server) // a failed send is a lost ack
			}
		}
		if at, ok := c.cond.next(); ok {
			timer.Reset(at.Sub(now))
		}
	}
}

// handle applies one packet, checks every entity state it brought against
// the server's state of that entity at that tick, and acknowledges it (a
// packet refused for a missing baseline too: the ack reports it). forged
// says that the demo's forger injected it: its refusal is no error.
func (c *client) handle(now time.Time, pkt []byte, forged bool) {
	info, err := c.rc.Decode(pkt)
	c.watch(forged, err)
	if a := c.rc.Ack(); err == nil || a.Missing != 0 {
		c.ackBuf = appendAck(c.ackBuf[:0], c.id, c.rc.Ack())
		c.stats.AcksSent++
		// The ack crosses the same conditioned network, the other way.
		c.cond.admit(now, outbound, append([]byte(nil), c.ackBuf...))
	}
	switch {
	case errors.Is(err, replicate.ErrStale):
		c.stats.Stale++
		return
	case errors.Is(err, replicate.ErrNoBaseline):
		c.stats.NoBaseline++
		return
	case err != nil && forged:
		return
	case errors.Is(err, replicate.ErrFuture):
		c.stats.Recovering++
		return
	case err != nil && c.inj.Accepted > 0 && !errors.Is(err, replicate.ErrProtocolMismatch):
		// A forgery got through (no MAC): a genuine delta against the
		// state it altered may not decode. The ack reports the packet and
		// the server sends its entities in full.
		c.stats.Recovering++
		return
	case err != nil:
		c.stats.Errors++
		c.logf("client %d: decode error: %v", c.id, err)
		return
	}
	c.stats.Accepted++
	for _, id := range info.Updated {
		e, tick, _ := c.rc.Get(id)
		c.checkEntity(id, tick, e)
	}
	for _, id := range info.Removed {
		delete(c.wrongSince, id)
	}
	if info.Tick >= c.nextSample {
		c.sample(info.Tick)
		c.nextSample = (info.Tick/uint32(c.rate) + 1) * uint32(c.rate)
	}
}

func (c *client) checkEntity(id, tick uint32, e *Entity) {
	c.stats.Checked++
	equal, found := c.truth.check(id, tick, e)
	c.judge(id, tick, equal && found)
	if !equal || !found {
		c.stats.Desyncs++
		if c.desyncs.Add(1) <= 5 {
			c.logf("DESYNC: client %d entity %d tick %d: the state it holds differs from the server's (server had it: %v)", c.id, id, tick, found)
		}
	}
}

// sample records the staleness of every entity at tick.
func (c *client) sample(tick uint32) {
	get := func(id uint32) (uint32, bool) {
		_, t, ok := c.rc.Get(id)
		return t, ok
	}
	holds := func(f func(id uint32) bool) {
		c.rc.Range(func(id, _ uint32, _ *Entity) bool { return f(id) })
	}
	c.stats.Lingering += c.truth.staleness(tick, c.id, get, holds, &c.near, &c.far)
}

// finalCheck checks every state the client holds at the end of the run;
// the entities still wrong are the open episodes.
func (c *client) finalCheck() {
	c.rc.Range(func(id, tick uint32, e *Entity) bool {
		c.checkEntity(id, tick, e)
		return true
	})
	c.inj.Open = len(c.wrongSince)
	for _, since := range c.wrongSince {
		c.inj.OpenMaxAge = max(c.inj.OpenMaxAge, int(c.rc.Tick()-min(since, c.rc.Tick())))
	}
}

func (s clientStats) add(o clientStats) clientStats {
	s.Received += o.Received
	s.Accepted += o.Accepted
	s.Stale += o.Stale
	s.NoBaseline += o.NoBaseline
	s.Recovering += o.Recovering
	s.Errors += o.Errors
	s.Checked += o.Checked
	s.Desyncs += o.Desyncs
	s.AcksSent += o.AcksSent
	s.Lingering += o.Lingering
	return s
}

func (s condStats) add(o condStats) condStats {
	s.In += o.In
	s.Out += o.Out
	s.Dropped += o.Dropped
	s.Duplicated += o.Duplicated
	s.Reordered += o.Reordered
	s.DroppedAcks += o.DroppedAcks
	s.DuplicatedAcks += o.DuplicatedAcks
	s.ReorderedAcks += o.ReorderedAcks
	s.PendingAtFinish += o.PendingAtFinish
	return s
}
