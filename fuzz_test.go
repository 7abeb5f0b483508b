package bitwire

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Native fuzz targets for Unmarshal on representative types. Run one with
//
//	go test -run=NONE -fuzz=FuzzUnmarshalFlat -fuzztime=20s .
//
// For every input: Unmarshal never panics, and when it succeeds the value
// encodes again, decodes to the same value, and is its own quantization.
// Inputs that once failed are kept under testdata/fuzz/<target>/ and run by
// plain go test.

// fuzzUnmarshal registers the seeds (valid encodings of seeds, plus a few
// degenerate inputs) and the property.
func fuzzUnmarshal[T any](f *testing.F, seeds ...T) {
	c := MustFor[T]()
	for i := range seeds {
		data, err := c.Marshal(&seeds[i])
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var v T
		err := c.Unmarshal(data, &v)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FieldError", err, err)
			}
			for _, s := range []error{ErrUnexpectedEnd, ErrOutOfRange, ErrInvalidValue, ErrTooLong, ErrTrailingData, ErrMalformed} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no decoding sentinel", err)
		}
		again, err := c.Marshal(&v)
		require.NoError(t, err, "a decoded value must encode: %+v", v)
		var w T
		require.NoError(t, c.Unmarshal(again, &w), "re-encoded %x", again)
		require.Equal(t, v, w)
		// Decoding into a used value gives the same value.
		require.NoError(t, c.Unmarshal(again, &v))
		require.Equal(t, w, v)
		// A decoded value is already quantized.
		q := w
		require.NoError(t, c.Quantize(&q))
		require.Equal(t, w, q)
		require.True(t, c.Equal(&v, &w))
	})
}

// ---- flat, quantized ----

type FzFlat struct {
	X      float32 `net:"q,min=-512,max=512,prec=0.01"`
	Y      float64 `net:"q,min=-16,max=112,bits=13"`
	Yaw    float32 `net:"q,min=0,max=360,bits=10,clamp"`
	Health int     `net:"range,min=0,max=200"`
	Team   int8    `net:"range,min=-3,max=3"`
	Big    uint64  `net:"range,min=18446744073709551000,max=18446744073709551615"`
	ID     uint16  `net:"bits=12"`
	Off    int32   `net:"bits=9"`
	Alive  bool
	Crouch bool
}

func FuzzUnmarshalFlat(f *testing.F) {
	fuzzUnmarshal(f,
		FzFlat{Big: math.MaxUint64 - 615},
		FzFlat{X: 100.25, Y: 3.5, Yaw: 359, Health: 200, Team: -3, Big: math.MaxUint64, ID: 4095, Off: -256, Alive: true},
		FzFlat{X: -512, Y: 112, Yaw: 0, Health: 17, Team: 3, Big: math.MaxUint64 - 1, ID: 1, Off: 255, Crouch: true},
	)
}

// ---- nested, with slices and strings ----

type FzInner struct {
	Name  string   `net:"maxlen=12"`
	Pos   Vec3     `net:"q,min=-100,max=100,prec=0.05"`
	Tags  []string `net:"maxlen=4"`
	Blob  []byte
	Score int32
}

type FzNested struct {
	Title  string
	Main   FzInner
	Others []FzInner
	Pair   [2]FzInner
	Grid   [][]uint8 `net:"bits=4"`
	When   time.Time
}

func FuzzUnmarshalNested(f *testing.F) {
	in := FzInner{Name: "alice", Pos: Vec3{1.5, -2, 0}, Tags: []string{"a", "bb"}, Blob: []byte{1, 2, 3}, Score: -42}
	fuzzUnmarshal(f,
		FzNested{},
		FzNested{Title: "world", Main: in, Others: []FzInner{in, {}}, Pair: [2]FzInner{{Name: "x"}, in}, Grid: [][]uint8{{1, 2}, {}, {15}}, When: time.Unix(1700000000, 5).UTC()},
		FzNested{Title: string(make([]byte, 70)), Others: make([]FzInner, 3), When: time.Unix(-5, 999999999).UTC()},
	)
}

// ---- maps ----

type FzMaps struct {
	ByName map[string]Item
	ByID   map[int16][]uint8
	Flags  map[bool]string
	Ptrs   map[uint8]*Item `net:"maxlen=5"`
	Nested map[string]map[int64]bool
	Vecs   map[uint32]Vec3 `net:"q,min=0,max=1,bits=5"`
	Floats map[float32]int8
}

