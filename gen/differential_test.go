package gen_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// The Go-vs-client differential: over random struct types (reflect.StructOf
// over every coding, nested structs, pointers, arrays, slices, entity sets
// and maps), Go's verdict on an input (the decoded value, or the sentinel
// of its error) and the generated TypeScript and C# clients' verdicts must
// be the same. The inputs are valid full messages and deltas between them
// (which the clients must also decode to Go's value and, for full messages,
// re-encode to the same bytes), those inputs damaged (bits flipped, cut
// short, a byte appended) and random bytes, as full messages and as
// deltas against a valid baseline.
//
// The default size keeps `go test ./gen` quick; BITWIRE_DIFF_TYPES and
// BITWIRE_DIFF_CASES (inputs per type) make it larger, BITWIRE_DIFF_SEED
// picks another sequence of types (docs/clients.md).

func diffEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// diffType is a random struct type with what the differential needs of it.
type diffType struct {
	name   string
	typ    reflect.Type
	schema *bitwire.Schema
}

// randType builds a random struct type of up to width fields, nesting up
// to depth levels.
type typeGen struct {
	r *rand.Rand
	n int // fields made, for unique names
}

func (g *typeGen) field(name string, t reflect.Type, tag string) reflect.StructField {
	f := reflect.StructField{Name: name, Type: t}
	if tag != "" {
		f.Tag = reflect.StructTag(`net:"` + tag + `"`)
	}
	return f
}

var intTypes = []reflect.Type{
	reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[int](),
	reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](), reflect.TypeFor[uint](),
}

// delta sometimes appends a dmin/dmax window to a tag.
func (g *typeGen) delta(tag string) string {
	if g.r.Intn(3) != 0 {
		return tag
	}
	lo := -(1 + g.r.Intn(40))
	return tag + fmt.Sprintf(",dmin=%d,dmax=%d", lo, -lo-g.r.Intn(2))
}

// scalar is a random leaf: a type and its tag.
func (g *typeGen) scalar() (reflect.Type, string) {
	r := g.r
	switch r.Intn(12) {
	case 0:
		return reflect.TypeFor[bool](), ""
	case 1, 2: // integers: bits, range, varint, bitlen, the default
		t := intTypes[r.Intn(len(intTypes))]
		size := t.Bits()
		signed := t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64
		switch r.Intn(5) {
		case 0:
			return t, g.delta(fmt.Sprintf("bits=%d", 1+r.Intn(size)))
		case 1:
			// widths kept below the type's so that lo and hi fit it and
			// hi-lo fits an int64; the full 64-bit range apart
			a := r.Intn(min(size-1, 62))
			var lo, hi int64
			if signed {
				lo = -r.Int63n(1<<uint(a) + 1)
				hi = lo + 1 + r.Int63n(1<<uint(r.Intn(a+1)))
				if r.Intn(8) == 0 {
					lo, hi = -1<<(size-1), 1<<(size-1)-1
				}
			} else {
				a = min(a, 61)
				lo = r.Int63n(1 << uint(a))
				hi = lo + 1 + r.Int63n(1<<uint(a))
			}
			tag := fmt.Sprintf("range,min=%d,max=%d", lo, hi)
			if r.Intn(4) == 0 {
				tag += ",clamp"
			}
			return t, g.delta(tag)
		case 2:
			if r.Intn(2) == 0 {
				return t, fmt.Sprintf("varint,group=%d", 1+r.Intn(8))
			}
			return t, "varint"
		case 3:
			return t, "bitlen"
		}
		return t, ""
	case 3, 4: // q
		t := reflect.TypeFor[float32]()
		if r.Intn(2) == 0 {
			t = reflect.TypeFor[float64]()
		}
		lo := math.Round(r.NormFloat64()*100) / 4
		hi := lo + float64(1+r.Intn(1000))/8
		var tag string
		if r.Intn(2) == 0 {
			tag = fmt.Sprintf("q,min=%v,max=%v,bits=%d", lo, hi, 1+r.Intn(20))
		} else {
			tag = fmt.Sprintf("q,min=%v,max=%v,prec=%v", lo, hi, []float64{0.5, 0.1, 0.01, 0.001}[r.Intn(4)])
		}
		if r.Intn(4) == 0 {
			tag += ",clamp"
		}
		return t, g.delta(tag)
	case 5:
		t := reflect.TypeFor[float32]()
		if r.Intn(2) == 0 {
			t = reflect.TypeFor[float64]()
		}
		if r.Intn(2) == 0 {
			return t, ""
		}
		return t, g.delta(fmt.Sprintf("fixed,prec=%v", []float64{1, 0.5, 0.01, 0.001}[r.Intn(4)]))
	case 6:
		if r.Intn(2) == 0 {
			return reflect.TypeFor[string](), fmt.Sprintf("maxlen=%d", 1+r.Intn(20))
		}
		return reflect.TypeFor[string](), ""
	case 7:
		if r.Intn(2) == 0 {
			return reflect.TypeFor[[]byte](), fmt.Sprintf("maxlen=%d", 1+r.Intn(20))
		}
		return reflect.TypeFor[[]byte](), ""
	case 8:
		if r.Intn(2) == 0 {
			return reflect.TypeFor[[4]float64](), fmt.Sprintf("quat,bits=%d", 2+r.Intn(20))
		}
		return reflect.TypeFor[[4]float32](), fmt.Sprintf("quat,bits=%d", 2+r.Intn(14))
	case 9:
		return reflect.TypeFor[time.Time](), ""
	case 10: // a group of bitlen values
		return reflect.TypeFor[int32](), "bitlen,group=g"
	}
	return reflect.TypeFor[uint16](), g.delta(fmt.Sprintf("bits=%d", 1+r.Intn(16)))
}

