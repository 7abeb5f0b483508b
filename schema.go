package bitwire

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/bitwire/bitwire/fields"
)

// This file publishes a compiled plan as a Schema: a language-neutral
// description of every bit a message holds, which marshals to the JSON
// format of docs/schema.md. Code generators for other languages read it,
// Layout prints it, and the fingerprint hashes its wire content
// (fingerprint.go). It is built once, when a codec is compiled.

// SchemaFormat is the value of Schema.Format.
const SchemaFormat = "bitwire-schema"

// WireVersion is the version of the wire format that docs/wire-format.md
// specifies and this package writes. Schemas carry it, and it is part of
// every fingerprint, so peers of different versions see a protocol
// mismatch instead of misreading each other. Version 2 anchors the
// quantization grids of ranges holding zero, and quaternion components, at
// zero (docs/wire-format.md, "Version"). Version 3 Rice-codes the changed
// values of deltas: windowed differences and relative quaternions, which
// also survive a change of the largest component. Version 4 bounds what
// adapting costs: a message's first windowed difference costs at most one
// bit more than its plain fixed coding, and the differences of relative
// quaternions escape to an Exp-Golomb code that grows gracefully.
const WireVersion = 4

// SchemaVersion is the version of the schema format described in
// docs/schema.md. It changes when a field's meaning changes or a field a
// decoder must read is added; fields that are only informational may be
// added without a change.
const SchemaVersion = 1

// Schema describes the wire format of one message type (Codec.Schema,
// SchemaOf) or of a union of message types (Union.Schema): the struct
// types involved, each field in wire order with its coding and every
// parameter that decides its bits. It is all a decoder in another
// language needs. Go names (types, fields) appear only as labels, so that
// generated code can name things; they never reach the wire or the
// fingerprint.
type Schema struct {
	// Format is always SchemaFormat and Version is SchemaVersion.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// WireVersion is the version of docs/wire-format.md that gives the
	// bits of each coding (WireVersion).
	WireVersion int `json:"wireVersion"`
	// Fingerprint is the 64-bit fingerprint of the wire content (see
	// docs/wire-format.md, "Fingerprint") in 16 lowercase hex digits.
	Fingerprint string `json:"fingerprint"`
	// Debug is true when an 8-bit sentinel 0xA5 follows each top-level
	// field (Codec.WithDebug).
	Debug bool `json:"debug"`
	// Root is the index in Types of the message's struct type, or -1 for
	// a union.
	Root int `json:"root"`
	// Union is set for a union schema: its tag width and variants.
	Union *UnionSchema `json:"union,omitempty"`
	// MaxBits is the worst-case size of one message in bits (with the tag,
	// for a union: its largest variant), or -1 when unbounded. Derived.
	MaxBits int `json:"maxBits"`
	// Limits are the decoder's bounds for lengths without maxlen and for
	// nesting. They decide which input is refused, not what bits mean.
	Limits SchemaLimits `json:"limits"`
	// Model is set when the codec's deltas use a trained model
	// (Codec.WithModel): its hash and its file. The fingerprint mixes in
	// the model's hash (docs/wire-format.md, "Models").
	Model *ModelSchema `json:"model,omitempty"`
	// Types are the struct types that messages are made of; nodes refer to
	// them by index, so recursive types are cycles of references. Types[i]
	// is listed in the order a depth-first walk from the root (or from
	// each variant in turn) first meets them.
	Types []TypeSchema `json:"types"`
}

// UnionSchema is the part of a Schema that only unions have.
type UnionSchema struct {
	// TagBits is the width of the variant tag written before each message:
	// BitsRequired(len(Variants)-1).
	TagBits int `json:"tagBits"`
	// Variants are the indexes in Schema.Types of the variants' struct
	// types; variant i has tag i.
	Variants []int `json:"variants"`
}

// SchemaLimits are a codec's decoding limits (see Limits).
type SchemaLimits struct {
	MaxDepth int `json:"maxDepth"`
	MaxLen   int `json:"maxLen"`
}

