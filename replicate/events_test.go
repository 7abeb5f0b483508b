package replicate_test

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Crew is an entity of an entity set nested in Ship.
type Crew struct {
	ID uint16 `net:"id"`
	Hp uint8  `net:"range,min=0,max=100"`
}

type ShipPos struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
	Y float32 `net:"q,min=-100,max=100,prec=0.01"`
}

// Ship has every kind of part a path names: a nested struct, a
// quaternion, an entity set, a plain slice, a map and a pointer.
type Ship struct {
	Pos   ShipPos
	Rot   [4]float32        `net:"quat"`
	Crew  []Crew            `net:",maxlen=16"`
	Guns  []uint16          `net:",maxlen=8"`
	Cargo map[string]uint16 `net:",maxlen=8"`
	Dock  *ShipPos
	Name  string `net:",maxlen=16"`
}

var shipCodec = bitwire.MustFor[Ship]()

type shipPair struct {
	t    *testing.T
	s    *replicate.Server[Ship]
	p    *replicate.Peer[Ship]
	cl   *replicate.Client[Ship]
	tick uint32
	log  []string
}

func newShipPair(t *testing.T) *shipPair {
	s, err := replicate.NewServer(shipCodec)
	require.NoError(t, err)
	p, err := s.NewPeer(replicate.PeerConfig[Ship]{})
	require.NoError(t, err)
	cl, err := replicate.NewClient(shipCodec)
	require.NoError(t, err)
	sp := &shipPair{t: t, s: s, p: p, cl: cl}
	return sp
}

func (sp *shipPair) listen() (detach func()) {
	a := sp.cl.OnRemove(func(id uint32) { sp.log = append(sp.log, fmt.Sprintf("remove %d", id)) })
	b := sp.cl.OnAdd(func(id uint32, e *Ship) { sp.log = append(sp.log, fmt.Sprintf("add %d %s", id, e.Name)) })
	c := sp.cl.OnChange(func(id uint32, e *Ship, paths []string) {
		sp.log = append(sp.log, fmt.Sprintf("change %d %v", id, paths))
	})
	return func() { a(); b(); c() }
}

// step runs one tick: f sets and removes, then one packet goes and its
// ack comes back. It returns the log of the events of that packet.
func (sp *shipPair) step(f func(s *replicate.Server[Ship])) []string {
	sp.tick++
	require.NoError(sp.t, sp.s.Advance(sp.tick))
	f(sp.s)
	sp.log = sp.log[:0]
	pkt, ok, err := sp.p.Encode(nil)
	require.NoError(sp.t, err)
	if ok {
		_, err = sp.cl.Decode(pkt)
		require.NoError(sp.t, err)
		require.NoError(sp.t, sp.p.Ack(sp.cl.Ack()))
	}
	return slices.Clone(sp.log)
}

func set(s *replicate.Server[Ship], id uint32, e Ship) {
	if _, err := s.Set(id, &e); err != nil {
		panic(err)
	}
}

func TestEventsOrderAndPaths(t *testing.T) {
	sp := newShipPair(t)
	sp.listen()
	base := Ship{Rot: [4]float32{0, 0, 0, 1}, Crew: []Crew{{1, 50}, {2, 60}}, Guns: []uint16{1, 2}, Cargo: map[string]uint16{"ore": 3}, Name: "a"}
	require.Equal(t, []string{"add 5 a", "add 7 a"}, sp.step(func(s *replicate.Server[Ship]) {
		set(s, 7, base)
		set(s, 5, base)
	}))
	// Nothing changed: no event, though the packet may be empty or not.
	require.Empty(t, sp.step(func(s *replicate.Server[Ship]) { set(s, 7, base) }))

	next := base
	next.Pos.X = 1
	next.Crew = []Crew{{2, 61}, {3, 10}} // 1 gone, 2 changed, 3 new
	next.Guns = []uint16{1, 9, 4}        // [1] changed, [2] new
	next.Cargo = map[string]uint16{"ore": 4, "gem": 1}
	next.Dock = &ShipPos{X: 2}
	other := base
	other.Name = "b"
	got := sp.step(func(s *replicate.Server[Ship]) {
		set(s, 7, next)
		_, _ = s.Remove(5)
		set(s, 3, other)
	})
	require.Equal(t, []string{
		"remove 5",
		"add 3 b",
		`change 7 [Pos.X Crew[id=1] Crew[id=2].Hp Crew[id=3] Guns[1] Guns[2] Cargo["gem"] Cargo["ore"] Dock]`,
	}, got)

	// A quaternion is one path; a pointer that stays is compared inside.
	n2 := next
	n2.Rot = [4]float32{0, 1, 0, 0}
	n2.Dock = &ShipPos{X: 2, Y: 3}
	require.Equal(t, []string{"change 7 [Rot Dock.Y]"}, sp.step(func(s *replicate.Server[Ship]) { set(s, 7, n2) }))
}

