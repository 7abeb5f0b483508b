package bitwire

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The flat fast path (flat.go) must be invisible: same bits, same decoded
// values, same errors as the general path. These types are used by no other
// test, so switching their flat plans off and on here races with nothing.

type flatVec struct {
	X, Y, Z float32 `net:"q,min=-100,max=100,prec=0.01"`
}

type flatEntity struct {
	Pos    flatVec
	Vel    [2]flatVec
	Yaw    float64 `net:"q,min=0,max=360,bits=12,clamp"`
	HP     int16   `net:"range,min=-50,max=200"`
	Ammo   uint8   `net:"range,min=0,max=99"`
	Team   uint8   `net:"bits=2"`
	Flags  int32   `net:"bits=7,clamp"`
	Raw    float32
	Seq    uint32     `net:"varint,group=5"`
	Rot    [4]float32 `net:"quat"`
	At     time.Time
	Alive  bool
	Hidden bool   `net:"-"`
	ID     uint32 // unsigned bitlen: flat
	// a 62-bit leaf and a 64-bit one: runs of one leaf, longer than
	// maxRunBits
	Fine [4]float32 `net:"quat,bits=20"`
	Big  int64      `net:"range,min=-9223372036854775808,max=9223372036854775807"`
}

type flatWorld struct {
	Tick     uint16 `net:"bits=16"`
	Entities [3]flatEntity
}

// notFlat has a slice: the flat path does not apply.
type notFlat struct {
	A flatVec
	S []int8 `net:",maxlen=4"`
}

// flatStrings has a string and a byte slice, which the flat path codes
// through encNode and decNode.
type flatStrings struct {
	A flatVec
	S string `net:",maxlen=80"`
	B []byte
	T bool
}

// signedNotFlat has a signed bitlen integer, whose sign flag the flat path
// could not take back on a rewind.
type signedNotFlat struct {
	A flatVec
	N int32
}

func TestFlatPlans(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *plan
		want bool
	}{
		{"flatVec", MustFor[flatVec]().p, true},
		{"flatEntity", MustFor[flatEntity]().p, true},
		{"flatWorld", MustFor[flatWorld]().p, true},
		{"PlayerState", MustFor[PlayerState]().p, true},
		{"Players64", MustFor[Players64]().p, true},
		{"notFlat", MustFor[notFlat]().p, false},
		{"flatStrings", MustFor[flatStrings]().p, true},
		{"signedNotFlat", MustFor[signedNotFlat]().p, false},
		{"Adaptive (bitlen groups)", MustFor[Adaptive]().p, false},
	} {
		if got := tc.p.flat != nil; got != tc.want {
			t.Errorf("%s: flat plan %v, want %v", tc.name, got, tc.want)
		}
	}
	// PlayerState's 72 bits: the position's 48 in one run, then yaw,
	// health, weapon and the two flags (10+8+4+1+1) in another.
	var runs [][2]int
	for _, op := range MustFor[PlayerState]().p.flat.ops {
		if op.count > 0 {
			runs = append(runs, [2]int{op.count, op.bits})
		}
	}
	if len(runs) != 2 || runs[0] != [2]int{3, 48} || runs[1] != [2]int{5, 24} {
		t.Errorf("PlayerState runs (leaves, bits) %v, want [[3 48] [5 24]]", runs)
	}
	if fp := MustFor[flatWorld]().p.flat; fp.depth != 3 || len(fp.ops) != 1+3*22 {
		t.Errorf("flatWorld: depth %d and %d ops, want 3 and %d", fp.depth, len(fp.ops), 1+3*22)
	}
}

// withoutFlat runs f with the flat plans of p and of every struct in it
// switched off.
func withoutFlat(p *plan, f func()) {
	saved := map[*plan]*flatPlan{}
	var walkPlan func(*plan)
	var walkNode func(*node)
	walkPlan = func(p *plan) {
		if _, seen := saved[p]; seen {
			return
		}
		saved[p] = p.flat
		for _, fl := range p.fields {
			walkNode(fl.node)
		}
	}
	walkNode = func(n *node) {
		if n == nil {
			return
		}
		if n.sub != nil {
			walkPlan(n.sub)
		}
		walkNode(n.elem)
		walkNode(n.key)
	}
	walkPlan(p)
	for q := range saved {
		q.flat = nil
	}
	defer func() {
		for q, fp := range saved {
			q.flat = fp
		}
	}()
	f()
}

