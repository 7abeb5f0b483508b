package bitwire

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/stretchr/testify/require"
)

type meBody struct {
	ID  uint16     `net:"id"`
	Rot [4]float32 `net:"quat,bits=9"`
}

type meFrame struct {
	Bodies []meBody `net:",maxlen=64"`
}

// TestModelQuatChoiceInMessage: frames of 32 bodies spinning 15..30° a
// tick. The adaptive code warms its running mean over a frame's bodies
// and codes most of them relative; a trainer that recorded the absolute
// or relative choice of a fresh state (as at a message's start) recorded
// most of them absolute, and its model lost to no model (905.6 against
// 880.5 bits a frame on 400 frames; 798.6 now). The trainer records the choice made
// in the message's own state.
func TestModelQuatChoiceInMessage(t *testing.T) {
	base, cur := hPairs(hStreams()[4], 7, 32*200, hAge{name: "1", max: 1})
	var bf, cf []meFrame
	for f := 0; f+32 <= len(base); f += 32 {
		var b, c meFrame
		for j := range 32 {
			b.Bodies = append(b.Bodies, meBody{uint16(j * 3), f32q(base[f+j].q)})
			c.Bodies = append(c.Bodies, meBody{uint16(j * 3), f32q(cur[f+j].q)})
		}
		bf, cf = append(bf, b), append(cf, c)
	}
	r := heldOut(t, bf, cf)
	t.Logf("model %.1f, no model %.1f bits a frame", r.model, r.noModel)
	if r.model > 0.95*r.noModel {
		t.Fatalf("model %.1f bits a frame, no model %.1f: want at most 0.95 of it", r.model, r.noModel)
	}
}

// TestTrainerLargeTurns: bodies spinning 15..30° a tick, one orientation
// a message. The adaptive code sends about a third of them absolute (its
// cold Rice parameter makes a large turn dear); a trainer that recorded
// that choice trained difference tables that had never seen a large turn
// and an absolute form with a short code, and its model saved 7.7% (26.76
// bits a changed orientation against 29.00 without a model). Model now
// chooses each recorded form under its own tables (quatChoice): 23.59.
func TestTrainerLargeTurns(t *testing.T) {
	r := hRun(t, "9", hStreams()[4], 10000*131+uint64(len(hStreams()[4].name)), 10000, hAge{"1", 1, false})
	t.Logf("model %.2f, no model %.2f bits a changed orientation", r.model, r.noModel)
	if r.model > 0.85*r.noModel {
		t.Fatalf("model %.2f bits, no model %.2f: want at most 0.85 of it", r.model, r.noModel)
	}
}

// TestTrainerModelThenAdd: Model leaves the recording as it was, so that
// a trainer can go on recording after a Model; the model of a trainer
// that made one halfway is that of one that did not.
func TestTrainerModelThenAdd(t *testing.T) {
	base, cur := hPairs(hStreams()[11], 3, 3000, hAge{"1..8", 8, true})
	c := MustFor[hq9]()
	a, b := c.NewTrainer(), c.NewTrainer()
	for i := range base {
		bq, cq := hq9{f32q(base[i].q)}, hq9{f32q(cur[i].q)}
		require.NoError(t, a.Add(&bq, &cq))
		require.NoError(t, b.Add(&bq, &cq))
		if i == len(base)/2 {
			_, err := a.Model()
			require.NoError(t, err)
		}
	}
	ma, err := a.Model()
	require.NoError(t, err)
	mb, err := b.Model()
	require.NoError(t, err)
	fa, _ := ma.MarshalBinary()
	fb, _ := mb.MarshalBinary()
	require.Equal(t, fb, fa)
	// Each recorded form went one way: the resolved counts hold every
	// changed orientation once in the quaternion's first table (table 1,
	// after hq9's mask table), and every unchanged one as its last
	// symbol, hq9's "unchanged" (its changed bit is folded in); the mask
	// table holds nothing.
	st := b.st.resolved(b.o.model.lay)
	first := st.counts[1]
	var forms uint64
	for _, x := range first[:len(first)-1] {
		forms += x
	}
	var changed uint64
	for i := range base {
		if bq, cq := (hq9{f32q(base[i].q)}), (hq9{f32q(cur[i].q)}); !c.Equal(&bq, &cq) {
			changed++
		}
	}
	require.Equal(t, changed, forms)
	require.Equal(t, uint64(len(base))-changed, first[len(first)-1])
	require.Equal(t, []uint64{0, 0, 0}, st.counts[0])
}

