package bitwire

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

type Flags struct {
	Crouch bool
	Firing bool
}

// DeltaPlayer is the core issue's player state with Pos and the two flags
// composite.
type DeltaPlayer struct {
	Pos    PlayerPos `net:"composite"`
	Yaw    float32   `net:"q,min=0,max=360,bits=10"`
	Health int       `net:"range,min=0,max=200"`
	Weapon int       `net:"range,min=0,max=15"`
	Flags  Flags     `net:"composite"`
}

type DeltaTransform struct {
	X     float32 `net:"q,min=-100,max=100,prec=0.1,dmin=-1,dmax=1"`
	Y     float32 `net:"q,min=-10,max=10,prec=0.1,dmin=-1,dmax=1"`
	Z     float32 `net:"q,min=-100,max=100,prec=0.1,dmin=-1,dmax=1"`
	Yaw   float32 `net:"q,min=0,max=360,prec=0.1"`
	Pitch float32 `net:"q,min=0,max=360,prec=0.1"`
}

func deltaBits[T any](t *testing.T, base, cur *T) int {
	t.Helper()
	c := MustFor[T]()
	var w bits.Writer
	require.NoError(t, c.EncodeDelta(&w, base, cur))
	// and a receiver, whose baseline is quantized, must decode the
	// quantized cur
	qbase := *base
	require.NoError(t, c.Quantize(&qbase))
	var got T
	r := bits.NewReader(w.Bytes())
	require.NoError(t, c.DecodeDelta(r, &qbase, &got))
	want := *cur
	require.NoError(t, c.Quantize(&want))
	require.Equal(t, want, got)
	return w.Len()
}

func TestDeltaPlayerState(t *testing.T) {
	base := DeltaPlayer{Pos: PlayerPos{X: 10, Y: 2, Z: -30}, Yaw: 90, Health: 100, Weapon: 3}
	require.Equal(t, 5, deltaBits(t, &base, &base))
	cur := base
	cur.Pos.X += 0.5
	cur.Pos.Z -= 0.25
	cur.Yaw = 95
	require.Equal(t, 63, deltaBits(t, &base, &cur))
}

func TestDeltaTransform(t *testing.T) {
	base := DeltaTransform{X: 10, Y: 1, Z: -20, Yaw: 45, Pitch: 10}
	require.Equal(t, 5, deltaBits(t, &base, &base))
	moved := base
	moved.X += 0.5
	moved.Y += 0.5
	moved.Z += 0.5
	// Each axis: changed, in the window, then 5 steps in the plain fixed
	// coding, 5 - lo = 15 in BitsRequired(20) = 5 bits: the window's
	// guess of a move, 20/32 steps, gives a parameter of 0, so no
	// adaptive form could save a bit (wire version 4; version 3 wrote
	// 29 bits).
	require.Equal(t, 3*7+2, deltaBits(t, &base, &moved))
	data, err := MarshalDelta(&base, &moved)
	require.NoError(t, err)
	require.Len(t, data, 3)

	plainBase := Transform{X: base.X, Y: base.Y, Z: base.Z, Yaw: base.Yaw, Pitch: base.Pitch}
	plainMoved := Transform{X: moved.X, Y: moved.Y, Z: moved.Z, Yaw: moved.Yaw, Pitch: moved.Pitch}
	require.Equal(t, 35, deltaBits(t, &plainBase, &plainMoved))

	tele := base
	tele.X, tele.Y, tele.Z = -80, 9, 70
	require.Equal(t, 38, deltaBits(t, &base, &tele))
}

func TestDeltaSubStepMoveIsFree(t *testing.T) {
	base := Transform{X: 10, Y: 1, Z: -20, Yaw: 45, Pitch: 10}
	cur := base
	cur.X += 0.04 // less than half of the 0.1 step
	require.Equal(t, 5, deltaBits(t, &base, &cur))
}

type Cube struct {
	ID       uint32     `net:"id"`
	Pos      PlayerPos  `net:"composite"`
	Rot      [4]float32 `net:"quat,bits=9"`
	Sleeping bool
}

type CubeWorld struct {
	Tick  uint32 `net:"bits=32"`
	Cubes []Cube
}

func makeWorld(rng *rand.Rand, n int) CubeWorld {
	w := CubeWorld{Tick: 1, Cubes: make([]Cube, n)}
	for i := range w.Cubes {
		q := randomQuat(rng)
		w.Cubes[i] = Cube{ID: uint32(i*2 + 1), Pos: PlayerPos{X: float32(rng.Float64()*1000 - 500), Y: float32(rng.Float64() * 100), Z: float32(rng.Float64()*1000 - 500)},
			Rot: [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}}
	}
	return w
}

