package bitwire

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	fuzz "github.com/google/gofuzz"
	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

type mBody struct {
	ID  uint32     `net:"id"`
	X   float32    `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"`
	Y   float32    `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"`
	N   int16      `net:"range,min=-1000,max=1000,dmin=-8,dmax=7"`
	Rot [4]float32 `net:"quat,bits=9"`
}

type mWorld struct {
	Tick   uint32 `net:"bits=32"`
	Bodies []mBody
	Cam    [4]float32 `net:"quat,bits=11"`
}

type mOther struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"`
}

func mRot(rng *rand.Rand) [4]float32 {
	var q [4]float64
	n := 0.0
	for i := range q {
		q[i] = rng.NormFloat64()
		n += q[i] * q[i]
	}
	n = math.Sqrt(n)
	return [4]float32{float32(q[0] / n), float32(q[1] / n), float32(q[2] / n), float32(q[3] / n)}
}

// turn returns q turned a little (scale: the size of the turn).
func turn(rng *rand.Rand, q [4]float32, scale float64) [4]float32 {
	var r [4]float64
	n := 0.0
	for i := range r {
		r[i] = float64(q[i]) + scale*rng.NormFloat64()
		n += r[i] * r[i]
	}
	n = math.Sqrt(n)
	return [4]float32{float32(r[0] / n), float32(r[1] / n), float32(r[2] / n), float32(r[3] / n)}
}

// mPair returns a baseline and a current world, moved by up to scale.
func mPair(rng *rand.Rand, n int, scale float64) (mWorld, mWorld) {
	var b, c mWorld
	b.Tick, c.Tick = 7, 8
	b.Cam = mRot(rng)
	c.Cam = turn(rng, b.Cam, scale/100)
	for i := range n {
		x := mBody{ID: uint32(i), X: float32(rng.Float64()*1000 - 500), Y: float32(rng.Float64()*1000 - 500), N: int16(rng.IntN(1800) - 900), Rot: mRot(rng)}
		y := x
		if rng.IntN(4) > 0 {
			y.X = float32(max(min(float64(y.X)+scale*rng.NormFloat64(), 512), -512))
			y.Y = float32(max(min(float64(y.Y)+scale*rng.NormFloat64(), 512), -512))
			y.N += int16(rng.IntN(5) - 2)
			y.Rot = turn(rng, x.Rot, scale/200)
		}
		b.Bodies, c.Bodies = append(b.Bodies, x), append(c.Bodies, y)
	}
	return b, c
}

func trainOn(t testing.TB, c *Codec[mWorld], seed uint64, scale float64) *Model {
	rng := rand.New(rand.NewPCG(seed, 9))
	tr := c.NewTrainer()
	for range 40 {
		b, cur := mPair(rng, 16, scale)
		require.NoError(t, tr.Add(&b, &cur))
	}
	m, err := tr.Model()
	require.NoError(t, err)
	return m
}

func TestModelRoundTrip(t *testing.T) {
	c := MustFor[mWorld]()
	m := trainOn(t, c, 1, 0.05)
	cm := c.WithModel(m)
	require.NoError(t, cm.ModelErr())
	require.NotEqual(t, c.Fingerprint(), cm.Fingerprint())
	require.Equal(t, c.Fingerprint(), cm.WithModel(nil).Fingerprint())
	rng := rand.New(rand.NewPCG(2, 2))
	plain, model := 0, 0
	for i := range 200 {
		b, cur := mPair(rng, 1+i%20, []float64{0.01, 0.05, 1, 300}[i%4])
		data, err := cm.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		var got mWorld
		require.NoError(t, cm.UnmarshalDelta(data, &b, &got))
		var want mWorld
		d0, err := c.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		require.NoError(t, c.UnmarshalDelta(d0, &b, &want))
		require.Equal(t, want, got) // the same values as without a model
		if i%4 == 1 {
			plain += len(d0)
			model += len(data)
		}
		// Encode/Decode and AppendDelta write the same bits.
		var w bits.Writer
		require.NoError(t, cm.EncodeDelta(&w, &b, &cur))
		require.Equal(t, data, w.Bytes())
		app, err := cm.AppendDelta([]byte{1}, &b, &cur)
		require.NoError(t, err)
		require.Equal(t, data, app[1:])
		var r bits.Reader
		r.Reset(data)
		var got2 mWorld
		require.NoError(t, cm.DecodeDelta(&r, &b, &got2))
		require.Equal(t, want, got2)
	}
	// On data like the training data the model codes in fewer bytes.
	require.Less(t, model, plain)
}

