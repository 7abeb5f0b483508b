package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// code is the coding of one node of a plan.
type code uint8

const (
	cBool   code = iota + 1
	cBits        // fixed width, two's complement when signed
	cRange       // v-min in BitsRequired(max-min) bits
	cQ           // quantized float
	cFloat       // raw IEEE float, 32 or 64 bits
	cFixed       // round(v/prec) as a signed bitlen
	cVarint      // groups of n bits with continuation bits, zigzag when signed
	cBitlen      // adaptive bit length with prefix width n
	cString      // length then bytes
	cBytes       // []byte: length then bytes
	cQuat        // smallest three
	cTime        // time.Time: zigzag unix seconds as bitlen, then 30 bits of nanoseconds
	cStruct      // nested struct: its own plan
	cArray       // fixed count of elements
	cSlice       // length then elements
	cPtr         // presence bit then the pointee
	cMap         // length then entries in sorted key order
)

var codeNames = [...]string{
	cBool: "bool", cBits: "bits", cRange: "range", cQ: "q", cFloat: "float",
	cFixed: "fixed", cVarint: "varint", cBitlen: "bitlen", cString: "string",
	cBytes: "bytes", cQuat: "quat", cTime: "time", cStruct: "struct",
	cArray: "array", cSlice: "slice", cPtr: "ptr", cMap: "map",
}

// memKind is the in-memory representation of a scalar.
type memKind uint8

const (
	mNone memKind = iota
	mU8
	mU16
	mU32
	mU64
	mI8
	mI16
	mI32
	mI64
	mF32
	mF64
)

func memOf(t reflect.Type) memKind {
	switch t.Kind() {
	case reflect.Uint8:
		return mU8
	case reflect.Uint16:
		return mU16
	case reflect.Uint32:
		return mU32
	case reflect.Uint64:
		return mU64
	case reflect.Uint, reflect.Uintptr:
		if t.Size() == 4 {
			return mU32
		}
		return mU64
	case reflect.Int8:
		return mI8
	case reflect.Int16:
		return mI16
	case reflect.Int32:
		return mI32
	case reflect.Int64:
		return mI64
	case reflect.Int:
		if t.Size() == 4 {
			return mI32
		}
		return mI64
	case reflect.Float32:
		return mF32
	case reflect.Float64:
		return mF64
	}
	return mNone
}

func (m memKind) signed() bool { return m >= mI8 && m <= mI64 }

// sizeBits is the width of an integer kind.
func (m memKind) sizeBits() int {
	switch m {
	case mU8, mI8:
		return 8
	case mU16, mI16:
		return 16
	case mU32, mI32, mF32:
		return 32
	}
	return 64
}

// node is one compiled coding: a scalar leaf or a container.
type node struct {
	code   code
	mem    memKind
	n      int  // cBits: width; cVarint: group size; cBitlen, cFixed: prefix width
	clamp  bool // clamp out-of-range values instead of failing
	q      fields.Quantizer
	irng   fields.IntRange
	urng   fields.UintRange
	fx     fields.Fixed
	quat   fields.Quat
	qoff   [4]uintptr // cQuat: offsets of x, y, z, w
	maxlen int        // cString, cBytes, cSlice, cMap: declared limit (0: none)

	elem   *node   // cArray, cSlice, cPtr: element; cMap: value
	key    *node   // cMap: key
	count  int     // cArray: length
	stride uintptr // cArray, cSlice: element size
	sub    *plan   // cStruct
	emin   int     // cSlice, cMap: fewest bits of one element (entry)

	// delta coding
	hasD     bool  // dmin/dmax: a difference window
	dlo, dhi int64 // the window, in steps
	dbits    int   // bits of a difference in the window
	idField  int   // cSlice of structs with an id field: its index; else -1

	// pod: the Go type holds no pointers, so equal memory means equal
	// values and a copy is a plain copy of size bytes.
	pod  bool
	size uintptr
	typ  reflect.Type

	spec spec // the tag this node was compiled from (delta options live here)
}

