package bitwire

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	mbits "math/bits"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	fuzz "github.com/google/gofuzz"
	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// A decoder that knows nothing but the schema JSON and docs/wire-format.md:
// the check that a schema is complete, as a generator for another language
// relies on. It decodes into generic values (map[string]any for structs,
// []any for arrays and slices, int64 / uint64 / float64 / bool / string /
// []byte / time.Time leaves, [4]float64 quaternions, raw floats as their
// bits) and is compared with the Go codec's own decoding, converted to the
// same form. It is written from the spec, not from the codec's code, and
// reads only the bits package (the bit stream).

type sdec struct {
	s            *Schema
	r            *bits.Reader
	neg, flagged bool
	quats        map[*NodeSchema]*sdecQuat // quaternion nodes' states
	wins         map[*NodeSchema]*uint32   // windowed nodes' running means
	model        *sdecModel                // the schema's model (deltas), or nil
	preread      int                       // a quaternion's first symbol + 1, read by its folded struct; 0: none
}

var errSchemaDec = errors.New("schema decoder: bad input")

func sdecMessage(s *Schema, r *bits.Reader, t int) (any, error) {
	d := &sdec{s: s, r: r}
	return d.structV(t, true)
}

func (d *sdec) read(n int) uint64 {
	v, err := d.r.ReadBits(n)
	if err != nil {
		panic(err)
	}
	return v
}

func (d *sdec) sentinel(top bool) {
	if top && d.s.Debug && d.read(8) != 0xA5 {
		panic(errSchemaDec)
	}
}

func isSignedType(t string) bool { return strings.HasPrefix(t, "int") }

func (d *sdec) structV(t int, top bool) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok && top {
				v, err = nil, e
				return
			}
			panic(p)
		}
	}()
	ts := &d.s.Types[t]
	out := map[string]any{}
	for i, f := range ts.Fields {
		if f.Group >= 0 {
			g := ts.Groups[f.Group]
			if g.Members[0] != i {
				continue
			}
			nodes := make([]*NodeSchema, len(g.Members))
			for k, m := range g.Members {
				nodes[k] = ts.Fields[m].Node
			}
			vals := d.group(nodes, g.Width)
			for k, m := range g.Members {
				out[ts.Fields[m].Name] = vals[k]
			}
			d.sentinel(top)
			continue
		}
		out[f.Name] = d.node(f.Node)
		d.sentinel(top)
	}
	return out, nil
}

// signFlag reads the message's "any negative" flag where it first occurs.
func (d *sdec) signFlag() {
	if !d.flagged {
		d.neg, d.flagged = d.read(1) == 1, true
	}
}

// adaptiveSigned: bitlen of a signed type, or fixed.
func adaptiveSigned(n *NodeSchema) bool {
	return n.Coding == "fixed" || isSignedType(n.Type)
}

func adaptiveWidth(n *NodeSchema) int {
	if n.Coding == "fixed" {
		return n.Fixed.Width
	}
	return n.Bitlen.Width
}

func (d *sdec) unsignedBitlen(w int) uint64 {
	p := int(d.read(w))
	if p == 0 {
		return d.read(1)
	}
	return 1<<uint(p) | d.read(p)
}

// single reads one individually coded bitlen or fixed value.
func (d *sdec) single(n *NodeSchema) any {
	neg := false
	if adaptiveSigned(n) {
		d.signFlag()
		if d.neg {
			neg = d.read(1) == 1
		}
	}
	return adaptiveValue(n, neg, d.unsignedBitlen(adaptiveWidth(n)))
}

func adaptiveValue(n *NodeSchema, neg bool, mag uint64) any {
	if neg && mag == 0 {
		panic(errSchemaDec)
	}
	i := int64(mag)
	if neg {
		i = -i
	}
	if n.Coding == "fixed" {
		return storeF(n.Type, float64(i)*n.Fixed.Prec)
	}
	if isSignedType(n.Type) {
		return i
	}
	return mag
}

// group reads a group of adaptive values (wire-format.md, "Groups").
func (d *sdec) group(nodes []*NodeSchema, width int) []any {
	out := make([]any, len(nodes))
	if len(nodes) == 1 {
		out[0] = d.single(nodes[0])
	}
	if len(nodes) < 2 {
		return out
	}
	for _, n := range nodes {
		if adaptiveSigned(n) {
			d.signFlag()
			break
		}
	}
	if d.read(1) == 0 {
		for i, n := range nodes {
			out[i] = d.single(n)
		}
		return out
	}
	p := int(d.read(width))
	for i, n := range nodes {
		neg := false
		if d.neg && adaptiveSigned(n) {
			neg = d.read(1) == 1
		}
		out[i] = adaptiveValue(n, neg, d.read(p+1))
	}
	return out
}

// storeF is what a field of type typ holds of a decoded float64.
func storeF(typ string, v float64) float64 {
	if typ == "float32" {
		return float64(float32(v))
	}
	return v
}

func (d *sdec) length(maxlen int) int {
	if maxlen > 0 {
		return int(d.read(mbits.Len64(uint64(maxlen))))
	}
	return int(d.unsignedBitlen(5))
}