// A model trained on tiny moves still codes a teleport: within the
// plain coding's bounds (MaxBits), exactly.
func TestModelEscapes(t *testing.T) {
	c := MustFor[mWorld]()
	m := trainOn(t, c, 3, 0.001)
	cm := c.WithModel(m)
	rng := rand.New(rand.NewPCG(4, 4))
	for range 50 {
		b, cur := mPair(rng, 8, 0.001)
		for i := range cur.Bodies {
			cur.Bodies[i].X = -cur.Bodies[i].X
			cur.Bodies[i].Y += 1.99 // the window's edge
			cur.Bodies[i].Rot = mRot(rng)
		}
		cur.Cam = mRot(rng)
		data, err := cm.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		var got, want mWorld
		require.NoError(t, cm.UnmarshalDelta(data, &b, &got))
		d0, err := c.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		require.NoError(t, c.UnmarshalDelta(d0, &b, &want))
		require.Equal(t, want, got)
		// Each value costs at most its plain coding plus ESC (at most 5
		// bits): per body its mask and four values, and the root's mask
		// and camera.
		require.LessOrEqual(t, 8*len(data), 8*len(d0)+5*(5*len(cur.Bodies)+2)+8)
	}
}

func TestModelFileRoundTrip(t *testing.T) {
	c := MustFor[mWorld]()
	m := trainOn(t, c, 5, 0.05)
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	// 16 bytes of header; the root's mask (3 + 9) and Tick's modular table
	// (3 + 1 + 64 slots); the body's mask (3 + 33) (its ID, a plain uint32,
	// has no table), X and Y (windows of ±200 steps, E = 8: 3 + 1 + 16
	// each), N (a window of -8..7, E = 4: 3 + 1 + 8), Rot (its first table
	// 3 + 1 + 4·18, then 16 × (3 + 1 + 18)); Cam (3 + 1 + 4·22, 16 × (3 + 1
	// + 22)); a CRC.
	require.Len(t, b, 16+12+68+36+20+20+12+76+16*22+92+16*26+4)
	var m2 Model
	require.NoError(t, m2.UnmarshalBinary(b))
	require.Equal(t, *m, m2)
	require.Equal(t, c.WithModel(m).Fingerprint(), c.WithModel(&m2).Fingerprint())

	// Every single-byte corruption and every truncation is refused.
	for i := range b {
		bad := append([]byte(nil), b...)
		bad[i] ^= 0x10
		var m3 Model
		require.ErrorIs(t, m3.UnmarshalBinary(bad), ErrModel, "byte %d", i)
		require.ErrorIs(t, m3.UnmarshalBinary(b[:i]), ErrModel, "length %d", i)
	}
}

func TestModelRefusedForAnotherLayout(t *testing.T) {
	m := trainOn(t, MustFor[mWorld](), 6, 0.05)
	o := MustFor[mOther]().WithModel(m)
	require.ErrorIs(t, o.ModelErr(), ErrModel)
	var x, y mOther
	_, err := o.MarshalDelta(&x, &y)
	require.ErrorIs(t, err, ErrModel)
	require.ErrorIs(t, o.UnmarshalDelta([]byte{0}, &x, &y), ErrModel)
	var w bits.Writer
	require.ErrorIs(t, o.EncodeDelta(&w, &x, &y), ErrModel)
	var r bits.Reader
	require.ErrorIs(t, o.DecodeDelta(&r, &x, &y), ErrModel)
	_, err = o.AppendDelta(nil, &x, &y)
	require.ErrorIs(t, err, ErrModel)
	// Full messages do not use the model.
	_, err = o.Marshal(&x)
	require.NoError(t, err)
	// The zero Model is refused too.
	require.ErrorIs(t, MustFor[mWorld]().WithModel(&Model{}).ModelErr(), ErrModel)
	_, err = MustFor[mWorld]().NewTrainer().Model()
	require.ErrorIs(t, err, ErrNoTraining)
}

