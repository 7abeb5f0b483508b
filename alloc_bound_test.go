package bitwire

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// randomType builds a random struct type for the allocation tests: scalars
// with random codings, strings and byte slices with small maxlen, slices
// (plain and entity sets), arrays, pointers, maps with small and large key
// types, and unsent fields of random size, which cost memory but no bits.
func randomType(rng *rand.Rand, depth int) reflect.Type {
	var fs []reflect.StructField
	n := 1 + rng.Intn(4)
	entity := depth > 0 && rng.Intn(2) == 0
	if entity {
		fs = append(fs, reflect.StructField{Name: "ID", Type: reflect.TypeFor[uint16](), Tag: `net:"id,bits=16"`})
	}
	for i := range n {
		name := fmt.Sprintf("F%d", i)
		var t reflect.Type
		var tag reflect.StructTag
		switch k := rng.Intn(14); {
		case k == 0:
			t = reflect.TypeFor[bool]()
		case k == 1:
			t, tag = reflect.TypeFor[int32](), `net:"bitlen"`
		case k == 2:
			t, tag = reflect.TypeFor[uint8](), `net:"bits=3"`
		case k == 3:
			t, tag = reflect.TypeFor[float32](), `net:"q,min=-8,max=8,prec=0.5"`
		case k == 4:
			t, tag = reflect.TypeFor[string](), reflect.StructTag(fmt.Sprintf(`net:"maxlen=%d"`, 1+rng.Intn(4)))
		case k == 5:
			t, tag = reflect.TypeFor[[]byte](), reflect.StructTag(fmt.Sprintf(`net:"maxlen=%d"`, 1+rng.Intn(4)))
		case k == 6:
			// an unsent field: memory without bits
			t, tag = reflect.ArrayOf(1+rng.Intn(200), reflect.TypeFor[[3]float32]()), `net:"-"`
		case k == 7 && depth < 2:
			t = reflect.SliceOf(randomType(rng, depth+1))
		case k == 8 && depth < 2:
			t = reflect.PointerTo(randomType(rng, depth+1))
		case k == 9 && depth < 2:
			keys := []reflect.Type{reflect.TypeFor[bool](), reflect.TypeFor[uint8](), reflect.TypeFor[int16](), reflect.TypeFor[string](), reflect.TypeFor[uint32]()}
			t = reflect.MapOf(keys[rng.Intn(len(keys))], randomType(rng, depth+1))
		case k == 10 && depth < 2:
			t = reflect.ArrayOf(1+rng.Intn(3), randomType(rng, depth+1))
		case k == 11:
			t, tag = reflect.TypeFor[[]uint8](), `net:"bitlen"`
		case k == 12:
			t, tag = reflect.TypeFor[string](), ""
		default:
			t = reflect.TypeFor[uint16]()
		}
		fs = append(fs, reflect.StructField{Name: name, Type: t, Tag: tag})
	}
	return reflect.StructOf(fs)
}

