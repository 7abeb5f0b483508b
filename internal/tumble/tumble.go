// Package tumble simulates tumbling rigid bodies, to measure how many bits
// their orientations cost on the wire. It is a measuring instrument for the
// repository's tests and benchmarks, not a physics engine: each body spins
// with an angular velocity that precesses slowly (as a free box's does),
// loses a little of it every tick (air and ground friction), is kicked by
// random collisions, and falls asleep when it has nearly stopped, until the
// next collision wakes it. No body turns by more than MaxDegrees per tick.
package tumble

import (
	"math"
	"math/rand/v2"
)

// MaxDegrees is the largest rotation of one body in one tick.
const MaxDegrees = 2.0

// World holds the bodies; the same seed gives the same sequence of states.
type World struct {
	rng    *rand.Rand
	bodies []body
}

type body struct {
	q      [4]float64 // x, y, z, w
	w      [3]float64 // angular velocity, radians per tick, world frame
	damp   float64    // per-tick factor on w
	asleep bool
}

// New returns n bodies in random orientations, about half of them spinning,
// that slow down, collide and come to rest: a settling pile of crates.
func New(seed uint64, n int) *World { return newWorld(seed, n, false) }

// NewSpinning returns n bodies that all spin forever at speeds uniform in
// 0..MaxDegrees per tick, their axes wandering and collisions changing
// them: the hardest case for deltas, every body changing every tick.
func NewSpinning(seed uint64, n int) *World { return newWorld(seed, n, true) }

func newWorld(seed uint64, n int, spinning bool) *World {
	s := &World{rng: rand.New(rand.NewPCG(seed, 0x74756d626c65))}
	s.bodies = make([]body, n)
	for i := range s.bodies {
		b := &s.bodies[i]
		b.q = s.randomQuat()
		b.damp = 0.985 + 0.013*s.rng.Float64()
		if spinning {
			b.damp = 1
		}
		if spinning || s.rng.IntN(2) == 0 {
			s.kick(b)
		} else {
			b.asleep = true
		}
	}
	return s
}

// Len returns the number of bodies.
func (s *World) Len() int { return len(s.bodies) }

// Rot returns body i's orientation as float32, as a game would send it.
func (s *World) Rot(i int) [4]float32 {
	q := s.bodies[i].q
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

// Step advances every body by one tick.
func (s *World) Step() {
	for i := range s.bodies {
		b := &s.bodies[i]
		if s.rng.Float64() < 0.004 { // a collision
			s.kick(b)
		}
		if b.asleep {
			continue
		}
		// Precession: the axis wanders a little every tick.
		for k := range b.w {
			b.w[k] += 0.02 * mag(b.w) * s.rng.NormFloat64()
		}
		limit(&b.w)
		b.q = rotate(b.q, b.w)
		for k := range b.w {
			b.w[k] *= b.damp
		}
		if mag(b.w) < 0.01*math.Pi/180 {
			b.w, b.asleep = [3]float64{}, true
		}
	}
}

// kick adds a random spin, as a collision or an explosion would.
func (s *World) kick(b *body) {
	b.asleep = false
	speed := MaxDegrees * math.Pi / 180 * s.rng.Float64()
	axis := [3]float64{s.rng.NormFloat64(), s.rng.NormFloat64(), s.rng.NormFloat64()}
	m := mag(axis)
	for k := range b.w {
		b.w[k] = 0.3*b.w[k] + speed*axis[k]/m
	}
	limit(&b.w)
}

func (s *World) randomQuat() [4]float64 {
	var q [4]float64
	for {
		n := 0.0
		for k := range q {
			q[k] = s.rng.NormFloat64()
			n += q[k] * q[k]
		}
		if n > 1e-6 {
			n = math.Sqrt(n)
			for k := range q {
				q[k] /= n
			}
			return q
		}
	}
}

func mag(v [3]float64) float64 { return math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2]) }

// limit caps the angular velocity at MaxDegrees per tick.
func limit(w *[3]float64) {
	max := MaxDegrees * math.Pi / 180
	if m := mag(*w); m > max {
		for k := range w {
			w[k] *= max / m
		}
	}
}

// rotate returns dq·q, dq the rotation by the vector w (angle |w| about
// w/|w|), renormalized.
func rotate(q [4]float64, w [3]float64) [4]float64 {
	a := mag(w)
	if a == 0 {
		return q
	}
	s := math.Sin(a/2) / a
	dx, dy, dz, dw := w[0]*s, w[1]*s, w[2]*s, math.Cos(a/2)
	x, y, z, qw := q[0], q[1], q[2], q[3]
	r := [4]float64{
		dw*x + dx*qw + dy*z - dz*y,
		dw*y - dx*z + dy*qw + dz*x,
		dw*z + dx*y - dy*x + dz*qw,
		dw*qw - dx*x - dy*y - dz*z,
	}
	n := math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2] + r[3]*r[3])
	for k := range r {
		r[k] /= n
	}
	return r
}
