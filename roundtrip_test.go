package bitwire

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"
	"unsafe"

	fuzz "github.com/google/gofuzz"
	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// Round trips over random values: for a dozen struct shapes, values made by
// gofuzz from fixed seeds (with custom funcs that keep quantized and ranged
// fields inside their ranges) must satisfy
//
//	Unmarshal(Marshal(v)) == Quantize(v)
//	Quantize(Quantize(v)) == Quantize(v)
//	Marshal(Quantize(v))  == Marshal(v), byte for byte
//	Codec.Equal(v, Quantize(v))
//
// and the shapes whose codings are lossless decode to v itself.

const rtCount = 300 // values per shape

// ---- value generation ----

// rtFuzzer is the gofuzz configuration of the round trips: small containers,
// some nil pointers, slices and maps, bounded depth for recursive types.
func rtFuzzer(seed int64, funcs ...any) *fuzz.Fuzzer {
	return fuzz.NewWithSeed(seed).NilChance(0.25).NumElements(0, 4).MaxDepth(10).Funcs(rtFuncs...).Funcs(funcs...)
}

// gen makes the value of seed: gofuzz fills it, then post (if any) moves the
// fields that have a range into it, with its own generator of the same seed.
// The same seed always gives an equal and independent value, which the
// tests use as deep copies (Quantize and Unmarshal reuse memory in place).
func gen[T any](seed int64, post func(*T, *rand.Rand), funcs ...any) *T {
	v := new(T)
	rtFuzzer(seed, funcs...).Fuzz(v)
	if post != nil {
		post(v, rand.New(rand.NewSource(seed^0x5eed)))
	}
	return v
}

// uni returns a float64 in [lo, hi], one of the bounds one time in ten each.
func uni(r *rand.Rand, lo, hi float64) float64 {
	switch r.Intn(10) {
	case 0:
		return lo
	case 1:
		return hi
	}
	return math.Min(hi, lo+r.Float64()*(hi-lo))
}

// uni32 is uni for a float32 field: the result, as a float32, stays in
// [lo, hi].
func uni32(r *rand.Rand, lo, hi float64) float32 {
	f := float32(uni(r, lo, hi))
	for float64(f) > hi {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	for float64(f) < lo {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// magnitude returns a random value whose bit length is uniform in 0..64, so
// small and large values are both common.
func magnitude(r *rand.Rand) uint64 { return r.Uint64() >> uint(r.Intn(65)) }

// smallInt returns a value of random bit length and sign that fits in size
// bits.
func smallInt(r *rand.Rand, size int, neg bool) int64 {
	m := int64(magnitude(r) >> uint(64-size+1))
	if neg && r.Intn(2) == 0 {
		m = -m
	}
	return m
}

// bitsInt returns an n-bit two's complement value (edges often).
func bitsInt(r *rand.Rand, n int) int64 {
	switch r.Intn(6) {
	case 0:
		return -1 << uint(n-1)
	case 1:
		return 1<<uint(n-1) - 1
	}
	u := r.Uint64() << uint(64-n)
	return int64(u) >> uint(64-n)
}

// bitsUint returns an n-bit unsigned value (edges often).
func bitsUint(r *rand.Rand, n int) uint64 {
	switch r.Intn(6) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64 >> uint(64-n)
	}
	return r.Uint64() >> uint(64-n)
}

// intIn returns a value in [lo, hi] (edges often).
func intIn(r *rand.Rand, lo, hi int64) int64 {
	switch r.Intn(6) {
	case 0:
		return lo
	case 1:
		return hi
	}
	span := uint64(hi) - uint64(lo)
	if span == math.MaxUint64 {
		return int64(r.Uint64())
	}
	return int64(uint64(lo) + r.Uint64()%(span+1))
}

// uintIn returns a value in [lo, hi] (edges often).
func uintIn(r *rand.Rand, lo, hi uint64) uint64 {
	switch r.Intn(6) {
	case 0:
		return lo
	case 1:
		return hi
	}
	if hi-lo == math.MaxUint64 {
		return r.Uint64()
	}
	return lo + r.Uint64()%(hi-lo+1)
}

// anyFloat64 returns random IEEE bits that are not NaN: infinities, zeros
// of both signs and subnormals included.
func anyFloat64(r *rand.Rand) float64 {
	switch r.Intn(8) {
	case 0:
		return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64}[r.Intn(6)]
	case 1:
		return r.NormFloat64()
	}
	for {
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) {
			return f
		}
	}
}

func anyFloat32(r *rand.Rand) float32 {
	switch r.Intn(8) {
	case 0:
		return []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, math.MaxFloat32}[r.Intn(6)]
	case 1:
		return float32(r.NormFloat64())
	}
	for {
		f := math.Float32frombits(r.Uint32())
		if f == f {
			return f
		}
	}
}

// unitQuat returns a random rotation, sometimes an axis-aligned one (where
// ties between components decide the dropped one).
func unitQuat(r *rand.Rand) [4]float64 {
	var q [4]float64
	if r.Intn(8) == 0 {
		q[r.Intn(4)] = []float64{1, -1}[r.Intn(2)]
		return q
	}
	var n float64
	for i := range q {
		q[i] = r.NormFloat64()
		n += q[i] * q[i]
	}
	n = math.Sqrt(n)
	for i := range q {
		q[i] /= n
	}
	return q
}

