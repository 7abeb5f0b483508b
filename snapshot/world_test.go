package snapshot_test

import (
	"math"
	"math/rand"

	"github.com/bitwire/bitwire"
)

// The test state: a small arena shooter. Players form an entity set (matched
// by ID in deltas), move with quantized positions whose small steps are
// coded relative to the baseline, and turn (quaternions).

type Vec3 struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-1,dmax=1"`
	Y float32 `net:"q,min=-16,max=112,prec=0.01,dmin=-1,dmax=1"`
	Z float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-1,dmax=1"`
}

type Player struct {
	ID     uint16     `net:"id"`
	Pos    Vec3       // each axis changes on its own
	Rot    [4]float32 `net:"quat,bits=9"`
	Health int        `net:"range,min=0,max=100"`
	Weapon uint8      `net:"range,min=0,max=7"`
	Firing bool
	Name   string `net:"maxlen=15"`
}

type World struct {
	Players []Player  `net:"maxlen=64"`
	Flag    *Vec3     // the carried flag; nil while it sits at its base
	Score   [2]uint16 `net:"range,min=0,max=999"`
	Round   uint8     `net:"range,min=0,max=15"`
}

var worldCodec = bitwire.MustFor[World]()

// game moves a World forward one tick at a time, from a seeded generator.
type game struct {
	rng    *rand.Rand
	w      World
	vel    map[uint16]Vec3
	spin   map[uint16][4]float64 // per-tick rotation of each player
	nextID uint16
	max    int // most players at once
}

func newGame(seed int64, players, max int) *game {
	g := &game{rng: rand.New(rand.NewSource(seed)), vel: map[uint16]Vec3{}, spin: map[uint16][4]float64{}, nextID: 1, max: max}
	for i := 0; i < players; i++ {
		g.spawn()
	}
	return g
}

var names = []string{"ana", "bo", "cyd", "dee", "eliza", "fitzgerald", "gus", "hal"}

func (g *game) spawn() {
	id := g.nextID
	g.nextID++
	q := randomQuat(g.rng)
	p := Player{
		ID:     id,
		Pos:    Vec3{X: g.f(-500, 500), Y: g.f(0, 100), Z: g.f(-500, 500)},
		Rot:    [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])},
		Health: 100,
		Weapon: uint8(g.rng.Intn(8)),
		Name:   names[g.rng.Intn(len(names))],
	}
	g.w.Players = append(g.w.Players, p) // ids ascend: appending keeps the order
	g.vel[id] = Vec3{X: g.f(-0.3, 0.3), Y: g.f(-0.05, 0.05), Z: g.f(-0.3, 0.3)}
	axis := randomQuat(g.rng)
	n := math.Sqrt(axis[0]*axis[0] + axis[1]*axis[1] + axis[2]*axis[2])
	angle := float64(g.f(0, 3)) * math.Pi / 180
	s, c := math.Sin(angle/2), math.Cos(angle/2)
	g.spin[id] = [4]float64{axis[0] / n * s, axis[1] / n * s, axis[2] / n * s, c}
}

func (g *game) f(lo, hi float64) float32 { return float32(lo + g.rng.Float64()*(hi-lo)) }

// step advances the game by one tick.
func (g *game) step() {
	w := &g.w
	if len(w.Players) < g.max && g.rng.Float64() < 0.03 {
		g.spawn()
	}
	if len(w.Players) > 2 && g.rng.Float64() < 0.03 {
		i := g.rng.Intn(len(w.Players))
		delete(g.vel, w.Players[i].ID)
		delete(g.spin, w.Players[i].ID)
		w.Players = append(w.Players[:i], w.Players[i+1:]...)
	}
	for i := range w.Players {
		p := &w.Players[i]
		if g.rng.Float64() < 0.2 { // standing still this tick
			continue
		}
		v := g.vel[p.ID]
		if g.rng.Float64() < 0.05 {
			v = Vec3{X: g.f(-0.3, 0.3), Y: g.f(-0.05, 0.05), Z: g.f(-0.3, 0.3)}
			g.vel[p.ID] = v
		}
		if g.rng.Float64() < 0.002 { // teleport
			p.Pos = Vec3{X: g.f(-500, 500), Y: g.f(0, 100), Z: g.f(-500, 500)}
		}
		p.Pos.X = bounce(p.Pos.X+v.X, -510, 510)
		p.Pos.Y = bounce(p.Pos.Y+v.Y, -15, 110)
		p.Pos.Z = bounce(p.Pos.Z+v.Z, -510, 510)
		if g.rng.Float64() < 0.5 {
			p.Rot = turn(p.Rot, g.spin[p.ID])
		}
		if g.rng.Float64() < 0.05 {
			p.Health = max(0, min(100, p.Health+g.rng.Intn(41)-25))
		}
		if g.rng.Float64() < 0.01 {
			p.Weapon = uint8(g.rng.Intn(8))
		}
		p.Firing = g.rng.Float64() < 0.1
	}
	switch {
	case w.Flag == nil && g.rng.Float64() < 0.01:
		w.Flag = &Vec3{X: g.f(-500, 500), Y: g.f(0, 100), Z: g.f(-500, 500)}
	case w.Flag != nil && g.rng.Float64() < 0.01:
		w.Flag = nil
	case w.Flag != nil:
		w.Flag.X = bounce(w.Flag.X+g.f(-0.2, 0.2), -510, 510)
	}
	if g.rng.Float64() < 0.005 {
		k := g.rng.Intn(2)
		w.Score[k] = min(999, w.Score[k]+1)
	}
	if g.rng.Float64() < 0.0005 {
		w.Round = (w.Round + 1) % 16
	}
}

func bounce(v float32, lo, hi float32) float32 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// turn applies the rotation r to q, renormalizing in float64 so that the
// float32 quaternion stays a unit one.
func turn(q [4]float32, r [4]float64) [4]float32 {
	a := [4]float64{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
	o := [4]float64{
		r[3]*a[0] + r[0]*a[3] + r[1]*a[2] - r[2]*a[1],
		r[3]*a[1] - r[0]*a[2] + r[1]*a[3] + r[2]*a[0],
		r[3]*a[2] + r[0]*a[1] - r[1]*a[0] + r[2]*a[3],
		r[3]*a[3] - r[0]*a[0] - r[1]*a[1] - r[2]*a[2],
	}
	n := math.Sqrt(o[0]*o[0] + o[1]*o[1] + o[2]*o[2] + o[3]*o[3])
	return [4]float32{float32(o[0] / n), float32(o[1] / n), float32(o[2] / n), float32(o[3] / n)}
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

// quantized returns a deep, quantized copy of w: exactly what a receiver
// decodes.
func quantized(w *World) *World {
	q := new(World)
	worldCodec.Copy(q, w)
	if err := worldCodec.Quantize(q); err != nil {
		panic(err)
	}
	return q
}
