package bitwire

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/internal/golden"
)

// The frozen wire format: golden vectors of every coding, of deltas and of
// unions. Each case is encoded and compared with the hex kept under
// testdata/golden; any change of the format fails here, on purpose. Run
// `go test . -run Golden -update` only when a format change is intended,
// and say so in docs/wire-format.md.
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

type goldenCase struct {
	name   string
	enc    func() ([]byte, int, error)    // bytes and bit length
	dec    func(data []byte) (any, error) // decodes the bytes
	want   func() any                     // what dec must return
	show   any                            // the Go value(s) shown in the file
	schema func() *Schema                 // the schema of the case's type(s)
	note   string                         // what the block's value text cannot say, or ""
	// deltas: the baseline (as shown), and the full encoding of a value of
	// the case's type, for the block's base and result lines
	base    any
	marshal func(v any) ([]byte, error)
	// predicted deltas: the older baseline, whose full encoding is the
	// block's older line
	older any
}

func fullCase[T any](name string, v T) goldenCase { return fullCaseOf(name, MustFor[T](), v) }

// fullCaseOf is fullCase with a given codec (debug mode, a model).
func fullCaseOf[T any](name string, c *Codec[T], v T) goldenCase {
	return goldenCase{
		name:   name,
		show:   v,
		schema: c.Schema,
		enc: func() ([]byte, int, error) {
			var w bits.Writer
			err := c.Encode(&w, &v)
			return w.Bytes(), w.Len(), err
		},
		dec: func(data []byte) (any, error) {
			var out T
			err := c.Unmarshal(data, &out)
			return out, err
		},
		want: func() any {
			q := v
			if err := c.Quantize(&q); err != nil {
				panic(err)
			}
			return q
		},
	}
}

func deltaCase[T any](name string, base, cur T) goldenCase {
	return deltaCaseOf(name, MustFor[T](), base, cur)
}

// deltaCaseOf is deltaCase with a given codec (debug mode, a model).
func deltaCaseOf[T any](name string, c *Codec[T], base, cur T) goldenCase {
	return goldenCase{
		name:   name,
		show:   [2]T{base, cur},
		schema: c.Schema,
		base:   base,
		marshal: func(v any) ([]byte, error) {
			x := v.(T)
			return c.Marshal(&x)
		},
		enc: func() ([]byte, int, error) {
			var w bits.Writer
			err := c.EncodeDelta(&w, &base, &cur)
			return w.Bytes(), w.Len(), err
		},
		dec: func(data []byte) (any, error) {
			qb := base
			if err := c.Quantize(&qb); err != nil {
				return nil, err
			}
			var out T
			err := c.UnmarshalDelta(data, &qb, &out)
			return out, err
		},
		want: func() any {
			q := cur
			if err := c.Quantize(&q); err != nil {
				panic(err)
			}
			return q
		},
	}
}

// predictedCase is a delta from the prediction of older and base to cur
// (Codec.EncodePredicted).
func predictedCase[T any](name string, older, base, cur T) goldenCase {
	c := MustFor[T]()
	g := deltaCaseOf(name, c, base, cur)
	g.older = older
	g.show = [3]T{older, base, cur}
	g.enc = func() ([]byte, int, error) {
		var w bits.Writer
		err := c.EncodePredicted(&w, &older, &base, &cur)
		return w.Bytes(), w.Len(), err
	}
	g.dec = func(data []byte) (any, error) {
		qo, qb := older, base
		if err := c.Quantize(&qo); err != nil {
			return nil, err
		}
		if err := c.Quantize(&qb); err != nil {
			return nil, err
		}
		var out T
		err := c.UnmarshalPredicted(data, &qo, &qb, &out)
		return out, err
	}
	return g
}

// gPred moves on a line: X and Y are predicted from two baselines, Hp
// is not.
type gPred struct {
	X  float32 `net:"q,min=-100,max=100,prec=0.01,pred"`
	Y  float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1,pred"`
	Hp uint8   `net:"range,min=0,max=100"`
}

// gPredSpin turns about z: its rotation is predicted from two baselines.
type gPredSpin struct {
	Rot [4]float32 `net:"quat,pred"`
	Hp  uint8      `net:"range,min=0,max=100"`
}