// group reports whether the elements of an array or slice of this node
// share one bit length when that is shorter.
func (n *node) groupable() bool { return n.code == cBitlen || n.code == cFixed }

// field is one encoded field of a struct plan.
type field struct {
	name string
	off  uintptr
	node *node
	grp  *fieldGroup // bitlen fields sharing a group name; nil otherwise
	dk   deltaKind   // how decStructDelta reads the field when it changed
}

// deltaKind picks decStructDelta's code for a changed field, once, at
// compile time.
type deltaKind uint8

const (
	dkGeneral  deltaKind = iota // decValueDelta
	dkQ                         // q without a delta window
	dkRangeInt                  // range on a signed integer without a delta window
	dkFlat                      // composite struct with a flat plan
)

// maxShallow is the deepest nesting for which the delta encoder judges
// and encodes a struct in one pass (delta.go): far inside eqNode's cycle
// guard at DefaultMaxDepth, so both ways of judging a change agree.
const maxShallow = 32

// nestOf computes and returns p.nest: one for p, plus the deepest of its
// fields, where a struct, a pointer or a map adds one as eqNode counts
// them; a recursive type, or one deeper than maxShallow, gets
// maxShallow+1.
func nestOf(p *plan, onStack map[*plan]bool) int {
	if p.nest > 0 { // known: every struct counts at least one
		return p.nest
	}
	if onStack[p] {
		return maxShallow + 1 // a cycle
	}
	onStack[p] = true
	deepest := 0
	for _, f := range p.fields {
		deepest = max(deepest, nodeNest(f.node, onStack))
	}
	delete(onStack, p)
	p.nest = min(1+deepest, maxShallow+1)
	return p.nest
}

func nodeNest(n *node, onStack map[*plan]bool) int {
	switch n.code {
	case cStruct:
		return nestOf(n.sub, onStack)
	case cPtr:
		return 1 + nodeNest(n.elem, onStack)
	case cArray, cSlice:
		return nodeNest(n.elem, onStack)
	case cMap:
		return 1 + max(nodeNest(n.key, onStack), nodeNest(n.elem, onStack))
	}
	return 0
}

func deltaKindOf(n *node) deltaKind {
	switch {
	case n.code == cQ && !n.hasD:
		return dkQ
	case n.code == cRange && !n.hasD && n.mem.signed():
		return dkRangeInt
	case n.code == cStruct && n.spec.composite && n.sub.flat != nil:
		return dkFlat
	}
	return dkGeneral
}

// fieldGroup is a set of bitlen fields of one struct sharing a group name.
// The whole group is coded at the position of its first member.
type fieldGroup struct {
	name    string
	members []int // field indexes
	width   int   // shared prefix width: the widest member's
	signed  bool  // some member is signed: the group may need the sign flag
}

// plan is the compiled layout of one struct type.
type plan struct {
	typ    reflect.Type
	name   string
	fields []field

	// filled in once the whole type graph is compiled
	hasSigned bool      // some signed bitlen/fixed value is reachable: the message has a sign flag
	flat      *flatPlan // the fast path's flat list of leaves; nil when it does not apply (flat.go)
	minBits   int       // fewest bits an encoding of this struct takes
	// nest is how many structs and pointers deep a value of this struct
	// goes (maxShallow+1 for deeper or recursive types); 0 until known
	nest int
}

type planKey struct {
	t   reflect.Type
	inh string // the tag a struct-typed field passes down to its leaves
}

var (
	compileMu sync.Mutex
	plans     = map[planKey]*plan{}
)

// compiler compiles one type graph; plans are published only on success.
type compiler struct {
	building map[planKey]*plan
	order    []*plan
	open     map[reflect.Type]bool // non-struct types being compiled since the last struct
}

