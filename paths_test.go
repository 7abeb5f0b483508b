package bitwire

import (
	"bytes"
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The fast paths (flat plans, delta plans, the fused passes over slices and
// entity sets, a model's judged structs) and accounting (Stats) must write
// exactly the bits of the general path and fail with exactly its errors
// (mark.go states the contract). TestPathsSameBits holds every one of them
// to it over one table of types and random pairs of values, and the
// decoders' fast paths to the general decoder.

// generalOnly returns a codec of the same plan with every fast path off.
func (c *Codec[T]) generalOnly() *Codec[T] {
	cp := *c
	cp.o.general, cp.o.slow = true, true
	return &cp
}

// pathCase is one type of the table: pair makes a baseline and a current
// value from a seed, each call new and equal values for the same seed.
type pathCase struct {
	name string
	run  func(t *testing.T, pairs int) pathCounts
}

// pathCounts says what a case exercised, so that the test fails if the
// table stops reaching a path.
type pathCounts struct{ ok, failed, model int }

func pathsOf[T any](name string, pair func(seed int64) (base, cur *T)) pathCase {
	return pathCase{name, func(t *testing.T, pairs int) pathCounts {
		return samePaths(t, pairs, pair)
	}}
}

// genPair pairs values of gen: the same seed (unchanged), the next seed (all
// changed), or the same with a random third of the exported top-level fields taken
// from the next seed (a few changed).
func genPair[T any](post func(*T, *rand.Rand)) func(seed int64) (*T, *T) {
	return func(seed int64) (*T, *T) {
		base := gen(seed, post)
		switch seed % 3 {
		case 0:
			return base, gen(seed, post)
		case 1:
			return base, gen(seed+1, post)
		}
		cur := gen(seed, post)
		mixFields(cur, gen(seed+1, post), rand.New(rand.NewSource(seed)), 0.3)
		return base, cur
	}
}

func randPCG(seed int64) *randv2.Rand { return randv2.New(randv2.NewPCG(uint64(seed), 7)) }

var pathCases = []pathCase{
	pathsOf("dfWorld", func(seed int64) (*dfWorld, *dfWorld) {
		base, cur := dfWorldPair(rand.New(rand.NewSource(seed)))
		return &base, &cur
	}),
	pathsOf("CubeWorld", func(seed int64) (*CubeWorld, *CubeWorld) {
		r := rand.New(rand.NewSource(seed))
		base := makeWorld(r, r.Intn(40))
		cur := cloneWorld(base)
		cur.Tick++
		for i := range cur.Cubes {
			switch r.Intn(8) {
			case 0:
				cur.Cubes[i].Pos.X += float32(r.Float64())
			case 1:
				q := randomQuat(r)
				cur.Cubes[i].Rot = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
			case 2:
				cur.Cubes[i].Sleeping = !cur.Cubes[i].Sleeping
			}
		}
		if r.Intn(3) == 0 && len(cur.Cubes) > 0 {
			cur.Cubes = cur.Cubes[1:]
		}
		if r.Intn(50) == 0 && len(cur.Cubes) > 0 {
			cur.Cubes[0].Pos.Y = 1e9 // cannot be coded
		}
		return &base, &cur
	}),
	pathsOf("Players64", func(seed int64) (*Players64, *Players64) {
		base := randomPlayers(randPCG(seed))
		cur := randomPlayers(randPCG(seed))
		if seed%2 == 1 {
			cur = randomPlayers(randPCG(seed + 1))
		}
		return &base, &cur
	}),
	pathsOf("pkWorld", func(seed int64) (*pkWorld, *pkWorld) {
		r := rand.New(rand.NewSource(seed))
		var base pkWorld
		for i := range r.Intn(40) {
			base.Ps = append(base.Ps, pkRandPlayer(r, uint16(2*i)))
		}
		cur := pkWorld{Tick: base.Tick + 1, Ps: append([]pkPlayer(nil), base.Ps...)}
		for i := range cur.Ps {
			p := &cur.Ps[i]
			switch r.Intn(6) {
			case 0:
				p.Pos.X = min(p.Pos.X+0.5, 512)
			case 1:
				p.Aim.Yaw = uni32(r, 0, 360)
			case 2:
				p.Hp, p.Flags.Firing = r.Intn(201), !p.Flags.Firing
			case 3:
				*p = pkRandPlayer(r, p.ID)
			case 4:
				p.DX = min(max(p.DX+float32(r.NormFloat64()*0.3), -64), 64)
				p.Rot = pkQuat(r)
			}
		}
		if r.Intn(20) == 0 && len(cur.Ps) > 0 {
			cur.Ps[0].Hp = 300 // cannot be coded
		}
		return &base, &cur
	}),
	// entities the delta kernel reads by words alone (entityCursor), with
	// new ones after them, read through the reader once the cursor is done
	pathsOf("ewWorld", func(seed int64) (*ewWorld, *ewWorld) {
		b, c := ewPair(rand.New(rand.NewSource(seed)))
		return &b, &c
	}),
	// a struct of one quaternion (its changed bit folded into the
	// quaternion's first table by the model) as a field and in a slice
	pathsOf("mfWorld", func(seed int64) (*mfWorld, *mfWorld) {
		r := rand.New(rand.NewSource(seed))
		q := func() [4]float32 { return pkQuat(r) }
		base := mfWorld{Wheel: mfSpin{q()}}
		for range r.Intn(5) {
			base.Props = append(base.Props, mfSpin{q()})
		}
		cur := mfWorld{Wheel: base.Wheel, Props: append([]mfSpin(nil), base.Props...)}
		if r.Intn(3) > 0 {
			cur.Wheel.Rot = q()
		}
		for i := range cur.Props {
			if r.Intn(2) == 0 {
				cur.Props[i].Rot = q()
			}
		}
		return &base, &cur
	}),
	// a root of one flat struct with every leaf the word kernels code
	// (Codec.Append and Unmarshal write and read it by words): values
	// at a q step's rounding tie, out of range, and quaternions of every
	// kind, so that the kernels hand structs back and fail too
	pathsOf("wdFlat", func(seed int64) (*wdFlat, *wdFlat) {
		r := rand.New(rand.NewSource(seed))
		return wdRand(r, 4), wdRand(r, 4)
	}),
	// and in a slice, whose encoder writes by words and hands the
	// structs back to the leaf loop one by one
	pathsOf("wdWorld", func(seed int64) (*wdWorld, *wdWorld) {
		r := rand.New(rand.NewSource(seed))
		var base, cur wdWorld
		for range r.Intn(20) {
			base.Items, cur.Items = append(base.Items, *wdRand(r, 0)), append(cur.Items, *wdRand(r, 60))
		}
		return &base, &cur
	}),
	// unsigned and signed ranges of every width, the full 64-bit ones too
	// wide for a run (the flat and delta kernels leave them to the Reader
	// and the Writer)
	pathsOf("wdRanges", func(seed int64) (*wdRanges, *wdRanges) {
		r := rand.New(rand.NewSource(seed))
		mk := func() *wdRanges {
			v := &wdRanges{A: r.Uint64(), B: uint16(1000 + r.Intn(59001)), C: int64(r.Uint64()), D: uint8(r.Intn(256)),
				E: uint32(r.Intn(1 << 20))}
			if r.Intn(10) == 0 {
				v.B = 999 // cannot be coded
			}
			return v
		}
		base, cur := mk(), mk()
		if r.Intn(2) == 0 {
			*cur = *base
			cur.D = uint8(r.Intn(256))
		}
		return base, cur
	}),
	pathsOf("RTQuant", genPair(rtQuantPost)),
	pathsOf("RTScalars", genPair[RTScalars](nil)),
	pathsOf("RTStrings", genPair(func(v *RTStrings, r *rand.Rand) {
		v.SM = truncString(v.SM, 10)
		if len(v.BM) > 16 {
			v.BM = v.BM[:16]
		}
		if len(v.SS) > 5 {
			v.SS = v.SS[:5]
		}
	})),
	pathsOf("RTContainers", genPair(func(v *RTContainers, r *rand.Rand) {
		if len(v.Limit) > 3 {
			v.Limit = v.Limit[:3]
		}
	})),
	pathsOf("RTPointers", genPair(func(v *RTPointers, r *rand.Rand) {
		if v.PQ != nil {
			*v.PQ = uni32(r, 0, 1)
		}
		if v.PA != nil {
			for i := range v.PA {
				v.PA[i] = int8(bitsInt(r, 6))
			}
		}
	})),
	pathsOf("RTNested", genPair(func(v *RTNested, r *rand.Rand) {
		v.Name = truncString(v.Name, 16)
		rtBody(&v.Body, r)
		for i := range v.Parts {
			rtBody(&v.Parts[i], r)
		}
		v.Inner.Deep.N = int8(bitsInt(r, 5))
		v.Inner.Level = uint8(uintIn(r, 1, 99))
	})),
}

func TestPathsSameBits(t *testing.T) {
	pairs := 300
	if testing.Short() {
		pairs = 60
	}
	for _, pc := range pathCases {
		t.Run(pc.name, func(t *testing.T) {
			n := pc.run(t, pairs)
			t.Logf("%d pairs coded, %d failed alike, %d with a model", n.ok, n.failed, n.model)
			require.Greater(t, n.ok, pairs/4, "too few pairs that can be coded")
		})
	}
}

// samePaths checks every path of T on pairs from pair, then trains a model
// on them and checks the model's paths and the trainer's.
func samePaths[T any](t *testing.T, pairs int, pair func(seed int64) (*T, *T)) pathCounts {
	c := MustFor[T]()
	g := c.generalOnly()
	var n pathCounts
	for seed := int64(0); seed < int64(pairs); seed++ {
		if samePair(t, seed, c, g, pair) {
			n.ok++
		} else {
			n.failed++
		}
	}
	// The trainer by the fast paths and by the general path counts the same
	// symbols, so the models are byte for byte the same.
	tc, tg := c.NewTrainer(), g.NewTrainer()
	for seed := int64(0); seed < int64(pairs); seed++ {
		b, cu := pair(seed)
		errC := tc.Add(b, cu)
		b, cu = pair(seed)
		sameErr(t, errC, tg.Add(b, cu), "seed %d: Trainer.Add", seed)
	}
	mc, errC := tc.Model()
	mg, errG := tg.Model()
	sameErr(t, errC, errG, "Trainer.Model")
	if errC != nil {
		return n // a type without model-coded fields
	}
	bc, err := mc.MarshalBinary()
	require.NoError(t, err)
	bg, err := mg.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, bg, bc, "the models trained by the fast and the general paths")
	cm := c.WithModel(mc)
	gm := cm.generalOnly()
	for seed := int64(0); seed < int64(pairs); seed++ {
		if samePair(t, seed, cm, gm, pair) {
			n.model++
		}
	}
	return n
}

// samePair checks one pair: c with its fast paths, with Stats, and its
// general twin g write the same bits or fail with the same error, in full
// and in delta; and the fast and general decoders read them back alike. It
// reports whether the pair could be coded.
func samePair[T any](t *testing.T, seed int64, c, g *Codec[T], pair func(int64) (*T, *T)) bool {
	base, cur := pair(seed)
	s := c.WithStats(NewStats())

	full, errF := g.Append(nil, cur)
	got, err := c.Append(nil, cur)
	sameOut(t, full, got, errF, err, "seed %d: Append", seed)
	got, err = s.Append(nil, cur)
	sameOut(t, full, got, errF, err, "seed %d: Append with Stats", seed)

	delta, errD := g.AppendDelta(nil, base, cur)
	got, err = c.AppendDelta(nil, base, cur)
	sameOut(t, delta, got, errD, err, "seed %d: AppendDelta", seed)
	got, err = s.AppendDelta(nil, base, cur)
	sameOut(t, delta, got, errD, err, "seed %d: AppendDelta with Stats", seed)

	// The Encoder forms over a writer that holds bits already.
	var wg, wc bits.Writer
	wg.WriteBits(5, 3)
	wc.WriteBits(5, 3)
	errG, errC := g.EncodeDelta(&wg, base, cur), c.EncodeDelta(&wc, base, cur)
	sameOut(t, wg.Bytes(), wc.Bytes(), errG, errC, "seed %d: EncodeDelta after 3 bits", seed)

	// Append after bytes dst holds, into spare capacity that holds
	// garbage (a root of one flat struct is written there by words).
	prefixed := func() []byte {
		dst := append(make([]byte, 0, 64), 0xa5, 0x5a)
		copy(dst[2:cap(dst)], bytes.Repeat([]byte{0xff}, 62))
		return dst
	}
	want, errW := g.Append(prefixed(), cur)
	got, err = c.Append(prefixed(), cur)
	sameOut(t, want, got, errW, err, "seed %d: Append after 2 bytes", seed)

	if errF == nil {
		var x, y T
		errX, errY := g.Unmarshal(full, &x), c.Unmarshal(full, &y)
		sameErr(t, errX, errY, "seed %d: Unmarshal", seed)
		require.Equal(t, x, y, "seed %d: Unmarshal", seed)
		sameDamaged(t, seed, full, func(data []byte, v *T) error { return g.Unmarshal(data, v) },
			func(data []byte, v *T) error { return c.Unmarshal(data, v) }, g)
	}
	if errD != nil {
		return false
	}
	qb, _ := pair(seed) // the receiver's baseline: base as it decoded it
	if c.Quantize(qb) != nil {
		return false
	}
	var x, y T
	errX, errY := g.UnmarshalDelta(delta, qb, &x), c.UnmarshalDelta(delta, qb, &y)
	sameErr(t, errX, errY, "seed %d: UnmarshalDelta", seed)
	require.Equal(t, x, y, "seed %d: UnmarshalDelta", seed)
	sameDamaged(t, seed, delta, func(data []byte, v *T) error { return g.UnmarshalDelta(data, qb, v) },
		func(data []byte, v *T) error { return c.UnmarshalDelta(data, qb, v) }, g)
	return errF == nil && errX == nil
}

// sameDamaged checks the fast decoder fast against the general one gen on
// damaged copies of good (cut short, a bit flipped, a byte more): fast
// fails as gen does, or decodes the same value.
func sameDamaged[T any](t *testing.T, seed int64, good []byte, gen, fast func([]byte, *T) error, g *Codec[T]) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	for k := 0; k < 8 && len(good) > 0; k++ {
		bad := append([]byte(nil), good...)
		switch {
		case k < 3:
			bad = bad[:r.Intn(len(bad))]
		case k < 6:
			bad[r.Intn(len(bad))] ^= 1 << r.Intn(8)
		default:
			bad = append(bad, byte(k-6)) // a whole byte more: 0, then 1
		}
		var x, y T
		errX, errY := gen(bad, &x), fast(bad, &y)
		sameErr(t, errX, errY, "seed %d: decoding %x", seed, bad)
		if errX == nil { // the same values (compared by their codings: NaN)
			bx, ex := g.Marshal(&x)
			by, ey := g.Marshal(&y)
			sameOut(t, bx, by, ex, ey, "seed %d: decoding %x", seed, bad)
		}
	}
}

