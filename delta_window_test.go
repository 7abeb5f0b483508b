package bitwire

import (
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

// wideWindow is a body with the demo's windows: ±2 and ±1 at 0.01 (K0 = 4
// and 3: the adaptive forms), and a plain twin.
type wideWindow struct {
	X float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
	Y float32 `net:"q,min=-2,max=62,prec=0.01,dmin=-1,dmax=1"`
}

type widePlain struct {
	X float32 `net:"q,min=-128,max=128,prec=0.01"`
	Y float32 `net:"q,min=-2,max=62,prec=0.01"`
}

// TestWindowNeverCostsMore: a move inside a window never costs more than
// the same move without one, and at most one bit more than the window's
// plain fixed coding in a message holding only that value (wire version
// 3 wrote 41 bits for the seed transform's moves of 0.6 to 1.0, against
// 35 without a window).
func TestWindowNeverCostsMore(t *testing.T) {
	base := DeltaTransform{X: 10, Y: 5, Z: 10, Yaw: 60, Pitch: 30}
	plainBase := Transform{X: 10, Y: 5, Z: 10, Yaw: 60, Pitch: 30}
	for d := -10; d <= 10; d++ {
		if d == 0 {
			continue
		}
		m := float32(d) / 10
		cur, plain := base, plainBase
		cur.X, cur.Y, cur.Z = base.X+m, base.Y+m, base.Z+m
		plain.X, plain.Y, plain.Z = cur.X, cur.Y, cur.Z
		got := deltaBits(t, &base, &cur)
		require.Equal(t, 23, got, "move %.1f", m) // 2 + 3 × (changed, window, 5 bits)
		require.LessOrEqual(t, got, deltaBits(t, &plainBase, &plain))
	}
	// The seed's headline: (10, 5, 10, 60, 30) -> (10.5, 5.5, 10.5, 60, 30).
	cur := base
	cur.X, cur.Y, cur.Z = 10.5, 5.5, 10.5
	require.Equal(t, 23, deltaBits(t, &base, &cur))

	rng := rand.New(rand.NewSource(3))
	for range 2000 {
		b := wideWindow{X: float32(rng.Float64()*250 - 125), Y: float32(rng.Float64()*60 - 1)}
		c := b
		c.X += float32(min(max(rng.NormFloat64()*0.5, -1.99), 1.99)) // in the windows
		c.Y += float32(min(max(rng.NormFloat64()*0.3, -0.99), 0.99))
		c.X, c.Y = min(max(c.X, -128), 128), min(max(c.Y, -2), 62)
		got := deltaBits(t, &b, &c)
		pb, pc := widePlain(b), widePlain(c)
		require.LessOrEqual(t, got, deltaBits(t, &pb, &pc), "%+v -> %+v: %d", b, c, deltaBits(t, &pb, &pc))
		// In a window, each changed value at most its changed bit, the
		// window bit and its fixed coding (9 and 8 bits) plus one.
		require.LessOrEqual(t, got, 2+9+1+2+8+1)
	}
}

// fuzzWindows holds windowed values and quaternions, one of each reached
// through a slice (the state carried from value to value in a message).
type fuzzWindows struct {
	A    wideWindow
	Seed DeltaTransform
	R    [4]float32       `net:"quat,bits=9"`
	S    []fuzzWindowElem `net:",maxlen=16"`
}

type fuzzWindowElem struct {
	X   int32      `net:"range,min=-100000,max=100000,dmin=-5000,dmax=5000"`
	Fx  float64    `net:"fixed,prec=0.01,dmin=-3,dmax=3"`
	Rot [4]float32 `net:"quat,bits=11"`
}

// FuzzUnmarshalDeltaWindows fuzzes the delta decoder on windows' adaptive
// forms and quaternions' Exp-Golomb escapes: no input may panic, and
// whatever decodes re-encodes to a delta that decodes to the same.
func FuzzUnmarshalDeltaWindows(f *testing.F) {
	c := MustFor[fuzzWindows]()
	rng := rand.New(rand.NewSource(4))
	base := fuzzWindows{A: wideWindow{X: 3, Y: 4}, Seed: DeltaTransform{X: 10, Y: 5, Z: 10, Yaw: 60, Pitch: 30}, R: [4]float32{0, 0, 0, 1}}
	for i := range 4 {
		q := randomQuat(rng)
		base.S = append(base.S, fuzzWindowElem{X: int32(i * 1000), Fx: float64(i), Rot: [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}})
	}
	if err := c.Quantize(&base); err != nil {
		f.Fatal(err)
	}
	for range 4 {
		cur := base
		cur.S = append([]fuzzWindowElem(nil), base.S...)
		cur.A.X += float32(rng.NormFloat64())
		cur.Seed.X += float32(rng.NormFloat64())
		q := randomQuat(rng)
		cur.R = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
		for i := range cur.S {
			cur.S[i].X += int32(rng.NormFloat64() * 2000)
			cur.S[i].Fx += rng.NormFloat64()
			cur.S[i].Rot[0] += 0.05 * float32(rng.NormFloat64())
			cur.S[i].Rot = [4]float32(normQuat32(cur.S[i].Rot))
		}
		data, err := c.MarshalDelta(&base, &cur)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out fuzzWindows
		if err := c.UnmarshalDelta(data, &base, &out); err != nil {
			return
		}
		again, err := c.MarshalDelta(&base, &out)
		if err != nil {
			t.Fatalf("decoded value does not re-encode: %v", err)
		}
		var out2 fuzzWindows
		if err := c.UnmarshalDelta(again, &base, &out2); err != nil {
			t.Fatalf("re-encoded delta does not decode: %v", err)
		}
		if !c.Equal(&out, &out2) {
			t.Fatalf("delta round trip changed the value")
		}
	})
}

