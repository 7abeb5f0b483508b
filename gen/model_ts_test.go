package gen_test

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// Deltas coded with a trained model (docs/wire-format.md, "Models"),
// decoded by the generated TypeScript client: a world of the demo's kinds
// of fields, a model trained on small moves, and deltas that also teleport
// (escapes of every table kind), damaged deltas, model files that must be
// refused, and the golden model vectors.

// tsmVec holds windowed q positions.
type tsmVec struct {
	X, Y float32 `net:"q,min=-500,max=500,prec=0.01,dmin=-2,dmax=2"`
	Z    float32 `net:"q,min=-20,max=100,prec=0.01,dmin=-1,dmax=1"`
}

// tsmOrient is a quaternion held in a struct.
type tsmOrient struct{ X, Y, Z, W float32 }

// tsmBody is an entity of 12 fields: two mask chunks (8 and 4 fields).
type tsmBody struct {
	ID     uint32     `net:"id"`
	Pos    tsmVec     // nested, windowed
	Rot    [4]float32 `net:"quat,bits=11"`
	Yaw    float32    `net:"q,min=0,max=360,bits=10"` // modular, wraps around
	HP     int        `net:"range,min=0,max=200"`
	Ammo   int16      `net:"range,min=-50,max=50,dmin=-5,dmax=5"`
	Team   uint8      `net:"bits=3"`
	Tilt   int8       `net:"bits=5"`
	Fuel   float32    `net:"fixed,prec=0.01,dmin=-1,dmax=1"`
	Asleep bool
	Name   string `net:"maxlen=15"`
	Vel    tsmVec `net:"composite"`
}

// tsmWorld is the message: an entity set and leaves of every table kind,
// including modular keys over all 64 bits.
type tsmWorld struct {
	Tick   uint32 `net:"bits=32"`
	Bodies []tsmBody
	Cam    *tsmVec
	Look   tsmOrient `net:"quat,bits=9"`
	Path   []tsmVec  // matched by index
	Big    int64     `net:"range,min=-9223372036854775808,max=9223372036854775807"`
	U64    uint64    `net:"bits=64"`
	Wide   int64     `net:"range,min=-1000000000000,max=1000000000000,dmin=-100,dmax=100"`
	Span   int64     `net:"range,min=-8000000000000000,max=8000000000000000"` // numbers, but 2^54 keys
	Score  int32
	Stats  map[uint8]int16 `net:"maxlen=8"`
	Aim    [3]int16        `net:"range,min=-1000,max=1000,dmin=-8,dmax=7"` // windowed elements, element by element
	Wheel  tsmSpinner      // one field, a quaternion: its changed bit folded into the quaternion's first table
	Props  []tsmSpinner    `net:"maxlen=4"`
}

type tsmSpinner struct {
	Rot [4]float32 `net:"quat,bits=9"`
}

func tsmClamp(v, lo, hi float32) float32 { return max(lo, min(hi, v)) }

// tsmTurn turns q by up to deg degrees about a random axis.
func tsmTurn(r *rand.Rand, q [4]float32, deg float64) [4]float32 {
	ax := randQuat(r) // a random direction from its first three components
	n := math.Sqrt(ax[0]*ax[0] + ax[1]*ax[1] + ax[2]*ax[2])
	a := r.Float64() * deg * math.Pi / 180 / 2
	s := math.Sin(a) / n
	d := [4]float64{ax[0] * s, ax[1] * s, ax[2] * s, math.Cos(a)}
	x, y, z, w := float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])
	o := [4]float64{
		d[3]*x + d[0]*w + d[1]*z - d[2]*y,
		d[3]*y - d[0]*z + d[1]*w + d[2]*x,
		d[3]*z + d[0]*y - d[1]*x + d[2]*w,
		d[3]*w - d[0]*x - d[1]*y - d[2]*z,
	}
	l := math.Sqrt(o[0]*o[0] + o[1]*o[1] + o[2]*o[2] + o[3]*o[3])
	return [4]float32{float32(o[0] / l), float32(o[1] / l), float32(o[2] / l), float32(o[3] / l)}
}