func cloneWorld(w CubeWorld) CubeWorld {
	c := w
	c.Cubes = append([]Cube(nil), w.Cubes...)
	return c
}

// changedWorlds returns 300 cubes and the same a tick later with 5% of
// them moved and turned.
func changedWorlds() (base, cur CubeWorld) {
	rng := rand.New(rand.NewSource(29))
	base = makeWorld(rng, 300)
	cur = cloneWorld(base)
	for _, i := range rng.Perm(300)[:15] {
		q := randomQuat(rng)
		cur.Cubes[i].Pos.X += 0.5
		cur.Cubes[i].Rot = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
	}
	return base, cur
}

func TestEntitySetOverhead(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	base := makeWorld(rng, 901)
	cur := cloneWorld(base)
	cur.Tick++
	perm := rng.Perm(901)[:45]
	for _, i := range perm {
		cur.Cubes[i].Pos.X += 1
	}
	total := deltaBits(t, &base, &cur)
	// each changed cube's own data: its changed bits (Pos, Rot, Sleeping)
	// and Pos in full (48 bits)
	own := 45 * (3 + 48)
	tick := 1 + 32
	overhead := total - own - tick
	t.Logf("901 cubes, 45 changed: %d bits, %d beyond the changed cubes' own data", total, overhead)
	require.Less(t, overhead, 400)
}

func TestEntityAddRemove(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	base := makeWorld(rng, 50)
	cur := cloneWorld(base)
	// remove a few, change some, add new ones at the end and in the middle
	cur.Cubes = append(cur.Cubes[:10], cur.Cubes[13:]...)
	cur.Cubes[20].Sleeping = true
	extra := makeWorld(rng, 3).Cubes
	for i := range extra {
		extra[i].ID = uint32(1000 + i)
	}
	cur.Cubes = append(cur.Cubes, extra...)
	mid := Cube{ID: 4, Rot: [4]float32{0, 0, 0, 1}} // between ids 3 and 5
	cur.Cubes = append(cur.Cubes[:2], append([]Cube{mid}, cur.Cubes[2:]...)...)
	deltaBits(t, &base, &cur)
	// empty to full and back
	empty := CubeWorld{}
	deltaBits(t, &empty, &cur)
	deltaBits(t, &cur, &empty)
	// out-of-order ids still round-trip
	shuffled := cloneWorld(cur)
	rng.Shuffle(len(shuffled.Cubes), func(i, j int) { shuffled.Cubes[i], shuffled.Cubes[j] = shuffled.Cubes[j], shuffled.Cubes[i] })
	deltaBits(t, &cur, &shuffled)
}

type Spinner struct {
	Rot [4]float32 `net:"quat,bits=9"`
}

func rotate(q [4]float64, axis [3]float64, angle float64) [4]float64 {
	s, c := math.Sin(angle/2), math.Cos(angle/2)
	r := [4]float64{axis[0] * s, axis[1] * s, axis[2] * s, c}
	// r * q
	return [4]float64{
		r[3]*q[0] + r[0]*q[3] + r[1]*q[2] - r[2]*q[1],
		r[3]*q[1] - r[0]*q[2] + r[1]*q[3] + r[2]*q[0],
		r[3]*q[2] + r[0]*q[1] - r[1]*q[0] + r[2]*q[3],
		r[3]*q[3] - r[0]*q[0] - r[1]*q[1] - r[2]*q[2],
	}
}

func TestRelativeQuaternionSmallRotations(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	c := MustFor[Spinner]()
	total, changed := 0, 0
	for i := 0; i < 5000; i++ {
		q := randomQuat(rng)
		base := Spinner{Rot: [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}}
		require.NoError(t, c.Quantize(&base))
		ax := randomQuat(rng)
		n := math.Sqrt(ax[0]*ax[0] + ax[1]*ax[1] + ax[2]*ax[2])
		angle := rng.Float64() * 2 * math.Pi / 180
		bq := [4]float64{float64(base.Rot[0]), float64(base.Rot[1]), float64(base.Rot[2]), float64(base.Rot[3])}
		nq := rotate(bq, [3]float64{ax[0] / n, ax[1] / n, ax[2] / n}, angle)
		cur := Spinner{Rot: [4]float32{float32(nq[0]), float32(nq[1]), float32(nq[2]), float32(nq[3])}}
		if c.Equal(&base, &cur) {
			continue
		}
		total += deltaBits(t, &base, &cur)
		changed++
	}
	avg := float64(total) / float64(changed)
	t.Logf("relative quaternion: %.2f bits on average over %d changed rotations", avg, changed)
	require.Less(t, avg, 13.0) // wire versions 1 and 2 spent 14.6
}

