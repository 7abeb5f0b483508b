package bitwire_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Player is the state of one player as a game server sends it.
type Player struct {
	X, Y   float32 `net:"q,min=-512,max=512,prec=0.01"` // 17 bits each
	Health int     `net:"range,min=0,max=200"`          // 8 bits
	Alive  bool    // 1 bit
}

func ExampleMarshal() {
	in := Player{X: 100.25, Y: -3.14159, Health: 150, Alive: true}
	data, err := bitwire.Marshal(&in)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d bytes: % x\n", len(data), data)

	var out Player
	if err := bitwire.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	fmt.Printf("X=%.2f Y=%.2f Health=%d Alive=%v\n", out.X, out.Y, out.Health, out.Alive)
	// Output:
	// 6 bytes: 29 ef 8c 8d 59 06
	// X=100.25 Y=-3.14 Health=150 Alive=true
}

func ExampleFor() {
	c, err := bitwire.For[Player]()
	if err != nil {
		panic(err) // a bad net tag is reported here, never while encoding
	}
	buf := make([]byte, 0, 64) // reused for every message: no allocation
	var out Player
	for _, p := range []Player{{X: 1, Y: 2, Health: 3}, {X: -511.999, Y: 511.999, Health: 200, Alive: true}} {
		buf, err = c.Append(buf[:0], &p)
		if err != nil {
			panic(err)
		}
		if err := c.Unmarshal(buf, &out); err != nil {
			panic(err)
		}
		fmt.Printf("%d bytes -> X=%.2f Y=%.2f Health=%d Alive=%v\n", len(buf), out.X, out.Y, out.Health, out.Alive)
	}
	// Output:
	// 6 bytes -> X=1.00 Y=2.00 Health=3 Alive=false
	// 6 bytes -> X=-512.00 Y=512.00 Health=200 Alive=true
}

// Vec is an untagged vector type, as a math package would have it.
type Vec struct{ X, Y, Z float32 }

type Entity struct {
	ID   uint16     `net:"bits=12"`
	Pos  Vec        `net:"q,min=-1000,max=1000,prec=0.05"` // passed down to X, Y and Z
	Rot  [4]float32 `net:"quat"`
	Name string     `net:"maxlen=15"`
	Ammo []uint16   `net:"bitlen,maxlen=4"`
}

func ExampleCodec_Layout() {
	c := bitwire.MustFor[Entity]()
	for _, line := range strings.Split(strings.TrimSpace(c.Layout()), "\n") {
		fmt.Println(strings.TrimRight(line, " "))
	}
	fmt.Println("worst case:", c.MaxBits(), "bits")
	// Output:
	// field          coding   bits  options
	// Entity.ID      bits       12  n=12 signed=false
	// Entity.Pos.X   q          16  min=-1000 max=1000 steps=40000 step=0.05
	// Entity.Pos.Y   q          16  min=-1000 max=1000 steps=40000 step=0.05
	// Entity.Pos.Z   q          16  min=-1000 max=1000 steps=40000 step=0.05
	// Entity.Rot     quat       29  component bits=9
	// Entity.Name    string  4-124  maxlen=15
	// Entity.Ammo    slice    3-80  maxlen=4 shared length
	// Entity.Ammo[]  bitlen   5-19  width=4 signed=false
	// worst case: 293 bits
}

func ExampleCodec_Encode() {
	c := bitwire.MustFor[Player]()
	players := []Player{
		{X: 10, Y: 20, Health: 100, Alive: true},
		{X: -5.5, Y: 0.25, Health: 0},
		{X: 511, Y: -511, Health: 200, Alive: true},
	}

	// One packet: a count, then the players back to back, bit-packed.
	w := bits.NewWriter(nil)
	w.WriteBits(uint64(len(players)), 8)
	for i := range players {
		if err := c.Encode(w, &players[i]); err != nil {
			panic(err)
		}
	}
	packet := w.Bytes()
	fmt.Printf("%d players in %d bits, %d bytes\n", len(players), w.Len(), len(packet))

	r := bits.NewReader(packet)
	n, err := r.ReadBits(8)
	if err != nil {
		panic(err)
	}
	got := make([]Player, n)
	for i := range got {
		if err := c.Decode(r, &got[i]); err != nil {
			panic(err)
		}
		fmt.Printf("%+v\n", got[i])
	}
	fmt.Println("padding bits left:", r.Remaining())
	// Output:
	// 3 players in 137 bits, 18 bytes
	// {X:10 Y:20 Health:100 Alive:true}
	// {X:-5.5 Y:0.25 Health:0 Alive:false}
	// {X:511 Y:-511 Health:200 Alive:true}
	// padding bits left: 7
}

func ExampleCodec_Quantize() {
	c := bitwire.MustFor[Player]()
	p := Player{X: 1.2345, Y: -0.004, Health: 42}
	q := p
	if err := c.Quantize(&q); err != nil { // q is now what a receiver decodes
		panic(err)
	}
	fmt.Printf("X %.4f -> %.4f, Y %.4f -> %.4f\n", p.X, q.X, p.Y, q.Y)
	fmt.Println("equal after quantization:", c.Equal(&p, &q))
	q.X += 0.02
	fmt.Println("after moving two steps:", c.Equal(&p, &q))
	// Output:
	// X 1.2345 -> 1.2300, Y -0.0040 -> 0.0000
	// equal after quantization: true
	// after moving two steps: false
}

func ExampleCodec_Schema() {
	type Shot struct {
		Weapon uint8   `net:"bits=4"`
		Angle  float32 `net:"q,min=0,max=360,bits=10"`
	}
	s := bitwire.MustFor[Shot]().Schema()
	for _, f := range s.Types[s.Root].Fields {
		fmt.Println(f.Name, f.Node.Coding, f.Node.MinBits, "bits")
	}
	// the JSON that generators for other languages read (docs/schema.md)
	js, err := json.Marshal(s.Types[s.Root].Fields[1].Node)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(js))
	fmt.Println("fingerprint", s.Fingerprint)
	// Output:
	// Weapon bits 4 bits
	// Angle q 10 bits
	// {"coding":"q","type":"float32","q":{"min":0,"max":360,"steps":1023,"step":0.3519061583577713,"bits":10,"zero":false,"kmin":0},"minBits":10,"maxBits":10}
	// fingerprint fc4f4eb13a3e3a9c
}

func ExampleSchemaOf() {
	type Ping struct {
		Seq  uint16 `net:"bits=12"`
		Note string `net:",maxlen=7"`
	}
	s, err := bitwire.SchemaOf(Ping{})
	if err != nil {
		panic(err)
	}
	for _, f := range s.Types[s.Root].Fields {
		js, _ := json.Marshal(f.Node)
		fmt.Println(f.Name, string(js))
	}
	// Output:
	// Seq {"coding":"bits","type":"uint16","bits":{"width":12},"minBits":12,"maxBits":12}
	// Note {"coding":"string","type":"string","maxlen":7,"minBits":3,"maxBits":59}
}
