package bitwire

import (
	"reflect"
	"unsafe"
)

// The leaf codings, each described once, each in its own file
// (coding_<name>.go): its row, the function that checks its tag and sets
// its parameters (fill), and its writer beside its reader. One row per
// coding says which Go types it fits, how many bits a value takes, how a
// value turns into the bits that are compared and delta-coded (its key)
// and back, how the schema (and so Layout and the generators, which read
// the schema) describes it, and what equality and copying need where a
// key does not do. Tags, sizes (MaxBits, the bounds on lengths), the
// schema, eqNode, copyNode, delta windows and the flat plan read the row;
// the flat path's kernel for a leaf is chosen from the row when a plan is
// compiled (flat.go). The bits themselves are those of package fields,
// which a test checks coding by coding (fields_conformance_test.go).
//
// The coding's code (plan.go) is its number in the schema fingerprint, so
// codes are never renumbered; a new coding takes the next one.
//
// What a row does not hold is the writing and reading: those take the
// bits.Writer or the encoder, and a call through a function value makes
// its arguments escape, while the writer and the encoder live on the
// caller's stack (Append, Encode and Unmarshal allocate nothing). So the
// coding's writer and reader are static methods (encX, decX) that one
// case of encNode and decNode calls (ops.go). A new leaf coding is its
// file here, a row in the table below, a case in each of encNode and
// decNode, its file in package fields, and its parameters in the schema
// (schema.go) and the generators.
type coder struct {
	name string
	tag  bool // a net tag may name the coding (else it is a type's default)

	// fits says whether the coding applies to a Go type; fill checks a
	// tag's options for it and sets the node's parameters (compile.go's
	// fillLeaf calls both).
	fits func(t reflect.Type) bool
	fill func(nd *node, path string, t reflect.Type, s spec, what string) error

	// width is the size of every value of a fixed-width coding; nil for
	// the variable-width ones, whose size lies in minBits..maxBits
	// (maxBits -1: unbounded).
	width   func(n *node) int
	minBits func(n *node) int
	maxBits func(n *node) int

	// key is the value as the bits it codes to: two values with the same
	// key encode the same (eqNode), and a delta window counts in keys.
	// storeKey stores the value of a key decoded from a delta, checking it
	// is one the field can hold; step is the window's unit in the Go
	// value's terms (nil: the coding takes no dmin/dmax).
	key      func(n *node, p unsafe.Pointer) (uint64, error)
	storeKey func(n *node, p unsafe.Pointer, k uint64) error
	step     func(n *node) float64
	// keyBounds gives the least and greatest key a field can hold, as
	// int64s when signed (nil: the coding's keys are not linear). predict
	// replaces the value at dst, a copy of the newer baseline, by its
	// prediction from it and the value at older (predict.go): predictLeaf
	// for the codings with linear keys, which extrapolates a key and
	// clamps it to keyBounds. nil: the coding takes no pred.
	keyBounds func(n *node) (lo, hi uint64, signed bool)
	predict   func(n *node, dst, older unsafe.Pointer)

	// eq compares values of a coding without a key; copy copies values of
	// a coding whose Go type holds pointers (others are copied as memory).
	eq   func(n *node, a, b unsafe.Pointer) bool
	copy func(n *node, dst, src unsafe.Pointer)

	// schema fills in the coding's parameters in the plan's schema (and
	// so in Layout, which prints the schema)
	schema func(n *node, ns *NodeSchema)
	// The coding in a Schema, which may come from a file: schemaOK says
	// whether a node carries the parameters the coding needs (nil: it
	// needs none), hash feeds them to the fingerprint (fingerprint.go),
	// describe writes them for Layout (schema_layout.go).
	schemaOK func(ns *NodeSchema) bool
	hash     func(f *fpHasher, ns *NodeSchema)
	describe func(ns *NodeSchema) string

	signed func(n *node) bool // carries a sign bit under the message's "any negative" flag
	group  bool               // the elements of an array or slice share one bit length
	flat   func(n *node) flatCode
}

// coders is the table of rows, indexed by code; containers (struct, array,
// slice, pointer, map) have a name only.
var coders [cMap + 1]coder

func init() {
	coders = [...]coder{
		cBool:   boolCoder,
		cBits:   bitsCoder,
		cRange:  rangeCoder,
		cQ:      qCoder,
		cFloat:  floatCoder,
		cFixed:  fixedCoder,
		cVarint: varintCoder,
		cBitlen: bitlenCoder,
		cString: stringCoder,
		cBytes:  bytesCoder,
		cQuat:   quatCoder,
		cTime:   timeCoder,
		cStruct: {name: "struct"}, cArray: {name: "array"}, cSlice: {name: "slice"},
		cPtr: {name: "ptr"}, cMap: {name: "map"},
	}
}

// String returns the coding's name, as tags and the schema write it.
func (c code) String() string { return coders[c].name }

// leafNamed returns the row of the leaf coding a schema names; nil for a
// container or an unknown name.
func leafNamed(name string) *coder {
	for c := range coders {
		if r := &coders[c]; r.leaf() && r.name == name {
			return r
		}
	}
	return nil
}

// leaf reports whether a row describes a leaf coding.
func (c *coder) leaf() bool { return c.minBits != nil || c.width != nil }

// scalarKey returns the key of a keyed leaf (see coder.key).
func scalarKey(n *node, p unsafe.Pointer) (uint64, error) { return n.row.key(n, p) }

// storeKey stores a key decoded from a delta (see coder.storeKey).
func storeKey(n *node, p unsafe.Pointer, k uint64) error { return n.row.storeKey(n, p, k) }

// ---- shared by rows ----

func one(*node) int          { return 1 }
func unitStep(*node) float64 { return 1 }
func flatVia(*node) flatCode { return flatNode }
