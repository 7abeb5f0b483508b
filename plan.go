package bitwire

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/bitwire/bitwire/fields"
)

// A plan is a struct type compiled once into nodes, one per field, each
// naming its coding (a leaf row of coders.go, or a container) and its
// parameters; compile.go turns a Go type and its tag into a node.

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

func (m memKind) float() bool { return m == mF32 || m == mF64 }

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
	uid    int32 // unique among the plans and nodes of the process (see plan.uid)
	code   code
	row    *coder // the coding's row (coders.go)
	sgn    bool   // an adaptive value with a sign bit under the message's flag
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
	count  int     // cArray: length; cMap: distinct keys of the key type (capped, see keyRange)
	stride uintptr // cArray, cSlice: element size
	sub    *plan   // cStruct
	emin   int     // cSlice, cMap: fewest bits of one element (entry)

	// delta coding
	hasD    bool          // dmin/dmax: a difference window
	win     fields.Window // the window, in steps of the coding's precision
	idField int           // cSlice of structs with an id field: its index; else -1
	byElem  bool          // cArray: a changed array's delta goes element by element (its elements carry a window)
	pred    bool          // a leaf tagged pred, or a container holding one (predict.go)

	// pod: the Go type holds no pointers, so equal memory means equal
	// values and a copy is a plain copy of size bytes.
	pod  bool
	size uintptr
	typ  reflect.Type

	spec spec // the tag this node was compiled from (delta options live here)
}

// groupable reports whether the elements of an array or slice of this node
// share one bit length when that is shorter.
func (n *node) groupable() bool { return n.row.group }

// field is one encoded field of a struct plan.
type field struct {
	name string
	off  uintptr
	node *node
	grp  *fieldGroup // bitlen fields sharing a group name; nil otherwise
	dk   deltaKind   // how decStructDelta reads the field when it changed
	once bool        // encStructDelta judges the field while writing it (judgedOnce)
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
	uid    int32 // unique among the plans and nodes of the process (a model's tables are found by it)

	// filled in once the whole type graph is compiled
	hasSigned bool       // some signed bitlen/fixed value is reachable: the message has a sign flag
	flat      *flatPlan  // the fast path's flat list of leaves; nil when it does not apply (flat.go)
	dflat     *deltaPlan // the delta fast path's operations; nil when it does not apply (deltaflat.go)
	minBits   int        // fewest bits an encoding of this struct takes
	pred      bool       // some field holds a value tagged pred (predict.go)
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
	uids      int32 // the last uid given (under compileMu)
)

// newUID returns the next uid of a plan or node; the caller holds
// compileMu.
func newUID() int32 {
	uids++
	return uids
}

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
	if err := checkIDs(p); err != nil {
		return nil, wrapField(err, t.Name(), -1)
	}
	if err := markPred(c.order); err != nil {
		return nil, wrapField(err, t.Name(), -1)
	}
	for _, q := range c.order {
		q.flat = flatten(q)
	}
	for _, q := range c.order { // after every flat plan is known
		for i := range q.fields {
			q.fields[i].dk = deltaKindOf(q.fields[i].node)
		}
		q.dflat = flattenDelta(q)
	}
	for _, q := range c.order {
		nestOf(q, map[*plan]bool{})
	}
	for _, q := range c.order { // after every nest is known
		for i := range q.fields {
			q.fields[i].once = judgedOnce(q.fields[i].node)
		}
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
	p := &plan{typ: t, name: t.Name(), uid: newUID()}
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
		if s.coding == cBitlen && s.hasGroup {
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
	nd := &node{typ: t, spec: s, clamp: s.clamp, idField: -1, pod: !hasPointers(t), size: t.Size(), uid: newUID()}
	if err := c.fill(nd, path, t, s, inhKey); err != nil {
		return nil, err
	}
	nd.row = &coders[nd.code]
	nd.sgn = nd.row.signed != nil && nd.row.signed(nd)
	if err := nd.setDelta(path); err != nil {
		return nil, err
	}
	return nd, nil
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
	case cStruct:
		return signedReach(n.sub, seen)
	case cArray, cSlice, cPtr:
		return nodeSigned(n.elem, seen)
	case cMap:
		return nodeSigned(n.key, seen) || nodeSigned(n.elem, seen)
	}
	return n.sgn
}

// idUse records how a struct type with fields is reached: the first path
// that reaches it, and whether any path reaches it as a slice's element.
type idUse struct {
	path string
	elem bool
}

// checkIDs refuses an id field in a struct that no path of the type
// reaches as the element of a slice ([]T): only there does id mean
// anything (it makes the slice an entity set), so a struct whose id can
// never take effect is a mistake For reports. (A struct that is an entity
// somewhere may appear elsewhere too, as a pointer to one entity, say.)
func checkIDs(root *plan) error {
	uses := map[*plan]*idUse{}
	var order []*plan
	var walk func(p *plan, path string, elem bool)
	var walkNode func(n *node, path string)
	walk = func(p *plan, path string, elem bool) {
		u := uses[p]
		if u != nil {
			if elem && !u.elem {
				u.elem = true
			} else {
				return
			}
		} else {
			uses[p] = &idUse{path: path, elem: elem}
			order = append(order, p)
		}
		for _, f := range p.fields {
			fp := f.name
			if path != "" {
				fp = path + "." + f.name
			}
			walkNode(f.node, fp)
		}
	}
	walkNode = func(n *node, path string) {
		switch n.code {
		case cStruct:
			walk(n.sub, path, false)
		case cSlice:
			if n.elem.code == cStruct {
				walk(n.elem.sub, path+"[]", true)
				return
			}
			walkNode(n.elem, path+"[]")
		case cArray:
			walkNode(n.elem, path+"[]")
		case cPtr:
			walkNode(n.elem, path)
		case cMap:
			walkNode(n.elem, path+"{}")
		}
	}
	walk(root, "", false)
	for _, p := range order {
		if uses[p].elem {
			continue
		}
		for _, f := range p.fields {
			if f.node.spec.id {
				fp := f.name
				if path := uses[p].path; path != "" {
					fp = path + "." + f.name
				}
				return badTag(fp, "option id applies only to an integer field of a slice's element struct ([]T), and no slice here holds %s", p.typ)
			}
		}
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
				if f.node.spec.id && f.node.mem != mNone && !f.node.mem.float() { // an integer
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