// node is a random type, scalar or composite, of nesting up to depth.
func (g *typeGen) node(depth int) (reflect.Type, string) {
	r := g.r
	if depth <= 0 || r.Intn(3) > 0 {
		return g.scalar()
	}
	switch r.Intn(7) {
	case 0:
		return g.structType(depth-1, false), ""
	case 1:
		e, tag := g.node(depth - 1)
		return reflect.PointerTo(e), tag
	case 2:
		e, tag := g.node(depth - 1)
		return reflect.ArrayOf(r.Intn(4), e), tag // [0]T: a zero-size element
	case 3:
		e, tag := g.node(depth - 1)
		if r.Intn(2) == 0 && !strings.Contains(tag, "maxlen") {
			if tag != "" {
				tag += ","
			}
			tag += fmt.Sprintf("maxlen=%d", 1+r.Intn(8))
		}
		return reflect.SliceOf(e), tag
	case 4: // an entity set
		return reflect.SliceOf(g.structType(depth-1, true)), ""
	case 5: // a map of scalars
		keys := []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int32](), reflect.TypeFor[uint8](), reflect.TypeFor[int64](), reflect.TypeFor[float64](), reflect.TypeFor[bool]()}
		e, tag := g.scalar()
		if strings.Contains(tag, "group") || strings.Contains(tag, "maxlen") {
			e, tag = reflect.TypeFor[bool](), ""
		}
		tag = strings.TrimPrefix(tag+fmt.Sprintf(",maxlen=%d", 1+r.Intn(8)), ",")
		return reflect.MapOf(keys[r.Intn(len(keys))], e), tag
	}
	return g.structType(depth-1, false), "composite"
}

// structType is a random struct of one to five fields; an entity's first
// field is its id.
func (g *typeGen) structType(depth int, entity bool) reflect.Type {
	var fs []reflect.StructField
	if entity {
		fs = append(fs, g.field("ID", []reflect.Type{reflect.TypeFor[uint16](), reflect.TypeFor[uint32]()}[g.r.Intn(2)], "id"))
	}
	n := 1 + g.r.Intn(5)
	if !entity && g.r.Intn(12) == 0 {
		n = 0 // struct{}: a zero-size element
	}
	for ; n > 0; n-- {
		t, tag := g.node(depth)
		g.n++
		fs = append(fs, g.field(fmt.Sprintf("F%d", g.n), t, tag))
	}
	return reflect.StructOf(fs)
}