// Round trips of gofuzz-made values with a model.
func TestModelGofuzz(t *testing.T) {
	c := MustFor[mWorld]()
	cm := c.WithModel(trainOn(t, c, 7, 0.05))
	f := fuzz.NewWithSeed(8).NilChance(0).NumElements(0, 5)
	ok := 0
	for range 300 {
		var b, cur mWorld
		f.Fuzz(&b)
		f.Fuzz(&cur)
		fixWorld(&b)
		fixWorld(&cur)
		if len(cur.Bodies) > 0 && len(b.Bodies) > 0 {
			cur.Bodies[0] = b.Bodies[0] // one shared id: an entity delta
			cur.Bodies[0].X = float32(max(min(float64(cur.Bodies[0].X)+0.37, 512), -512))
		}
		data, err := cm.MarshalDelta(&b, &cur)
		d0, err0 := c.MarshalDelta(&b, &cur)
		if err0 != nil {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		var got, want mWorld
		require.NoError(t, cm.UnmarshalDelta(data, &b, &got))
		require.NoError(t, c.UnmarshalDelta(d0, &b, &want))
		require.Equal(t, want, got)
		ok++
	}
	require.Greater(t, ok, 250)
}

// fixWorld brings gofuzz's values into the fields' ranges.
func fixWorld(w *mWorld) {
	fix := func(q *[4]float32) {
		n := float64(0)
		for _, x := range q {
			n += float64(x) * float64(x)
		}
		if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			*q = [4]float32{0, 0, 0, 1}
			return
		}
		for i := range q {
			q[i] = float32(float64(q[i]) / math.Sqrt(n))
		}
	}
	fix(&w.Cam)
	for i := range w.Bodies {
		b := &w.Bodies[i]
		b.ID = uint32(i)
		b.X = float32(math.Mod(float64(b.X), 500))
		b.Y = float32(math.Mod(float64(b.Y), 500))
		if b.X != b.X || b.Y != b.Y {
			b.X, b.Y = 0, 0
		}
		b.N %= 900
		fix(&b.Rot)
	}
}

func FuzzModelUnmarshal(f *testing.F) {
	c := MustFor[mWorld]()
	m := trainOn(f, c, 9, 0.05)
	good, _ := m.MarshalBinary()
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Model
		if err := m.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrModel) {
				t.Fatal(err)
			}
			return
		}
		_ = c.WithModel(&m).ModelErr()
	})
}

// FuzzModelUnmarshalDelta decodes arbitrary deltas with a model: errors,
// never a panic or a hang.
func FuzzModelUnmarshalDelta(f *testing.F) {
	c := MustFor[mWorld]()
	cm := c.WithModel(trainOn(f, c, 10, 0.05))
	rng := rand.New(rand.NewPCG(11, 11))
	b, cur := mPair(rng, 4, 0.05)
	seed, _ := cm.MarshalDelta(&b, &cur)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		var got mWorld
		if cm.UnmarshalDelta(data, &b, &got) != nil {
			return
		}
		again, err := cm.MarshalDelta(&b, &got)
		if err != nil {
			t.Fatal(err)
		}
		var back mWorld
		if err := cm.UnmarshalDelta(again, &b, &back); err != nil {
			t.Fatal(err)
		}
	})
}

// The schema of a codec with a model carries its hash and file.
func TestModelSchema(t *testing.T) {
	c := MustFor[mWorld]()
	require.Nil(t, c.Schema().Model)
	m := trainOn(t, c, 12, 0.05)
	s := c.WithModel(m).Schema()
	require.NotNil(t, s.Model)
	require.Equal(t, fmt.Sprintf("%016x", m.Hash()), s.Model.Hash)
	require.Equal(t, fmt.Sprintf("%016x", c.Fingerprint()), s.Model.Layout)
	require.Equal(t, fmt.Sprintf("%016x", c.WithModel(m).Fingerprint()), s.Fingerprint)
	var m2 Model
	require.NoError(t, m2.UnmarshalBinary(s.Model.File))
	require.Equal(t, *m, m2)
	require.Equal(t, modelFingerprint(c.Fingerprint(), m.Hash()), c.WithModel(m).Fingerprint())
	fp, err := SchemaFingerprint(s)
	require.NoError(t, err)
	require.Equal(t, c.WithModel(m).Fingerprint(), fp)
	s.Model.Hash = "0000000000000000"
	_, err = SchemaFingerprint(s)
	require.ErrorIs(t, err, ErrMalformed)
	// Debug mode and a model combine; the layout is the one without debug
	// mode.
	require.Equal(t, modelFingerprint(c.WithDebug(true).Fingerprint(), m.Hash()), c.WithModel(m).WithDebug(true).Fingerprint())
	fp, err = SchemaFingerprint(c.WithModel(m).WithDebug(true).Schema())
	require.NoError(t, err)
	require.Equal(t, c.WithModel(m).WithDebug(true).Fingerprint(), fp)
}