// gPredWorld holds predicted values in an entity set, an array and a
// signed bits field.
type gPredWorld struct {
	Bodies []gPredBody
	Aim    [2]float32 `net:"q,min=-1,max=1,bits=8,pred"`
	Spin   int8       `net:"bits=5,pred"`
}

type gPredBody struct {
	ID uint8   `net:"id,bits=8"`
	X  float32 `net:"q,min=-50,max=50,prec=0.5,dmin=-4,dmax=4,pred"`
	Hp uint8   `net:"range,min=0,max=9,pred"`
}

type gBool struct{ A, B, C bool }

// gTransforms holds windowed values in a slice matched by index.
type gTransforms struct{ S []DeltaTransform }

// gSpinners holds quaternions of one field in a slice matched by index.
type gSpinners struct{ S []Spinner }
type gBits struct {
	U uint16 `net:"bits=12"`
	S int8   `net:"bits=5"`
	N int32  `net:"bits=32"`
}
type gRange struct {
	A int    `net:"range,min=-100,max=100"`
	B uint64 `net:"range,min=1000,max=1015"`
	C int8   `net:"range,min=0,max=10,clamp"`
}
type gQ struct {
	P float32 `net:"q,min=-512,max=512,prec=0.01"`
	B float64 `net:"q,min=0,max=1,bits=8"`
}

// gZero: grids anchored at zero (wire version 2): a symmetric bits= range,
// a prec= that does not divide the range, an asymmetric range whose ends
// are clamped multiples of the step, and a float32 range whose bounds are
// not float32 values.
type gZero struct {
	A float32 `net:"q,min=-1,max=1,bits=8"`
	B float64 `net:"q,min=-1,max=1,prec=0.03"`
	C float64 `net:"q,min=-0.3,max=1.05,prec=0.1"`
	D float32 `net:"q,min=-3.141592653589793,max=3.141592653589793,prec=0.001"`
}
type gFloat struct {
	F float32
	D float64
}
type gFixed struct {
	A float64    `net:"fixed,prec=0.001"`
	V [3]float32 `net:"fixed,prec=0.5"`
}
type gVarint struct {
	A int32  `net:"varint,group=5"`
	B uint64 `net:"varint"`
	C int64  `net:"varint,group=3"`
}
type gBitlen struct {
	A int64  `net:"bitlen"`
	B int32  `net:"bitlen,group=a"`
	C uint32 `net:"bitlen,group=a"`
	D uint8
	S []uint16
}
type gStrings struct {
	S string `net:",maxlen=15"`
	T string
	B []byte `net:",maxlen=4"`
}
type gQuat struct {
	Q [4]float32 `net:"quat"`
	R Quat4      `net:"quat,bits=12"`
}
type gTime struct{ T time.Time }
type gLeaf struct {
	X uint8 `net:"bits=3"`
}
type gContainers struct {
	Arr [3]gLeaf
	Sl  []gLeaf `net:",maxlen=7"`
	P   *gLeaf
	Q   *gLeaf
	M   map[string]uint8
}
type gEntity struct {
	ID uint16 `net:"id"`
	X  uint8  `net:"bits=8"`
}
type gWorld struct {
	T  uint8 `net:"bits=4"`
	Es []gEntity
	L  []uint8 `net:"bits=4"`
}

// Types of the cases that pin down what docs/wire-format.md once left out
// or got wrong (an independent decoder written from the docs tripped over
// each); the spec names the case beside each rule.
type gGrow struct{ S []uint16 }
type gGrowFixed struct {
	F []float32 `net:"fixed,prec=0.5"`
}
type gMixedGroup struct {
	A int8   `net:"bitlen,group=g"`
	B uint32 `net:"bitlen,group=g"`
}
type gEntityMax struct {
	Es []gEntity `net:",maxlen=5"`
}
type gEmptySets struct {
	M map[uint8]uint8
	S []uint8 `net:"bits=4"`
}
type gRounding struct {
	Q float32    `net:"q,min=-10,max=10,prec=0.1"`
	F float32    `net:"fixed,prec=0.1"`
	R [4]float32 `net:"quat"`
}
type gUint8s struct {
	B []uint8  // untagged: a byte string
	A [3]uint8 // an array: a group of bitlen values
	N []uint8  `net:"bitlen"` // tagged: a slice of bitlen values
	H uint8    `net:"bits=7"` // bits=7 first: an option (fixed width), not a kind
}

