package main

import (
	"math"
	"math/rand/v2"
)

// ---- the wire types: what the server sends, described with net tags ----

// Pos is a player's position: 1 cm on a 256 m × 256 m arena, 64 m high.
// A player moves at most ~0.25 m a tick, so against a recent baseline each
// axis usually fits the ±2 m window: 1+9 bits instead of 15.
type Pos struct {
	X float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
	Y float32 `net:"q,min=-2,max=62,prec=0.01,dmin=-2,dmax=2"`
	Z float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
}

// Flags are a player's input flags, sent as one unit.
type Flags struct {
	Crouch    bool
	Firing    bool
	Airborne  bool
	Reloading bool
}

// Player is one avatar: a client's or a bot's. Its entity id (see
// entities.go) is new at each spawn, so a player who dies and respawns is
// a removal and a creation.
type Player struct {
	Pos    Pos     // each axis changes (and is coded) on its own
	Yaw    float32 `net:"q,min=0,max=360,bits=10"`
	Pitch  float32 `net:"q,min=-90,max=90,bits=9"`
	Health int     `net:"range,min=0,max=100"`
	Weapon uint8   `net:"range,min=0,max=7"`
	Flags  Flags   `net:"composite"`
}

// CratePos is a crate's position. Tumbling crates move up to ~0.5 m a
// tick; resting ones not at all. A flying crate keeps most of its velocity
// from one tick to the next, so each axis is coded against its prediction
// from the two last states the client acknowledged (pred).
type CratePos struct {
	X float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-1,dmax=1,pred"`
	Y float32 `net:"q,min=-2,max=62,prec=0.01,dmin=-1,dmax=1,pred"`
	Z float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-1,dmax=1,pred"`
}

// Crate is one rigid body. Asleep crates do not move, so a delta spends at
// most a bit on them; a spinning crate's orientation is predicted at its
// last rotation step applied again (pred).
type Crate struct {
	Pos    CratePos   // per axis
	Rot    [4]float32 `net:"quat,bits=9,pred"` // x, y, z, w
	Asleep bool
}

// Match is the game's global state: it rides in the players' stream only.
type Match struct {
	Clock uint16    `net:"range,min=0,max=3600"` // seconds left
	Score [2]uint16 `net:"range,min=0,max=999"`
}

// maxPlayers bounds clients+bots.
const maxPlayers = 64

// ---- the simulation ----

const (
	arenaHalf   = 120.0 // walls at ±120 m (the q range is ±128)
	crateHalf   = 0.5   // crates are 1 m cubes (collided with as spheres)
	gravity     = 9.81
	sleepTicks  = 10 // ticks at rest before a crate falls asleep
	restSpeed   = 0.08
	restSpin    = 0.15
	respawnSecs = 3.0
)

type vec3 struct{ x, y, z float64 }

func (a vec3) add(b vec3) vec3            { return vec3{a.x + b.x, a.y + b.y, a.z + b.z} }
func (a vec3) scale(s float64) vec3       { return vec3{a.x * s, a.y * s, a.z * s} }
func (a vec3) len() float64               { return math.Sqrt(a.x*a.x + a.y*a.y + a.z*a.z) }
func (a vec3) pos() Pos                   { return Pos{float32(a.x), float32(a.y), float32(a.z)} }
func (a vec3) cratePos() CratePos         { return CratePos{float32(a.x), float32(a.y), float32(a.z)} }
func hdist2(a, b vec3) float64            { dx, dz := a.x-b.x, a.z-b.z; return dx*dx + dz*dz }
func (w *world) f(lo, hi float64) float64 { return lo + w.rng.Float64()*(hi-lo) }

// player is the server's full state of an avatar, of which Player is the
// part it sends.
type player struct {
	slot       int // the client (or bot) it belongs to
	alive      bool
	respawnAt  int // tick
	id         uint32
	p, v       vec3
	yaw, pitch float64 // degrees
	health     int
	weapon     uint8
	flags      Flags
	wishYaw    float64
	speed      float64 // m/s, 0 standing
	lastHit    int
	reloadLeft int
}