// pkPlayer is an entity of pointer-free fields with composite and nested
// structs: the delta decoder's flat kernel (decStructDeltaFlat) reads it.
type pkPlayer struct {
	ID    uint16  `net:"id"`
	Pos   pkPos   `net:"composite"`
	Aim   pkAim   // nested: its own changed bits
	Hp    int     `net:"range,min=0,max=200"`
	Alive bool    `net:""`
	Flags pkFlags `net:"composite"`
	// leaves the kernel hands to the general decoder, with adaptive
	// states that a failed kernel restores
	Rot [4]float32 `net:"quat,bits=9"`
	DX  float32    `net:"q,min=-64,max=64,prec=0.01,dmin=-1,dmax=1"`
}

type pkPos struct {
	X, Z float32 `net:"q,min=-512,max=512,prec=0.01"`
	Y    float32 `net:"q,min=-16,max=112,prec=0.01"`
}

type pkAim struct {
	Yaw  float32 `net:"q,min=0,max=360,bits=10"`
	Ammo int8    `net:"range,min=0,max=99"`
}

type pkFlags struct{ Crouch, Firing bool }

type pkWorld struct {
	Tick uint32     `net:"bits=32"`
	Ps   []pkPlayer `net:",maxlen=40"`
}

func pkRandPlayer(r *rand.Rand, id uint16) pkPlayer {
	return pkPlayer{ID: id, Pos: pkPos{X: uni32(r, -512, 512), Y: uni32(r, -16, 112), Z: uni32(r, -512, 512)},
		Aim: pkAim{Yaw: uni32(r, 0, 360), Ammo: int8(r.Intn(100))}, Hp: r.Intn(201), Alive: r.Intn(2) == 0,
		Flags: pkFlags{r.Intn(2) == 0, r.Intn(2) == 0}, Rot: pkQuat(r), DX: uni32(r, -64, 64)}
}

