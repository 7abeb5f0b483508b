package bitwire_test

import (
	"fmt"

	"github.com/bitwire/bitwire"
)

// Example_readme is the README's example, compiled and checked here so that
// the README cannot drift from the code: tags, a full message, a delta.
func Example_readme() {
	type Player struct {
		X, Z   float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"` // 17 bits; small moves as differences
		Yaw    float32 `net:"q,min=0,max=360,prec=0.5"`                    // 10 bits (720 steps)
		Health int     `net:"range,min=0,max=200,clamp"`                   // 8 bits; 250 is sent as 200
		Alive  bool    // 1 bit
	}
	codec := bitwire.MustFor[Player]() // compiled once, cached per type

	base := Player{X: 12.345, Z: -300, Yaw: 90, Health: 250, Alive: true}
	full, err := codec.Marshal(&base)
	if err != nil {
		panic(err) // e.g. "Player.X: bitwire: value out of range (at bit 0)"
	}
	var got Player
	if err := codec.Unmarshal(full, &got); err != nil {
		panic(err)
	}
	fmt.Printf("full: %d bytes, %+v\n", len(full), got)

	cur := got
	cur.X += 0.5 // moved; nothing else changed
	delta, err := codec.MarshalDelta(&got, &cur)
	if err != nil {
		panic(err)
	}
	var next Player
	if err := codec.UnmarshalDelta(delta, &got, &next); err != nil { // the receiver holds got
		panic(err)
	}
	fmt.Printf("delta: %d bytes, X = %.2f\n", len(delta), next.X)
	// Output:
	// full: 7 bytes, {X:12.35 Z:-300 Yaw:90 Health:200 Alive:true}
	// delta: 2 bytes, X = 12.85
}