// gOffGrid: a window on a grid anchored at zero whose min is off the grid
// (kmin = K(-0.25) = -2, while -0.25 is 2.5 steps below zero).
type gOffGrid struct {
	A float32 `net:"q,min=-0.25,max=10,prec=0.1,dmin=-1,dmax=1"`
}

// gDebug: what debug mode's sentinels follow (top-level fields, a nested
// struct, a field group).
type gDebug struct {
	A uint8 `net:"bits=3"`
	P gLeaf
	B int32  `net:"bitlen,group=g"`
	C uint32 `net:"bitlen,group=g"`
}

func goldenCases() []goldenCase {
	q := func(x, y, z, w float32) [4]float32 { return [4]float32{x, y, z, w} }
	return append([]goldenCase{
		fullCase("bool", gBool{A: true, C: true}),
		fullCase("bits", gBits{U: 0xABC, S: -3, N: -2}),
		fullCase("range", gRange{A: -100, B: 1007, C: 42}),
		fullCase("q", gQ{P: 123.456, B: 0.5}),
		fullCase("q-zero", gZero{A: 0, B: 0, C: 0, D: 0}),
		fullCase("q-zero-ends", gZero{A: -1, B: 1, C: 1.05, D: math.Nextafter32(math.Pi, 0)}),
		fullCase("float", gFloat{F: 1.5, D: -2.25}),
		fullCase("fixed", gFixed{A: 3.14159, V: [3]float32{1, 2.5, -3}}),
		fullCase("fixed-positive", gFixed{A: 3.14159, V: [3]float32{1, 2.5, 3}}),
		fullCase("varint", gVarint{A: -1, B: 300, C: -1000}),
		fullCase("bitlen", gBitlen{A: 123456789, B: 25, C: 3, D: 0, S: []uint16{1, 1, 0, 1}}),
		fullCase("bitlen-negative", gBitlen{A: -5, B: -25, C: 3, D: 200, S: []uint16{1000, 3}}),
		fullCase("strings", gStrings{S: "hi", T: "bitwire", B: []byte{0xDE, 0xAD}}),
		fullCase("quat", gQuat{Q: q(0, 0, 0, 1), R: Quat4{X: 0.5, Y: -0.5, Z: 0.5, W: 0.5}}),
		fullCase("time", gTime{T: time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)}),
		fullCase("containers", gContainers{Arr: [3]gLeaf{{1}, {2}, {3}}, Sl: []gLeaf{{7}, {6}}, Q: &gLeaf{5}, M: map[string]uint8{"b": 2, "a": 1}}),
		fullCase("seed-player", SeedPlayer{ID: 7, X: 12.5, Y: -300, Aim: 200, Health: 100, Score: 65535, Alive: true}),
		fullCase("seed-transform", Transform{X: 12.3, Y: -3.3, Z: 99.9, Yaw: 359.9, Pitch: 0.1}),
		fullCase("seed-player-state", PlayerState{Pos: PlayerPos{X: 100.25, Y: 3.5, Z: -511}, Yaw: 90, Health: 200, Weapon: 15, Firing: true}),
		fullCase("seed-adaptive", Adaptive{A: 123456789, B: 25, C: 3}),
		deltaCase("delta-unchanged", DeltaTransform{X: 10, Y: 1, Z: -20, Yaw: 45, Pitch: 10}, DeltaTransform{X: 10, Y: 1, Z: -20, Yaw: 45, Pitch: 10}),
		deltaCase("delta-window", DeltaTransform{X: 10, Y: 1, Z: -20, Yaw: 45, Pitch: 10}, DeltaTransform{X: 10.5, Y: 1.5, Z: -19.5, Yaw: 45, Pitch: 10}),
		deltaCase("delta-teleport", DeltaTransform{X: 10, Y: 1, Z: -20, Yaw: 45, Pitch: 10}, DeltaTransform{X: -80, Y: 9, Z: 70, Yaw: 45, Pitch: 10}),
		deltaCase("delta-composite", DeltaPlayer{Pos: PlayerPos{X: 10, Y: 2, Z: -30}, Yaw: 90, Health: 100}, DeltaPlayer{Pos: PlayerPos{X: 10.5, Y: 2, Z: -30}, Yaw: 95, Health: 100}),
		deltaCase("delta-quat-relative", Spinner{Rot: q(0, 0, 0, 1)}, Spinner{Rot: q(0.0087, 0, 0, 0.99996)}),
		deltaCase("delta-entities", gWorld{T: 1, Es: []gEntity{{1, 1}, {2, 2}, {3, 3}, {5, 5}}, L: []uint8{1, 2}},
			gWorld{T: 2, Es: []gEntity{{1, 1}, {3, 30}, {4, 4}, {5, 5}, {9, 9}}, L: []uint8{1, 3, 4}}),
		deltaCase("delta-containers", gContainers{Arr: [3]gLeaf{{1}, {2}, {3}}, Sl: []gLeaf{{1}}, P: &gLeaf{1}, M: map[string]uint8{"a": 1, "b": 2}},
			gContainers{Arr: [3]gLeaf{{1}, {2}, {4}}, Sl: []gLeaf{{1}, {2}}, Q: &gLeaf{3}, M: map[string]uint8{"a": 1, "c": 3}}),
		unionCase(),
		// the spec's mended points (docs/wire-format.md)
		deltaCase("delta-grow-bitlen", gGrow{S: []uint16{1, 2}}, gGrow{S: []uint16{1, 3, 4, 5}}),
		deltaCase("delta-grow-fixed", gGrowFixed{F: []float32{1}}, gGrowFixed{F: []float32{1, -2.5, 3}}),
		fullCase("group-mixed-signs", gMixedGroup{A: -1, B: 3}),
		fullCase("group-mixed-signs-positive", gMixedGroup{A: 1, B: 3}),
		deltaCase("delta-group-members", Adaptive{A: 1, B: 25, C: 3}, Adaptive{A: 1, B: -25, C: 4}),
		deltaCase("delta-empty-index-sets", gEmptySets{}, gEmptySets{M: map[uint8]uint8{1: 2}, S: []uint8{3}}),
		deltaCase("delta-entities-maxlen", gEntityMax{Es: []gEntity{{1, 1}, {2, 2}}}, gEntityMax{Es: []gEntity{{2, 2}, {7, 7}, {8, 8}}}),
		fullCase("float32-rounding", gRounding{Q: 0.05, F: 0.3, R: q(0, 0.5, 0, 0.8660254)}),
		fullCase("uint8-slices", gUint8s{B: []uint8{1, 2}, A: [3]uint8{1, 2, 3}, N: []uint8{1, 2}, H: 100}),
		deltaCase("delta-window-offgrid", DeltaTransform{X: 10.04, Y: 1, Z: -20, Yaw: 45, Pitch: 10}, DeltaTransform{X: 10.56, Y: 1, Z: -20, Yaw: 45, Pitch: 10}),
		deltaCase("delta-quat-relative-offgrid", Spinner{Rot: q(0.01, 0, 0, 0.99995)}, Spinner{Rot: q(0.02, 0, 0, 0.9998)}),
		// wire version 2: the largest component changes (w to x), the
		// absolute mode, and three quaternions of one field in one
		// message (the running mean carries from one to the next).
		deltaCase("delta-quat-switch", Spinner{Rot: q(0.7, 0.1, 0, 0.7071)}, Spinner{Rot: q(0.7121, 0.1, 0, 0.695)}),
		deltaCase("delta-quat-absolute", Spinner{Rot: q(0, 0, 0, 1)}, Spinner{Rot: q(0.5, -0.5, 0.5, 0.5)}),
		deltaCase("delta-quat-running-mean",
			gSpinners{S: []Spinner{{Rot: q(0, 0, 0, 1)}, {Rot: q(0.6, 0, 0.8, 0)}, {Rot: q(0.5, 0.5, 0.5, 0.5)}}},
			gSpinners{S: []Spinner{{Rot: q(0.03, 0.02, 0, 0.9994)}, {Rot: q(0.62, 0.01, 0.7846, 0)}, {Rot: q(0.5, 0.5, 0.5, 0.5)}}}),
		// windowed values of three elements in one message: each axis's
		// running mean carries from one element to the next
		deltaCase("delta-window-running-mean",
			gTransforms{S: []DeltaTransform{{X: 10, Y: 1, Z: -20}, {X: 11, Y: 2, Z: -21}, {X: 12, Y: 3, Z: -22}}},
			gTransforms{S: []DeltaTransform{{X: 10.3, Y: 1, Z: -20.1}, {X: 11.4, Y: 2, Z: -21.1}, {X: 12.3, Y: 2.9, Z: -22.2}}}),
		// two absolute quaternions (the second coded 0 after the first),
		// then a relative one (coded 10 after an absolute one)
		deltaCase("delta-quat-after-absolute",
			gSpinners{S: []Spinner{{Rot: q(0, 0, 0, 1)}, {Rot: q(0.6, 0, 0.8, 0)}, {Rot: q(0.5, 0.5, 0.5, 0.5)}}},
			gSpinners{S: []Spinner{{Rot: q(0.5, -0.5, 0.5, 0.5)}, {Rot: q(0, 0.6, 0, 0.8)}, {Rot: q(0.51, 0.5, 0.49, 0.5)}}}),
		// the stranger's spec: a grid anchored at zero whose min is not a
		// multiple of the step, so that a window's baseline index is
		// K(v) - kmin, not floor((v - A)/step + 0.5)
		withNote(deltaCase("delta-window-anchored-offgrid", gOffGrid{A: 0.3}, gOffGrid{A: 0.4}),
			"the baseline 0.3 is index K(0.3) - kmin = 3 - (-2) = 5; plus the difference 1 is index 6, 0.4 (floor((0.3 - A)/step + 0.5) would give 6, and 7 decodes as 0.5)"),
		// debug mode: a sentinel 0xA5 after each top-level field (once
		// after a group in a full message), none inside the nested struct
		withNote(fullCaseOf("debug", MustFor[gDebug]().WithDebug(true), gDebug{A: 5, P: gLeaf{X: 2}, B: -1, C: 3}),
			"debug: true: 0xA5 after A, after P (none after P.X), and once after the group B, C"),
		withNote(deltaCaseOf("delta-debug", MustFor[gDebug]().WithDebug(true), gDebug{A: 5, P: gLeaf{X: 2}, B: -1, C: 3}, gDebug{A: 5, P: gLeaf{X: 3}, B: -1, C: 4}),
			"debug: true: 0xA5 after each top-level field's changed bit and value delta, the group's members one by one"),
		// wire version 4: a window's first difference in its short form,
		// a later one Rice-coded, one escaped; a quaternion's first
		// difference in the Exp-Golomb escape
		deltaCase("delta-window-adaptive", gWides{S: []wideWindow{{X: 1, Y: 2}, {X: 3, Y: 4}, {X: 5, Y: 6}}},
			gWides{S: []wideWindow{{X: 1.05, Y: 2.3}, {X: 3.5, Y: 4.01}, {X: 6.9, Y: 6}}}),
		deltaCase("delta-quat-escape", Spinner{Rot: q(0, 0, 0, 1)}, Spinner{Rot: q(0.0523, 0, 0, 0.9986)}),
		// windows on elements: a changed array of windowed scalars is
		// sent element by element (a changed bit each, then the element's
		// window), one element in its window, one beyond it; slices,
		// pointers and nested arrays of windowed scalars
		withNote(deltaCase("delta-window-array", pos3{Pos: [3]float32{10, 5, 10}, Yaw: 60}, pos3{Pos: [3]float32{10.5, 5, 30}, Yaw: 60}),
			"Pos changed (1 bit), then [0] changed and in the window (1, 1), +5 steps as 5 - (-10) = 15 in 5 bits; [1] unchanged (0); [2] changed and beyond the window (1, 0), its index in full in 11 bits; Yaw unchanged (0): 23 bits"),
		deltaCase("delta-window-elements",
			winElems{S: []int16{5, -7, 300}, P: ptrTo(1.25), A: [2][2]uint16{{1, 2}, {3, 4000}}, F: [2]float32{1, 2}},
			winElems{S: []int16{9, -7, 290, 4}, P: ptrTo(1.5), A: [2][2]uint16{{1, 2}, {5, 4000}}, F: [2]float32{1, 3.5}}),
		// prediction from two baselines: at constant velocity each
		// predicted value costs its changed bit; a turn costs the
		// difference from the prediction
		withNote(predictedCase("delta-predicted", gPred{X: 10, Y: -3, Hp: 50}, gPred{X: 10.5, Y: -2.75, Hp: 50}, gPred{X: 11, Y: -2.75, Hp: 50}),
			"value is [older base current]; X predicted 11 (index 2*11050 - 11000 = 11100): unchanged (0); Y predicted -2.5, current -2.75: changed (1), in the window (1), -25 steps in the window's first short form; Hp unchanged (0)"),
		withNote(predictedCase("delta-predicted-entities",
			gPredWorld{Bodies: []gPredBody{{ID: 1, X: 0, Hp: 9}, {ID: 3, X: 10, Hp: 5}, {ID: 4, X: -5, Hp: 1}}, Aim: [2]float32{0, 0.5}, Spin: -15},
			gPredWorld{Bodies: []gPredBody{{ID: 1, X: 2, Hp: 8}, {ID: 2, X: 7}, {ID: 4, X: -6, Hp: 1}}, Aim: [2]float32{0.25, 0.75}, Spin: -16},
			gPredWorld{Bodies: []gPredBody{{ID: 1, X: 4, Hp: 7}, {ID: 2, X: 7.5}, {ID: 4, X: -7, Hp: 1}, {ID: 5, X: 1}}, Aim: [2]float32{0.5, 1}, Spin: -16}),
			"value is [older base current]; entities pair by id (2 has no partner in older: predicted as it is; 3 is gone); Aim[1] and Spin clamp to their bounds"),
		withNote(predictedCase("delta-predicted-quat",
			gPredSpin{Rot: q(0, 0, 0, 1), Hp: 50},
			gPredSpin{Rot: q(0, 0, 0.42261826, 0.90630779), Hp: 50},
			gPredSpin{Rot: q(0.01, 0, 0.76604444, 0.64278761), Hp: 50}),
			"value is [older base current]; a turn of 50 degrees about z, after the identity, predicts 100 degrees (2(r0.r1)r1 - r0, packed); current tilts by 0.01 in x: changed (1), then its relative quaternion against the prediction; Hp unchanged (0)"),
	}, goldenModelCases()...)
}

