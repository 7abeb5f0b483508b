package gen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

type hsVec struct{ X, Y float32 }

type hsWorld struct {
	Tick uint32
	Pos  hsVec
	Tags []hsVec
}

// hsSchema is a fresh copy of hsWorld's schema, through JSON as a schema
// file travels.
func hsSchema(t *testing.T) *bitwire.Schema {
	t.Helper()
	b, err := json.Marshal(bitwire.MustFor[hsWorld]().Schema())
	if err != nil {
		t.Fatal(err)
	}
	var s bitwire.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func genBoth(s *bitwire.Schema) (ts, cs string, tsErr, csErr error) {
	var a, b strings.Builder
	tsErr = gen.TypeScript(&a, "./bitwire.js", gen.Named("W", s))
	csErr = gen.CSharp(&b, "Conf", gen.Named("W", s))
	return a.String(), b.String(), tsErr, csErr
}

// Names that are not identifiers are refused in both languages; the
// fingerprint, which ignores labels, would not catch them.
func TestHostileSchemaNames(t *testing.T) {
	fp := bitwire.MustFor[hsWorld]().Fingerprint()
	for name, edit := range map[string]func(s *bitwire.Schema){
		"field code": func(s *bitwire.Schema) {
			s.Types[0].Fields[0].Name = `N: string = ""; static _x = (console.log("PWNED"), 0); M`
		},
		"field keyword":  func(s *bitwire.Schema) { s.Types[0].Fields[0].Name = "class" },
		"field ctor":     func(s *bitwire.Schema) { s.Types[0].Fields[0].Name = "constructor" },
		"field empty":    func(s *bitwire.Schema) { s.Types[0].Fields[0].Name = "" },
		"field twice":    func(s *bitwire.Schema) { s.Types[0].Fields[1].Name = s.Types[0].Fields[0].Name },
		"type code":      func(s *bitwire.Schema) { s.Types[1].Name = "V {} ; alert(1); class Z" },
		"type digit":     func(s *bitwire.Schema) { s.Types[1].Name = "1V" },
		"type twice":     func(s *bitwire.Schema) { s.Types[1].Name = s.Types[0].Name },
		"type keyword":   func(s *bitwire.Schema) { s.Types[1].Name = "object" },
		"root range":     func(s *bitwire.Schema) { s.Root = 7 },
		"ref range":      func(s *bitwire.Schema) { r := 9; s.Types[0].Fields[1].Node.Ref = &r },
		"ref negative":   func(s *bitwire.Schema) { r := -1; s.Types[0].Fields[1].Node.Ref = &r },
		"group range":    func(s *bitwire.Schema) { s.Types[0].Fields[0].Group = 3 },
		"group negative": func(s *bitwire.Schema) { s.Types[0].Fields[0].Group = -2 },
		// a type no field reaches, with a dangling ref
		"unreachable ref": func(s *bitwire.Schema) {
			r := 40
			s.Types = append(s.Types, bitwire.TypeSchema{Name: "Extra", GoType: "x", Fields: []bitwire.FieldSchema{
				{Name: "E", Group: -1, Node: &bitwire.NodeSchema{Coding: "struct", Ref: &r}}}})
		},
		// Vec holds a World by value, which holds a Vec by value
		"by-value cycle": func(s *bitwire.Schema) {
			r := 0
			s.Types[1].Fields = append(s.Types[1].Fields, bitwire.FieldSchema{Name: "Back", Group: -1,
				Node: &bitwire.NodeSchema{Coding: "struct", Ref: &r, MinBits: 1, MaxBits: -1}})
		},
		"by-value self": func(s *bitwire.Schema) {
			r := 1
			s.Types[1].Fields = append(s.Types[1].Fields, bitwire.FieldSchema{Name: "Self", Group: -1,
				Node: &bitwire.NodeSchema{Coding: "array", Count: 2, Elem: &bitwire.NodeSchema{Coding: "struct", Ref: &r}}})
		},
	} {
		s := hsSchema(t)
		edit(s)
		s.Fingerprint = ""
		_, _, tsErr, csErr := genBoth(s)
		if !errors.Is(tsErr, gen.ErrSchema) || !errors.Is(csErr, gen.ErrSchema) {
			t.Errorf("%s: TypeScript: %v; C#: %v; want gen.ErrSchema", name, tsErr, csErr)
		}
	}
	if s := hsSchema(t); s.Fingerprint != "" {
		if got, _ := bitwire.SchemaFingerprint(s); got != fp {
			t.Fatalf("fingerprint %x, want %x", got, fp)
		}
	}
	// message names too
	for _, name := range []string{"class", "W-1", "", "x y"} {
		if err := gen.TypeScript(&strings.Builder{}, "./bitwire.js", gen.Named(name, hsSchema(t))); !errors.Is(err, gen.ErrSchema) {
			t.Errorf("message %q: %v, want gen.ErrSchema", name, err)
		}
	}
}

// Go type labels are free text: they are escaped into the comments, so
// that they cannot end one, and the schema still generates (its
// fingerprint does not cover labels).
func TestHostileSchemaLabels(t *testing.T) {
	labels := []string{
		"main.World */ console.log(\"PWNED\"); /*",
		"main.World\n</summary> public static int X = Pwn(); /// <summary>",
		"main.World\u2028console.log(1)\r\n// x",
		"a*/b\\*/c<&>",
	}
	for _, label := range labels {
		s := hsSchema(t)
		s.Types[0].GoType, s.Types[1].GoType = label, label
		ts, cs, tsErr, csErr := genBoth(s)
		if tsErr != nil || csErr != nil {
			t.Fatalf("%q: %v, %v", label, tsErr, csErr)
		}
		for _, line := range strings.Split(ts, "\n") {
			if strings.Contains(line, "/**") && strings.Index(line, "*/") != strings.LastIndex(line, "*/") {
				t.Errorf("TypeScript: %q closes its comment early: %s", label, line)
			}
			if strings.Contains(line, "PWNED") && !strings.HasPrefix(strings.TrimSpace(line), "/**") {
				t.Errorf("TypeScript: %q outside a comment: %s", label, line)
			}
		}
		for _, line := range strings.Split(cs, "\n") {
			if strings.Contains(line, "Pwn") && !strings.HasPrefix(strings.TrimSpace(line), "///") || strings.Count(line, "</summary>") > 1 {
				t.Errorf("C#: %q outside its comment: %s", label, line)
			}
		}
		if strings.ContainsAny(ts+cs, "\r\u2028") {
			t.Errorf("%q: a line break of the label reached the code", label)
		}
	}
}

// The command refuses a hostile schema file with the generator's error.
func TestHostileSchemaFile(t *testing.T) {
	s := hsSchema(t)
	s.Types[0].Fields[0].Name = `N: string = ""; static _x = (console.log("PWNED"), 0); M`
	b, _ := json.Marshal(s)
	path := filepath.Join(t.TempDir(), "w.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "../cmd/bitwire-gen", "-lang", "ts", "W="+path).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("not an identifier")) || bytes.Contains(out, []byte("export")) {
		t.Fatalf("bitwire-gen: %v\n%s", err, out)
	}
}

type hsQuats struct {
	Times [2]time.Time
	Q     [3][4]float32 `net:"quat"`
	B     [2][]byte
}

// Code that must compile in both languages: arrays of times, of
// quaternions and of byte slices. (A message named like one of its classes
// is refused with ErrSchema: the package Example.)
func TestHostileGeneratedCompiles(t *testing.T) {
	msgs := []gen.Message{
		gen.Named("hsWorldCodec", bitwire.MustFor[hsWorld]().Schema()),
		gen.Named("Quats", bitwire.MustFor[hsQuats]().Schema()),
	}
	var ts, cs strings.Builder
	if err := gen.TypeScript(&ts, "./bitwire.js", msgs...); err != nil {
		t.Fatal(err)
	}
	if err := gen.CSharp(&cs, "Conf", msgs...); err != nil {
		t.Fatal(err)
	}
	t.Run("TypeScript", func(t *testing.T) {
		node, tsc := clientTools(t)
		buildTS(t, node, tsc, []byte(ts.String()))
	})
	t.Run("CSharp", func(t *testing.T) {
		mcs, _ := csTools(t)
		buildCS(t, mcs, []byte(cs.String()), "../clients/cs/test/Conformance.cs")
	})
}

// A q node whose derived grid (zero, kmin) disagrees with its min, max and
// step would decode on another grid in the clients: both generators refuse it.
func TestSchemaGridChecked(t *testing.T) {
	type g struct {
		X float32 `net:"q,min=-10,max=10,prec=0.1"`
		Y float32 `net:"q,min=0,max=10,prec=0.1"`
	}
	for _, spoil := range []func(q *bitwire.QParams){
		func(q *bitwire.QParams) { q.Zero = !q.Zero },
		func(q *bitwire.QParams) { q.KMin++ },
	} {
		for field := range 2 {
			s := bitwire.MustFor[g]().Schema()
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var c bitwire.Schema
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			spoil(c.Types[c.Root].Fields[field].Node.Q)
			var out bytes.Buffer
			if err := gen.TypeScript(&out, "./bitwire.js", gen.Named("GCodec", &c)); !errors.Is(err, gen.ErrSchema) {
				t.Errorf("field %d: TypeScript: %v, want ErrSchema", field, err)
			}
			if err := gen.CSharp(&out, "G", gen.Named("GCodec", &c)); !errors.Is(err, gen.ErrSchema) {
				t.Errorf("field %d: CSharp: %v, want ErrSchema", field, err)
			}
		}
	}
}