func (d *sdec) node(n *NodeSchema) any {
	switch n.Coding {
	case "bool":
		return d.read(1) == 1
	case "bits":
		v := d.read(n.Bits.Width)
		if isSignedType(n.Type) {
			sh := uint(64 - n.Bits.Width)
			return int64(v<<sh) >> sh
		}
		return v
	case "range":
		lo := parseBound(n.Range.Min, n.Type)
		hi := parseBound(n.Range.Max, n.Type)
		off := d.read(mbits.Len64(hi - lo))
		if off > hi-lo {
			panic(errSchemaDec)
		}
		if isSignedType(n.Type) {
			return int64(lo + off)
		}
		return lo + off
	case "q":
		i := d.read(mbits.Len64(n.Q.Steps))
		if i > n.Q.Steps {
			panic(errSchemaDec)
		}
		return keyValue(n, i)
	case "float":
		if n.Type == "float32" {
			return d.read(32)
		}
		return d.read(64)
	case "fixed", "bitlen":
		return d.single(n)
	case "varint":
		var v uint64
		for g := 0; ; g++ {
			v |= d.read(n.Varint.Group) << uint(g*n.Varint.Group)
			if d.read(1) == 0 {
				break
			}
		}
		if isSignedType(n.Type) {
			return int64(v>>1) ^ -int64(v&1)
		}
		return v
	case "string", "bytes":
		b := make([]byte, d.length(n.MaxLen))
		for i := range b {
			b[i] = byte(d.read(8))
		}
		if n.Coding == "string" {
			return string(b)
		}
		if len(b) == 0 {
			return []byte(nil)
		}
		return b
	case "quat":
		return d.quat(n, d.read(2+3*n.Quat.Bits))
	case "time":
		z := d.unsignedBitlen(6)
		ns := d.read(30)
		return time.Unix(int64(z>>1)^-int64(z&1), int64(ns)).UTC()
	case "struct":
		v, _ := d.structV(*n.Ref, false)
		return v
	case "array":
		return d.elems(n, n.Count)
	case "slice":
		l := d.length(n.MaxLen)
		if l == 0 {
			return []any(nil)
		}
		return d.elems(n, l)
	case "ptr":
		if d.read(1) == 0 {
			return nil
		}
		return d.node(n.Elem)
	case "map":
		l := d.length(n.MaxLen)
		m := map[any]any{}
		for i := 0; i < l; i++ {
			k := d.node(n.Key)
			m[k] = d.node(n.Elem)
		}
		if l == 0 {
			return map[any]any(nil)
		}
		return m
	}
	panic(fmt.Sprintf("coding %q", n.Coding))
}

func (d *sdec) elems(n *NodeSchema, count int) []any {
	if n.SharedLength {
		nodes := make([]*NodeSchema, count)
		for i := range nodes {
			nodes[i] = n.Elem
		}
		return d.group(nodes, adaptiveWidth(n.Elem))
	}
	out := make([]any, count)
	for i := range out {
		out[i] = d.node(n.Elem)
	}
	return out
}

// quat unpacks smallest-three bits (wire-format.md, "Smallest-three
// quaternion") into a value of the node's type.
func (d *sdec) quat(n *NodeSchema, u uint64) [4]float64 {
	q := quatUnpack(n.Quat.Bits, u)
	for i := range q {
		q[i] = storeF(n.Type, q[i])
	}
	return q
}

// generic converts a Go value of node n to the decoder's generic form.
func generic(s *Schema, n *NodeSchema, v reflect.Value) any {
	switch n.Coding {
	case "bool":
		return v.Bool()
	case "bits", "range", "varint", "bitlen":
		if isSignedType(n.Type) {
			return v.Int()
		}
		return v.Uint()
	case "q", "fixed":
		return v.Float()
	case "float":
		if n.Type == "float32" {
			if v.CanAddr() { // keep a NaN's payload as it is
				return uint64(*(*uint32)(v.Addr().UnsafePointer()))
			}
			return uint64(math.Float32bits(float32(v.Float())))
		}
		return math.Float64bits(v.Float())
	case "string":
		return v.String()
	case "bytes":
		if v.Len() == 0 {
			return []byte(nil)
		}
		return append([]byte(nil), v.Bytes()...)
	case "quat":
		var q [4]float64
		for i := range q {
			if v.Kind() == reflect.Array {
				q[i] = v.Index(i).Float()
			} else {
				q[i] = v.FieldByName(n.Quat.Fields[i]).Float()
			}
		}
		return q
	case "time":
		t := time.Unix(0, 0)
		reflect.ValueOf(&t).Elem().Set(v)
		return t.UTC()
	case "struct":
		return genericStruct(s, *n.Ref, v)
	case "array", "slice":
		if v.Len() == 0 && n.Coding == "slice" {
			return []any(nil)
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = generic(s, n.Elem, v.Index(i))
		}
		return out
	case "ptr":
		if v.IsNil() {
			return nil
		}
		return generic(s, n.Elem, v.Elem())
	case "map":
		if v.Len() == 0 {
			return map[any]any(nil)
		}
		m := map[any]any{}
		it := v.MapRange()
		for it.Next() {
			m[generic(s, n.Key, it.Key())] = generic(s, n.Elem, it.Value())
		}
		return m
	}
	panic(n.Coding)
}

func genericStruct(s *Schema, t int, v reflect.Value) map[string]any {
	out := map[string]any{}
	for _, f := range s.Types[t].Fields {
		out[f.Name] = generic(s, f.Node, v.FieldByName(f.Name))
	}
	return out
}

// schemaFromJSON is what another language starts from.
func schemaFromJSON(t *testing.T, s *Schema) *Schema {
	js, err := json.Marshal(s)
	require.NoError(t, err)
	var back Schema
	require.NoError(t, json.Unmarshal(js, &back))
	return &back
}

