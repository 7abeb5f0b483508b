// Command playerstate prints the compiled layout of the seed player state
// and compares its size under bitwire with encoding/binary of the same
// struct.
//
//	go run ./examples/playerstate
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"unsafe"

	"github.com/bitwire/bitwire"
)

// PlayerPos and PlayerState are the seed player state of the tests
// (seeds_test.go): 72 bits under bitwire.
type PlayerPos struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01"`
	Y float32 `net:"q,min=-16,max=112,prec=0.01"`
	Z float32 `net:"q,min=-512,max=512,prec=0.01"`
}

type PlayerState struct {
	Pos    PlayerPos
	Yaw    float32 `net:"q,min=0,max=360,bits=10"`
	Health int     `net:"range,min=0,max=200"`
	Weapon int     `net:"range,min=0,max=15"`
	Crouch bool
	Firing bool
}

// rawPlayerState mirrors PlayerState with fixed-size types only, because
// encoding/binary cannot size an int: Health and Weapon become int64 (what
// int is on 64-bit platforms).
type rawPlayerState struct {
	X, Y, Z float32
	Yaw     float32
	Health  int64
	Weapon  int64
	Crouch  bool
	Firing  bool
}

func raw(p *PlayerState) rawPlayerState {
	return rawPlayerState{
		X: p.Pos.X, Y: p.Pos.Y, Z: p.Pos.Z, Yaw: p.Yaw,
		Health: int64(p.Health), Weapon: int64(p.Weapon),
		Crouch: p.Crouch, Firing: p.Firing,
	}
}

func main() {
	codec, err := bitwire.For[PlayerState]()
	if err != nil {
		log.Fatal(err)
	}
	p := PlayerState{
		Pos:    PlayerPos{X: 100.25, Y: 3.5, Z: -211.37},
		Yaw:    271.4,
		Health: 173,
		Weapon: 6,
		Firing: true,
	}

	fmt.Println("Layout of PlayerState:")
	fmt.Println(codec.Layout())

	packed, err := codec.Marshal(&p)
	if err != nil {
		log.Fatal(err)
	}
	var naive bytes.Buffer
	if err := binary.Write(&naive, binary.LittleEndian, raw(&p)); err != nil {
		log.Fatal(err)
	}
	var got PlayerState
	if err := codec.Unmarshal(packed, &got); err != nil {
		log.Fatal(err)
	}

	fmt.Printf("value:    %+v\n", p)
	fmt.Printf("decoded:  %+v\n", got)
	fmt.Println()
	fmt.Printf("in memory (unsafe.Sizeof, with padding):       %3d bytes\n", unsafe.Sizeof(p))
	fmt.Printf("encoding/binary (int as int64, no padding):    %3d bytes\n", naive.Len())
	fmt.Printf("bitwire (MaxBits %d, padded to whole bytes):   %3d bytes: %x\n", codec.MaxBits(), len(packed), packed)

	// A whole game: 64 players in one message, as one UDP datagram (whose
	// payload should stay under about 1200 bytes).
	var game struct{ Players [64]PlayerState }
	var rawGame [64]rawPlayerState
	for i := range game.Players {
		game.Players[i] = p
		game.Players[i].Pos.X = float32(i*16 - 512)
		rawGame[i] = raw(&game.Players[i])
	}
	gamePacked, err := bitwire.Marshal(&game)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("64 players: encoding/binary %d bytes, bitwire %d bytes\n", binary.Size(rawGame), len(gamePacked))
}