// compileRoot compiles the plan of struct type t.
func compileRoot(t reflect.Type) (*plan, error) {
	if t.Kind() != reflect.Struct {
		return nil, &FieldError{Path: t.String(), Bit: -1, Err: fmt.Errorf("%w: %s is not a struct", ErrUnsupportedType, t)}
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	if p, ok := plans[planKey{t: t}]; ok {
		return p, nil
	}
	c := &compiler{building: map[planKey]*plan{}}
	p, err := c.structPlan(t, spec{}, "")
	if err != nil {
		return nil, wrapField(err, t.Name(), -1)
	}
	for _, q := range c.order {
		q.hasSigned = signedReach(q, map[*plan]bool{})
		q.minBits = minBitsPlan(q)
	}
	for _, q := range c.order {
		for _, f := range q.fields {
			finishNode(f.node)
		}
	}
	if err := checkZeroBitSlices(p, "", map[*plan]bool{}); err != nil {
		return nil, wrapField(err, t.Name(), -1)
	}
	for _, q := range c.order {
		q.flat = flatten(q)
	}
	for _, q := range c.order { // after every flat plan is known
		for i := range q.fields {
			q.fields[i].dk = deltaKindOf(q.fields[i].node)
		}
	}
	for _, q := range c.order {
		nestOf(q, map[*plan]bool{})
	}
	for k, q := range c.building {
		plans[k] = q
	}
	return p, nil
}

func (c *compiler) structPlan(t reflect.Type, inh spec, inhKey string) (*plan, error) {
	key := planKey{t: t, inh: inhKey}
	if p, ok := plans[key]; ok {
		return p, nil
	}
	if p, ok := c.building[key]; ok {
		return p, nil // recursive type: the plan is being built
	}
	p := &plan{typ: t, name: t.Name()}
	c.building[key] = p
	c.order = append(c.order, p)
	groups := map[string]*fieldGroup{}
	open := c.open
	c.open = nil // a struct ends a chain of non-struct types (see node)
	defer func() { c.open = open }()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		s, err := parseTag(sf.Name, sf.Tag)
		if err != nil {
			return nil, err
		}
		if s.skip || (!sf.IsExported() && !s.present) {
			continue
		}
		if !s.present && inh.hasCoding() {
			s = inh
		}
		nd, err := c.node("", sf.Type, s, inhKeyOf(sf.Tag, inhKey, s.present))
		if err != nil {
			return nil, wrapField(err, sf.Name, -1)
		}
		f := field{name: sf.Name, off: sf.Offset, node: nd}
		if s.kind == kindBitlen && s.hasGroup {
			if nd.code != cBitlen {
				return nil, badTag(sf.Name, "option group applies to integer fields, not %s (the elements of a slice or array share a length already)", sf.Type)
			}
			g := groups[s.group]
			if g == nil {
				g = &fieldGroup{name: s.group}
				groups[s.group] = g
			}
			g.members = append(g.members, len(p.fields))
			if nd.n > g.width {
				g.width = nd.n
			}
			g.signed = g.signed || isSigned(nd)
			f.grp = g
		}
		p.fields = append(p.fields, f)
	}
	return p, nil
}

// inhKeyOf is the cache key part of what a field passes down to its leaves.
func inhKeyOf(tag reflect.StructTag, parent string, own bool) string {
	if !own {
		return parent
	}
	return tag.Get("net")
}

func (c *compiler) node(path string, t reflect.Type, s spec, inhKey string) (*node, error) {
	if t.Kind() != reflect.Struct {
		// A type that contains itself without passing through a struct
		// (type L []L, type M map[string]M, type P *P) has no plan.
		if c.open[t] {
			return nil, &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: %s contains itself without passing through a struct", ErrUnsupportedType, t)}
		}
		if c.open == nil {
			c.open = map[reflect.Type]bool{}
		}
		c.open[t] = true
		defer delete(c.open, t)
	}
	nd := &node{typ: t, spec: s, clamp: s.clamp, idField: -1, pod: !hasPointers(t), size: t.Size()}
	if err := c.fill(nd, path, t, s, inhKey); err != nil {
		return nil, err
	}
	if err := nd.setDelta(path); err != nil {
		return nil, err
	}
	return nd, nil
}