func randomFlatWorld(rng *rand.Rand, wild bool) flatWorld {
	f := func(min, max float64) float64 {
		if wild && rng.IntN(40) == 0 {
			return []float64{math.NaN(), math.Inf(1), max + 1, min - 1}[rng.IntN(4)]
		}
		return min + rng.Float64()*(max-min)
	}
	var w flatWorld
	w.Tick = uint16(rng.Uint32())
	for i := range w.Entities {
		e := &w.Entities[i]
		e.Pos = flatVec{float32(f(-100, 100)), float32(f(-100, 100)), float32(f(-100, 100))}
		for j := range e.Vel {
			e.Vel[j] = flatVec{float32(f(-100, 100)), float32(f(-100, 100)), float32(f(-100, 100))}
		}
		e.Yaw = f(-10, 370)
		e.HP = int16(f(-50, 200))
		e.Ammo = uint8(rng.IntN(100))
		e.Team = uint8(rng.IntN(4))
		e.Flags = int32(rng.IntN(300) - 150)
		e.Raw = float32(rng.NormFloat64())
		e.Seq = rng.Uint32()
		e.Rot = [4]float32{0, 0, 0, 1}
		if wild && rng.IntN(20) == 0 {
			e.Rot = [4]float32{1, 1, 0, 0}
		}
		e.At = time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9)).UTC()
		e.Alive = rng.IntN(2) == 0
		e.ID = rng.Uint32() >> rng.IntN(32)
		e.Fine = [4]float32{0.5, -0.5, 0.5, 0.5}
		if rng.IntN(2) == 0 {
			e.Fine = [4]float32{float32(math.Sqrt(0.9)), 0, float32(-math.Sqrt(0.1)), 0}
		}
		e.Big = int64(rng.Uint64())
		if wild && rng.IntN(30) == 0 {
			e.Ammo = 150
		}
	}
	return w
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestFlatPathMatchesGeneralPath(t *testing.T) {
	c := MustFor[flatWorld]()
	rng := rand.New(rand.NewPCG(7, 8))
	var errs int
	for i := 0; i < 3000; i++ {
		v := randomFlatWorld(rng, true)
		got, gotErr := c.Append([]byte{0xEE}, &v)
		var want []byte
		var wantErr error
		withoutFlat(c.p, func() { want, wantErr = c.Append([]byte{0xEE}, &v) })
		if errString(gotErr) != errString(wantErr) || string(got) != string(want) {
			t.Fatalf("encode %d: flat %x, %v; general %x, %v", i, got, gotErr, want, wantErr)
		}
		if gotErr != nil {
			errs++
			continue
		}
		data := got[1:]
		// Decode the value, every prefix of it and a corrupted copy: same
		// values, same errors.
		inputs := [][]byte{data, data[:rng.IntN(len(data))], append([]byte(nil), data...)}
		inputs[2][rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
		for k, in := range inputs {
			var a, b flatWorld
			errA := c.Unmarshal(in, &a)
			var errB error
			withoutFlat(c.p, func() { errB = c.Unmarshal(in, &b) })
			if errString(errA) != errString(errB) {
				t.Fatalf("decode %d/%d: flat error %v, general %v", i, k, errA, errB)
			}
			if errA == nil && !sameFlatWorld(&a, &b) {
				t.Fatalf("decode %d/%d: flat %+v\ngeneral %+v", i, k, a, b)
			}
		}
	}
	if errs == 0 {
		t.Fatal("no encoding failed: the wild values do not reach the error paths")
	}
}

// sameFlatWorld compares bit for bit (NaN included) except time locations.
func sameFlatWorld(a, b *flatWorld) bool {
	ca, cb := *a, *b
	for i := range ca.Entities {
		if !ca.Entities[i].At.Equal(cb.Entities[i].At) {
			return false
		}
		ca.Entities[i].At, cb.Entities[i].At = time.Time{}, time.Time{}
		if math.Float32bits(ca.Entities[i].Raw) != math.Float32bits(cb.Entities[i].Raw) {
			return false
		}
		ca.Entities[i].Raw, cb.Entities[i].Raw = 0, 0
	}
	return ca == cb
}

func TestFlatPathRespectsLimitsAndDebug(t *testing.T) {
	base := MustFor[flatWorld]()
	v := randomFlatWorld(rand.New(rand.NewPCG(9, 10)), false)
	for _, c := range []*Codec[flatWorld]{
		base.WithLimits(Limits{MaxDepth: 1}),
		base.WithLimits(Limits{MaxDepth: 2}),
		base.WithLimits(Limits{MaxDepth: 3}),
		base.WithDebug(true),
	} {
		got, gotErr := c.Append(nil, &v)
		var want []byte
		var wantErr error
		withoutFlat(c.p, func() { want, wantErr = c.Append(nil, &v) })
		if errString(gotErr) != errString(wantErr) || string(got) != string(want) {
			t.Fatalf("encode: flat %x, %v; general %x, %v", got, gotErr, want, wantErr)
		}
		data, err := base.WithDebug(c.o.debug).Append(nil, &v)
		if err != nil {
			t.Fatal(err)
		}
		var a, b flatWorld
		errA := c.Unmarshal(data, &a)
		var errB error
		withoutFlat(c.p, func() { errB = c.Unmarshal(data, &b) })
		if errString(errA) != errString(errB) {
			t.Fatalf("decode: flat error %v, general %v", errA, errB)
		}
	}
}

// flatSlice holds a slice of flat structs: encElems and decElems run the
// flat path over the whole slice, and rewind it on any error.
type flatSlice struct {
	Tick uint16
	Ents []flatEntity `net:",maxlen=8"`
}

func TestFlatSlicePathMatchesGeneralPath(t *testing.T) {
	c := MustFor[flatSlice]()
	rng := rand.New(rand.NewPCG(11, 12))
	var errs int
	for i := 0; i < 2000; i++ {
		w := randomFlatWorld(rng, true)
		v := flatSlice{Tick: w.Tick, Ents: w.Entities[:rng.IntN(4)]}
		for _, lim := range []*Codec[flatSlice]{c, c.WithLimits(Limits{MaxDepth: 2 + rng.IntN(3)})} {
			got, gotErr := lim.Append(nil, &v)
			var want []byte
			var wantErr error
			withoutFlat(c.p, func() { want, wantErr = lim.Append(nil, &v) })
			if errString(gotErr) != errString(wantErr) || string(got) != string(want) {
				t.Fatalf("encode %d: flat %x, %v; general %x, %v", i, got, gotErr, want, wantErr)
			}
			if gotErr != nil {
				errs++
				continue
			}
			inputs := [][]byte{got, got[:rng.IntN(len(got))], append([]byte(nil), got...)}
			inputs[2][rng.IntN(len(got))] ^= byte(1 + rng.IntN(255))
			for k, in := range inputs {
				var a, b flatSlice
				errA := lim.Unmarshal(in, &a)
				var errB error
				withoutFlat(c.p, func() { errB = lim.Unmarshal(in, &b) })
				if errString(errA) != errString(errB) {
					t.Fatalf("decode %d/%d: flat error %v, general %v", i, k, errA, errB)
				}
				if errA == nil {
					wa := flatWorld{Tick: a.Tick}
					wb := flatWorld{Tick: b.Tick}
					if len(a.Ents) != len(b.Ents) {
						t.Fatalf("decode %d/%d: %d entities, general %d", i, k, len(a.Ents), len(b.Ents))
					}
					copy(wa.Entities[:], a.Ents)
					copy(wb.Entities[:], b.Ents)
					if !sameFlatWorld(&wa, &wb) {
						t.Fatalf("decode %d/%d: flat %+v\ngeneral %+v", i, k, a, b)
					}
				}
			}
		}
	}
	if errs == 0 {
		t.Fatal("no encoding failed: the wild values do not reach the error paths")
	}
}

// wordCrate has only leaves that encWords and decWords code: q on float32
// (one grid proven multiply-only, one not), ranges, bools, an unsigned
// bitlen integer and a float32 quaternion with a table.
type wordCrate struct {
	ID    uint32
	X     float32    `net:"q,min=-512,max=512,prec=0.01"`
	Y     float32    `net:"q,min=1,max=64,prec=0.01"` // not proven: Index
	HP    int16      `net:"range,min=-50,max=200"`
	Rot   [4]float32 `net:"quat,bits=9"`
	Awake bool
	Small [4]float32 `net:"quat,bits=3"`
}

type wordWorld struct {
	Lead   uint8 `net:"bits=3"` // moves the crates off byte alignment
	Tick   uint32
	Crates []wordCrate `net:",maxlen=300"`
}

// TestFlatWordEncoderMatchesGeneralPath checks encWords against the general
// path: the same bytes after any prefix and into any capacity (windows of
// 64 crates, grown as they go), and the same error for a bad value anywhere
// in the slice (NaN and out-of-range floats, a range overflow, quaternions
// off unit length, NaN, or at ties, which Pack32 leaves to Pack).
func TestFlatWordEncoderMatchesGeneralPath(t *testing.T) {
	c := MustFor[wordWorld]()
	fp := c.p.fields[2].node.elem.sub.flat
	if fp == nil || !fp.enc {
		t.Fatal("wordCrate is not written by encWords")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	var errs, ties int
	for i := 0; i < 600; i++ {
		v := wordWorld{Lead: uint8(rng.IntN(8)), Tick: rng.Uint32(), Crates: make([]wordCrate, rng.IntN(300))}
		for k := range v.Crates {
			r := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			n := math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2] + r[3]*r[3])
			rot := [4]float32{float32(r[0] / n), float32(r[1] / n), float32(r[2] / n), float32(r[3] / n)}
			v.Crates[k] = wordCrate{ID: rng.Uint32() >> uint(rng.IntN(33)), X: float32(rng.Float64()*1024 - 512),
				Y: float32(1 + rng.Float64()*63), HP: int16(rng.IntN(251) - 50), Rot: rot, Awake: rng.IntN(2) == 0,
				Small: rot}
			if rng.IntN(50) == 0 {
				v.Crates[k].Rot = [4]float32{0.5, -0.5, 0.5, 0.5} // ties: Pack decides
				ties++
			}
		}
		if len(v.Crates) > 0 && rng.IntN(3) == 0 {
			bad := &v.Crates[rng.IntN(len(v.Crates))]
			switch rng.IntN(6) {
			case 0:
				bad.X = float32(math.NaN())
			case 1:
				bad.Y = 70
			case 2:
				bad.HP = 201
			case 3:
				bad.Rot[rng.IntN(4)] *= 1.1
			case 4:
				bad.Small[rng.IntN(4)] = float32(math.Inf(-1))
			case 5:
				bad.Rot = [4]float32{}
			}
		}
		l := rng.IntN(5)
		dst := make([]byte, l, l+rng.IntN(3000))
		for k := range dst {
			dst[k] = byte(rng.Uint32())
		}
		got, gotErr := c.Append(dst, &v)
		var want []byte
		var wantErr error
		withoutFlat(c.p, func() { want, wantErr = c.Append(append([]byte(nil), dst...), &v) })
		if errString(gotErr) != errString(wantErr) || string(got) != string(want) {
			t.Fatalf("encode %d: flat %x, %v; general %x, %v", i, got, gotErr, want, wantErr)
		}
		if gotErr != nil {
			errs++
		}
	}
	if errs == 0 || ties == 0 {
		t.Fatal("the error paths or Pack's fallback were not reached")
	}
}