// TestDecodeAllocationBoundRandomTypes holds the promise of Limits for
// random types: decoding any input allocates at most
// DefaultMaxAllocPerByte bytes per input byte plus AllocBase, full and
// delta, one message or many from one reader, whatever the type (unsent fields, maps of small keys, entity sets
// included).
func TestDecodeAllocationBoundRandomTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads memory statistics around every decode")
	}
	rng := rand.New(rand.NewSource(14))
	types := 0
	worst := 0.0
	for types < 100 {
		typ := randomType(rng, 0)
		p, err := compileRoot(typ)
		if err != nil {
			continue // zero-bit slices and such: For refuses them
		}
		types++
		base := reflect.New(typ)
		fillRandom(rng, base.Elem(), 0)
		var valid [][]byte
		if data, err := marshalPlan(p, base.UnsafePointer(), &options{}); err == nil {
			valid = append(valid, data)
		}
		// A delta decode may also copy the baseline's contents (uncharged:
		// they are the receiver's own state, not the input's): allow up to
		// three deep copies of it (a map's entries are copied to be
		// sorted, then into the new map).
		scratch := reflect.New(typ)
		copyCost := allocatedBy(func() { copyStruct(p, scratch.UnsafePointer(), base.UnsafePointer()) })
		for i, in := range hostileCorpus(valid, 100, int64(types)) {
			limit := uint64(DefaultMaxAllocPerByte*len(in) + AllocBase)
			out := reflect.New(typ)
			// The lesser of two runs: the first may fill a cache.
			n := minAllocatedBy(func() { out.Elem().SetZero(); _ = unmarshalPlan(in, p, out.UnsafePointer(), &options{}) })
			require.LessOrEqual(t, n, limit, "%v: input %d (%d bytes %x): Unmarshal", typ, i, len(in), in)
			// Several messages from one input (Decode in a loop on one
			// reader, as a count-framed packet is read) share its budget.
			many := minAllocatedBy(func() {
				r := bits.NewReader(in)
				for range 50 {
					if decodeRootOpt(p, r, reflect.New(typ).UnsafePointer(), &options{}) != nil {
						return
					}
				}
			})
			require.LessOrEqual(t, many, limit+50*uint64(allocCost(int64(typ.Size()))), "%v: input %d (%d bytes %x): Decode in a loop", typ, i, len(in), in)
			dout := reflect.New(typ)
			m := minAllocatedBy(func() {
				dout.Elem().SetZero()
				_ = unmarshalDeltaPlan(in, p, base.UnsafePointer(), dout.UnsafePointer(), &options{})
			})
			require.LessOrEqual(t, m, limit+3*copyCost, "%v: input %d (%d bytes %x): UnmarshalDelta", typ, i, len(in), in)
			if len(in) > 0 && n > AllocBase {
				worst = max(worst, float64(n-AllocBase)/float64(len(in)))
			}
		}
	}
	t.Logf("worst full decode: %.1f bytes allocated per input byte beyond AllocBase, over %d random types", worst, types)
}

// minAllocatedBy is the lesser of allocatedBy over two runs of f.
func minAllocatedBy(f func()) uint64 { return min(allocatedBy(f), allocatedBy(f)) }