// crate is a rigid body: the simulation state behind Crate.
type crate struct {
	id     uint32
	p, v   vec3
	q      [4]float64 // unit quaternion x, y, z, w
	w      vec3       // angular velocity, rad/s
	asleep bool
	still  int // consecutive ticks at rest
}

// world is the deterministic simulation: the same seed and configuration
// give the same sequence of states, tick after tick. It knows nothing of
// the network.
type world struct {
	rng     *rand.Rand
	rate    int
	dt      float64
	tick    int
	players []player // one slot per client, then the bots
	crates  []crate  // one slot per crate; a respawned crate takes a new id in its slot
	match   Match
	piles   []vec3 // where crates gather: cover, which fights (and grenades) seek out
	nextPID uint32
	nextCID uint32
}

func newWorld(seed uint64, rate, players, crates int) *world {
	w := &world{
		rng:     rand.New(rand.NewPCG(seed, 0x6269747769726521)),
		rate:    rate,
		dt:      1 / float64(rate),
		match:   Match{Clock: 600},
		nextPID: 1,
		nextCID: 1,
	}
	w.players = make([]player, players)
	for i := range w.players {
		w.players[i].slot = i
		w.spawnPlayer(&w.players[i])
	}
	for range 12 {
		w.piles = append(w.piles, vec3{w.f(-90, 90), 0, w.f(-90, 90)})
	}
	w.crates = make([]crate, crates)
	for i := range w.crates {
		w.spawnCrate(&w.crates[i], i%3 == 0) // a third are dropped in at the start, the rest lie still
	}
	return w
}

func (w *world) spawnPlayer(p *player) {
	*p = player{slot: p.slot, alive: true, id: w.nextPID, health: 100, lastHit: -1 << 30}
	w.nextPID++
	p.p = vec3{w.f(-100, 100), 0, w.f(-100, 100)}
	p.yaw = w.f(0, 360)
	p.wishYaw = p.yaw
	p.weapon = uint8(w.rng.IntN(8))
}

// spawnCrate puts a new crate in the slot, near one of the piles: dropped
// from a few metres with a spin, or resting on the floor.
func (w *world) spawnCrate(c *crate, drop bool) {
	*c = crate{id: w.nextCID}
	w.nextCID++
	c.q = randomQuat(w.rng)
	pile := w.piles[w.rng.IntN(len(w.piles))]
	c.p = vec3{pile.x + 4*w.rng.NormFloat64(), crateHalf, pile.z + 4*w.rng.NormFloat64()}
	c.p.x = math.Max(-arenaHalf, math.Min(arenaHalf, c.p.x))
	c.p.z = math.Max(-arenaHalf, math.Min(arenaHalf, c.p.z))
	if drop {
		c.p.y = w.f(1, 8)
		c.v = vec3{w.f(-1, 1), 0, w.f(-1, 1)}
		c.w = vec3{w.f(-4, 4), w.f(-4, 4), w.f(-4, 4)}
	} else {
		c.asleep = true
	}
}

// step advances the world by one tick.
func (w *world) step() {
	w.tick++
	if w.tick%w.rate == 0 && w.match.Clock > 0 {
		w.match.Clock--
	}
	for i := range w.players {
		w.stepPlayer(&w.players[i])
	}
	// Players shove crates they walk into.
	for i := range w.players {
		p := &w.players[i]
		if !p.alive || p.speed == 0 {
			continue
		}
		for j := range w.crates {
			c := &w.crates[j]
			if c.p.y < 1.5 && hdist2(c.p, p.p) < 1.0 {
				dir := vec3{math.Sin(p.yaw * math.Pi / 180), 0, math.Cos(p.yaw * math.Pi / 180)}
				w.knock(c, dir.scale(p.speed*0.8).add(vec3{0, w.f(0, 1.5), 0}))
			}
		}
	}
	// Every few seconds a grenade goes off near a pile of crates (where
	// the cover is): every crate within 8 m flies.
	if len(w.crates) > 0 && w.rng.Float64() < 1/(3.0*float64(w.rate)) {
		near := w.crates[w.rng.IntN(len(w.crates))].p
		at := vec3{near.x + w.f(-3, 3), 0, near.z + w.f(-3, 3)}
		for j := range w.crates {
			c := &w.crates[j]
			d2 := hdist2(c.p, at)
			if d2 < 8*8 {
				d := math.Sqrt(d2) + 0.5
				out := vec3{(c.p.x - at.x) / d, 0, (c.p.z - at.z) / d}
				pow := 9 * (1 - d/9)
				w.knock(c, out.scale(pow).add(vec3{0, pow * w.f(0.6, 1.2), 0}))
			}
		}
	}
	// Crates are replaced now and then: a despawn and a spawn (new id).
	if len(w.crates) > 0 && w.rng.Float64() < 0.05 {
		w.spawnCrate(&w.crates[w.rng.IntN(len(w.crates))], true)
	}
	for j := range w.crates {
		w.stepCrate(&w.crates[j])
	}
}