// ewPlayer is pkPlayer without the leaves the delta kernel hands to the
// general decoder: an entity set of them is read at the entity cursor.
type ewPlayer struct {
	ID    uint16  `net:"id"`
	Pos   pkPos   `net:"composite"`
	Aim   pkAim   // nested: its own changed bits
	Hp    int     `net:"range,min=0,max=200"`
	Alive bool    `net:""`
	Flags pkFlags `net:"composite"`
}

type ewWorld struct {
	Tick uint32     `net:"bits=32"`
	Ps   []ewPlayer `net:",maxlen=40"`
}

func ewRandPlayer(r *rand.Rand, id uint16) ewPlayer {
	p := pkRandPlayer(r, id)
	return ewPlayer{ID: p.ID, Pos: p.Pos, Aim: p.Aim, Hp: p.Hp, Alive: p.Alive, Flags: p.Flags}
}

// ewPair returns a baseline and a current ewWorld: players changed in one
// field or more, some removed, some added, and in one pair of 20 a health
// that cannot be coded.
func ewPair(r *rand.Rand) (base, cur ewWorld) {
	for i := range r.Intn(30) {
		base.Ps = append(base.Ps, ewRandPlayer(r, uint16(2*i)))
	}
	cur = ewWorld{Tick: base.Tick + 1}
	for _, p := range base.Ps {
		switch r.Intn(7) {
		case 0:
			continue // removed
		case 1:
			p.Pos.X = min(p.Pos.X+0.5, 512)
		case 2:
			p.Aim.Yaw = uni32(r, 0, 360)
		case 3:
			p.Hp, p.Flags.Firing = r.Intn(201), !p.Flags.Firing
		case 4:
			p = ewRandPlayer(r, p.ID)
		}
		cur.Ps = append(cur.Ps, p)
	}
	for k := range r.Intn(4) {
		cur.Ps = append(cur.Ps, ewRandPlayer(r, uint16(2*k+1)))
	}
	if r.Intn(20) == 0 && len(cur.Ps) > 0 {
		cur.Ps[0].Hp = 300 // cannot be coded
	}
	return base, cur
}

