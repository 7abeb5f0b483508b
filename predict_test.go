package bitwire

import (
	"errors"
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pBody moves in a straight line: its position is predicted, its health
// is not.
type pBody struct {
	X  float32 `net:"q,min=-100,max=100,prec=0.01,pred"`
	Y  float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1,pred"`
	Hp uint8   `net:"range,min=0,max=100"`
}

// pBodyPlain is pBody without pred.
type pBodyPlain struct {
	X  float32 `net:"q,min=-100,max=100,prec=0.01"`
	Y  float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1"`
	Hp uint8   `net:"range,min=0,max=100"`
}

// pWorld holds predicted values in every container prediction walks.
type pWorld struct {
	Tick   uint32 `net:"bits=32"`
	Bodies []pEntity
	Pos    [3]float32 `net:"q,min=-64,max=64,bits=12,pred"`
	Path   []int16    `net:"range,min=-300,max=300,pred,maxlen=8"`
	Aim    *pAim
	Wide   int64  `net:"bits=64,pred"`
	Count  uint64 `net:"bits=64,pred"`
	Small  int8   `net:"bits=3,pred"`
	Name   string
}

type pEntity struct {
	ID  uint16  `net:"bits=16,id"`
	X   float32 `net:"q,min=-100,max=100,prec=0.5,dmin=-8,dmax=8,pred"`
	Rot uint8   `net:"bits=6,pred"`
	Hp  uint8   `net:"range,min=0,max=100"`
}

type pAim struct {
	Pitch float64 `net:"q,min=-90,max=90,bits=10,pred"`
	Fire  bool
}

func TestPredictedConstantVelocity(t *testing.T) {
	c := MustFor[pBody]()
	older := pBody{X: 10, Y: -3, Hp: 50}
	base := pBody{X: 10.5, Y: -2.75, Hp: 50}
	cur := pBody{X: 11, Y: -2.5, Hp: 50}
	data, n := predictedBits(t, c, &older, &base, &cur)
	assert.Equal(t, 3, n, "every field equals its prediction: three changed bits")
	assert.Equal(t, []byte{0}, data)
	var out pBody
	require.NoError(t, c.UnmarshalPredicted(data, &older, &base, &out))
	assert.Equal(t, cur, out)

	// The same move with one baseline: X changed (1+14 bits), Y in its
	// window (1+1+8: a difference of 25 steps), Hp unchanged.
	plain := MustFor[pBodyPlain]()
	var w bits.Writer
	pb, pc := pBodyPlain(base), pBodyPlain(cur)
	require.NoError(t, plain.EncodeDelta(&w, &pb, &pc))
	assert.Greater(t, w.Len(), 3)
	w.Reset(nil)
	require.NoError(t, c.EncodeDelta(&w, &base, &cur))
	plainBits := w.Len()
	w.Reset(nil)
	require.NoError(t, plain.EncodeDelta(&w, &pb, &pc))
	assert.Equal(t, w.Len(), plainBits, "pred changes nothing in a delta from one baseline")

	// A turn: X keeps its speed, Y stops. Y is written against its
	// prediction -2.25: its window holds the difference of -25 steps.
	cur2 := pBody{X: 11, Y: -2.75, Hp: 50}
	data, n = predictedBits(t, c, &older, &base, &cur2)
	require.NoError(t, c.UnmarshalPredicted(data, &older, &base, &out))
	assert.Equal(t, cur2, out)
	var one bits.Writer
	require.NoError(t, c.EncodeDelta(&one, &older, &older))
	assert.Equal(t, 3, one.Len())
	assert.Less(t, n, plainBits)
}

// predictedBits encodes cur against older and base by every API form and
// checks they agree; it returns the bytes and their bit length.
func predictedBits[T any](t *testing.T, c *Codec[T], older, base, cur *T) ([]byte, int) {
	t.Helper()
	var w bits.Writer
	require.NoError(t, c.EncodePredicted(&w, older, base, cur))
	m, err := c.MarshalPredicted(older, base, cur)
	require.NoError(t, err)
	a, err := c.AppendPredicted([]byte{0xAB}, older, base, cur)
	require.NoError(t, err)
	assert.Equal(t, w.Bytes(), m)
	assert.Equal(t, append([]byte{0xAB}, m...), a)
	var out T
	r := bits.NewReader(w.Bytes())
	require.NoError(t, c.DecodePredicted(r, older, base, &out))
	assert.Equal(t, w.Len(), r.Pos())
	return m, w.Len()
}

func TestPredictedFallsBackToOneBaseline(t *testing.T) {
	c := MustFor[pBody]()
	base := pBody{X: 10.5, Y: -2.75, Hp: 50}
	cur := pBody{X: 11, Y: -2.5, Hp: 40}
	d, err := c.MarshalDelta(&base, &cur)
	require.NoError(t, err)
	p, err := c.MarshalPredicted(nil, &base, &cur)
	require.NoError(t, err)
	assert.Equal(t, d, p, "no older baseline: the plain delta")
	p, err = c.MarshalPredicted(&base, &base, &cur)
	require.NoError(t, err)
	assert.Equal(t, d, p, "older equal to base predicts no motion")
	assert.True(t, c.Predicts())
	assert.False(t, MustFor[pBodyPlain]().Predicts())
	var out pBody
	require.NoError(t, c.UnmarshalPredicted(d, nil, &base, &out))
	assert.Equal(t, cur, out)
}

// TestPredictedRule checks the prediction value by value against the rule
// of wire-format.md: base + (base - older) in keys, clamped to the keys the
// field holds; and that entities pair by id, slices and arrays by index.
func TestPredictedRule(t *testing.T) {
	c := MustFor[pWorld]()
	older := pWorld{
		Bodies: []pEntity{{ID: 1, X: 0, Rot: 60}, {ID: 3, X: 10, Rot: 1}, {ID: 4, X: 5}},
		Pos:    [3]float32{0, 60, -60},
		Path:   []int16{100, -290},
		Aim:    &pAim{Pitch: -90 + 100*pitchStep},
		Wide:   math.MinInt64 + 5, Count: 7, Small: -3,
	}
	base := pWorld{
		Bodies: []pEntity{{ID: 1, X: 1, Rot: 62}, {ID: 2, X: 50}, {ID: 3, X: 9.5, Rot: 0}},
		Pos:    [3]float32{1, 63, -62},
		Path:   []int16{150, -295, 7},
		Aim:    &pAim{Pitch: -90 + 110*pitchStep},
		Wide:   math.MinInt64 + 2, Count: math.MaxUint64 - 1, Small: 2,
	}
	want := base
	want.Bodies = []pEntity{{ID: 1, X: 2, Rot: 63}, {ID: 2, X: 50}, {ID: 3, X: 9, Rot: 0}}
	want.Pos = [3]float32{2, 64, -64} // steps of 128/4095: 64 and -64 clamp
	want.Path = []int16{200, -300, 7}
	want.Aim = &pAim{Pitch: -90 + 120*pitchStep}
	want.Wide, want.Count, want.Small = math.MinInt64, math.MaxUint64, 3

	pred, ps := predicted(c.p, unsafe.Pointer(&older), unsafe.Pointer(&base))
	defer ps.release(pred)
	got := *(*pWorld)(pred)
	require.NoError(t, c.Quantize(&want))
	q := got
	require.NoError(t, c.Quantize(&q))
	assert.Equal(t, want, q)
	assert.NotSame(t, &base.Bodies[0], &got.Bodies[0], "the prediction shares no memory with base")
	assert.Equal(t, float32(1), base.Bodies[0].X, "base is left as it was")

	// The message of cur = the prediction costs its changed bits only.
	data, n := predictedBits(t, c, &older, &base, &q)
	var out pWorld
	require.NoError(t, c.UnmarshalPredicted(data, &older, &base, &out))
	assert.Equal(t, q, out)
	assert.Equal(t, 9, n, "nine fields, each equal to its prediction")
}

// pitchStep is the grid step of pAim.Pitch.
const pitchStep = 180.0 / 1023

func TestExtrapolate(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	for _, tc := range []struct {
		k1, k0, lo, hi uint64
		signed         bool
		want           uint64
	}{
		{5, 3, 0, 10, false, 7},
		{5, 3, 0, 6, false, 6},
		{3, 5, 0, 10, false, 1},
		{3, 7, 0, 10, false, 0},
		{0, math.MaxUint64, 0, math.MaxUint64, false, 0},
		{math.MaxUint64, 0, 0, math.MaxUint64, false, math.MaxUint64},
		{u(-2), u(-5), u(-10), 10, true, 1},
		{u(-2), u(5), u(-10), 10, true, u(-9)},
		{u(-2), u(9), u(-10), 10, true, u(-10)},
		{u(maxI), u(minI), u(minI), u(maxI), true, u(maxI)},
		{u(minI), u(maxI), u(minI), u(maxI), true, u(minI)},
		{u(minI + 1), u(minI + 3), u(minI), u(maxI), true, u(minI)},
		{4, 4, 0, 4, false, 4},
	} {
		assert.Equal(t, tc.want, extrapolate(tc.k1, tc.k0, tc.lo, tc.hi, tc.signed), "%+v", tc)
	}
}

func u(i int64) uint64 { return uint64(i) }

// TestPredictedRoundTrip codes random triples of worlds and checks that the
// receiver, holding the quantized baselines, rebuilds the quantized value,
// and that the predicted delta is shorter than the plain one when the
// bodies move at constant velocity (every other case).
func TestPredictedRoundTrip(t *testing.T) {
	c := MustFor[pWorld]()
	rng := rand.New(rand.NewSource(3))
	n := 3000
	if testing.Short() {
		n = 300
	}
	steady := 0
	var lastWant, lastOut pWorld
	for i := 0; i < n; i++ {
		older, base := randPWorld(rng), randPWorld(rng)
		cur := randPWorld(rng)
		if i%2 == 0 { // the same entities, moving on
			base = moved(rng, older)
		}
		for _, v := range []*pWorld{&older, &base} {
			require.NoError(t, c.Quantize(v))
		}
		if i%2 == 0 { // at constant velocity
			cur = advanced(older, base)
		}
		data, err := c.MarshalPredicted(&older, &base, &cur)
		require.NoError(t, err)
		var out pWorld
		require.NoError(t, c.UnmarshalPredicted(data, &older, &base, &out), "case %d", i)
		want := cur
		require.NoError(t, c.Quantize(&want))
		require.Equal(t, want, out, "case %d", i)
		// The last case's value shares no memory with the predicted
		// baseline, whose storage this case reused.
		require.Equal(t, lastWant, lastOut, "case %d's value, after case %d", i-1, i)
		lastWant, lastOut = want, out
		// Decoding into a baseline itself.
		b2 := clonePWorld(base)
		require.NoError(t, c.UnmarshalPredicted(data, &older, &b2, &b2))
		require.Equal(t, want, b2, "case %d", i)
		if i%2 == 0 {
			var wp, wd bits.Writer
			require.NoError(t, c.EncodePredicted(&wp, &older, &base, &cur))
			require.NoError(t, c.EncodeDelta(&wd, &base, &cur))
			if movedAny(base, cur) {
				require.Less(t, wp.Len(), wd.Len(), "case %d", i)
			} else {
				require.Equal(t, wp.Len(), wd.Len(), "case %d", i)
			}
			steady++
		}
	}
	assert.Equal(t, (n+1)/2, steady)
}

func randPWorld(rng *rand.Rand) pWorld {
	w := pWorld{Tick: rng.Uint32(), Wide: int64(rng.Uint64()), Count: rng.Uint64(), Small: int8(rng.Intn(8) - 4), Name: "n"}
	for id := uint16(1); id < 12; id++ {
		if rng.Intn(2) == 0 {
			w.Bodies = append(w.Bodies, pEntity{ID: id, X: rng.Float32()*200 - 100, Rot: uint8(rng.Intn(64)), Hp: uint8(rng.Intn(101))})
		}
	}
	for i := range w.Pos {
		w.Pos[i] = rng.Float32()*128 - 64
	}
	for i := rng.Intn(5); i > 0; i-- {
		w.Path = append(w.Path, int16(rng.Intn(601)-300))
	}
	if rng.Intn(3) > 0 {
		w.Aim = &pAim{Pitch: rng.Float64()*180 - 90, Fire: rng.Intn(2) == 0}
	}
	return w
}

// moved returns w with every predicted value moved by the same step as
// the last move would give, within bounds: the shape of w is kept.
func moved(rng *rand.Rand, w pWorld) pWorld {
	m := clonePWorld(w)
	m.Tick++
	for i := range m.Bodies {
		m.Bodies[i].X = float32(math.Max(-100, math.Min(100, float64(m.Bodies[i].X)+float64(rng.Intn(5)-2))))
	}
	return m
}

// advanced returns base moved on by the move from older to base: what a
// body at constant velocity does next.
func advanced(older, base pWorld) pWorld {
	m := clonePWorld(base)
	m.Tick++
	for i := range m.Bodies {
		x := float64(base.Bodies[i].X) + float64(base.Bodies[i].X-older.Bodies[i].X)
		m.Bodies[i].X = float32(math.Max(-100, math.Min(100, x)))
	}
	return m
}

// movedAny reports whether a body of b is elsewhere in a (same entities).
func movedAny(a, b pWorld) bool {
	for i := range b.Bodies {
		if b.Bodies[i].X != a.Bodies[i].X {
			return true
		}
	}
	return false
}

func clonePWorld(w pWorld) pWorld {
	w.Bodies = append([]pEntity(nil), w.Bodies...)
	w.Path = append([]int16(nil), w.Path...)
	if w.Aim != nil {
		a := *w.Aim
		w.Aim = &a
	}
	return w
}

func TestPredictedAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("skipped under the race detector, which makes sync.Pool drop values (the predicted baselines' pool)")
	}
	c := MustFor[pWorld]()
	rng := rand.New(rand.NewSource(5))
	older := randPWorld(rng)
	base, cur := moved(rng, older), randPWorld(rng)
	require.NoError(t, c.Quantize(&older))
	require.NoError(t, c.Quantize(&base))
	buf := make([]byte, 0, 4096)
	out := clonePWorld(cur)
	data, err := c.AppendPredicted(buf, &older, &base, &cur)
	require.NoError(t, err)
	require.NoError(t, c.UnmarshalPredicted(data, &older, &base, &out))
	assert.Zero(t, testing.AllocsPerRun(50, func() {
		if _, err := c.AppendPredicted(buf, &older, &base, &cur); err != nil {
			t.Fatal(err)
		}
	}), "AppendPredicted reuses its predicted baseline")
	assert.Zero(t, testing.AllocsPerRun(50, func() {
		if err := c.UnmarshalPredicted(data, &older, &base, &out); err != nil {
			t.Fatal(err)
		}
	}), "UnmarshalPredicted into a value that has room")
}