func randomWordCrate(rng *rand.Rand) wordCrate {
	r := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
	n := math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2] + r[3]*r[3])
	rot := [4]float32{float32(r[0] / n), float32(r[1] / n), float32(r[2] / n), float32(r[3] / n)}
	return wordCrate{ID: rng.Uint32() >> uint(rng.IntN(33)), X: float32(rng.Float64()*1024 - 512),
		Y: float32(1 + rng.Float64()*63), HP: int16(rng.IntN(251) - 50), Rot: rot, Awake: rng.IntN(2) == 0,
		Small: rot}
}

// TestFlatPaddedTailMatchesGeneralPath checks decWordsPadded, which reads
// the structs at the end of the input from a zero-padded copy: a flat root
// (its only struct is always at the end) and short slices, from every
// prefix of their encodings and corrupted copies, give the general path's
// values and errors. A struct that runs past the end must not decode from
// the padding's zeros.
func TestFlatPaddedTailMatchesGeneralPath(t *testing.T) {
	root := MustFor[wordCrate]()
	if fp := root.p.flat; fp == nil || fp.words == 0 || fp.words+64+7 > padBytes*8 {
		t.Fatal("wordCrate is not read by decWordsPadded")
	}
	slice := MustFor[wordWorld]()
	rng := rand.New(rand.NewPCG(23, 24))
	check := func(name string, in []byte, dec func([]byte) (any, error), general func([]byte) (any, error)) {
		t.Helper()
		a, errA := dec(in)
		b, errB := general(in)
		if errString(errA) != errString(errB) {
			t.Fatalf("%s %x: flat error %v, general %v", name, in, errA, errB)
		}
		if errA == nil && !equalBits(a, b) {
			t.Fatalf("%s %x: flat %+v, general %+v", name, in, a, b)
		}
	}
	decRoot := func(in []byte) (any, error) { var v wordCrate; err := root.Unmarshal(in, &v); return v, err }
	genRoot := func(in []byte) (v any, err error) { withoutFlat(root.p, func() { v, err = decRoot(in) }); return }
	decSlice := func(in []byte) (any, error) { var v wordWorld; err := slice.Unmarshal(in, &v); return v, err }
	genSlice := func(in []byte) (v any, err error) { withoutFlat(slice.p, func() { v, err = decSlice(in) }); return }
	for i := 0; i < 300; i++ {
		v := randomWordCrate(rng)
		if rng.IntN(4) == 0 {
			v.ID = 0
		}
		data, err := root.Marshal(&v)
		if err != nil {
			t.Fatal(err)
		}
		w := wordWorld{Lead: uint8(rng.IntN(8)), Tick: rng.Uint32(), Crates: make([]wordCrate, rng.IntN(4))}
		for k := range w.Crates {
			w.Crates[k] = randomWordCrate(rng)
		}
		wdata, err := slice.Marshal(&w)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= len(data); n++ {
			check("root", data[:n], decRoot, genRoot)
		}
		for n := 0; n <= len(wdata); n++ {
			check("slice", wdata[:n], decSlice, genSlice)
		}
		for _, in := range [][]byte{data, wdata} {
			bad := append([]byte(nil), in...)
			bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
			check("corrupt", bad, decRoot, genRoot)
			check("corrupt", bad, decSlice, genSlice)
			check("longer", append(append([]byte(nil), in...), byte(rng.IntN(256))), decRoot, genRoot)
		}
	}
}