func truncString(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ---- shared leaf types and their gofuzz funcs ----

// Vec3 is the untagged vector a math package would have; the fields that
// hold one put a q tag on it.
type Vec3 struct{ X, Y, Z float32 }

// Vec3Own has one leaf with its own tag, which wins over the struct's.
type Vec3Own struct {
	X float32
	Y float32 `net:"q,min=0,max=10,prec=0.5"`
	Z float32
}

// Item is a typical element of slices and maps.
type Item struct {
	ID    uint16  `net:"bits=12"`
	Count int     `net:"range,min=0,max=99"`
	Tag   string  `net:"maxlen=8"`
	W     float32 `net:"q,min=0,max=10,prec=0.01"`
	On    bool
}

type Quat4 struct{ X, Y, Z, W float64 }
type Quat4f struct{ X, Y, Z, W float32 }

var rtFuncs = []any{
	func(v *Vec3, c fuzz.Continue) { // inside every range Vec3 is used with
		v.X, v.Y, v.Z = uni32(c.Rand, -10, 10), uni32(c.Rand, -10, 10), uni32(c.Rand, -10, 10)
	},
	func(v *Vec3Own, c fuzz.Continue) {
		v.X, v.Y, v.Z = uni32(c.Rand, -1, 1), uni32(c.Rand, 0, 10), uni32(c.Rand, -1, 1)
	},
	func(v *Item, c fuzz.Continue) {
		v.ID = uint16(c.Intn(4096))
		v.Count = c.Intn(100)
		v.Tag = truncString(c.RandString(), 8)
		v.W = uni32(c.Rand, 0, 10)
		v.On = c.RandBool()
	},
	func(v *Quat4, c fuzz.Continue) {
		q := unitQuat(c.Rand)
		*v = Quat4{q[0], q[1], q[2], q[3]}
	},
	func(v *Quat4f, c fuzz.Continue) {
		q := unitQuat(c.Rand)
		*v = Quat4f{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
	},
}

// ---- comparison helpers ----

// nilEmpty sets every empty slice and map reachable from the addressable
// value v to nil, unexported fields included: the decoder writes empty
// containers as nil.
func nilEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			nilEmpty(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			nilEmpty(reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem())
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			nilEmpty(v.Index(i))
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.SetZero()
			return
		}
		for i := 0; i < v.Len(); i++ {
			nilEmpty(v.Index(i))
		}
	case reflect.Map:
		if v.Len() == 0 {
			v.SetZero()
			return
		}
		it := v.MapRange()
		for it.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			nilEmpty(e)
			v.SetMapIndex(it.Key(), e)
		}
	}
}

func normalized[T any](v *T) *T {
	nilEmpty(reflect.ValueOf(v).Elem())
	return v
}

func near(t *testing.T, want, got, tol float64, msg string, args ...any) {
	t.Helper()
	if !(math.Abs(want-got) <= tol) {
		t.Fatalf("%s: got %v, want %v ± %v (off by %v)", fmt.Sprintf(msg, args...), got, want, tol, math.Abs(want-got))
	}
}

// ---- the property ----

type rtOptions[T any] struct {
	post   func(*T, *rand.Rand) // moves generated values into range
	ignore func(*T)             // zeroes the fields the codec does not code
	check  func(t *testing.T, in, got *T)
	funcs  []any
	count  int
}

// roundTrip checks the round-trip properties on count values of T.
func roundTrip[T any](t *testing.T, o rtOptions[T]) {
	t.Helper()
	c, err := For[T]()
	require.NoError(t, err)
	n := o.count
	if n == 0 {
		n = rtCount
		if testing.Short() {
			n = rtCount / 6 // the race run of .ci/run
		}
	}
	mk := func(seed int64) *T {
		v := gen(seed, o.post, o.funcs...)
		return v
	}
	ign := func(v *T) *T {
		if o.ignore != nil {
			o.ignore(v)
		}
		return v
	}
	maxBits := c.MaxBits()
	for i := 0; i < n; i++ {
		seed := int64(i)
		v := mk(seed)

		data, err := Marshal(v)
		require.NoError(t, err, "seed %d: Marshal(%+v)", seed, v)
		require.Equal(t, mk(seed), v, "seed %d: Marshal modified its input", seed)
		if maxBits >= 0 {
			require.LessOrEqual(t, len(data), (maxBits+7)/8, "seed %d: longer than MaxBits %d", seed, maxBits)
		}
		// Every way of encoding gives the same bytes.
		cdata, err := c.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, data, cdata, "seed %d: Codec.Marshal", seed)
		vdata, err := Marshal(*v)
		require.NoError(t, err)
		require.Equal(t, data, vdata, "seed %d: Marshal of a struct value", seed)
		adata, err := c.Append([]byte{0xA5}, v)
		require.NoError(t, err)
		require.Equal(t, append([]byte{0xA5}, data...), adata, "seed %d: Codec.Append", seed)

		// Unmarshal(Marshal(v)) == Quantize(v)
		var got T
		require.NoError(t, Unmarshal(data, &got), "seed %d", seed)
		q := mk(seed)
		require.NoError(t, c.Quantize(q), "seed %d", seed)
		require.Equal(t, ign(q), ign(&got), "seed %d: Unmarshal(Marshal(v)) != Quantize(v)", seed)

		// Codec.Unmarshal into a value full of other data gives the same.
		reused := mk(seed + 1<<32)
		require.NoError(t, c.Unmarshal(data, reused), "seed %d", seed)
		require.Equal(t, q, ign(reused), "seed %d: Unmarshal into a used value", seed)

		// Quantize is idempotent.
		q2 := mk(seed)
		require.NoError(t, c.Quantize(q2))
		require.NoError(t, c.Quantize(q2))
		require.Equal(t, q, ign(q2), "seed %d: Quantize is not idempotent", seed)

		// Marshal(Quantize(v)) == Marshal(v)
		qdata, err := c.Marshal(q)
		require.NoError(t, err)
		require.Equal(t, data, qdata, "seed %d: Marshal(Quantize(v)) != Marshal(v)", seed)

		// Equal after quantization.
		require.True(t, c.Equal(v, q), "seed %d: Equal(v, Quantize(v))", seed)
		require.True(t, c.Equal(q, &got), "seed %d: Equal(Quantize(v), decoded)", seed)

		// Delta encoding against a baseline has the same property.
		deltaProperty(t, c, seed, mk, ign)

		if o.check != nil {
			decoded := new(T)
			require.NoError(t, Unmarshal(data, decoded))
			o.check(t, mk(seed), decoded)
		}
	}
}

