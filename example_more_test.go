package bitwire_test

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Move, Chat and Fire are the messages a client sends.
type Move struct {
	X, Y float32 `net:"q,min=-1,max=1,bits=8"`
}
type Chat struct {
	Text string `net:"maxlen=64"`
}
type Fire struct {
	Weapon uint8 `net:"bits=4"`
}

// Several tagged messages in one packet: a count, then each message, read
// back into the caller's own values without allocating one per message.
func ExampleUnion_DecodeInto() {
	u, err := bitwire.NewUnion(Move{}, Chat{}, Fire{}) // tags 0, 1, 2: 2 bits
	if err != nil {
		panic(err)
	}
	w := bits.NewWriter(nil)
	msgs := []any{Move{X: 0.5, Y: 0}, Fire{Weapon: 3}, Chat{Text: "gg"}, Move{X: -1, Y: 1}}
	if err := u.EncodeCount(w, len(msgs)); err != nil {
		panic(err)
	}
	for _, m := range msgs {
		if err := u.Encode(w, m); err != nil {
			panic(err)
		}
	}
	fmt.Println("packet:", w.Len(), "bits")

	var move Move
	var chat Chat
	var fire Fire
	r := bits.NewReader(w.Bytes())
	n, err := u.DecodeCount(r)
	if err != nil {
		panic(err)
	}
	for range n {
		tag, err := u.DecodeInto(r, &move, &chat, &fire)
		if err != nil {
			panic(err)
		}
		switch tag {
		case 0:
			fmt.Printf("move %+v\n", move)
		case 1:
			fmt.Printf("chat %q\n", chat.Text)
		case 2:
			fmt.Printf("fire weapon %d\n", fire.Weapon)
		}
	}
	// Output:
	// packet: 74 bits
	// move {X:0.503937 Y:0}
	// fire weapon 3
	// chat "gg"
	// move {X:-1 Y:1}
}

// A delta against a baseline the receiver holds: one changed bit per field,
// then only the fields that changed.
func ExampleCodec_MarshalDelta() {
	c := bitwire.MustFor[Player]()
	base := Player{X: 100, Y: 50, Health: 200, Alive: true}
	cur := base
	cur.Health = 180

	full, _ := c.Marshal(&cur)
	delta, err := c.MarshalDelta(&base, &cur)
	if err != nil {
		panic(err)
	}
	fmt.Printf("full %d bytes, delta %d byte(s)\n", len(full), len(delta))

	// The receiver rebuilds cur from its copy of base.
	var got Player
	if err := c.UnmarshalDelta(delta, &base, &got); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", got)
	// Output:
	// full 6 bytes, delta 2 byte(s)
	// {X:100 Y:50 Health:180 Alive:true}
}

// Unit is one entity of an entity set: the id field (here 16 bits wide:
// `net:"id,bits=16"`) makes a slice of Units match by id in deltas.
type Unit struct {
	ID uint16  `net:"id,bits=16"`
	HP uint8   `net:"range,min=0,max=100"`
	X  float32 `net:"q,min=-100,max=100,prec=0.1"`
}

// World holds an entity set. Keep it sorted by id: deltas match entities
// in one pass that assumes ascending ids.
type World struct {
	Units []Unit
}

// An entity set's delta lists the removed entities, the new ones in full
// and the changed survivors' changed fields, matched by id.
func Example_entitySet() {
	c := bitwire.MustFor[World]()
	base := World{Units: []Unit{{ID: 1, HP: 100, X: 0}, {ID: 2, HP: 100, X: 5}, {ID: 7, HP: 50, X: -3}}}
	cur := World{Units: []Unit{{ID: 1, HP: 90, X: 0}, {ID: 7, HP: 50, X: -3}, {ID: 9, HP: 100, X: 12}}}
	full, _ := c.Marshal(&cur)
	delta, err := c.MarshalDelta(&base, &cur)
	if err != nil {
		panic(err)
	}
	fmt.Printf("full %d bytes, delta %d bytes\n", len(full), len(delta))
	var got World
	if err := c.UnmarshalDelta(delta, &base, &got); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", got.Units)
	// Output:
	// full 14 bytes, delta 10 bytes
	// [{ID:1 HP:90 X:0} {ID:7 HP:50 X:-3} {ID:9 HP:100 X:12}]
}

// Stats shows where the bits go, per field path.
func ExampleStats() {
	st := bitwire.NewStats()
	c := bitwire.MustFor[World]().WithStats(st)
	w := World{Units: []Unit{{ID: 1, HP: 100}, {ID: 2, HP: 80, X: 1.5}}}
	if _, err := c.Marshal(&w); err != nil {
		panic(err)
	}
	for _, f := range st.Fields() {
		if f.Leaf {
			fmt.Printf("%-12s %3d bits in %d values\n", f.Path, f.Bits, f.Count)
		}
	}
	// Output:
	// Units[].ID    32 bits in 2 values
	// Units[].X     22 bits in 2 values
	// Units[].HP    14 bits in 2 values
}

// WithDebug on both ends names the first field whose writer and reader
// disagree, here a reader that thinks Fire.Weapon is 5 bits wide.
func ExampleCodec_WithDebug() {
	type FireV2 struct {
		Weapon uint8 `net:"bits=5"`
	}
	data, _ := bitwire.MustFor[Fire]().WithDebug(true).Marshal(&Fire{Weapon: 3})
	var got FireV2
	err := bitwire.MustFor[FireV2]().WithDebug(true).Unmarshal(data, &got)
	fmt.Println(errors.Is(err, bitwire.ErrMalformed))
	fmt.Println(err)
	// Output:
	// true
	// FireV2.Weapon: bitwire: malformed input: debug sentinel after the field reads 0x52, not 0xa5: reader and writer disagree (at bit 5)
}

// A schema read back from JSON can be checked against its own
// fingerprint: SchemaFingerprint hashes its wire content alone.
func ExampleSchemaFingerprint() {
	type Input struct {
		Yaw  float32 `net:"q,min=-180,max=180,prec=0.1"`
		Jump bool
	}
	c := bitwire.MustFor[Input]()
	fp, err := bitwire.SchemaFingerprint(c.Schema())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fp == c.Fingerprint(), fmt.Sprintf("%016x", fp) == c.Schema().Fingerprint)
	// Output: true true
}
