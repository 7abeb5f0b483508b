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
// types (see examples/gen):
//
//	f, _ := os.Create("client/world.ts")
//	err := gen.TypeScript(f, gen.Named("World", bitwire.MustFor[World]().Schema()))
//
// Generated code is reproducible from the schemas alone and is never edited
// by hand.
package gen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
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
// format or version, a dangling reference).
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
		if !isIdent(m.Name) || seen[m.Name] {
			return fmt.Errorf("%w: message name %q is not a unique identifier", ErrSchema, m.Name)
		}
		seen[m.Name] = true
		if s.Debug {
			return fmt.Errorf("%w: %s: debug schemas (sentinels) are not supported by generated clients", ErrSchema, m.Name)
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

// checkGrids checks every q node's derived zero and kmin against its min,
// max and step. They are not hashed into the fingerprint, and the clients
// decode a grid anchored at zero from them: a schema without them (written
// by hand, say) would decode on another grid.
func checkGrids(s *bitwire.Schema) error {
	var walk func(n *bitwire.NodeSchema) error
	walk = func(n *bitwire.NodeSchema) error {
		if n == nil {
			return nil
		}
		if n.Coding == "q" && n.Q != nil {
			zero := n.Q.Min < 0 && 0 < n.Q.Max
			kmin := int64(0)
			if zero {
				kmin = int64(math.Floor(n.Q.Min/n.Q.Step + 0.5))
			}
			if n.Q.Zero != zero || n.Q.KMin != kmin {
				return fmt.Errorf("%w: q grid [%v, %v] step %v: zero %v and kmin %d, want %v and %d", ErrSchema, n.Q.Min, n.Q.Max, n.Q.Step, n.Q.Zero, n.Q.KMin, zero, kmin)
			}
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
func fmtFloat(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "NaN" // never in a valid schema
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// typeNames gives each struct type of all schemas one class name: types
// with the same label and Go type share it; others get a suffix.
type typeNames struct {
	byKey  map[string]string // name + "\x00" + goType -> class name
	used   map[string]bool
	order  []classDef
	schema map[*bitwire.Schema][]string // per schema, per type index: the class name
}

type classDef struct {
	name string
	s    *bitwire.Schema
	t    int
}

func nameTypes(msgs []Message) *typeNames {
	tn := &typeNames{byKey: map[string]string{}, used: map[string]bool{}, schema: map[*bitwire.Schema][]string{}}
	for _, m := range msgs {
		names := make([]string, len(m.Schema.Types))
		for i, t := range m.Schema.Types {
			key := t.Name + "\x00" + t.GoType
			if n, ok := tn.byKey[key]; ok {
				names[i] = n
				continue
			}
			n := t.Name
			for k := 2; tn.used[n] || reserved[n]; k++ {
				n = fmt.Sprintf("%s_%d", t.Name, k)
			}
			tn.used[n] = true
			tn.byKey[key] = n
			names[i] = n
			tn.order = append(tn.order, classDef{name: n, s: m.Schema, t: i})
		}
		tn.schema[m.Schema] = names
	}
	return tn
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
