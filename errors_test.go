package bitwire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Bad input and bad values: each case asserts the exact sentinel (with
// errors.Is) and that the error is a *FieldError naming the field path.

// requireFieldErr checks that err wraps sentinel and is a *FieldError whose
// Path is path, or starts with path when path ends in "*".
func requireFieldErr(t *testing.T, err, sentinel error, path string) *FieldError {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, sentinel, "got %v", err)
	var fe *FieldError
	require.ErrorAs(t, err, &fe, "got %T %v", err, err)
	if p, ok := strings.CutSuffix(path, "*"); ok {
		require.True(t, strings.HasPrefix(fe.Path, p), "path %q does not start with %q (%v)", fe.Path, p, err)
	} else {
		require.Equal(t, path, fe.Path, "%v", err)
	}
	require.Contains(t, err.Error(), fe.Path)
	return fe
}

// craft builds an input bit by bit.
func craft(f func(w *bits.Writer)) []byte {
	var w bits.Writer
	f(&w)
	return append([]byte(nil), w.Bytes()...)
}

// ---- every strict prefix is ErrUnexpectedEnd ----

func checkPrefixes[T any](t *testing.T, name string, v *T) (paths map[string]bool) {
	t.Helper()
	c := MustFor[T]()
	data, err := c.Marshal(v)
	require.NoError(t, err)
	paths = map[string]bool{}
	for k := 0; k < len(data); k++ {
		var got T
		err := Unmarshal(data[:k], &got)
		fe := requireFieldErr(t, err, ErrUnexpectedEnd, name+"*")
		require.LessOrEqual(t, fe.Bit, 8*k, "%v", err)
		paths[fe.Path] = true
		// Codec.Decode on a reader fails the same way
		err = c.Decode(bits.NewReader(data[:k]), &got)
		requireFieldErr(t, err, ErrUnexpectedEnd, fe.Path)
	}
	var got T
	require.NoError(t, Unmarshal(data, &got))
	return paths
}

func TestPrefixesAreUnexpectedEnd(t *testing.T) {
	for seed := int64(0); seed < 30; seed++ {
		checkPrefixes(t, "RTScalars", gen[RTScalars](seed, nil))
		checkPrefixes(t, "RTQuant", gen(seed, rtQuantPost))
		checkPrefixes(t, "RTStrings", gen(seed, func(v *RTStrings, r *rand.Rand) {
			v.SM = truncString(v.SM, 10)
			if len(v.BM) > 16 {
				v.BM = v.BM[:16]
			}
			if len(v.SS) > 5 {
				v.SS = v.SS[:5]
			}
		}))
		checkPrefixes(t, "RTContainers", gen(seed, func(v *RTContainers, r *rand.Rand) {
			if len(v.Limit) > 3 {
				v.Limit = v.Limit[:3]
			}
		}))
		checkPrefixes(t, "RTVarint", gen[RTVarint](seed, nil))
		checkPrefixes(t, "RTPointers", gen(seed, func(v *RTPointers, r *rand.Rand) {
			if v.PQ != nil {
				*v.PQ = 0.5
			}
			if v.PA != nil {
				*v.PA = [3]int8{}
			}
		}))
		checkPrefixes(t, "RTGraph", gen(seed, func(v *RTGraph, r *rand.Rand) {
			var fix func(n *RTTree)
			fix = func(n *RTTree) {
				n.Name, n.W = truncString(n.Name, 4), 0.5
				for i := range n.Kids {
					fix(&n.Kids[i])
				}
			}
			fix(&v.Root)
			v.Dir = nil
		}))
	}

	// The path names the field the input ended in.
	ps := PlayerState{Pos: PlayerPos{X: 1, Y: 2, Z: 3}, Yaw: 4, Health: 5, Weapon: 6}
	data, err := Marshal(&ps)
	require.NoError(t, err)
	require.Len(t, data, 9) // Pos: 17+14+17 bits = 6 bytes, then Yaw 10, Health 8, Weapon 4, 2 bools
	var got PlayerState
	requireFieldErr(t, Unmarshal(data[:0], &got), ErrUnexpectedEnd, "PlayerState.Pos.X")
	requireFieldErr(t, Unmarshal(data[:2], &got), ErrUnexpectedEnd, "PlayerState.Pos.X")
	requireFieldErr(t, Unmarshal(data[:3], &got), ErrUnexpectedEnd, "PlayerState.Pos.Y")
	requireFieldErr(t, Unmarshal(data[:4], &got), ErrUnexpectedEnd, "PlayerState.Pos.Z")
	requireFieldErr(t, Unmarshal(data[:6], &got), ErrUnexpectedEnd, "PlayerState.Yaw")
	requireFieldErr(t, Unmarshal(data[:7], &got), ErrUnexpectedEnd, "PlayerState.Yaw")
	requireFieldErr(t, Unmarshal(data[:8], &got), ErrUnexpectedEnd, "PlayerState.Health")

	// inside slices: the element index is part of the path
	items := RTContainers{Items: []Item{{ID: 1, Tag: "abcdefgh"}, {ID: 2, Tag: "abcdefgh"}, {ID: 3, Tag: "abcdefgh"}}}
	paths := checkPrefixes(t, "RTContainers", &items)
	require.True(t, paths["RTContainers.Items[2].Tag"], "%v", paths)
	require.True(t, paths["RTContainers.Items[1].ID"], "%v", paths)
	require.True(t, paths["RTContainers.Items"], "%v", paths) // the length check, before any element
	tree := RTGraph{Root: RTTree{Kids: []RTTree{{}, {Kids: []RTTree{{Name: "abcd"}}}}}}
	paths = checkPrefixes(t, "RTGraph", &tree)
	require.True(t, paths["RTGraph.Root.Kids[1].Kids[0].Name"], "%v", paths)
}

// ---- malformed varints ----