func normQuat32(q [4]float32) [4]float32 {
	var n float64
	for _, x := range q {
		n += float64(x) * float64(x)
	}
	n = 1 / sqrt(n)
	return [4]float32{float32(float64(q[0]) * n), float32(float64(q[1]) * n), float32(float64(q[2]) * n), float32(float64(q[3]) * n)}
}

// TestLayoutShowsWindowCost: Layout gives what an in-window difference
// costs after its window bit, the adaptive code's bounds where it has one
// (the schema's delta.minBits and delta.maxBits), not only the fixed
// width.
func TestLayoutShowsWindowCost(t *testing.T) {
	l := MustFor[wideWindow]().Layout()
	require.Contains(t, l, "dmin=-2 dmax=2 (steps -200..200, 3..14 bits; first of a message at most 10)")
	require.Contains(t, l, "dmin=-1 dmax=1 (steps -100..100, 3..12 bits; first of a message at most 9)")
	require.Contains(t, MustFor[DeltaTransform]().Layout(), "dmin=-1 dmax=1 (steps -10..10, 5 bits)")
	d := MustFor[wideWindow]().Schema().Types[0].Fields[0].Node.Delta
	require.Equal(t, DeltaParams{DMin: -2, DMax: 2, Lo: -200, Hi: 200, Bits: 9, FirstK: 4, Unary: 5, MinBits: 3, MaxBits: 14}, *d)
}

// pos3 is a position as an array, with the windows of DeltaTransform's X
// and Z: steps -10..10 of 0.1, coded in their plain 5 bits.
type pos3 struct {
	Pos [3]float32 `net:"q,min=-100,max=100,prec=0.1,dmin=-1,dmax=1"`
	Yaw float32    `net:"q,min=0,max=360,prec=0.1"`
}

// TestWindowOnArray: a window on an array of scalars applies to each
// element, and a changed array's delta is what a struct of its elements
// would send: a changed bit an element, then the element's window bit and
// difference, or its value in full (11 bits) beyond the window.
func TestWindowOnArray(t *testing.T) {
	base := pos3{Pos: [3]float32{10, 5, 10}, Yaw: 60}
	cur := base
	cur.Pos[0] = 10.5 // in the window: changed, window, 5 bits
	cur.Pos[2] = 30   // beyond it: changed, window, 11 bits
	// Pos changed, then 7 + 1 + 13 for its elements, Yaw unchanged.
	require.Equal(t, 1+7+1+13+1, deltaBits(t, &base, &cur))
	cur = base
	cur.Pos = [3]float32{10.5, 5.5, 10.5}
	require.Equal(t, 1+3*7+1, deltaBits(t, &base, &cur))
	require.Equal(t, 2, deltaBits(t, &base, &base))
	c := MustFor[pos3]()
	require.True(t, c.Schema().Types[0].Fields[0].Node.DeltaByElement())
	require.False(t, MustFor[gFixed]().Schema().Types[0].Fields[1].Node.DeltaByElement()) // an array without a window
	require.Contains(t, c.Layout(), "array[3]    33  deltas element by element")

	// Any of them, at random, round trip (deltaBits decodes).
	rng := rand.New(rand.NewSource(5))
	for range 500 {
		var b pos3
		for i := range b.Pos {
			b.Pos[i] = float32(rng.Float64()*200 - 100)
		}
		c := b
		for i := range c.Pos {
			switch rng.Intn(3) {
			case 0:
				c.Pos[i] += float32(rng.NormFloat64() * 0.5)
			case 1:
				c.Pos[i] = float32(rng.Float64()*200 - 100)
			}
			c.Pos[i] = min(max(c.Pos[i], -100), 100)
		}
		deltaBits(t, &b, &c)
	}
}

// winElems holds windows on the elements of slices, pointers and arrays of
// arrays, and on integer codings.
type winElems struct {
	S  []int16             `net:"range,min=-1000,max=1000,dmin=-8,dmax=7,maxlen=8"`
	P  *float64            `net:"q,min=-10,max=10,prec=0.01,dmin=-1,dmax=1"`
	A  [2][2]uint16        `net:"bits=12,dmin=-4,dmax=4"`
	F  [2]float32          `net:"fixed,prec=0.5,dmin=-2,dmax=2"`
	In struct{ V [2]int8 } `net:"range,min=-100,max=100,dmin=-3,dmax=3"`
}

