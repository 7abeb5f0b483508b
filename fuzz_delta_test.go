package bitwire

import (
	"math/rand"
	"testing"
)

// Fuzz targets of the delta decoder and of unions: no input may panic, and
// whatever decodes must re-encode to something that decodes to the same.

type fuzzScene struct {
	Tick    uint32        `net:"bits=32"`
	Cubes   []Cube        `net:",maxlen=64"`
	Players []DeltaPlayer `net:",maxlen=8"`
	Scores  map[string]int16
	Leader  *DeltaPlayer
	Note    string `net:",maxlen=32"`
	Offsets []int32
	Aim     fuzzAim `net:"q,min=-10,max=10,prec=0.01,dmin=-0.5,dmax=0.5"` // windowed elements
}

// fuzzAim is an array whose elements carry a window: a delta sends it
// element by element.
type fuzzAim [3]float32

func fuzzScenes() (fuzzScene, fuzzScene) {
	rng := rand.New(rand.NewSource(11))
	w := makeWorld(rng, 6)
	base := fuzzScene{Tick: 1, Cubes: w.Cubes, Players: []DeltaPlayer{{Health: 5}, {Weapon: 2}},
		Scores: map[string]int16{"a": 1, "b": -3}, Note: "hi", Offsets: []int32{1, -2, 300}, Aim: fuzzAim{1, 2, 3}}
	cur := base
	cur.Aim = fuzzAim{1.25, 2, -9} // one element in its window, one beyond it
	cur.Tick = 2
	cur.Cubes = append([]Cube(nil), w.Cubes[1:]...)
	cur.Cubes[0].Sleeping = true
	cur.Cubes = append(cur.Cubes, Cube{ID: 99, Rot: [4]float32{0, 0, 0, 1}})
	cur.Players = []DeltaPlayer{{Health: 6}, {Weapon: 2}, {Yaw: 10}}
	cur.Scores = map[string]int16{"a": 2, "c": 7}
	cur.Leader = &DeltaPlayer{Health: 9}
	cur.Offsets = []int32{1, -2, 301, 4}
	return base, cur
}

func FuzzUnmarshalDelta(f *testing.F) {
	c := MustFor[fuzzScene]()
	base, cur := fuzzScenes()
	if err := c.Quantize(&base); err != nil {
		f.Fatal(err)
	}
	for _, pair := range [][2]*fuzzScene{{&base, &cur}, {&cur, &base}, {&base, &base}} {
		data, err := c.MarshalDelta(pair[0], pair[1])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out fuzzScene
		if err := c.UnmarshalDelta(data, &base, &out); err != nil {
			return
		}
		again, err := c.MarshalDelta(&base, &out)
		if err != nil {
			t.Fatalf("decoded value does not re-encode: %v", err)
		}
		var out2 fuzzScene
		if err := c.UnmarshalDelta(again, &base, &out2); err != nil {
			t.Fatalf("re-encoded delta does not decode: %v", err)
		}
		if !c.Equal(&out, &out2) {
			t.Fatalf("delta round trip changed the value")
		}
	})
}

func FuzzUnionUnmarshal(f *testing.F) {
	u, err := NewUnion(MsgMove{}, MsgChat{}, MsgFire{}, fuzzScene{})
	if err != nil {
		f.Fatal(err)
	}
	base, _ := fuzzScenes()
	for _, v := range []any{MsgMove{X: 1}, MsgChat{Text: "hello"}, MsgFire{Weapon: 3}, base} {
		data, err := u.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := u.Unmarshal(data)
		if err != nil {
			return
		}
		again, err := u.Marshal(v)
		if err != nil {
			t.Fatalf("decoded %T does not re-encode: %v", v, err)
		}
		if _, err := u.Unmarshal(again); err != nil {
			t.Fatalf("re-encoded %T does not decode: %v", v, err)
		}
	})
}