// TestSchemaDecoderReadsGoldenVectors decodes every full-message golden
// vector with the schema decoder, from the schema JSON kept beside it.
func TestSchemaDecoderReadsGoldenVectors(t *testing.T) {
	n := 0
	for _, gc := range goldenCases() {
		if strings.HasPrefix(gc.name, "delta-") {
			continue
		}
		data, _, err := gc.enc()
		require.NoError(t, err)
		js, err := json.Marshal(gc.schema())
		require.NoError(t, err)
		var s Schema
		require.NoError(t, json.Unmarshal(js, &s))
		out, err := gc.dec(data)
		require.NoError(t, err)
		r := bits.NewReader(data)
		if s.Union != nil {
			for _, msg := range out.([]any) {
				tag64, err := r.ReadBits(s.Union.TagBits)
				require.NoError(t, err)
				tag := int(tag64)
				got, err := sdecMessage(&s, r, s.Union.Variants[tag])
				require.NoError(t, err, gc.name)
				require.Equal(t, genericStruct(&s, s.Union.Variants[tag], reflect.ValueOf(msg)), got, gc.name)
			}
		} else {
			got, err := sdecMessage(&s, r, s.Root)
			require.NoError(t, err, gc.name)
			require.Equal(t, genericStruct(&s, s.Root, reflect.ValueOf(out)), got, "%s: %s", gc.name, hex.EncodeToString(data))
		}
		require.True(t, r.CheckPadding(), gc.name)
		n++
	}
	require.Greater(t, n, 20)
}

// sdecMixed holds the codings fuzzScene lacks.
type sdecMixed struct {
	V   int32 `net:"varint,group=3"`
	U   uint64
	T   time.Time
	B   []byte     `net:",maxlen=6"`
	Fx  [3]float64 `net:"fixed,prec=0.01"`
	G1  int8       `net:"bitlen,group=g"`
	G2  uint32     `net:"bitlen,group=g"`
	G3  int64      `net:"bitlen,group=g"`
	A8  [4]uint8
	S   int16   `net:"bits=11"`
	R   int64   `net:"range,min=-1000000,max=1000000"`
	F   float32 // raw
	Q64 float64 `net:"q,min=-1,max=1,prec=0.000001"`
	Qs  Quat4   `net:"quat,bits=14"`
	M   map[bool]float64
}

func randMixed(r *rand.Rand) sdecMixed {
	small := func(n int) int64 { return r.Int63n(int64(1)<<uint(r.Intn(n))) * int64(1-2*r.Intn(2)) }
	v := sdecMixed{
		V: int32(small(31)), U: r.Uint64() >> uint(r.Intn(64)),
		T:  time.Unix(small(40), r.Int63n(1e9)),
		Fx: [3]float64{float64(small(20)) * 0.01, float64(small(10)) * 0.01, r.NormFloat64()},
		G1: int8(small(7)), G2: uint32(small(31)), G3: small(62),
		A8: [4]uint8{uint8(r.Intn(256)), uint8(r.Intn(4)), 0, uint8(r.Intn(16))},
		S:  int16(r.Intn(2048) - 1024), R: r.Int63n(2000001) - 1000000,
		F: math.Float32frombits(r.Uint32()), Q64: r.Float64()*2 - 1,
	}
	if v.G2 > math.MaxInt32 {
		v.G2 = 0
	}
	if n := r.Intn(7); n > 0 {
		v.B = make([]byte, n)
		r.Read(v.B)
	}
	q := unitQuat(r)
	v.Qs = Quat4{q[0], q[1], q[2], q[3]}
	if r.Intn(2) == 0 {
		v.M = map[bool]float64{r.Intn(2) == 0: r.NormFloat64(), true: -1}
	}
	return v
}

// TestSchemaDecoderReadsRandomMessages decodes random messages of types
// holding every coding, from their schema JSON alone, with and without
// debug sentinels.
func TestSchemaDecoderReadsRandomMessages(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	check := func(name string, s *Schema, data []byte, goVal reflect.Value) {
		t.Helper()
		rd := bits.NewReader(data)
		got, err := sdecMessage(s, rd, s.Root)
		require.NoError(t, err, name)
		require.True(t, rd.CheckPadding(), name)
		require.Equal(t, genericStruct(s, s.Root, goVal), got, "%s: %x", name, data)
	}
	sc := MustFor[fuzzScene]()
	mc := MustFor[sdecMixed]()
	for i := 0; i < 200; i++ {
		debug := i%4 == 3
		scene := fuzzScene{}
		fuzz.New().RandSource(r).NilChance(0.2).NumElements(0, 6).Funcs(sceneFuncs...).Fuzz(&scene)
		c := sc.WithDebug(debug)
		data, err := c.Marshal(&scene)
		require.NoError(t, err)
		var back fuzzScene
		require.NoError(t, c.Unmarshal(data, &back))
		check("fuzzScene", schemaFromJSON(t, c.Schema()), data, reflect.ValueOf(&back).Elem())

		m := randMixed(r)
		mcd := mc.WithDebug(debug)
		data, err = mcd.Marshal(&m)
		require.NoError(t, err)
		var mb sdecMixed
		require.NoError(t, mcd.Unmarshal(data, &mb))
		check("sdecMixed", schemaFromJSON(t, mcd.Schema()), data, reflect.ValueOf(&mb).Elem())
	}
}

// ---- deltas, from the schema alone (wire-format.md, "Deltas") ----