// lossless is a check for shapes whose codings lose nothing: the decoded
// value is the input, with empty containers as nil.
func lossless[T any](t *testing.T, in, got *T) {
	t.Helper()
	require.Equal(t, normalized(in), got)
}

// ---- 1. flat scalars with default codings ----

type RTScalars struct {
	I    int
	I8   int8
	I16  int16
	I32  int32
	I64  int64
	U    uint
	U8   uint8
	U16  uint16
	U32  uint32
	U64  uint64
	Uptr uintptr
	F32  float32
	F64  float64
	B    bool
	C    bool
}

func TestRoundTripScalars(t *testing.T) {
	roundTrip(t, rtOptions[RTScalars]{
		post: func(v *RTScalars, r *rand.Rand) {
			neg := r.Intn(2) == 0 // half the messages have no negative value: no sign bits
			if r.Intn(2) == 0 {
				v.I, v.I8, v.I16 = int(smallInt(r, 64, neg)), int8(smallInt(r, 8, neg)), int16(smallInt(r, 16, neg))
				v.I32, v.I64 = int32(smallInt(r, 32, neg)), smallInt(r, 64, neg)
				v.U, v.U8, v.U16, v.U32 = uint(magnitude(r)), uint8(magnitude(r)>>56), uint16(magnitude(r)>>48), uint32(magnitude(r)>>32)
				v.U64, v.Uptr = magnitude(r), uintptr(magnitude(r))
			} else if !neg {
				v.I, v.I8, v.I16, v.I32, v.I64 = abs(v.I), abs(v.I8), abs(v.I16), abs(v.I32), abs(v.I64)
			}
			if r.Intn(10) == 0 {
				v.I64, v.I8 = math.MinInt64, math.MinInt8
			}
			v.F32, v.F64 = anyFloat32(r), anyFloat64(r)
		},
		check: lossless[RTScalars],
	})
}

func abs[T int | int8 | int16 | int32 | int64](v T) T {
	if v < 0 {
		v = -v // the most negative value stays negative
	}
	if v < 0 {
		v = 0
	}
	return v
}

// ---- 2. bits=N, signed and unsigned ----

type RTBits struct {
	A int8   `net:"bits=3"`
	B int16  `net:"bits=11"`
	C int32  `net:"bits=17"`
	D int64  `net:"bits=40"`
	E int64  `net:"bits=64"`
	F int    `net:"bits=1"`
	G uint8  `net:"bits=8"`
	H uint16 `net:"bits=5"`
	I uint32 `net:"bits=32"`
	J uint64 `net:"bits=64"`
	K uint64 `net:"bits=63"`
	L uint   `net:"bits=20"`
	M uint8  `net:"bits=1"`
}

func TestRoundTripBits(t *testing.T) {
	c := MustFor[RTBits]()
	require.Equal(t, 3+11+17+40+64+1+8+5+32+64+63+20+1, c.MaxBits())
	roundTrip(t, rtOptions[RTBits]{
		post: func(v *RTBits, r *rand.Rand) {
			v.A, v.B, v.C, v.D, v.E, v.F = int8(bitsInt(r, 3)), int16(bitsInt(r, 11)), int32(bitsInt(r, 17)), bitsInt(r, 40), bitsInt(r, 64), int(bitsInt(r, 1))
			v.G, v.H, v.I, v.J, v.K, v.L, v.M = uint8(bitsUint(r, 8)), uint16(bitsUint(r, 5)), uint32(bitsUint(r, 32)), bitsUint(r, 64), bitsUint(r, 63), uint(bitsUint(r, 20)), uint8(bitsUint(r, 1))
		},
		check: func(t *testing.T, in, got *RTBits) {
			lossless(t, in, got)
			data, err := c.Marshal(in)
			require.NoError(t, err)
			require.Len(t, data, (c.MaxBits()+7)/8) // fixed size
		},
	})
}

// ---- 3. range, signed and unsigned, up to 64 bits ----

type RTRange struct {
	A int8   `net:"range,min=-100,max=100"`
	B int    `net:"range,min=-5,max=1000"`
	C int64  `net:"range,min=-9223372036854775808,max=9223372036854775807"`
	D int32  `net:"range,min=1000000,max=1000001"`
	E uint16 `net:"range,min=100,max=200"`
	F uint64 `net:"range,min=0,max=18446744073709551615"`
	G uint64 `net:"range,min=18446744073709551000,max=18446744073709551615"`
	H uint8  `net:"range,min=0,max=255"`
	I uint32 `net:"range,min=7,max=4000000000"`
	J int16  `net:"range,min=-32768,max=-32000"`
	K uint64 `net:"range,min=0x10,max=0x1f"`
}

func TestRoundTripRange(t *testing.T) {
	c := MustFor[RTRange]()
	require.Equal(t, 8+10+64+1+7+64+10+8+32+10+4, c.MaxBits())
	roundTrip(t, rtOptions[RTRange]{
		post: func(v *RTRange, r *rand.Rand) {
			v.A, v.B, v.C, v.D = int8(intIn(r, -100, 100)), int(intIn(r, -5, 1000)), intIn(r, math.MinInt64, math.MaxInt64), int32(intIn(r, 1000000, 1000001))
			v.E, v.F, v.G, v.H = uint16(uintIn(r, 100, 200)), uintIn(r, 0, math.MaxUint64), uintIn(r, 18446744073709551000, math.MaxUint64), uint8(uintIn(r, 0, 255))
			v.I, v.J, v.K = uint32(uintIn(r, 7, 4000000000)), int16(intIn(r, -32768, -32000)), uintIn(r, 16, 31)
		},
		check: lossless[RTRange],
	})
}

// ---- 4. quantized floats: prec and bits, float32 and float64 ----

