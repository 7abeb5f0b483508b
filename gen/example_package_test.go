package gen_test

import (
	"errors"
	"fmt"
	"log"
	"regexp"
	"strings"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// Vec2 is a position to 1 cm.
type Vec2 struct {
	X, Y float32 `net:"q,min=-512,max=512,prec=0.01"`
}

// Ship is the state a game server sends.
type Ship struct {
	Pos  Vec2
	Fuel uint8 `net:"range,min=0,max=100"`
}

// What the package doc's //go:generate program writes: a TypeScript module
// and a C# file for Ship, generated from its schema. The codec object is
// named ShipCodec; the classes take the struct types' names (Ship, Vec2),
// and a codec named like one of them is refused.
func Example() {
	schema := bitwire.MustFor[Ship]().Schema()
	var ts, cs strings.Builder // os.Create("client/ship.ts") and "client/Ship.cs" in a real program
	if err := gen.TypeScript(&ts, "./bitwire.js", gen.Named("ShipCodec", schema)); err != nil {
		log.Fatal(err)
	}
	if err := gen.CSharp(&cs, "Game.Net", gen.Named("ShipCodec", schema)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("TypeScript:", regexp.MustCompile(`export (?:class|const) \w+`).FindAllString(ts.String(), -1))
	fmt.Println("C#:", regexp.MustCompile(`public (?:sealed|static) class \w+`).FindAllString(cs.String(), -1))

	err := gen.TypeScript(&ts, "./bitwire.js", gen.Named("Ship", schema))
	fmt.Println(errors.Is(err, gen.ErrSchema))
	// Output:
	// TypeScript: [export class Ship export class Vec2 export const ShipCodec]
	// C#: [public sealed class Ship public sealed class Vec2 public static class ShipCodec]
	// true
}
