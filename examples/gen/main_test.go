package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGenerated checks that client/world.ts is what go generate writes
// today: generated code is reproducible and never edited by hand.
func TestGenerated(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("client/world.ts")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("client/world.ts is stale: run go generate ./examples/gen")
	}
}
