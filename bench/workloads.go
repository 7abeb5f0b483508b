// Package bench compares bitwire with the serializers Go programs use today,
// on six workloads, in one run. It is a separate module so that the library's
// users never download the peers. See docs/BENCHMARKS.md and bench/run.sh.
package bench

import (
	"math"
	"math/rand/v2"
	"time"
)

// The msgp peer's code (msgp_workloads_gen.go, by gen.sh) codes these
// structs as arrays of their fields, msgp's fastest form.
//
//msgp:tuple Person Vec3 PlayerPos PlayerState Snapshot CratePos Crate World

// Seed fixes every workload's data: the same run always measures the same values.
const Seed = 20240601

// ---- workload 1: the common Go serializer benchmark struct ----

// Person is the struct of the usual Go serializer benchmarks, tagged so that
// bitwire codes it losslessly: strings of up to 64 bytes (a 7-bit length),
// Siblings in 0..4 (3 bits), BirthDay with the library's time.Time coding
// and Money as a raw float64.
type Person struct {
	Name     string    `net:",maxlen=64"`
	BirthDay time.Time ``
	Phone    string    `net:",maxlen=64"`
	Siblings int       `net:"range,min=0,max=4"`
	Spouse   bool      ``
	Money    float64   ``
}

// Equal reports whether two Persons hold the same values (instants compared
// with time.Time.Equal, since some formats do not keep the location).
func (p *Person) Equal(o *Person) bool {
	return p.Name == o.Name && p.BirthDay.Equal(o.BirthDay) && p.Phone == o.Phone &&
		p.Siblings == o.Siblings && p.Spouse == o.Spouse &&
		math.Float64bits(p.Money) == math.Float64bits(o.Money)
}

// ---- workload 2: the seed player state, 72 bits in bitwire ----

// Vec3 is the plain vector of the peers' view of the world.
type Vec3 struct{ X, Y, Z float32 }

// PlayerPos is a position in a 1024×128×1024 m arena at 1 cm: 17+14+17 bits.
type PlayerPos struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01"`
	Y float32 `net:"q,min=-16,max=112,prec=0.01"`
	Z float32 `net:"q,min=-512,max=512,prec=0.01"`
}

// PlayerState is the seed workload: 48 bits of position, 10 of yaw, 8 of
// health, 4 of weapon and 2 flags, exactly 72 bits.
type PlayerState struct {
	Pos    PlayerPos
	Yaw    float32 `net:"q,min=0,max=360,bits=10"`
	Health int     `net:"range,min=0,max=200"`
	Weapon int     `net:"range,min=0,max=15"`
	Crouch bool
	Firing bool
}

// ---- workload 3: a 64-player snapshot ----

// Snapshot is what a 64-player server sends each tick.
type Snapshot struct {
	Tick    uint32 `net:"bits=32"`
	Players [64]PlayerState
}

// ---- workload 4: a 901-crate physics world, full and as a delta ----

// CratePos is a position on a 1024×1024 m floor up to 64 m high, at 1 cm:
// 17+13+17 bits.
type CratePos struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01"`
	Y float32 `net:"q,min=0,max=64,prec=0.01"`
	Z float32 `net:"q,min=-512,max=512,prec=0.01"`
}

// Crate is one rigid body; ID makes World.Crates an entity set in deltas.
type Crate struct {
	ID     uint32 `net:"id"`
	Pos    CratePos
	Rot    [4]float32 `net:"quat,bits=9"`
	Asleep bool
}

// World is the crate scene of one tick.
type World struct {
	Tick   uint32  `net:"bits=32"`
	Crates []Crate `net:",maxlen=1024"`
}

// Equal reports whether two Worlds hold the same values.
func (w *World) Equal(o *World) bool {
	if w.Tick != o.Tick || len(w.Crates) != len(o.Crates) {
		return false
	}
	for i := range w.Crates {
		if w.Crates[i] != o.Crates[i] {
			return false
		}
	}
	return true
}

// NumCrates is the size of the world workload.
const NumCrates = 901

// ChangedPerTick is how many crates move between the two ticks of the delta
// workload: 5% of them.
const ChangedPerTick = NumCrates * 5 / 100

// ---- deterministic data ----

func newRand() *rand.Rand { return rand.New(rand.NewPCG(Seed, Seed>>1)) }

