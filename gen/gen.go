// Package gen generates client code in other languages from bitwire
// schemas (bitwire.Codec.Schema, bitwire.SchemaOf, bitwire.Union.Schema):
// for each struct type a class mirroring the Go struct, and for each schema
// a codec object that decodes and encodes full messages, applies deltas,
// quantizes values as the server does and reads snapshot packets. The
// generated code calls a small runtime that is shipped beside it
// (clients/ts/src/bitwire.ts for TypeScript) and describes each type to it
// as a plan built from the schema: every step, width and window comes from
// the schema, none is recomputed from Go.
//
// A typical use is a //go:generate program that imports the server's
// types (see examples/gen, and the package's Example, which compiles):
//
//	f, _ := os.Create("client/world.ts")
//	err := gen.TypeScript(f, "./bitwire.js", gen.Named("WorldCodec", bitwire.MustFor[World]().Schema()))
//
// The codec object is named apart from the classes, which take the struct
// types' names: WorldCodec beside the class World (a message named like a
// class is refused with ErrSchema). Generated code is reproducible from the
// schemas alone and is never edited by hand.
package gen

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/bitwire/bitwire"
)

// Message is one schema to generate, under the name the codec object gets
// (for a union, the union object).
type Message struct {
	Name   string
	Schema *bitwire.Schema
}

// Named pairs a schema with the name of its generated codec object.
func Named(name string, s *bitwire.Schema) Message { return Message{Name: name, Schema: s} }

// supportedWireVersion is the version of docs/wire-format.md that the
// runtimes (clients/ts, clients/cs) implement.
const supportedWireVersion = 4

// ErrSchema is returned for a schema the generator cannot use (another
// format or version, a dangling reference). A schema is untrusted input:
// type, field, message and quaternion component names that are not
// identifiers (or are TypeScript or C# keywords), repeated names, indexes
// outside the schema and types that hold themselves by value are refused
// with it before any code is written; Go-type labels are escaped into
// comments.
var ErrSchema = errors.New("gen: unusable schema")

func check(msgs []Message) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: no schemas", ErrSchema)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		s := m.Schema
		if s == nil || s.Format != bitwire.SchemaFormat || s.Version != bitwire.SchemaVersion {
			return fmt.Errorf("%w: %s: not a %s version %d schema", ErrSchema, m.Name, bitwire.SchemaFormat, bitwire.SchemaVersion)
		}
		if s.WireVersion != supportedWireVersion {
			return fmt.Errorf("%w: %s: wire version %d; the client runtimes implement version %d", ErrSchema, m.Name, s.WireVersion, supportedWireVersion)
		}
		if !isIdent(m.Name) || keywords[m.Name] || seen[m.Name] {
			return fmt.Errorf("%w: message name %q is not a unique identifier", ErrSchema, m.Name)
		}
		seen[m.Name] = true
		if s.Debug {
			return fmt.Errorf("%w: %s: debug schemas (sentinels) are not supported by generated clients", ErrSchema, m.Name)
		}
		if err := validate(s); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		if err := checkGrids(s); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		if fp, err := bitwire.SchemaFingerprint(s); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSchema, m.Name, err)
		} else if want := fmt.Sprintf("%016x", fp); s.Fingerprint != "" && want != s.Fingerprint {
			return fmt.Errorf("%w: %s: the schema says fingerprint %s, its content hashes to %s", ErrSchema, m.Name, s.Fingerprint, want)
		}
		if s.Model != nil {
			if _, err := checkModel(s); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
		}
	}
	return nil
}

// hasPred reports whether a schema has a value tagged pred: its codecs
// decode deltas from two baselines too (docs/wire-format.md, "Prediction
// from two baselines").
func hasPred(s *bitwire.Schema) bool {
	found := errors.New("pred")
	return eachNode(s, func(n *bitwire.NodeSchema) error {
		if n.Pred {
			return found
		}
		return nil
	}) != nil
}

// checkGrids checks every q node's derived zero and kmin against its min,
// max and step. They are not hashed into the fingerprint, and the clients
// decode a grid anchored at zero from them: a schema without them (written
// by hand, say) would decode on another grid.
func checkGrids(s *bitwire.Schema) error {
	return eachNode(s, func(n *bitwire.NodeSchema) error {
		if n.Coding != "q" || n.Q == nil {
			return nil
		}
		zero := n.Q.Min < 0 && 0 < n.Q.Max
		kmin := int64(0)
		if zero {
			kmin = int64(math.Floor(n.Q.Min/n.Q.Step + 0.5))
		}
		if n.Q.Zero != zero || n.Q.KMin != kmin {
			return fmt.Errorf("%w: q grid [%v, %v] step %v: zero %v and kmin %d, want %v and %d", ErrSchema, n.Q.Min, n.Q.Max, n.Q.Step, n.Q.Zero, n.Q.KMin, zero, kmin)
		}
		return nil
	})
}

