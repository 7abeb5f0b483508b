package bitwire

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

// Types on the delta fast path (deltaflat.go): every kind of operation, a
// nested struct, composites, windows, a leaf of another coding.
type dfInner struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1"`
	Y float32 `net:"q,min=0,max=50,prec=0.01"`
	B bool
}

type dfComp struct {
	A float32 `net:"q,min=-10,max=10,bits=12"`
	H int16   `net:"range,min=-300,max=300"`
	F bool
	R [4]float32 `net:"quat,bits=8"`
}

type dfEntity struct {
	ID    uint16     `net:"id"`
	In    dfInner    ``
	Rot   [4]float32 `net:"quat,bits=9"`
	C     dfComp     `net:"composite"`
	Hp    int        `net:"range,min=0,max=200"`
	Name  string     `net:",maxlen=8"` // another coding: the general path when it changes
	Armor uint8      `net:"bits=5"`
	Deep  struct {
		In dfInner
		Q  [4]float32 `net:"quat,bits=7"`
	}
}

type dfWorld struct {
	Tick uint32     `net:"bits=32"`
	Ents []dfEntity `net:",maxlen=64"`
	Arr  []dfInner  `net:",maxlen=16"`
	One  dfEntity
}

func dfRandQuat(r *rand.Rand) [4]float32 {
	var q [4]float64
	n := 0.0
	for i := range q {
		q[i] = r.NormFloat64()
		n += q[i] * q[i]
	}
	n = math.Sqrt(n)
	return [4]float32{float32(q[0] / n), float32(q[1] / n), float32(q[2] / n), float32(q[3] / n)}
}

// dfTurn returns q turned a little: its components moved by up to 0.01
// each, then normalised again.
func dfTurn(r *rand.Rand, q [4]float32) [4]float32 {
	var n float64
	var v [4]float64
	for i := range q {
		v[i] = float64(q[i]) + r.Float64()*0.02 - 0.01
		n += v[i] * v[i]
	}
	n = math.Sqrt(n)
	return [4]float32{float32(v[0] / n), float32(v[1] / n), float32(v[2] / n), float32(v[3] / n)}
}

func dfRandInner(r *rand.Rand) dfInner {
	return dfInner{X: float32(r.Float64()*200 - 100), Y: float32(r.Float64() * 50), B: r.Intn(2) == 0}
}

func dfRandEntity(r *rand.Rand, id int) dfEntity {
	e := dfEntity{ID: uint16(id), In: dfRandInner(r), Rot: dfRandQuat(r),
		C:  dfComp{A: float32(r.Float64()*20 - 10), H: int16(r.Intn(601) - 300), F: r.Intn(2) == 0, R: dfRandQuat(r)},
		Hp: r.Intn(201), Name: "n", Armor: uint8(r.Intn(32))}
	e.Deep.In = dfRandInner(r)
	e.Deep.Q = dfRandQuat(r)
	return e
}

// dfMutate changes a random few leaves of e a little or a lot, sometimes to
// a value that cannot be coded.
func dfMutate(r *rand.Rand, e *dfEntity, bad bool) {
	for k := r.Intn(4); k >= 0; k-- {
		switch r.Intn(15) {
		case 0:
			e.In.X += float32(r.Float64()*2 - 1)
			e.In.X = min(max(e.In.X, -100), 100)
		case 1:
			e.In.Y = float32(r.Float64() * 50)
		case 2:
			e.In.B = !e.In.B
		case 3:
			e.Rot = dfRandQuat(r)
		case 4:
			e.Rot = dfTurn(r, e.Rot) // a small turn
		case 5:
			e.C.A = float32(r.Float64()*20 - 10)
		case 6:
			e.C.H = int16(r.Intn(601) - 300)
		case 7:
			e.C.F = !e.C.F
		case 8:
			e.Hp = r.Intn(201)
		case 9:
			e.Name = "m"
		case 10:
			e.Armor = uint8(r.Intn(32))
		case 11:
			e.Deep.In.X = min(max(e.Deep.In.X+float32(r.Float64()*4-2), -100), 100)
		case 12:
			e.Deep.Q = dfRandQuat(r)
		case 14:
			e.C.R = dfTurn(r, e.C.R)
		case 13:
			e.In.X += 1e-7 // often the same index: a value that changed but not its key
		}
	}
	if bad {
		switch r.Intn(5) {
		case 0:
			e.In.X = float32(math.NaN())
		case 1:
			e.In.Y = 51
		case 2:
			e.Hp = 201
		case 3:
			e.C.H = 301
		case 4:
			e.Rot = [4]float32{float32(math.Inf(1)), 0, 0, 0}
		}
	}
}

