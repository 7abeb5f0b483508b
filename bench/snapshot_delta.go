package bench

import (
	"math"
	"math/rand/v2"
	"slices"
)

// ---- workload 5: a 64-player snapshot as a delta against the previous tick ----

// The msgp peer's code (msgp_delta_gen.go, by gen.sh) codes these as
// arrays of their fields.
//
//msgp:tuple PlayerFlags IDPlayer DeltaSnapshot
//msgp:ignore playerSim Match

// PlayerFlags are a player's two booleans. The field that holds them is
// composite: a delta sends both (2 bits) when either changes.
type PlayerFlags struct {
	Crouch bool
	Firing bool
}

// IDPlayer is the seed player state with an id, which makes
// DeltaSnapshot.Players an entity set in deltas. Pos and Flags are
// composite: when any of their fields changes, a delta sends all of them.
// In full it is the seed player's 72 bits and its id (a uint8 bitlen: 4 to
// 10 bits).
type IDPlayer struct {
	ID     uint8       `net:"id"`
	Pos    PlayerPos   `net:"composite"`
	Yaw    float32     `net:"q,min=0,max=360,bits=10"`
	Health int         `net:"range,min=0,max=200"`
	Weapon int         `net:"range,min=0,max=15"`
	Flags  PlayerFlags `net:"composite"`
}

// DeltaSnapshot is a tick of a 64-player match with the players as an entity
// set: what a server sends, as a delta, against the previous tick.
type DeltaSnapshot struct {
	Tick    uint32     `net:"bits=32"`
	Players []IDPlayer `net:",maxlen=64"`
}

// Equal reports whether two DeltaSnapshots hold the same values.
func (s *DeltaSnapshot) Equal(o *DeltaSnapshot) bool {
	return s.Tick == o.Tick && slices.Equal(s.Players, o.Players)
}

// NumPlayers is the size of the snapshot delta workload; TickRate is its
// server's tick rate in Hz.
const (
	NumPlayers = 64
	TickRate   = 30
)

// WarmupTicks is how long the match runs before the workload's pair of
// ticks, so that some players are in the air, crouched, firing or dead.
const WarmupTicks = 2 * TickRate

// playerSim is what a player does between ticks, beyond its state.
type playerSim struct {
	speed   float64 // m/s along heading
	heading float64 // radians, in the XZ plane
	vy      float64 // vertical speed while in the air, m/s
	ground  float64 // the height of the floor the player stands on
}

// A Match simulates a 64-player shooter at TickRate Hz from a fixed seed.
// Every tick every player runs (about 13 to 23 cm) and turns its view a
// little; some are in the air after a jump; a few take damage, die and
// respawn, switch weapons, crouch or stand, start or stop firing. Nobody
// joins or leaves: the ids are fixed, sparse and ascending.
type Match struct {
	r     *rand.Rand
	state DeltaSnapshot
	sim   []playerSim
}

// NewMatch returns the workload's match (from Seed) at its first tick.
func NewMatch() *Match { return newMatch(newRand()) }

// newMatch returns a match whose randomness comes from r.
func newMatch(r *rand.Rand) *Match {
	m := &Match{
		r:     r,
		state: DeltaSnapshot{Tick: 123456, Players: make([]IDPlayer, NumPlayers)},
		sim:   make([]playerSim, NumPlayers),
	}
	for i := range m.state.Players {
		ground := uniform(r, -10, 100)
		m.state.Players[i] = IDPlayer{
			ID: uint8(1 + 3*i), // 1, 4, ..., 190: gaps for tests that add players
			Pos: PlayerPos{
				X: uniform(r, -500, 500),
				Y: ground,
				Z: uniform(r, -500, 500),
			},
			Yaw:    uniform(r, 0, 360),
			Health: 1 + r.IntN(200),
			Weapon: r.IntN(16),
			Flags:  PlayerFlags{Crouch: r.IntN(8) == 0, Firing: r.IntN(6) == 0},
		}
		m.sim[i] = playerSim{
			speed:   3 + 4*r.Float64(),
			heading: 2 * math.Pi * r.Float64(),
			ground:  float64(ground),
		}
	}
	return m
}

// State returns the current tick; its players are a copy.
func (m *Match) State() DeltaSnapshot {
	return DeltaSnapshot{Tick: m.state.Tick, Players: slices.Clone(m.state.Players)}
}

