package bitwire

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// The fingerprint: a 64-bit FNV-1a hash of a schema's wire content, in the
// byte form that docs/wire-format.md ("Fingerprint") specifies so that any
// language can compute it from the schema JSON. Labels (Go names), derived
// numbers, limits and clamp do not enter it: renaming a type or a field
// keeps the fingerprint; reordering fields, changing a parameter or the
// debug mode changes it.

const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// fingerprintMagic and unionFingerprintMagic start the hashed input.
const (
	fingerprintMagic      = "bitwire-fp-1"
	unionFingerprintMagic = "bitwire-fpu-1"
)

// codingByte numbers a coding in the hashed input: its code (plan.go),
// found by the name the schema gives it.
func codingByte(name string) (byte, bool) {
	for c := range coders {
		if c > 0 && coders[c].name == name {
			return byte(c), true
		}
	}
	return 0, false
}

// typeBytes number the in-memory types in the hashed input (0: none).
var typeBytes = map[string]byte{
	"int8": 1, "int16": 2, "int32": 3, "int64": 4,
	"uint8": 5, "uint16": 6, "uint32": 7, "uint64": 8,
	"float32": 9, "float64": 10,
	"bool": 11, "string": 12, "bytes": 13, "time": 14,
}

// fpHasher feeds the fingerprint input to FNV-1a as it is produced.
type fpHasher struct {
	h     uint64
	s     *Schema
	stack []int   // the struct types being walked, outermost first
	input *[]byte // when set, collects the input (for tests and docs)
	err   error   // the first defect found in a schema not built here
}

// SchemaFingerprint computes the 64-bit fingerprint of s, a message's or
// a union's schema, from its wire content alone, by the algorithm of
// docs/wire-format.md ("Fingerprint"); s.Fingerprint is not read, so a
// schema read from JSON (edited by hand, or written by another version)
// can be checked against its own Fingerprint field. For a schema of
// Codec.Schema or Union.Schema it is the codec's Fingerprint (with a
// model's hash mixed in when the schema has one). A schema
// whose structure is broken (a type reference out of range, a missing
// node, an unknown coding, a coding without its parameters) is
// ErrMalformed. So is a schema whose model does not belong to it: a model
// file that does not parse, a hash that is not the file's, or a model
// trained for another layout (Model.Layout, or the layout the file holds,
// is not the schema's fingerprint without the model and without debug
// mode). Whether the model's
// tables are the layout's in number, kind and size is not checked here;
// a decoder built from the schema checks that as it binds the tables (the
// generators of package gen do).
func SchemaFingerprint(s *Schema) (uint64, error) {
	if s == nil {
		return 0, fmt.Errorf("%w: schema: nil", ErrMalformed)
	}
	f := &fpHasher{h: fnvOffset, s: s}
	f.hash()
	if f.err != nil || s.Model == nil {
		return f.h, f.err
	}
	// A codec with a model: the model's hash mixed in (wire-format.md,
	// "Models"), from the model file the schema carries.
	var m Model
	if err := m.UnmarshalBinary(s.Model.File); err != nil {
		return 0, fmt.Errorf("%w: schema: model: %v", ErrMalformed, err)
	}
	if fmt.Sprintf("%016x", m.hash) != s.Model.Hash {
		return 0, fmt.Errorf("%w: schema: the model's hash is %016x, not %s", ErrMalformed, m.hash, s.Model.Hash)
	}
	// The model must be the layout's: a model trained for another layout
	// (as the schema states it or as the file holds it) is one that
	// Codec.WithModel refuses, so no codec has this schema or its
	// fingerprint. The layout fingerprint is the one without debug mode.
	lay := f.h
	if s.Debug {
		plain := *s
		plain.Debug, plain.Model = false, nil
		lay = fingerprint(&plain)
	}
	if fmt.Sprintf("%016x", lay) != s.Model.Layout || m.layout != lay {
		return 0, fmt.Errorf("%w: schema: the model was trained for layout %s (its file says %016x), the schema's layout is %016x", ErrMalformed, s.Model.Layout, m.layout, lay)
	}
	return modelFingerprint(f.h, m.hash), nil
}

// fail records the first defect of the schema.
func (f *fpHasher) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("%w: schema: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
}

func (f *fpHasher) byte1(b byte) {
	if f.input != nil {
		*f.input = append(*f.input, b)
	}
	f.h ^= uint64(b)
	f.h *= fnvPrime
}

func (f *fpHasher) u64(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	for _, c := range b {
		f.byte1(c)
	}
}

func (f *fpHasher) flag(v bool) {
	if v {
		f.byte1(1)
	} else {
		f.byte1(0)
	}
}

