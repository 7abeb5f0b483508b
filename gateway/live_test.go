package gateway

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bitwire/bitwire/replicate"
)

// This file runs worlds and gateways on goroutines of their own, at wall
// clock rates, for the fault tests: the world never waits for a gateway.

// truth logs every quantized state of every entity the world had, with
// the tick it began, and removals.
type truth struct {
	mu     sync.Mutex
	states map[uint32][]truthState
	tick   uint32
	live   int // entities now
}

type truthState struct {
	tick uint32
	val  Body
	gone bool
}

func newTruth() *truth { return &truth{states: map[uint32][]truthState{}} }

func (tr *truth) record(tick uint32, ops []op, live int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, o := range ops {
		s := truthState{tick: tick, gone: o.remove}
		if !o.remove {
			s.val = o.val
			if err := bodyCodec.Quantize(&s.val); err != nil {
				panic(err)
			}
		}
		tr.states[o.id] = append(tr.states[o.id], s)
	}
	tr.tick, tr.live = tick, live
}

// at returns the world's state of id at tick.
func (tr *truth) at(id, tick uint32) (Body, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	h := tr.states[id]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].tick <= tick {
			return h[i].val, !h[i].gone
		}
	}
	return Body{}, false
}

func (tr *truth) now() (tick uint32, live int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.tick, tr.live
}

// liveWorld runs a world at a fixed tick interval until stopped.
type liveWorld struct {
	pub      *Publisher[Body]
	tr       *truth
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	publish  []time.Duration // each tick's Set and Publish, by tick
	interval time.Duration
}

func startWorld(t testing.TB, pub *Publisher[Body], n int, interval time.Duration) *liveWorld {
	lw := &liveWorld{pub: pub, tr: newTruth(), stop: make(chan struct{}), done: make(chan struct{}), interval: interval}
	w := newWorld(3, n)
	w.churn = 2
	go func() {
		defer close(lw.done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for tick := uint32(1); ; tick++ {
			ops := w.step(tick == 1)
			lw.tr.record(tick, ops, len(w.ids))
			start := time.Now()
			play(t, pub, tick, ops)
			if err := pub.Publish(); err != nil {
				panic(err)
			}
			lw.mu.Lock()
			lw.publish = append(lw.publish, time.Since(start))
			lw.mu.Unlock()
			select {
			case <-lw.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return lw
}

// halt stops the world (once; later calls return at once).
func (lw *liveWorld) halt() {
	lw.once.Do(func() { close(lw.stop) })
	<-lw.done
}

// publishTimes returns the Set-and-Publish durations of ticks [from, to).
func (lw *liveWorld) publishTimes(from, to int) []time.Duration {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	to = min(to, len(lw.publish))
	return slices.Clone(lw.publish[min(from, to):to])
}

func (lw *liveWorld) ticks() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return len(lw.publish)
}

// liveClient is a client of a gateway, with no loss: what matters here
// is the bus.
type liveClient struct {
	peer   *replicate.Peer[Body]
	client *replicate.Client[Body]
}

// liveGateway serves its clients from a Gateway on a goroutine, checking
// every state each client is given against the truth.
type liveGateway struct {
	g       *Gateway[Body]
	nc      *nats.Conn
	clients []*liveClient
	tr      *truth
	delay   atomic.Int64 // extra time spent per tick (a slow gateway), ns
	cancel  context.CancelFunc
	done    chan struct{}

	desyncs  atomic.Int64
	served   atomic.Int64 // ticks served
	accepted atomic.Int64 // packets accepted by the clients
	first    atomic.Int64 // when the first tick was served, unix ns
}

func startGateway(t testing.TB, url string, cfg Config[Body], tr *truth, clients []*replicate.Client[Body]) *liveGateway {
	t.Helper()
	nc, err := nats.Connect(url, quiet, nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGateway(nc, bodyCodec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lg := &liveGateway{g: g, nc: nc, tr: tr, done: make(chan struct{})}
	for _, cl := range clients {
		cl.Reset() // a new connection: the client starts over with a new Peer
		p, err := g.Server().NewPeer(replicate.PeerConfig[Body]{})
		if err != nil {
			t.Fatal(err)
		}
		lg.clients = append(lg.clients, &liveClient{peer: p, client: cl})
	}
	ctx, cancel := context.WithCancel(context.Background())
	lg.cancel = cancel
	go lg.run(ctx)
	return lg
}

func (lg *liveGateway) run(ctx context.Context) {
	defer close(lg.done)
	for {
		if _, err := lg.g.Next(ctx); err != nil {
			if !errors.Is(err, context.Canceled) {
				panic(err)
			}
			return
		}
		lg.first.CompareAndSwap(0, time.Now().UnixNano())
		for _, c := range lg.clients {
			for {
				pkt, ok, err := c.peer.Encode(nil)
				if err != nil {
					panic(err)
				}
				if !ok {
					break
				}
				info, err := c.client.Decode(pkt)
				if err != nil {
					continue
				}
				lg.accepted.Add(1)
				for _, id := range info.Updated {
					got, tick, _ := c.client.Get(id)
					if want, ok := lg.tr.at(id, tick); !ok || want != *got {
						lg.desyncs.Add(1)
					}
				}
				c.peer.Ack(c.client.Ack())
			}
		}
		lg.served.Add(1)
		if d := lg.delay.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
	}
}

// stop ends the gateway: its goroutine, subscriptions and connection.
func (lg *liveGateway) stop() {
	lg.cancel()
	<-lg.done
	lg.g.Close()
	lg.nc.Close()
}

// check fails on any desync, and unless every client holds, each at the
// tick it says, the world's state of every entity it holds, and holds at
// least most of the world.
func (lg *liveGateway) check(t testing.TB, name string) {
	t.Helper()
	if n := lg.desyncs.Load(); n != 0 {
		t.Errorf("%s: %d desyncs", name, n)
	}
	_, live := lg.tr.now()
	for i, c := range lg.clients {
		wrong := 0
		c.client.Range(func(id, tick uint32, e *Body) bool {
			if want, ok := lg.tr.at(id, tick); !ok || want != *e {
				wrong++
			}
			return true
		})
		if wrong != 0 || c.client.Len() < live*9/10 {
			t.Errorf("%s: client %d holds %d entities (world: %d), %d of them wrong", name, i, c.client.Len(), live, wrong)
		}
	}
}

func newClients(n int) []*replicate.Client[Body] {
	var cls []*replicate.Client[Body]
	for range n {
		cl, _ := replicate.NewClient(bodyCodec)
		cls = append(cls, cl)
	}
	return cls
}

// waitServed waits until lg has served n more ticks than it had.
func waitServed(t testing.TB, lg *liveGateway, n int64) {
	t.Helper()
	want := lg.served.Load() + n
	deadline := time.Now().Add(20 * time.Second)
	for lg.served.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("gateway served %d ticks, want %d; stats %+v", lg.served.Load(), want, lg.g.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

func natsPort(ns *server.Server) int { return ns.Addr().(*net.TCPAddr).Port }
