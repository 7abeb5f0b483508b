package bitwire

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// Each type below has exactly one misuse of the net tag (or one field of a
// kind bitwire cannot code). For must report it, naming the field path and
// the bad option; nothing about a tag is left for encode time.

type (
	TagUnknownKind struct {
		F float32 `net:"quant,min=0,max=1"`
	}
	TagUnknownOption struct {
		F float32 `net:"q,min=0,max=1,prec=0.1,speed=2"`
	}
	TagKindNotFirst struct {
		F float32 `net:"min=0,q,max=1,prec=0.1"`
	}
	TagQNoMin struct {
		F float32 `net:"q,max=1,prec=0.1"`
	}
	TagQNoMax struct {
		F float64 `net:"q,min=0,prec=0.1"`
	}
	TagRangeNoMax struct {
		I int `net:"range,min=0"`
	}
	TagMinEqMax struct {
		F float32 `net:"q,min=1,max=1,prec=0.1"`
	}
	TagMinGtMax struct {
		F float64 `net:"q,min=2,max=-2,bits=8"`
	}
	TagRangeMinEqMax struct {
		I int16 `net:"range,min=5,max=5"`
	}
	TagUnknownKindQQ struct {
		F float32 `net:"qq,min=0,max=1"`
	}
	TagIDOutsideSlice struct {
		E idEntity
	}
	TagIDInArray struct {
		A [2]idEntity
	}
	TagIDRoot struct {
		ID uint16 `net:"id,bits=16"`
	}
	TagSliceElemPath struct {
		Players []struct {
			Pos struct {
				X float32 `net:"q,min=0,max=1,prec=0"`
			}
		}
	}
	TagRangeMinGtMaxU struct {
		U uint32 `net:"range,min=10,max=3"`
	}
	TagPrecZero struct {
		F float32 `net:"q,min=0,max=1,prec=0"`
	}
	TagPrecNegative struct {
		F float32 `net:"q,min=0,max=1,prec=-0.5"`
	}
	TagFixedPrecZero struct {
		F float64 `net:"fixed,prec=0"`
	}
	TagFixedNoPrec struct {
		F float64 `net:"fixed"`
	}
	TagPrecAndBits struct {
		F float32 `net:"q,min=0,max=1,prec=0.1,bits=8"`
	}
	TagNeitherPrecBits struct {
		F float32 `net:"q,min=0,max=1"`
	}
	TagBitsOver64 struct {
		U uint64 `net:"bits=65"`
	}
	TagBitsZero struct {
		U uint64 `net:"bits=0"`
	}
	TagBitsWiderInt8 struct {
		I int8 `net:"bits=9"`
	}
	TagBitsWiderUint16 struct {
		U uint16 `net:"bits=17"`
	}
	TagQBitsOver53 struct {
		F float64 `net:"q,min=0,max=1,bits=60"`
	}
	TagQuatOnInt struct {
		I int32 `net:"quat"`
	}
	TagQuatOn3 struct {
		A [3]float32 `net:"quat"`
	}
	TagQuatBadStruct struct {
		Q struct{ A, B, C, D float32 } `net:"quat"`
	}
	TagQuatBits struct {
		Q [4]float32 `net:"quat,bits=1"`
	}
	TagMaxlenOnBool struct {
		B bool `net:"maxlen=3"`
	}
	TagMaxlenOnInt struct {
		I int `net:"maxlen=3"`
	}
	TagMaxlenZero struct {
		S string `net:"maxlen=0"`
	}
	TagGroupOnBits struct {
		I int32 `net:"bits=8,group=a"`
	}
	TagGroupOnRange struct {
		I int32 `net:"range,min=0,max=5,group=a"`
	}
	TagGroupOnString struct {
		S string `net:"group=a"`
	}
	TagGroupOnSlice struct {
		S []int32 `net:"bitlen,group=a"`
	}
	TagMinNotNumber struct {
		F float32 `net:"q,min=abc,max=1,prec=0.1"`
	}
	TagMaxNotNumber struct {
		F float32 `net:"q,min=0,max=1x,prec=0.1"`
	}
	TagBitsNotNumber struct {
		U uint8 `net:"bits=x"`
	}
	TagMaxlenNotNumber struct {
		S []byte `net:"maxlen=ten"`
	}
	TagPrecNotNumber struct {
		F float64 `net:"fixed,prec=1.2.3"`
	}
	TagVarintGroupWord struct {
		I int64 `net:"varint,group=x"`
	}
	TagVarintGroupBig struct {
		I int64 `net:"varint,group=65"`
	}
	TagRangeFloatBound struct {
		I int `net:"range,min=1.5,max=3"`
	}
	TagRangeNegUnsigned struct {
		U uint `net:"range,min=-1,max=3"`
	}
	TagEmptyOption struct {
		F float32 `net:"q,,min=0,max=1,prec=0.1"`
	}
	TagEmptyValue struct {
		F float32 `net:"q,min=,max=1,prec=0.1"`
	}
	TagFlagWithValue struct {
		F float32 `net:"q,min=0,max=1,prec=0.1,clamp=yes"`
	}
	TagQOnInt struct {
		I int `net:"q,min=0,max=1,prec=0.1"`
	}
	TagClampOnBitlen struct {
		I int `net:"bitlen,clamp"`
	}
	TagClampOnVarint struct {
		I int `net:"varint,clamp"`
	}
	TagTooFineFloat32 struct {
		F float32 `net:"q,min=-1000000,max=1000000,prec=0.000001"`
	}
	TagRangeTooWide struct {
		I int8 `net:"range,min=0,max=300"`
	}
	TagMinOnRawFloat struct {
		F float32 `net:"min=0"`
	}
	TagKindOnString struct {
		S string `net:"varint"`
	}
	TagKindOnTime struct {
		T struct{ A int } `net:"maxlen=2"`
	}

	// misuse below the top level: the path leads to it
	TagInner struct {
		Y float32 `net:"q,min=0,max=1"`
	}
	TagNested  struct{ In TagInner }
	TagNested2 struct {
		Outer struct {
			Mid struct {
				Z int8 `net:"bits=10"`
			}
		}
	}
	TagSliceElem struct {
		S []int8 `net:"bits=9"`
	}
	TagArrayElem struct {
		A [2]float32 `net:"q,min=0,max=1,prec=2,bits=3"`
	}
	TagMapValue struct {
		M map[string]uint8 `net:"bits=9"`
	}
	TagPointer struct {
		P *int16 `net:"bits=17"`
	}
	TagInherited struct {
		V Vec3 `net:"q,min=0,max=1"` // passed down to X, Y, Z: no prec nor bits
	}
	TagRecursive struct {
		Next *TagRecursive
		Bad  uint8 `net:"bits=9"`
	}

	// kinds bitwire cannot code
	UnsChan       struct{ C chan int }
	UnsFunc       struct{ F func() }
	UnsInterface  struct{ I interface{} }
	UnsAny        struct{ A any }
	UnsComplex128 struct{ C complex128 }
	UnsComplex64  struct{ C complex64 }
	UnsStructKey  struct{ M map[struct{ A int }]int }
	UnsArrayKey   struct{ M map[[2]int]bool }
	UnsPointerKey struct{ M map[*int]bool }
	UnsUnsafe     struct{ P unsafe.Pointer }
	UnsSliceChan  struct{ S []chan int }
	UnsPtrFunc    struct{ P *func() }
	UnsMapValue   struct{ M map[string]chan int }
	UnsNested     struct{ In struct{ Deep UnsChan } }
	UnsSelfSlice  struct{ R selfSlice }
	UnsSelfPtr    struct{ P selfPtr }
	UnsSelfMap    struct{ M selfMap }
)