func FuzzUnmarshalMaps(f *testing.F) {
	it := Item{ID: 7, Count: 3, Tag: "sword", W: 2.5, On: true}
	fuzzUnmarshal(f,
		FzMaps{},
		FzMaps{ByName: map[string]Item{"a": it, "b": {}}, ByID: map[int16][]uint8{-5: {1}, 9: nil}, Flags: map[bool]string{true: "yes", false: ""}},
		FzMaps{Floats: map[float32]int8{-1.5: -1, 0: 0, float32(math.Inf(1)): 1}},
		FzMaps{Ptrs: map[uint8]*Item{1: &it, 2: nil}, Nested: map[string]map[int64]bool{"x": {-1: true, 1 << 40: false}, "": nil}, Vecs: map[uint32]Vec3{0: {0, 1, 0}, 1 << 31: {0.5, 0.25, 1}}},
	)
}

// ---- pointers ----

type FzPointers struct {
	P    *int32
	PP   **uint8
	PV   *Vec3 `net:"q,min=-10,max=10,prec=0.1"`
	PS   *string
	Arr  [3]*Item
	List []*int16   `net:"bitlen"`
	PA   *[2]uint16 `net:"range,min=10,max=20"`
}

func FuzzUnmarshalPointers(f *testing.F) {
	i32, u8, s, i16 := int32(-9), uint8(200), "ptr", int16(-300)
	pu8 := &u8
	fuzzUnmarshal(f,
		FzPointers{},
		FzPointers{P: &i32, PP: &pu8, PV: &Vec3{1, 2, 3}, PS: &s, Arr: [3]*Item{nil, {ID: 1}, nil}, List: []*int16{&i16, nil}, PA: &[2]uint16{10, 20}},
	)
}

// ---- recursive ----

func FuzzUnmarshalRecursive(f *testing.F) {
	fuzzUnmarshal(f,
		RTGraph{},
		RTGraph{
			Root: RTTree{Val: 1, Name: "root", Kids: []RTTree{{Val: -2, W: 0.5}, {Val: 3, Kids: []RTTree{{Name: "leaf"}}}}},
			List: &RTList{V: -1, Next: &RTList{V: 1 << 20, Next: &RTList{}}},
			Dir:  &RTDir{Files: map[string]uint32{"a": 1}, Sub: map[string]RTDir{"s": {Up: &RTDir{}}}},
		},
	)
}

// ---- quaternions ----

type FzQuat struct {
	A [4]float32  `net:"quat"`
	B Quat4       `net:"quat,bits=12"`
	C []Quat4f    `net:"quat,bits=4"`
	D *[4]float64 `net:"quat,bits=20"`
}

func FuzzUnmarshalQuat(f *testing.F) {
	h := float32(math.Sqrt2 / 2)
	fuzzUnmarshal(f,
		FzQuat{A: [4]float32{0, 0, 0, 1}, B: Quat4{W: 1}},
		FzQuat{A: [4]float32{h, 0, 0, h}, B: Quat4{0.5, 0.5, 0.5, 0.5}, C: []Quat4f{{X: 1}, {Y: -1}}, D: &[4]float64{0, 0, 1, 0}},
	)
}

// ---- adaptive integers: groups, slices, the sign flag, fixed point ----

type FzAdaptive struct {
	A  int64      `net:"bitlen"`
	B  int32      `net:"bitlen,group=a"`
	C  int16      `net:"bitlen,group=a"`
	D  uint8      `net:"bitlen,group=a"`
	E  []int32    `net:"bitlen"`
	F  [3]uint16  `net:"bitlen"`
	G  int8       `net:"varint,group=3"`
	H  []uint64   `net:"varint"`
	X  float64    `net:"fixed,prec=0.01"`
	XS [4]float32 `net:"fixed,prec=0.5"`
	N  int
}

func FuzzUnmarshalAdaptive(f *testing.F) {
	fuzzUnmarshal(f,
		FzAdaptive{},
		FzAdaptive{A: 123456789, B: 25, C: 3, D: 200, E: []int32{1, 2, 3}, F: [3]uint16{7, 7, 7}, G: 5, H: []uint64{1 << 40}, X: 12.34, XS: [4]float32{1, 1.5, 2, 0}, N: 99},
		FzAdaptive{A: -1, B: math.MinInt32, C: -1, E: []int32{-5, 5, 0}, G: -128, X: -0.01, XS: [4]float32{-1, 0, 0, 0}, N: math.MinInt64},
	)
}