// reject returns an ErrBadTag error when the spec carries any of the named
// options, which the coding being compiled does not take.
func (s spec) reject(path, what string, opts ...string) error {
	for _, o := range opts {
		has := false
		switch o {
		case "min":
			has = s.hasMin
		case "max":
			has = s.hasMax
		case "prec":
			has = s.hasPrec
		case "bits":
			has = s.hasBits
		case "group":
			has = s.hasGroup
		case "maxlen":
			has = s.hasMaxlen
		case "dmin":
			has = s.hasDelta
		case "composite":
			has = s.composite
		case "id":
			has = s.id
		case "clamp":
			has = s.clamp
		}
		if has {
			if o == "dmin" {
				o = "dmin/dmax"
			}
			return badTag(path, "option %s does not apply to %s", o, what)
		}
	}
	return nil
}

var timeType = reflect.TypeOf(time.Time{})

func (c *compiler) fill(nd *node, path string, t reflect.Type, s spec, inhKey string) error {
	what := t.String()
	if s.kind != kindNone {
		what = fmt.Sprintf("%s (coding %s)", t, s.kind)
	}
	kindOn := func() error {
		return badTag(path, "coding %s does not apply to %s", s.kind, t)
	}
	switch t.Kind() {
	case reflect.Bool:
		if s.kind != kindNone {
			return kindOn()
		}
		nd.code = cBool
		return s.reject(path, what, "min", "max", "prec", "bits", "group", "maxlen", "dmin", "composite", "id", "clamp")

	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return c.fillInt(nd, path, t, s, what)

	case reflect.Float32, reflect.Float64:
		return c.fillFloat(nd, path, t, s, what)

	case reflect.String:
		if s.kind != kindNone {
			return kindOn()
		}
		nd.code = cString
		nd.maxlen = s.maxlen
		return s.reject(path, what, "min", "max", "prec", "bits", "group", "dmin", "composite", "id", "clamp")

	case reflect.Slice:
		if err := s.reject(path, what, "composite", "id"); err != nil {
			return err
		}
		if t.Elem().Kind() == reflect.Uint8 && !s.hasCoding() && !s.hasDelta {
			nd.code = cBytes
			nd.maxlen = s.maxlen
			return s.reject(path, what, "group")
		}
		el, err := c.node(path+"[]", t.Elem(), s.inherit(), inhKey)
		if err != nil {
			return err
		}
		nd.code, nd.elem, nd.stride, nd.maxlen = cSlice, el, t.Elem().Size(), s.maxlen
		return nil

	case reflect.Array:
		if s.kind == kindQuat && t.Len() == 4 && (t.Elem().Kind() == reflect.Float32 || t.Elem().Kind() == reflect.Float64) {
			return c.fillQuat(nd, path, t, s) // the array is the quaternion; else quat applies to each element
		}
		if err := s.reject(path, what, "maxlen", "id"); err != nil {
			return err
		}
		el, err := c.node(path+"[]", t.Elem(), s.inherit(), inhKey)
		if err != nil {
			return err
		}
		nd.code, nd.elem, nd.stride, nd.count = cArray, el, t.Elem().Size(), t.Len()
		return nil

	case reflect.Struct:
		if t == timeType {
			if s.kind != kindNone {
				return kindOn()
			}
			nd.code = cTime
			return s.reject(path, what, "min", "max", "prec", "bits", "group", "maxlen", "dmin", "composite", "id", "clamp")
		}
		if s.kind == kindQuat {
			return c.fillQuat(nd, path, t, s)
		}
		if err := s.reject(path, what, "maxlen", "id", "group", "dmin"); err != nil {
			return err
		}
		inh := spec{}
		if s.hasCoding() {
			inh = s.inherit()
			inh.composite = false
		} else {
			inhKey = ""
		}
		sub, err := c.structPlan(t, inh, inhKey)
		if err != nil {
			return err
		}
		nd.code, nd.sub = cStruct, sub
		return nil

	case reflect.Pointer:
		el, err := c.node(path, t.Elem(), s, inhKey)
		if err != nil {
			return err
		}
		nd.code, nd.elem = cPtr, el
		return nil

	case reflect.Map:
		if err := s.reject(path, what, "composite", "id"); err != nil {
			return err
		}
		switch t.Key().Kind() {
		case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			return &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: map key type %s (keys must be booleans, numbers or strings)", ErrUnsupportedType, t.Key())}
		}
		k, err := c.node(path+"{key}", t.Key(), spec{}, "")
		if err != nil {
			return err
		}
		v, err := c.node(path+"{}", t.Elem(), s.inherit(), inhKey)
		if err != nil {
			return err
		}
		nd.code, nd.key, nd.elem, nd.maxlen = cMap, k, v, s.maxlen
		return nil
	}
	return &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: %s", ErrUnsupportedType, t)}
}

