package gen_test

import (
	"encoding/json"
	"io"
	"sort"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// fuzzSchemas are the schema files FuzzGenSchema mutates.
func fuzzSchemas(tb testing.TB) [][]byte {
	u, err := bitwire.NewUnion(cfPlayer{}, cfVec{})
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, s := range []*bitwire.Schema{
		bitwire.MustFor[cfAll]().Schema(),
		bitwire.MustFor[cfEdge]().Schema(),
		bitwire.MustFor[cfMaps]().Schema(),
		bitwire.MustFor[cfWorld]().Schema(),
		bitwire.MustFor[hsQuats]().Schema(),
		u.Schema(),
	} {
		b, err := json.Marshal(s)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// fuzzNumbers and fuzzStrings are what a mutation puts in a leaf: the
// edges of indexes and counts, and names that are not identifiers.
var (
	fuzzNumbers = []float64{-2, -1, 0, 1, 2, 3, 4, 7, 8, 31, 40, 53, 63, 64, 65, 1000, 1 << 31, -1 << 31, 1e300}
	fuzzStrings = []string{"", "x", "struct", "array", "slice", "map", "ptr", "q", "range", "bits", "bitlen", "fixed",
		"time", "quat", "bytes", "string", "int64", "uint64", "float32", "a b", "*/", "class", "X"}
)

// FuzzGenSchema runs both generators over mutated schemas: leaves of a
// schema's JSON (indexes, counts, widths, codings, names) replaced by
// edge values, a subtree moved over another, or the file's bytes changed.
// Whatever the schema says, they return code or an error, and never
// panic.
func FuzzGenSchema(f *testing.F) {
	files := fuzzSchemas(f)
	for i := range files {
		f.Add(uint8(i), []byte{}, []byte{})
		f.Add(uint8(i), []byte{0, 5, 3, 1, 9, 200}, []byte{})
	}
	f.Fuzz(func(t *testing.T, which uint8, ops []byte, raw []byte) {
		var tree any
		if err := json.Unmarshal(files[int(which)%len(files)], &tree); err != nil {
			t.Fatal(err)
		}
		for ; len(ops) >= 3; ops = ops[3:] {
			mutateLeaf(&tree, int(ops[0])<<8|int(ops[1]), ops[2])
		}
		b, _ := json.Marshal(tree)
		for i := 0; i+1 < len(raw); i += 2 { // a few byte edits of the file
			b[int(raw[i])*int(raw[i])%len(b)] = raw[i+1]
		}
		var s bitwire.Schema
		if json.Unmarshal(b, &s) != nil {
			return
		}
		_ = gen.TypeScript(io.Discard, "./bitwire.js", gen.Named("M", &s))
		_ = gen.CSharp(io.Discard, "Conf", gen.Named("M", &s))
	})
}

// mutateLeaf replaces the k-th value (in a walk of the tree, modulo the
// number of values) with one chosen by v.
func mutateLeaf(tree *any, k int, v byte) {
	type slot struct {
		get func() any
		set func(any)
	}
	var slots []slot
	var walk func(get func() any, set func(any))
	walk = func(get func() any, set func(any)) {
		slots = append(slots, slot{get, set})
		switch x := get().(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for key := range x {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			for _, key := range keys {
				walk(func() any { return x[key] }, func(y any) { x[key] = y })
			}
		case []any:
			for i := range x {
				walk(func() any { return x[i] }, func(y any) { x[i] = y })
			}
		}
	}
	walk(func() any { return *tree }, func(y any) { *tree = y })
	p := slots[k%len(slots)]
	switch p.get().(type) {
	case float64, bool, nil:
		p.set(fuzzNumbers[int(v)%len(fuzzNumbers)])
	case string:
		p.set(fuzzStrings[int(v)%len(fuzzStrings)])
	default: // a container: a copy of another subtree over it, or nothing
		if v&1 == 0 {
			p.set(nil)
			return
		}
		b, _ := json.Marshal(slots[int(v)%len(slots)].get())
		var c any
		_ = json.Unmarshal(b, &c)
		p.set(c)
	}
}
