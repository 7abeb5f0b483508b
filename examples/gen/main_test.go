package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGenerated checks that the files in client/ are what go generate
// writes today: generated code is reproducible and never edited by hand.
func TestGenerated(t *testing.T) {
	ts, cs, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]byte{"client/world.ts": ts, "client/World.cs": cs} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./examples/gen", path)
		}
	}
}