// An id removed, and set again after a packet carried the removal, is a
// removal and then an addition. Set again before, its full state replaces
// the one held (the removal is not sent): a change of what differs. A
// detached handler is not called again, and one detached while others run
// does not stop them.
func TestEventsReincarnationAndDetach(t *testing.T) {
	sp := newShipPair(t)
	detach := sp.listen()
	e := Ship{Rot: [4]float32{0, 0, 0, 1}, Name: "x"}
	sp.step(func(s *replicate.Server[Ship]) { set(s, 1, e) })
	e.Name = "y"
	require.Equal(t, []string{"change 1 [Name]"}, sp.step(func(s *replicate.Server[Ship]) {
		_, _ = s.Remove(1)
		set(s, 1, e)
	}))
	require.Equal(t, []string{"remove 1"}, sp.step(func(s *replicate.Server[Ship]) { _, _ = s.Remove(1) }))
	require.Equal(t, []string{"add 1 y"}, sp.step(func(s *replicate.Server[Ship]) { set(s, 1, e) }))
	calls := 0
	var second func()
	first := sp.cl.OnChange(func(uint32, *Ship, []string) { calls++; second() })
	second = sp.cl.OnChange(func(uint32, *Ship, []string) { calls += 10 })
	e.Name = "z"
	sp.step(func(s *replicate.Server[Ship]) { set(s, 1, e) })
	require.Equal(t, 1, calls, "the second was detached by the first before its turn")
	first()
	detach()
	e.Name = "w"
	require.Empty(t, sp.step(func(s *replicate.Server[Ship]) { set(s, 1, e) }))
	require.Equal(t, 1, calls)
}

// A full refresh of an entity that did not change calls nothing; a
// refresh that carries a change reports just that change.
func TestEventsRefresh(t *testing.T) {
	s, err := replicate.NewServer(shipCodec)
	require.NoError(t, err)
	p, err := s.NewPeer(replicate.PeerConfig[Ship]{Refresh: 3})
	require.NoError(t, err)
	cl, err := replicate.NewClient(shipCodec)
	require.NoError(t, err)
	var log []string
	cl.OnChange(func(id uint32, e *Ship, paths []string) { log = append(log, fmt.Sprint(paths)) })
	cl.OnAdd(func(id uint32, e *Ship) { log = append(log, "add") })
	e := Ship{Rot: [4]float32{0, 0, 0, 1}, Name: "r"}
	full := 0
	for tick := uint32(1); tick <= 20; tick++ {
		require.NoError(t, s.Advance(tick))
		if tick == 15 {
			e.Name = "s"
		}
		set(s, 1, e)
		pkt, ok, err := p.Encode(nil)
		require.NoError(t, err)
		if ok {
			_, err := cl.Decode(pkt)
			require.NoError(t, err)
			require.NoError(t, p.Ack(cl.Ack()))
		}
		full = p.Stats().Refresh
	}
	require.Greater(t, full, 2, "refreshes were sent")
	require.Equal(t, []string{"add", "[Name]"}, log)
}

// Under loss, events tell the application exactly what it needs: a view
// kept only from the events (adds, removes, and the changed paths'
// values copied from the state) equals the client's view after every
// packet, over a random world of many entities.
func TestEventsMirrorUnderLoss(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	s, err := replicate.NewServer(shipCodec)
	require.NoError(t, err)
	p, err := s.NewPeer(replicate.PeerConfig[Ship]{Budget: 400})
	require.NoError(t, err)
	cl, err := replicate.NewClient(shipCodec)
	require.NoError(t, err)
	mirror := map[uint32]Ship{}
	cl.OnRemove(func(id uint32) {
		_, ok := mirror[id]
		require.True(t, ok, "removal of %d not held", id)
		delete(mirror, id)
	})
	cl.OnAdd(func(id uint32, e *Ship) {
		_, ok := mirror[id]
		require.False(t, ok, "addition of %d held", id)
		mirror[id] = cloneShip(e)
	})
	cl.OnChange(func(id uint32, e *Ship, paths []string) {
		old, ok := mirror[id]
		require.True(t, ok)
		require.NotEmpty(t, paths)
		require.NotEqual(t, old, cloneShip(e))
		require.Equal(t, len(paths), len(uniq(paths)), "each path once")
		mirror[id] = cloneShip(e)
	})
	world := map[uint32]Ship{}
	ticks := 400
	if testing.Short() {
		ticks = 120
	}
	for tick := uint32(1); tick <= uint32(ticks); tick++ {
		require.NoError(t, s.Advance(tick))
		for range 5 {
			id := uint32(rng.Intn(40))
			switch rng.Intn(6) {
			case 0:
				_, _ = s.Remove(id)
				delete(world, id)
			default:
				e := world[id]
				mutateShip(rng, &e)
				world[id] = e
				set(s, id, e)
			}
		}
		pkt, ok, err := p.Encode(nil)
		require.NoError(t, err)
		if !ok || rng.Intn(5) == 0 {
			continue
		}
		if _, err := cl.Decode(pkt); err != nil {
			continue
		}
		require.NoError(t, p.Ack(cl.Ack()))
		require.Equal(t, cl.Len(), len(mirror))
		cl.Range(func(id, _ uint32, e *Ship) bool {
			require.Equal(t, cloneShip(e), mirror[id], "id %d", id)
			return true
		})
	}
}