type (
	selfSlice []selfSlice
	selfPtr   *selfPtr
	selfMap   map[string]selfMap
)

type tagCase struct {
	name     string
	forErr   func() error
	marshal  func() error
	sentinel error
	path     string
	opt      string // what the message must mention
}

func tagRow[T any](sentinel error, path, opt string) tagCase {
	return tagCase{
		name:     reflect.TypeFor[T]().Name(),
		forErr:   func() error { _, err := For[T](); return err },
		marshal:  func() error { _, err := Marshal(new(T)); return err },
		sentinel: sentinel,
		path:     path,
		opt:      opt,
	}
}

// dynRow is a row for a struct type built at run time, with one float32
// field F carrying tag.
func dynRow(tag reflect.StructTag, sentinel error, path, opt string) tagCase {
	typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[float32](), Tag: tag}})
	return tagCase{
		name:     string(tag),
		forErr:   func() error { _, err := compileRoot(typ); return err },
		marshal:  func() error { _, err := Marshal(reflect.New(typ).Interface()); return err },
		sentinel: sentinel,
		path:     path,
		opt:      opt,
	}
}

func TestTagErrors(t *testing.T) {
	bad, uns := ErrBadTag, ErrUnsupportedType
	cases := []tagCase{
		tagRow[TagUnknownKind](bad, "TagUnknownKind.F", `"quant"`),
		tagRow[TagUnknownOption](bad, "TagUnknownOption.F", `"speed"`),
		tagRow[TagKindNotFirst](bad, "TagKindNotFirst.F", `"q"`),
		tagRow[TagQNoMin](bad, "TagQNoMin.F", "min"),
		tagRow[TagQNoMax](bad, "TagQNoMax.F", "max"),
		tagRow[TagRangeNoMax](bad, "TagRangeNoMax.I", "max"),
		tagRow[TagMinEqMax](bad, "TagMinEqMax.F", "min=1"),
		tagRow[TagMinGtMax](bad, "TagMinGtMax.F", "min=2"),
		tagRow[TagRangeMinGtMaxU](bad, "TagRangeMinGtMaxU.U", "min=10"),
		tagRow[TagUnknownKindQQ](bad, "TagUnknownKindQQ.F", `unknown coding "qq"`),
		tagRow[TagIDOutsideSlice](bad, "TagIDOutsideSlice.E.ID", "option id applies only"),
		tagRow[TagIDInArray](bad, "TagIDInArray.A[].ID", "option id applies only"),
		tagRow[TagIDRoot](bad, "TagIDRoot.ID", "option id applies only"),
		tagRow[TagSliceElemPath](bad, "TagSliceElemPath.Players[].Pos.X", "prec=0"),
		tagRow[TagPrecZero](bad, "TagPrecZero.F", "prec=0"),
		tagRow[TagPrecNegative](bad, "TagPrecNegative.F", "prec=-0.5"),
		tagRow[TagFixedPrecZero](bad, "TagFixedPrecZero.F", "prec=0"),
		tagRow[TagFixedNoPrec](bad, "TagFixedNoPrec.F", "prec"),
		tagRow[TagPrecAndBits](bad, "TagPrecAndBits.F", "prec and bits"),
		tagRow[TagNeitherPrecBits](bad, "TagNeitherPrecBits.F", "prec and bits"),
		tagRow[TagBitsOver64](bad, "TagBitsOver64.U", "bits=65"),
		tagRow[TagBitsZero](bad, "TagBitsZero.U", "bits=0"),
		tagRow[TagBitsWiderInt8](bad, "TagBitsWiderInt8.I", "bits=9"),
		tagRow[TagBitsWiderUint16](bad, "TagBitsWiderUint16.U", "bits=17"),
		tagRow[TagQBitsOver53](bad, "TagQBitsOver53.F", "60"),
		tagRow[TagQuatOnInt](bad, "TagQuatOnInt.I", "quat"),
		tagRow[TagQuatOn3](bad, "TagQuatOn3.A[]", "quat"),
		tagRow[TagQuatBadStruct](bad, "TagQuatBadStruct.Q", "quat"),
		tagRow[TagQuatBits](bad, "TagQuatBits.Q", "bit count 1"),
		tagRow[TagMaxlenOnBool](bad, "TagMaxlenOnBool.B", "maxlen"),
		tagRow[TagMaxlenOnInt](bad, "TagMaxlenOnInt.I", "maxlen"),
		tagRow[TagMaxlenZero](bad, "TagMaxlenZero.S", "maxlen=0"),
		tagRow[TagGroupOnBits](bad, "TagGroupOnBits.I", "group"),
		tagRow[TagGroupOnRange](bad, "TagGroupOnRange.I", "group"),
		tagRow[TagGroupOnString](bad, "TagGroupOnString.S", "group"),
		tagRow[TagGroupOnSlice](bad, "TagGroupOnSlice.S", "group"),
		tagRow[TagMinNotNumber](bad, "TagMinNotNumber.F", "min=abc"),
		tagRow[TagMaxNotNumber](bad, "TagMaxNotNumber.F", "max=1x"),
		tagRow[TagBitsNotNumber](bad, "TagBitsNotNumber.U", "bits=x"),
		tagRow[TagMaxlenNotNumber](bad, "TagMaxlenNotNumber.S", "maxlen=ten"),
		tagRow[TagPrecNotNumber](bad, "TagPrecNotNumber.F", "prec=1.2.3"),
		tagRow[TagVarintGroupWord](bad, "TagVarintGroupWord.I", "group=x"),
		tagRow[TagVarintGroupBig](bad, "TagVarintGroupBig.I", "group=65"),
		tagRow[TagRangeFloatBound](bad, "TagRangeFloatBound.I", "min=1.5"),
		tagRow[TagRangeNegUnsigned](bad, "TagRangeNegUnsigned.U", "min=-1"),
		// go vet rejects malformed tags in source: these types are built
		// at run time, and have no name
		dynRow(`net:"q,min=0,max=1,prec=0.1`, bad, "F", "malformed"),
		dynRow(`json:"f" net:q`, bad, "F", "malformed"),
		tagRow[TagEmptyOption](bad, "TagEmptyOption.F", "empty option"),
		tagRow[TagEmptyValue](bad, "TagEmptyValue.F", `"min"`),
		tagRow[TagFlagWithValue](bad, "TagFlagWithValue.F", `"clamp"`),
		tagRow[TagQOnInt](bad, "TagQOnInt.I", "int"),
		tagRow[TagClampOnBitlen](bad, "TagClampOnBitlen.I", "clamp"),
		tagRow[TagClampOnVarint](bad, "TagClampOnVarint.I", "clamp"),
		tagRow[TagTooFineFloat32](bad, "TagTooFineFloat32.F", "float32"),
		tagRow[TagRangeTooWide](bad, "TagRangeTooWide.I", "0..300"),
		tagRow[TagMinOnRawFloat](bad, "TagMinOnRawFloat.F", "min"),
		tagRow[TagKindOnString](bad, "TagKindOnString.S", "varint"),
		tagRow[TagKindOnTime](bad, "TagKindOnTime.T", "maxlen"),

		tagRow[TagNested](bad, "TagNested.In.Y", "prec and bits"),
		tagRow[TagNested2](bad, "TagNested2.Outer.Mid.Z", "bits=10"),
		tagRow[TagSliceElem](bad, "TagSliceElem.S[]", "bits=9"),
		tagRow[TagArrayElem](bad, "TagArrayElem.A[]", "prec and bits"),
		tagRow[TagMapValue](bad, "TagMapValue.M{}", "bits=9"),
		tagRow[TagPointer](bad, "TagPointer.P", "bits=17"),
		tagRow[TagInherited](bad, "TagInherited.V.X", "prec and bits"),
		tagRow[TagRecursive](bad, "TagRecursive.Bad", "bits=9"),

		tagRow[UnsChan](uns, "UnsChan.C", "chan int"),
		tagRow[UnsFunc](uns, "UnsFunc.F", "func()"),
		tagRow[UnsInterface](uns, "UnsInterface.I", "interface {}"),
		tagRow[UnsAny](uns, "UnsAny.A", "interface {}"),
		tagRow[UnsComplex128](uns, "UnsComplex128.C", "complex128"),
		tagRow[UnsComplex64](uns, "UnsComplex64.C", "complex64"),
		tagRow[UnsStructKey](uns, "UnsStructKey.M", "struct"),
		tagRow[UnsArrayKey](uns, "UnsArrayKey.M", "[2]int"),
		tagRow[UnsPointerKey](uns, "UnsPointerKey.M", "*int"),
		tagRow[UnsUnsafe](uns, "UnsUnsafe.P", "unsafe.Pointer"),
		tagRow[UnsSliceChan](uns, "UnsSliceChan.S[]", "chan int"),
		tagRow[UnsPtrFunc](uns, "UnsPtrFunc.P", "func()"),
		tagRow[UnsMapValue](uns, "UnsMapValue.M{}", "chan int"),
		tagRow[UnsNested](uns, "UnsNested.In.Deep.C", "chan int"),
		tagRow[UnsSelfSlice](uns, "UnsSelfSlice.R*", "selfSlice"),
		tagRow[UnsSelfPtr](uns, "UnsSelfPtr.P*", "selfPtr"),
		tagRow[UnsSelfMap](uns, "UnsSelfMap.M*", "selfMap"),
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.forErr()
			requireFieldErr(t, err, tc.sentinel, tc.path)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, -1, fe.Bit, "a compile error has no bit offset")
			require.Contains(t, err.Error(), tc.opt)
			other := ErrBadTag
			if tc.sentinel == ErrBadTag {
				other = ErrUnsupportedType
			}
			require.NotErrorIs(t, err, other)
			// not cached as a success: the same error again
			require.Equal(t, err.Error(), tc.forErr().Error())
			// the package-level functions compile the same plan
			requireFieldErr(t, tc.marshal(), tc.sentinel, tc.path)
		})
	}
}