type RTQuant struct {
	A float32 `net:"q,min=-100,max=100,prec=0.01"`
	B float32 `net:"q,min=0,max=1,bits=8"`
	C float64 `net:"q,min=-1000,max=1000,prec=0.0001"`
	D float64 `net:"q,min=-1,max=1,bits=32"`
	E float32 `net:"q,min=0,max=360,bits=10"`
	F float64 `net:"q,min=-5,max=5,prec=0.3"`
	G float32 `net:"q,min=-512,max=512,prec=0.01,clamp"`
	H float64 `net:"q,min=1e6,max=2e6,prec=1"`
}

func rtQuantPost(v *RTQuant, r *rand.Rand) {
	v.A, v.B, v.C, v.D = uni32(r, -100, 100), uni32(r, 0, 1), uni(r, -1000, 1000), uni(r, -1, 1)
	v.E, v.F, v.G, v.H = uni32(r, 0, 360), uni(r, -5, 5), uni32(r, -512, 512), uni(r, 1e6, 2e6)
}

func TestRoundTripQuantized(t *testing.T) {
	c := MustFor[RTQuant]()
	// steps: 20000, 255, 20000000, 2^32-1, 1023, ceil(10/0.3)=34, 102400, 1000000
	require.Equal(t, 15+8+25+32+10+6+17+20, c.MaxBits())
	f32 := func(v float32) float64 { return float64(v) }
	roundTrip(t, rtOptions[RTQuant]{
		post: rtQuantPost,
		check: func(t *testing.T, in, got *RTQuant) {
			// prec tags: within prec/2 (plus the float32 rounding of the
			// stored value); bits tags: within half a step.
			near(t, f32(in.A), f32(got.A), 0.01/2+1e-5, "A")
			near(t, f32(in.B), f32(got.B), 1.0/255/2+1e-7, "B")
			near(t, in.C, got.C, 0.0001/2, "C")
			near(t, in.D, got.D, 2/float64(1<<32-1)/2, "D")
			near(t, f32(in.E), f32(got.E), 360.0/1023/2+1e-4, "E")
			near(t, in.F, got.F, 0.3/2, "F")
			near(t, f32(in.G), f32(got.G), 0.01/2+1e-4, "G")
			near(t, in.H, got.H, 0.5, "H")
		},
	})
}

// ---- 5. fixed-point decimals, alone and in arrays and slices ----

type RTFixed struct {
	A float32    `net:"fixed,prec=0.01"`
	B float64    `net:"fixed,prec=0.001"`
	C [3]float64 `net:"fixed,prec=0.5"`
	D []float32  `net:"fixed,prec=0.25"`
	E float64    `net:"fixed,prec=1e-9"`
}

func TestRoundTripFixed(t *testing.T) {
	roundTrip(t, rtOptions[RTFixed]{
		post: func(v *RTFixed, r *rand.Rand) {
			// Magnitudes are kept where the float type holds the step:
			// beyond that, fixed on a float32 cannot be idempotent.
			sign := 1.0
			if r.Intn(2) == 0 {
				sign = 0 // no negative value: the message has no sign bits
			}
			lo := func(x float64) float64 { return -sign * x }
			v.A = uni32(r, lo(1e4), 1e4)
			v.B = uni(r, lo(1e9), 1e9)
			for i := range v.C {
				v.C[i] = uni(r, lo(1e6), 1e6) * float64(r.Intn(2)) // zeros too
			}
			for i := range v.D {
				v.D[i] = uni32(r, lo(100), 1e5)
			}
			v.E = uni(r, lo(1e3), 1e3)
		},
		check: func(t *testing.T, in, got *RTFixed) {
			near(t, float64(in.A), float64(got.A), 0.01/2+1e-3, "A")
			near(t, in.B, got.B, 0.001/2+1e-6, "B")
			for i := range in.C {
				near(t, in.C[i], got.C[i], 0.5/2, "C[%d]", i)
			}
			require.Len(t, got.D, len(in.D))
			for i := range in.D {
				near(t, float64(in.D[i]), float64(got.D[i]), 0.25/2+0.01, "D[%d]", i)
			}
			near(t, in.E, got.E, 1e-9/2+1e-12, "E")
		},
	})
}

// ---- 6. varints with several group sizes ----

type RTVarint struct {
	A int32     `net:"varint"`
	B int64     `net:"varint,group=3"`
	C uint16    `net:"varint,group=4"`
	D uint64    `net:"varint,group=64"`
	E int8      `net:"varint,group=1"`
	F uint      `net:"varint,group=11"`
	G []int64   `net:"varint,group=6"`
	H [2]uint32 `net:"varint,group=9"`
	I int64     `net:"varint,group=63"`
}

func TestRoundTripVarint(t *testing.T) {
	roundTrip(t, rtOptions[RTVarint]{
		post: func(v *RTVarint, r *rand.Rand) {
			if r.Intn(2) == 0 {
				v.A, v.B, v.C = int32(smallInt(r, 32, true)), smallInt(r, 64, true), uint16(magnitude(r)>>48)
				v.D, v.E, v.F = magnitude(r), int8(smallInt(r, 8, true)), uint(magnitude(r))
				for i := range v.G {
					v.G[i] = smallInt(r, 64, true)
				}
				v.I = smallInt(r, 64, true)
			}
		},
		check: lossless[RTVarint],
	})
}

// ---- 7. bitlen: groups, slices, arrays, the sign flag ----

type RTBitlen struct {
	A int64    `net:"bitlen"`
	B int32    `net:"bitlen,group=a"`
	C int16    `net:"bitlen,group=a"`
	D uint8    `net:"bitlen,group=a"`
	E uint64   `net:"bitlen,group=b"`
	F uint64   `net:"bitlen,group=b"`
	G []int32  `net:"bitlen"`
	H [4]int16 `net:"bitlen"`
	I []uint64 `net:"bitlen"`
	J int
	K uint32
	L []int8 `net:"bitlen"`
}

