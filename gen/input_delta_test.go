package gen_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/conn"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// The input corpus: sequences of inputs of a type that uses every coding
// an input may have, each pushed into a Go conn.InputSender (redundancy
// 1 to 4, ticks with gaps) behind a Go conn.Client: the client's packet
// carries the newest inputs, the newest in full and each older one as
// Codec.EncodeDelta against the next newer. A client runtime pushes the
// same inputs and must write the same packet, byte for byte.

// tiRot is a quaternion held as a struct.
type tiRot struct{ X, Y, Z, W float32 }

// tiUnit is an entity of an entity set in an input: a windowed range, a
// quaternion (relative in deltas) and a signed bitlen (the sign flag).
type tiUnit struct {
	ID  uint16     `net:"id"`
	Hp  uint8      `net:"range,min=0,max=100,dmin=-8,dmax=7"`
	Rot [4]float32 `net:"quat,bits=9"`
	Off int32      `net:"bitlen"`
}

// tiInput holds every coding Go's Codec.EncodeDelta codes in an input:
// windows on q (clamped too), range (a 63-bit one: bigint keys), bits
// (signed and unsigned) and fixed; signed and unsigned bitlen (the sign
// flag), a shared-length group (coded one by one in deltas) and arrays of
// bitlen (the group in full); fixed point, raw floats, strings, bytes,
// time, varints (signed: zigzag); arrays, slices (index sets of the
// changed elements, structs with windows among them), maps (string and
// integer keys, struct values), pointers to values, structs and
// quaternions; quaternions as arrays and as structs (relative to their
// baseline); an entity set matched by id; nested and composite structs;
// windows on the elements of arrays (changed element by element), slices
// and pointers.
type tiInput struct {
	Move   int8    `net:"range,min=-1,max=1"`
	Fire   bool    `net:""`
	Wheel  int16   `net:"range,min=-500,max=500,dmin=-8,dmax=7"`
	Frame  uint16  `net:"bits=12,dmin=-4,dmax=3"`
	Tilt   int8    `net:"bits=6,dmin=-3,dmax=3"`
	Span   int64   `net:"range,min=-4000000000000000000,max=4000000000000000000,dmin=-1000,dmax=1000"`
	Trim   float64 `net:"fixed,prec=0.001,dmin=-16,dmax=15"`
	Lean   float32 `net:"q,min=-1,max=1,bits=10,clamp,dmin=-0.1,dmax=0.1"`
	DX     int32   `net:"bitlen,group=d"`
	DY     int32   `net:"bitlen,group=d"`
	Delta  int64
	Big    uint64
	Drift  float64 `net:"fixed,prec=0.01"`
	Raw    float32
	Raw64  float64
	Name   string `net:",maxlen=8"`
	Note   []byte `net:",maxlen=6"`
	At     time.Time
	Keys   [3]bool
	Steps  [2]int16 `net:"bitlen"`
	Aim    ciAim
	Pad    ciAim            `net:"composite"`
	Hist   []ciAim          `net:",maxlen=12"`
	Clicks []uint16         `net:""`
	Offs   []int32          `net:"bitlen,maxlen=6"`
	Target *uint32          `net:""`
	Where  *ciAim           `net:""`
	Binds  map[string]int16 `net:",maxlen=6"`
	Slots  map[uint8]ciAim  `net:",maxlen=4"`
	Seq    uint16           `net:"varint"`
	Vel    int32            `net:"varint"`
	Rot    [4]float32       `net:"quat"`
	Head   tiRot            `net:"quat,bits=12"`
	Look   *[4]float32      `net:"quat,bits=10"`
	Units  []tiUnit         `net:",maxlen=8"`
	Trail  []uint16         `net:",maxlen=40"`
	Win    ciWindows        // windows on arrays, slices and pointers
}