// Regression (found by FuzzUnionUnmarshal): a slice of adaptive integers in
// shared-length mode takes one bit an element, so the decoder's length
// bound must not assume a whole prefix per element.
func TestSharedLengthSliceLengthBound(t *testing.T) {
	type msg struct {
		Offsets []int32
	}
	v := msg{Offsets: []int32{0, 1, 0, 1, 1, 0, 0, 1, 1}}
	data, err := Marshal(&v)
	require.NoError(t, err)
	var got msg
	require.NoError(t, Unmarshal(data, &got))
	require.Equal(t, v, got)
}

// Every strict prefix of a delta is an error, never a panic and never a
// value.
func TestDeltaPrefixes(t *testing.T) {
	c := MustFor[fuzzScene]()
	base, cur := fuzzScenes()
	require.NoError(t, c.Quantize(&base))
	for _, pair := range [][2]*fuzzScene{{&base, &cur}, {&cur, &base}} {
		qb := *pair[0]
		require.NoError(t, c.Quantize(&qb))
		data, err := c.MarshalDelta(pair[0], pair[1])
		require.NoError(t, err)
		for i := 0; i < len(data); i++ {
			var out fuzzScene
			err := c.UnmarshalDelta(data[:i], &qb, &out)
			require.ErrorIs(t, err, ErrUnexpectedEnd, "prefix of %d of %d bytes", i, len(data))
		}
		var out fuzzScene
		require.NoError(t, c.UnmarshalDelta(data, &qb, &out))
		require.ErrorIs(t, c.UnmarshalDelta(append(data, 0), &qb, &out), ErrTrailingData)
	}
}

func TestDeltaMapNaNKeys(t *testing.T) {
	type fm struct{ M map[float64]uint8 }
	base := fm{M: map[float64]uint8{1: 1}}
	cur := fm{M: map[float64]uint8{1: 1, math.NaN(): 2}}
	_, err := MarshalDelta(&base, &cur)
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = MarshalDelta(&cur, &base)
	require.ErrorIs(t, err, ErrInvalidValue)
}

type fusedEnt struct {
	ID   uint16     `net:"id"`
	X    float32    `net:"q,min=-100,max=100,prec=0.1"`
	Rot  [4]float32 `net:"quat,bits=9"`
	N    int32      `net:"bitlen"`
	Tags *string    `net:",maxlen=8"` // only in the pointer variant
}

type fusedPod struct {
	ID  uint16     `net:"id"`
	X   float32    `net:"q,min=-100,max=100,prec=0.1"`
	Rot [4]float32 `net:"quat,bits=9"`
	N   int32      `net:"bitlen"`
}

type fusedWorld[E any] struct {
	Ents []E
}

// editEntities makes cur from base: some entities moved by less than half a
// step (different bytes, same quantized value), some changed, some removed,
// some added; mod edits one entity.
func editEntities[E any](rng *rand.Rand, base []E, mod func(e *E, how int)) []E {
	var cur []E
	for i := range base {
		e := base[i]
		switch how := rng.Intn(20); {
		case how == 0: // removed
			continue
		case how < 6:
			mod(&e, how)
		}
		cur = append(cur, e)
	}
	return cur
}