// fillRandom gives v small random contents (slices of up to 3 elements,
// maps of up to 3 entries), valid for the tags randomType uses.
func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).Tag.Get("net") == "-" {
				continue
			}
			fillRandom(rng, v.Field(i), depth)
		}
	case reflect.Bool:
		v.SetBool(rng.Intn(2) == 0)
	case reflect.Uint8:
		v.SetUint(uint64(rng.Intn(8)))
	case reflect.Uint16, reflect.Uint32:
		v.SetUint(uint64(rng.Intn(1000)))
	case reflect.Int16, reflect.Int32:
		v.SetInt(int64(rng.Intn(2000) - 1000))
	case reflect.Float32:
		v.SetFloat(float64(rng.Intn(33)-16) / 2)
	case reflect.String:
		v.SetString("a"[:rng.Intn(2)])
	case reflect.Slice:
		l := rng.Intn(4)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			l = rng.Intn(2)
		}
		s := reflect.MakeSlice(v.Type(), l, l)
		for i := range l {
			fillRandom(rng, s.Index(i), depth+1)
			if f := s.Index(i); f.Kind() == reflect.Struct && f.Type().Field(0).Name == "ID" {
				f.Field(0).SetUint(uint64(i + 1)) // ascending ids
			}
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fillRandom(rng, v.Index(i), depth+1)
		}
	case reflect.Pointer:
		if rng.Intn(2) == 0 {
			e := reflect.New(v.Type().Elem())
			fillRandom(rng, e.Elem(), depth+1)
			v.Set(e)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range rng.Intn(4) {
			k := reflect.New(v.Type().Key()).Elem()
			fillRandom(rng, k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fillRandom(rng, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}

// The reproducers of issue 14: inputs built for types whose elements cost
// far more memory than bits.
type unsentVec3 struct{ X, Y, Z float32 }

type unsentElem struct {
	Alive  bool
	Interp [16]unsentVec3 `net:"-"`
}

type unsentSlice struct{ S []unsentElem }

type boolMapBytes struct {
	M map[bool]struct {
		B []byte `net:"maxlen=1"`
	}
}

type bytesSlice struct {
	S []struct {
		B []byte `net:"maxlen=1"`
	}
}

type stringSlice struct {
	S []struct {
		S string `net:"maxlen=1"`
	}
}

func TestDecodeAllocationReproducers(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads memory statistics around every decode")
	}
	check := func(name string, in []byte, decode func([]byte) error) {
		t.Helper()
		limit := uint64(DefaultMaxAllocPerByte*len(in) + AllocBase)
		var err error
		n := allocatedBy(func() { err = decode(in) })
		require.LessOrEqual(t, n, limit, "%s: %d bytes of input allocated %d bytes (%.0f per byte), err %v", name, len(in), n, float64(n)/float64(len(in)), err)
	}
	// 1,000 live elements in 126 bytes: 1,000 × 196 bytes of memory.
	many := func(count int, elem func(w *bits.Writer)) []byte {
		var w bits.Writer
		writeLenPrefix(&w, count)
		for range count {
			elem(&w)
		}
		return w.Bytes()
	}
	in := many(1000, func(w *bits.Writer) { w.WriteBool(true) })
	var us unsentSlice
	check("unsent fields", in, func(b []byte) error { return Unmarshal(b, &us) })
	err := Unmarshal(in, &us)
	require.ErrorIs(t, err, ErrTooLong)
	require.Contains(t, err.Error(), "MaxAllocPerByte")
	// Raising the bound lets it through.
	c := MustFor[unsentSlice]().WithLimits(Limits{MaxAllocPerByte: 2048})
	require.NoError(t, c.Unmarshal(in, &us))
	require.Len(t, us.S, 1000)

	// Empty byte slices and strings: a bit or two each, 24 and 16 bytes of
	// header each.
	in = many(4000, func(w *bits.Writer) { w.WriteBits(0, 1) })
	var bs bytesSlice
	check("byte slices", in, func(b []byte) error { return Unmarshal(b, &bs) })
	var ss stringSlice
	check("strings", in, func(b []byte) error { return Unmarshal(b, &ss) })

	// A bool-keyed map claiming many entries (all repeats): at most two
	// are pre-sized, and the first repeat stops it.
	var w bits.Writer
	writeLenPrefix(&w, 4000)
	for range 4000 {
		w.WriteBool(true)
		w.WriteBits(0, 1)
	}
	var bm boolMapBytes
	check("bool map", w.Bytes(), func(b []byte) error { return Unmarshal(b, &bm) })
	require.ErrorIs(t, Unmarshal(w.Bytes(), &bm), ErrMalformed)
}

// writeLenPrefix writes a length as a field without maxlen does.
func writeLenPrefix(w *bits.Writer, n int) {
	var tmp struct{ S []bool }
	tmp.S = make([]bool, n)
	var all bits.Writer
	_ = MustFor[struct{ S []bool }]().Encode(&all, &tmp) // the prefix, then n zero bits
	data := all.Bytes()
	r := bits.NewReader(data)
	copyLen := all.Len() - n
	for copyLen > 0 {
		k := min(copyLen, 8)
		v, _ := r.ReadBits(k)
		w.WriteBits(v, k)
		copyLen -= k
	}
}

type bigMap struct {
	M map[uint16]int32
}

// BenchmarkMapDeltaUnchanged: a one-byte "nothing changed" delta of a
// 1,000-entry map copies the baseline without sorting its keys.
func BenchmarkMapDeltaUnchanged(b *testing.B) {
	c := MustFor[bigMap]()
	base := bigMap{M: map[uint16]int32{}}
	for i := range 1000 {
		base.M[uint16(i*7)] = int32(i)
	}
	d, err := c.MarshalDelta(&base, &base)
	if err != nil || len(d) != 1 {
		b.Fatal(len(d), err)
	}
	var out bigMap
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := c.UnmarshalDelta(d, &base, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHostileUnsentFields: 126 bytes claiming 1,000 elements of 196
// bytes each are refused before the slice is allocated.
func BenchmarkHostileUnsentFields(b *testing.B) {
	var w bits.Writer
	writeLenPrefix(&w, 1000)
	for range 1000 {
		w.WriteBool(true)
	}
	in := w.Bytes()
	c := MustFor[unsentSlice]()
	var out unsentSlice
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		out.S = nil
		if c.Unmarshal(in, &out) == nil {
			b.Fatal("accepted")
		}
	}
}

// Issue: the allocation budget is per input, not per decode: a count and
// many messages read from one packet share it.
type budgetElem struct {
	Alive bool
	Pad   [16][3]float32 `net:"-"`
}

type budgetMsg struct {
	S []budgetElem `net:"maxlen=7"`
}

func TestDecodeAllocationBudgetPerInput(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads memory statistics around every decode")
	}
	u, err := NewUnion(budgetMsg{})
	require.NoError(t, err)
	var w bits.Writer
	require.NoError(t, u.EncodeCount(&w, 900))
	full := budgetMsg{S: make([]budgetElem, 7)}
	for i := range full.S {
		full.S[i].Alive = true
	}
	for range 900 {
		require.NoError(t, u.Encode(&w, &full))
	}
	in := append([]byte(nil), w.Bytes()...)
	limit := uint64(DefaultMaxAllocPerByte*len(in) + AllocBase)
	decodeAll := func(one func(r *bits.Reader) error) error {
		r := bits.NewReader(in)
		n, err := u.DecodeCount(r)
		if err != nil {
			return err
		}
		for range n {
			if err := one(r); err != nil {
				return err
			}
		}
		return nil
	}
	var derr error
	n := minAllocatedBy(func() { derr = decodeAll(func(r *bits.Reader) error { _, err := u.Decode(r); return err }) })
	require.LessOrEqual(t, n, limit, "Union.Decode: %d bytes of input allocated %d bytes", len(in), n)
	t.Logf("DecodeCount + Decode of %d bytes: %d bytes allocated (bound %d), then %v", len(in), n, limit, derr)
	require.ErrorIs(t, derr, ErrTooLong)
	var into budgetMsg
	n = minAllocatedBy(func() {
		derr = decodeAll(func(r *bits.Reader) error { into = budgetMsg{}; _, err := u.DecodeInto(r, &into); return err })
	})
	require.LessOrEqual(t, n, limit, "Union.DecodeInto: %d bytes of input allocated %d bytes", len(in), n)
	require.ErrorIs(t, derr, ErrTooLong)
	// Codec.Decode in a loop on one reader.
	c := MustFor[budgetMsg]()
	var cw bits.Writer
	for range 900 {
		require.NoError(t, c.Encode(&cw, &full))
	}
	cin := append([]byte(nil), cw.Bytes()...)
	n = minAllocatedBy(func() {
		r := bits.NewReader(cin)
		derr = nil
		for range 900 {
			var v budgetMsg
			if derr = c.Decode(r, &v); derr != nil {
				return
			}
		}
	})
	require.LessOrEqual(t, n, uint64(DefaultMaxAllocPerByte*len(cin)+AllocBase), "Codec.Decode loop: %d bytes of input allocated %d bytes", len(cin), n)
	require.ErrorIs(t, derr, ErrTooLong)
	// A new reader (or Reset) starts a new budget: one message decodes.
	r := bits.NewReader(cin)
	var v budgetMsg
	require.NoError(t, c.Decode(r, &v))
	require.Len(t, v.S, 7)
}