// TestModelFoldedChangedBit: hq9's changed bit (one field, a quaternion)
// goes into the quaternion's first table when it pays: a model trained on
// bodies that spin (every pair changed) folds it, so an unchanged message
// is that table's last symbol alone and a changed one has no changed bit
// of its own; a recording whose later part rests more than its earlier is
// judged by cross-validation, which does not fold.
func TestModelFoldedChangedBit(t *testing.T) {
	c := MustFor[hq9]()
	// rest(i) says whether pair i is unchanged
	train := func(s hStream, n int, rest func(i int) bool) *Model {
		base, cur := hPairs(s, 11, n, hAge{"1", 1, false})
		tr := c.NewTrainer()
		for i := range base {
			bq, cq := hq9{f32q(base[i].q)}, hq9{f32q(cur[i].q)}
			if rest(i) {
				cq = bq
			}
			require.NoError(t, tr.Add(&bq, &cq))
		}
		m, err := tr.Model()
		require.NoError(t, err)
		return m
	}
	m := train(hStreams()[2], 2000, func(int) bool { return false }) // spin 2°
	first := m.tableLens(1)
	unchanged := len(first) - 1
	require.Equal(t, fields.QuatFirstSymbols(9)+1, len(first))
	require.NotZero(t, first[unchanged], "folded")
	require.Equal(t, make([]uint8, 3), m.tableLens(0), "the mask table is plain")
	cm := c.WithModel(m)
	require.NoError(t, cm.ModelErr())
	v := hq9{[4]float32{0, 0, 0, 1}}
	var w bits.Writer
	require.NoError(t, cm.EncodeDelta(&w, &v, &v))
	require.Equal(t, int(first[unchanged]), w.Len())
	// a changed one: the first table's symbol and what follows, no mask bit
	turned := hq9{[4]float32{0.0087, 0, 0, 0.99996}}
	w.Reset(nil)
	require.NoError(t, cm.EncodeDelta(&w, &v, &turned))
	var got hq9
	require.NoError(t, cm.DecodeDelta(bits.NewReader(w.Bytes()), &v, &got))
	require.True(t, c.Equal(&turned, &got))
	n := c.p.fields[0].node
	bq, err := n.quat.Pack(loadQuat(n, unsafe.Pointer(&v.Rot)))
	require.NoError(t, err)
	qc, err := n.quat.Pack(loadQuat(n, unsafe.Pointer(&turned.Rot)))
	require.NoError(t, err)
	var qw bits.Writer
	rt := cm.o.model
	n.quat.WriteDeltaCodes(&qw, rt.quats[n.uid-rt.lay.base], bq, true, qc)
	require.Equal(t, qw.Len(), w.Len())
	// every pair changed in the first half, one in two in the second
	m2 := train(hStreams()[2], 4000, func(i int) bool { return i >= 2000 && i%2 == 0 })
	require.Zero(t, m2.tableLens(1)[unchanged], "not folded")
}

type mfSpin struct {
	Rot [4]float32 `net:"quat,bits=9"`
}

type mfWorld struct {
	Wheel mfSpin
	Props []mfSpin `net:"maxlen=8"`
}

// FuzzModelUnmarshalFolded decodes arbitrary deltas of folded structs (a
// root of one quaternion, and one as a field and as slice elements) with
// trained models: errors, never a panic, and what decodes re-encodes to a
// delta that decodes to the same value.
func FuzzModelUnmarshalFolded(f *testing.F) {
	rng := rand.New(rand.NewPCG(12, 12))
	cs, cw := MustFor[mfSpin](), MustFor[mfWorld]()
	ts, tw := cs.NewTrainer(), cw.NewTrainer()
	turn := func(q [4]float32) [4]float32 { return f32q(hRotate(hQ64(q), hRandAxis(rng), rng.Float64()*3*deg)) }
	var bs, bw []any
	for range 600 {
		a := mfSpin{f32q(hRandQuat(rng))}
		b := mfSpin{turn(a.Rot)}
		require.NoError(f, ts.Add(&a, &b))
		wa := mfWorld{Wheel: a}
		for range rng.IntN(5) {
			wa.Props = append(wa.Props, mfSpin{f32q(hRandQuat(rng))})
		}
		wb := mfWorld{Wheel: b, Props: append([]mfSpin(nil), wa.Props...)}
		for i := range wb.Props {
			if rng.IntN(2) == 0 {
				wb.Props[i].Rot = turn(wb.Props[i].Rot)
			}
		}
		require.NoError(f, tw.Add(&wa, &wb))
		bs, bw = append(bs, a), append(bw, wa)
	}
	ms, err := ts.Model()
	require.NoError(f, err)
	mw, err := tw.Model()
	require.NoError(f, err)
	// both fold: mfSpin's first table is table 1 (after its mask), and 2
	// in mfWorld (after the root's mask and mfSpin's)
	require.NotZero(f, ms.tableLens(1)[fields.QuatFirstSymbols(9)])
	require.NotZero(f, mw.tableLens(2)[fields.QuatFirstSymbols(9)])
	cms, cmw := cs.WithModel(ms), cw.WithModel(mw)
	sb, wb := bs[0].(mfSpin), bw[0].(mfWorld)
	for _, seed := range [][]byte{{0}, {1}, {0, 0xff, 0x13}, {1, 0x55, 0xaa, 0x01}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		if data[0]&1 == 0 {
			foldedRoundTrip(t, cms, &sb, data[1:])
		} else {
			foldedRoundTrip(t, cmw, &wb, data[1:])
		}
	})
}