func (w *world) knock(c *crate, dv vec3) {
	c.asleep, c.still = false, 0
	c.v = c.v.add(dv)
	s := dv.len()
	c.w = c.w.add(vec3{w.f(-s, s), w.f(-s, s), w.f(-s, s)})
}

// stepPlayer runs one tick of a player under random but plausible input:
// runs and walks in changing directions, turns toward where it goes, jumps,
// crouches, fires in bursts and hurts others, dies and respawns.
func (w *world) stepPlayer(p *player) {
	if !p.alive {
		if w.tick >= p.respawnAt {
			w.spawnPlayer(p)
		}
		return
	}
	if w.rng.Float64() < 0.04 { // new intent
		switch r := w.rng.Float64(); {
		case r < 0.2:
			p.speed = 0
		case r < 0.7:
			p.speed = 3
		default:
			p.speed = 6.5
		}
		p.wishYaw = math.Mod(p.yaw+w.f(-120, 120)+360, 360)
	}
	// Turn toward the wished heading at up to 270°/s, with some aim noise.
	d := math.Mod(p.wishYaw-p.yaw+540, 360) - 180
	maxTurn := 270 * w.dt
	d = math.Max(-maxTurn, math.Min(maxTurn, d))
	p.yaw = math.Mod(p.yaw+d+w.f(-1, 1)+360, 360)
	p.pitch = math.Max(-60, math.Min(60, p.pitch+w.f(-2, 2)))

	speed := p.speed
	if p.flags.Crouch {
		speed *= 0.4
	}
	yr := p.yaw * math.Pi / 180
	p.p.x += math.Sin(yr) * speed * w.dt
	p.p.z += math.Cos(yr) * speed * w.dt
	if math.Abs(p.p.x) > arenaHalf || math.Abs(p.p.z) > arenaHalf { // a wall: turn round
		p.p.x = math.Max(-arenaHalf, math.Min(arenaHalf, p.p.x))
		p.p.z = math.Max(-arenaHalf, math.Min(arenaHalf, p.p.z))
		p.wishYaw = math.Mod(p.yaw+180, 360)
	}
	// Jumping.
	if !p.flags.Airborne && w.rng.Float64() < 0.01 {
		p.flags.Airborne, p.v.y = true, 4.5
	}
	if p.flags.Airborne {
		p.v.y -= gravity * w.dt
		p.p.y += p.v.y * w.dt
		if p.p.y <= 0 {
			p.p.y, p.v.y, p.flags.Airborne = 0, 0, false
		}
	}
	if w.rng.Float64() < 0.01 {
		p.flags.Crouch = !p.flags.Crouch
	}
	// Weapons: bursts of fire, reloads, switches.
	switch {
	case p.reloadLeft > 0:
		p.reloadLeft--
		p.flags.Reloading = p.reloadLeft > 0
	case p.flags.Firing && w.rng.Float64() < 0.08:
		p.flags.Firing = false
		if w.rng.Float64() < 0.3 {
			p.reloadLeft, p.flags.Reloading = 2*w.rate, true
		}
	case !p.flags.Firing && w.rng.Float64() < 0.02:
		p.flags.Firing = true
	}
	if w.rng.Float64() < 0.003 {
		p.weapon = uint8(w.rng.IntN(8))
	}
	if p.flags.Firing && w.rng.Float64() < 0.06 {
		t := &w.players[w.rng.IntN(len(w.players))]
		if t != p && t.alive {
			t.health -= 8 + w.rng.IntN(18)
			t.lastHit = w.tick
			if t.health <= 0 {
				t.health, t.alive = 0, false
				t.respawnAt = w.tick + int(respawnSecs*float64(w.rate))
				team := p.slot % 2
				w.match.Score[team] = min(999, w.match.Score[team]+1)
			}
		}
	}
	// Regeneration after 5 s without a hit.
	if p.health < 100 && w.tick-p.lastHit > 5*w.rate && w.tick%(w.rate/2+1) == 0 {
		p.health++
	}
}