// Step advances the match by one tick and returns the new state (a copy).
func (m *Match) Step() DeltaSnapshot {
	const dt = 1.0 / TickRate
	r := m.r
	m.state.Tick++
	for i := range m.state.Players {
		p, s := &m.state.Players[i], &m.sim[i]
		if p.Health == 0 { // dead: respawn after about a second, elsewhere
			if r.IntN(TickRate) == 0 {
				p.Health = 200
				p.Pos = PlayerPos{X: uniform(r, -500, 500), Y: float32(s.ground), Z: uniform(r, -500, 500)}
				p.Flags = PlayerFlags{}
				s.vy = 0
			}
			continue
		}
		// Run: speed and heading drift; walls turn the player back.
		s.speed = min(7, max(3, s.speed+0.5*(r.Float64()-0.5)))
		s.heading += 0.3 * (r.Float64() - 0.5)
		x := float64(p.Pos.X) + s.speed*math.Cos(s.heading)*dt
		z := float64(p.Pos.Z) + s.speed*math.Sin(s.heading)*dt
		if x < -500 || x > 500 {
			s.heading = math.Pi - s.heading
			x = min(500, max(-500, x))
		}
		if z < -500 || z > 500 {
			s.heading = -s.heading
			z = min(500, max(-500, z))
		}
		p.Pos.X, p.Pos.Z = float32(x), float32(z)
		// Jump now and then (about 1 m high, 0.9 s in the air).
		if s.vy == 0 && r.IntN(3*TickRate) == 0 {
			s.vy = 4.5
		}
		if s.vy != 0 {
			y := float64(p.Pos.Y) + s.vy*dt
			s.vy -= 9.81 * dt
			if y <= s.ground {
				y, s.vy = s.ground, 0
			}
			p.Pos.Y = float32(y)
		}
		// Aim: the view turns by up to 6 degrees a tick.
		yaw := math.Mod(float64(p.Yaw)+12*(r.Float64()-0.5)+360, 360)
		p.Yaw = float32(yaw)
		if p.Yaw >= 360 { // float32 rounding of a yaw just under 360
			p.Yaw = 0
		}
		// Events: about 1 hit, 1 weapon switch, 2 crouches and 4 triggers
		// pulled or released in the match per tick.
		if r.IntN(NumPlayers) == 0 {
			p.Health = max(0, p.Health-(5+r.IntN(31)))
			if p.Health == 0 {
				p.Flags = PlayerFlags{}
			}
		}
		if r.IntN(NumPlayers) == 0 {
			p.Weapon = (p.Weapon + 1 + r.IntN(15)) % 16
		}
		if r.IntN(NumPlayers) < 2 {
			p.Flags.Crouch = !p.Flags.Crouch
		}
		if r.IntN(NumPlayers) < 4 {
			p.Flags.Firing = !p.Flags.Firing
		}
	}
	return m.State()
}

// MakeSnapshotDeltas returns the snapshot delta workload's two ticks: base,
// after WarmupTicks of play, and cur one tick (1/30 s) later.
func MakeSnapshotDeltas() (base, cur DeltaSnapshot) {
	m := NewMatch()
	for range WarmupTicks {
		m.Step()
	}
	base = m.State()
	cur = m.Step()
	return base, cur
}

// DiffPlayers appends to dst[:0] the players of cur that differ from the
// player with the same ID in base (new players included): the "changed
// entities" message that a user of a serializer without deltas would send.
// Both snapshots keep their players sorted by ID.
func DiffPlayers(dst []IDPlayer, base, cur *DeltaSnapshot) []IDPlayer {
	dst = dst[:0]
	j := 0
	for _, p := range cur.Players {
		for j < len(base.Players) && base.Players[j].ID < p.ID {
			j++
		}
		if j < len(base.Players) && base.Players[j] == p {
			continue
		}
		dst = append(dst, p)
	}
	return dst
}

// ApplyPlayers rebuilds into out the snapshot that base becomes with the
// changed players of changes (sorted by ID): the receiving side of
// DiffPlayers. Players leaving are not part of this workload.
func ApplyPlayers(out, base, changes *DeltaSnapshot) {
	out.Tick = changes.Tick
	out.Players = append(out.Players[:0], base.Players...)
	j := 0
	for _, p := range changes.Players {
		for j < len(out.Players) && out.Players[j].ID < p.ID {
			j++
		}
		if j < len(out.Players) && out.Players[j].ID == p.ID {
			out.Players[j] = p
			continue
		}
		out.Players = append(out.Players, p) // a new player; this workload has none
	}
}
