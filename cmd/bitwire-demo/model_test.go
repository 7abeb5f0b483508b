package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
)

// -record trains a model on one run and writes it; -model runs with it,
// without desyncs; a corrupt model file is refused.
func TestDemoRecordAndModel(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "demo.bwm")
	var out, errb bytes.Buffer
	if code := realMain([]string{"-duration", "300ms", "-clients", "2", "-crates", "20", "-seeds", "2-3", "-record", file}, &out, &errb); code != 0 {
		t.Fatalf("-record: exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m bitwire.Model
	if err := m.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if err := bitwire.MustFor[Entity]().WithModel(&m).ModelErr(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := realMain([]string{"-duration", "300ms", "-clients", "2", "-crates", "20", "-model", file}, &out, &errb); code != 0 || !strings.Contains(out.String(), "bitwire delta") {
		t.Fatalf("-model: exit %d: %s", code, errb.String())
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := realMain([]string{"-duration", "300ms", "-model", file}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "bad model") {
		t.Fatalf("corrupt -model: exit %d: %s", code, errb.String())
	}
}

// -seeds: lists and ranges, and what is refused.
func TestParseSeeds(t *testing.T) {
	got, err := parseSeeds("2-5,9")
	if err != nil || len(got) != 5 || got[0] != 2 || got[3] != 5 || got[4] != 9 {
		t.Fatalf("parseSeeds(2-5,9) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "5-2", "1-", "1-99999"} {
		if _, err := parseSeeds(bad); err == nil {
			t.Errorf("parseSeeds(%q) accepted", bad)
		}
	}
}
