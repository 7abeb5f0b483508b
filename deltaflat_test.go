package bitwire

import (
	"math"
	"math/rand"
	"testing"

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
		var base, cur dfWorld
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
		deltaFlatOn = true
		a, errA := c.AppendDelta(nil, &base, &cur)
		deltaFlatOn = false
		b, errB := c.AppendDelta(nil, &base, &cur)
		deltaFlatOn = true
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
		deltaFlatOn = true
		a, errA := c.AppendDelta(nil, &base, &cur)
		deltaFlatOn = false
		b, errB := c.AppendDelta(nil, &base, &cur)
		deltaFlatOn = true
		require.NoError(t, errA)
		require.NoError(t, errB)
		require.Equal(t, b, a, "it %d", it)
	}
}