func TestRoundTripBitlen(t *testing.T) {
	roundTrip(t, rtOptions[RTBitlen]{
		post: func(v *RTBitlen, r *rand.Rand) {
			neg := r.Intn(2) == 0
			// similar magnitudes make the shared length win
			bits := r.Intn(64)
			sim := func(size int) int64 {
				m := int64(r.Uint64() >> uint(64-min(bits, size-1)))
				if neg && r.Intn(3) == 0 {
					m = -m
				}
				return m
			}
			pick := func(size int) int64 {
				if r.Intn(2) == 0 {
					return sim(size)
				}
				return smallInt(r, size, neg)
			}
			v.A, v.B, v.C, v.D = pick(64), int32(pick(32)), int16(pick(16)), uint8(pick(9))
			v.E, v.F = uint64(pick(64))&math.MaxInt64, magnitude(r)
			for i := range v.G {
				v.G[i] = int32(pick(32))
			}
			for i := range v.H {
				v.H[i] = int16(pick(16))
			}
			for i := range v.I {
				v.I[i] = uint64(pick(64)) &^ (1 << 63)
			}
			v.J, v.K = int(pick(64)), uint32(magnitude(r)>>32)
			for i := range v.L {
				v.L[i] = int8(pick(8))
			}
			if r.Intn(10) == 0 {
				v.A, v.C = math.MinInt64, math.MinInt16
				if !neg {
					v.A, v.C = math.MaxInt64, math.MaxInt16
				}
			}
		},
		check: lossless[RTBitlen],
	})
}

// ---- 8. quaternions: [4]float32 and struct{X,Y,Z,W}, several widths ----

type RTQuat struct {
	A [4]float32                   `net:"quat"`
	B Quat4                        `net:"quat,bits=12"`
	C [4]float64                   `net:"quat,bits=20"`
	D struct{ W, X, Y, Z float32 } `net:"quat,bits=5"`
	E []Quat4f                     `net:"quat,bits=7"`
}

func quatOf[F float32 | float64](a [4]F) [4]float64 {
	return [4]float64{float64(a[0]), float64(a[1]), float64(a[2]), float64(a[3])}
}

func TestRoundTripQuat(t *testing.T) {
	c := MustFor[RTQuat]()
	require.Equal(t, (2+3*9)+(2+3*12)+(2+3*20)+(2+3*5), MustFor[struct {
		A [4]float32 `net:"quat"`
		B Quat4      `net:"quat,bits=12"`
		C [4]float64 `net:"quat,bits=20"`
		D Quat4      `net:"quat,bits=5"`
	}]().MaxBits())
	require.Equal(t, -1, c.MaxBits())
	// The decoded rotation is within a few steps of the input: each of the
	// three coded components is off by at most half a step (or one and a
	// half, when the encoder nudges one to keep the dropped component the
	// largest), and the angle is about twice the distance of the unit
	// quaternions. Four steps, in radians, bounds it.
	tol := func(n int) float64 { return 4 * (math.Sqrt2 / float64(uint64(1)<<n-1)) * 180 / math.Pi }
	unit := func(t *testing.T, q [4]float64, what string) {
		n := q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3]
		near(t, 1, n, 1e-6, "%s norm²", what)
	}
	worst := map[string]float64{}
	roundTrip(t, rtOptions[RTQuat]{
		post: func(v *RTQuat, r *rand.Rand) {
			q := unitQuat(r)
			v.A = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
			v.C = unitQuat(r)
			q = unitQuat(r)
			v.D.X, v.D.Y, v.D.Z, v.D.W = float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])
		},
		check: func(t *testing.T, in, got *RTQuat) {
			for _, x := range []struct {
				name  string
				n     int
				in, g [4]float64
			}{
				{"A", 9, quatOf(in.A), quatOf(got.A)},
				{"B", 12, [4]float64{in.B.X, in.B.Y, in.B.Z, in.B.W}, [4]float64{got.B.X, got.B.Y, got.B.Z, got.B.W}},
				{"C", 20, in.C, got.C},
				{"D", 5, quatOf([4]float32{in.D.X, in.D.Y, in.D.Z, in.D.W}), quatOf([4]float32{got.D.X, got.D.Y, got.D.Z, got.D.W})},
			} {
				unit(t, x.g, x.name)
				a := angleDeg(x.in, x.g)
				require.LessOrEqual(t, a, tol(x.n), "%s: %v decoded as %v", x.name, x.in, x.g)
				worst[x.name] = math.Max(worst[x.name], a)
				// the dropped component is positive
				m := 0
				for i := range x.g {
					if math.Abs(x.g[i]) > math.Abs(x.g[m]) {
						m = i
					}
				}
				require.Greater(t, x.g[m], 0.0, x.name)
			}
			require.Len(t, got.E, len(in.E))
			for i, e := range in.E {
				g := got.E[i]
				gq := quatOf([4]float32{g.X, g.Y, g.Z, g.W})
				unit(t, gq, "E")
				require.LessOrEqual(t, angleDeg(quatOf([4]float32{e.X, e.Y, e.Z, e.W}), gq), tol(7))
			}
		},
	})
	require.Less(t, worst["A"], 0.5)
	t.Logf("worst angles (degrees): %v", worst)
}

// ---- 9. strings, bytes and time ----

type RTStrings struct {
	S    string
	SM   string `net:"maxlen=10"`
	B    []byte
	BM   []byte `net:"maxlen=16"`
	Long string
	SS   []string `net:"maxlen=5"`
	T    time.Time
	TS   []time.Time
	BS   [][]byte
}

func TestRoundTripStrings(t *testing.T) {
	roundTrip(t, rtOptions[RTStrings]{
		post: func(v *RTStrings, r *rand.Rand) {
			v.SM = truncString(v.SM, 10)
			if len(v.BM) > 16 {
				v.BM = v.BM[:16]
			}
			if len(v.SS) > 5 {
				v.SS = v.SS[:5]
			}
			// long strings take the allocating path of the decoder
			n := []int{0, 1, 63, 64, 65, 200, 1000}[r.Intn(7)]
			b := make([]byte, n)
			r.Read(b)
			v.Long = string(b)
			if r.Intn(3) == 0 {
				v.T = time.Unix(r.Int63()-r.Int63(), int64(r.Intn(1e9)))
			}
		},
		check: func(t *testing.T, in, got *RTStrings) {
			in.T = in.T.UTC()
			for i := range in.TS {
				in.TS[i] = in.TS[i].UTC()
			}
			lossless(t, in, got)
		},
	})
}

