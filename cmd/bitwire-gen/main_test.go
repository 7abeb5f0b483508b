package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestRun generates both languages from a golden schema file and refuses
// bad arguments.
func TestRun(t *testing.T) {
	for _, lang := range []string{"ts", "cs"} {
		var out bytes.Buffer
		if err := run([]string{"-lang", lang, "Player=../../testdata/golden/schemas/seed-player-state.json"}, &out, io.Discard); err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		if !strings.Contains(out.String(), "DO NOT EDIT") || !strings.Contains(out.String(), "Player") {
			t.Errorf("%s: output lacks the header or the codec:\n%s", lang, out.String())
		}
	}
	for _, args := range [][]string{
		{},
		{"-lang", "go", "P=../../testdata/golden/schemas/bool.json"},
		{"nofile.json"},
		{"P=missing.json"},
		{"not-an-identifier=../../testdata/golden/schemas/bool.json"},
	} {
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