type wdFlat struct {
	X   float32    `net:"q,min=-512,max=512,prec=0.01"`
	Yaw float32    `net:"q,min=0,max=360,bits=10"`
	Hp  int16      `net:"range,min=-50,max=200"`
	On  bool       `net:""`
	N   uint32     `net:"bitlen"`
	Rot [4]float32 `net:"quat,bits=9"`
	Sub wdSub
}

type wdWorld struct{ Items []wdFlat }

type wdRanges struct {
	A uint64 `net:"range,min=0,max=18446744073709551615"`
	B uint16 `net:"range,min=1000,max=60000"`
	C int64  `net:"range,min=-9223372036854775808,max=9223372036854775807"`
	D uint8  `net:"range,min=0,max=255"`
	E uint32 `net:"range,min=0,max=1048575"`
}

type wdSub struct {
	A, B bool
	C    uint8 `net:"range,min=0,max=9"`
}

// wdRand returns a random wdFlat, which cannot be coded in one of every
// odds (never when odds is 0).
func wdRand(r *rand.Rand, odds int) *wdFlat {
	v := &wdFlat{X: uni32(r, -512, 512), Yaw: uni32(r, 0, 360), Hp: int16(r.Intn(251) - 50), On: r.Intn(2) == 0,
		N: uint32(r.Int63n(1 << uint(r.Intn(33)))), Rot: pkQuat(r),
		Sub: wdSub{r.Intn(2) == 0, r.Intn(2) == 0, uint8(r.Intn(10))}}
	switch r.Intn(8) {
	case 0: // a yaw so near a rounding tie that Index's inline terms are not sure of it
		ties := wdYawTies()
		v.Yaw = ties[r.Intn(len(ties))]
	case 1: // a quarter turn: two largest components alike, which Pack32 is not sure of
		v.Rot = [4]float32{0.70710677, 0, 0, 0.70710677}
	case 2:
		v.Rot = [4]float32{0, 0, 0, 1}
	}
	if odds > 0 && r.Intn(odds) == 0 { // cannot be coded
		switch r.Intn(4) {
		case 0:
			v.X = 600
		case 1:
			v.Hp = 201
		case 2:
			v.Sub.C = 10
		default:
			v.Yaw = float32(math.NaN())
		}
	}
	return v
}