// equalBits compares two decoded values by their printed form (floats
// bit for bit, NaN included).
func equalBits(a, b any) bool {
	return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

// TestFlatStringsMatchGeneralPath checks strings and byte slices on the
// flat path (through encNode and decNode) against the general path: the
// same bytes and errors for strings over their maxlen and byte slices over
// the codec's length limit, and the same values and errors decoding every
// prefix and corrupted copies, under allocation budgets too small for
// the longer ones.
func TestFlatStringsMatchGeneralPath(t *testing.T) {
	base := MustFor[flatStrings]()
	if base.p.flat == nil {
		t.Fatal("flatStrings has no flat plan")
	}
	rng := rand.New(rand.NewPCG(25, 26))
	var errs, longs int
	for i := 0; i < 400; i++ {
		v := flatStrings{A: flatVec{X: float32(rng.Float64()*200 - 100)}, T: rng.IntN(2) == 0}
		s := make([]byte, rng.IntN(90))
		for k := range s {
			s[k] = byte('a' + rng.IntN(26))
		}
		v.S = string(s)
		if n := rng.IntN(120); n > 0 {
			v.B = make([]byte, n)
			for k := range v.B {
				v.B[k] = byte(rng.Uint32())
			}
		}
		if len(v.S) > 64 || len(v.B) > 64 {
			longs++
		}
		for _, c := range []*Codec[flatStrings]{base, base.WithLimits(Limits{MaxLen: 100}),
			base.WithLimits(Limits{MaxAllocPerByte: 1 + rng.IntN(3)})} {
			got, gotErr := c.Append(nil, &v)
			var want []byte
			var wantErr error
			withoutFlat(c.p, func() { want, wantErr = c.Append(nil, &v) })
			if errString(gotErr) != errString(wantErr) || string(got) != string(want) {
				t.Fatalf("encode %d: flat %x, %v; general %x, %v", i, got, gotErr, want, wantErr)
			}
			if gotErr != nil {
				errs++
				continue
			}
			bad := append([]byte(nil), got...)
			bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
			for _, in := range [][]byte{got, got[:rng.IntN(len(got))], got[:len(got)-1], bad} {
				var a, b flatStrings
				errA := c.Unmarshal(in, &a)
				var errB error
				withoutFlat(c.p, func() { errB = c.Unmarshal(in, &b) })
				if errString(errA) != errString(errB) {
					t.Fatalf("decode %d %x: flat error %v, general %v", i, in, errA, errB)
				}
				if errA == nil && !equalBits(a, b) {
					t.Fatalf("decode %d: flat %+v, general %+v", i, a, b)
				}
			}
		}
	}
	if errs == 0 || longs == 0 {
		t.Fatal("the error paths or the long strings were not reached")
	}
}

// TestFlatWordsWhere checks that the types TestPathsSameBits gives the word
// kernels reach them: wdFlat is read and written by words (root messages
// and the slices of wdWorld), wdRanges, with leaves wider than a run, by
// neither.
func TestFlatWordsWhere(t *testing.T) {
	all := MustFor[wdFlat]().p.flat
	require.NotNil(t, all)
	require.Positive(t, all.words)
	require.True(t, all.enc, "every leaf of wdFlat has a word kernel")
	wide := MustFor[wdRanges]().p.flat
	require.NotNil(t, wide, "wdRanges is flat")
	require.Zero(t, wide.words, "wdRanges' 64-bit ranges are wider than a run")
}