func (c *compiler) fillInt(nd *node, path string, t reflect.Type, s spec, what string) error {
	nd.mem = memOf(t)
	size := nd.mem.sizeBits()
	signed := nd.mem.signed()
	if err := s.reject(path, what, "prec", "maxlen", "composite"); err != nil {
		return err
	}
	if s.kind != kindBitlen && s.kind != kindVarint {
		if err := s.reject(path, what, "group"); err != nil {
			return err
		}
	}
	if s.kind != kindRange && s.kind != kindNone {
		if err := s.reject(path, what, "clamp"); err != nil {
			return err
		}
	}
	switch s.kind {
	case kindNone:
		if err := s.reject(path, what, "min", "max"); err != nil {
			return err
		}
		if !s.hasBits {
			nd.code, nd.n = cBitlen, fields.BitlenWidth(size)
			return s.reject(path, what+" (default bitlen coding)", "clamp", "dmin")
		}
		if s.bits > size {
			return badTag(path, "bits=%d is wider than %s", s.bits, t)
		}
		nd.code, nd.n = cBits, s.bits
	case kindRange:
		if !s.hasMin || !s.hasMax {
			return badTag(path, "range needs both min and max")
		}
		if err := s.reject(path, what, "bits"); err != nil {
			return err
		}
		nd.code = cRange
		lo, ulo, err := parseIntBound("min", s.min, !signed)
		if err != nil {
			return badTag(path, "%v", err)
		}
		hi, uhi, err := parseIntBound("max", s.max, !signed)
		if err != nil {
			return badTag(path, "%v", err)
		}
		if signed {
			if lo >= hi {
				return badTag(path, "min=%s must be less than max=%s", s.min, s.max)
			}
			if size < 64 && (lo < -1<<(size-1) || hi > 1<<(size-1)-1) {
				return badTag(path, "range %s..%s does not fit %s", s.min, s.max, t)
			}
			nd.irng, err = fields.NewIntRange(lo, hi)
		} else {
			if ulo >= uhi {
				return badTag(path, "min=%s must be less than max=%s", s.min, s.max)
			}
			if size < 64 && uhi > 1<<size-1 {
				return badTag(path, "range %s..%s does not fit %s", s.min, s.max, t)
			}
			nd.urng, err = fields.NewUintRange(ulo, uhi)
		}
		if err != nil {
			return badTag(path, "%v", err)
		}
	case kindVarint:
		if err := s.reject(path, what, "min", "max", "bits", "dmin"); err != nil {
			return err
		}
		nd.code, nd.n = cVarint, 7
		if s.hasGroup {
			var g int
			if _, err := fmt.Sscanf(s.group, "%d", &g); err != nil || fmt.Sprint(g) != s.group || g < 1 || g > 64 {
				return badTag(path, "varint group=%s must be an integer in 1..64", s.group)
			}
			nd.n = g
		}
	case kindBitlen:
		if err := s.reject(path, what, "min", "max", "bits", "dmin"); err != nil {
			return err
		}
		nd.code, nd.n = cBitlen, fields.BitlenWidth(size)
	default:
		return badTag(path, "coding %s does not apply to %s", s.kind, t)
	}
	if s.hasDelta {
		if err := checkDeltaBounds(path, s); err != nil {
			return err
		}
	}
	return nil
}