// SchemaFingerprint refuses a schema whose model was trained for another
// layout, as the schema states it or as the model file holds it, with
// ErrMalformed: no codec has such a schema (WithModel's codec fails with
// ErrModel), and no codec has its fingerprint.
func TestModelSchemaOtherLayout(t *testing.T) {
	c := MustFor[mWorld]()
	m := trainOn(t, c, 12, 0.05)
	other := *m // the same tables, trained for another layout
	other.layout ^= 1
	ob, err := other.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, other.UnmarshalBinary(ob)) // its hash
	require.Error(t, c.WithModel(&other).ModelErr())
	for name, edit := range map[string]func(s *ModelSchema){
		"stated layout": func(s *ModelSchema) { s.Layout = fmt.Sprintf("%016x", c.Fingerprint()^1) },
		"file's layout": func(s *ModelSchema) { s.File, s.Hash = ob, fmt.Sprintf("%016x", other.Hash()) },
		"both": func(s *ModelSchema) {
			s.File, s.Hash, s.Layout = ob, fmt.Sprintf("%016x", other.Hash()), fmt.Sprintf("%016x", other.Layout())
		},
	} {
		for _, debug := range []bool{false, true} {
			s := c.WithModel(m).WithDebug(debug).Schema()
			_, err := SchemaFingerprint(s)
			require.NoError(t, err, name)
			edit(s.Model)
			_, err = SchemaFingerprint(s)
			require.ErrorIs(t, err, ErrMalformed, "%s, debug %v", name, debug)
			require.ErrorContains(t, err, "layout", name)
		}
	}
}

// modelOf builds a model of the given tables (kinds and code lengths)
// for codec c's layout.
func modelOf(t testing.TB, layout uint64, kinds []uint8, lens ...[]uint8) *Model {
	m := &Model{layout: layout}
	for i, l := range lens {
		require.NoError(t, fields.CheckCode(l))
		m.addTable(kinds[i], l)
	}
	m.setHash()
	return m
}

// Hand-built tables set the bits exactly. mOther has a mask table (one
// field: ESC `10`, unchanged `11`, changed `0`) and X's window table (±200
// steps, escape width 8, so 16 slots: ESC and slot 1 two bits, slots 2..5
// three).
func TestModelExactBits(t *testing.T) {
	c := MustFor[mOther]()
	m := modelOf(t, c.Fingerprint(), []uint8{tkMask, tkWindow},
		[]uint8{2, 2, 1},
		[]uint8{2, 0, 2, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	cm := c.WithModel(m)
	require.NoError(t, cm.ModelErr())
	base := mOther{X: 1}
	for _, tc := range []struct {
		x    float32
		bits int
	}{
		{1, 2},        // mask `11`
		{1.01, 1 + 3}, // mask `0`, slot 1 (2 bits), sign
		{0.97, 1 + 4}, // 3 steps, slot 3: code, sign
		{1.06, 1 + 5}, // 6 steps, slot 5: code, one low bit, sign
		{1.5, 1 + 19}, // 50 steps: slot 11 has no code: ESC, then X in 17 bits
		{-100, 1 + 19},
	} {
		cur := mOther{X: tc.x}
		var w bits.Writer
		require.NoError(t, cm.EncodeDelta(&w, &base, &cur))
		require.Equal(t, tc.bits, w.Len(), "X=%g", tc.x)
		var got mOther
		var r bits.Reader
		r.Reset(w.Bytes())
		require.NoError(t, cm.DecodeDelta(&r, &base, &got))
		require.InDelta(t, tc.x, got.X, 0.005)
	}
	// A table of another kind or size is refused.
	for _, bad := range []*Model{
		modelOf(t, c.Fingerprint(), []uint8{tkMask, tkModular}, []uint8{2, 2, 1}, []uint8{2, 0, 2, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
		modelOf(t, c.Fingerprint(), []uint8{tkMask, tkWindow}, []uint8{2, 2, 1}, []uint8{2, 0, 2, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
		modelOf(t, c.Fingerprint(), []uint8{tkMask}, []uint8{2, 2, 1}),
	} {
		require.ErrorIs(t, c.WithModel(bad).ModelErr(), ErrModel)
	}
}