func sdecDelta(s *Schema, r *bits.Reader, t int, base map[string]any) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			e, ok := p.(error)
			if !ok {
				panic(p)
			}
			v, err = nil, e
		}
	}()
	d := &sdec{s: s, r: r}
	if s.Model != nil {
		d.model = sdecLoadModel(s)
	}
	return d.structDelta(t, base, true, -1), nil
}

// structDelta reads a changed bit per field (but skip, an entity's id) and
// the changed fields' value deltas. Group members are ordinary fields here.
func (d *sdec) structDelta(t int, base map[string]any, top bool, skip int) map[string]any {
	if d.model != nil {
		return d.structDeltaModel(t, base, top, skip)
	}
	out := map[string]any{}
	for i, f := range d.s.Types[t].Fields {
		if i == skip {
			out[f.Name] = base[f.Name]
			continue
		}
		if d.read(1) == 1 {
			out[f.Name] = d.valueDelta(f.Node, base[f.Name])
		} else {
			out[f.Name] = base[f.Name]
		}
		d.sentinel(top)
	}
	return out
}

func (d *sdec) valueDelta(n *NodeSchema, b any) any {
	switch n.Coding {
	case "struct":
		if n.Composite {
			v, _ := d.structV(*n.Ref, false)
			return v
		}
		return d.structDelta(*n.Ref, b.(map[string]any), false, -1)
	case "quat":
		return d.quatDelta(n, b.([4]float64))
	case "slice":
		bs, _ := b.([]any)
		if n.Entity != nil {
			return d.entityDelta(n, bs)
		}
		return d.sliceDelta(n, bs)
	case "ptr":
		if d.read(1) == 0 {
			return nil
		}
		if b == nil {
			return d.node(n.Elem)
		}
		return d.valueDelta(n.Elem, b)
	case "map":
		bm, _ := b.(map[any]any)
		return d.mapDelta(n, bm)
	case "array":
		// Elements that are scalars with a window, or arrays of them: a
		// changed bit an element, then its delta; else the array in full.
		if !sdecByElem(n) {
			break
		}
		bs, _ := b.([]any)
		out := make([]any, len(bs))
		for i := range bs {
			if d.read(1) == 1 {
				out[i] = d.valueDelta(n.Elem, bs[i])
			} else {
				out[i] = bs[i]
			}
		}
		return out
	}
	if d.model != nil {
		if _, ok := d.model.first[n]; ok {
			return d.scalarModel(n, b)
		}
	}
	if w := n.Delta; w != nil && d.read(1) == 1 {
		// Wire version 4: the first difference of a message in the
		// short form (FirstK low bits) or the plain fixed coding; later
		// ones Rice-coded with the running mean, which the first sets,
		// escaping after Unary ones to the plain fixed coding.
		if d.wins == nil {
			d.wins = map[*NodeSchema]*uint32{}
		}
		mean := d.wins[n]
		k, u := w.FirstK, 1
		if mean != nil {
			k, u = min(riceK(*mean), max(0, w.Bits-2)), w.Unary
		}
		var diff int64
		q := 0
		if w.FirstK > 0 {
			for q < u && d.read(1) == 1 {
				q++
			}
		}
		if w.FirstK > 0 && q < u {
			diff = int64(q)<<uint(k) | int64(d.read(k))
			if diff != 0 && d.read(1) == 1 {
				diff = -diff
			}
		} else {
			diff = int64(d.read(w.Bits)) + w.Lo
		}
		if diff < w.Lo || diff > w.Hi {
			panic(errSchemaDec)
		}
		x := uint32(16 * min(abs(diff), 1<<20))
		switch {
		case mean == nil:
			mean = new(uint32)
			*mean = x
			d.wins[n] = mean
		case x >= *mean:
			*mean += (x - *mean) >> 2
		default:
			*mean -= (*mean - x) >> 2
		}
		return keyValue(n, stepKey(n, b)+uint64(diff))
	}
	return d.node(n)
}

// sdecByElem is wire-format.md's rule for a changed array sent element by
// element: its element has a delta window, or is such an array. Written
// here from the text, as the rest of this decoder, rather than taken from
// NodeSchema.DeltaByElement.
func sdecByElem(n *NodeSchema) bool {
	return n.Coding == "array" && (n.Elem.Delta != nil || sdecByElem(n.Elem))
}

// stepKey is the baseline's step count: what a window's difference is
// added to.
func stepKey(n *NodeSchema, b any) uint64 {
	switch n.Coding {
	case "q":
		if n.Q.Zero {
			return uint64(int64(math.Floor(b.(float64)/n.Q.Step+0.5)) - n.Q.KMin)
		}
		return uint64(math.Floor((b.(float64)-n.Q.Min)/n.Q.Step + 0.5))
	case "fixed":
		return uint64(int64(math.Round(b.(float64) / n.Fixed.Prec)))
	}
	if i, ok := b.(int64); ok {
		return uint64(i)
	}
	return b.(uint64)
}

func keyValue(n *NodeSchema, k uint64) any {
	switch n.Coding {
	case "q":
		switch {
		case k > n.Q.Steps:
			panic(errSchemaDec)
		case n.Q.Zero: // wire version 2: multiples of the step, clamped
			return storeF(n.Type, min(max(float64(n.Q.KMin+int64(k))*n.Q.Step, n.Q.Min), n.Q.Max))
		case k == 0:
			return storeF(n.Type, n.Q.Min)
		case k == n.Q.Steps:
			return storeF(n.Type, n.Q.Max)
		}
		return storeF(n.Type, n.Q.Min+float64(k)*n.Q.Step)
	case "fixed":
		return storeF(n.Type, float64(int64(k))*n.Fixed.Prec)
	}
	if isSignedType(n.Type) {
		return int64(k)
	}
	return k
}