func (c *compiler) fillFloat(nd *node, path string, t reflect.Type, s spec, what string) error {
	nd.mem = memOf(t)
	if err := s.reject(path, what, "group", "maxlen", "composite", "id"); err != nil {
		return err
	}
	if s.kind != kindQ {
		if err := s.reject(path, what, "clamp"); err != nil {
			return err
		}
	}
	switch s.kind {
	case kindNone:
		if err := s.reject(path, what+" (raw float; use q or fixed to quantize)", "min", "max", "prec", "bits", "dmin"); err != nil {
			return err
		}
		nd.code = cFloat
		return nil
	case kindQ:
		if !s.hasMin || !s.hasMax {
			return badTag(path, "q needs both min and max")
		}
		if s.hasPrec == s.hasBits {
			return badTag(path, "q needs exactly one of prec and bits")
		}
		lo, err := parseFloatBound("min", s.min)
		if err != nil {
			return badTag(path, "%v", err)
		}
		hi, err := parseFloatBound("max", s.max)
		if err != nil {
			return badTag(path, "%v", err)
		}
		if lo >= hi {
			return badTag(path, "min=%s must be less than max=%s", s.min, s.max)
		}
		if s.hasPrec {
			nd.q, err = fields.NewQuantizer(lo, hi, s.prec)
		} else {
			nd.q, err = fields.NewQuantizerBits(lo, hi, s.bits)
		}
		if err != nil {
			return badTag(path, "%v", err)
		}
		// The step must be coarse enough for the Go type to hold every
		// decoded value exactly enough to re-encode to the same index.
		mag := math.Max(math.Abs(lo), math.Abs(hi))
		ulpBits := -49.0
		if nd.mem == mF32 {
			ulpBits = -20
		}
		if nd.q.Step() < mag*math.Pow(2, ulpBits) {
			return badTag(path, "precision %g is finer than %s can hold over %s..%s", nd.q.Step(), t, s.min, s.max)
		}
		nd.code = cQ
	case kindFixed:
		if !s.hasPrec {
			return badTag(path, "fixed needs prec")
		}
		if err := s.reject(path, what, "min", "max", "bits"); err != nil {
			return err
		}
		fx, err := fields.NewFixed(s.prec)
		if err != nil {
			return badTag(path, "%v", err)
		}
		nd.code, nd.fx, nd.n = cFixed, fx, fields.BitlenWidth(64)
	default:
		return badTag(path, "coding %s does not apply to %s", s.kind, t)
	}
	if s.hasDelta {
		return checkDeltaBounds(path, s)
	}
	return nil
}

func checkDeltaBounds(path string, s spec) error {
	if s.dmin == "" || s.dmax == "" {
		return badTag(path, "dmin and dmax go together")
	}
	lo, err := parseFloatBound("dmin", s.dmin)
	if err != nil {
		return badTag(path, "%v", err)
	}
	hi, err := parseFloatBound("dmax", s.dmax)
	if err != nil {
		return badTag(path, "%v", err)
	}
	if lo >= hi {
		return badTag(path, "dmin=%s must be less than dmax=%s", s.dmin, s.dmax)
	}
	return nil
}

