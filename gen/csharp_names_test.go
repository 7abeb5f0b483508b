package gen_test

import (
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// csnVec, csnThing and csnNames are coded under names that meet what the
// generated C# declares or calls: fields named like the coder methods and
// statics (Decode, BwDecode, bwQ1), like runtime and System types the code
// calls (Math, Codings, Decoder, List …) and like a class of another type
// (Vec, an int beside the class Vec); the schema's type labels are then
// renamed to runtime type names (Shape, Message, Decoder).
type csnVec struct {
	X, Y float32 `net:"q,min=-10,max=10,prec=0.01,dmin=-1,dmax=1"`
}

type csnThing struct {
	ID uint16 `net:"id"`
	P  csnVec
}

type csnNames struct {
	BwDecode, BwEncode, BwCopy, BwDecodeDelta, BwInputSame, BwEncodeDeltaInput int32
	Decode, Encode, DecodeDelta, Copy, InputSame, EncodeDeltaInput             int32
	Math, Codings, Bitwire, Decoder, Encoder, BitConverter, List, Dictionary   int32
	Shape, Lim, Fingerprint, Message, Quantizer, System, Action, Exception     int32
	Vec                                                                        int32
	P                                                                          csnVec
	Ps                                                                         []csnVec
	Things                                                                     []csnThing
	Arr                                                                        [2]csnVec
	M                                                                          map[uint8]csnVec
	T                                                                          time.Time
	Q                                                                          [4]float32 `net:"quat"`
	Strs                                                                       []string
}

// csnSchema is csnNames' schema with its types relabelled and, when
// rename is set, its Decode field renamed to the static-member name bwQ1
// (names of unexported Go fields reach gen only through schema files).
func csnSchema(t *testing.T) *bitwire.Schema {
	t.Helper()
	b, err := json.Marshal(bitwire.MustFor[csnNames]().Schema())
	if err != nil {
		t.Fatal(err)
	}
	var s bitwire.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"csnVec": "Vec", "csnThing": "Shape", "csnNames": "Decoder"}
	for i := range s.Types {
		if l, ok := labels[s.Types[i].Name]; ok {
			s.Types[i].Name = l
		}
	}
	s.Fingerprint = "" // labels are outside the fingerprint; recomputed by gen
	return &s
}

func randCSNames(r *rand.Rand) csnNames {
	v := func() csnVec { return csnVec{float32(r.Float64()*20 - 10), float32(r.Float64()*20 - 10)} }
	n := csnNames{BwDecode: r.Int31(), Math: -r.Int31(), Vec: r.Int31(), P: v(), Arr: [2]csnVec{v(), v()},
		M: map[uint8]csnVec{uint8(r.Intn(256)): v()}, T: time.Unix(r.Int63n(1<<40), r.Int63n(1e9)), Q: [4]float32{0, 0, 0, 1}}
	for i := r.Intn(3); i > 0; i-- {
		n.Ps = append(n.Ps, v())
		n.Strs = append(n.Strs, strings.Repeat("x", r.Intn(4)))
	}
	for i := r.Intn(4); i > 0; i-- {
		n.Things = append(n.Things, csnThing{uint16(10*i + r.Intn(10)), v()})
	}
	return n
}

// Every name Go allows that is not a C# keyword, and that is not a field
// named like its own class, compiles and decodes as Go does: the classes
// hold only the fields (the code that reads and writes them lives in coder
// classes beside them, so no field meets a method, a static or a runtime
// name), and classes named like a runtime type the code uses are renamed
// (Decoder_2).
func TestCSharpNames(t *testing.T) {
	s := csnSchema(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", gen.Named("Names", s)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"public sealed class Decoder_2", "public sealed class Shape_2", "public sealed class Vec\n", "public int Vec = 0;", "public int BwDecode = 0;", "public int Decode = 0;"} {
		if !strings.Contains(src.String(), want) {
			t.Errorf("the generated C# has no %q", want)
		}
	}
	mcs, mono := csTools(t)
	r := rand.New(rand.NewSource(7))
	var cases []cfCase
	corpus(t, "Names", 40, func() csnNames { return randCSNames(r) }, func(v csnNames) csnNames {
		w := v
		w.P.X = v.P.X / 2
		if len(w.Things) > 0 {
			w.Things = append([]csnThing(nil), v.Things...)
			w.Things[0].P.Y = -v.Things[0].P.Y / 2
		}
		return w
	}, &cases)
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)

	// a schema file may carry names no Go field has: the coders' static
	// members and lower-case names
	s = csnSchema(t)
	for i, f := range s.Types[s.Root].Fields {
		switch f.Name {
		case "Decode":
			s.Types[s.Root].Fields[i].Name = "bwQ1"
		case "Encode":
			s.Types[s.Root].Fields[i].Name = "d"
		case "Copy":
			s.Types[s.Root].Fields[i].Name = "value"
		}
	}
	src.Reset()
	if err := gen.CSharp(&src, "Conf", gen.Named("Names", s)); err != nil {
		t.Fatal(err)
	}
	buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
}