// dfWorldPair makes a random world and the same a tick later: entities
// changed a little or a lot, removed and added, sometimes a value that
// cannot be coded on either side.
func dfWorldPair(r *rand.Rand) (base, cur dfWorld) {
	n := r.Intn(20)
	for i := 0; i < n; i++ {
		base.Ents = append(base.Ents, dfRandEntity(r, 3*i+1))
	}
	for i := 0; i < r.Intn(5); i++ {
		base.Arr = append(base.Arr, dfRandInner(r))
	}
	base.One = dfRandEntity(r, 9)
	cur.Tick = base.Tick + 1
	cur.One = base.One
	cur.Arr = append(cur.Arr, base.Arr...)
	for i := range cur.Arr {
		if r.Intn(2) == 0 {
			cur.Arr[i].X = min(max(cur.Arr[i].X+float32(r.Float64()-0.5), -100), 100)
		}
	}
	for _, e := range base.Ents {
		if r.Intn(10) == 0 {
			continue // removed
		}
		if r.Intn(3) == 0 {
			dfMutate(r, &e, r.Intn(150) == 0)
		}
		cur.Ents = append(cur.Ents, e)
	}
	if r.Intn(3) == 0 {
		cur.Ents = append(cur.Ents, dfRandEntity(r, 1000))
	}
	dfMutate(r, &cur.One, r.Intn(40) == 0)
	if r.Intn(30) == 0 { // a baseline that cannot be coded
		dfMutate(r, &base.One, true)
	}
	return base, cur
}

// TestDeltaFlatSameBits checks that the delta fast path writes exactly the
// bits of the general path, and fails with the same errors, on random pairs
// (changes small and large, entities added and removed, values that cannot
// be coded in either side).
func TestDeltaFlatSameBits(t *testing.T) {
	c := MustFor[dfWorld]()
	require.NotNil(t, c.p.fields[1].node.elem.sub.dflat, "the entity is on the fast path")
	r := rand.New(rand.NewSource(1))
	flat, general := 0, 0
	for it := 0; it < 3000; it++ {
		base, cur := dfWorldPair(r)
		a, b, errA, errB := appendDeltaBothWays(c, &base, &cur)
		if errA != nil || errB != nil {
			require.Error(t, errA, "it %d", it)
			require.Error(t, errB, "it %d", it)
			require.Equal(t, errB.Error(), errA.Error(), "it %d", it)
			if general < 8 {
				t.Log(errA)
			}
			general++
			continue
		}
		require.Equal(t, b, a, "it %d: the fast path's bits", it)
		flat++
	}
	require.Greater(t, general, 50)
	require.Greater(t, flat, 2000)
}

// dfWide has keys too wide to share a word with the zeros before them: a
// range of 60 bits after bools, and a composite of 84 bits.
type dfWide struct {
	B1, B2, B3, B4, B5 bool
	R                  int64 `net:"range,min=-576460752303423488,max=576460752303423487"`
	C                  struct {
		K1 int64 `net:"range,min=-2199023255552,max=2199023255551"`
		K2 int64 `net:"range,min=-2199023255552,max=2199023255551"`
		F  bool
	} `net:"composite"`
	Y float32 `net:"q,min=0,max=50,prec=0.01"`
}