// ---- 10. nested structs, tags on struct fields, arrays of structs ----

type Body struct {
	Pos   Vec3    `net:"q,min=-1000,max=1000,prec=0.01"`
	Vel   Vec3    `net:"q,min=-50,max=50,bits=12"`
	Raw   Vec3    // untagged: raw floats
	Mixed Vec3Own `net:"q,min=-1,max=1,prec=0.01"`
	Mass  uint16  `net:"range,min=1,max=500"`
}

type RTNested struct {
	Name  string `net:"maxlen=16"`
	Body  Body
	Parts [3]Body
	Pts   [4]Vec3 `net:"q,min=-10,max=10,prec=0.1"`
	Inner struct {
		Deep struct {
			Flag bool
			N    int8 `net:"bits=5"`
		}
		Level uint8 `net:"range,min=1,max=99"`
	}
}

func rtBody(b *Body, r *rand.Rand) {
	b.Pos = Vec3{uni32(r, -1000, 1000), uni32(r, -1000, 1000), uni32(r, -1000, 1000)}
	b.Vel = Vec3{uni32(r, -50, 50), uni32(r, -50, 50), uni32(r, -50, 50)}
	b.Raw = Vec3{anyFloat32(r), anyFloat32(r), anyFloat32(r)}
	b.Mass = uint16(uintIn(r, 1, 500))
}

func TestRoundTripNested(t *testing.T) {
	c := MustFor[RTNested]()
	layout := c.Layout()
	// the struct field's tag reaches its untagged leaves; a leaf's own tag wins
	require.Regexp(t, `RTNested\.Body\.Pos\.X\s+q\s+18\s+min=-1000 max=1000`, layout)
	require.Regexp(t, `RTNested\.Body\.Vel\.Z\s+q\s+12\s`, layout)
	require.Regexp(t, `RTNested\.Body\.Raw\.Y\s+float\s+32\s`, layout)
	require.Regexp(t, `RTNested\.Body\.Mixed\.X\s+q\s+8\s+min=-1 max=1 `, layout)
	require.Regexp(t, `RTNested\.Body\.Mixed\.Y\s+q\s+5\s+min=0 max=10 `, layout)
	require.Regexp(t, `RTNested\.Pts\[\]\.Z\s+q\s+8\s`, layout)
	body := 3*18 + 3*12 + 3*32 + 8 + 5 + 8 + 9
	require.Equal(t, 5+8*16+4*body+4*3*8+1+5+7, c.MaxBits())

	roundTrip(t, rtOptions[RTNested]{
		post: func(v *RTNested, r *rand.Rand) {
			v.Name = truncString(v.Name, 16)
			rtBody(&v.Body, r)
			for i := range v.Parts {
				rtBody(&v.Parts[i], r)
			}
			v.Inner.Deep.N = int8(bitsInt(r, 5))
			v.Inner.Level = uint8(uintIn(r, 1, 99))
		},
		check: func(t *testing.T, in, got *RTNested) {
			for i, b := range append([]Body{in.Body}, in.Parts[:]...) {
				g := got.Body
				if i > 0 {
					g = got.Parts[i-1]
				}
				for k, pair := range [][2]float32{{b.Pos.X, g.Pos.X}, {b.Pos.Y, g.Pos.Y}, {b.Pos.Z, g.Pos.Z}} {
					near(t, float64(pair[0]), float64(pair[1]), 0.01/2+1e-4, "Body %d Pos %d", i, k)
				}
				near(t, float64(b.Mixed.Y), float64(g.Mixed.Y), 0.5/2+1e-6, "Mixed.Y")
				near(t, float64(b.Mixed.X), float64(g.Mixed.X), 0.01/2+1e-6, "Mixed.X")
				require.Equal(t, math.Float32bits(b.Raw.Y), math.Float32bits(g.Raw.Y))
				require.Equal(t, b.Mass, g.Mass)
			}
			for i := range in.Pts {
				near(t, float64(in.Pts[i].X), float64(got.Pts[i].X), 0.1/2+1e-6, "Pts[%d]", i)
			}
			require.Equal(t, in.Inner, got.Inner)
		},
	})
}

// ---- 11. slices of structs and maps ----

type RTContainers struct {
	Items  []Item
	Fixed  [2]Item
	ByName map[string]Item
	ByID   map[int16]Item
	Scores map[uint8]int32
	Flags  map[bool]string
	Lists  map[string][]int16 `net:"maxlen=4"`
	Nested [][]Item
	FKeys  map[float64]uint8
	Tagged map[uint16]Vec3 `net:"q,min=-10,max=10,prec=0.05"`
	Limit  []uint32        `net:"maxlen=3"`
}

func TestRoundTripContainers(t *testing.T) {
	roundTrip(t, rtOptions[RTContainers]{
		post: func(v *RTContainers, r *rand.Rand) {
			if len(v.Limit) > 3 {
				v.Limit = v.Limit[:3]
			}
		},
		check: func(t *testing.T, in, got *RTContainers) {
			// everything but the quantized floats is exact
			require.Equal(t, len(in.Tagged), len(got.Tagged))
			for k, w := range in.Tagged {
				near(t, float64(w.X), float64(got.Tagged[k].X), 0.05/2+1e-6, "Tagged[%d]", k)
			}
			in.Tagged, got.Tagged = nil, nil
			q := func(items []Item) {
				for i := range items {
					items[i].W = 0
				}
			}
			q(in.Items)
			q(got.Items)
			q(in.Fixed[:])
			q(got.Fixed[:])
			for _, s := range in.Nested {
				q(s)
			}
			for _, s := range got.Nested {
				q(s)
			}
			for _, m := range []map[string]Item{in.ByName, got.ByName} {
				for k, it := range m {
					it.W = 0
					m[k] = it
				}
			}
			for _, m := range []map[int16]Item{in.ByID, got.ByID} {
				for k, it := range m {
					it.W = 0
					m[k] = it
				}
			}
			lossless(t, in, got)
		},
	})
}