// randTypes returns n random types that bitwire accepts (a random tag may
// be refused: a grid finer than the type holds, say).
func randTypes(t *testing.T, r *rand.Rand, n int) []diffType {
	g := &typeGen{r: r}
	var out []diffType
	for tries := 0; len(out) < n && tries < 50*n; tries++ {
		typ := g.structType(2, false)
		if typ.NumField() == 0 {
			continue // empty elements are nested, the root says something
		}
		s, err := bitwire.SchemaOf(reflect.New(typ).Interface())
		if err != nil {
			continue
		}
		out = append(out, diffType{name: fmt.Sprintf("R%d", len(out)), typ: typ, schema: s})
	}
	if len(out) < n {
		t.Fatalf("only %d of %d random types accepted", len(out), n)
	}
	return out
}

// valueGen fills values of a schema's types: mostly within the coding's
// bounds, so that most of them encode.
type valueGen struct {
	r *rand.Rand
	s *bitwire.Schema
}

func (g valueGen) fill(n *bitwire.NodeSchema, v reflect.Value) {
	r := g.r
	switch n.Coding {
	case "bool":
		v.SetBool(r.Intn(2) == 0)
	case "bits":
		w := n.Bits.Width
		if v.CanInt() {
			if w == 1 {
				v.SetInt(-int64(r.Intn(2)))
			} else {
				v.SetInt(signedSmall(r, w-1))
			}
		} else {
			v.SetUint(uint64(small(r, w)) & (1<<uint(w) - 1))
			if w == 64 {
				v.SetUint(r.Uint64())
			}
		}
	case "range":
		lo, _ := new(big.Int).SetString(n.Range.Min, 10)
		hi, _ := new(big.Int).SetString(n.Range.Max, 10)
		span := new(big.Int).Sub(hi, lo)
		x := new(big.Int).Rand(r, span.Add(span, big.NewInt(1)))
		x.Add(x, lo)
		if n.Clamp && r.Intn(6) == 0 { // out of range: clamped
			x = new(big.Int).Add(hi, big.NewInt(int64(r.Intn(3))))
		}
		if v.CanInt() {
			if !x.IsInt64() || v.OverflowInt(x.Int64()) {
				x = lo
			}
			v.SetInt(x.Int64())
		} else {
			if !x.IsUint64() || v.OverflowUint(x.Uint64()) {
				x = lo
			}
			v.SetUint(x.Uint64())
		}
	case "varint", "bitlen":
		bitsz := v.Type().Bits()
		if v.CanInt() {
			v.SetInt(signedSmall(r, bitsz-1))
		} else {
			v.SetUint(uint64(small(r, bitsz)))
		}
	case "q":
		x := n.Q.Min + r.Float64()*(n.Q.Max-n.Q.Min)
		switch r.Intn(6) {
		case 0:
			x = n.Q.Min
		case 1:
			x = n.Q.Max
		case 2:
			if n.Clamp {
				x = n.Q.Max + 1
			}
		}
		if v.Kind() == reflect.Float32 {
			x32 := float32(x)
			if float64(x32) < n.Q.Min || float64(x32) > n.Q.Max {
				x32 = float32((n.Q.Min + n.Q.Max) / 2)
			}
			x = float64(x32)
		}
		v.SetFloat(x)
	case "fixed":
		v.SetFloat(math.Round(r.NormFloat64()*1000) * n.Fixed.Prec)
	case "float":
		switch r.Intn(8) {
		case 0:
			v.SetFloat(math.Inf(1 - 2*r.Intn(2)))
		case 1:
			v.SetFloat(math.Copysign(0, -1))
		default:
			v.SetFloat(r.NormFloat64() * 1e4)
		}
	case "string":
		l := r.Intn(12)
		if n.MaxLen > 0 {
			l = r.Intn(n.MaxLen + 1)
		}
		s := []rune("aé✓z0\u0000")
		var b strings.Builder
		for b.Len() < l {
			b.WriteRune(s[r.Intn(len(s))])
		}
		str := b.String()
		for len(str) > l { // the maxlen counts bytes
			_, sz := lastRune(str)
			str = str[:len(str)-sz]
		}
		v.SetString(str)
	case "bytes":
		l := r.Intn(12)
		if n.MaxLen > 0 {
			l = r.Intn(n.MaxLen + 1)
		}
		b := make([]byte, l)
		r.Read(b)
		v.SetBytes(b)
	case "quat":
		q := randQuat(r)
		for i := 0; i < 4; i++ {
			v.Index(i).SetFloat(q[i])
		}
	case "time":
		v.Set(reflect.ValueOf(time.Unix(r.Int63n(4e9)-2e9, r.Int63n(1e9)).UTC()))
	case "struct":
		ts := &g.s.Types[*n.Ref]
		for _, f := range ts.Fields {
			g.fill(f.Node, v.FieldByName(f.Name))
		}
	case "array":
		for i := 0; i < v.Len(); i++ {
			g.fill(n.Elem, v.Index(i))
		}
	case "slice":
		l := r.Intn(5)
		if n.MaxLen > 0 {
			l = r.Intn(n.MaxLen + 1)
		}
		s := reflect.MakeSlice(v.Type(), l, l)
		id := uint64(0)
		for i := 0; i < l; i++ {
			g.fill(n.Elem, s.Index(i))
			if n.Entity != nil { // ids ascending, unique
				id += 1 + uint64(r.Intn(3))
				s.Index(i).Field(n.Entity.IDField).SetUint(id)
			}
		}
		v.Set(s)
	case "ptr":
		if r.Intn(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		g.fill(n.Elem, p.Elem())
		v.Set(p)
	case "map":
		m := reflect.MakeMap(v.Type())
		l := r.Intn(4)
		if n.MaxLen > 0 {
			l = r.Intn(n.MaxLen + 1)
		}
		for i := 0; i < l; i++ {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			g.fill(n.Key, k)
			if k.CanFloat() && k.Float() == 0 {
				k.SetFloat(0) // no -0 key: see negZeroKey
			}
			g.fill(n.Elem, e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		panic("fill: " + n.Coding)
	}
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xc0 != 0x80 {
			return []rune(s[i:])[0], len(s) - i
		}
	}
	return 0, 1
}

// negZeroKey reports whether a value holds a map with the float key -0: a
// JavaScript Map cannot hold it apart from +0, so the TypeScript client
// decodes it to the key +0, which re-encodes to other bits; the wire
// format does not yet refuse -0 keys (it is left out until it does).
func negZeroKey(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && negZeroKey(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && negZeroKey(v.Field(i)) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if negZeroKey(v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			if k.CanFloat() && k.Float() == 0 && math.Signbit(k.Float()) || negZeroKey(it.Value()) {
				return true
			}
		}
	}
	return false
}

// budgetRefusal reports whether err is Go's allocation budget refusing an
// input (Limits.MaxAllocPerByte): a policy of the Go package that the
// untyped Unmarshal applies and the clients do not, so such cases are left
// out.
func budgetRefusal(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Limits.MaxAllocPerByte")
}

// diffDamage returns b with bits flipped, cut short, a byte appended or
// replaced by random bytes of a similar length.
func diffDamage(r *rand.Rand, b []byte) []byte {
	b = append([]byte(nil), b...)
	switch k := r.Intn(6); {
	case k == 0 && len(b) > 0:
		return b[:r.Intn(len(b))]
	case k == 1:
		return append(b, byte(r.Intn(256)))
	case k == 2 || len(b) == 0:
		out := make([]byte, r.Intn(len(b)+8))
		r.Read(out)
		return out
	}
	for j := r.Intn(3); j >= 0; j-- {
		x := r.Intn(len(b) * 8)
		b[x/8] ^= 1 << uint(x%8)
	}
	return b
}

// diffCases writes the differential corpus of one random type.
func diffCases(t *testing.T, r *rand.Rand, dt diffType, n int) (cases []cfCase, stats map[string]int) {
	stats = map[string]int{}
	s := dt.schema
	vg := valueGen{r: r, s: s}
	root := &bitwire.NodeSchema{Coding: "struct", Ref: &s.Root}
	canonV := func(v reflect.Value) string {
		b, err := json.Marshal(canon(root, s, v.Elem()))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Valid full messages (the decoded values are the baselines).
	var fulls [][]byte
	var decoded []reflect.Value
	for tries := 0; len(fulls) < max(2, n/4) && tries < 20*n; tries++ {
		v := reflect.New(dt.typ)
		vg.fill(root, v.Elem())
		b, err := bitwire.Marshal(v.Interface())
		if err != nil {
			stats["refused value"]++
			continue
		}
		q := reflect.New(dt.typ)
		if err := bitwire.Unmarshal(b, q.Interface()); err != nil {
			t.Fatalf("%s: Go does not decode what it encoded (%x): %v\ntype %v", dt.name, b, err, dt.typ)
		}
		sawInvalidUTF8 = false
		want := canonV(q)
		if sawInvalidUTF8 {
			continue
		}
		cases = append(cases, cfCase{Msg: dt.name, Full: hex.EncodeToString(b), Want: want})
		fulls, decoded = append(fulls, b), append(decoded, q)
		stats["full"]++
	}
	if len(fulls) < 2 {
		t.Fatalf("%s: no values encode: type %v", dt.name, dt.typ)
	}
	// Deltas from one decoded value to another.
	var deltas [][]byte
	var deltaBase []int
	for i := 0; i < n/4; i++ {
		a, b := r.Intn(len(fulls)), r.Intn(len(fulls))
		d, err := bitwire.MarshalDelta(decoded[a].Interface(), decoded[b].Interface())
		if err != nil {
			t.Fatalf("%s: delta between two decoded values: %v", dt.name, err)
		}
		out := reflect.New(dt.typ)
		if err := bitwire.UnmarshalDelta(d, decoded[a].Interface(), out.Interface()); err != nil {
			t.Fatalf("%s: Go does not decode its delta %x: %v", dt.name, d, err)
		}
		if len(d) == 0 {
			// The corpus tells a delta case by its delta's bytes, so an
			// empty one (possible for a type of no bits) cannot be a case.
			stats["empty delta"]++
			continue
		}
		base := a
		cases = append(cases, cfCase{Msg: dt.name, Base: &base, Delta: hex.EncodeToString(d), Want: canonV(out)})
		deltas, deltaBase = append(deltas, d), append(deltaBase, a)
		stats["delta"]++
	}
	// Damaged and random full messages.
	for i := 0; i < n/4; i++ {
		b := diffDamage(r, fulls[r.Intn(len(fulls))])
		v := reflect.New(dt.typ)
		err := bitwire.Unmarshal(b, v.Interface())
		if budgetRefusal(err) {
			stats["budget"]++
			continue
		}
		c := cfCase{Kind: "damaged", Msg: dt.name, Full: hex.EncodeToString(b)}
		if err != nil {
			c.Err, c.ErrMsg = sentinel(err), err.Error()
		} else {
			sawInvalidUTF8 = false
			if c.Want = canonV(v); sawInvalidUTF8 || negZeroKey(v) {
				continue
			}
		}
		cases = append(cases, c)
		stats["damaged "+verdict(err)]++
	}
	// Damaged and random deltas against a valid baseline.
	for i := 0; i < n/4; i++ {
		b, base := diffDamage(r, nil), r.Intn(len(fulls)) // random bytes
		if len(deltas) > 0 {
			k := r.Intn(len(deltas))
			b, base = diffDamage(r, deltas[k]), deltaBase[k]
			if r.Intn(4) == 0 { // against another baseline than its own
				base = r.Intn(len(fulls))
			}
		}
		v := reflect.New(dt.typ)
		err := bitwire.UnmarshalDelta(b, decoded[base].Interface(), v.Interface())
		if budgetRefusal(err) {
			stats["budget"]++
			continue
		}
		bb := base
		c := cfCase{Kind: "damaged-delta", Msg: dt.name, Base: &bb, Delta: hex.EncodeToString(b)}
		if err != nil {
			c.Err, c.ErrMsg = sentinel(err), err.Error()
		} else {
			sawInvalidUTF8 = false
			if c.Want = canonV(v); sawInvalidUTF8 || negZeroKey(v) {
				continue
			}
		}
		cases = append(cases, c)
		stats["damaged-delta "+verdict(err)]++
	}
	return cases, stats
}

func verdict(err error) string {
	if err == nil {
		return "ok"
	}
	return sentinel(err)
}

// diffCorpus is the random types and their cases, the same for both
// languages.
func diffCorpus(t *testing.T) ([]gen.Message, []cfCase) {
	seed := int64(diffEnv("BITWIRE_DIFF_SEED", 2025))
	r := rand.New(rand.NewSource(seed))
	types := randTypes(t, r, diffEnv("BITWIRE_DIFF_TYPES", 40))
	perType := diffEnv("BITWIRE_DIFF_CASES", 200)
	var msgs []gen.Message
	var cases []cfCase
	total := map[string]int{}
	for _, dt := range types {
		cs, st := diffCases(t, r, dt, perType)
		cases = append(cases, cs...)
		for k, v := range st {
			total[k] += v
		}
		msgs = append(msgs, gen.Named(dt.name, dt.schema))
	}
	t.Logf("seed %d: %d types, %d cases: %v", seed, len(types), len(cases), total)
	return msgs, cases
}

// hasNode reports whether a node of the schema satisfies f.
func hasNode(s *bitwire.Schema, f func(*bitwire.NodeSchema) bool) bool {
	var walk func(n *bitwire.NodeSchema) bool
	walk = func(n *bitwire.NodeSchema) bool {
		return n != nil && (f(n) || walk(n.Key) || walk(n.Elem))
	}
	for _, t := range s.Types {
		for _, fl := range t.Fields {
			if walk(fl.Node) {
				return true
			}
		}
	}
	return false
}

// accepted keeps the messages a generator accepts, and their cases: a
// generator may refuse a type its language cannot hold (C# a pointer to a
// quaternion, say), with ErrSchema.
func accepted(t *testing.T, generate func(gen.Message) error, msgs []gen.Message, cases []cfCase) ([]gen.Message, []cfCase) {
	keep := map[string]bool{}
	var out []gen.Message
	for _, m := range msgs {
		if err := generate(m); err != nil {
			if !errors.Is(err, gen.ErrSchema) {
				t.Fatalf("%s: %v", m.Name, err)
			}
			t.Logf("%s refused: %v", m.Name, err)
			continue
		}
		keep[m.Name] = true
		out = append(out, m)
	}
	var cs []cfCase
	for _, c := range cases {
		if keep[c.Msg] {
			cs = append(cs, c)
		}
	}
	if len(out) < len(msgs)*3/4 {
		t.Fatalf("only %d of %d random types generated", len(out), len(msgs))
	}
	t.Logf("%d of %d types, %d cases", len(out), len(msgs), len(cs))
	return out, cs
}

func TestTypeScriptDifferential(t *testing.T) {
	node, tsc := clientTools(t)
	msgs, cases := diffCorpus(t)
	msgs, cases = accepted(t, func(m gen.Message) error { return gen.TypeScript(io.Discard, "./bitwire.js", m) }, msgs, cases)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", msgs...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

func TestCSharpDifferential(t *testing.T) {
	mcs, mono := csTools(t)
	msgs, cases := diffCorpus(t)
	msgs, cases = accepted(t, func(m gen.Message) error {
		if hasNode(m.Schema, func(n *bitwire.NodeSchema) bool {
			return n.Coding == "array" && (n.Elem.Type == "uint8" || n.Elem.Type == "int8")
		}) {
			// The C# runner's canonical form does not see the schema: an
			// array of bytes is a byte[] there, which it writes as bytes.
			return fmt.Errorf("%w: [N]uint8 or [N]int8 (the C# runner's canonical form)", gen.ErrSchema)
		}
		return gen.CSharp(io.Discard, "Conf", m)
	}, msgs, cases)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", msgs...); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)
}