// tiQuat is a random rotation; one in three is near (±½, ±½, ±½, ±½),
// where a small turn changes the largest component, to any other.
func tiQuat(r *rand.Rand) [4]float32 {
	q := randQuat(r)
	if r.Intn(3) == 0 {
		for i := range q {
			q[i] = float64(1-2*r.Intn(2)) * 0.5
		}
		return tiTurn(r, [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}, 0.01)
	}
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

// tiTurn turns q a little (a random small rotation), as a player's view
// turns from one input to the next; now and then across the largest
// component.
func tiTurn(r *rand.Rand, q [4]float32, by float64) [4]float32 {
	var v [4]float64
	n := 0.0
	for i := range v {
		v[i] = float64(q[i]) + (r.Float64()*2-1)*by
		n += v[i] * v[i]
	}
	n = math.Sqrt(n)
	return [4]float32{float32(v[0] / n), float32(v[1] / n), float32(v[2] / n), float32(v[3] / n)}
}

func randTIUnits(r *rand.Rand) []tiUnit {
	var us []tiUnit
	id := uint16(r.Intn(4))
	for i := r.Intn(6); i > 0; i-- {
		us = append(us, tiUnit{ID: id, Hp: uint8(r.Intn(101)), Rot: tiQuat(r), Off: r.Int31n(2001) - 1000})
		id += uint16(1 + r.Intn(3))
	}
	return us
}

func randTIInput(r *rand.Rand) tiInput {
	ci := randCIInput(r)
	in := tiInput{Move: ci.Move, Fire: ci.Fire, Wheel: ci.Wheel, Frame: ci.Frame, Tilt: int8(r.Intn(64) - 32),
		Span: r.Int63n(1<<62) - 1<<61, Trim: ci.Trim, Lean: float32(r.Float64()*2.4 - 1.2), DX: ci.DX, DY: ci.DY,
		Delta: ci.Delta, Big: r.Uint64() >> uint(r.Intn(64)), Drift: ci.Drift, Raw: ci.Raw, Raw64: r.NormFloat64() * 1e6,
		Name: fmt.Sprint(r.Intn(1e6)), Note: ci.Note, At: ci.At, Keys: ci.Keys,
		Steps: [2]int16{int16(r.Intn(2001) - 1000), int16(r.Intn(21) - 10)}, Aim: ci.Aim, Pad: ci.Pad, Hist: ci.Hist,
		Clicks: ci.Clicks, Target: ci.Target, Where: ci.Where, Binds: ci.Binds, Seq: ci.Seq, Vel: r.Int31n(1<<20) - 1<<19,
		Rot: tiQuat(r), Units: randTIUnits(r)}
	h := tiQuat(r)
	in.Head = tiRot{h[0], h[1], h[2], h[3]}
	in.Win = randCIWindows(r)
	for i := r.Intn(4); i > 0; i-- {
		in.Offs = append(in.Offs, r.Int31n(201)-100)
	}
	for i := r.Intn(41); i > 0; i-- {
		in.Trail = append(in.Trail, uint16(r.Intn(256)))
	}
	for i := r.Intn(4); i > 0; i-- {
		if in.Slots == nil {
			in.Slots = map[uint8]ciAim{}
		}
		in.Slots[uint8(r.Intn(8))] = randCIAim(r)
	}
	if r.Intn(3) > 0 {
		l := tiQuat(r)
		in.Look = &l
	}
	return in
}

// nextTIInput changes some fields of v a little, as the next input of a
// player's controls does, and leaves the rest.
func nextTIInput(r *rand.Rand, v tiInput) tiInput {
	w := v
	ci := nextCIInput(r, ciInput{Move: v.Move, Fire: v.Fire, Wheel: v.Wheel, Frame: v.Frame, Trim: v.Trim, DX: v.DX, DY: v.DY,
		Delta: v.Delta, Drift: v.Drift, Raw: v.Raw, Note: v.Note, At: v.At, Keys: v.Keys, Aim: v.Aim, Pad: v.Pad,
		Hist: v.Hist, Clicks: v.Clicks, Target: v.Target, Where: v.Where, Binds: v.Binds, Seq: v.Seq})
	w.Move, w.Fire, w.Wheel, w.Frame, w.Trim, w.DX, w.DY = ci.Move, ci.Fire, ci.Wheel, ci.Frame, ci.Trim, ci.DX, ci.DY
	w.Delta, w.Drift, w.Raw, w.Note, w.At, w.Keys, w.Aim, w.Pad = ci.Delta, ci.Drift, ci.Raw, ci.Note, ci.At, ci.Keys, ci.Aim, ci.Pad
	w.Hist, w.Clicks, w.Target, w.Where, w.Binds, w.Seq = ci.Hist, ci.Clicks, ci.Target, ci.Where, ci.Binds, ci.Seq
	w.Offs = slices.Clone(v.Offs)
	w.Units = slices.Clone(v.Units)
	if r.Intn(2) == 0 {
		w.Win = nextCIWindows(r, v.Win)
	}
	w.Trail = slices.Clone(v.Trail)
	if len(w.Trail) > 0 && r.Intn(2) == 0 { // a few sparse changes: the index set in its Rice code
		for k := 1 + r.Intn(2); k > 0; k-- {
			w.Trail[r.Intn(len(w.Trail))]++
		}
	}
	for i := range w.Units { // the entities turn: relative quaternions of one node, one after another
		switch r.Intn(6) {
		case 0, 1, 2:
			w.Units[i].Rot = tiTurn(r, w.Units[i].Rot, 0.03*r.Float64())
		case 3:
			w.Units[i].Rot = tiQuat(r) // absolute, and the next entity's after an absolute one
		}
	}
	if v.Slots != nil {
		w.Slots = map[uint8]ciAim{}
		for k, a := range v.Slots {
			if r.Intn(3) == 0 {
				a.Yaw = float32(math.Max(-3.19, math.Min(3.19, float64(a.Yaw)+r.Float64()*0.2-0.1)))
			}
			w.Slots[k] = a
		}
	}
	for k := r.Intn(6); k > 0; k-- {
		switch r.Intn(12) {
		case 0:
			w.Tilt = int8(max(-32, min(31, int(v.Tilt)+r.Intn(9)-4)))
		case 1:
			w.Span = v.Span + r.Int63n(2400) - 1200
		case 2:
			w.Lean = v.Lean + float32(r.Float64()*0.3-0.15)
		case 3:
			w.Big, w.Raw64 = v.Big+uint64(r.Intn(3)), -v.Raw64
		case 4:
			w.Name, w.Vel = fmt.Sprint(r.Intn(100)), -v.Vel+int32(r.Intn(3))
		case 5:
			w.Steps[r.Intn(2)] = int16(r.Intn(41) - 20)
		case 6:
			if len(w.Offs) > 0 {
				w.Offs[r.Intn(len(w.Offs))] = r.Int31n(21) - 10
			}
			if len(w.Offs) < 6 && r.Intn(2) == 0 {
				w.Offs = append(w.Offs, -r.Int31n(50))
			}
		case 7:
			w.Rot = tiTurn(r, v.Rot, 0.02)
			h := tiTurn(r, [4]float32{v.Head.X, v.Head.Y, v.Head.Z, v.Head.W}, 0.3*r.Float64())
			w.Head = tiRot{h[0], h[1], h[2], h[3]}
		case 8:
			if v.Look != nil {
				l := tiTurn(r, *v.Look, 0.05)
				w.Look = &l
			} else {
				l := tiQuat(r)
				w.Look = &l
			}
		case 9: // an entity changes, leaves or arrives
			if len(w.Units) > 0 {
				i := r.Intn(len(w.Units))
				u := &w.Units[i]
				switch r.Intn(4) {
				case 0:
					u.Hp = uint8(max(0, min(100, int(u.Hp)+r.Intn(15)-7)))
				case 1:
					u.Rot = tiTurn(r, u.Rot, 0.05)
				case 2:
					u.Off = -u.Off - 1
				default:
					w.Units = slices.Delete(w.Units, i, i+1)
				}
			}
			if len(w.Units) < 8 && r.Intn(2) == 0 {
				id := uint16(r.Intn(20))
				if !slices.ContainsFunc(w.Units, func(u tiUnit) bool { return u.ID == id }) {
					w.Units = append(w.Units, tiUnit{ID: id, Hp: uint8(r.Intn(101)), Rot: tiQuat(r)})
					if r.Intn(3) > 0 {
						slices.SortFunc(w.Units, func(a, b tiUnit) int { return int(a.ID) - int(b.ID) })
					}
				}
			}
		case 10:
			w.Rot = tiQuat(r) // a jump: absolute
		default:
			if r.Intn(2) == 0 {
				w.Slots = nil
			} else if len(w.Slots) < 4 {
				if w.Slots == nil {
					w.Slots = map[uint8]ciAim{}
				}
				w.Slots[uint8(r.Intn(8))] = randCIAim(r)
			}
		}
	}
	return w
}

// tiCase is one input sequence: the sender's redundancy and integrity
// mode, the inputs pushed (their ticks and full encodings) and Go's
// client packet after them.
type tiCase struct {
	Mode   int      `json:"mode"`
	Key    string   `json:"key"`
	Red    int      `json:"red"`
	Ticks  []uint32 `json:"ticks"`
	Inputs []string `json:"inputs"`
	Want   string   `json:"want"`
}

// tiCorpus makes n input sequences, checking for each that Go decodes
// its own packet's input section to the inputs it carries.
func tiCorpus(t *testing.T, n int) []tiCase {
	c := bitwire.MustFor[tiInput]()
	r := rand.New(rand.NewSource(41))
	var cases []tiCase
	for i := 0; i < n; i++ {
		mode := snapshot.Mode(i % 3)
		var key []byte
		if mode == snapshot.ModeMAC {
			key = make([]byte, 16)
			r.Read(key)
		}
		red := 1 + r.Intn(4)
		st, err := replicate.NewClient(c, replicate.WithIntegrity(mode, key))
		if err != nil {
			t.Fatal(err)
		}
		in, _ := conn.NewInputSender(c, red)
		client, err := conn.NewClient(st, in, nil, mode, key)
		if err != nil {
			t.Fatal(err)
		}
		tc := tiCase{Mode: int(mode), Key: hex.EncodeToString(key), Red: red}
		tick := uint32(r.Intn(1000))
		v := randTIInput(r)
		var held []tiInput // the quantized inputs pushed
		for k := 1 + r.Intn(red+1); k > 0; k-- {
			switch r.Intn(6) {
			case 0:
				v = randTIInput(r)
			case 1: // held: the same input again
			default:
				v = nextTIInput(r, v)
			}
			// what the client holds: the input as Go decodes it (and as
			// the runtime under test decodes the same bytes)
			full, err := c.Marshal(&v)
			if err != nil {
				t.Fatal(err)
			}
			var qv tiInput
			if err := c.Unmarshal(full, &qv); err != nil {
				t.Fatal(err)
			}
			tick += uint32(1 + r.Intn(3)*r.Intn(2))
			if err := in.Push(tick, &qv); err != nil {
				t.Fatal(err)
			}
			held = append(held, qv)
			tc.Ticks = append(tc.Ticks, tick)
			tc.Inputs = append(tc.Inputs, hex.EncodeToString(full))
		}
		pkt, err := client.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		tc.Want = hex.EncodeToString(pkt)
		tiCheckSection(t, c, pkt, mode, held[max(0, len(held)-red):], tc.Ticks[max(0, len(held)-red):])
		cases = append(cases, tc)
	}
	return cases
}

// tiCheckSection reads the input section of a client packet (after the
// header of 22 bits) as the server does, newest first, and checks it
// holds the inputs want (oldest first) for their ticks.
func tiCheckSection(t *testing.T, c *bitwire.Codec[tiInput], pkt []byte, mode snapshot.Mode, want []tiInput, ticks []uint32) {
	t.Helper()
	trailer := map[snapshot.Mode]int{snapshot.ModeNone: 0, snapshot.ModeChecksum: 4, snapshot.ModeMAC: 10}[mode]
	r := bits.NewReader(pkt[:len(pkt)-trailer])
	if _, err := r.ReadBits(22); err != nil {
		t.Fatal(err)
	}
	cnt, err := fields.ReadBitlen(r, 3)
	if err != nil || int(cnt)+1 != len(want) {
		t.Fatalf("input section of %d inputs, want %d (%v)", cnt+1, len(want), err)
	}
	top, _ := r.ReadBits(32)
	got := []uint32{uint32(top)}
	for k := 1; k < len(want); k++ {
		one, _ := r.ReadBool()
		gap := uint64(1)
		if !one {
			g, _ := fields.ReadBitlen(r, 5)
			gap = g + 2
		}
		got = append(got, got[k-1]-uint32(gap))
	}
	vals := make([]tiInput, len(want))
	if err := c.Decode(r, &vals[0]); err != nil {
		t.Fatal(err)
	}
	for k := 1; k < len(want); k++ {
		if err := c.DecodeDelta(r, &vals[k-1], &vals[k]); err != nil {
			t.Fatalf("input %d of %d: %v", k, len(want), err)
		}
	}
	if !r.CheckPadding() {
		t.Fatal("bits after the input section")
	}
	for k := range want {
		w := &want[len(want)-1-k]
		if got[k] != ticks[len(ticks)-1-k] || !c.Equal(&vals[k], w) {
			t.Fatalf("input %d: tick %d, want %d; value %+v, want %+v", k, got[k], ticks[len(ticks)-1-k], vals[k], *w)
		}
	}
}

func inputTS(t *testing.T, node, dir string) {
	cases := tiCorpus(t, 900)
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "input.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "build/test/input.js"), path).CombinedOutput()
	expectAll(t, "TypeScript", len(cases), out, err)
}

// TestCSharpInputSequences: the 900 input sequences of the TypeScript
// runner (TestTypeScriptConnection/input) through the C# InputSender
// behind a ConnClient (clients/cs/Conn.cs): Go's client packet byte for
// byte, every coding an input may have delta-coded by the generated
// EncodeDeltaInput.
func TestCSharpInputSequences(t *testing.T) {
	mcs, mono := csTools(t)
	cases := tiCorpus(t, 900)
	var lines strings.Builder
	for _, c := range cases {
		ticks := make([]string, len(c.Ticks))
		for i, tk := range c.Ticks {
			ticks[i] = strconv.FormatUint(uint64(tk), 10)
		}
		fmt.Fprintf(&lines, "%d\t%s\t%d\t%s\t%s\t%s\n", c.Mode, c.Key, c.Red, strings.Join(ticks, ","), strings.Join(c.Inputs, ","), c.Want)
	}
	var src strings.Builder
	if err := gen.CSharp(&src, "CI", gen.Named("TI", bitwire.MustFor[tiInput]().Schema())); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/Conn.cs", "../clients/cs/test/InputRunner.cs")
	path := filepath.Join(filepath.Dir(exe), "input.tsv")
	if err := os.WriteFile(path, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mono, exe, path).CombinedOutput()
	expectAll(t, "C#", len(cases), out, err)
}