func randString(r *rand.Rand, n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func uniform(r *rand.Rand, lo, hi float64) float32 {
	return float32(lo + (hi-lo)*r.Float64())
}

// MakePerson returns workload 1's value: a 16-character name, a 10-digit
// phone number and a birthday with nanoseconds, in UTC.
func MakePerson() Person { return makePerson(newRand()) }

// makePerson returns a Person as MakePerson does, from r.
func makePerson(r *rand.Rand) Person {
	return Person{
		Name:     randString(r, 16, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
		BirthDay: time.Unix(r.Int64N(2_000_000_000), r.Int64N(1e9)).UTC(),
		Phone:    randString(r, 10, "0123456789"),
		Siblings: r.IntN(5),
		Spouse:   r.IntN(2) == 1,
		Money:    r.Float64() * 1e6,
	}
}

func randPlayer(r *rand.Rand) PlayerState {
	return PlayerState{
		Pos: PlayerPos{
			X: uniform(r, -500, 500),
			Y: uniform(r, -10, 100),
			Z: uniform(r, -500, 500),
		},
		Yaw:    uniform(r, 0, 360),
		Health: r.IntN(201),
		Weapon: r.IntN(16),
		Crouch: r.IntN(4) == 0,
		Firing: r.IntN(3) == 0,
	}
}

// MakePlayer returns workload 2's value.
func MakePlayer() PlayerState { return randPlayer(newRand()) }

// MakeSnapshot returns workload 3's value.
func MakeSnapshot() Snapshot {
	r := newRand()
	s := Snapshot{Tick: 123456}
	for i := range s.Players {
		s.Players[i] = randPlayer(r)
	}
	return s
}

func randQuat(r *rand.Rand) [4]float32 {
	for {
		var q [4]float64
		var n float64
		for i := range q {
			q[i] = r.NormFloat64()
			n += q[i] * q[i]
		}
		if n < 1e-6 {
			continue
		}
		n = math.Sqrt(n)
		return [4]float32{float32(q[0] / n), float32(q[1] / n), float32(q[2] / n), float32(q[3] / n)}
	}
}

// MakeWorlds returns workload 4's two ticks: base, and cur in which
// ChangedPerTick crates moved, turned, and some woke up or fell asleep.
// Crate IDs are sparse and ascending.
func MakeWorlds() (base, cur World) { return makeWorlds(newRand()) }

// makeWorlds returns two ticks as MakeWorlds does, from r.
func makeWorlds(r *rand.Rand) (base, cur World) {
	base = World{Tick: 5000, Crates: make([]Crate, NumCrates)}
	for i := range base.Crates {
		base.Crates[i] = Crate{
			ID: uint32(100 + 3*i),
			Pos: CratePos{
				X: uniform(r, -500, 500),
				Y: uniform(r, 0, 60),
				Z: uniform(r, -500, 500),
			},
			Rot:    randQuat(r),
			Asleep: r.IntN(2) == 0,
		}
	}
	cur = World{Tick: base.Tick + 1, Crates: append([]Crate(nil), base.Crates...)}
	for _, i := range r.Perm(NumCrates)[:ChangedPerTick] {
		c := &cur.Crates[i]
		c.Pos.X += uniform(r, -0.5, 0.5)
		c.Pos.Y = min(c.Pos.Y+uniform(r, 0.05, 0.5), 63)
		c.Pos.Z += uniform(r, -0.5, 0.5)
		c.Rot = randQuat(r)
		if r.IntN(4) == 0 {
			c.Asleep = !c.Asleep
		}
	}
	return base, cur
}

// Diff appends to dst[:0] the crates of cur that differ from the crate with
// the same ID in base (new crates included): the "changed entities" message
// that a user of a serializer without deltas would send. Both worlds keep
// their crates sorted by ID.
func Diff(dst []Crate, base, cur *World) []Crate {
	dst = dst[:0]
	j := 0
	for _, c := range cur.Crates {
		for j < len(base.Crates) && base.Crates[j].ID < c.ID {
			j++
		}
		if j < len(base.Crates) && base.Crates[j] == c {
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// Apply rebuilds into out the world that base becomes with the changed crates
// of changes (sorted by ID). It is the receiving side of Diff; removals are
// not part of this workload.
func Apply(out *World, base *World, changes *World) {
	out.Tick = changes.Tick
	out.Crates = append(out.Crates[:0], base.Crates...)
	j := 0
	for _, c := range changes.Crates {
		for j < len(out.Crates) && out.Crates[j].ID < c.ID {
			j++
		}
		if j < len(out.Crates) && out.Crates[j].ID == c.ID {
			out.Crates[j] = c
			continue
		}
		out.Crates = append(out.Crates, c) // new crate; this workload has none
	}
}