// wdYawTies returns float32 yaws of wdFlat whose Index its inline terms
// (fields.Quantizer.IndexTerms) are not sure of: within IndexGuard of a
// rounding boundary.
var wdYawTies = sync.OnceValue(func() []float32 {
	q, err := fields.NewQuantizerBits(0, 360, 10)
	if err != nil {
		panic(err)
	}
	at, inv, off, ok := q.IndexTerms()
	if !ok {
		panic("no inline terms")
	}
	var ties []float32
	for k := range 1023 {
		v := float32((float64(k) + 0.5) * 360 / 1023)
		for range 8 { // a few float32s each side of the tie
			v = math.Nextafter32(v, 0)
		}
		for range 16 {
			y := float64((float64(v)-at)*inv) + off
			if int64(y-fields.IndexGuard) != int64(y) || int64(y+fields.IndexGuard) != int64(y) {
				ties = append(ties, v)
			}
			v = math.Nextafter32(v, 360)
		}
	}
	if len(ties) < 10 {
		panic("too few ties")
	}
	return ties
})

func pkQuat(r *rand.Rand) [4]float32 {
	q := randomQuat(r)
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

func sameOut(t *testing.T, want, got []byte, errWant, errGot error, msg string, args ...any) {
	t.Helper()
	sameErr(t, errWant, errGot, msg, args...)
	if errWant == nil {
		require.Equal(t, want, got, append([]any{msg + ": the bits"}, args...)...)
	}
}

func sameErr(t *testing.T, want, got error, msg string, args ...any) {
	t.Helper()
	if want == nil {
		require.NoError(t, got, append([]any{msg}, args...)...)
		return
	}
	require.Error(t, got, append([]any{msg + ": the general path fails with %v"}, append(args, want)...)...)
	require.Equal(t, want.Error(), got.Error(), append([]any{msg}, args...)...)
}