// TestWindowOnElements: the elements of slices, pointers and nested arrays
// carry the window of their container's tag, in deltas that round trip.
func TestWindowOnElements(t *testing.T) {
	c := MustFor[winElems]()
	require.Contains(t, c.Layout(), "dmin=-8 dmax=7")
	rng := rand.New(rand.NewSource(9))
	small := func(v, d, lo, hi int) int { return min(max(v+rng.Intn(2*d+1)-d, lo), hi) }
	for range 500 {
		var b winElems
		for range rng.Intn(5) {
			b.S = append(b.S, int16(rng.Intn(2001)-1000))
		}
		if rng.Intn(3) > 0 {
			x := rng.Float64()*20 - 10
			b.P = &x
		}
		for i := range b.A {
			for j := range b.A[i] {
				b.A[i][j] = uint16(rng.Intn(4096))
			}
		}
		b.F = [2]float32{float32(rng.Intn(100)) / 2, float32(rng.Intn(100)) / 2}
		b.In.V = [2]int8{int8(rng.Intn(201) - 100), int8(rng.Intn(201) - 100)}
		c := b
		c.S = append([]int16(nil), b.S...)
		for i := range c.S {
			if rng.Intn(2) == 0 {
				c.S[i] = int16(small(int(c.S[i]), 10, -1000, 1000))
			}
		}
		if rng.Intn(4) == 0 {
			c.S = append(c.S, 7)
		}
		if b.P != nil && rng.Intn(2) == 0 {
			x := min(max(*b.P+rng.NormFloat64(), -10), 10)
			c.P = &x
		}
		c.A[rng.Intn(2)][rng.Intn(2)] = uint16(small(int(b.A[1][1]), 6, 0, 4095))
		c.F[rng.Intn(2)] += 1.5
		c.In.V[rng.Intn(2)] = int8(small(int(b.In.V[0]), 5, -100, 100))
		deltaBits(t, &b, &c)
	}
}

// TestWindowOnContainersRefused: a window on an array of structs or on a
// map is refused with a message that names the container.
func TestWindowOnContainersRefused(t *testing.T) {
	type vec struct{ X, Y float32 }
	type arr struct {
		V [2]vec `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1"`
	}
	_, err := For[arr]()
	require.ErrorIs(t, err, ErrBadTag)
	require.ErrorContains(t, err, "arr.V: ")
	require.ErrorContains(t, err, "dmin/dmax on an array of bitwire.vec")
	type mp struct {
		M map[uint8]float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1,maxlen=4"`
	}
	_, err = For[mp]()
	require.ErrorIs(t, err, ErrBadTag)
	require.ErrorContains(t, err, "dmin/dmax on a map")
	type str struct {
		S []string `net:"dmin=-1,dmax=1"`
	}
	_, err = For[str]()
	require.ErrorIs(t, err, ErrBadTag)
	require.ErrorContains(t, err, "str.S[]: bitwire: bad net tag: option dmin/dmax does not apply to string")
}

// gWides is the type of golden vector delta-window-adaptive.
type gWides struct{ S []wideWindow }

// TestWindowOnArrayModel: a model trained on a windowed array codes its
// elements' differences with its window table, and its deltas round trip
// in fewer bits than without it.
func TestWindowOnArrayModel(t *testing.T) {
	c := MustFor[pos3]()
	rng := rand.New(rand.NewSource(11))
	pair := func() (pos3, pos3) {
		var b pos3
		for i := range b.Pos {
			b.Pos[i] = float32(rng.Intn(1800)-900) / 10
		}
		cur := b
		cur.Pos[0] += 0.1
		cur.Pos[2] -= 0.1
		return b, cur
	}
	tr := c.NewTrainer()
	for range 400 {
		b, cur := pair()
		require.NoError(t, tr.Add(&b, &cur))
	}
	m, err := tr.Model()
	require.NoError(t, err)
	mc := c.WithModel(m)
	require.NoError(t, mc.ModelErr())
	plain, small := 0, 0
	for range 200 {
		b, cur := pair()
		data, err := mc.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		var got pos3
		require.NoError(t, mc.UnmarshalDelta(data, &b, &got))
		want := cur
		require.NoError(t, c.Quantize(&want))
		require.Equal(t, want, got)
		var w bits.Writer
		require.NoError(t, mc.EncodeDelta(&w, &b, &cur))
		small += w.Len()
		plain += deltaBits(t, &b, &cur)
	}
	require.Equal(t, 200*(1+7+1+7+1), plain)
	require.Less(t, small, plain)
	t.Logf("%.2f bits a delta with the model, %.2f without", float64(small)/200, float64(plain)/200)
}