// ---- 12. pointers ----

type RTPointers struct {
	P     *int32
	PS    *string
	PV    *Vec3 `net:"q,min=-10,max=10,prec=0.1"`
	PI    *Item
	PP    **uint8
	PQ    *float32 `net:"q,min=0,max=1,prec=0.01"`
	Items []*Item
	M     map[string]*Item
	Arr   [2]*int16
	PA    *[3]int8 `net:"bits=6"`
	PT    *time.Time
}

func TestRoundTripPointers(t *testing.T) {
	nils, sets := 0, 0
	roundTrip(t, rtOptions[RTPointers]{
		post: func(v *RTPointers, r *rand.Rand) {
			if v.PQ != nil {
				*v.PQ = uni32(r, 0, 1)
			}
			if v.PA != nil {
				for i := range v.PA {
					v.PA[i] = int8(bitsInt(r, 6))
				}
			}
		},
		check: func(t *testing.T, in, got *RTPointers) {
			require.Equal(t, in.PV == nil, got.PV == nil)
			require.Equal(t, in.PQ == nil, got.PQ == nil)
			if in.PV != nil {
				near(t, float64(in.PV.Y), float64(got.PV.Y), 0.05+1e-6, "PV.Y")
				in.PV, got.PV = nil, nil
			}
			if in.PQ != nil {
				near(t, float64(*in.PQ), float64(*got.PQ), 0.005+1e-7, "PQ")
				in.PQ, got.PQ = nil, nil
				sets++
			} else {
				nils++
			}
			for _, x := range []*Item{in.PI, got.PI} {
				if x != nil {
					x.W = 0
				}
			}
			for _, s := range [][]*Item{in.Items, got.Items} {
				for _, x := range s {
					if x != nil {
						x.W = 0
					}
				}
			}
			for _, m := range []map[string]*Item{in.M, got.M} {
				for _, x := range m {
					if x != nil {
						x.W = 0
					}
				}
			}
			if in.PT != nil {
				*in.PT = in.PT.UTC()
			}
			lossless(t, in, got)
		},
	})
	require.Positive(t, nils)
	require.Positive(t, sets)
}

// ---- 13. unexported fields, with and without a tag ----

type RTUnexported struct {
	Public  int32
	secret  int32   `net:"bits=20"`
	pos     Vec3    `net:"q,min=-10,max=10,prec=0.1"`
	list    []uint8 `net:"maxlen=3"`
	hidden  int
	hiddenS []string
	Skip    int `net:"-"`
}

func TestRoundTripUnexported(t *testing.T) {
	c := MustFor[RTUnexported]()
	layout := c.Layout()
	require.Contains(t, layout, "RTUnexported.secret")
	require.Contains(t, layout, "RTUnexported.pos.Z")
	require.Contains(t, layout, "RTUnexported.list")
	require.NotContains(t, layout, "hidden")
	require.NotContains(t, layout, "Skip")
	roundTrip(t, rtOptions[RTUnexported]{
		post: func(v *RTUnexported, r *rand.Rand) {
			v.secret = int32(bitsInt(r, 20))
			v.pos = Vec3{uni32(r, -10, 10), uni32(r, -10, 10), uni32(r, -10, 10)}
			v.list = make([]uint8, r.Intn(4))
			r.Read(v.list)
			v.hidden = r.Int()
			v.hiddenS = []string{"x"}
		},
		ignore: func(v *RTUnexported) { v.hidden, v.hiddenS, v.Skip = 0, nil, 0 },
		check: func(t *testing.T, in, got *RTUnexported) {
			require.Equal(t, in.Public, got.Public)
			require.Equal(t, in.secret, got.secret)
			near(t, float64(in.pos.X), float64(got.pos.X), 0.05+1e-6, "pos.X")
			require.Equal(t, normalized(&in.list), &got.list)
			// fields without a tag are neither encoded nor touched
			require.Zero(t, got.hidden)
			require.Nil(t, got.hiddenS)
			require.Zero(t, got.Skip)
			q := *in
			require.NoError(t, c.Quantize(&q))
			require.Equal(t, in.hidden, q.hidden)
			require.Equal(t, in.Skip, q.Skip)
		},
	})
}

// ---- 14. recursive types: through slices, pointers and maps ----

type RTTree struct {
	Val  int16
	Name string `net:"maxlen=4"`
	Kids []RTTree
	W    float32 `net:"q,min=0,max=1,bits=6"`
}

type RTList struct {
	V    int32 `net:"varint"`
	Next *RTList
}

type RTDir struct {
	Files map[string]uint32
	Sub   map[string]RTDir `net:"maxlen=3"`
	Up    *RTDir
}

type RTGraph struct {
	Root RTTree
	List *RTList
	Dir  *RTDir
}

