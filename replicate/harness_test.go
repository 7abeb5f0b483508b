package replicate_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Body is the test entity: a tumbling box.
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

// nudge moves b a little, as one tick of motion does.
func nudge(rng *rand.Rand, b *Body) {
	b.X = float32(math.Max(-255, math.Min(255, float64(b.X)+rng.Float64()-0.5)))
	b.Z = float32(math.Max(-255, math.Min(255, float64(b.Z)+rng.Float64()-0.5)))
	b.Y = float32(math.Max(-15, math.Min(47, float64(b.Y)+rng.Float64()*0.2-0.1)))
	if rng.Intn(3) == 0 {
		b.Rot = randomRot(rng)
	}
	if rng.Intn(10) == 0 {
		b.Hp = uint8(rng.Intn(101))
	}
}

// truth logs every quantized state of every entity the server held, with
// the tick it began, and the tick each entity was removed.
type truth struct {
	states  map[uint32][]truthState
	removed map[uint32]uint32 // id → tick of the last removal, while not re-created
}

type truthState struct {
	tick uint32
	val  Body
	gone bool // removed at tick
}

func newTruth() *truth {
	return &truth{states: map[uint32][]truthState{}, removed: map[uint32]uint32{}}
}

func (tr *truth) set(srv *replicate.Server[Body], id uint32, tick uint32) {
	v, _ := srv.Get(id)
	tr.states[id] = append(tr.states[id], truthState{tick: tick, val: *v})
	delete(tr.removed, id)
}

func (tr *truth) remove(id, tick uint32) {
	tr.states[id] = append(tr.states[id], truthState{tick: tick, gone: true})
	tr.removed[id] = tick
}

// at returns the server's state of id at tick; false when it did not
// exist then.
func (tr *truth) at(id, tick uint32) (Body, bool) {
	h := tr.states[id]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].tick <= tick {
			return h[i].val, !h[i].gone
		}
	}
	return Body{}, false
}

// check compares the state a client holds of id (from tick) with the truth.
func (tr *truth) check(id, tick uint32, got *Body) error {
	want, ok := tr.at(id, tick)
	if !ok {
		return fmt.Errorf("id %d: the client holds a state from tick %d, when the server had no such entity", id, tick)
	}
	if want != *got {
		return fmt.Errorf("id %d tick %d: client holds %+v, server had %+v", id, tick, *got, want)
	}
	return nil
}

// link is an unreliable datagram link: loss, duplication, delays (hence
// reordering), from a seeded generator.
type link struct {
	rng      *rand.Rand
	loss     float64
	dup      float64
	maxDelay int
	q        []flight
	down     bool // drops everything (a client that went silent)
}

type flight struct {
	at  int
	msg []byte
}

func (l *link) send(now int, m []byte) {
	if l.down || l.rng.Float64() < l.loss {
		return
	}
	n := 1
	if l.rng.Float64() < l.dup {
		n = 2
	}
	for range n {
		l.q = append(l.q, flight{at: now + l.rng.Intn(l.maxDelay+1), msg: append([]byte(nil), m...)})
	}
}