// stepCrate integrates one rigid body: gravity, a bouncy floor with
// friction, walls, spin damping, and sleep once it has been still a while.
func (w *world) stepCrate(c *crate) {
	if c.asleep {
		return
	}
	dt := w.dt
	c.v.y -= gravity * dt
	c.p = c.p.add(c.v.scale(dt))
	onFloor := false
	if c.p.y <= crateHalf {
		c.p.y = crateHalf
		onFloor = true
		if c.v.y < 0 {
			c.v.y = -c.v.y * 0.35
			if c.v.y < 0.5 {
				c.v.y = 0
			}
		}
	}
	for _, a := range []*float64{&c.p.x, &c.p.z} {
		if *a > arenaHalf || *a < -arenaHalf {
			*a = math.Max(-arenaHalf, math.Min(arenaHalf, *a))
			if a == &c.p.x {
				c.v.x = -c.v.x * 0.5
			} else {
				c.v.z = -c.v.z * 0.5
			}
		}
	}
	if c.p.y > 60 {
		c.p.y, c.v.y = 60, 0
	}
	if onFloor {
		c.v.x *= 0.85
		c.v.z *= 0.85
		c.w = c.w.scale(0.8)
	} else {
		c.w = c.w.scale(0.995)
	}
	c.q = integrate(c.q, c.w, dt)
	if onFloor && c.v.len() < restSpeed && c.w.len() < restSpin {
		c.still++
		if c.still >= sleepTicks {
			c.asleep, c.v, c.w = true, vec3{}, vec3{}
		}
	} else {
		c.still = 0
	}
}

// integrate turns q by the angular velocity w over dt and renormalizes.
func integrate(q [4]float64, w vec3, dt float64) [4]float64 {
	angle := w.len() * dt
	if angle < 1e-9 {
		return q
	}
	ax := w.scale(1 / w.len())
	s, c := math.Sincos(angle / 2)
	r := [4]float64{ax.x * s, ax.y * s, ax.z * s, c}
	o := [4]float64{
		r[3]*q[0] + r[0]*q[3] + r[1]*q[2] - r[2]*q[1],
		r[3]*q[1] - r[0]*q[2] + r[1]*q[3] + r[2]*q[0],
		r[3]*q[2] + r[0]*q[1] - r[1]*q[0] + r[2]*q[3],
		r[3]*q[3] - r[0]*q[0] - r[1]*q[1] - r[2]*q[2],
	}
	n := math.Sqrt(o[0]*o[0] + o[1]*o[1] + o[2]*o[2] + o[3]*o[3])
	return [4]float64{o[0] / n, o[1] / n, o[2] / n, o[3] / n}
}

func randomQuat(rng *rand.Rand) [4]float64 {
	for {
		q := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		n := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
		if n > 1e-3 {
			return [4]float64{q[0] / n, q[1] / n, q[2] / n, q[3] / n}
		}
	}
}

// ---- from the simulation to the wire types ----

// awake counts the crates in motion.
func (w *world) awake() int {
	n := 0
	for i := range w.crates {
		if !w.crates[i].asleep {
			n++
		}
	}
	return n
}
