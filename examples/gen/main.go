// Command gen generates the TypeScript client of this example's game state
// into client/world.ts: the end-to-end use of package gen. Run it through
// go generate (the directive below) whenever the types change; the output
// is never edited by hand. The client imports the runtime as
// "./bitwire.js": copy clients/ts/src/bitwire.ts beside it (compile both
// with tsc, or bundle them).
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

// generate writes the module for World and Input.
func generate() ([]byte, error) {
	var b bytes.Buffer
	err := gen.TypeScript(&b, "./bitwire.js",
		gen.Named("WorldCodec", bitwire.MustFor[World]().Schema()),
		gen.Named("InputCodec", bitwire.MustFor[Input]().Schema()))
	return b.Bytes(), err
}

func main() {
	b, err := generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("client/world.ts", b, 0o644); err != nil {
		log.Fatal(err)
	}
}