// The encoder judges and encodes entity-set survivors in one fused pass
// (with byte-equal runs skipped) unless it keeps accounts; both passes must
// write the same bits, and report an error at the same place.
func TestEntityDeltaFusedMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	mod := func(x *float32, rot *[4]float32, n *int32, how int) {
		switch how {
		case 1:
			*x += 0.01 // below half a step: unchanged once quantized
		case 2:
			*x += 1
		case 3:
			q := randomQuat(rng)
			*rot = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
		case 4:
			*n = -*n - 3 // a negative value: the message's sign flag
		case 5:
			rot[0] = -rot[0] + 1e-7 // a tiny turn: often the same grid point
		}
	}
	for trial := 0; trial < 200; trial++ {
		n := rng.Intn(70)
		pods := make([]fusedPod, n)
		ptrs := make([]fusedEnt, n)
		for i := range pods {
			q := randomQuat(rng)
			rot := [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
			x := float32(rng.Float64()*180 - 90)
			pods[i] = fusedPod{ID: uint16(3*i + 1), X: x, Rot: rot, N: int32(rng.Intn(1000))}
			s := "ab"
			ptrs[i] = fusedEnt{ID: uint16(3*i + 1), X: x, Rot: rot, N: int32(rng.Intn(1000)), Tags: &s}
		}
		curPods := editEntities(rng, pods, func(e *fusedPod, how int) { mod(&e.X, &e.Rot, &e.N, how) })
		curPtrs := editEntities(rng, ptrs, func(e *fusedEnt, how int) { mod(&e.X, &e.Rot, &e.N, how) })
		if rng.Intn(2) == 0 { // a new entity after the last one
			curPods = append(curPods, fusedPod{ID: 999, X: 1, Rot: [4]float32{0, 0, 0, 1}})
		}
		if rng.Intn(4) == 0 && len(curPods) > 0 { // a value out of range
			curPods[rng.Intn(len(curPods))].X = 500
		}
		checkFusedDelta(t, &fusedWorld[fusedPod]{pods}, &fusedWorld[fusedPod]{curPods})
		checkFusedDelta(t, &fusedWorld[fusedEnt]{ptrs}, &fusedWorld[fusedEnt]{curPtrs})
	}
}

func checkFusedDelta[T any](t *testing.T, base, cur *T) {
	t.Helper()
	c := MustFor[T]()
	plain := c.WithStats(NewStats())
	got, err := c.MarshalDelta(base, cur)
	want, werr := plain.MarshalDelta(base, cur)
	if werr != nil {
		require.Error(t, err)
		require.Equal(t, werr.Error(), err.Error())
		var fe, we *FieldError
		require.ErrorAs(t, err, &fe)
		require.ErrorAs(t, werr, &we)
		require.Equal(t, we.Bit, fe.Bit)
		return
	}
	require.NoError(t, err)
	require.Equal(t, want, got)
	qbase, qcur := *base, *cur
	require.NoError(t, c.Quantize(&qbase))
	require.NoError(t, c.Quantize(&qcur))
	var out T
	require.NoError(t, c.UnmarshalDelta(got, &qbase, &out))
	require.Equal(t, qcur, out)
}

// firstDiff finds the first differing byte wherever it is: in a skipped
// block, in the word loop or in the tail, and equalRun turns it into whole
// elements.
func TestFirstDiffAndEqualRun(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for trial := 0; trial < 3000; trial++ {
		n := rng.Intn(1200)
		a := make([]byte, n)
		rng.Read(a)
		b := append([]byte(nil), a...)
		want := n
		if n > 0 && rng.Intn(5) > 0 {
			want = rng.Intn(n)
			b[want] ^= byte(1 + rng.Intn(255))
			if k := want + 1 + rng.Intn(n-want); k < n { // a later difference too
				b[k] ^= 0x80
			}
		}
		require.Equal(t, want, firstDiff(a, b), "n %d", n)
		if n == 0 {
			continue
		}
		stride := uintptr(1 + rng.Intn(40))
		count := n / int(stride)
		if count == 0 {
			continue
		}
		got := equalRun(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), count, stride)
		require.Equal(t, min(want/int(stride), count), got, "n %d stride %d", n, stride)
	}
}

// firstDiff finds a difference at every position of every length up to
// 200 bytes, with the slices at every offset from an 8-byte boundary and
// differing bytes just past their ends (which it must not read), and
// equalRun turns it into whole elements for every stride up to 40.
func TestFirstDiffEveryPosition(t *testing.T) {
	bufA, bufB := make([]byte, 224), make([]byte, 224)
	for i := range bufA {
		bufA[i] = byte(i*7 + 3)
	}
	for off := 0; off < 8; off++ {
		for n := 0; n <= 200; n++ {
			copy(bufB, bufA)
			for k := off + n; k < len(bufB); k++ {
				bufB[k] ^= 0xff // beyond the end: differs
			}
			a, b := bufA[off:off+n:off+n], bufB[off:off+n:off+n]
			require.Equal(t, n, firstDiff(a, b), "equal: off %d n %d", off, n)
			for stride := 1; stride <= 40 && n > 0; stride++ {
				if count := n / stride; count > 0 {
					require.Equal(t, count, equalRun(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), count, uintptr(stride)))
				}
			}
			for at := 0; at < n; at++ {
				for _, bit := range []byte{0x01, 0x80} {
					b[at] ^= bit
					require.Equal(t, at, firstDiff(a, b), "off %d n %d at %d", off, n, at)
					if stride := 1 + (at+n)%40; n/stride > 0 {
						got := equalRun(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), n/stride, uintptr(stride))
						require.Equal(t, min(at/stride, n/stride), got, "off %d n %d at %d stride %d", off, n, at, stride)
					}
					b[at] ^= bit
				}
			}
		}
	}
}