// TestDeltaFlatWideKeys checks the writes that do not fit in one word with
// their zeros (a key written after its changed bit, a composite's leaves
// spilling into a second word) against the general path.
func TestDeltaFlatWideKeys(t *testing.T) {
	c := MustFor[dfWide]()
	require.NotNil(t, c.p.dflat, "on the fast path")
	r := rand.New(rand.NewSource(2))
	for it := 0; it < 2000; it++ {
		var base dfWide
		base.R = r.Int63n(1<<59) - 1<<58
		base.C.K1, base.C.K2 = r.Int63n(1<<41)-1<<40, r.Int63n(1<<41)-1<<40
		base.Y = float32(r.Float64() * 50)
		cur := base
		if r.Intn(2) == 0 {
			cur.R = r.Int63n(1<<59) - 1<<58
		}
		if r.Intn(2) == 0 {
			cur.C.K2 = r.Int63n(1<<41) - 1<<40
		}
		// 0 to 5 unchanged bools before R: its zeros, one and 60 bits fit
		// in a word up to 3 of them.
		for _, b := range []*bool{&cur.B1, &cur.B2, &cur.B3, &cur.B4, &cur.B5} {
			*b = r.Intn(2) == 0
		}
		if r.Intn(2) == 0 {
			cur.Y = float32(r.Float64() * 50)
		}
		a, b, errA, errB := appendDeltaBothWays(c, &base, &cur)
		require.NoError(t, errA)
		require.NoError(t, errB)
		require.Equal(t, b, a, "it %d", it)
	}
}

// Types whose structs and composites are all proven q leaves (the loops of
// their own in gather), around a relative quaternion and a range that may
// make the pass give up after the quaternion is written.
type dfPos struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01"`
	Y float32 `net:"q,min=0,max=64,prec=0.01"`
	Z float32 `net:"q,min=-512,max=512,prec=0.01"`
}

type dfAllQ struct {
	ID  uint16     `net:"id"`
	P   dfPos      // a struct of proven q leaves
	C   dfPos      `net:"composite"` // a composite of them
	Rot [4]float32 `net:"quat,bits=9"`
	N   struct {
		A float32 `net:"q,min=-512,max=512,prec=0.01"`
		P dfPos
	}
	Y  float32 `net:"q,min=0,max=64,prec=0.01"`
	Hp int     `net:"range,min=0,max=200"`
	Lv int16   `net:"range,min=-300,max=300"`                                 // a range loaded by its size
	W  int64   `net:"range,min=-9223372036854775808,max=9223372036854775807"` // 64 bits: not gathered with its changed bit
}

type dfAllQWorld struct {
	Ents []dfAllQ `net:",maxlen=64"`
	One  dfAllQ
}

// dfFlat runs the fast path alone on base and cur by plan p (skipping
// field skip) and returns its bits, whether it reported a change and
// whether it applied.
func dfFlat(t *testing.T, p *plan, base, cur unsafe.Pointer, skip int) ([]byte, bool, bool) {
	t.Helper()
	require.NotNil(t, p.dflat, "on the fast path")
	var w bits.Writer
	e := (*options)(nil).encoder(&w, new(arena), 0)
	w.WriteBits(5, 3) // bits before: a take-back must keep them
	changed, ok := e.encStructDeltaFlat(p.dflat, base, cur, skip)
	if !ok {
		require.Equal(t, 3, w.Len(), "nothing left written when it gives up")
	}
	return append([]byte(nil), w.Bytes()...), changed, ok
}

func dfRandPos(r *rand.Rand) dfPos {
	return dfPos{X: float32(r.Float64()*1024 - 512), Y: float32(r.Float64() * 64), Z: float32(r.Float64()*1024 - 512)}
}

