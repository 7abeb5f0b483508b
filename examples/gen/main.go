// Command gen generates the TypeScript and C# clients of this example's
// game state into client/world.ts and client/World.cs: the end-to-end use
// of package gen. Run it through
// go generate (the directive below) whenever the types change; the output
// is never edited by hand. The client imports the runtime as
// "./bitwire.js": copy clients/ts/src/bitwire.ts beside it (compile both
// with tsc, or bundle them). The C# file needs the runtime clients/cs/Bitwire
// (every .cs file of the folder) in the same build: a Unity project's
// Assets, or mcs -recurse:'clients/cs/Bitwire/*.cs' World.cs ….
//
//	go generate ./examples/gen
package main

//go:generate go run .

import (
	"bytes"
	"log"
	"os"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// Crate is one entity of the world, matched by ID in deltas.
type Crate struct {
	ID  uint16     `net:"id"`
	Pos Vec3       `net:"composite"`
	Rot [4]float32 `net:"quat"`
}

// Vec3 is a position quantized to 1 cm, sent as a difference when it moved
// less than 1 m.
type Vec3 struct {
	X, Z float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-1,dmax=1"`
	Y    float32 `net:"q,min=-16,max=112,prec=0.01,dmin=-1,dmax=1"`
}

// World is the state the server sends each tick.
type World struct {
	Tick   uint32 `net:"varint"`
	Crates []Crate
}

// Input is what a client sends back.
type Input struct {
	Move  [2]int8 `net:"range,min=-1,max=1"`
	Yaw   float32 `net:"q,min=0,max=360,bits=10"`
	Fire  bool
	Acked uint32 // the snapshot tick the client acknowledges
}

// messages are the schemas the clients are generated from.
func messages() []gen.Message {
	return []gen.Message{
		gen.Named("WorldCodec", bitwire.MustFor[World]().Schema()),
		gen.Named("InputCodec", bitwire.MustFor[Input]().Schema()),
	}
}

// generate returns the TypeScript module and the C# file.
func generate() (ts, cs []byte, err error) {
	var t, c bytes.Buffer
	if err := gen.TypeScript(&t, "./bitwire.js", messages()...); err != nil {
		return nil, nil, err
	}
	if err := gen.CSharp(&c, "Example.Net", messages()...); err != nil {
		return nil, nil, err
	}
	return t.Bytes(), c.Bytes(), nil
}

func main() {
	ts, cs, err := generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("client/world.ts", ts, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("client/World.cs", cs, 0o644); err != nil {
		log.Fatal(err)
	}
}