type csnSelf struct {
	A    int32
	Self int32
}

// A member may not be named like its class in C# (CS0542), and a prefix @
// does not change that: gen.CSharp refuses it (TypeScript allows it), as
// it refuses C# keywords, which TypeScript refuses as well, and a message
// named like a runtime type the code uses.
func TestCSharpNamesRefused(t *testing.T) {
	self := func(t *testing.T) *bitwire.Schema {
		s := bitwire.MustFor[csnSelf]().Schema()
		b, _ := json.Marshal(s)
		var c bitwire.Schema
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		c.Types[0].Name = "Self"
		c.Fingerprint = ""
		return &c
	}
	if err := gen.TypeScript(&strings.Builder{}, "./bitwire.js", gen.Named("SelfCodec", self(t))); err != nil {
		t.Errorf("TypeScript: a field named like its class: %v", err)
	}
	err := gen.CSharp(&strings.Builder{}, "Conf", gen.Named("SelfCodec", self(t)))
	if !errors.Is(err, gen.ErrSchema) || !strings.Contains(err.Error(), `"Self"`) {
		t.Errorf("C#: a field named like its class: %v, want gen.ErrSchema naming Self", err)
	}
	for _, kw := range []string{"checked", "decimal", "lock", "fixed", "params", "object", "string", "operator", "implicit"} {
		s := self(t)
		s.Types[0].Fields[0].Name = kw
		if err := gen.CSharp(&strings.Builder{}, "Conf", gen.Named("SelfCodec", s)); !errors.Is(err, gen.ErrSchema) {
			t.Errorf("C#: field %q: %v, want gen.ErrSchema", kw, err)
		}
	}
	for _, name := range []string{"Message", "Shape", "Decoder", "List", "Math", "Bitwire"} {
		if err := gen.CSharp(&strings.Builder{}, "Conf", gen.Named(name, bitwire.MustFor[csnSelf]().Schema())); !errors.Is(err, gen.ErrSchema) {
			t.Errorf("C#: message %q: %v, want gen.ErrSchema", name, err)
		}
	}
}

// Every type the C# runtime declares is a name the generated code keeps
// for it: a struct type named so is given another class name.
func TestCSharpNamesRuntimeTypes(t *testing.T) {
	files, _ := filepath.Glob("../clients/cs/*.cs")
	more, _ := filepath.Glob("../clients/cs/*/*.cs")
	decl := regexp.MustCompile(`(?m)^\s*(?:public |internal )?(?:static |sealed |abstract |readonly |partial )*(?:class|struct|interface|enum|delegate [\w<>\[\], ]+?) (\w+)`)
	names := map[string]bool{}
	for _, f := range append(files, more...) {
		if strings.Contains(f, "/test/") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
	}
	if len(names) < 40 {
		t.Fatalf("found %d runtime types in clients/cs", len(names))
	}
	for name := range names {
		b, _ := json.Marshal(bitwire.MustFor[csnSelf]().Schema())
		var s bitwire.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s.Types[0].Name, s.Fingerprint = name, ""
		var src strings.Builder
		if err := gen.CSharp(&src, "Conf", gen.Named("C", &s)); err != nil {
			t.Errorf("a type named %s: %v", name, err)
		} else if strings.Contains(src.String(), "class "+name+"\n") {
			t.Errorf("a type named %s is the class %s, which hides the runtime's", name, name)
		}
	}
}
