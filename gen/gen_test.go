package gen_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// TestFingerprint: the fingerprint computed from the schema, as the
// generator checks it, is the codec's, for messages and unions.
func TestFingerprint(t *testing.T) {
	for name, s := range map[string]*bitwire.Schema{
		"All":    bitwire.MustFor[cfAll]().Schema(),
		"Player": bitwire.MustFor[cfPlayer]().Schema(),
		"Entity": bitwire.MustFor[cfEntity]().Schema(),
	} {
		fp, err := bitwire.SchemaFingerprint(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%016x", fp); got != s.Fingerprint {
			t.Errorf("%s: %s, codec says %s", name, got, s.Fingerprint)
		}
	}
	if fp, want := mustFP(t, bitwire.MustFor[cfAll]().Schema()), bitwire.MustFor[cfAll]().Fingerprint(); fp != want {
		t.Errorf("All: %x, Codec.Fingerprint %x", fp, want)
	}
	u, err := bitwire.NewUnion(cfPlayer{}, cfEntity{})
	if err != nil {
		t.Fatal(err)
	}
	if fp := mustFP(t, u.Schema()); fp != u.Fingerprint() {
		t.Errorf("union: %x, Union.Fingerprint %x", fp, u.Fingerprint())
	}
}

func mustFP(t *testing.T, s *bitwire.Schema) uint64 {
	fp, err := bitwire.SchemaFingerprint(s)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// TestSchemaChecks: a schema whose fingerprint does not match its content,
// another schema or wire version, or a bad name is refused with ErrSchema.
func TestSchemaChecks(t *testing.T) {
	good := bitwire.MustFor[cfPlayer]().Schema()
	edited := bitwire.MustFor[cfPlayer]().Schema()
	edited.Types[0].Fields[1].Node.Q.Steps++
	old := bitwire.MustFor[cfPlayer]().Schema()
	old.Version = 0
	wire := bitwire.MustFor[cfPlayer]().Schema()
	wire.WireVersion++
	wire1 := bitwire.MustFor[cfPlayer]().Schema()
	wire1.WireVersion = 1
	// Pos.X, on [-512, 512]: a grid anchored at zero whose derived fields
	// are missing (as in a hand-written schema) or wrong.
	noZero := bitwire.MustFor[cfPlayer]().Schema()
	noZero.Types[1].Fields[0].Node.Q.Zero, noZero.Types[1].Fields[0].Node.Q.KMin = false, 0
	badKMin := bitwire.MustFor[cfPlayer]().Schema()
	badKMin.Types[1].Fields[0].Node.Q.KMin++
	model := bitwire.MustFor[cfPlayer]().Schema()
	model.Model = &bitwire.ModelSchema{Hash: "0123456789abcdef"}
	for name, m := range map[string]gen.Message{
		"wire":    gen.Named("P", wire),
		"wire1":   gen.Named("P", wire1),
		"noZero":  gen.Named("P", noZero),
		"badKMin": gen.Named("P", badKMin),
		"model":   gen.Named("P", model),
		"edited":  gen.Named("P", edited),
		"version": gen.Named("P", old),
		"name":    gen.Named("not an identifier", good),
		"nil":     gen.Named("P", nil),
	} {
		if err := gen.TypeScript(io.Discard, "./bitwire.js", m); !errors.Is(err, gen.ErrSchema) {
			t.Errorf("%s: %v, want ErrSchema", name, err)
		}
	}
	if err := gen.TypeScript(io.Discard, "./bitwire.js", gen.Named("P", good)); err != nil {
		t.Fatal(err)
	}
}