func TestRoundTripRecursive(t *testing.T) {
	c := MustFor[RTGraph]()
	require.Equal(t, -1, c.MaxBits())
	require.Contains(t, c.Layout(), "recursive")
	depth := 0
	roundTrip(t, rtOptions[RTGraph]{
		funcs: []any{func(v *RTTree, c fuzz.Continue) {
			c.FuzzNoCustom(v)
			v.Name = truncString(v.Name, 4)
			v.W = uni32(c.Rand, 0, 1)
		}, func(v *RTDir, c fuzz.Continue) {
			c.FuzzNoCustom(v)
			if len(v.Sub) > 3 { // maxlen=3: drop the largest key
				keys := make([]string, 0, len(v.Sub))
				for k := range v.Sub {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				delete(v.Sub, keys[3])
			}
		}},
		check: func(t *testing.T, in, got *RTGraph) {
			var strip func(*RTTree) int
			strip = func(n *RTTree) int {
				n.W = 0
				d := 0
				for i := range n.Kids {
					d = max(d, strip(&n.Kids[i]))
				}
				return d + 1
			}
			depth = max(depth, strip(&in.Root))
			strip(&got.Root)
			lossless(t, in, got)
		},
	})
	require.GreaterOrEqual(t, depth, 3, "the generated trees are too shallow to test recursion")
}

// A long list, right below the depth limit, round-trips; the limit itself
// is tested in errors_test.go.
func TestRoundTripLongList(t *testing.T) {
	var head *RTList
	for i := 0; i < DefaultMaxDepth-2; i++ {
		head = &RTList{V: int32(i - 40), Next: head}
	}
	in := RTGraph{List: head}
	data, err := Marshal(&in)
	require.NoError(t, err)
	var got RTGraph
	require.NoError(t, Unmarshal(data, &got))
	require.Equal(t, normalized(&in), &got)
}

// ---- Equal: true after quantization, false after a change of a step ----

func TestEqualAfterChange(t *testing.T) {
	c := MustFor[RTQuant]()
	for seed := int64(0); seed < 100; seed++ {
		v := gen(seed, rtQuantPost)
		q := gen(seed, rtQuantPost)
		require.NoError(t, c.Quantize(q))
		require.True(t, c.Equal(v, q))
		require.True(t, c.Equal(q, v))

		// a change of two steps (inside the range) is seen
		w := *q
		if w.A > 0 {
			w.A -= 0.02
		} else {
			w.A += 0.02
		}
		require.False(t, c.Equal(q, &w), "seed %d: A %v vs %v", seed, q.A, w.A)
		w = *q
		if w.C > 0 {
			w.C -= 0.0002
		} else {
			w.C += 0.0002
		}
		require.False(t, c.Equal(q, &w), "seed %d: C", seed)
		// a change well under half a step is not
		w = *q
		w.C += 0.00001
		if w.C > 1000 {
			w.C -= 0.00002
		}
		require.True(t, c.Equal(q, &w), "seed %d: C", seed)
	}

	cn := MustFor[RTNested]()
	v := gen(7, func(v *RTNested, r *rand.Rand) {
		v.Name = truncString(v.Name, 16)
		rtBody(&v.Body, r)
		for i := range v.Parts {
			rtBody(&v.Parts[i], r)
		}
		v.Inner.Deep.N = 3
		v.Inner.Level = 50
	})
	q := *v
	require.NoError(t, cn.Quantize(&q))
	require.True(t, cn.Equal(v, &q))
	w := q
	w.Parts[2].Mass++
	if w.Parts[2].Mass > 500 {
		w.Parts[2].Mass -= 2
	}
	require.False(t, cn.Equal(&q, &w))
	w = q
	w.Pts[3].Y += 0.2
	if w.Pts[3].Y > 10 {
		w.Pts[3].Y -= 0.4
	}
	require.False(t, cn.Equal(&q, &w))
	w = q
	w.Inner.Deep.Flag = !w.Inner.Deep.Flag
	require.False(t, cn.Equal(&q, &w))

	// a value that cannot be encoded equals nothing, not even itself
	bad := *v
	bad.Inner.Level = 0
	require.False(t, cn.Equal(&bad, &bad))
	require.False(t, cn.Equal(nil, &q))
	require.Error(t, cn.Quantize(nil))
}

// Many values in one packet, each starting at whatever bit the previous one
// ended on: Encode appends to a shared writer (rewinding it when a value
// turns out to need the sign flag) and Decode reads them back in order.
func TestEncodeDecodeManyInOnePacket(t *testing.T) {
	cb, cq, cs := MustFor[RTBitlen](), MustFor[RTQuant](), MustFor[RTStrings]()
	post := func(v *RTStrings, r *rand.Rand) {
		v.SM = truncString(v.SM, 10)
		if len(v.BM) > 16 {
			v.BM = v.BM[:16]
		}
		if len(v.SS) > 5 {
			v.SS = v.SS[:5]
		}
	}
	for seed := int64(0); seed < 50; seed++ {
		var w bits.Writer
		w.WriteBits(uint64(seed), 3) // an unaligned start
		var bs []*RTBitlen
		var qs []*RTQuant
		var ss []*RTStrings
		for i := int64(0); i < 6; i++ {
			b := gen[RTBitlen](seed*10+i, nil)
			b.A = -b.A // often negative: the sign flag and the rewind
			q := gen(seed*10+i, rtQuantPost)
			s := gen(seed*10+i, post)
			require.NoError(t, cb.Encode(&w, b))
			require.NoError(t, cq.Encode(&w, q))
			require.NoError(t, cs.Encode(&w, s))
			bs, qs, ss = append(bs, b), append(qs, q), append(ss, s)
		}
		// a value that fails leaves the writer as it was
		n := w.Len()
		bad := gen(seed, rtQuantPost)
		bad.A = 1000
		require.Error(t, cq.Encode(&w, bad))
		require.Equal(t, n, w.Len())

		r := bits.NewReader(w.Bytes())
		head, err := r.ReadBits(3)
		require.NoError(t, err)
		require.Equal(t, uint64(seed&7), head)
		for i := range bs {
			var b RTBitlen
			var q RTQuant
			var s RTStrings
			require.NoError(t, cb.Decode(r, &b))
			require.NoError(t, cq.Decode(r, &q))
			require.NoError(t, cs.Decode(r, &s))
			wantB, wantQ, wantS := *bs[i], *qs[i], *ss[i]
			require.NoError(t, cb.Quantize(&wantB))
			require.NoError(t, cq.Quantize(&wantQ))
			require.NoError(t, cs.Quantize(&wantS))
			require.Equal(t, wantB, b)
			require.Equal(t, wantQ, q)
			require.Equal(t, wantS, s)
		}
		require.Less(t, r.Remaining(), 8)
	}
}