func withNote(g goldenCase, note string) goldenCase {
	g.note = note
	return g
}

func unionCase() goldenCase {
	u, err := NewUnion(MsgMove{}, MsgChat{}, MsgFire{})
	if err != nil {
		panic(err)
	}
	msgs := []any{MsgFire{Weapon: 9}, MsgChat{Text: "gg"}, MsgMove{X: 1.5, Y: -2}}
	return goldenCase{
		name:   "union",
		show:   msgs,
		note:   "three tagged messages written one after another by Union.Encode, with no count before them (Union.EncodeCount would write one), then padded once",
		schema: u.Schema,
		enc: func() ([]byte, int, error) {
			var w bits.Writer
			for _, m := range msgs {
				if err := u.Encode(&w, m); err != nil {
					return nil, 0, err
				}
			}
			return w.Bytes(), w.Len(), nil
		},
		dec: func(data []byte) (any, error) {
			r := bits.NewReader(data)
			var out []any
			for range msgs {
				v, err := u.Decode(r)
				if err != nil {
					return nil, err
				}
				out = append(out, reflect.ValueOf(v).Elem().Interface())
			}
			return out, nil
		},
		want: func() any { return msgs },
	}
}

// showValue prints a value like %+v, but pointers as &{...} and map
// entries in key order, so the file does not depend on addresses.
func showValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return "&" + showValue(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		return showValue(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return v.Interface().(time.Time).Format(time.RFC3339Nano)
		}
		parts := make([]string, 0, v.NumField())
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			parts = append(parts, v.Type().Field(i).Name+":"+showValue(v.Field(i)))
		}
		return v.Type().Name() + "{" + strings.Join(parts, " ") + "}"
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return "nil"
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = showValue(v.Index(i))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.Map:
		keys := v.MapKeys()
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%v:%s", k, showValue(v.MapIndex(k)))
		}
		sort.Strings(parts)
		return "map[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%v", v.Interface())
}