type BadVarint struct {
	A uint8    `net:"bits=3"`
	V uint64   `net:"varint"`
	S []uint32 `net:"varint,group=5"`
	N int8     `net:"varint"`
}

func TestMalformedVarint(t *testing.T) {
	head := func(w *bits.Writer) { w.WriteBits(5, 3) }
	tail := func(w *bits.Writer) {
		fields.WriteLen(w, 0, 0) // S: empty
		fields.WriteVarint(w, 0, 7)
	}
	var v BadVarint
	good := craft(func(w *bits.Writer) { head(w); fields.WriteVarint(w, 1<<63, 7); tail(w) })
	require.NoError(t, Unmarshal(good, &v))
	require.Equal(t, BadVarint{A: 5, V: 1 << 63}, v)

	cases := map[string][]byte{
		// eleven groups of 7 bits, each with its continuation bit set
		"overlong": craft(func(w *bits.Writer) {
			head(w)
			for i := 0; i < 11; i++ {
				w.WriteBits(0x7f|0x80, 8)
			}
			w.WriteBits(0, 8)
			tail(w)
		}),
		// a final group of zeros: 5 spelled in two groups
		"non-minimal": craft(func(w *bits.Writer) {
			head(w)
			w.WriteBits(5|0x80, 8)
			w.WriteBits(0, 8)
			tail(w)
		}),
		// the tenth group holds bits above bit 63
		"bit 64": craft(func(w *bits.Writer) {
			head(w)
			for i := 0; i < 9; i++ {
				w.WriteBits(0x7f|0x80, 8)
			}
			w.WriteBits(2, 8)
			tail(w)
		}),
	}
	for name, data := range cases {
		requireFieldErr(t, Unmarshal(data, &v), ErrMalformed, "BadVarint.V")
		_ = name
	}

	// in a slice element
	data := craft(func(w *bits.Writer) {
		head(w)
		fields.WriteVarint(w, 0, 7)
		fields.WriteLen(w, 2, 0)
		fields.WriteVarint(w, 3, 5)
		w.WriteBits(1|1<<5, 6) // 1, more
		w.WriteBits(0, 6)      // 0, end: non-minimal
		fields.WriteVarint(w, 0, 7)
	})
	requireFieldErr(t, Unmarshal(data, &v), ErrMalformed, "BadVarint.S[1]")

	// a well-formed varint too large for the field's Go type
	data = craft(func(w *bits.Writer) {
		head(w)
		fields.WriteVarint(w, 0, 7)
		fields.WriteLen(w, 0, 0)
		fields.WriteVarint(w, fields.Zigzag(300), 7)
	})
	requireFieldErr(t, Unmarshal(data, &v), ErrOutOfRange, "BadVarint.N")
}

// ---- lengths the input cannot hold, or over maxlen ----

type HugeBytes struct{ B []byte }
type HugeString struct{ S string }
type HugeSlice struct{ S []uint64 }
type HugeStructs struct{ S []Item }
type HugeMap struct{ M map[string]int32 }
type HugeNested struct{ S [][]uint16 }
type HugeBitlen struct {
	S []int16 `net:"bitlen"`
}
type HugeMax struct {
	S   []uint32        `net:"maxlen=100"`
	B   []byte          `net:"maxlen=1000"`
	M   map[uint8]bool  `net:"maxlen=6"`
	Str string          `net:"maxlen=5"`
	SS  []string        `net:"maxlen=2"`
	MM  map[string]Item `net:"maxlen=2"`
}

// lenInput is an input whose first field claims n elements, followed by a
// little filler.
func lenInput(n uint64, filler int) []byte {
	return craft(func(w *bits.Writer) {
		fields.WriteBitlen(w, n, 5)
		for i := 0; i < filler; i++ {
			w.WriteBits(0xff, 8)
		}
	})
}

// requireSmallAlloc runs f and fails if it allocated 64 KiB or more, or
// more than a few objects.
func requireSmallAlloc(t *testing.T, what string, f func()) {
	t.Helper()
	f() // warm up: plans compiled, pools filled
	allocs := testing.AllocsPerRun(20, f)
	require.LessOrEqual(t, allocs, 16.0, "%s: %v allocations per call", what, allocs)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 4; i++ {
		f()
	}
	runtime.ReadMemStats(&after)
	delta := after.TotalAlloc - before.TotalAlloc
	require.Less(t, delta, uint64(64<<10), "%s: allocated %d bytes", what, delta)
}

func checkHuge[T any](t *testing.T, name string, data []byte, sentinel error, path string) {
	t.Helper()
	var v T
	requireFieldErr(t, Unmarshal(data, &v), sentinel, path)
	c := MustFor[T]()
	requireSmallAlloc(t, name, func() { _ = c.Unmarshal(data, &v) })
	requireSmallAlloc(t, name+" (package Unmarshal)", func() { _ = Unmarshal(data, &v) })
}

