package gen_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// Input is what a game client sends each tick.
type Input struct {
	Yaw  float32 `net:"q,min=0,max=360,bits=10"`
	Fire bool
}

// A TypeScript module for Input: a class and a codec object.
func ExampleTypeScript() {
	var out strings.Builder
	err := gen.TypeScript(&out, "./bitwire.js", gen.Named("InputCodec", bitwire.MustFor[Input]().Schema()))
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "export") || strings.Contains(l, `name: "Yaw"`) {
			fmt.Println(l)
		}
	}
	// Output:
	// export class Input {
	//   { name: "Yaw", node: { k: "q", f32: true, min: 0, max: 360, steps: 1023, step: 0.3519061583577713 } },
	// export const InputCodec = {
}

// A C# file for Input: the class with its specialized coder, and a static
// codec class.
func ExampleCSharp() {
	var out strings.Builder
	err := gen.CSharp(&out, "Game.Net", gen.Named("InputCodec", bitwire.MustFor[Input]().Schema()))
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "public sealed class") || strings.Contains(l, "public static class") || strings.Contains(l, "public float Yaw") {
			fmt.Println(strings.TrimSpace(l))
		}
	}
	// Output:
	// public sealed class Input
	// public float Yaw = 0;
	// public static class InputCodec
}