func renderGolden(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# bitwire golden vectors: the frozen wire format (see docs/wire-format.md).\n")
	b.WriteString("# Each block: the case, its Go value(s) (for a delta: [baseline current]), the size\n")
	b.WriteString("# in bits, the bytes in hex, and what a receiver decodes (from the quantized baseline).\n")
	b.WriteString("# A delta's block also gives, in hex, the full message (as Marshal writes it) of its\n")
	b.WriteString("# baseline (base) and of what the receiver decodes (result), and a predicted delta's\n")
	b.WriteString("# block that of its older baseline (older); a note says what the\n")
	b.WriteString("# value text cannot. Values are printed as docs/wire-format.md, \"Golden files\", says.\n")
	b.WriteString("# The schema of each case's type is in schemas/<case>.json.\n")
	for _, gc := range goldenCases() {
		data, n, err := gc.enc()
		require.NoError(t, err, gc.name)
		out, err := gc.dec(data)
		require.NoError(t, err, gc.name)
		fmt.Fprintf(&b, "\n[%s]\nvalue   = %s\nbits    = %d\nhex     = %s\ndecoded = %s\n", gc.name, showValue(reflect.ValueOf(gc.show)), n, hex.EncodeToString(data), showValue(reflect.ValueOf(out)))
		if gc.older != nil {
			older, err := gc.marshal(gc.older)
			require.NoError(t, err, gc.name)
			fmt.Fprintf(&b, "older   = %s\n", hex.EncodeToString(older))
		}
		if gc.base != nil {
			base, err := gc.marshal(gc.base)
			require.NoError(t, err, gc.name)
			result, err := gc.marshal(out)
			require.NoError(t, err, gc.name)
			fmt.Fprintf(&b, "base    = %s\nresult  = %s\n", hex.EncodeToString(base), hex.EncodeToString(result))
		}
		if gc.note != "" {
			fmt.Fprintf(&b, "note    = %s\n", gc.note)
		}
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden", "codings.txt")
	got := renderGolden(t)
	golden.Check(t, path, got, *updateGolden, "the wire format", "go test . -run Golden -update")

	checkGoldenSchemas(t)

	// and each golden vector decodes to the quantized value
	for _, gc := range goldenCases() {
		data, _, err := gc.enc()
		require.NoError(t, err)
		out, err := gc.dec(data)
		require.NoError(t, err, gc.name)
		require.Equal(t, gc.want(), out, gc.name)
	}
}

// checkGoldenSchemas keeps the schema of every golden case beside the
// vectors (testdata/golden/schemas/<case>.json), so that an implementation
// in another language knows each case's types without guessing, and checks
// that each file's fingerprint is what its own content hashes to.
func checkGoldenSchemas(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "schemas")
	if *updateGolden {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	want := map[string]bool{}
	for _, gc := range goldenCases() {
		js, err := json.MarshalIndent(gc.schema(), "", "  ")
		require.NoError(t, err)
		js = append(js, '\n')
		path := filepath.Join(dir, gc.name+".json")
		want[gc.name+".json"] = true
		golden.Check(t, path, string(js), *updateGolden, "the schema of "+gc.name, "go test . -run Golden -update")

		var s Schema
		require.NoError(t, json.Unmarshal(js, &s))
		fp, err := SchemaFingerprint(&s) // with the model's hash mixed in, when it has one
		require.NoError(t, err, gc.name)
		require.Equal(t, s.Fingerprint, fmt.Sprintf("%016x", fp), gc.name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.True(t, want[e.Name()], "%s has no golden case", e.Name())
	}
}

func ptrTo[T any](v T) *T { return &v }