func TestHugeLengths(t *testing.T) {
	for _, n := range []uint64{1 << 31, 1<<32 - 1} {
		data := lenInput(n, 16)
		checkHuge[HugeBytes](t, "bytes", data, ErrTooLong, "HugeBytes.B")
		checkHuge[HugeString](t, "string", data, ErrTooLong, "HugeString.S")
		checkHuge[HugeSlice](t, "slice", data, ErrTooLong, "HugeSlice.S")
		checkHuge[HugeStructs](t, "structs", data, ErrTooLong, "HugeStructs.S")
		checkHuge[HugeMap](t, "map", data, ErrTooLong, "HugeMap.M")
		checkHuge[HugeNested](t, "nested", data, ErrTooLong, "HugeNested.S")
		checkHuge[HugeBitlen](t, "bitlen", data, ErrTooLong, "HugeBitlen.S")
	}
	// Lengths under the default limit that the input cannot hold.
	for _, n := range []uint64{DefaultMaxLen, 100000, 1000} {
		data := lenInput(n, 16)
		checkHuge[HugeBytes](t, "bytes", data, ErrUnexpectedEnd, "HugeBytes.B")
		checkHuge[HugeString](t, "string", data, ErrUnexpectedEnd, "HugeString.S")
		checkHuge[HugeSlice](t, "slice", data, ErrUnexpectedEnd, "HugeSlice.S")
		checkHuge[HugeStructs](t, "structs", data, ErrUnexpectedEnd, "HugeStructs.S")
		checkHuge[HugeMap](t, "map", data, ErrUnexpectedEnd, "HugeMap.M")
		checkHuge[HugeNested](t, "nested", data, ErrUnexpectedEnd, "HugeNested.S")
		checkHuge[HugeBitlen](t, "bitlen", data, ErrUnexpectedEnd, "HugeBitlen.S")
	}
	// An inner slice claiming 2^31 elements.
	data := craft(func(w *bits.Writer) {
		fields.WriteBitlen(w, 2, 5)
		fields.WriteBitlen(w, 0, 5)
		fields.WriteBitlen(w, 1<<31, 5)
		w.WriteBits(0, 64)
	})
	checkHuge[HugeNested](t, "inner", data, ErrTooLong, "HugeNested.S[1]")

	// Over maxlen: each field in turn claims more than its maxlen.
	valid := func(skip int, bad func(w *bits.Writer)) []byte {
		return craft(func(w *bits.Writer) {
			put := []func(){
				func() { w.WriteBits(0, 7) },  // S
				func() { w.WriteBits(0, 10) }, // B
				func() { w.WriteBits(0, 3) },  // M
				func() { w.WriteBits(0, 3) },  // Str
				func() { w.WriteBits(0, 2) },  // SS
				func() { w.WriteBits(0, 2) },  // MM
			}
			for i, p := range put {
				if i == skip {
					bad(w)
				} else {
					p()
				}
			}
			w.WriteBits(0, 64)
		})
	}
	checkHuge[HugeMax](t, "maxlen slice", valid(0, func(w *bits.Writer) { w.WriteBits(101, 7) }), ErrTooLong, "HugeMax.S")
	checkHuge[HugeMax](t, "maxlen bytes", valid(1, func(w *bits.Writer) { w.WriteBits(1023, 10) }), ErrTooLong, "HugeMax.B")
	checkHuge[HugeMax](t, "maxlen map", valid(2, func(w *bits.Writer) { w.WriteBits(7, 3) }), ErrTooLong, "HugeMax.M")
	checkHuge[HugeMax](t, "maxlen string", valid(3, func(w *bits.Writer) { w.WriteBits(6, 3) }), ErrTooLong, "HugeMax.Str")
	checkHuge[HugeMax](t, "maxlen []string", valid(4, func(w *bits.Writer) { w.WriteBits(3, 2) }), ErrTooLong, "HugeMax.SS")
	checkHuge[HugeMax](t, "maxlen map of structs", valid(5, func(w *bits.Writer) { w.WriteBits(3, 2) }), ErrTooLong, "HugeMax.MM")
	// within maxlen but more than the input holds
	checkHuge[HugeMax](t, "maxlen bytes short", craft(func(w *bits.Writer) { w.WriteBits(0, 7); w.WriteBits(1000, 10) }), ErrUnexpectedEnd, "HugeMax.B")

	// Encoding over maxlen is ErrTooLong too, and writes nothing.
	c := MustFor[HugeMax]()
	w := bits.NewWriter(nil)
	w.WriteBits(5, 3)
	for _, v := range []HugeMax{
		{S: make([]uint32, 101)},
		{B: make([]byte, 1001)},
		{M: map[uint8]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true}},
		{Str: "123456"},
		{SS: []string{"", "", ""}},
	} {
		_, err := Marshal(&v)
		requireFieldErr(t, err, ErrTooLong, "HugeMax.*")
		requireFieldErr(t, c.Encode(w, &v), ErrTooLong, "HugeMax.*")
		require.Equal(t, 3, w.Len())
	}
}

// ---- NaN, ±Inf and non-unit quaternions ----

type BadFloats struct {
	Q   float32    `net:"q,min=-10,max=10,prec=0.1"`
	QC  float64    `net:"q,min=-10,max=10,bits=12,clamp"`
	F   float64    `net:"fixed,prec=0.01"`
	F32 []float32  `net:"fixed,prec=0.5"`
	R   [4]float32 `net:"quat"`
	S   Quat4      `net:"quat,bits=11"`
	Raw float64
}

func goodFloats() BadFloats {
	return BadFloats{Q: 1, QC: 2, F: 3, F32: []float32{1, 2, 3}, R: [4]float32{0, 0, 0, 1}, S: Quat4{W: 1}, Raw: math.NaN()}
}