func (c *compiler) fillQuat(nd *node, path string, t reflect.Type, s spec) error {
	if err := s.reject(path, "quat", "min", "max", "prec", "group", "maxlen", "id", "clamp", "dmin"); err != nil {
		return err
	}
	n := 9
	if s.hasBits {
		n = s.bits
	}
	q, err := fields.NewQuat(n)
	if err != nil {
		return badTag(path, "%v", err)
	}
	switch {
	case t.Kind() == reflect.Array && t.Len() == 4 && (t.Elem().Kind() == reflect.Float32 || t.Elem().Kind() == reflect.Float64):
		nd.mem = memOf(t.Elem())
		sz := t.Elem().Size()
		nd.qoff = [4]uintptr{0, sz, 2 * sz, 3 * sz}
	case t.Kind() == reflect.Struct:
		for i, name := range []string{"X", "Y", "Z", "W"} {
			f, ok := t.FieldByName(name)
			if !ok || len(f.Index) != 1 || (f.Type.Kind() != reflect.Float32 && f.Type.Kind() != reflect.Float64) {
				return badTag(path, "quat on struct %s needs float fields X, Y, Z and W", t)
			}
			m := memOf(f.Type)
			if i > 0 && m != nd.mem {
				return badTag(path, "quat on struct %s needs X, Y, Z and W of one float type", t)
			}
			nd.mem = m
			nd.qoff[i] = f.Offset
		}
	default:
		return badTag(path, "coding quat does not apply to %s (use [4]float32, [4]float64 or a struct of X, Y, Z, W)", t)
	}
	nd.code, nd.quat = cQuat, q
	return nil
}

// signedReach reports whether encoding p can write a signed bitlen value.
func signedReach(p *plan, seen map[*plan]bool) bool {
	if seen[p] {
		return false
	}
	seen[p] = true
	for _, f := range p.fields {
		if nodeSigned(f.node, seen) {
			return true
		}
	}
	return false
}

func nodeSigned(n *node, seen map[*plan]bool) bool {
	switch n.code {
	case cBitlen:
		return n.mem.signed()
	case cFixed:
		return true
	case cStruct:
		return signedReach(n.sub, seen)
	case cArray, cSlice, cPtr:
		return nodeSigned(n.elem, seen)
	case cMap:
		return nodeSigned(n.key, seen) || nodeSigned(n.elem, seen)
	}
	return false
}

// minBitsPlan is the fewest bits any encoding of p takes (without the sign
// flag). Recursion only passes through pointers, slices and maps, whose
// minimum does not depend on their element, so this terminates.
func minBitsPlan(p *plan) int {
	total := 0
	for _, f := range p.fields {
		if f.grp != nil {
			total += 1 // at least a mode bit or a prefix bit per member
			continue
		}
		total += minBitsNode(f.node)
	}
	return total
}

func minBitsNode(n *node) int {
	switch n.code {
	case cBool:
		return 1
	case cBits:
		return n.n
	case cRange:
		if n.mem.signed() {
			return n.irng.Bits()
		}
		return n.urng.Bits()
	case cQ:
		return n.q.Bits()
	case cFloat:
		return n.mem.sizeBits()
	case cFixed, cBitlen:
		return n.n + 1
	case cVarint:
		return n.n + 1
	case cString, cBytes, cSlice, cMap:
		return fields.LenBits(0, n.maxlen)
	case cQuat:
		return n.quat.Bits()
	case cTime:
		return fields.BitlenWidth(64) + 1 + 30
	case cStruct:
		return minBitsPlan(n.sub)
	case cArray:
		if n.elem.groupable() && n.count > 1 {
			// a mode bit, the shared width, then at least one bit each
			return 1 + n.elem.n + n.count
		}
		return n.count * minBitsNode(n.elem)
	case cPtr:
		return 1
	}
	return 0
}

// checkZeroBitSlices rejects a slice whose elements occupy memory but
// encode to no bits (a struct whose fields are all skipped): its length
// alone, a few bits of input, could make a decoder allocate gigabytes.
func checkZeroBitSlices(p *plan, path string, seen map[*plan]bool) error {
	if seen[p] {
		return nil
	}
	seen[p] = true
	for _, f := range p.fields {
		fp := f.name
		if path != "" {
			fp = path + "." + f.name
		}
		if err := checkZeroBitNode(f.node, fp, seen); err != nil {
			return err
		}
	}
	return nil
}

func checkZeroBitNode(n *node, path string, seen map[*plan]bool) error {
	switch n.code {
	case cStruct:
		return checkZeroBitSlices(n.sub, path, seen)
	case cSlice:
		if n.emin == 0 && n.stride > 0 {
			return &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: the elements of %s encode to no bits, so a decoder could not bound its length by its input", ErrUnsupportedType, n.typ)}
		}
	case cMap:
		return checkZeroBitNode(n.elem, path+"{}", seen)
	}
	if n.elem != nil {
		return checkZeroBitNode(n.elem, path+"[]", seen)
	}
	return nil
}