func (l *link) receive(now int) [][]byte {
	var out [][]byte
	keep := l.q[:0]
	for _, f := range l.q {
		if f.at <= now {
			out = append(out, f.msg)
		} else {
			keep = append(keep, f)
		}
	}
	l.q = keep
	l.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// sim is a server, its world and truth, and clients over lossy links.
type sim struct {
	t       testing.TB
	rng     *rand.Rand
	srv     *replicate.Server[Body]
	tr      *truth
	bodies  map[uint32]*Body
	ids     []uint32
	nextID  uint32
	tick    uint32
	clients []*simClient
	// per tick: the fraction of entities moved, created and removed.
	move, spawn, despawn float64
}

type simClient struct {
	peer     *replicate.Peer[Body]
	cl       *replicate.Client[Body]
	down, up *link
	accepted int
	stale    int
	noBase   int
	maxBytes int
	bytes    []int // bytes sent per tick
}

func newSim(t testing.TB, seed int64, entities int, opts ...replicate.Option) *sim {
	srv, err := replicate.NewServer(bodyCodec, opts...)
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{t: t, rng: rand.New(rand.NewSource(seed)), srv: srv, tr: newTruth(), bodies: map[uint32]*Body{}, nextID: 1}
	s.advance()
	for range entities {
		s.create()
	}
	return s
}

func (s *sim) advance() {
	s.tick++
	if err := s.srv.Advance(s.tick); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sim) create() uint32 {
	id := s.nextID
	s.nextID += 1 + uint32(s.rng.Intn(3))
	b := randomBody(s.rng)
	s.bodies[id] = &b
	s.ids = append(s.ids, id)
	s.set(id)
	return id
}

func (s *sim) set(id uint32) {
	changed, err := s.srv.Set(id, s.bodies[id])
	if err != nil {
		s.t.Fatal(err)
	}
	if changed {
		s.tr.set(s.srv, id, s.tick)
	}
}

func (s *sim) remove(i int) {
	id := s.ids[i]
	s.ids[i] = s.ids[len(s.ids)-1]
	s.ids = s.ids[:len(s.ids)-1]
	delete(s.bodies, id)
	if ok, err := s.srv.Remove(id); err != nil || !ok {
		s.t.Fatalf("Remove(%d): %v %v", id, ok, err)
	}
	s.tr.remove(id, s.tick)
}

func (s *sim) addClient(cfg replicate.PeerConfig[Body], loss, dup float64, maxDelay int) *simClient {
	p, err := s.srv.NewPeer(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	cl, err := replicate.NewClient(bodyCodec, replicate.WithIntegrity(cfg.Integrity, cfg.Key))
	if err != nil {
		s.t.Fatal(err)
	}
	c := &simClient{peer: p, cl: cl,
		down: &link{rng: rand.New(rand.NewSource(s.rng.Int63())), loss: loss, dup: dup, maxDelay: maxDelay},
		up:   &link{rng: rand.New(rand.NewSource(s.rng.Int63())), loss: loss, dup: dup, maxDelay: maxDelay},
	}
	s.clients = append(s.clients, c)
	return c
}

// step runs one tick: the world changes, every peer sends, every client
// receives, checks and acknowledges, and acks reach the server.
func (s *sim) step() {
	s.advance()
	for _, id := range s.ids {
		if s.rng.Float64() < s.move {
			nudge(s.rng, s.bodies[id])
			s.set(id)
		}
	}
	for i := 0; i < len(s.ids); i++ {
		if s.rng.Float64() < s.despawn {
			s.remove(i)
		}
	}
	n := float64(len(s.ids))
	for k := s.rng.Float64() * n * s.spawn * 2; k > 0; k-- {
		if s.rng.Float64() < k {
			s.create()
		}
	}
	now := int(s.tick)
	var buf []byte
	for _, c := range s.clients {
		sent := 0
		for {
			pkt, ok, err := c.peer.Encode(buf[:0])
			if err != nil {
				s.t.Fatal(err)
			}
			if !ok {
				break
			}
			buf = pkt
			sent += len(pkt)
			c.maxBytes = max(c.maxBytes, len(pkt))
			c.down.send(now, pkt)
		}
		c.bytes = append(c.bytes, sent)
	}
	for _, c := range s.clients {
		for _, pkt := range c.down.receive(now) {
			c.receive(s, pkt)
		}
		for _, a := range c.up.receive(now) {
			ack, err := replicate.ParseAck(a)
			if err != nil {
				s.t.Fatal(err)
			}
			c.peer.Ack(ack)
		}
	}
}

func (c *simClient) receive(s *sim, pkt []byte) {
	info, err := c.cl.Decode(pkt)
	switch {
	case err == nil:
	case errorsIs(err, replicate.ErrStale):
		c.stale++
		return
	case errorsIs(err, replicate.ErrNoBaseline):
		c.noBase++
		return
	default:
		s.t.Fatalf("tick %d: decode: %v", s.tick, err)
	}
	c.accepted++
	for _, id := range info.Updated {
		got, tick, ok := c.cl.Get(id)
		if !ok || tick != info.Tick {
			s.t.Fatalf("id %d updated by packet %d but held from tick %d (%v)", id, info.Seq, tick, ok)
		}
		if err := s.tr.check(id, tick, got); err != nil {
			s.t.Fatalf("desync at tick %d: %v", s.tick, err)
		}
	}
	c.up.send(int(s.tick), replicate.AppendAck(nil, c.cl.Ack()))
}

// checkView checks every state c holds against the truth, and returns the
// number of entities it holds that the server removed more than bound
// ticks ago.
func (s *sim) checkView(c *simClient, bound uint32) (lingering int) {
	c.cl.Range(func(id, tick uint32, e *Body) bool {
		if err := s.tr.check(id, tick, e); err != nil {
			s.t.Fatal(err)
		}
		if at, gone := s.tr.removed[id]; gone && s.tick-at > bound {
			lingering++
		}
		return true
	})
	return lingering
}