// TestDeltaFlatAllQ checks the loops for structs and composites of proven
// q leaves against the general path: changes that move keys, changes that
// do not (a struct taken back for a 0 bit), values that cannot be coded in
// either side, and a baseline that cannot be coded after a changed
// quaternion (the pass gives up after writing it and restores its state).
func TestDeltaFlatAllQ(t *testing.T) {
	c := MustFor[dfAllQWorld]()
	sub := c.p.fields[0].node.elem.sub
	require.NotNil(t, sub.dflat)
	for _, f := range []int{1, 2} { // P and C
		require.NotZero(t, sub.dflat.ops[sub.dflat.top[f]].flags&dopAllQ, "field %d on its own loop", f)
	}
	r := rand.New(rand.NewSource(3))
	same, flat, gaveUp, general := 0, 0, 0, 0
	for it := 0; it < 4000; it++ {
		var base dfAllQ
		base.P, base.C, base.N.P = dfRandPos(r), dfRandPos(r), dfRandPos(r)
		base.N.A, base.Y, base.Hp = float32(r.Float64()*1024-512), float32(r.Float64()*64), r.Intn(201)
		base.Rot = dfRandQuat(r)
		cur := base
		for k := r.Intn(4); k >= 0; k-- {
			switch r.Intn(12) {
			case 10:
				cur.Lv = int16(r.Intn(601) - 300)
			case 11:
				cur.W = int64(r.Uint64())
			case 0:
				cur.P.X += float32(r.Float64() - 0.5)
			case 1:
				cur.P.Y += 1e-6 // the same key: taken back
			case 2:
				cur.C.Z += float32(r.Float64() - 0.5)
			case 3:
				cur.C.X += 1e-5 // a composite of unchanged keys
			case 4:
				cur.Rot = dfTurn(r, cur.Rot)
			case 5:
				cur.N.P.Z += float32(r.Float64() - 0.5)
			case 6:
				cur.N.P.Y += 1e-6 // taken back two structs deep
			case 7:
				cur.Y = float32(r.Float64() * 64)
			case 8:
				cur.Hp = r.Intn(201)
			case 9:
				cur.N.A += 1e-7
			}
		}
		switch r.Intn(40) {
		case 0:
			cur.P.Z = float32(math.NaN())
		case 1:
			cur.C.Y = 65
		case 2:
			cur.N.P.X = 600
		case 3: // after a changed quaternion, a baseline that cannot be coded
			cur.Rot = dfTurn(r, cur.Rot)
			base.Y, cur.Y = 70, 3
		case 4:
			base.C.Y = float32(math.Inf(1))
		case 5:
			cur.Lv = 301
		}
		a, changed, ok := dfFlat(t, sub, unsafe.Pointer(&base), unsafe.Pointer(&cur), 0)
		if !ok {
			gaveUp++
		} else {
			flat++
			if !changed {
				same++
			}
		}
		// The general path on the same struct (its id skipped, as in a set).
		var w bits.Writer
		e := (&options{general: true, slow: true}).encoder(&w, new(arena), 0)
		w.WriteBits(5, 3)
		ch, err := e.encStructDelta(sub, unsafe.Pointer(&base), unsafe.Pointer(&cur), 0)
		if err != nil {
			require.False(t, ok, "it %d: the fast path writes what the general path cannot", it)
			general++
			continue
		}
		if ok {
			require.Equal(t, w.Bytes(), a, "it %d: the fast path's bits", it)
			require.Equal(t, ch, changed, "it %d", it)
		}
		// And the whole message, both ways.
		wb, wc := dfAllQWorld{Ents: []dfAllQ{base}, One: base}, dfAllQWorld{Ents: []dfAllQ{cur}, One: cur}
		x, y, errX, errY := appendDeltaBothWays(c, &wb, &wc)
		require.NoError(t, errX)
		require.NoError(t, errY)
		require.Equal(t, y, x, "it %d: the message's bits", it)
	}
	require.Greater(t, flat, 3000)
	require.Greater(t, same, 50, "structs whose values changed but not their keys")
	require.Greater(t, gaveUp, 200)
	require.Greater(t, general, 100)
}

// TestDeltaFlatUndo checks that a pass that gives up after writing a
// quaternion leaves no trace: neither bits nor the quaternion's state,
// which the general path then starts from.
func TestDeltaFlatUndo(t *testing.T) {
	c := MustFor[dfAllQWorld]()
	r := rand.New(rand.NewSource(4))
	var base dfAllQ
	base.P, base.C, base.N.P = dfRandPos(r), dfRandPos(r), dfRandPos(r)
	base.Rot = dfRandQuat(r)
	base.Y = 70 // cannot be coded: a changed Y makes the pass give up
	cur := base
	cur.Rot = dfTurn(r, cur.Rot)
	cur.Y = 3
	sub := c.p.fields[0].node.elem.sub
	require.NotZero(t, sub.dflat.ops[sub.dflat.top[3]].flags&dopUndo, "Rot is undone when Y fails")
	_, _, ok := dfFlat(t, sub, unsafe.Pointer(&base), unsafe.Pointer(&cur), 0)
	require.False(t, ok, "gives up at Y")
	// Several entities turn their quaternions: the state carries from one to
	// the next, so an undo left out would change the later ones' bits.
	wb, wc := dfAllQWorld{One: base}, dfAllQWorld{One: cur}
	for i := 0; i < 5; i++ {
		e := base
		e.ID = uint16(i)
		e.Y = 1
		f := e
		f.Rot = dfTurn(r, f.Rot)
		if i == 2 {
			e.Y, f.Y = 70, 3
		}
		wb.Ents, wc.Ents = append(wb.Ents, e), append(wc.Ents, f)
	}
	x, y, errX, errY := appendDeltaBothWays(c, &wb, &wc)
	require.NoError(t, errX)
	require.NoError(t, errY)
	require.Equal(t, y, x)
}