func TestPredTagErrors(t *testing.T) {
	type onString struct {
		S string `net:"pred"`
	}
	type onFloat struct {
		F float32 `net:"pred"`
	}
	type onStruct struct {
		A pAim `net:"pred"`
	}
	type onMap struct {
		M map[uint8]int16 `net:"range,min=0,max=9,pred"`
	}
	type withValue struct {
		A int8 `net:"bits=4,pred=1"`
	}
	type onBitlen struct {
		A int32 `net:"pred"`
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{forErr[onString](), "S: bitwire: bad net tag: option pred does not apply to string"},
		{forErr[onFloat](), "F: bitwire: bad net tag: option pred does not apply to float32"},
		{forErr[onStruct](), "A: bitwire: bad net tag: option pred on bitwire.pAim applies to its leaves"},
		{forErr[onMap](), "M: bitwire: bad net tag: option pred does not apply to map"},
		{forErr[withValue](), `A: bitwire: bad net tag: option "pred" takes no value`},
		{forErr[onBitlen](), "A: bitwire: bad net tag: option pred does not apply to int32"},
	} {
		require.Error(t, tc.err)
		assert.True(t, errors.Is(tc.err, ErrBadTag), "%v", tc.err)
		assert.Contains(t, tc.err.Error(), tc.want)
	}
}