// Index sets round-trip whichever form the encoder picks: empty, full,
// bitmask, and Rice codes with quotients from 0 to well past 63 bits.
func TestIndexSetRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	sets := [][]int32{{}, {0}, {5, 1049}, {0, 1, 2, 3, 2000}}
	var long []int32 // a hundred neighbours and one far away: k = 4, a quotient of 118
	for i := int32(0); i < 100; i++ {
		long = append(long, i)
	}
	sets = append(sets, append(long, 2000))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.Intn(3000)
		var idx []int32
		p := []float64{0.001, 0.05, 0.5, 0.99}[rng.Intn(4)]
		for i := 0; i < n; i++ {
			if rng.Float64() < p {
				idx = append(idx, int32(i))
			}
		}
		sets = append(sets, idx)
	}
	for _, idx := range sets {
		n := 2100
		if len(idx) > 0 {
			n = max(n, int(idx[len(idx)-1])+1+rand.Intn(3))
		}
		for _, known := range []bool{false, true} {
			var w bits.Writer
			e := encoder{w: &w}
			e.writeIndexSet(idx, n, known)
			d := decoder{r: bits.NewReader(w.Bytes())}
			count := -1
			if known {
				count = len(idx)
			}
			got, err := d.readIndexSet(new(arena), n, count)
			require.NoError(t, err)
			require.Equal(t, len(idx), len(got))
			for k := range idx {
				require.Equal(t, idx[k], got[k])
			}
			require.Equal(t, w.Len(), d.r.Pos(), "n %d, %d indexes", n, len(idx))
		}
	}
}

type depthInner struct{ S string }

type depthOuter struct {
	A  uint8
	In depthInner
}

type listNode struct {
	V    uint8
	Next *listNode
}

type listEnt struct {
	ID   uint16 `net:"id"`
	Head *listNode
}

type listWorld struct{ Ents []listEnt }

// Judging a nested struct or an entity in one pass with its encoding must
// not change what the comparison first decided: an unchanged nested struct
// beyond a codec's depth limit is still one 0 bit, and a recursive value as
// deep as eqNode's cycle guard codes as it did (the plain path, which the
// accounting codec takes, is the reference).
func TestOnePassJudgementMatchesComparison(t *testing.T) {
	c := MustFor[depthOuter]().WithLimits(Limits{MaxDepth: 1})
	base := depthOuter{A: 1, In: depthInner{S: "x"}}
	cur := depthOuter{A: 2, In: depthInner{S: "x"}}
	got, err := c.MarshalDelta(&base, &cur)
	require.NoError(t, err)
	want, err := c.WithStats(NewStats()).MarshalDelta(&base, &cur)
	require.NoError(t, err)
	require.Equal(t, want, got)
	var out depthOuter
	require.NoError(t, c.UnmarshalDelta(got, &base, &out))
	require.Equal(t, cur, out)
	cur.In.S = "y" // changed: beyond the limit, an error, as before
	_, err = c.MarshalDelta(&base, &cur)
	require.ErrorIs(t, err, ErrInvalidValue)

	list := func(n int) *listNode {
		var h *listNode
		for i := 0; i < n; i++ {
			h = &listNode{V: uint8(i), Next: h}
		}
		return h
	}
	lc := MustFor[listWorld]()
	for _, n := range []int{1, 10, 49, 50, 51} {
		b := listWorld{Ents: []listEnt{{ID: 1, Head: list(n)}, {ID: 2, Head: list(3)}}}
		cu := listWorld{Ents: []listEnt{{ID: 1, Head: list(n)}, {ID: 2, Head: list(4)}}}
		got, gotErr := lc.MarshalDelta(&b, &cu)
		want, wantErr := lc.WithStats(NewStats()).MarshalDelta(&b, &cu)
		require.Equal(t, errString(wantErr), errString(gotErr), "list of %d", n)
		require.Equal(t, want, got, "list of %d", n)
	}
}

type onceInner struct {
	Ents  []fusedPod
	Parts []fusedPod        // matched by index
	Tags  map[uint8]float32 `net:"q,min=0,max=10,prec=0.5"`
	Ptr   *fusedPod
}

