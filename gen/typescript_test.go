package gen_test

import (
	"errors"
	"io"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// A pointer to a pointer has no TypeScript value: T | null | null holds
// one null for two Go values (nil, and a pointer to nil) that are sent
// apart, so the generator refuses it rather than re-encode other bits.
func TestTypeScriptRefusesPointerToPointer(t *testing.T) {
	type pp struct {
		P **uint16 `net:"bitlen"`
	}
	err := gen.TypeScript(io.Discard, "./bitwire.js", gen.Named("PP", bitwire.MustFor[pp]().Schema()))
	if !errors.Is(err, gen.ErrSchema) {
		t.Fatalf("gen.TypeScript of **uint16: %v, want ErrSchema", err)
	}
	type p struct {
		P *uint16 `net:"bitlen"`
	}
	if err := gen.TypeScript(io.Discard, "./bitwire.js", gen.Named("P", bitwire.MustFor[p]().Schema())); err != nil {
		t.Fatalf("gen.TypeScript of *uint16: %v", err)
	}
}
