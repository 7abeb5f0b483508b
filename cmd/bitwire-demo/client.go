package main

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/snapshot"
)

// clientStats counts what one client saw. Each client's loop owns its own;
// they are read once the loops have ended.
type clientStats struct {
	Received   int `json:"received"`    // datagrams read from the socket
	Accepted   int `json:"accepted"`    // snapshots decoded (and checked)
	Stale      int `json:"stale"`       // ErrStaleTick: late, reordered or duplicated
	NoBaseline int `json:"no_baseline"` // ErrNoBaseline: a delta against a tick never received
	Recovering int `json:"recovering"`  // ErrFutureTick, ErrStateMismatch: recovering from a bad packet
	Errors     int `json:"errors"`      // any other decoding error: a bug
	Desyncs    int `json:"desyncs"`     // accepted snapshots that differ from the server's
	Unchecked  int `json:"unchecked"`   // accepted snapshots whose truth had left the ring
	AcksSent   int `json:"acks_sent"`
	Foreign    int `json:"foreign"` // datagrams naming no stream
}

// client is one player's connection: a socket on 127.0.0.1, a Receiver per
// stream, and the network conditioner through which everything passes.
type client struct {
	id      int
	conn    *net.UDPConn
	server  *net.UDPAddr
	streams []*snapshot.Receiver[Shard]
	views   []Shard // the client's copy of each stream
	truth   *truthRing
	cond    *conditioner
	in      chan []byte
	desyncs *atomic.Int64 // shared by all clients, for the progress line
	logf    func(format string, args ...any)
	stats   clientStats
	ackBuf  []byte
	forger  *forger       // inject.go
	inj     injectStats   // what the attacks did to this client
	watches []streamWatch // per stream
}

func newClient(cfg Config, id int, conn *net.UDPConn, server *net.UDPAddr, codec *bitwire.Codec[Shard], streams, history int, truth *truthRing, cond *conditioner, desyncs *atomic.Int64, logf func(string, ...any)) (*client, error) {
	c := &client{
		id: id, conn: conn, server: server, truth: truth, cond: cond, desyncs: desyncs, logf: logf,
		views:   make([]Shard, streams),
		in:      make(chan []byte, 256),
		watches: make([]streamWatch, streams),
	}
	c.forger = newForger(cfg, id, codec, &c.inj)
	opts := append([]snapshot.Option{snapshot.WithHistorySize(history), snapshot.WithTickRate(cfg.Rate)}, streamOptions(cfg, id)...)
	for k := 0; k < streams; k++ {
		r, err := snapshot.NewReceiver(codec, opts...)
		if err != nil {
			return nil, err
		}
		c.streams = append(c.streams, r)
	}
	return c, nil
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
			if bad := c.forger.forge(pkt); bad != nil {
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

// handle decodes one snapshot datagram, checks it against the server's
// state of its tick, and sends the ack its Receiver asks for. forged says
// that the demo's forger injected it: its refusal is no error.
func (c *client) handle(now time.Time, pkt []byte, forged bool) {
	if len(pkt) < streamPrefix || int(pkt[0]) >= len(c.streams) {
		c.stats.Foreign++
		return
	}
	k := int(pkt[0])
	tick, err := c.streams[k].Decode(pkt[streamPrefix:], &c.views[k])
	if a, ok := c.streams[k].Ack(); ok {
		if a.NeedsFull() {
			c.inj.FullRequests++
		}
		c.ackBuf = appendAck(c.ackBuf[:0], c.id, k, a)
		c.stats.AcksSent++
		// The ack crosses the same conditioned network, the other way.
		c.cond.admit(now, outbound, append([]byte(nil), c.ackBuf...))
	}
	equal := false
	defer func() { c.watch(k, forged, tick, err, equal) }()
	switch {
	case errors.Is(err, snapshot.ErrStaleTick):
		c.stats.Stale++
		return
	case errors.Is(err, snapshot.ErrNoBaseline):
		c.stats.NoBaseline++
		return
	case err != nil && forged:
		return
	case errors.Is(err, snapshot.ErrFutureTick), errors.Is(err, snapshot.ErrStateMismatch):
		c.stats.Recovering++
		return
	case err != nil:
		c.stats.Errors++
		c.logf("client %d stream %d: decode error: %v", c.id, k, err)
		return
	}
	c.stats.Accepted++
	var found bool
	equal, found = c.truth.check(tick, k, &c.views[k])
	switch {
	case !found && !forged:
		c.stats.Unchecked++
		equal = true // no verdict: not counted as wrong
	case !equal: // a forged tick the server never sent is wrong too
		c.stats.Desyncs++
		if c.desyncs.Add(1) <= 5 {
			c.logf("DESYNC: client %d stream %d tick %d: decoded state differs from the server's", c.id, k, tick)
		}
	}
}

func (s clientStats) add(o clientStats) clientStats {
	s.Received += o.Received
	s.Accepted += o.Accepted
	s.Stale += o.Stale
	s.NoBaseline += o.NoBaseline
	s.Recovering += o.Recovering
	s.Errors += o.Errors
	s.Desyncs += o.Desyncs
	s.Unchecked += o.Unchecked
	s.AcksSent += o.AcksSent
	s.Foreign += o.Foreign
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