// finishNode fills in what needs the whole type graph compiled.
func finishNode(n *node) {
	switch n.code {
	case cSlice:
		n.emin = minBitsNode(n.elem)
		if n.elem.groupable() {
			n.emin = 1 // in a shared-length group an element may take one bit
		}
		if n.elem.code == cStruct {
			for i, f := range n.elem.sub.fields {
				if f.node.spec.id && f.node.mem != mNone && f.node.code != cFloat && f.node.code != cQ && f.node.code != cFixed {
					n.idField = i
					break
				}
			}
		}
	case cMap:
		n.emin = minBitsNode(n.key) + minBitsNode(n.elem)
		finishNode(n.key)
	}
	if n.elem != nil {
		finishNode(n.elem)
	}
}

// maxBitsPlan is the worst-case size of p, or -1 when unbounded.
func maxBitsPlan(p *plan, visiting map[*plan]bool) int {
	if visiting[p] {
		return -1
	}
	visiting[p] = true
	defer delete(visiting, p)
	total := 0
	done := map[*fieldGroup]bool{}
	for _, f := range p.fields {
		var b int
		if f.grp != nil {
			if done[f.grp] {
				continue
			}
			done[f.grp] = true
			b = 0
			for _, i := range f.grp.members {
				b += maxBitsNode(p.fields[i].node, visiting)
			}
			if len(f.grp.members) > 1 {
				b++ // mode bit
			}
		} else {
			b = maxBitsNode(f.node, visiting)
		}
		if b < 0 {
			return -1
		}
		total += b
	}
	return total
}

func maxBitsNode(n *node, visiting map[*plan]bool) int {
	switch n.code {
	case cBitlen, cFixed:
		sign := 0
		if n.code == cFixed || n.mem.signed() {
			sign = 1
		}
		size := n.mem.sizeBits()
		if n.code == cFixed {
			size = 64
		}
		return sign + n.n + size - 1
	case cVarint:
		size := n.mem.sizeBits()
		groups := (size + n.n - 1) / n.n
		if n.mem.signed() {
			groups = (size + n.n - 1) / n.n
		}
		return groups * (n.n + 1)
	case cString, cBytes:
		if n.maxlen == 0 {
			return -1
		}
		return fields.LenBits(0, n.maxlen) + 8*n.maxlen
	case cTime:
		return fields.BitlenWidth(64) + 63 + 30
	case cStruct:
		return maxBitsPlan(n.sub, visiting)
	case cArray:
		e := maxBitsNode(n.elem, visiting)
		if e < 0 {
			return -1
		}
		b := n.count * e
		if n.elem.groupable() && n.count > 1 {
			b++
		}
		return b
	case cSlice:
		if n.maxlen == 0 {
			return -1
		}
		e := maxBitsNode(n.elem, visiting)
		if e < 0 {
			return -1
		}
		b := fields.LenBits(0, n.maxlen) + n.maxlen*e
		if n.elem.groupable() && n.maxlen > 1 {
			b++
		}
		return b
	case cPtr:
		e := maxBitsNode(n.elem, visiting)
		if e < 0 {
			return -1
		}
		return 1 + e
	case cMap:
		if n.maxlen == 0 {
			return -1
		}
		k, v := maxBitsNode(n.key, visiting), maxBitsNode(n.elem, visiting)
		if k < 0 || v < 0 {
			return -1
		}
		return fields.LenBits(0, n.maxlen) + n.maxlen*(k+v)
	}
	return minBitsNode(n) // fixed-size codings
}

// ptrAt offsets p by off bytes.
func ptrAt(p unsafe.Pointer, off uintptr) unsafe.Pointer { return unsafe.Add(p, off) }

// hasPointers reports whether values of t hold pointers (strings, slices,
// maps, pointers, interfaces, channels and functions included).
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}