// TypeSchema is one struct type: its encoded fields in wire order.
type TypeSchema struct {
	// Name is a label: an identifier made from the Go type name, unique
	// within the schema (Vec3, Vec3_2, …; Struct3 for an unnamed struct).
	Name string `json:"name"`
	// GoType is a label: the Go type as Go prints it.
	GoType string `json:"goType"`
	// Fields are the encoded fields, in wire order.
	Fields []FieldSchema `json:"fields"`
	// Groups are the fields tagged bitlen,group=NAME, one entry per
	// name, in the order of their first members.
	Groups []GroupSchema `json:"groups,omitempty"`
	// SignFlag is true when a value of this type holds signed adaptive
	// values (a bitlen of a signed type, or a fixed value) somewhere, so
	// that a message of it may carry the "any negative" flag. Derived.
	SignFlag bool `json:"signFlag"`
	// MinBits and MaxBits bound the struct's size (without the sign flag);
	// MaxBits is -1 when unbounded. Derived.
	MinBits int `json:"minBits"`
	MaxBits int `json:"maxBits"`
}

// FieldSchema is one encoded field of a struct.
type FieldSchema struct {
	// Name is a label: the Go field name.
	Name string `json:"name"`
	// Group is the index in the type's Groups of the shared-length group
	// this field belongs to, or -1.
	Group int `json:"group"`
	// Node is the field's coding.
	Node *NodeSchema `json:"node"`
}

// GroupSchema is a set of bitlen fields of one struct that share a group
// name: they are coded together, at the position of the first member, as
// one group of the adaptive coding.
type GroupSchema struct {
	// Name is a label: the group name of the tag.
	Name string `json:"name"`
	// Members are the indexes in the type's Fields of the members, in
	// wire order.
	Members []int `json:"members"`
	// Width is the prefix width W of the shared length: the widest
	// member's. Derived.
	Width int `json:"width"`
	// Signed is true when some member is signed. Derived.
	Signed bool `json:"signed"`
}

// NodeSchema is the coding of one value: a scalar leaf or a container.
// Coding names it; exactly the parameter fields that the coding uses are
// set (docs/schema.md lists them per coding).
type NodeSchema struct {
	// Coding is one of bool, bits, range, q, float, fixed, varint,
	// bitlen, string, bytes, quat, time, struct, array, slice, ptr, map.
	Coding string `json:"coding"`
	// Type is the value's type in memory, for scalars: int8, int16,
	// int32, int64, uint8, uint16, uint32, uint64, float32 or float64
	// (bool, string, bytes and time for those codings; the component type
	// for quat). It decides signedness, the values a decoder accepts, and
	// the rounding of decoded floats to float32.
	Type string `json:"type,omitempty"`

	Bits   *BitsParams   `json:"bits,omitempty"`   // bits
	Range  *RangeParams  `json:"range,omitempty"`  // range
	Q      *QParams      `json:"q,omitempty"`      // q
	Fixed  *FixedParams  `json:"fixed,omitempty"`  // fixed
	Varint *VarintParams `json:"varint,omitempty"` // varint
	Bitlen *BitlenParams `json:"bitlen,omitempty"` // bitlen
	Quat   *QuatParams   `json:"quat,omitempty"`   // quat

	// Clamp: the encoder clamps out-of-range values (range, q, bits)
	// instead of failing. It does not change what any bits mean.
	Clamp bool `json:"clamp,omitempty"`

	// MaxLen is the declared maxlen of a string, bytes, slice or map, or 0
	// when it has none (the length is then a bitlen with W = 5).
	MaxLen int `json:"maxlen,omitempty"`
	// Count is an array's length.
	Count int `json:"count,omitempty"`
	// Ref is the index in Schema.Types of a struct node's type.
	Ref *int `json:"ref,omitempty"`
	// Composite: a changed struct is sent in full in deltas, behind one
	// changed bit, rather than field by field.
	Composite bool `json:"composite,omitempty"`
	// SharedLength: the elements of this array or slice (bitlen or fixed
	// values) form one group of the adaptive coding in full messages.
	// Derived from the element's coding.
	SharedLength bool `json:"sharedLength,omitempty"`
	// Entity is set on a slice of structs with an id field: in deltas it
	// is an entity set, matched by id.
	Entity *EntityParams `json:"entity,omitempty"`
	// Elem is the element of an array, slice or pointer, and the value of
	// a map. Key is a map's key. The elements of an array, slice or
	// pointer carry the window of a dmin/dmax in its tag (see
	// DeltaByElement).
	Elem *NodeSchema `json:"elem,omitempty"`
	Key  *NodeSchema `json:"key,omitempty"`

	// Delta is the dmin/dmax difference window of a q, range, bits or
	// fixed value in deltas.
	Delta *DeltaParams `json:"delta,omitempty"`
	// Pred: in a delta written from two baselines (Codec.MarshalPredicted)
	// this q, range or bits value is coded against its prediction from
	// them (docs/wire-format.md, "Prediction from two baselines"). A delta
	// from one baseline is the same with or without it.
	Pred bool `json:"pred,omitempty"`

	// MinBits and MaxBits bound the value's size in a full message (sign
	// bits and group sharing aside); MaxBits is -1 when unbounded.
	// Derived.
	MinBits int `json:"minBits"`
	MaxBits int `json:"maxBits"`
}