// fingerprint hashes s: a message schema, or a union's, built here.
func fingerprint(s *Schema) uint64 { return fingerprintInput(s, nil) }

// fingerprintInput hashes s, appending the hashed bytes to *input when
// input is not nil.
func fingerprintInput(s *Schema, input *[]byte) uint64 {
	f := &fpHasher{h: fnvOffset, s: s, input: input}
	f.hash()
	return f.h
}

// hash feeds the whole input of f.s.
func (f *fpHasher) hash() {
	s := f.s
	if s.Union != nil {
		for _, c := range []byte(unionFingerprintMagic) {
			f.byte1(c)
		}
		f.u64(uint64(s.WireVersion))
		f.u64(uint64(len(s.Union.Variants)))
		for _, v := range s.Union.Variants {
			f.structRef(v, false)
		}
		return
	}
	for _, c := range []byte(fingerprintMagic) {
		f.byte1(c)
	}
	f.u64(uint64(s.WireVersion))
	f.flag(s.Debug)
	f.structRef(s.Root, false)
}

// structRef hashes a struct node: the coding byte, the composite flag,
// then either a back reference to a struct type being walked (1, then how
// many levels up: 0 is the innermost) or the type's fields (0, the count,
// then each field's group number, 0 for none or index+1, and node).
func (f *fpHasher) structRef(t int, composite bool) {
	if f.err != nil {
		return
	}
	if t < 0 || t >= len(f.s.Types) {
		f.fail("type reference %d, of %d types", t, len(f.s.Types))
		return
	}
	f.byte1(byte(cStruct))
	f.flag(composite)
	for k := len(f.stack) - 1; k >= 0; k-- {
		if f.stack[k] == t {
			f.byte1(1)
			f.u64(uint64(len(f.stack) - 1 - k))
			return
		}
	}
	f.byte1(0)
	ts := &f.s.Types[t]
	f.stack = append(f.stack, t)
	f.u64(uint64(len(ts.Fields)))
	for i := range ts.Fields {
		fd := &ts.Fields[i]
		f.u64(uint64(fd.Group + 1))
		f.node(fd.Node)
	}
	f.stack = f.stack[:len(f.stack)-1]
}

// node hashes one node: coding byte, type byte, the coding's parameters,
// its children, and for scalars the delta window.
func (f *fpHasher) node(n *NodeSchema) {
	if f.err != nil {
		return
	}
	if n == nil {
		f.fail("missing node")
		return
	}
	if n.Coding == "struct" {
		if n.Ref == nil {
			f.fail("struct node without ref")
			return
		}
		f.structRef(*n.Ref, n.Composite)
		return
	}
	c, ok := codingByte(n.Coding)
	if !ok {
		f.fail("coding %q", n.Coding)
		return
	}
	if !hasParams(n) {
		f.fail("%s node without its parameters", n.Coding)
		return
	}
	f.byte1(c)
	f.byte1(typeBytes[n.Type])
	if r := leafNamed(n.Coding); r != nil && r.hash != nil {
		r.hash(f, n)
	}
	switch n.Coding {
	case "array":
		f.u64(uint64(n.Count))
		f.node(n.Elem)
		return
	case "slice":
		f.u64(uint64(n.MaxLen))
		id := 0
		if n.Entity != nil {
			id = n.Entity.IDField + 1
		}
		f.u64(uint64(id))
		f.node(n.Elem)
		return
	case "ptr":
		f.node(n.Elem)
		return
	case "map":
		f.u64(uint64(n.MaxLen))
		f.node(n.Key)
		f.node(n.Elem)
		return
	}
	// The window's byte: 0 none, 1 a window and its bounds; 2 is added
	// for a pred value, so that fingerprints without pred stay as they were.
	var pred byte
	if n.Pred {
		pred = 2
	}
	if d := n.Delta; d != nil {
		f.byte1(1 | pred)
		f.u64(uint64(d.Lo))
		f.u64(uint64(d.Hi))
	} else {
		f.byte1(pred)
	}
}

// parseBound reads a range bound of the schema as the 64-bit pattern it
// codes: two's complement for signed types.
func parseBound(s, typ string) uint64 {
	if strings.HasPrefix(typ, "int") {
		v, _ := strconv.ParseInt(s, 10, 64)
		return uint64(v)
	}
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

// hasParams reports whether n carries what its coding's hashed input
// reads.
func hasParams(n *NodeSchema) bool {
	r := leafNamed(n.Coding)
	return r == nil || r.schemaOK == nil || r.schemaOK(n)
}