type onceOuter struct {
	A     uint8
	In    onceInner
	Ents  []fusedPod
	Parts []fusedPod
}

// A field whose change depends on a subtree (a struct, an entity set, a
// slice or a map) is judged while its delta is written and taken back when
// nothing changed, instead of being compared first: the bits are exactly
// those of the compare-first path (which the accounting codec takes),
// errors included.
func TestSubtreesJudgedWhileWritten(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	ents := func(n int) []fusedPod {
		s := make([]fusedPod, n)
		for i := range s {
			s[i] = fusedPod{ID: uint16(2*i + 1), X: float32(rng.Intn(2000)-1000) / 10, Rot: [4]float32{0, 0, 0, 1}, N: int32(rng.Intn(100))}
		}
		return s
	}
	edit := func(s []fusedPod) []fusedPod {
		s = append([]fusedPod(nil), s...)
		switch rng.Intn(6) {
		case 0: // unchanged
		case 1:
			if len(s) > 0 {
				s[rng.Intn(len(s))].Rot = [4]float32{0.6, 0, 0, 0.8}
			}
		case 2:
			if len(s) > 0 {
				s[rng.Intn(len(s))].X += 0.01 // under half a step: unchanged
			}
		case 3:
			if len(s) > 0 {
				s = s[1:]
			}
		case 4:
			s = append(s, fusedPod{ID: 999, Rot: [4]float32{1, 0, 0, 0}})
		case 5:
			if len(s) > 0 {
				s[rng.Intn(len(s))].X = 500 // out of range: an error
			}
		}
		return s
	}
	for trial := 0; trial < 400; trial++ {
		base := onceOuter{A: 1, In: onceInner{Ents: ents(rng.Intn(5)), Parts: ents(rng.Intn(4)), Tags: map[uint8]float32{1: 2, 3: 4}},
			Ents: ents(rng.Intn(5)), Parts: ents(rng.Intn(3))}
		if rng.Intn(2) == 0 {
			base.In.Ptr = &fusedPod{ID: 5, Rot: [4]float32{0, 0, 0, 1}}
		}
		cur := base
		cur.In.Ents, cur.In.Parts = edit(base.In.Ents), edit(base.In.Parts)
		cur.Ents, cur.Parts = edit(base.Ents), edit(base.Parts)
		cur.In.Tags = map[uint8]float32{1: 2, 3: 4}
		switch rng.Intn(4) {
		case 0:
			cur.In.Tags[3] = 6
		case 1:
			delete(cur.In.Tags, 1)
		case 2:
			cur.In.Tags[3] = 4.1 // within half a step
		}
		checkFusedDelta(t, &base, &cur)
	}
}

type idI8 struct {
	ID int8    `net:"id"`
	X  float32 `net:"q,min=-100,max=100,prec=0.1"`
}

type idI64 struct {
	ID int64   `net:"id"`
	X  float32 `net:"q,min=-100,max=100,prec=0.1"`
}

type idU32 struct {
	ID uint32  `net:"id"`
	X  float32 `net:"q,min=-100,max=100,prec=0.1"`
}

// The fused pass matches ids of every width and sign as the plain pass
// does, negative ids included (compared as the plain pass compares them),
// with entities removed, added and changed.
func TestEntityDeltaFusedIDKinds(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	for trial := 0; trial < 100; trial++ {
		n := rng.Intn(40)
		ids := rng.Perm(120)[:n]
		sort.Ints(ids)
		var b8, c8 []idI8
		var b64, c64 []idI64
		var b32, c32 []idU32
		for _, id := range ids {
			x := float32(rng.Intn(100))
			id -= 60 // negative ids too
			if rng.Intn(5) > 0 {
				b8, b64, b32 = append(b8, idI8{int8(id), x}), append(b64, idI64{int64(id) << 40, x}), append(b32, idU32{uint32(id), x})
			}
			if rng.Intn(5) > 0 {
				if rng.Intn(3) == 0 {
					x++
				}
				c8, c64, c32 = append(c8, idI8{int8(id), x}), append(c64, idI64{int64(id) << 40, x}), append(c32, idU32{uint32(id), x})
			}
		}
		checkFusedDelta(t, &fusedWorld[idI8]{b8}, &fusedWorld[idI8]{c8})
		checkFusedDelta(t, &fusedWorld[idI64]{b64}, &fusedWorld[idI64]{c64})
		checkFusedDelta(t, &fusedWorld[idU32]{b32}, &fusedWorld[idU32]{c32})
	}
}
