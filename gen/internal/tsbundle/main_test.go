package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const src = "../../../clients/ts/src"

// TestBundleUpToDate fails when clients/ts/src/bitwire.ts is not the
// bundle of its parts: a part edited without `go generate ./gen`, or the
// bundle edited by hand.
func TestBundleUpToDate(t *testing.T) {
	want, err := bundle(filepath.Join(src, "runtime"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(src, "bitwire.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("clients/ts/src/bitwire.ts is not the bundle of clients/ts/src/runtime: run `go generate ./gen`")
	}
}

// Every part is bundled, and no bundled part is missing.
func TestBundleHasEveryPart(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(src, "runtime", "*.ts"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range parts {
		listed[p] = true
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".ts")
		if !listed[name] {
			t.Errorf("runtime/%s.ts is not in parts", name)
		}
		delete(listed, name)
	}
	for p := range listed {
		t.Errorf("parts lists %s, which runtime/ does not have", p)
	}
}

// A part's import of anything but a sibling is refused: the bundle has no
// dependencies.
func TestBundleRefusesOtherImports(t *testing.T) {
	dir := t.TempDir()
	for _, p := range parts {
		body := "export const X_" + p + " = 1;\n"
		if p == "codings" {
			body = "import { readFileSync } from \"fs\";\n" + body
		}
		if err := os.WriteFile(filepath.Join(dir, p+".ts"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bundle(dir); err == nil || !strings.Contains(err.Error(), "codings.ts:1") {
		t.Fatalf("bundle with an import of fs: %v, want an error at codings.ts:1", err)
	}
}