func (d *sdec) indexSet(n, count int) []int {
	if count < 0 {
		count = int(d.unsignedBitlen(5))
	}
	if count > n {
		panic(errSchemaDec)
	}
	var idx []int
	switch {
	case count == n:
		for i := 0; i < n; i++ {
			idx = append(idx, i)
		}
	case count == 0:
	case d.read(1) == 0:
		for i := 0; i < n; i++ {
			if d.read(1) == 1 {
				idx = append(idx, i)
			}
		}
	default:
		k := int(d.read(5))
		prev := -1
		for j := 0; j < count; j++ {
			q := 0
			for d.read(1) == 1 {
				q++
			}
			prev += 1 + q<<uint(k) + int(d.read(k))
			idx = append(idx, prev)
		}
	}
	if len(idx) != count {
		panic(errSchemaDec)
	}
	return idx
}

func contains(set []int, i int) bool {
	for _, x := range set {
		if x == i {
			return true
		}
	}
	return false
}

func (d *sdec) sliceDelta(n *NodeSchema, b []any) any {
	l := d.length(n.MaxLen)
	common := min(len(b), l)
	changed := d.indexSet(common, -1)
	if l == 0 {
		return []any(nil)
	}
	out := make([]any, l)
	for i := 0; i < common; i++ {
		if contains(changed, i) {
			out[i] = d.valueDelta(n.Elem, b[i])
		} else {
			out[i] = b[i]
		}
	}
	for i := common; i < l; i++ {
		out[i] = d.node(n.Elem) // one by one, even for a grouped coding
	}
	return out
}

func (d *sdec) entityDelta(n *NodeSchema, b []any) any {
	l := d.length(n.MaxLen)
	removed := d.indexSet(len(b), -1)
	surv := len(b) - len(removed)
	added := d.indexSet(l, l-surv)
	changed := d.indexSet(surv, -1)
	if l == 0 {
		return []any(nil)
	}
	out := make([]any, l)
	bi, k := 0, 0
	for j := 0; j < l; j++ {
		if contains(added, j) {
			continue
		}
		for contains(removed, bi) {
			bi++
		}
		if contains(changed, k) {
			out[j] = d.structDelta(*n.Elem.Ref, b[bi].(map[string]any), false, n.Entity.IDField)
		} else {
			out[j] = b[bi]
		}
		bi, k = bi+1, k+1
	}
	for _, j := range added {
		out[j] = d.node(n.Elem)
	}
	return out
}

// keyLessGeneric orders map keys: numbers by value, strings by bytes,
// false before true.
func keyLessGeneric(a, b any) bool {
	switch x := a.(type) {
	case bool:
		return !x && b.(bool)
	case string:
		return x < b.(string)
	case int64:
		return x < b.(int64)
	case uint64:
		return x < b.(uint64)
	}
	return math.Float64frombits(a.(uint64)) < math.Float64frombits(b.(uint64))
}

func (d *sdec) mapDelta(n *NodeSchema, b map[any]any) any {
	var keys []any
	for k := range b {
		keys = append(keys, k)
	}
	less := keyLessGeneric
	if n.Key.Coding == "float" {
		less = func(x, y any) bool {
			if n.Key.Type == "float32" {
				return math.Float32frombits(uint32(x.(uint64))) < math.Float32frombits(uint32(y.(uint64)))
			}
			return math.Float64frombits(x.(uint64)) < math.Float64frombits(y.(uint64))
		}
	}
	sortAny(keys, less)
	removed := d.indexSet(len(keys), -1)
	changed := d.indexSet(len(keys)-len(removed), -1)
	out := map[any]any{}
	k := 0
	for i, key := range keys {
		if contains(removed, i) {
			continue
		}
		if contains(changed, k) {
			out[key] = d.valueDelta(n.Elem, b[key])
		} else {
			out[key] = b[key]
		}
		k++
	}
	added := int(d.unsignedBitlen(5))
	for i := 0; i < added; i++ {
		key := d.node(n.Key)
		out[key] = d.node(n.Elem)
	}
	if len(out) == 0 {
		return map[any]any(nil)
	}
	return out
}