func foldedRoundTrip[T any](t *testing.T, c *Codec[T], base *T, data []byte) {
	var got T
	if c.UnmarshalDelta(data, base, &got) != nil {
		return
	}
	again, err := c.MarshalDelta(base, &got)
	require.NoError(t, err)
	var back T
	require.NoError(t, c.UnmarshalDelta(again, base, &back))
	require.True(t, c.Equal(&got, &back))
}

func hQ64(q [4]float32) [4]float64 {
	return [4]float64{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
}

// TestModelFoldedDebugAndStats: a folded struct's delta in debug mode (a
// sentinel after its field, whether it changed or not) and with Stats (the
// general encoder, which writes its masks in place) decodes to the value,
// as a field, in a slice and as the root.
func TestModelFoldedDebugAndStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	cs, cw := MustFor[mfSpin](), MustFor[mfWorld]()
	ts, tw := cs.NewTrainer(), cw.NewTrainer()
	turn := func(q [4]float32) [4]float32 { return f32q(hRotate(hQ64(q), hRandAxis(rng), rng.Float64()*3*deg)) }
	type pair[T any] struct{ b, c T }
	var ps []pair[mfSpin]
	var pw []pair[mfWorld]
	for i := range 800 {
		a := mfSpin{f32q(hRandQuat(rng))}
		b := mfSpin{turn(a.Rot)}
		if i%5 == 0 {
			b = a // some unchanged
		}
		require.NoError(t, ts.Add(&a, &b))
		wa := mfWorld{Wheel: a, Props: []mfSpin{{f32q(hRandQuat(rng))}, {f32q(hRandQuat(rng))}}}
		wb := mfWorld{Wheel: b, Props: []mfSpin{{turn(wa.Props[0].Rot)}, wa.Props[1]}}
		require.NoError(t, tw.Add(&wa, &wb))
		ps, pw = append(ps, pair[mfSpin]{a, b}), append(pw, pair[mfWorld]{wa, wb})
	}
	ms, err := ts.Model()
	require.NoError(t, err)
	mw, err := tw.Model()
	require.NoError(t, err)
	require.NotZero(t, ms.tableLens(1)[fields.QuatFirstSymbols(9)], "folded")
	for _, variant := range []string{"debug", "stats"} {
		mod := func(c *Codec[mfSpin]) *Codec[mfSpin] { return c.WithDebug(true) }
		modw := func(c *Codec[mfWorld]) *Codec[mfWorld] { return c.WithDebug(true) }
		if variant == "stats" {
			st := new(Stats)
			mod = func(c *Codec[mfSpin]) *Codec[mfSpin] { return c.WithStats(st) }
			modw = func(c *Codec[mfWorld]) *Codec[mfWorld] { return c.WithStats(st) }
		}
		c1, c2 := mod(cs.WithModel(ms)), modw(cw.WithModel(mw))
		for i := range ps[:100] {
			data, err := c1.MarshalDelta(&ps[i].b, &ps[i].c)
			require.NoError(t, err)
			var got mfSpin
			require.NoError(t, c1.UnmarshalDelta(data, &ps[i].b, &got), "%s %d", variant, i)
			require.True(t, cs.Equal(&ps[i].c, &got))
			dw, err := c2.MarshalDelta(&pw[i].b, &pw[i].c)
			require.NoError(t, err)
			var gw mfWorld
			require.NoError(t, c2.UnmarshalDelta(dw, &pw[i].b, &gw), "%s %d", variant, i)
			require.True(t, cw.Equal(&pw[i].c, &gw))
		}
	}
}