func TestMustForPanicsOnBadTag(t *testing.T) {
	require.Panics(t, func() { MustFor[TagQNoMin]() })
	require.NotPanics(t, func() { MustFor[RTNested]() })
}

// Tags that are fine must compile, including the corner cases next to the
// misuses above.
type TagGood struct {
	A  float32       `net:"q,min=-1,max=1,prec=0.5"`
	B  uint64        `net:"bits=64"`
	C  int8          `net:"bits=8"`
	D  int           `net:"range,min=-0x10,max=0x10"`
	E  [4]float64    `net:"quat,bits=20"`
	F  []byte        `net:"maxlen=1"`
	G  int64         `net:"varint,group=64"`
	H  int32         `net:"bitlen,group=only"`
	I  string        `net:",maxlen=4"` // empty kind
	J  float32       `net:" q , min=0 , max=1 , bits=3 "`
	K  uint8         `json:"k,omitempty" net:"bits=2"`
	L  bool          `json:"l"` // someone else's tag
	M  int           `net:"-"`
	N  chan int      `net:"-"` // skipped, so not unsupported
	O  Vec3          `net:"q,min=-1,max=1,bits=4,clamp"`
	P  *float32      `net:"q,min=0,max=1,prec=0.25,clamp"`
	Q  uint64        `net:"range,min=18446744073709551614,max=18446744073709551615"`
	R  [2]Quat4f     `net:"quat"` // on an array of quaternions quat applies to each
	RR [2][4]float32 `net:"quat,bits=6"`
	S  []float64     `net:"fixed,prec=1e-3"`
	T  int16         `net:"range,min=-32768,max=32767,clamp"`
	U  uint32        `net:"bits=5,clamp"`
	_  int           // blank fields are unexported: ignored
}