func forErr[T any]() error {
	_, err := For[T]()
	return err
}

func TestPredFingerprintAndLayout(t *testing.T) {
	a, b := MustFor[pBody](), MustFor[pBodyPlain]()
	assert.NotEqual(t, a.Fingerprint(), b.Fingerprint(), "pred is wire content")
	assert.Contains(t, a.Layout(), "predicted from two baselines")
	assert.NotContains(t, b.Layout(), "predicted")
	s := a.Schema()
	assert.True(t, s.Types[s.Root].Fields[0].Node.Pred)
	assert.False(t, s.Types[s.Root].Fields[2].Node.Pred)
	fp, err := SchemaFingerprint(s)
	require.NoError(t, err)
	assert.Equal(t, a.Fingerprint(), fp)
}

// FuzzUnmarshalPredicted decodes arbitrary bytes as predicted deltas of
// pWorld against two fixed baselines: no panic, and whatever decodes
// re-encodes to a delta that decodes to the same value.
func FuzzUnmarshalPredicted(f *testing.F) {
	c := MustFor[pWorld]()
	rng := rand.New(rand.NewSource(8))
	older := randPWorld(rng)
	base := moved(rng, older)
	for _, v := range []*pWorld{&older, &base} {
		if err := c.Quantize(v); err != nil {
			f.Fatal(err)
		}
	}
	for i := range 6 {
		cur := advanced(older, base)
		if i%2 == 1 {
			cur = randPWorld(rng)
		}
		data, err := c.MarshalPredicted(&older, &base, &cur)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out pWorld
		if err := c.UnmarshalPredicted(data, &older, &base, &out); err != nil {
			return
		}
		again, err := c.MarshalPredicted(&older, &base, &out)
		if err != nil {
			t.Fatalf("decoded value does not re-encode: %v", err)
		}
		var out2 pWorld
		if err := c.UnmarshalPredicted(again, &older, &base, &out2); err != nil {
			t.Fatalf("re-encoded delta does not decode: %v", err)
		}
		if !c.Equal(&out, &out2) {
			t.Fatalf("decoded %+v, then %+v", out, out2)
		}
	})
}

