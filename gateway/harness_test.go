package gateway

import (
	"context"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Body is the test entity.
type Body struct {
	X   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Y   float32    `net:"q,min=-16,max=48,prec=0.01,dmin=-2,dmax=2"`
	Z   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Rot [4]float32 `net:"quat,bits=9"`
	Hp  uint8      `net:"range,min=0,max=100"`
}

var bodyCodec = bitwire.MustFor[Body]()

func randomRot(rng *rand.Rand) [4]float32 {
	for {
		var q [4]float64
		n := 0.0
		for i := range q {
			q[i] = rng.NormFloat64()
			n += q[i] * q[i]
		}
		if n > 1e-3 {
			n = math.Sqrt(n)
			return [4]float32{float32(q[0] / n), float32(q[1] / n), float32(q[2] / n), float32(q[3] / n)}
		}
	}
}

func randomBody(rng *rand.Rand) Body {
	return Body{X: float32(rng.Float64()*400 - 200), Y: float32(rng.Float64() * 40), Z: float32(rng.Float64()*400 - 200), Rot: randomRot(rng), Hp: uint8(rng.Intn(101))}
}

// nudge moves b as one tick of motion does.
func nudge(rng *rand.Rand, b *Body) {
	b.X = float32(math.Max(-255, math.Min(255, float64(b.X)+rng.Float64()*4-2)))
	b.Z = float32(math.Max(-255, math.Min(255, float64(b.Z)+rng.Float64()*4-2)))
	b.Y = float32(math.Max(-15, math.Min(47, float64(b.Y)+rng.Float64()*0.2-0.1)))
	if rng.Intn(3) == 0 {
		b.Rot = randomRot(rng)
	}
	if rng.Intn(10) == 0 {
		b.Hp = uint8(rng.Intn(101))
	}
}

// world is a test world: its entities' raw states, changed each tick by
// a seeded generator, so that two worlds of one seed make the same calls.
type world struct {
	rng    *rand.Rand
	ids    []uint32
	states map[uint32]*Body
	nextID uint32
	move   float64 // fraction of entities moved a tick
	churn  int     // entities removed and created a tick
}

func newWorld(seed int64, n int) *world {
	w := &world{rng: rand.New(rand.NewSource(seed)), states: map[uint32]*Body{}, nextID: 1, move: 0.1, churn: 1}
	for range n {
		w.create()
	}
	return w
}

func (w *world) create() uint32 {
	id := w.nextID
	w.nextID++
	b := randomBody(w.rng)
	w.states[id] = &b
	w.ids = append(w.ids, id)
	return id
}

// op is one call of a tick: Set (with the state) or Remove.
type op struct {
	id     uint32
	remove bool
	val    Body
}

// step returns the calls of the next tick (the first: every entity set).
func (w *world) step(first bool) []op {
	var ops []op
	if first {
		for _, id := range w.ids {
			ops = append(ops, op{id: id, val: *w.states[id]})
		}
		return ops
	}
	for _, id := range w.ids {
		if w.rng.Float64() < w.move {
			b := w.states[id]
			nudge(w.rng, b)
			ops = append(ops, op{id: id, val: *b})
		}
	}
	for range w.churn {
		if len(w.ids) > 1 && w.rng.Intn(2) == 0 {
			i := w.rng.Intn(len(w.ids))
			id := w.ids[i]
			w.ids = append(w.ids[:i], w.ids[i+1:]...)
			delete(w.states, id)
			ops = append(ops, op{id: id, remove: true})
		}
		if w.rng.Intn(2) == 0 {
			id := w.create()
			ops = append(ops, op{id: id, val: *w.states[id]})
		}
	}
	// An unchanged Set now and then: it must change nothing anywhere.
	if len(w.ids) > 0 {
		id := w.ids[w.rng.Intn(len(w.ids))]
		ops = append(ops, op{id: id, val: *w.states[id]})
	}
	return ops
}

// setter is what a tick's calls go to: a replicate.Server or a Publisher.
type setter interface {
	Advance(uint32) error
	Set(uint32, *Body) (bool, error)
	Remove(uint32) (bool, error)
}

func play(t testing.TB, s setter, tick uint32, ops []op) {
	t.Helper()
	if err := s.Advance(tick); err != nil {
		t.Fatal(err)
	}
	for i := range ops {
		var err error
		if ops[i].remove {
			_, err = s.Remove(ops[i].id)
		} else {
			_, err = s.Set(ops[i].id, &ops[i].val)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// startNATS runs a NATS server in the process on port (-1: any free one).
func startNATS(t testing.TB, port int) *server.Server {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true, MaxPayload: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	return ns
}

func connect(t testing.TB, ns *server.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(ns.ClientURL(), append([]nats.Option{quiet}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// waitRequests waits until the publisher holds n unanswered requests, so
// that a test's full state is of a known tick.
func waitRequests[E any](t testing.TB, p *Publisher[E], n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(p.syncs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests arrived", len(p.syncs), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// next runs the gateway to its next tick, which must be want.
func next[E any](t testing.TB, g *Gateway[E], want uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := g.Next(ctx)
	if err != nil {
		t.Fatalf("Next (want tick %d): %v", want, err)
	}
	if got != want {
		t.Fatalf("Next: tick %d, want %d", got, want)
	}
}

// sameWorld fails unless srv holds exactly ref's entities (of the cells
// in take, by cellOf; nil: all), with the same quantized states.
func sameWorld(t testing.TB, ref, srv *replicate.Server[Body], keep func(*Body) bool) {
	t.Helper()
	n := 0
	ref.Range(func(id uint32, want *Body) bool {
		if keep != nil && !keep(want) {
			if _, ok := srv.Get(id); ok {
				t.Errorf("id %d held, outside the cells", id)
			}
			return true
		}
		n++
		got, ok := srv.Get(id)
		if !ok {
			t.Errorf("id %d missing", id)
		} else if *got != *want {
			t.Errorf("id %d: %+v, want %+v", id, *got, *want)
		}
		return !t.Failed()
	})
	if srv.Len() != n {
		t.Errorf("%d entities, want %d", srv.Len(), n)
	}
}

// quiet replaces nats.go's default error handler, which prints the slow
// consumer errors the tests provoke (Gateway counts them: Stats.Dropped).
var quiet = nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})

func natsReconnect() []nats.Option {
	return []nats.Option{nats.ReconnectWait(20 * time.Millisecond), nats.MaxReconnects(-1)}
}