func TestGoodTagsCompile(t *testing.T) {
	c, err := For[TagGood]()
	require.NoError(t, err)
	layout := c.Layout()
	for _, want := range []string{"TagGood.A", "TagGood.I", "TagGood.J", "TagGood.K", "TagGood.O.Z", "TagGood.R[]"} {
		require.Contains(t, layout, want)
	}
	require.NotContains(t, layout, "TagGood.M ")
	require.NotContains(t, layout, "TagGood.N")
	require.Regexp(t, `TagGood\.J\s+q\s+3\s`, layout)
	v := TagGood{U: 1000, T: 5, O: Vec3{X: 2}, E: [4]float64{1, 0, 0, 0}, R: [2]Quat4f{{W: 1}, {X: 1}}, RR: [2][4]float32{{0, 1, 0, 0}, {0, 0, 1, 0}}, Q: math.MaxUint64}
	require.NoError(t, c.Quantize(&v))
	require.Equal(t, uint32(31), v.U)
	require.Equal(t, float32(1), v.O.X)

	// someone else's malformed tag, without net:, is none of our business
	typ := reflect.StructOf([]reflect.StructField{{Name: "X", Type: reflect.TypeFor[int](), Tag: `bad tag`}})
	data, err := Marshal(reflect.New(typ).Interface())
	require.NoError(t, err)
	require.Len(t, data, 1)
}