func tsmRandRot(r *rand.Rand) [4]float32 {
	q := randQuat(r)
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

func tsmRandVec(r *rand.Rand) tsmVec {
	return tsmVec{X: float32(r.Float64()*1000 - 500), Y: float32(r.Float64()*1000 - 500), Z: float32(r.Float64()*120 - 20)}
}

func tsmRandBody(r *rand.Rand, id uint32) tsmBody {
	return tsmBody{ID: id, Pos: tsmRandVec(r), Rot: tsmRandRot(r), Yaw: float32(r.Float64() * 360), HP: r.Intn(201),
		Ammo: int16(r.Intn(101) - 50), Team: uint8(r.Intn(8)), Tilt: int8(r.Intn(32) - 16), Fuel: float32(r.Float64() * 100),
		Asleep: r.Intn(4) == 0, Name: strings.Repeat("b", r.Intn(8)), Vel: tsmRandVec(r)}
}

func tsmRandWorld(r *rand.Rand) tsmWorld {
	w := tsmWorld{Tick: r.Uint32(), Big: math.MaxInt64 - int64(r.Intn(50)), U64: math.MaxUint64 - uint64(r.Intn(50)), Span: 8e15 - int64(r.Intn(50)),
		Wide: r.Int63n(2_000_000_000_001) - 1_000_000_000_000, Score: int32(r.Intn(1000)),
		Aim: [3]int16{int16(r.Intn(2001) - 1000), int16(r.Intn(2001) - 1000), int16(r.Intn(2001) - 1000)}}
	q := tsmRandRot(r)
	w.Look = tsmOrient{q[0], q[1], q[2], q[3]}
	w.Wheel.Rot = tsmRandRot(r)
	for i := r.Intn(5); i > 0; i-- {
		w.Props = append(w.Props, tsmSpinner{tsmRandRot(r)})
	}
	id := uint32(0)
	for i := 1 + r.Intn(10); i > 0; i-- {
		id += uint32(1 + r.Intn(3))
		w.Bodies = append(w.Bodies, tsmRandBody(r, id))
	}
	if r.Intn(2) == 0 {
		c := tsmRandVec(r)
		w.Cam = &c
	}
	for i := r.Intn(6); i > 0; i-- {
		w.Path = append(w.Path, tsmRandVec(r))
	}
	if r.Intn(2) == 0 {
		w.Stats = map[uint8]int16{}
		for i := r.Intn(5); i > 0; i-- {
			w.Stats[uint8(r.Intn(20))] = int16(r.Intn(2000) - 1000)
		}
	}
	return w
}

// tsmStep is the next tick of w: small moves and turns (up to 2°), and,
// with teleport, jumps that no table codes (positions out of their
// windows, any rotation, large differences of bounded scalars).
func tsmStep(r *rand.Rand, w tsmWorld, teleport bool) tsmWorld {
	out := w
	out.Tick += 1
	jump := func() bool { return teleport && r.Intn(3) == 0 }
	var bs []tsmBody
	id := uint32(0)
	for _, b := range w.Bodies {
		id = b.ID
		if r.Intn(20) == 0 {
			continue // removed
		}
		if r.Intn(3) > 0 {
			b.Pos.X = tsmClamp(b.Pos.X+float32(r.NormFloat64()*0.5), -500, 500)
			b.Pos.Y = tsmClamp(b.Pos.Y+float32(r.NormFloat64()*0.5), -500, 500)
			if r.Intn(3) == 0 {
				b.Pos.Z = tsmClamp(b.Pos.Z+float32(r.NormFloat64()*0.2), -20, 100)
			}
			b.Rot = tsmTurn(r, b.Rot, 2)
			b.Yaw = float32(math.Mod(float64(b.Yaw)+r.NormFloat64()*3+360, 360))
		}
		if r.Intn(4) == 0 {
			b.HP = max(0, min(200, b.HP+r.Intn(11)-5))
			b.Ammo = int16(max(-50, min(50, int(b.Ammo)+r.Intn(7)-3)))
			b.Fuel = tsmClamp(b.Fuel-float32(r.Float64()*0.5), 0, 100)
		}
		if r.Intn(10) == 0 {
			b.Team, b.Tilt = uint8(r.Intn(8)), int8(max(-16, min(15, int(b.Tilt)+r.Intn(3)-1)))
		}
		if r.Intn(15) == 0 {
			b.Asleep = !b.Asleep
		}
		if r.Intn(30) == 0 {
			b.Name, b.Vel = strings.Repeat("n", r.Intn(16)), tsmRandVec(r)
		}
		if jump() {
			b.Pos = tsmRandVec(r)
		}
		if jump() {
			b.Rot = tsmRandRot(r)
		}
		if jump() {
			b.Yaw, b.HP, b.Ammo, b.Fuel = float32(r.Float64()*360), r.Intn(201), int16(r.Intn(101)-50), float32(r.Float64()*100)
		}
		bs = append(bs, b)
	}
	for i := r.Intn(3) - 1; i > 0; i-- {
		id += uint32(1 + r.Intn(3))
		bs = append(bs, tsmRandBody(r, id))
	}
	out.Bodies = bs
	if r.Intn(2) == 0 {
		out.Wheel.Rot = tsmTurn(r, w.Wheel.Rot, 2)
	}
	out.Props = append([]tsmSpinner(nil), w.Props...)
	for i := range out.Props {
		if r.Intn(2) == 0 {
			out.Props[i].Rot = tsmTurn(r, out.Props[i].Rot, 2)
		}
		if jump() {
			out.Props[i].Rot = tsmRandRot(r)
		}
	}
	for i := range out.Aim {
		if r.Intn(2) == 0 {
			out.Aim[i] = int16(max(-1000, min(1000, int(w.Aim[i])+r.Intn(15)-7)))
		}
		if jump() {
			out.Aim[i] = int16(r.Intn(2001) - 1000)
		}
	}
	if r.Intn(2) == 0 {
		q := tsmTurn(r, [4]float32{w.Look.X, w.Look.Y, w.Look.Z, w.Look.W}, 2)
		if jump() {
			q = tsmRandRot(r)
		}
		out.Look = tsmOrient{q[0], q[1], q[2], q[3]}
	}
	if r.Intn(10) == 0 {
		if w.Cam == nil {
			c := tsmRandVec(r)
			out.Cam = &c
		} else if r.Intn(3) == 0 {
			out.Cam = nil
		} else {
			c := *w.Cam
			c.X = tsmClamp(c.X+float32(r.NormFloat64()), -500, 500)
			out.Cam = &c
		}
	}
	if r.Intn(4) == 0 {
		out.Path = append([]tsmVec(nil), w.Path...)
		for i := range out.Path {
			if r.Intn(2) == 0 {
				out.Path[i].Y = tsmClamp(out.Path[i].Y+float32(r.NormFloat64()*0.4), -500, 500)
			}
			if jump() {
				out.Path[i] = tsmRandVec(r)
			}
		}
		if r.Intn(4) == 0 {
			out.Path = append(out.Path, tsmRandVec(r))
		}
	}
	if r.Intn(3) == 0 { // past the top of the range: the keys wrap around
		out.Big += int64(r.Intn(7) - 3)
		out.U64 += uint64(r.Intn(7) - 3)
		out.Wide = max(-1_000_000_000_000, min(1_000_000_000_000, w.Wide+int64(r.Intn(101)-50)))
		out.Span = w.Span + int64(r.Intn(7)-3)
		if out.Span > 8e15 { // past the ends: the keys wrap around
			out.Span -= 16e15 + 1
		} else if out.Span < -8e15 {
			out.Span += 16e15 + 1
		}
	}
	if jump() {
		out.Big, out.U64, out.Wide = int64(r.Uint64()), r.Uint64(), r.Int63n(2_000_000_000_001)-1_000_000_000_000
		out.Span = r.Int63n(16e15+1) - 8e15
		out.Tick = r.Uint32()
	}
	if r.Intn(8) == 0 {
		out.Score += int32(r.Intn(10))
		out.Stats = map[uint8]int16{}
		for k := range 256 { // in key order: the corpus is the same on every run
			if v, ok := w.Stats[uint8(k)]; ok {
				out.Stats[uint8(k)] = v + int16(r.Intn(3)-1)
			}
		}
	}
	return out
}

// tsmModel trains a model for tsmWorld on n pairs of small moves.
func tsmModel(t *testing.T, n int) *bitwire.Model {
	r := rand.New(rand.NewSource(5))
	tr := bitwire.MustFor[tsmWorld]().NewTrainer()
	w := tsmRandWorld(r)
	for i := 0; i < n; i++ {
		next := tsmStep(r, w, false)
		if err := tr.Add(&w, &next); err != nil {
			t.Fatal(err)
		}
		w = next
		if i%200 == 199 {
			w = tsmRandWorld(r)
		}
	}
	m, err := tr.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tsmFlatModel returns file with every symbol of every table coded: ESC in
// one bit, each other symbol in 1 + ceil(log2(S - 1)) bits. With it every
// difference is a token, of every slot (magnitudes up to 2^64 - 1). A
// plain mask table stays plain (a folded struct's must).
func tsmFlatModel(t *testing.T, file []byte) *bitwire.Model {
	f := append([]byte(nil), file...)
	for _, p := range tsmTables(f) {
		n := int(binary.BigEndian.Uint16(f[p+1:]))
		if f[p] == 1 && !slices.ContainsFunc(f[p+3:p+3+n], func(l byte) bool { return l != 0 }) {
			continue
		}
		f[p+3] = 1
		for i := 1; i < n; i++ {
			f[p+3+i] = byte(1 + tsmBitsLen(n-2))
		}
	}
	var m bitwire.Model
	if err := m.UnmarshalBinary(tsmReCRC(f)); err != nil {
		t.Fatal(err)
	}
	return &m
}

func tsmBitsLen(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}

// tsmSentinel is sentinel with ErrModel.
func tsmSentinel(err error) string {
	if errors.Is(err, bitwire.ErrModel) {
		return "ErrModel"
	}
	return sentinel(err)
}

// tsmCorpus appends n full worlds and a delta with the model from each
// to the next (a step of the walk, every 10th with teleports, every 50th
// a new world), then damaged deltas.
func tsmCorpus(t *testing.T, name string, c *bitwire.Codec[tsmWorld], n, damaged int, r *rand.Rand, cases *[]cfCase) {
	s := c.Schema()
	prev := tsmRandWorld(r)
	var fulls [][]byte
	var deltas []cfCase
	var teleports int
	for i := 0; i < n; i++ {
		v := prev
		switch {
		case i == 0 || i%50 == 0:
			v = tsmRandWorld(r)
		default:
			v = tsmStep(r, prev, i%10 == 0)
		}
		full, err := c.Marshal(&v)
		if err != nil {
			t.Fatal(err)
		}
		var q tsmWorld
		if err := c.Unmarshal(full, &q); err != nil {
			t.Fatal(err)
		}
		fulls = append(fulls, full)
		*cases = append(*cases, cfCase{Msg: name, Full: hex.EncodeToString(full), Want: canonOf(t, s, &q)})
		if i > 0 {
			d, err := c.MarshalDelta(&prev, &v)
			if err != nil {
				t.Fatalf("delta %d: %v", i, err)
			}
			var out tsmWorld
			if err := c.UnmarshalDelta(d, &prev, &out); err != nil {
				t.Fatal(err)
			}
			if !c.Equal(&out, &q) {
				t.Fatalf("delta %d: Go decodes another value than the full message's", i)
			}
			b := i - 1
			dc := cfCase{Msg: name, Base: &b, Delta: hex.EncodeToString(d), Want: canonOf(t, s, &out)}
			*cases = append(*cases, dc)
			deltas = append(deltas, dc)
			if i%10 == 0 {
				teleports++
			}
		}
		prev = q
	}
	t.Logf("%s: %d full worlds, %d deltas (%d with teleports)", name, n, n-1, teleports)
	lim := c.WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
	add := func(d cfCase, b []byte) (bool, error) {
		var base, out tsmWorld
		if err := lim.Unmarshal(fulls[*d.Base], &base); err != nil {
			t.Fatal(err)
		}
		sawInvalidUTF8 = false
		err := lim.UnmarshalDelta(b, &base, &out)
		cs := cfCase{Kind: "damaged-delta", Msg: name, Base: d.Base, Delta: hex.EncodeToString(b)}
		if err != nil {
			cs.Err, cs.ErrMsg = tsmSentinel(err), err.Error()
		} else if cs.Want = canonOf(t, s, &out); sawInvalidUTF8 {
			return false, nil
		}
		*cases = append(*cases, cs)
		return true, err
	}
	// Every single bit flipped in a few deltas, and the flips anywhere
	// that set an entity's id bit in its mask.
	errs := map[string]int{}
	idBits, flips0 := 0, len(*cases)
	for k, d := range deltas {
		b, _ := hex.DecodeString(d.Delta)
		for x := 0; x < len(b)*8; x++ {
			f := append([]byte(nil), b...)
			f[x/8] ^= 1 << uint(x%8)
			if k%400 != 7 {
				if idBits >= 30 {
					continue
				}
				var base, out tsmWorld
				if err := lim.Unmarshal(fulls[*d.Base], &base); err != nil {
					t.Fatal(err)
				}
				if err := lim.UnmarshalDelta(f, &base, &out); err == nil || !strings.Contains(err.Error(), "id field") {
					continue
				}
				idBits++
			}
			if ok, err := add(d, f); ok && err != nil {
				errs[tsmSentinel(err)]++
			}
		}
	}
	if idBits == 0 {
		t.Fatal("no damaged delta sets an id bit")
	}
	t.Logf("%s: %d single bit flips: errors %v, %d of them an id bit set", name, len(*cases)-flips0, errs, idBits)
	for i := 0; i < damaged; i++ {
		d := deltas[r.Intn(len(deltas))]
		b, _ := hex.DecodeString(d.Delta)
		switch k := r.Intn(4); {
		case k == 0 && len(b) > 0:
			b = b[:r.Intn(len(b))]
		case k == 1:
			b = make([]byte, r.Intn(len(b)+8))
			r.Read(b)
		default:
			for j := r.Intn(3); j >= 0 && len(b) > 0; j-- {
				x := r.Intn(len(b) * 8)
				b[x/8] ^= 1 << uint(x%8)
			}
		}
		if ok, _ := add(d, b); !ok {
			i--
		}
	}
}

// ---- model files ----

// tsmReCRC returns f with its CRC recomputed (so that only the defect made
// before counts).
func tsmReCRC(f []byte) []byte {
	f = append([]byte(nil), f...)
	binary.BigEndian.PutUint32(f[len(f)-4:], crc32.ChecksumIEEE(f[:len(f)-4]))
	return f
}

// tsmTables returns the offset of each table (its kind byte) in f.
func tsmTables(f []byte) []int {
	var at []int
	p := 16
	for i := uint32(0); i < binary.BigEndian.Uint32(f[12:]); i++ {
		at = append(at, p)
		p += 3 + int(binary.BigEndian.Uint16(f[p+1:]))
	}
	return at
}

// tsmFileCases are model files for the codec c: each listed refusal of
// wire-format.md ("File"), the refusals of a model for another layout, and
// random damage; each holds what Go makes of it (UnmarshalBinary, then
// WithModel's ModelErr): "ok" or ErrModel.
func tsmFileCases(t *testing.T, name string, c *bitwire.Codec[tsmWorld], file, other []byte, r *rand.Rand) []cfCase {
	at := tsmTables(file)
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), file...)) }
	// the first table with at least 4 symbols, a window table, and a
	// quaternion difference table without ESC (model file version 3)
	big, win, noEsc := -1, -1, -1
	for _, p := range at {
		if s := binary.BigEndian.Uint16(file[p+1:]); s >= 4 && big < 0 {
			big = p
		}
		if file[p] == 2 && win < 0 {
			win = p
		}
		if file[p] == 5 && file[p+3] == 0 && noEsc < 0 {
			noEsc = p
		}
	}
	if file[3] != 3 || noEsc < 0 {
		t.Fatalf("%s: a trained model file of version %d, no ESC-free table at %d: want version 3 with one", name, file[3], noEsc)
	}
	files := map[string][]byte{
		"valid":                  file,
		"short":                  file[:19],
		"magic":                  tsmReCRC(edit(func(b []byte) []byte { b[0] = 'X'; return b })),
		"version 1":              tsmReCRC(edit(func(b []byte) []byte { b[3] = 1; return b })),
		"version 4":              tsmReCRC(edit(func(b []byte) []byte { b[3] = 4; return b })),
		"version 2":              tsmReCRC(edit(func(b []byte) []byte { b[3] = 2; return b })), // its ESC-free tables are version 3's
		"no ESC, a slot uncoded": tsmReCRC(edit(func(b []byte) []byte { b[noEsc+4] = 0; return b })),
		"crc":                    edit(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }),
		"extra byte":             tsmReCRC(append(append([]byte(nil), file[:len(file)-4]...), 0, 0, 0, 0, 0)),
		"more tables":            tsmReCRC(edit(func(b []byte) []byte { b[15]++; return b })),
		"fewer tables":           tsmReCRC(edit(func(b []byte) []byte { b[15]--; return b })),
		"kind 0":                 tsmReCRC(edit(func(b []byte) []byte { b[at[0]] = 0; return b })),
		"kind 6":                 tsmReCRC(edit(func(b []byte) []byte { b[at[0]] = 6; return b })),
		"S 1":                    tsmReCRC(edit(func(b []byte) []byte { b[at[1]+1], b[at[1]+2] = 0, 1; return b })),
		"S past end":             tsmReCRC(edit(func(b []byte) []byte { b[at[1]+1], b[at[1]+2] = 0xff, 0xff; return b })),
		"length 16":              tsmReCRC(edit(func(b []byte) []byte { b[big+4] = 16; return b })),
		"oversubscribed": tsmReCRC(edit(func(b []byte) []byte {
			for i := range int(binary.BigEndian.Uint16(b[big+1:])) {
				b[big+3+i] = 1
			}
			return b
		})),
		"ESC 0":        tsmReCRC(edit(func(b []byte) []byte { b[at[0]+3] = 0; return b })),
		"ESC 6":        tsmReCRC(edit(func(b []byte) []byte { b[at[0]+3] = 6; return b })),
		"another kind": tsmReCRC(edit(func(b []byte) []byte { b[win] = 3; return b })), // a window table said modular, same S
		// every length 0: plain, which only a mask table may be
		"plain mask":   tsmReCRC(edit(func(b []byte) []byte { clear(b[at[0]+3 : at[0]+3+int(binary.BigEndian.Uint16(b[at[0]+1:]))]); return b })),
		"plain window": tsmReCRC(edit(func(b []byte) []byte { clear(b[win+3 : win+3+int(binary.BigEndian.Uint16(b[win+1:]))]); return b })),
		"another S": tsmReCRC(edit(func(b []byte) []byte { // table 1 with one more symbol, without a code
			end := at[1] + 3 + int(binary.BigEndian.Uint16(b[at[1]+1:]))
			binary.BigEndian.PutUint16(b[at[1]+1:], binary.BigEndian.Uint16(b[at[1]+1:])+1)
			return append(b[:end:end], append([]byte{0}, b[end:]...)...)
		})),
		"another layout": tsmReCRC(edit(func(b []byte) []byte { b[11] ^= 1; return b })),
		"another type":   other,
	}
	var names []string
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := 0; i < 300; i++ {
		f := append([]byte(nil), file...)
		for k := r.Intn(3); k >= 0; k-- {
			f[16+r.Intn(len(f)-20)] = byte(r.Intn(8)) // code lengths, kinds and sizes
		}
		if r.Intn(4) > 0 {
			f = tsmReCRC(f)
		}
		n := fmt.Sprintf("random %d", i)
		files[n] = f
		names = append(names, n)
	}
	verdicts := map[string]int{}
	var cs []cfCase
	for _, n := range names {
		f := files[n]
		var m bitwire.Model
		err := m.UnmarshalBinary(f)
		if err == nil {
			err = c.WithModel(&m).ModelErr()
		}
		cc := cfCase{Kind: "model-file", Msg: name, Full: hex.EncodeToString(f), Want: "ok"}
		if err != nil {
			cc.Want, cc.Err, cc.ErrMsg = "", tsmSentinel(err), err.Error()
		}
		if !strings.HasPrefix(n, "random") && (n == "valid" || n == "plain mask") != (err == nil) {
			t.Fatalf("model file %q: Go says %v", n, err)
		}
		verdicts[cc.Err+cc.Want]++
		cs = append(cs, cc)
	}
	t.Logf("model files: %v", verdicts)
	return cs
}