// pSpinner turns: both of its rotations are predicted, one an array of
// float32, one a struct of float64 components on a finer grid.
type pSpinner struct {
	Rot [4]float32 `net:"quat,pred"`
	Ori pOrient    `net:"quat,bits=11,pred"`
}

type pOrient struct{ X, Y, Z, W float64 }

func (o pOrient) arr() [4]float64 { return [4]float64{o.X, o.Y, o.Z, o.W} }

// hamilton is the product a·b of quaternions (x, y, z, w).
func hamilton(a, b [4]float64) [4]float64 {
	return [4]float64{
		a[3]*b[0] + a[0]*b[3] + a[1]*b[2] - a[2]*b[1],
		a[3]*b[1] - a[0]*b[2] + a[1]*b[3] + a[2]*b[0],
		a[3]*b[2] + a[0]*b[1] - a[1]*b[0] + a[2]*b[3],
		a[3]*b[3] - a[0]*b[0] - a[1]*b[1] - a[2]*b[2],
	}
}

func TestPredictedQuat(t *testing.T) {
	c := MustFor[pSpinner]()
	q9, q11 := c.p.fields[0].node.quat, c.p.fields[1].node.quat

	// A turn of 50° about z after the identity predicts 100°: a message
	// whose rotations are that prediction costs its two changed bits.
	s, co := math.Sin(25*math.Pi/180), math.Cos(25*math.Pi/180)
	older := pSpinner{Rot: [4]float32{0, 0, 0, 1}, Ori: pOrient{W: 1}}
	base := pSpinner{Rot: [4]float32{0, 0, float32(s), float32(co)}, Ori: pOrient{Z: s, W: co}}
	require.NoError(t, c.Quantize(&base))
	cur := base
	k0, _ := q9.Pack([4]float64{0, 0, 0, 1})
	k1, _ := q9.Pack(loadQuat(c.p.fields[0].node, unsafe.Pointer(&base.Rot)))
	kp, err := q9.Predict(k0, k1)
	require.NoError(t, err)
	v, _ := q9.Unpack(kp)
	cur.Rot = [4]float32{float32(v[0]), float32(v[1]), float32(v[2]), float32(v[3])}
	k0, _ = q11.Pack(older.Ori.arr())
	k1, _ = q11.Pack(base.Ori.arr())
	kp, err = q11.Predict(k0, k1)
	require.NoError(t, err)
	v, _ = q11.Unpack(kp)
	cur.Ori = pOrient{v[0], v[1], v[2], v[3]}
	turned := hamilton(base.Ori.arr(), base.Ori.arr())
	require.InDelta(t, turned[2], cur.Ori.Z, 0.002, "a turn of 100° about z")
	data, n := predictedBits(t, c, &older, &base, &cur)
	assert.Equal(t, 2, n)
	var out pSpinner
	require.NoError(t, c.UnmarshalPredicted(data, &older, &base, &out))
	assert.Equal(t, cur, out)

	// Bodies spinning at constant rates: every message decodes to the
	// value sent, and prediction costs far less than a delta from one
	// baseline.
	rng := rand.New(rand.NewSource(8))
	var plainBits, predBits, msgs int
	for range 100 {
		axis := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		l := math.Sqrt(axis[0]*axis[0] + axis[1]*axis[1] + axis[2]*axis[2])
		half := rng.Float64() * 0.15 // up to 17° a tick
		d := [4]float64{axis[0] / l * math.Sin(half), axis[1] / l * math.Sin(half), axis[2] / l * math.Sin(half), math.Cos(half)}
		q := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		l = math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
		q = [4]float64{q[0] / l, q[1] / l, q[2] / l, q[3] / l}
		var hist []pSpinner
		for range 12 {
			q = hamilton(d, q)
			v := pSpinner{Rot: [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}, Ori: pOrient{q[0], q[1], q[2], q[3]}}
			require.NoError(t, c.Quantize(&v))
			hist = append(hist, v)
		}
		for i := 2; i < len(hist); i++ {
			older, base, cur := &hist[i-2], &hist[i-1], &hist[i]
			data, n := predictedBits(t, c, older, base, cur)
			var out pSpinner
			require.NoError(t, c.UnmarshalPredicted(data, older, base, &out))
			require.Equal(t, *cur, out)
			var w bits.Writer
			require.NoError(t, c.EncodeDelta(&w, base, cur))
			predBits += n
			plainBits += w.Len()
			msgs++
		}
	}
	t.Logf("spinning bodies: %.2f bits a message predicted, %.2f from one baseline", float64(predBits)/float64(msgs), float64(plainBits)/float64(msgs))
	assert.Less(t, float64(predBits), 0.6*float64(plainBits))
}