type idEntity struct {
	ID uint16 `net:"id,bits=16"`
	X  int8
}

// Issue 14: a range of one value takes 0 bits, as wire-format.md says.
func TestRangeMinEqMax(t *testing.T) {
	c, err := For[TagRangeMinEqMax]()
	require.NoError(t, err)
	v := TagRangeMinEqMax{I: 5}
	data, err := c.Marshal(&v)
	require.NoError(t, err)
	require.Empty(t, data) // 0 bits
	var got TagRangeMinEqMax
	require.NoError(t, c.Unmarshal(data, &got))
	require.Equal(t, v, got)
	_, err = c.Marshal(&TagRangeMinEqMax{I: 6})
	require.ErrorIs(t, err, ErrOutOfRange)
}

// Issue 14: For's messages say "bitwire:" once, and an id field in a slice
// element is accepted.
func TestTagErrorTextOnce(t *testing.T) {
	_, err := For[TagQuatBits]()
	require.Error(t, err)
	require.Equal(t, 1, strings.Count(err.Error(), "bitwire:"), err.Error())
	_, err = For[struct{ Es []idEntity }]()
	require.NoError(t, err)
}

// TestSetOptionErrors: each option's missing, extra or bad value is its
// own error, word for word, and good values set the spec.
func TestSetOptionErrors(t *testing.T) {
	for _, c := range []struct {
		key, val string
		has      bool
		want     string
	}{
		{"min", "", true, `option "min" needs a value`},
		{"dmax", "", false, `option "dmax" needs a value`},
		{"prec", "x", true, "prec=x does not parse as a number"},
		{"prec", "-1", true, "prec=-1 must be a positive finite number"},
		{"prec", "Inf", true, "prec=Inf must be a positive finite number"},
		{"prec", "NaN", true, "prec=NaN must be a positive finite number"},
		{"bits", "x", true, "bits=x does not parse as an integer"},
		{"bits", "65", true, "bits=65 is outside 1..64"},
		{"bits", "0", true, "bits=0 is outside 1..64"},
		{"maxlen", "0", true, "maxlen=0 is outside 1..2147483647"},
		{"maxlen", "2147483648", true, "maxlen=2147483648 is outside 1..2147483647"},
		{"clamp", "1", true, `option "clamp" takes no value`},
		{"id", "", true, `option "id" takes no value`},
		{"q", "", false, `coding "q" must be the first element of the tag`},
		{"speed", "", false, `unknown option "speed"`},
	} {
		var s spec
		require.EqualError(t, s.setOption(c.key, c.val, c.has), c.want, "%s=%s", c.key, c.val)
		require.Equal(t, spec{}, s, "%s=%s: a refused option sets nothing", c.key, c.val)
	}
	var s spec
	for _, kv := range [][2]string{{"min", "-1"}, {"max", "2"}, {"prec", "0.5"}, {"bits", "7"}, {"group", "g"},
		{"maxlen", "9"}, {"dmin", "-3"}, {"dmax", "3"}} {
		require.NoError(t, s.setOption(kv[0], kv[1], true))
	}
	for _, k := range []string{"composite", "id", "clamp"} {
		require.NoError(t, s.setOption(k, "", false))
	}
	require.Equal(t, spec{min: "-1", hasMin: true, max: "2", hasMax: true, prec: 0.5, hasPrec: true, bits: 7, hasBits: true,
		group: "g", hasGroup: true, maxlen: 9, hasMaxlen: true, dmin: "-3", dmax: "3", hasDelta: true,
		composite: true, id: true, clamp: true}, s)
}