func sortAny(s []any, less func(a, b any) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// quatUnpack unpacks smallest-three bits of nb bits a component into
// float64 components.
func quatUnpack(nb int, u uint64) [4]float64 {
	steps := uint64(1)<<uint(nb) - 2 // wire version 2: 0 on the grid
	h := int64(steps / 2)
	step := 1.4142135623730951 / float64(steps)
	m := int(u & 3)
	var q [4]float64
	rad := 1.0 // 1 - a² - b² - c², in that order
	k := 0
	for i := 0; i < 4; i++ {
		if i == m {
			continue
		}
		idx := u >> uint(2+k*nb) & (1<<uint(nb) - 1)
		if idx > steps {
			panic(errSchemaDec)
		}
		q[i] = float64(int64(idx)-h) * step
		rad -= q[i] * q[i]
		k++
	}
	q[m] = math.Sqrt(rad)
	return q
}

// quatPack packs a quaternion by the steps of wire-format.md's encoder,
// as a receiver must pack its baseline for a relative quaternion.
func quatPack(nb int, v [4]float64) uint64 {
	steps := uint64(1)<<uint(nb) - 2 // wire version 2: 0 on the grid
	h := float64(steps / 2)
	step := 1.4142135623730951 / float64(steps)
	m := 0
	for i := 1; i < 4; i++ {
		if math.Abs(v[i]) > math.Abs(v[m]) {
			m = i
		}
	}
	norm := 1 / math.Sqrt(v[0]*v[0]+v[1]*v[1]+v[2]*v[2]+v[3]*v[3])
	if v[m] < 0 {
		norm = -norm
	}
	var idx [3]uint64
	k := 0
	for i := 0; i < 4; i++ {
		if i == m {
			continue
		}
		x := math.Floor(v[i]*norm/step+0.5) + h
		idx[k] = uint64(min(max(x, 0), float64(steps)))
		k++
	}
	val := func(i uint64) float64 { return (float64(int64(i)) - h) * step }
	for {
		a, b, c := val(idx[0]), val(idx[1]), val(idx[2])
		rad := 1 - a*a - b*b - c*c
		big := max(math.Abs(a), math.Abs(b), math.Abs(c))
		if rad >= 0 && math.Sqrt(rad) >= big+1e-6 {
			break
		}
		j := 0
		for i := 1; i < 3; i++ {
			if math.Abs(val(idx[i])) > math.Abs(val(idx[j])) {
				j = i
			}
		}
		if val(idx[j]) > 0 {
			idx[j]--
		} else {
			idx[j]++
		}
	}
	return uint64(m) | idx[0]<<2 | idx[1]<<uint(2+nb) | idx[2]<<uint(2+2*nb)
}

// quatDelta reads a relative quaternion (wire-format.md, "Quaternions in
// deltas"): the mode, then three Rice-coded differences against the
// baseline, re-expressed when the dropped component changes.
func (d *sdec) quatDelta(n *NodeSchema, b [4]float64) any {
	nb := n.Quat.Bits
	steps := int64(1)<<uint(nb) - 2 // the grid of wire version 2
	st := d.quatState(n)
	start := d.r.Pos()
	pos := 0 // the mode code: pos ones then a zero, or four ones
	for d.model == nil && pos < 4 && d.read(1) == 1 {
		pos++
	}
	order := [][5]int{{0, 1, 4, 2, 3}, {4, 0, 1, 2, 3}}[st.afterAbs]
	mode := order[pos] // rank 0..3, or 4: absolute
	t0, maxBits := 0, 3+2+3*nb
	var first int64     // with a model, the first difference read with the rank
	if d.model != nil { // the first table instead (the loop above read nothing)
		t0 = d.model.first[n]
		maxBits = int(d.model.lens[t0][0]) + 2 + 3*nb
		var ok bool
		if mode, first, ok = d.quatFirstModel(t0, nb); !ok {
			mode = 4
		}
	}
	if mode == 4 {
		st.afterAbs = 1
		return d.quat(n, d.read(2+3*nb)) // (the one-spelling check is the codec's)
	}
	st.afterAbs = 0
	mean := &st.mean
	qb := quatPack(nb, b)
	mask := uint64(1)<<uint(nb) - 1
	coded := [3]int64{int64(qb >> 2 & mask), int64(qb >> uint(2+nb) & mask), int64(qb >> uint(2+2*nb) & mask)}
	m := int(qb & 3)
	others := func(m int) []int {
		var o []int
		for c := 0; c < 4; c++ {
			if c != m {
				o = append(o, c)
			}
		}
		return o
	}
	// The four indexes, the dropped one rebuilt in integers.
	var all [4]int64
	t := 2 * steps * steps
	for k, c := range others(m) {
		all[c] = coded[k]
		s := 2*coded[k] - steps
		t -= s * s
	}
	r := int64(0)
	if t > 0 {
		r = int64(math.Sqrt(float64(t)))
		for r*r > t {
			r--
		}
		for (r+1)*(r+1) <= t {
			r++
		}
	}
	all[m] = min((r+steps+1)/2, steps)
	// Ranks: the baseline's coded components by |2i - steps|, larger first.
	rank := others(m)
	dist := func(i int64) int64 { return max(2*i-steps, steps-2*i) }
	sort.SliceStable(rank, func(i, j int) bool { return dist(all[rank[i]]) > dist(all[rank[j]]) })
	nm := m
	if mode > 0 {
		nm = rank[mode-1]
		if 2*all[nm] < steps {
			for k := range all {
				all[k] = steps - all[k]
			}
		}
	}
	var e [3]int64
	q := uint64(nm)
	for k, c := range others(nm) {
		var kk int
		switch k {
		case 0:
			kk = riceK(*mean)
		case 1:
			kk = riceK(16 * uint32(abs(e[0])))
		default:
			kk = riceK(16 * uint32((abs(e[0])+abs(e[1])+1)/2))
		}
		if d.model != nil && k == 0 {
			e[k] = first
		} else if d.model != nil {
			e[k] = d.quatDiffModel(t0, k, nb, e)
		} else {
			u := 5 // the unary limit; 3 for a cold first difference
			if k == 0 && !st.warm {
				u = 3
			}
			e[k] = d.riceEG(kk, u)
		}
		v := all[c] + e[k]
		if v < 0 || v > steps {
			panic(errSchemaDec)
		}
		q |= uint64(v) << uint(2+k*nb)
	}
	if d.r.Pos()-start > maxBits {
		panic(errSchemaDec)
	}
	st.warm = true
	x := uint32(16 * ((abs(e[0]) + abs(e[1]) + abs(e[2]) + 1) / 3))
	if x >= *mean {
		*mean += (x - *mean) >> 2
	} else {
		*mean -= (*mean - x) >> 2
	}
	return d.quat(n, q)
}

// sdecQuat is a quaternion node's state in one message: the running mean
// of differences in 1/16ths, and whether its last quaternion was absolute.
type sdecQuat struct {
	mean     uint32
	afterAbs int
	warm     bool // a relative quaternion was read
}

// quatState returns node n's state in this message, a mean of 2 steps at
// the start.
func (d *sdec) quatState(n *NodeSchema) *sdecQuat {
	if d.quats == nil {
		d.quats = map[*NodeSchema]*sdecQuat{}
	}
	if d.quats[n] == nil {
		d.quats[n] = &sdecQuat{mean: 2 * 16}
	}
	return d.quats[n]
}

// riceK is the Rice parameter of a running mean in 1/16ths.
func riceK(m16 uint32) int { return min(mbits.Len32(m16*11>>8), 20) }

// riceEG reads a difference in the Rice code with parameter k, unary limit
// u and an Exp-Golomb escape of order k+1.
func (d *sdec) riceEG(k, u int) int64 {
	q := 0
	for q < u && d.read(1) == 1 {
		q++
	}
	var m int64
	if q < u {
		m = int64(q)<<uint(k) | int64(d.read(k))
	} else {
		ones := 0
		for d.read(1) == 1 {
			if ones++; ones > 40 {
				panic(errSchemaDec)
			}
		}
		y := int64(1)<<uint(ones+k+1) | int64(d.read(ones+k+1))
		m = y - 1<<uint(k+1) + int64(u)<<uint(k)
	}
	if m != 0 && d.read(1) == 1 {
		return -m
	}
	return m
}

// rice reads a Rice-coded difference with parameter k and escape width w.
func (d *sdec) rice(k, w int) int64 {
	q := 0
	for q < 6 && d.read(1) == 1 {
		q++
	}
	var m int64
	if q < 6 {
		m = int64(q)<<uint(k) | int64(d.read(k))
	} else {
		m = int64(d.read(w))
	}
	if m != 0 && d.read(1) == 1 {
		return -m
	}
	return m
}

// sdecPredict is the predicted baseline of wire-format.md, "Prediction
// from two baselines": base with each pred value replaced by base + (base -
// older) in keys, clamped to the field's keys.
func sdecPredict(s *Schema, t int, base, older map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range s.Types[t].Fields {
		out[f.Name] = sdecPredictNode(s, f.Node, base[f.Name], older[f.Name])
	}
	return out
}

func sdecPredictNode(s *Schema, n *NodeSchema, b, o any) any {
	if b == nil || o == nil {
		return b
	}
	switch n.Coding {
	case "struct":
		return sdecPredict(s, *n.Ref, b.(map[string]any), o.(map[string]any))
	case "array", "slice":
		bs, os := b.([]any), o.([]any)
		out := append([]any(nil), bs...)
		if n.Entity == nil {
			for i := 0; i < min(len(bs), len(os)); i++ {
				out[i] = sdecPredictNode(s, n.Elem, bs[i], os[i])
			}
			return out
		}
		id := s.Types[*n.Elem.Ref].Fields[n.Entity.IDField]
		idOf := func(v any) uint64 { return stepKey(id.Node, v.(map[string]any)[id.Name]) }
		for i, j := 0, 0; i < len(bs) && j < len(os); {
			switch a, z := idOf(bs[i]), idOf(os[j]); {
			case a == z:
				out[i] = sdecPredictNode(s, n.Elem, bs[i], os[j])
				i, j = i+1, j+1
			case a < z:
				i++
			default:
				j++
			}
		}
		return out
	case "ptr":
		return sdecPredictNode(s, n.Elem, b, o)
	}
	if !n.Pred {
		return b
	}
	if n.Coding == "quat" {
		// the rotation from older to base applied again: 2(r0·r1)r1 - r0
		// of their unpacked packings, packed and unpacked
		nb := n.Quat.Bits
		r0, r1 := quatUnpack(nb, quatPack(nb, o.([4]float64))), quatUnpack(nb, quatPack(nb, b.([4]float64)))
		t := float64(r0[0]*r1[0]) + float64(r0[1]*r1[1]) + float64(r0[2]*r1[2]) + float64(r0[3]*r1[3])
		var p [4]float64
		for i := range p {
			p[i] = float64(2*t*r1[i]) - r0[i]
		}
		q := quatUnpack(nb, quatPack(nb, p))
		for i := range q {
			q[i] = storeF(n.Type, q[i])
		}
		return q
	}
	// keys as exact integers: big enough for 64-bit ones and their sums
	var lo, hi, k1, k0 *big.Int
	signed := isSignedType(n.Type) && n.Coding != "q"
	key := func(v any) *big.Int {
		k := stepKey(n, v)
		if signed {
			return big.NewInt(int64(k))
		}
		return new(big.Int).SetUint64(k)
	}
	k1, k0 = key(b), key(o)
	switch n.Coding {
	case "q":
		lo, hi = big.NewInt(0), new(big.Int).SetUint64(n.Q.Steps)
	case "range":
		if signed {
			a, _ := strconv.ParseInt(n.Range.Min, 10, 64)
			z, _ := strconv.ParseInt(n.Range.Max, 10, 64)
			lo, hi = big.NewInt(a), big.NewInt(z)
		} else {
			a, _ := strconv.ParseUint(n.Range.Min, 10, 64)
			z, _ := strconv.ParseUint(n.Range.Max, 10, 64)
			lo, hi = new(big.Int).SetUint64(a), new(big.Int).SetUint64(z)
		}
	case "bits":
		w := uint(n.Bits.Width)
		if signed {
			lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), w-1))
			hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), w-1), big.NewInt(1))
		} else {
			lo, hi = big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), w), big.NewInt(1))
		}
	default:
		return b
	}
	p := new(big.Int).Sub(new(big.Int).Lsh(k1, 1), k0)
	if p.Cmp(lo) < 0 {
		p = lo
	}
	if p.Cmp(hi) > 0 {
		p = hi
	}
	if signed {
		return keyValue(n, uint64(p.Int64()))
	}
	return keyValue(n, p.Uint64())
}