// appendDeltaBothWays encodes the delta from base to cur by the flat delta
// plan and by the general path (every fast path off), for tests that
// compare the two.
func appendDeltaBothWays[T any](c *Codec[T], base, cur *T) (flat, general []byte, errFlat, errGeneral error) {
	flat, errFlat = c.AppendDelta(nil, base, cur)
	general, errGeneral = c.generalOnly().AppendDelta(nil, base, cur)
	return flat, general, errFlat, errGeneral
}

// TestDeltaFlatDecodeDamaged: the delta decoder's flat kernel
// (decStructDeltaFlat, which pkPlayer's entities take, handing their
// quaternion and window to the general leaf decoder) and the entity cursor
// (entityCursor, which reads ewPlayer's entities by words alone) fail as
// the general decoder does, or decode the same value, on every cut and
// every one-bit flip of random deltas, near the input's end too: a failed
// kernel gives back the adaptive states it moved.
func TestDeltaFlatDecodeDamaged(t *testing.T) {
	t.Run("pkWorld", func(t *testing.T) {
		dp := MustFor[pkWorld]().p.fields[1].node.elem.sub.dflat
		require.Positive(t, dp.decBitsNoID, "pkPlayer is read by the kernel")
		require.True(t, dp.decState, "with states to give back")
		require.False(t, dp.wordsNoID, "and leaves for the general decoder")
		sameDamagedDecodes(t, func(seed int64) (*pkWorld, *pkWorld) {
			r := rand.New(rand.NewSource(seed))
			var base pkWorld
			for i := range 1 + r.Intn(12) {
				base.Ps = append(base.Ps, pkRandPlayer(r, uint16(3*i)))
			}
			cur := pkWorld{Ps: append([]pkPlayer(nil), base.Ps...)}
			for i := range cur.Ps {
				switch r.Intn(3) {
				case 0:
					cur.Ps[i] = pkRandPlayer(r, cur.Ps[i].ID)
				case 1: // a window's difference and a position
					cur.Ps[i].DX = min(max(cur.Ps[i].DX+0.4, -64), 64)
					cur.Ps[i].Pos.X = 0
				}
			}
			return &base, &cur
		})
	})
	t.Run("ewWorld", func(t *testing.T) {
		dp := MustFor[ewWorld]().p.fields[1].node.elem.sub.dflat
		require.True(t, dp.wordsNoID, "ewPlayer is read at the entity cursor")
		sameDamagedDecodes(t, func(seed int64) (*ewWorld, *ewWorld) {
			for r := rand.New(rand.NewSource(seed)); ; {
				if base, cur := ewPair(r); len(base.Ps) > 0 && cur.Ps[0].Hp <= 200 {
					return &base, &cur
				}
			}
		})
	})
}

// sameDamagedDecodes decodes every cut and every one-bit flip of the
// deltas of 20 pairs from gen by the general decoder and by the fast
// paths, which must agree.
func sameDamagedDecodes[T any](t *testing.T, gen func(seed int64) (*T, *T)) {
	c := MustFor[T]()
	g := c.generalOnly()
	decodes, good := 0, 0
	for seed := int64(0); seed < 20; seed++ {
		base, cur := gen(seed)
		delta, err := c.AppendDelta(nil, base, cur)
		require.NoError(t, err)
		qb, _ := gen(seed)
		require.NoError(t, c.Quantize(qb))
		try := func(bad []byte) {
			var x, y T
			errX, errY := g.UnmarshalDelta(bad, qb, &x), c.UnmarshalDelta(bad, qb, &y)
			sameErr(t, errX, errY, "seed %d: %x", seed, bad)
			if errX == nil {
				require.Equal(t, x, y, "seed %d: %x", seed, bad)
				good++
			}
			decodes++
		}
		for n := range len(delta) {
			try(delta[:n])
		}
		for bit := range len(delta) * 8 {
			bad := append([]byte(nil), delta...)
			bad[bit/8] ^= 1 << (bit % 8)
			try(bad)
		}
	}
	t.Logf("%d damaged deltas, %d of them decoded", decodes, good)
}