func TestInvalidValues(t *testing.T) {
	c := MustFor[BadFloats]()
	v := goodFloats()
	_, err := Marshal(&v)
	require.NoError(t, err, "a NaN in a raw float is a value like any other")

	nan, inf := math.NaN(), math.Inf(1)
	for _, x := range []float64{nan, inf, -inf} {
		cases := []struct {
			path string
			set  func(v *BadFloats)
		}{
			{"BadFloats.Q", func(v *BadFloats) { v.Q = float32(x) }},
			{"BadFloats.QC", func(v *BadFloats) { v.QC = x }}, // clamp does not apply to NaN and ±Inf
			{"BadFloats.F", func(v *BadFloats) { v.F = x }},
			{"BadFloats.F32[1]", func(v *BadFloats) { v.F32[1] = float32(x) }},
			{"BadFloats.R", func(v *BadFloats) { v.R[2] = float32(x) }},
			{"BadFloats.S", func(v *BadFloats) { v.S.X = x }},
		}
		for _, cs := range cases {
			v := goodFloats()
			cs.set(&v)
			checkBadValue(t, c, &v, ErrInvalidValue, cs.path)
		}
	}
	// quaternions that are not of unit length
	for _, q := range [][4]float32{{0, 0, 0, 0}, {1, 1, 0, 0}, {0.5, 0.5, 0.5, 0.4}, {0, 0, 0, 1.01}, {0, 0, 0, -2}} {
		v := goodFloats()
		v.R = q
		checkBadValue(t, c, &v, ErrInvalidValue, "BadFloats.R")
		v = goodFloats()
		v.S = Quat4{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
		checkBadValue(t, c, &v, ErrInvalidValue, "BadFloats.S")
	}
}

// checkBadValue asserts that every way of encoding v fails with sentinel at
// path, and writes nothing.
func checkBadValue[T any](t *testing.T, c *Codec[T], v *T, sentinel error, path string) {
	t.Helper()
	_, err := Marshal(v)
	requireFieldErr(t, err, sentinel, path)
	_, err = c.Marshal(v)
	requireFieldErr(t, err, sentinel, path)
	dst := []byte{1, 2, 3}
	out, err := c.Append(dst, v)
	requireFieldErr(t, err, sentinel, path)
	require.Equal(t, []byte{1, 2, 3}, out)
	w := bits.NewWriter(nil)
	w.WriteBits(3, 2)
	requireFieldErr(t, c.Encode(w, v), sentinel, path)
	require.Equal(t, 2, w.Len(), "Encode must leave the writer as it was")
	requireFieldErr(t, c.Quantize(v), sentinel, path)
	require.False(t, c.Equal(v, v))
}

// ---- out of range: ErrOutOfRange, or clamped with clamp ----

type OutOfRange struct {
	Q  float32 `net:"q,min=0,max=10,prec=0.1"`
	R  int     `net:"range,min=-5,max=5"`
	U  uint8   `net:"range,min=10,max=20"`
	B  int8    `net:"bits=4"`
	BU uint16  `net:"bits=3"`
	QB float64 `net:"q,min=-1,max=1,bits=8"`
	S  []int32 `net:"range,min=0,max=3"`
}

type Clamped struct {
	Q  float32 `net:"q,min=0,max=10,prec=0.1,clamp"`
	R  int     `net:"range,min=-5,max=5,clamp"`
	U  uint8   `net:"range,min=10,max=20,clamp"`
	B  int8    `net:"bits=4,clamp"`
	BU uint16  `net:"bits=3,clamp"`
	QB float64 `net:"q,min=-1,max=1,bits=8,clamp"`
	S  []int32 `net:"range,min=0,max=3,clamp"`
}

func TestOutOfRange(t *testing.T) {
	c := MustFor[OutOfRange]()
	ok := OutOfRange{Q: 5, R: 0, U: 15, B: 0, BU: 0, S: []int32{1, 2}}
	_, err := c.Marshal(&ok)
	require.NoError(t, err)
	cases := []struct {
		path string
		set  func(v *OutOfRange)
	}{
		{"OutOfRange.Q", func(v *OutOfRange) { v.Q = 10.01 }},
		{"OutOfRange.Q", func(v *OutOfRange) { v.Q = -0.01 }},
		{"OutOfRange.R", func(v *OutOfRange) { v.R = 6 }},
		{"OutOfRange.R", func(v *OutOfRange) { v.R = -6 }},
		{"OutOfRange.R", func(v *OutOfRange) { v.R = math.MinInt }},
		{"OutOfRange.U", func(v *OutOfRange) { v.U = 9 }},
		{"OutOfRange.U", func(v *OutOfRange) { v.U = 21 }},
		{"OutOfRange.B", func(v *OutOfRange) { v.B = 8 }},
		{"OutOfRange.B", func(v *OutOfRange) { v.B = -9 }},
		{"OutOfRange.BU", func(v *OutOfRange) { v.BU = 8 }},
		{"OutOfRange.QB", func(v *OutOfRange) { v.QB = 1.5 }},
		{"OutOfRange.S[1]", func(v *OutOfRange) { v.S[1] = 4 }},
	}
	for _, cs := range cases {
		v := ok
		v.S = []int32{1, 2}
		cs.set(&v)
		checkBadValue(t, c, &v, ErrOutOfRange, cs.path)
	}

	// With clamp, the same values clamp to the bound.
	cc := MustFor[Clamped]()
	for _, x := range []struct{ in, want Clamped }{
		{Clamped{Q: 10.01, R: 6, U: 9, B: 8, BU: 8, QB: 1.5, S: []int32{-1, 4}}, Clamped{Q: 10, R: 5, U: 10, B: 7, BU: 7, QB: 1, S: []int32{0, 3}}},
		{Clamped{Q: -1e30, R: math.MinInt, U: 255, B: -128, BU: 65535, QB: -1e300, S: []int32{math.MaxInt32}}, Clamped{Q: 0, R: -5, U: 20, B: -8, BU: 7, QB: -1, S: []int32{3}}},
		{Clamped{Q: float32(math.Inf(1)), QB: 0}, Clamped{}}, // not clamped: invalid
	} {
		in := x.in
		data, err := cc.Marshal(&in)
		if x.want.S == nil {
			requireFieldErr(t, err, ErrInvalidValue, "Clamped.Q")
			continue
		}
		require.NoError(t, err)
		var got Clamped
		require.NoError(t, cc.Unmarshal(data, &got))
		require.Equal(t, x.want, got)
		q := x.in
		q.S = append([]int32(nil), x.in.S...)
		require.NoError(t, cc.Quantize(&q))
		require.Equal(t, x.want, q)
		require.True(t, cc.Equal(&in, &got))
	}
}

// ---- trailing data ----

func TestTrailingData(t *testing.T) {
	v := Transform{X: 12.34, Y: -3.3, Z: 99.9, Yaw: 359.9, Pitch: 0.05} // 54 bits
	data, err := Marshal(&v)
	require.NoError(t, err)
	require.Len(t, data, 7)
	var got Transform
	require.NoError(t, Unmarshal(data, &got))
	for _, extra := range []byte{0, 1, 0xff} {
		fe := requireFieldErr(t, Unmarshal(append(append([]byte(nil), data...), extra), &got), ErrTrailingData, "Transform")
		require.Equal(t, 54, fe.Bit)
	}
	requireFieldErr(t, Unmarshal(append(append([]byte(nil), data...), 0, 0, 0), &got), ErrTrailingData, "Transform")
	// non-zero padding bits: bits 54 and 55 of the last byte
	for _, bit := range []uint{54, 55} {
		bad := append([]byte(nil), data...)
		bad[bit/8] |= 1 << (bit % 8)
		requireFieldErr(t, Unmarshal(bad, &got), ErrTrailingData, "Transform")
		requireFieldErr(t, MustFor[Transform]().Unmarshal(bad, &got), ErrTrailingData, "Transform")
	}
	// Decode on a shared reader reads one value and leaves the rest.
	r := bits.NewReader(append(append([]byte(nil), data...), 0xAB))
	require.NoError(t, MustFor[Transform]().Decode(r, &got))
	require.Equal(t, 64-54, r.Remaining())

	// a message that fills its last byte exactly, plus a zero byte
	ps := PlayerState{Health: 3}
	data, err = Marshal(&ps)
	require.NoError(t, err)
	require.Len(t, data, 9)
	requireFieldErr(t, Unmarshal(append(data, 0), &ps), ErrTrailingData, "PlayerState")
}

// ---- Unmarshal targets ----

func TestBadTargets(t *testing.T) {
	data, err := Marshal(&Transform{})
	require.NoError(t, err)
	require.Error(t, Unmarshal(data, nil))
	require.Error(t, Unmarshal(data, (*Transform)(nil)))
	require.Error(t, Unmarshal(data, Transform{}))
	var i int
	require.Error(t, Unmarshal(data, &i))
	pt := &Transform{}
	require.Error(t, Unmarshal(data, &pt)) // a pointer to a pointer
	require.ErrorIs(t, Unmarshal(data, Transform{}), ErrUnsupportedType)
	require.ErrorIs(t, Unmarshal(data, &i), ErrUnsupportedType)

	c := MustFor[Transform]()
	require.Error(t, c.Unmarshal(data, nil))
	require.Error(t, c.Decode(bits.NewReader(data), nil))
	_, err = Marshal(nil)
	require.Error(t, err)
	_, err = Marshal((*Transform)(nil))
	require.Error(t, err)
	_, err = Marshal(42)
	require.ErrorIs(t, err, ErrUnsupportedType)
	_, err = c.Marshal(nil)
	require.Error(t, err)
	dst, err := c.Append([]byte{9}, nil)
	require.Error(t, err)
	require.Equal(t, []byte{9}, dst)
	require.Error(t, c.Encode(bits.NewWriter(nil), nil))
	_, err = Append(nil, (*Transform)(nil))
	require.Error(t, err)
}

// ---- decoded values that do not fit the field ----

type Fit struct {
	I8 int8    `net:"bitlen"`
	S  []int16 `net:"bitlen"`
	U8 uint8   `net:"varint"`
	Q  float32 `net:"q,min=0,max=10,prec=0.1"` // 100 steps: 7 bits
	R  uint8   `net:"range,min=0,max=200"`     // 8 bits
}

func TestDecodedValueDoesNotFit(t *testing.T) {
	// A valid message to start from, field by field.
	type part = func(w *bits.Writer)
	i8 := func(w *bits.Writer) { w.WriteBool(false); w.WriteBits(0, 3); w.WriteBits(0, 1) } // sign flag, 0
	s := func(w *bits.Writer) { fields.WriteLen(w, 0, 0) }
	u8 := func(w *bits.Writer) { fields.WriteVarint(w, 0, 7) }
	q := func(w *bits.Writer) { w.WriteBits(0, 7) }
	r := func(w *bits.Writer) { w.WriteBits(0, 8) }
	msg := func(parts ...part) []byte {
		return craft(func(w *bits.Writer) {
			for _, p := range parts {
				p(w)
			}
		})
	}
	var v Fit
	require.NoError(t, Unmarshal(msg(i8, s, u8, q, r), &v))

	// int8 bitlen: prefix 7, then seven 1 bits: 255
	bigI8 := func(w *bits.Writer) { w.WriteBool(false); w.WriteBits(7, 3); w.WriteBits(0x7f, 7) }
	requireFieldErr(t, Unmarshal(msg(bigI8, s, u8, q, r), &v), ErrOutOfRange, "Fit.I8")
	// -128 fits, -129 does not
	minI8 := func(mag uint64) part {
		return func(w *bits.Writer) { w.WriteBool(true); w.WriteBool(true); fields.WriteBitlen(w, mag, 3) }
	}
	require.NoError(t, Unmarshal(msg(minI8(128), s, u8, q, r), &v))
	require.Equal(t, int8(-128), v.I8)
	requireFieldErr(t, Unmarshal(msg(minI8(129), s, u8, q, r), &v), ErrOutOfRange, "Fit.I8")
	// negative zero
	requireFieldErr(t, Unmarshal(msg(minI8(0), s, u8, q, r), &v), ErrMalformed, "Fit.I8")

	// int16 slice in the shared-length mode: 16-bit magnitudes
	bigS := func(w *bits.Writer) {
		fields.WriteLen(w, 2, 0)
		w.WriteBool(true)  // shared mode
		w.WriteBits(15, 4) // highest bit 15
		w.WriteBits(1, 16) // 1
		w.WriteBits(40000, 16)
	}
	requireFieldErr(t, Unmarshal(msg(i8, bigS, u8, q, r), &v), ErrOutOfRange, "Fit.S[1]")

	// uint8 varint of 256
	bigU8 := func(w *bits.Writer) { fields.WriteVarint(w, 256, 7) }
	requireFieldErr(t, Unmarshal(msg(i8, s, bigU8, q, r), &v), ErrOutOfRange, "Fit.U8")

	// q index above the steps, range offset above the span
	bigQ := func(w *bits.Writer) { w.WriteBits(101, 7) }
	requireFieldErr(t, Unmarshal(msg(i8, s, u8, bigQ, r), &v), ErrOutOfRange, "Fit.Q")
	bigR := func(w *bits.Writer) { w.WriteBits(201, 8) }
	requireFieldErr(t, Unmarshal(msg(i8, s, u8, q, bigR), &v), ErrOutOfRange, "Fit.R")
}

type BadTime struct {
	N uint8 `net:"bits=2"`
	T []TimeHolder
}
type TimeHolder struct{ At time.Time }

type BadMapKeys struct{ M map[uint8]bool }

type BadQuat struct {
	Q [4]float32 `net:"quat,bits=4"`
}

func TestDecodedMalformed(t *testing.T) {
	// nanoseconds of a time.Time over 10^9
	data := craft(func(w *bits.Writer) {
		w.WriteBits(0, 2)
		fields.WriteLen(w, 1, 0)
		fields.WriteBitlen(w, 0, 6)
		w.WriteBits(1e9, 30)
	})
	var bt BadTime
	requireFieldErr(t, Unmarshal(data, &bt), ErrOutOfRange, "BadTime.T[0].At")

	// a duplicated map key
	data = craft(func(w *bits.Writer) {
		fields.WriteLen(w, 2, 0)
		fields.WriteBitlen(w, 5, 3)
		w.WriteBool(true)
		fields.WriteBitlen(w, 5, 3)
		w.WriteBool(false)
	})
	var bm BadMapKeys
	requireFieldErr(t, Unmarshal(data, &bm), ErrMalformed, "BadMapKeys.M{#1}")

	// smallest-three components whose squares sum over 1, and every other
	// 14-bit pattern: each decodes or fails cleanly
	c := MustFor[BadQuat]()
	bad := 0
	for u := uint64(0); u < 1<<14; u++ {
		var v BadQuat
		err := c.Unmarshal(craft(func(w *bits.Writer) { w.WriteBits(u, 14) }), &v)
		if err != nil {
			bad++
			sentinel := ErrMalformed
			if errors.Is(err, ErrInvalidValue) {
				sentinel = ErrInvalidValue
			}
			requireFieldErr(t, err, sentinel, "BadQuat.Q")
			continue
		}
		data, err := c.Marshal(&v)
		require.NoError(t, err)
		var again BadQuat
		require.NoError(t, c.Unmarshal(data, &again))
		require.Equal(t, v, again)
	}
	require.Positive(t, bad)
}

// ---- nesting depth and cycles ----

type DeepList struct {
	Next *DeepList
	V    uint8 `net:"bits=8"`
}

type CycleSlice struct {
	Kids []*CycleSlice
}

type CycleMap struct {
	M map[string]*CycleMap
}

func TestDepthLimit(t *testing.T) {
	// a chain of n nodes, crafted bit by bit
	chain := func(n int) []byte {
		return craft(func(w *bits.Writer) {
			for i := 0; i < n-1; i++ {
				w.WriteBool(true)
			}
			w.WriteBool(false)
			for i := 0; i < n; i++ {
				w.WriteBits(uint64(i), 8)
			}
		})
	}
	var v DeepList
	require.NoError(t, Unmarshal(chain(DefaultMaxDepth), &v))
	for _, n := range []int{DefaultMaxDepth + 1, 1000, 100000} {
		fe := requireFieldErr(t, Unmarshal(chain(n), &v), ErrMalformed, "DeepList.Next×*")
		require.Equal(t, fmt.Sprintf("DeepList.Next×%d", DefaultMaxDepth), fe.Path) // not 100 times .Next
	}
	// The input need not be well formed past the limit: presence bits alone.
	endless := bytes.Repeat([]byte{0xff}, 1<<16)
	requireFieldErr(t, Unmarshal(endless, &v), ErrMalformed, "DeepList.Next*")

	// Encoding: a list longer than the limit, and cycles, fail without a
	// stack overflow.
	var head *DeepList
	for i := 0; i < DefaultMaxDepth+1; i++ {
		head = &DeepList{Next: head}
	}
	_, err := Marshal(head)
	requireFieldErr(t, err, ErrInvalidValue, "DeepList.Next*")

	cyc := &DeepList{V: 1}
	cyc.Next = cyc
	_, err = Marshal(cyc)
	requireFieldErr(t, err, ErrInvalidValue, "DeepList.Next*")
	require.Error(t, MustFor[DeepList]().Quantize(cyc))
	require.False(t, MustFor[DeepList]().Equal(cyc, cyc))

	cs := &CycleSlice{}
	cs.Kids = []*CycleSlice{nil, cs}
	_, err = Marshal(cs)
	requireFieldErr(t, err, ErrInvalidValue, "CycleSlice.Kids[1]*")

	cm := &CycleMap{M: map[string]*CycleMap{}}
	cm.M["me"] = cm
	_, err = Marshal(cm)
	requireFieldErr(t, err, ErrInvalidValue, "CycleMap.M*")

	// the recursive tree shape: Kids nested past the limit
	deepTree := craft(func(w *bits.Writer) {
		w.WriteBool(false) // the sign flag, before the first signed value
		for i := 0; i < 2*DefaultMaxDepth; i++ {
			fields.WriteBitlen(w, 0, 4) // Val
			w.WriteBits(0, 3)           // Name: maxlen 4
			fields.WriteBitlen(w, 1, 5) // one kid
		}
		w.WriteBits(0, 64)
	})
	var tree RTTree
	requireFieldErr(t, Unmarshal(deepTree, &tree), ErrMalformed, "RTTree.Kids[0].Kids[0]*")
}

// ---- no input panics ----

// noPanic feeds random and mutated inputs to Unmarshal into T. Whatever
// decodes must encode again, and decode to the same encoding.
func noPanic[T any](t *testing.T, seeds ...*T) {
	t.Helper()
	c := MustFor[T]()
	rng := rand.New(rand.NewSource(1))
	var valid [][]byte
	for _, s := range seeds {
		data, err := c.Marshal(s)
		require.NoError(t, err)
		valid = append(valid, data)
	}
	try := func(data []byte) {
		var v T
		err := c.Unmarshal(data, &v)
		if err != nil {
			var fe *FieldError
			require.ErrorAs(t, err, &fe, "%v", err)
			return
		}
		again, err := c.Marshal(&v)
		require.NoError(t, err, "decoded from %x: %+v", data, v)
		var w T
		require.NoError(t, c.Unmarshal(again, &w), "from %x", data)
		again2, err := c.Marshal(&w)
		require.NoError(t, err)
		require.Equal(t, again, again2, "from %x", data)
	}
	for i := 0; i < 3000; i++ {
		b := make([]byte, rng.Intn(48))
		rng.Read(b)
		try(b)
	}
	for _, data := range valid {
		for i := 0; i < 2000; i++ {
			b := append([]byte(nil), data...)
			switch rng.Intn(4) {
			case 0:
				if len(b) > 0 {
					b[rng.Intn(len(b))] ^= 1 << uint(rng.Intn(8))
				}
			case 1:
				for k := rng.Intn(4); k >= 0 && len(b) > 0; k-- {
					b[rng.Intn(len(b))] = byte(rng.Intn(256))
				}
			case 2:
				b = b[:rng.Intn(len(b)+1)]
			case 3:
				b = append(b, byte(rng.Intn(256)))
			}
			try(b)
		}
	}
}

func TestNoInputPanics(t *testing.T) {
	noPanic(t, gen[RTScalars](1, nil), gen[RTScalars](2, nil))
	noPanic(t, gen(1, rtQuantPost), gen(2, rtQuantPost))
	noPanic(t, &RTFixed{A: 1.5, B: -2, C: [3]float64{1, 2, 3}, D: []float32{1, 0.25}}, &RTFixed{})
	noPanic(t, gen[RTVarint](1, nil), gen[RTVarint](2, nil))
	noPanic(t, &RTBitlen{A: -3, B: 4, G: []int32{1, 2, 3}, I: []uint64{5, 6}, L: []int8{-1}}, &RTBitlen{E: 7})
	noPanic(t, &RTQuat{A: [4]float32{0, 0, 0, 1}, B: Quat4{X: 1}, C: [4]float64{0, 1, 0, 0}, D: struct{ W, X, Y, Z float32 }{W: 1}})
	noPanic(t, &RTStrings{S: "hello", SM: "x", B: []byte{1, 2}, SS: []string{"a", "b"}})
	noPanic(t, &RTContainers{Items: []Item{{ID: 3, Tag: "x"}}, ByName: map[string]Item{"a": {}}, ByID: map[int16]Item{-1: {}}, Flags: map[bool]string{true: "t"}})
	noPanic(t, &RTPointers{P: new(int32), Items: []*Item{nil, {ID: 1}}}, &RTPointers{})
	noPanic(t, &RTGraph{Root: RTTree{Kids: []RTTree{{Val: 1}}}, List: &RTList{V: 1, Next: &RTList{}}})
	noPanic(t, &DeepList{Next: &DeepList{}})
	noPanic(t, &Fit{})
	noPanic(t, &BadTime{T: []TimeHolder{{}}})
}

// ---- fixed-point step counts beyond the float type's precision ----

type FixedBig struct {
	F float64 `net:"fixed,prec=1"`
	G float32 `net:"fixed,prec=1e30"`
}

type FixedCent struct {
	F float64 `net:"fixed,prec=0.01"`
	G float32 `net:"fixed,prec=0.3"`
}

func TestFixedDecodesOnlyWhatEncodes(t *testing.T) {
	msg := func(fNeg bool, fMag uint64, gMag uint64) []byte {
		return craft(func(w *bits.Writer) {
			w.WriteBool(fNeg) // the sign flag: set when F is negative
			if fNeg {
				w.WriteBool(true)
			}
			fields.WriteBitlen(w, fMag, 6)
			if fNeg {
				w.WriteBool(false)
			}
			fields.WriteBitlen(w, gMag, 6)
		})
	}
	var v FixedBig
	for _, mag := range []uint64{0, 1, 1 << 50, 1 << 52, 1<<53 - 1} {
		for _, neg := range []bool{false, true} {
			if mag == 0 && neg {
				continue
			}
			data := msg(neg, mag, 1)
			require.NoError(t, Unmarshal(data, &v), "%d", mag)
			again, err := Marshal(&v)
			require.NoError(t, err, "%d decoded as %v", mag, v.F)
			require.Equal(t, data, again)
		}
	}
	// Near 2^63 the decoded float64 rounds to 2^63, which no encoder
	// writes: the decoder refuses it rather than hand out a value that
	// Marshal then rejects.
	for _, mag := range []uint64{1<<53 + 1, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		requireFieldErr(t, Unmarshal(msg(false, mag, 0), &v), ErrOutOfRange, "FixedBig.F")
		requireFieldErr(t, Unmarshal(msg(true, mag, 0), &v), ErrOutOfRange, "FixedBig.F")
	}
	// A float32 that would overflow to +Inf, or that float32 cannot tell
	// from its neighbours.
	requireFieldErr(t, Unmarshal(msg(false, 0, 1<<40), &v), ErrOutOfRange, "FixedBig.G")
	requireFieldErr(t, Unmarshal(msg(false, 0, 1<<27+1), &v), ErrOutOfRange, "FixedBig.G")
	require.NoError(t, Unmarshal(msg(false, 0, 1), &v))

	// Whatever decodes encodes to the same bits, and whatever encodes
	// quantizes idempotently, far beyond the exact range of the floats.
	c := MustFor[FixedCent]()
	rng := rand.New(rand.NewSource(5))
	decoded, refused := 0, 0
	for i := 0; i < 20000; i++ {
		fMag, gMag := rng.Uint64()>>uint(rng.Intn(64)), rng.Uint64()>>uint(rng.Intn(64))
		data := craft(func(w *bits.Writer) {
			w.WriteBool(false)
			fields.WriteBitlen(w, fMag, 6)
			fields.WriteBitlen(w, gMag, 6)
		})
		var v FixedCent
		if err := c.Unmarshal(data, &v); err != nil {
			requireFieldErr(t, err, ErrOutOfRange, "FixedCent.*")
			refused++
			continue
		}
		decoded++
		again, err := c.Marshal(&v)
		require.NoError(t, err)
		require.Equal(t, data, again, "F %d steps, G %d steps: %+v", fMag, gMag, v)
	}
	require.Positive(t, refused)
	require.Positive(t, decoded)
	encoded := 0
	for i := 0; i < 20000; i++ {
		v := FixedCent{F: (rng.Float64() - 0.5) * math.Pow(10, float64(rng.Intn(18))), G: float32((rng.Float64() - 0.5) * math.Pow(10, float64(rng.Intn(12))))}
		data, err := c.Marshal(&v)
		if err != nil {
			requireFieldErr(t, err, ErrOutOfRange, "FixedCent.*")
			continue
		}
		encoded++
		q := v
		require.NoError(t, c.Quantize(&q))
		q2 := q
		require.NoError(t, c.Quantize(&q2))
		require.Equal(t, q, q2, "%+v", v)
		qdata, err := c.Marshal(&q)
		require.NoError(t, err)
		require.Equal(t, data, qdata, "%+v", v)
	}
	require.Greater(t, encoded, 10000)
}

// ---- slices of elements that encode to nothing ----

type ZeroBitElem struct {
	Pad [4096]byte `net:"-"`
}

type ZeroBitSlice struct{ S []ZeroBitElem }

type ZeroBitDeep struct {
	In struct{ M map[string][]ZeroBitElem }
}

type ZeroSizeSlice struct {
	S []struct{}
	A [][0]int
}

func TestZeroBitElements(t *testing.T) {
	// Three bytes claiming 2^16 elements of 4 KiB each would make the
	// decoder allocate 256 MiB: For refuses such a slice.
	_, err := For[ZeroBitSlice]()
	requireFieldErr(t, err, ErrUnsupportedType, "ZeroBitSlice.S")
	_, err = For[ZeroBitDeep]()
	requireFieldErr(t, err, ErrUnsupportedType, "ZeroBitDeep.In.M{}")
	var v ZeroBitSlice
	requireFieldErr(t, Unmarshal(lenInput(1<<16, 0), &v), ErrUnsupportedType, "ZeroBitSlice.S")

	// Elements of zero size cost nothing to allocate: allowed.
	c, err := For[ZeroSizeSlice]()
	require.NoError(t, err)
	var z ZeroSizeSlice
	data := craft(func(w *bits.Writer) {
		fields.WriteBitlen(w, 1000, 5)
		fields.WriteBitlen(w, 3, 5)
	})
	requireSmallAlloc(t, "zero-size elements", func() { require.NoError(t, c.Unmarshal(data, &z)) })
	require.Len(t, z.S, 1000)
	require.Len(t, z.A, 3)
}

// ---- NaN map keys ----

type FloatKeys struct {
	M map[float64]uint8
	N map[float32]bool
}

func TestNaNMapKeys(t *testing.T) {
	// NaN keys have no order, so their encoding would change from one
	// Marshal to the next; they are invalid values, encoding and decoding.
	c := MustFor[FloatKeys]()
	v := FloatKeys{M: map[float64]uint8{math.NaN(): 1, 1: 3, math.Inf(-1): 4}}
	checkBadValue(t, c, &v, ErrInvalidValue, "FloatKeys.M")
	v = FloatKeys{N: map[float32]bool{float32(math.NaN()): true}}
	checkBadValue(t, c, &v, ErrInvalidValue, "FloatKeys.N")

	good := FloatKeys{M: map[float64]uint8{math.Inf(1): 1, -1: 2, 0: 3}, N: map[float32]bool{-0.5: true}}
	data, err := c.Marshal(&good)
	require.NoError(t, err)
	var got FloatKeys
	require.NoError(t, c.Unmarshal(data, &got))
	require.Equal(t, good, got)

	nan := craft(func(w *bits.Writer) {
		fields.WriteLen(w, 2, 0)
		w.WriteBits(math.Float64bits(1), 64)
		fields.WriteBitlen(w, 0, 3)
		w.WriteBits(math.Float64bits(math.NaN()), 64)
		fields.WriteBitlen(w, 0, 3)
		fields.WriteLen(w, 0, 0)
	})
	requireFieldErr(t, c.Unmarshal(nan, &got), ErrInvalidValue, "FloatKeys.M{#1}")
	// +0 and -0 are one key: a message with both is malformed
	zeros := craft(func(w *bits.Writer) {
		fields.WriteLen(w, 2, 0)
		w.WriteBits(math.Float64bits(0), 64)
		fields.WriteBitlen(w, 1, 3)
		w.WriteBits(math.Float64bits(math.Copysign(0, -1)), 64)
		fields.WriteBitlen(w, 2, 3)
		fields.WriteLen(w, 0, 0)
	})
	requireFieldErr(t, c.Unmarshal(zeros, &got), ErrMalformed, "FloatKeys.M{#1}")
}