// ---- golden model vectors ----

// Mirrors of the golden model vectors' types (golden_model_test.go in
// the root package): the same fields and tags, so the same layout.
type tsmgmPlayer struct {
	X   float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
	Yaw float32 `net:"q,min=0,max=360,bits=10"`
	HP  int     `net:"range,min=0,max=100"`
	On  bool
	Rot [4]float32 `net:"quat,bits=9"`
}

type tsmgmWorld struct{ Es []tsmgmEntity }

type tsmgmSpin struct {
	Rot [4]float32 `net:"quat,bits=9"`
}

type tsmgmTurn struct {
	X   float32    `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
	Rot [4]float32 `net:"quat,bits=9"`
}

type tsmgmEntity struct {
	ID uint16  `net:"id"`
	X  float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
}

// tsmGoldenBlock is one block of codings.txt.
type tsmGoldenBlock struct{ name, value, hex, decoded string }

func tsmReadGolden(t *testing.T, prefix string) []tsmGoldenBlock {
	f, err := os.Open("../testdata/golden/codings.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bs []tsmGoldenBlock
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			bs = append(bs, tsmGoldenBlock{name: l[1 : len(l)-1]})
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok || len(bs) == 0 {
			continue
		}
		b := &bs[len(bs)-1]
		switch strings.TrimSpace(k) {
		case "value":
			b.value = strings.TrimSpace(v)
		case "hex":
			b.hex = strings.TrimSpace(v)
		case "decoded":
			b.decoded = strings.TrimSpace(v)
		}
	}
	var out []tsmGoldenBlock
	for _, b := range bs {
		if strings.HasPrefix(b.name, prefix) {
			out = append(out, b)
		}
	}
	return out
}

// tsmShow prints v as the golden file does (its showValue, for the
// kinds these types hold), the mirror types under the golden types' names.
func tsmShow(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Struct:
		var parts []string
		for i := 0; i < v.NumField(); i++ {
			parts = append(parts, v.Type().Field(i).Name+":"+tsmShow(v.Field(i)))
		}
		return strings.TrimPrefix(v.Type().Name(), "tsm") + "{" + strings.Join(parts, " ") + "}"
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return "nil"
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = tsmShow(v.Index(i))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// tsmGoldenCase adds the case of golden block b (a delta of T with the
// model of its schema file) against baseline base: the baseline in full,
// then the golden delta, with what Go decodes. It checks that base is the
// vector's baseline and that Go decodes what the vector says.
func tsmGoldenCase[T any](t *testing.T, b tsmGoldenBlock, base T, msgs *[]gen.Message, cases *[]cfCase) {
	raw, err := os.ReadFile(filepath.Join("../testdata/golden/schemas", b.name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s bitwire.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Model == nil {
		t.Fatalf("%s: the schema has no model", b.name)
	}
	var m bitwire.Model
	if err := m.UnmarshalBinary(s.Model.File); err != nil {
		t.Fatal(err)
	}
	c := bitwire.MustFor[T]().WithModel(&m)
	if err := c.ModelErr(); err != nil {
		t.Fatalf("%s: %v", b.name, err)
	}
	if got := fmt.Sprintf("%016x", c.Fingerprint()); got != s.Fingerprint {
		t.Fatalf("%s: the mirror type's fingerprint %s, the schema's %s", b.name, got, s.Fingerprint)
	}
	if want := "[" + tsmShow(reflect.ValueOf(base)) + " "; !strings.HasPrefix(b.value, want) {
		t.Fatalf("%s: the vector's baseline is not %s: %s", b.name, want, b.value)
	}
	full, err := c.Marshal(&base)
	if err != nil {
		t.Fatal(err)
	}
	var qb, out T
	if err := c.Unmarshal(full, &qb); err != nil {
		t.Fatal(err)
	}
	d, _ := hex.DecodeString(b.hex)
	if err := c.UnmarshalDelta(d, &qb, &out); err != nil {
		t.Fatalf("%s: %v", b.name, err)
	}
	if got := tsmShow(reflect.ValueOf(out)); got != b.decoded {
		t.Fatalf("%s: Go decodes %s, the vector says %s", b.name, got, b.decoded)
	}
	name := "G_" + strings.ReplaceAll(b.name, "-", "_")
	*msgs = append(*msgs, gen.Named(name, &s)) // the client from the schema file alone
	zero := 0
	*cases = append(*cases,
		cfCase{Msg: name, Full: hex.EncodeToString(full), Want: canonOf(t, &s, &qb)},
		cfCase{Msg: name, Base: &zero, Delta: b.hex, Want: canonOf(t, &s, &out)})
}

// tsmGoldenCases are the golden model vectors (testdata/golden,
// delta-model-*), with clients generated from their schema files.
func tsmGoldenCases(t *testing.T) ([]gen.Message, []cfCase) {
	var msgs []gen.Message
	var cases []cfCase
	p := tsmgmPlayer{X: 10, Yaw: 359.5, HP: 100, Rot: [4]float32{0, 0, 0, 1}}
	w := tsmgmWorld{Es: []tsmgmEntity{{1, 1}, {2, 2}, {3, 3}}}
	for _, b := range tsmReadGolden(t, "delta-model-") {
		switch {
		case strings.Contains(b.name, "entities"):
			tsmGoldenCase(t, b, w, &msgs, &cases)
		case strings.Contains(b.name, "folded"):
			tsmGoldenCase(t, b, tsmgmSpin{Rot: [4]float32{0, 0, 0, 1}}, &msgs, &cases)
		case strings.Contains(b.name, "plain-mask"), strings.Contains(b.name, "quat-no-esc"):
			tsmGoldenCase(t, b, tsmgmTurn{X: 10, Rot: [4]float32{0, 0, 0, 1}}, &msgs, &cases)
		default:
			tsmGoldenCase(t, b, p, &msgs, &cases)
		}
	}
	return msgs, cases
}

// TestTypeScriptModel: the generated TypeScript client decodes deltas
// coded with a trained model exactly as Go does.
func TestTypeScriptModel(t *testing.T) {
	node, tsc := clientTools(t)
	m := tsmModel(t, 3000)
	c := bitwire.MustFor[tsmWorld]().WithModel(m)
	if err := c.ModelErr(); err != nil {
		t.Fatal(err)
	}
	file, _ := m.MarshalBinary()
	r := rand.New(rand.NewSource(13))
	var cases []cfCase
	tsmCorpus(t, "MWorld", c, casesPerType+500, casesPerType/2, r, &cases)

	// a model of another layout: the golden player's, trained here
	ptr := bitwire.MustFor[tsmgmPlayer]().NewTrainer()
	pp := tsmgmPlayer{Rot: [4]float32{0, 0, 0, 1}}
	if err := ptr.Add(&pp, &pp); err != nil {
		t.Fatal(err)
	}
	pm, err := ptr.Model()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := pm.MarshalBinary()
	cases = append(cases, tsmFileCases(t, "MWorld", c, file, other, r)...)

	// the generated module's model swapped for a corrupt file or another
	// one: every delta is ErrModel
	bad := append([]byte(nil), file...)
	bad[len(bad)-1] ^= 1
	swapped := cases[2] // the first delta
	if swapped.Delta == "" {
		t.Fatal("no delta")
	}
	for _, f := range [][]byte{bad, other, tsmReCRC(append(append([]byte(nil), file[:len(file)-4]...), 0, 0, 0, 0, 0))} {
		cases = append(cases, cfCase{Kind: "model-swap", Msg: "MWorld", Base: swapped.Base, Delta: swapped.Delta, Key: base64.StdEncoding.EncodeToString(f), Err: "ErrModel"})
	}

	// the same world with every slot coded (no escapes but absolute
	// quaternions and masks of unseen changes)
	wide := bitwire.MustFor[tsmWorld]().WithModel(tsmFlatModel(t, file))
	if err := wide.ModelErr(); err != nil {
		t.Fatal(err)
	}
	tsmCorpus(t, "MWide", wide, casesPerType/4, casesPerType/4, r, &cases)

	// hand-built models (model_cases_test.go): a relative quaternion at
	// its length bound and one bit over it, modular tokens at the ends of
	// their range of differences and one past them, a difference of 0
	hand := mhModel(t)
	cases = append(cases, mhCases(t, hand, "MHand")...)
	bounds := mbModel(t)
	cases = append(cases, mbCases(t, bounds, "MBounds")...)
	one, pw := mpOneModel(t), mpWideModel(t) // plain mask tables
	cases = append(cases, mpOneCases(t, one, "MPOne")...)
	cases = append(cases, mpWideCases(t, pw, "MPWide", r)...)

	msgs := []gen.Message{gen.Named("MWorld", c.Schema()), gen.Named("MWide", wide.Schema()), gen.Named("MHand", hand.Schema()), gen.Named("MBounds", bounds.Schema()), gen.Named("MPOne", one.Schema()), gen.Named("MPWide", pw.Schema())}
	gm, gc := tsmGoldenCases(t)
	if len(gm) == 0 {
		t.Log("no golden model vectors (testdata/golden, delta-model-*) yet")
	}
	msgs = append(msgs, gm...)
	cases = append(cases, gc...)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", msgs...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

// TestModelSchemaRefused: a schema whose model does not belong to it (a
// corrupt file, another layout, another hash) is refused, so that no
// client is generated that would misread its deltas.
func TestModelSchemaRefused(t *testing.T) {
	m := tsmModel(t, 50)
	good := bitwire.MustFor[tsmWorld]().WithModel(m).Schema()
	if err := gen.TypeScript(io.Discard, "./bitwire.js", gen.Named("W", good)); err != nil {
		t.Fatalf("a schema with its model: %v", err)
	}
	ptr := bitwire.MustFor[tsmgmPlayer]().NewTrainer()
	pp := tsmgmPlayer{Rot: [4]float32{0, 0, 0, 1}}
	if err := ptr.Add(&pp, &pp); err != nil {
		t.Fatal(err)
	}
	pm, _ := ptr.Model()
	edit := func(f func(s *bitwire.Schema)) *bitwire.Schema {
		s := bitwire.MustFor[tsmWorld]().WithModel(m).Schema()
		f(s)
		return s
	}
	for name, s := range map[string]*bitwire.Schema{
		"corrupt file": edit(func(s *bitwire.Schema) { s.Model.File[len(s.Model.File)-1] ^= 1 }),
		"no file":      edit(func(s *bitwire.Schema) { s.Model.File = nil }),
		"layout":       edit(func(s *bitwire.Schema) { s.Model.Layout = "0123456789abcdef" }),
		"hash":         edit(func(s *bitwire.Schema) { s.Model.Hash = "0123456789abcdef" }),
		// another layout's model, with its own hash and the fingerprint
		// it would give (SchemaFingerprint refuses the schema itself)
		"another model": edit(func(s *bitwire.Schema) {
			b, _ := pm.MarshalBinary()
			s.Model.File, s.Model.Hash = b, fmt.Sprintf("%016x", pm.Hash())
			if _, err := bitwire.SchemaFingerprint(s); !errors.Is(err, bitwire.ErrMalformed) {
				t.Fatalf("SchemaFingerprint of a schema with another layout's model: %v, want ErrMalformed", err)
			}
			s.Fingerprint = fmt.Sprintf("%016x", bitwire.MustFor[tsmWorld]().WithModel(pm).Fingerprint())
		}),
		"another model, its layout too": edit(func(s *bitwire.Schema) {
			b, _ := pm.MarshalBinary()
			s.Model.File, s.Model.Hash, s.Model.Layout = b, fmt.Sprintf("%016x", pm.Hash()), fmt.Sprintf("%016x", pm.Layout())
			s.Fingerprint = fmt.Sprintf("%016x", bitwire.MustFor[tsmWorld]().WithModel(pm).Fingerprint())
		}),
	} {
		if err := gen.TypeScript(io.Discard, "./bitwire.js", gen.Named("W", s)); !errors.Is(err, gen.ErrSchema) {
			t.Errorf("%s: %v, want ErrSchema", name, err)
		}
	}
}