// pTrack is a body whose windowed position moves at a slowly changing
// velocity: plain steps spread over the window, predicted ones stay near 0.
func pTrack(rng *rand.Rand, n int) []pBody {
	out := make([]pBody, n)
	y, v := float64(rng.Intn(100)-50), (rng.Float64()-0.5)*1.6
	for i := range out {
		v += (rng.Float64() - 0.5) * 0.04
		v = math.Max(-0.8, math.Min(0.8, v))
		y += v
		if y < -99 || y > 99 {
			v = -v
			y += 2 * v
		}
		out[i] = pBody{X: 1, Y: float32(y), Hp: 100}
	}
	return out
}

func TestTrainerAddPredicted(t *testing.T) {
	c := MustFor[pBody]()
	rng := rand.New(rand.NewSource(21))
	plain, pred, none := c.NewTrainer(), c.NewTrainer(), c.NewTrainer()
	for range 40 {
		tr := pTrack(rng, 100)
		for i := 2; i < len(tr); i++ {
			require.NoError(t, plain.Add(&tr[i-1], &tr[i]))
			require.NoError(t, pred.AddPredicted(&tr[i-2], &tr[i-1], &tr[i]))
			require.NoError(t, none.AddPredicted(nil, &tr[i-1], &tr[i]))
		}
	}
	mPlain, err := plain.Model()
	require.NoError(t, err)
	mPred, err := pred.Model()
	require.NoError(t, err)
	mNone, err := none.Model()
	require.NoError(t, err)
	bPlain, _ := mPlain.MarshalBinary()
	bNone, _ := mNone.MarshalBinary()
	assert.Equal(t, bPlain, bNone, "AddPredicted without an older baseline is Add")

	// Measured on other tracks, each delta predicted as a sender codes it.
	cPlain, cPred := MustFor[pBody]().WithModel(mPlain), MustFor[pBody]().WithModel(mPred)
	var nPlain, nPred, n int
	for range 20 {
		tr := pTrack(rng, 100)
		for i := 2; i < len(tr); i++ {
			_, b := predictedBits(t, cPlain, &tr[i-2], &tr[i-1], &tr[i])
			nPlain += b
			_, b = predictedBits(t, cPred, &tr[i-2], &tr[i-1], &tr[i])
			nPred += b
			n++
		}
	}
	t.Logf("bits a predicted delta: model trained by Add %.2f, by AddPredicted %.2f", float64(nPlain)/float64(n), float64(nPred)/float64(n))
	assert.Less(t, float64(nPred), 0.8*float64(nPlain))
}