// DeltaByElement reports whether a changed array of node n is sent
// element by element in a delta: a changed bit an element, then each
// changed element's delta, as a struct of its elements would be. That is
// so when its elements are scalars with a window (Delta), or arrays of
// them; any other changed array is sent in full (docs/wire-format.md,
// "Windows").
func (n *NodeSchema) DeltaByElement() bool {
	return n.Coding == "array" && n.Elem != nil && (n.Elem.Delta != nil || n.Elem.DeltaByElement())
}

// BitsParams are the parameters of the bits coding.
type BitsParams struct {
	// Width is N of bits=N: the value in N bits, two's complement when
	// Type is signed.
	Width int `json:"width"`
}

// RangeParams are the parameters of the range coding. Min and Max are
// decimal integers in strings, since 64-bit bounds do not fit every
// language's JSON numbers.
type RangeParams struct {
	Min string `json:"min"`
	Max string `json:"max"`
	// Bits is BitsRequired(Max-Min). Derived.
	Bits int `json:"bits"`
}

// QParams are the parameters of a quantized float.
type QParams struct {
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Steps uint64  `json:"steps"`
	// Step is the grid spacing (docs/wire-format.md, "Quantized float"):
	// (Max-Min)/Steps on a grid from Min to Max, prec or
	// (Max-Min)/(2^N-2) on a grid anchored at zero.
	Step float64 `json:"step"`
	// Bits is BitsRequired(Steps). Derived.
	Bits int `json:"bits"`
	// Zero tells that the grid is anchored at zero (wire version 2: Min <
	// 0 < Max): index i decodes to (KMin+i)·Step clamped to [Min, Max].
	// Otherwise index i decodes to Min + i·Step, Min for 0 and Max for
	// Steps. Derived from Min and Max.
	Zero bool `json:"zero"`
	// KMin is floor(Min/Step + 0.5) on a grid anchored at zero (the
	// multiple of Step that index 0 stands for), 0 otherwise. Derived.
	KMin int64 `json:"kmin"`
}

// FixedParams are the parameters of a fixed-point decimal.
type FixedParams struct {
	Prec float64 `json:"prec"`
	// Width is the bitlen prefix width of the step count: 6.
	Width int `json:"width"`
}

// VarintParams are the parameters of a varint.
type VarintParams struct {
	// Group is G: the bits of each group before its continuation bit.
	Group int `json:"group"`
}

// BitlenParams are the parameters of an adaptive bit-length integer.
type BitlenParams struct {
	// Width is the prefix width W: BitsRequired(size-1) for the Type's
	// size in bits.
	Width int `json:"width"`
}

// QuatParams are the parameters of a smallest-three quaternion.
type QuatParams struct {
	// Bits is N: the bits of each of the three packed components; the
	// whole is 2 + 3N bits.
	Bits int `json:"bits"`
	// Fields is a label: the Go fields holding x, y, z, w when the
	// quaternion is a struct; empty for a [4]float array.
	Fields []string `json:"fields,omitempty"`
}

// EntityParams mark an entity set.
type EntityParams struct {
	// IDField is the index, in the element type's Fields, of the id
	// field. In an entity's delta it has no changed bit.
	IDField int `json:"idField"`
}

// DeltaParams are a scalar's dmin/dmax window, counted in steps: the
// quantization step for q, prec for fixed, 1 for integers.
type DeltaParams struct {
	// DMin and DMax are the tag's bounds, in the value's units.
	DMin float64 `json:"dmin"`
	DMax float64 `json:"dmax"`
	// Lo and Hi are the window in steps: ceil(DMin/step - 1e-9) and
	// floor(DMax/step + 1e-9).
	Lo int64 `json:"lo"`
	Hi int64 `json:"hi"`
	// Bits is BitsRequired(Hi-Lo), the width of an in-window
	// difference's plain fixed coding. Derived.
	Bits int `json:"bits"`
	// FirstK and Unary are the adaptive code's parameters (wire version
	// 4, docs/wire-format.md "Windows"): the first difference of a
	// message has a short form of FirstK low bits, a later one escapes
	// after Unary one bits; 0 for either: every difference in Bits bits.
	// Derived, from Lo, Hi and the value's width in full.
	FirstK int `json:"firstK"`
	Unary  int `json:"unary"`
	// MinBits and MaxBits bound an in-window difference's size, without
	// the window bit. Derived.
	MinBits int `json:"minBits"`
	MaxBits int `json:"maxBits"`
}