// eachNode calls check on every node of every field of every type of s,
// a node before its key and element, and returns check's first error.
func eachNode(s *bitwire.Schema, check func(n *bitwire.NodeSchema) error) error {
	var walk func(n *bitwire.NodeSchema) error
	walk = func(n *bitwire.NodeSchema) error {
		if n == nil {
			return nil
		}
		if err := check(n); err != nil {
			return err
		}
		if err := walk(n.Key); err != nil {
			return err
		}
		return walk(n.Elem)
	}
	for _, t := range s.Types {
		for _, f := range t.Fields {
			if err := walk(f.Node); err != nil {
				return err
			}
		}
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// bigInt reports whether an integer node is held as a bigint in
// TypeScript (a long in C# always): a 64-bit type whose coding does not
// bound it within ±(2^53-1).
func bigInt(n *bitwire.NodeSchema) bool {
	if intSize(n.Type) < 64 {
		return false
	}
	switch n.Coding {
	case "bits":
		return n.Bits.Width > 53
	case "range":
		lo, err1 := strconv.ParseInt(n.Range.Min, 10, 64)
		hi, err2 := strconv.ParseInt(n.Range.Max, 10, 64)
		const lim = 1<<53 - 1
		return err1 != nil || err2 != nil || lo < -lim || hi > lim
	}
	return true
}

func intSize(t string) int {
	switch t {
	case "int8", "uint8":
		return 8
	case "int16", "uint16":
		return 16
	case "int32", "uint32":
		return 32
	case "int64", "uint64":
		return 64
	}
	return 0
}

func isInt(t string) bool  { return intSize(t) > 0 }
func signed(t string) bool { return strings.HasPrefix(t, "int") }
func isF32(t string) bool  { return t == "float32" }

// sliceElemMinBits is the least number of bits an element of the slice n
// takes, which bounds its length by the input left: an element of a
// shared-length group may take one bit.
func sliceElemMinBits(n *bitwire.NodeSchema) int {
	if n.SharedLength {
		return 1
	}
	return n.Elem.MinBits
}

func fmtFloat(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "NaN" // never in a valid schema
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// typeNames names what the generated code declares for the struct types of
// all schemas. A class holds a value and is one per Go type: the codings of
// its fields belong to the plan of the field that holds it, not to the
// value, so a Vec2 quantized one way in one field and another way in
// another is one class Vec2 (a client's helper such as ToUnity(Vec2) takes
// them all). A coder (C#: the static methods that read and write a class
// for one plan) is one per distinct plan. Two uses of one Go type get two
// classes (Vec2, Vec2_2) only when their members would have different
// types: a 64-bit integer that one coding bounds within 2^53 (a number in
// TypeScript) and another does not (a bigint), a struct of four floats
// coded as a quaternion in one and as a struct in the other, or members of
// such classes.
type typeNames struct {
	order  []classDef                   // one per coder, in the order first met
	schema map[*bitwire.Schema][]string // per schema, per type index: the coder's name
	class  map[*bitwire.Schema][]string // per schema, per type index: the class's name
}

type classDef struct {
	name  string // the coder: the class itself for the first plan of a class, else a static class of its own
	class string // the class its values are
	owner bool   // the first coder of its class, which declares the class
	s     *bitwire.Schema
	t     int
}

// typeRef is one struct type of one schema.
type typeRef struct {
	s *bitwire.Schema
	t int
}

// refs matches the type references in a struct type's JSON.
var refs = regexp.MustCompile(`"ref":(\d+)`)

func nameTypes(msgs []Message) *typeNames {
	var all []typeRef
	for _, m := range msgs {
		for i := range m.Schema.Types {
			all = append(all, typeRef{m.Schema, i})
		}
	}
	// Classes: by Go type, split while their members' types differ.
	classOf := refine(all, func(r typeRef) string { return r.s.Types[r.t].GoType }, func(r typeRef, id map[typeRef]int) string {
		var b strings.Builder
		names := make([]string, len(r.s.Types))
		for i := range names {
			names[i] = fmt.Sprint(id[typeRef{r.s, i}])
		}
		for _, f := range r.s.Types[r.t].Fields {
			fmt.Fprintf(&b, "%s:%s:%s;", f.Name, f.Node.Type, tsType(f.Node, names))
		}
		return b.String()
	})
	// Coders: by class and plan (the fields' JSON with the plans of the
	// struct types they refer to).
	plans := map[typeRef]string{}
	for _, r := range all {
		t := r.s.Types[r.t]
		js, _ := json.Marshal(struct {
			F []bitwire.FieldSchema
			G any
		}{t.Fields, t.Groups})
		plans[r] = string(js)
	}
	coderOf := refine(all, func(r typeRef) string {
		return fmt.Sprint(classOf[r]) + "\x00" + refs.ReplaceAllString(plans[r], `"ref":_`)
	}, func(r typeRef, id map[typeRef]int) string {
		var b strings.Builder
		for _, m := range refs.FindAllStringSubmatch(plans[r], -1) {
			i, _ := strconv.Atoi(m[1])
			fmt.Fprintf(&b, "%d,", id[typeRef{r.s, i}])
		}
		return b.String()
	})

	tn := &typeNames{schema: map[*bitwire.Schema][]string{}, class: map[*bitwire.Schema][]string{}}
	used := map[string]bool{}
	unique := func(base string) string {
		n := base
		for k := 2; used[n] || reserved[n]; k++ {
			n = fmt.Sprintf("%s_%d", base, k)
		}
		used[n] = true
		return n
	}
	className, coderName := map[int]string{}, map[int]string{}
	for _, r := range all {
		c, declared := className[classOf[r]]
		if !declared {
			c = unique(baseName(r.s.Types[r.t].Name))
			className[classOf[r]] = c
		}
		if _, ok := coderName[coderOf[r]]; !ok {
			name := c // the class's first plan: the class codes itself
			if declared {
				name = unique(c + "Coder")
			}
			coderName[coderOf[r]] = name
			tn.order = append(tn.order, classDef{name: name, class: c, owner: !declared, s: r.s, t: r.t})
		}
	}
	for _, m := range msgs {
		s := m.Schema
		cn, cd := make([]string, len(s.Types)), make([]string, len(s.Types))
		for i := range s.Types {
			cn[i], cd[i] = className[classOf[typeRef{s, i}]], coderName[coderOf[typeRef{s, i}]]
		}
		tn.class[s], tn.schema[s] = cn, cd
	}
	return tn
}

// baseName is a type label without the suffix _2, _3 … that the schema
// gives to the second and later codings of one Go type.
func baseName(label string) string {
	if i := strings.LastIndexByte(label, '_'); i > 0 {
		if _, err := strconv.Atoi(label[i+1:]); err == nil {
			return label[:i]
		}
	}
	return label
}

// refine partitions types: first by init, then, until no part splits, by
// sig, which sees the current part of every type. It returns each type's
// part, numbered in the order first met.
func refine(all []typeRef, init func(typeRef) string, sig func(typeRef, map[typeRef]int) string) map[typeRef]int {
	id := map[typeRef]int{}
	number := func(key func(typeRef) string) int {
		seen := map[string]int{}
		next := map[typeRef]int{}
		for _, r := range all {
			k := key(r)
			if _, ok := seen[k]; !ok {
				seen[k] = len(seen)
			}
			next[r] = seen[k]
		}
		id = next
		return len(seen)
	}
	parts := number(init)
	for {
		cur := id
		n := number(func(r typeRef) string { return fmt.Sprint(cur[r]) + "\x00" + sig(r, cur) })
		if n == parts {
			return id
		}
		parts = n
	}
}

// checkMessageNames refuses a message whose name is also a class name: the
// generated module would declare it twice.
func checkMessageNames(msgs []Message, tn *typeNames) error {
	for _, m := range msgs {
		if tn.declares(m.Name) {
			return fmt.Errorf("%w: message name %q is also the name of a generated class (a struct type of the schemas): name the codec otherwise, e.g. %sCodec", ErrSchema, m.Name, m.Name)
		}
	}
	return nil
}

// declares reports whether the generated code declares a class or coder of
// that name.
func (tn *typeNames) declares(name string) bool {
	for _, c := range tn.order {
		if c.name == name || c.class == name {
			return true
		}
	}
	return false
}

// reserved are names the generated code uses itself.
var reserved = map[string]bool{"bw": true, "Time": true, "Map": true, "Array": true, "Object": true, "String": true, "Number": true}

type writer struct {
	w   *bufio.Writer
	err error
}

func (w *writer) p(format string, args ...any) {
	if w.err != nil {
		return
	}
	_, w.err = fmt.Fprintf(w.w, format, args...)
}

func (w *writer) flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

func newWriter(out io.Writer) *writer { return &writer{w: bufio.NewWriter(out)} }