func uniq(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

func cloneShip(e *Ship) Ship {
	c := *e
	c.Crew = slices.Clone(e.Crew)
	c.Guns = slices.Clone(e.Guns)
	if len(c.Crew) == 0 {
		c.Crew = nil
	}
	if len(c.Guns) == 0 {
		c.Guns = nil
	}
	c.Cargo = nil
	if len(e.Cargo) > 0 {
		c.Cargo = map[string]uint16{}
		for k, v := range e.Cargo {
			c.Cargo[k] = v
		}
	}
	if e.Dock != nil {
		d := *e.Dock
		c.Dock = &d
	}
	return c
}

func mutateShip(rng *rand.Rand, e *Ship) {
	if e.Rot == [4]float32{} {
		e.Rot = [4]float32{0, 0, 0, 1}
	}
	switch rng.Intn(6) {
	case 0:
		e.Pos.X = float32(rng.Intn(2000)-1000) / 10
	case 1:
		id := uint16(rng.Intn(6))
		i := slices.IndexFunc(e.Crew, func(c Crew) bool { return c.ID == id })
		switch {
		case i < 0 && len(e.Crew) < 16:
			e.Crew = append(slices.Clone(e.Crew), Crew{id, uint8(rng.Intn(101))})
		case i >= 0 && rng.Intn(2) == 0:
			e.Crew = slices.Delete(slices.Clone(e.Crew), i, i+1)
		case i >= 0:
			e.Crew = slices.Clone(e.Crew)
			e.Crew[i].Hp = uint8(rng.Intn(101))
		}
	case 2:
		e.Guns = append([]uint16(nil), e.Guns...)
		if len(e.Guns) < 8 && rng.Intn(2) == 0 {
			e.Guns = append(e.Guns, uint16(rng.Intn(256)))
		} else if len(e.Guns) > 0 {
			e.Guns = e.Guns[:len(e.Guns)-1]
		}
	case 3:
		m := map[string]uint16{}
		for k, v := range e.Cargo {
			m[k] = v
		}
		if len(m) < 8 {
			m[fmt.Sprint("k", rng.Intn(4))] = uint16(rng.Intn(5))
		}
		e.Cargo = m
	case 4:
		if e.Dock == nil {
			e.Dock = &ShipPos{X: 1}
		} else {
			e.Dock = nil
		}
	case 5:
		e.Name = fmt.Sprint(rng.Intn(10))
	}
}

// hiddenShip has its parts in unexported tagged fields.
type hiddenShip struct {
	guns  []uint16         `net:",maxlen=4"`
	cargo map[string]uint8 `net:",maxlen=4"`
	dock  *ShipPos         `net:""`
}

func TestEventsUnexportedFields(t *testing.T) {
	c, err := bitwire.For[hiddenShip]()
	require.NoError(t, err)
	s, _ := replicate.NewServer(c)
	p, _ := s.NewPeer(replicate.PeerConfig[hiddenShip]{})
	cl, _ := replicate.NewClient(c)
	var got [][]string
	cl.OnChange(func(id uint32, e *hiddenShip, paths []string) { got = append(got, paths) })
	states := []hiddenShip{
		{guns: []uint16{1}, cargo: map[string]uint8{"a": 1}},
		{guns: []uint16{1, 2}, cargo: map[string]uint8{"a": 2}, dock: &ShipPos{X: 1}},
	}
	for i, e := range states {
		require.NoError(t, s.Advance(uint32(i+1)))
		_, err := s.Set(1, &e)
		require.NoError(t, err)
		pkt, _, err := p.Encode(nil)
		require.NoError(t, err)
		_, err = cl.Decode(pkt)
		require.NoError(t, err)
		require.NoError(t, p.Ack(cl.Ack()))
	}
	require.Equal(t, [][]string{{"guns[1]", `cargo["a"]`, "dock"}}, got)
}