// Schema returns the description of T's wire format: a new value each
// call, which the caller may keep or change.
func (c *Codec[T]) Schema() *Schema {
	depth, length := c.o.limits()
	s := buildSchema([]*plan{c.p}, c.o.debug, SchemaLimits{MaxDepth: depth, MaxLen: length})
	s.Root = 0
	s.MaxBits = c.maxBits
	if c.mdl != nil {
		file, _ := c.mdl.MarshalBinary()
		s.Model = &ModelSchema{Hash: fmt.Sprintf("%016x", c.mdl.hash), Layout: fmt.Sprintf("%016x", c.mdl.layout), File: file}
	}
	s.Fingerprint = fmt.Sprintf("%016x", c.fp)
	return s
}

// SchemaOf returns the schema of the struct type of v, which may be a
// struct value, a pointer to one, or a reflect.Type of a struct, as the
// package-level Marshal codes it (default limits, no debug sentinels).
func SchemaOf(v any) (*Schema, error) {
	t, ok := v.(reflect.Type)
	if !ok {
		t = reflect.TypeOf(v)
		if t == nil {
			return nil, fmt.Errorf("%w: nil", ErrUnsupportedType)
		}
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p, err := planOf(t)
	if err != nil {
		return nil, err
	}
	return messageSchema(p, false), nil
}

// messageSchema builds the schema of one message type with default limits.
func messageSchema(p *plan, debug bool) *Schema {
	s := buildSchema([]*plan{p}, debug, SchemaLimits{MaxDepth: DefaultMaxDepth, MaxLen: DefaultMaxLen})
	s.Root = 0
	s.MaxBits = maxBitsPlan(p, map[*plan]bool{})
	if s.MaxBits >= 0 && p.hasSigned {
		s.MaxBits++
	}
	s.Fingerprint = fmt.Sprintf("%016x", fingerprint(s))
	return s
}

// Schema returns the description of the union's wire format: a new value
// each call.
func (u *Union) Schema() *Schema {
	return unionSchema(u.plans)
}

func unionSchema(plans []*plan) *Schema {
	s := buildSchema(plans, false, SchemaLimits{MaxDepth: DefaultMaxDepth, MaxLen: DefaultMaxLen})
	s.Root = -1
	s.Union = &UnionSchema{TagBits: fields.BitsRequired(uint64(len(plans) - 1)), Variants: make([]int, len(plans))}
	s.MaxBits = 0
	for i := range plans {
		s.Union.Variants[i] = i // buildSchema lists the roots first
		b := s.Types[i].MaxBits
		if b >= 0 && plans[i].hasSigned {
			b++
		}
		if b < 0 || s.MaxBits < 0 {
			s.MaxBits = -1
		} else {
			s.MaxBits = max(s.MaxBits, s.Union.TagBits+b)
		}
	}
	s.Fingerprint = fmt.Sprintf("%016x", fingerprint(s))
	return s
}

// schemaBuilder numbers the struct plans of a schema as it meets them.
type schemaBuilder struct {
	s     *Schema
	index map[*plan]int
	names map[string]bool
}

// buildSchema describes the plans of roots, which are distinct; they get
// the first indexes, in order, and the types they use follow depth first.
func buildSchema(roots []*plan, debug bool, lim SchemaLimits) *Schema {
	b := &schemaBuilder{
		s:     &Schema{Format: SchemaFormat, Version: SchemaVersion, WireVersion: WireVersion, Debug: debug, Limits: lim},
		index: map[*plan]int{},
		names: map[string]bool{},
	}
	for _, p := range roots {
		b.declare(p)
	}
	for _, p := range roots {
		b.fill(p)
	}
	return b.s
}

// declare gives p the next index, with an empty entry.
func (b *schemaBuilder) declare(p *plan) int {
	i := len(b.s.Types)
	b.index[p] = i
	b.s.Types = append(b.s.Types, TypeSchema{Name: b.uniqueName(p.typ, i), GoType: p.typ.String()})
	return i
}

// ref returns p's index, declaring and describing it on first sight.
func (b *schemaBuilder) ref(p *plan) int {
	if i, ok := b.index[p]; ok {
		return i
	}
	i := b.declare(p)
	b.fill(p)
	return i
}

func (b *schemaBuilder) fill(p *plan) {
	i := b.index[p]
	ts := TypeSchema{
		Name:     b.s.Types[i].Name,
		GoType:   b.s.Types[i].GoType,
		Fields:   make([]FieldSchema, len(p.fields)),
		SignFlag: p.hasSigned,
		MinBits:  minBitsPlan(p),
		MaxBits:  maxBitsPlan(p, map[*plan]bool{}),
	}
	groups := map[*fieldGroup]int{}
	for j := range p.fields {
		f := &p.fields[j]
		fs := FieldSchema{Name: f.name, Group: -1}
		if g := f.grp; g != nil {
			gi, ok := groups[g]
			if !ok {
				gi = len(ts.Groups)
				groups[g] = gi
				ts.Groups = append(ts.Groups, GroupSchema{Name: g.name, Members: append([]int(nil), g.members...), Width: g.width, Signed: g.signed})
			}
			fs.Group = gi
		}
		ts.Fields[j] = fs
	}
	// The fields' nodes may declare more types, which appends to
	// b.s.Types: store this entry first, then fill in the nodes.
	b.s.Types[i] = ts
	for j := range p.fields {
		nd := b.node(p.fields[j].node)
		b.s.Types[i].Fields[j].Node = nd
	}
}

func (b *schemaBuilder) node(n *node) *NodeSchema {
	ns := &NodeSchema{Coding: n.row.name, MinBits: minBitsNode(n), MaxBits: maxBitsNode(n, map[*plan]bool{})}
	if r := n.row; r.schema != nil { // a leaf: its row describes it
		r.schema(n, ns)
	}
	switch n.code {
	case cStruct:
		r := b.ref(n.sub)
		ns.Ref, ns.Composite = &r, n.spec.composite
	case cArray:
		ns.Count = n.count
		ns.SharedLength = n.elem.groupable()
		ns.Elem = b.node(n.elem)
	case cSlice:
		ns.MaxLen = n.maxlen
		ns.SharedLength = n.elem.groupable()
		if n.idField >= 0 {
			ns.Entity = &EntityParams{IDField: n.idField}
		}
		ns.Elem = b.node(n.elem)
	case cPtr:
		ns.Elem = b.node(n.elem)
	case cMap:
		ns.MaxLen = n.maxlen
		ns.Key = b.node(n.key)
		ns.Elem = b.node(n.elem)
	}
	if n.row.predict != nil {
		ns.Pred = n.pred
	}
	if n.hasD {
		a, _ := parseFloatBound("dmin", n.spec.dmin)
		z, _ := parseFloatBound("dmax", n.spec.dmax)
		ns.Delta = &DeltaParams{DMin: a, DMax: z, Lo: n.win.Lo(), Hi: n.win.Hi(), Bits: n.win.Bits(),
			FirstK: n.win.FirstK(), Unary: n.win.Unary(), MinBits: n.win.MinBits(), MaxBits: n.win.MaxBits()}
	}
	return ns
}

// memName names an in-memory scalar type as the schema does.
func memName(m memKind) string {
	switch m {
	case mU8:
		return "uint8"
	case mU16:
		return "uint16"
	case mU32:
		return "uint32"
	case mU64:
		return "uint64"
	case mI8:
		return "int8"
	case mI16:
		return "int16"
	case mI32:
		return "int32"
	case mI64:
		return "int64"
	case mF32:
		return "float32"
	case mF64:
		return "float64"
	}
	return ""
}

// uniqueName makes an identifier of t's name that no earlier type of the
// schema has: generic arguments and other punctuation become underscores.
func (b *schemaBuilder) uniqueName(t reflect.Type, i int) string {
	name := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			return r
		}
		return '_'
	}, t.Name())
	name = strings.Trim(name, "_")
	if name == "" || unicode.IsDigit(rune(name[0])) {
		name = fmt.Sprintf("Struct%d", i)
	}
	base := name
	for k := 2; b.names[name]; k++ {
		name = fmt.Sprintf("%s_%d", base, k)
	}
	b.names[name] = true
	return name
}

// ModelSchema describes the model a codec's deltas use.
type ModelSchema struct {
	// Hash is Model.Hash in 16 lowercase hex digits.
	Hash string `json:"hash"`
	// Layout is the fingerprint of the layout without a model (Model.Layout).
	Layout string `json:"layout"`
	// File is the model file (Model.MarshalBinary), base64 in JSON; its
	// format and use are in docs/wire-format.md, "Models".
	File []byte `json:"file"`
}