// TestSchemaDecoderReadsDeltas decodes every golden delta and random
// deltas of a scene (entity sets, composite structs, quaternions, maps,
// pointers, signed adaptive slices) from the schema JSON alone, against the
// receiver's baseline.
func TestSchemaDecoderReadsDeltas(t *testing.T) {
	for _, gc := range goldenCases() {
		if !strings.HasPrefix(gc.name, "delta-") {
			continue
		}
		data, _, err := gc.enc()
		require.NoError(t, err)
		s := schemaFromJSON(t, gc.schema())
		out, err := gc.dec(data)
		require.NoError(t, err)
		// the receiver's baseline: the quantized base of the pair
		pair := reflect.ValueOf(gc.show)
		qb := reflect.New(pair.Type().Elem())
		qb.Elem().Set(reflect.ValueOf(gc.base)) // [base cur], or [older base cur]
		_, ptr, err := valuePointer(qb.Interface())
		require.NoError(t, err)
		p, _ := planOf(pair.Type().Elem())
		require.NoError(t, quantizePlan(p, ptr))
		base := genericStruct(s, s.Root, qb.Elem())
		if gc.older != nil { // predicted: the baseline is the prediction
			qo := reflect.New(pair.Type().Elem())
			qo.Elem().Set(reflect.ValueOf(gc.older))
			_, optr, err := valuePointer(qo.Interface())
			require.NoError(t, err)
			require.NoError(t, quantizePlan(p, optr))
			base = sdecPredict(s, s.Root, base, genericStruct(s, s.Root, qo.Elem()))
		}
		rd := bits.NewReader(data)
		got, err := sdecDelta(s, rd, s.Root, base)
		require.NoError(t, err, gc.name)
		require.True(t, rd.CheckPadding(), gc.name)
		o := reflect.New(reflect.TypeOf(out))
		o.Elem().Set(reflect.ValueOf(out))
		require.Equal(t, genericStruct(s, s.Root, o.Elem()), got, gc.name)
	}

	r := rand.New(rand.NewSource(8))
	sc := MustFor[fuzzScene]()
	// A model trained on other scenes codes every other delta.
	tr := sc.NewTrainer()
	tf := fuzz.New().RandSource(rand.New(rand.NewSource(9))).NilChance(0.2).NumElements(0, 6).Funcs(sceneFuncs...)
	for range 200 {
		var a, b fuzzScene
		tf.Fuzz(&a)
		tf.Fuzz(&b)
		require.NoError(t, tr.Add(&a, &b))
	}
	model, err := tr.Model()
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		var a, b fuzzScene
		f := fuzz.New().RandSource(r).NilChance(0.2).NumElements(0, 6).Funcs(sceneFuncs...)
		f.Fuzz(&a)
		f.Fuzz(&b)
		if i%3 == 0 { // mostly the same entities, a few moved
			b.Cubes = append([]Cube(nil), a.Cubes...)
			for k := range b.Cubes {
				if r.Intn(3) == 0 {
					b.Cubes[k].Pos.X *= 0.99
					b.Cubes[k].Rot = [4]float32{0, 0, float32(math.Sin(float64(k))), float32(math.Cos(float64(k)))}
				}
			}
			b.Offsets = append(append([]int32(nil), a.Offsets...), -7, 9)
			b.Aim = a.Aim // moved in its window, but one element
			for k := range b.Aim {
				if k != int(i)%3 {
					b.Aim[k] = min(max(b.Aim[k]+0.25, -10), 10)
				}
			}
		}
		c := sc.WithDebug(i%5 == 4)
		if i%2 == 1 {
			c = sc.WithModel(model).WithDebug(i%5 == 4)
			require.NoError(t, c.ModelErr())
			require.NotNil(t, c.Schema().Model)
		}
		qa := a
		qa.Cubes = append([]Cube(nil), a.Cubes...)
		qa.Players = append([]DeltaPlayer(nil), a.Players...)
		require.NoError(t, c.Quantize(&qa))
		data, err := c.MarshalDelta(&a, &b)
		require.NoError(t, err)
		var got fuzzScene
		require.NoError(t, c.UnmarshalDelta(data, &qa, &got))
		s := schemaFromJSON(t, c.Schema())
		rd := bits.NewReader(data)
		sg, err := sdecDelta(s, rd, s.Root, genericStruct(s, s.Root, reflect.ValueOf(&qa).Elem()))
		require.NoError(t, err, "%x", data)
		require.True(t, rd.CheckPadding())
		require.Equal(t, genericStruct(s, s.Root, reflect.ValueOf(&got).Elem()), sg, "%x", data)
	}
}

// quantizePlan quantizes the struct at ptr in place, as Codec.Quantize.
func quantizePlan(p *plan, ptr unsafe.Pointer) error {
	w := bits.GetWriter()
	defer bits.PutWriter(w)
	if err := encodeRoot(p, w, ptr); err != nil {
		return err
	}
	return decodeRoot(p, bits.NewReader(w.Bytes()), ptr)
}
