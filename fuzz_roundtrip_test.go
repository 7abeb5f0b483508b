package bitwire

import (
	"math"
	"testing"

	fuzz "github.com/google/gofuzz"
)

// FuzzRoundTrip is the round-trip property driven by gofuzz: the fuzzer's
// bytes choose two values of a scene (entity set, composite structs,
// quaternions, maps, pointers, strings, signed adaptive integers), and
// encoding then decoding must give exactly the quantized value, for a full
// message and for a delta against the other value.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("bitwire"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add(make([]byte, 64))
	c := MustFor[fuzzScene]()
	f.Fuzz(func(t *testing.T, data []byte) {
		gen := fuzz.NewFromGoFuzz(data).NilChance(0.2).NumElements(0, 6).Funcs(sceneFuncs...)
		var a, b fuzzScene
		gen.Fuzz(&a)
		gen.Fuzz(&b)
		for _, v := range []*fuzzScene{&a, &b} {
			data, err := c.Marshal(v)
			if err != nil {
				t.Fatalf("Marshal of a generated value: %v", err)
			}
			var got fuzzScene
			if err := c.Unmarshal(data, &got); err != nil {
				t.Fatalf("Unmarshal(Marshal(v)): %v", err)
			}
			q := *v
			q.Cubes = append([]Cube(nil), v.Cubes...)
			q.Players = append([]DeltaPlayer(nil), v.Players...)
			if err := c.Quantize(&q); err != nil {
				t.Fatal(err)
			}
			if !c.Equal(&q, &got) {
				t.Fatalf("Unmarshal(Marshal(v)) differs from Quantize(v)")
			}
		}
		qa := a
		qa.Cubes = append([]Cube(nil), a.Cubes...)
		qa.Players = append([]DeltaPlayer(nil), a.Players...)
		if err := c.Quantize(&qa); err != nil {
			t.Fatal(err)
		}
		d, err := c.MarshalDelta(&a, &b)
		if err != nil {
			t.Fatalf("MarshalDelta: %v", err)
		}
		var got fuzzScene
		if err := c.UnmarshalDelta(d, &qa, &got); err != nil {
			t.Fatalf("UnmarshalDelta: %v", err)
		}
		if !c.Equal(&b, &got) {
			t.Fatalf("delta round trip differs from Quantize(cur)")
		}
		full, _ := c.Marshal(&b)
		again, _ := c.Marshal(&got)
		if string(full) != string(again) {
			t.Fatalf("delta-decoded value encodes differently")
		}
	})
}

// sceneFuncs keep generated values inside the ranges their tags declare.
var sceneFuncs = []any{
	func(a *fuzzAim, c fuzz.Continue) {
		for i := range a {
			a[i] = float32(c.Float64()*20 - 10)
		}
	},
	func(p *PlayerPos, c fuzz.Continue) {
		p.X = float32(c.Float64()*1024 - 512)
		p.Y = float32(c.Float64()*128 - 16)
		p.Z = float32(c.Float64()*1024 - 512)
	},
	func(p *DeltaPlayer, c fuzz.Continue) {
		c.Fuzz(&p.Pos)
		p.Yaw = float32(c.Float64() * 360)
		p.Health = c.Intn(201)
		p.Weapon = c.Intn(16)
		p.Flags = Flags{c.RandBool(), c.RandBool()}
	},
	func(q *Cube, c fuzz.Continue) {
		q.ID = uint32(c.Intn(40)) // small ids: matches, removals and additions
		c.Fuzz(&q.Pos)
		var v [4]float64
		var n float64
		for i := range v {
			v[i] = c.NormFloat64()
			n += v[i] * v[i]
		}
		// NormFloat64 over the fuzzer's bytes can return ±Inf (a logarithm
		// of zero), which would make a NaN rotation; so can a tiny norm.
		if !(n >= 1e-9) || math.IsInf(n, 0) {
			v, n = [4]float64{0, 0, 0, 1}, 1
		}
		n = math.Sqrt(n)
		for i := range v {
			q.Rot[i] = float32(v[i] / n)
		}
		q.Sleeping = c.RandBool()
	},
	func(s *fuzzScene, c fuzz.Continue) {
		s.Tick = c.Uint32()
		n := c.Intn(65)
		s.Cubes = make([]Cube, n)
		for i := range s.Cubes {
			c.Fuzz(&s.Cubes[i])
		}
		if n == 0 {
			s.Cubes = nil
		}
		np := c.Intn(9)
		s.Players = make([]DeltaPlayer, np)
		for i := range s.Players {
			c.Fuzz(&s.Players[i])
		}
		if np == 0 {
			s.Players = nil
		}
		c.Fuzz(&s.Scores)
		if len(s.Scores) == 0 {
			s.Scores = nil
		}
		if c.RandBool() {
			s.Leader = new(DeltaPlayer)
			c.Fuzz(s.Leader)
		}
		s.Note = c.RandString()
		if len(s.Note) > 32 {
			s.Note = s.Note[:32]
		}
		c.Fuzz(&s.Offsets)
		if len(s.Offsets) == 0 {
			s.Offsets = nil
		}
	},
}
