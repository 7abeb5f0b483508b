package gen_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/gen"
)

// ciAim is a nested input struct with windowed fields: deltas in steps.
type ciAim struct {
	Yaw   float32 `net:"q,min=-3.2,max=3.2,prec=0.01,dmin=-0.5,dmax=0.5"`
	Pitch float32 `net:"q,min=-1.6,max=1.6,bits=8"`
}

// ciInput holds every input coding the C# EncodeDeltaInput writes as Go's
// Codec.EncodeDelta does: windows (q, range, bits, fixed), signed bitlen
// (the sign flag), a shared-length group, fixed point, raw floats, bytes,
// time, arrays, slices (index sets of changed elements), maps, pointers
// to values and structs, and nested and composite structs.
type ciInput struct {
	Move   int8    `net:"range,min=-1,max=1"`
	Fire   bool    `net:""`
	Wheel  int16   `net:"range,min=-500,max=500,dmin=-8,dmax=7"`
	Frame  uint16  `net:"bits=12,dmin=-4,dmax=3"`
	Trim   float64 `net:"fixed,prec=0.001,dmin=-16,dmax=15"`
	DX     int32   `net:"bitlen,group=d"`
	DY     int32   `net:"bitlen,group=d"`
	Delta  int64
	Drift  float64 `net:"fixed,prec=0.01"`
	Raw    float32
	Note   []byte `net:",maxlen=6"`
	At     time.Time
	Keys   [3]bool
	Aim    ciAim
	Pad    ciAim   `net:"composite"`
	Hist   []ciAim `net:",maxlen=12"`
	Clicks []uint16
	Target *uint32
	Where  *ciAim
	Binds  map[string]int16 `net:",maxlen=6"`
	Seq    uint16           `net:"varint"`
}

// ciEnt is a small entity: an unsigned id first.
type ciEnt struct {
	ID uint8 `net:"id"`
	V  bool
}

// ciModeled is an input whose message has a model: its deltas are Go's
// only (the C# EncodeDeltaInput refuses them).
type ciModeled struct {
	X   float32    `net:"q,min=-10,max=10,prec=0.01,dmin=-1,dmax=1"`
	Rot [4]float32 `net:"quat"`
}

func randCIAim(r *rand.Rand) ciAim {
	return ciAim{Yaw: float32(r.Float64()*6.4 - 3.2), Pitch: float32(r.Float64()*3.2 - 1.6)}
}

func randCIInput(r *rand.Rand) ciInput {
	in := ciInput{Move: int8(r.Intn(3) - 1), Fire: r.Intn(2) == 0, Wheel: int16(r.Intn(1001) - 500), Frame: uint16(r.Intn(4096)),
		Trim: math.Round((r.Float64()*200-100)*1000) / 1000, DX: r.Int31n(2001) - 1000, DY: r.Int31n(31) - 15,
		Delta: r.Int63n(1<<40) - 1<<39, Drift: float64(r.Intn(20001)-10000) / 100, Raw: float32(r.NormFloat64()),
		At: time.Unix(r.Int63n(1<<33), r.Int63n(1e9)), Keys: [3]bool{r.Intn(2) == 0, r.Intn(2) == 0, r.Intn(2) == 0},
		Aim: randCIAim(r), Pad: randCIAim(r), Seq: uint16(r.Intn(65536))}
	for i := r.Intn(5); i > 0; i-- {
		in.Note = append(in.Note, byte(r.Intn(256)))
	}
	for i := r.Intn(12); i > 0; i-- {
		in.Hist = append(in.Hist, randCIAim(r))
	}
	for i := r.Intn(4); i > 0; i-- {
		in.Clicks = append(in.Clicks, uint16(r.Intn(1000)))
	}
	for i := r.Intn(4); i > 0; i-- {
		if in.Binds == nil {
			in.Binds = map[string]int16{}
		}
		in.Binds[fmt.Sprint("k", r.Intn(6))] = int16(r.Intn(200) - 100)
	}
	if r.Intn(3) > 0 {
		v := r.Uint32()
		in.Target = &v
	}
	if r.Intn(3) > 0 {
		a := randCIAim(r)
		in.Where = &a
	}
	return in
}

// nextCIInput changes some fields of v a little, as the next input of a
// player's controls does (most within the windows), and leaves the rest.
func nextCIInput(r *rand.Rand, v ciInput) ciInput {
	w := v
	w.Note = append([]byte(nil), v.Note...)
	w.Hist = append([]ciAim(nil), v.Hist...)
	w.Clicks = append([]uint16(nil), v.Clicks...)
	if v.Binds != nil && r.Intn(2) == 0 {
		w.Binds = map[string]int16{}
		for k, x := range v.Binds {
			if r.Intn(4) > 0 {
				w.Binds[k] = x + int16(r.Intn(2))
			}
		}
		if r.Intn(2) == 0 {
			w.Binds[fmt.Sprint("k", r.Intn(6))] = int16(r.Intn(9))
		}
	}
	if v.Target != nil && r.Intn(2) == 0 {
		t := *v.Target + uint32(r.Intn(3))
		w.Target = &t
	}
	if v.Where != nil && r.Intn(2) == 0 {
		a := *v.Where
		a.Yaw = float32(math.Max(-3.19, math.Min(3.19, float64(a.Yaw)+r.Float64()*0.4-0.2)))
		w.Where = &a
	}
	for k := r.Intn(6); k > 0; k-- {
		switch r.Intn(14) {
		case 0:
			w.Wheel = int16(max(-500, min(500, int(v.Wheel)+r.Intn(20)-10)))
		case 1:
			w.Frame = uint16((int(v.Frame) + r.Intn(9) - 4 + 4096) % 4096)
		case 2:
			w.Trim = math.Round((v.Trim+r.Float64()*0.04-0.02)*1000) / 1000
		case 3:
			w.DX, w.DY = v.DX+r.Int31n(5)-2, -v.DY
		case 4:
			w.Delta = -v.Delta + 1
		case 5:
			w.Aim.Yaw = float32(math.Max(-3.19, math.Min(3.19, float64(v.Aim.Yaw)+r.Float64()*0.2-0.1)))
		case 6:
			w.Pad.Pitch = -v.Pad.Pitch
		case 7:
			if len(w.Hist) > 0 {
				i := r.Intn(len(w.Hist))
				w.Hist[i].Yaw = -w.Hist[i].Yaw
			}
			if r.Intn(2) == 0 && len(w.Hist) < 12 {
				w.Hist = append(w.Hist, randCIAim(r))
			}
		case 8:
			if len(w.Hist) > 0 {
				w.Hist = w.Hist[:r.Intn(len(w.Hist))]
			}
		case 9:
			w.Clicks = append(w.Clicks, uint16(r.Intn(1000)))
		case 10:
			w.Target, w.Where = nil, nil
		case 11:
			w.Note = append(w.Note[:0:0], byte(r.Intn(256)))
			w.At = v.At.Add(time.Duration(r.Intn(1e6)))
		case 12:
			w.Raw, w.Drift = -v.Raw, v.Drift+0.5
		default:
			w.Keys[r.Intn(3)] = r.Intn(2) == 0
			w.Seq++
		}
	}
	return w
}

// The generated C# EncodeDeltaInput writes Go's Codec.EncodeDelta bit for
// bit, for every coding an input may have (the InputSender's older inputs):
// random pairs of inputs of every other coding, of quaternions and of
// entity sets (csharp_input_sets_test.go), each pair a baseline
// against a next input, a new random one, or itself. Only a message with a
// model is refused.
func TestCSharpInputDelta(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	var cases []cfCase
	cases = ciPairs(t, cases, "Input", 1500, r, randCIInput, nextCIInput)
	cases = ciPairs(t, cases, "Quats", 1500, r, randCIQuats, nextCIQuats)
	cases = ciPairs(t, cases, "Units", 1500, r, randCIUnits, nextCIUnits)
	cases = ciPairs(t, cases, "Windows", 1500, r, randCIWindows, nextCIWindows)
	cm := ciModel(t)
	for i := 0; i < 3; i++ {
		a, _ := cm.Marshal(&ciModeled{Rot: [4]float32{0, 0, 0, 1}})
		b, _ := cm.Marshal(&ciModeled{X: float32(i), Rot: [4]float32{0, 0.6, 0, 0.8}})
		cases = append(cases, cfCase{Kind: "input", Msg: "Modeled", Full: hex.EncodeToString(a), Delta: hex.EncodeToString(b), Want: "ErrUnsupportedType"})
	}
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", gen.Named("Input", bitwire.MustFor[ciInput]().Schema()), gen.Named("Quats", bitwire.MustFor[ciQuats]().Schema()),
		gen.Named("Units", bitwire.MustFor[ciUnits]().Schema()), gen.Named("Windows", bitwire.MustFor[ciWindows]().Schema()),
		gen.Named("Modeled", cm.Schema())); err != nil {
		t.Fatal(err)
	}
	mcs, mono := csTools(t)
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)
}

// ciPairs appends n input cases of message msg: random baselines (rnd),
// each against the next input (next), a new random one, or itself.
func ciPairs[T any](t *testing.T, cases []cfCase, msg string, n int, r *rand.Rand, rnd func(*rand.Rand) T, next func(*rand.Rand, T) T) []cfCase {
	c := bitwire.MustFor[T]()
	for i := 0; i < n; i++ {
		base := rnd(r)
		cur := base
		switch i % 3 {
		case 0:
			cur = next(r, base)
		case 1:
			cur = rnd(r)
		}
		cases = append(cases, ciCase(t, c, msg, base, cur))
	}
	return cases
}

// ciCase is the input case of base and cur: both in full, and Go's delta
// between them as a receiver holds them (both quantized, as the
// InputSender compares them), its bit count and bytes.
func ciCase[T any](t *testing.T, c *bitwire.Codec[T], msg string, base, cur T) cfCase {
	full := func(v T) (string, T) { // v in full, and as a receiver decodes it
		b, err := c.Marshal(&v)
		var q T
		if err == nil {
			err = c.Unmarshal(b, &q)
		}
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(b), q
	}
	fb, qb := full(base)
	fc, qc := full(cur)
	w := bits.NewWriter(nil)
	if err := c.EncodeDelta(w, &qb, &qc); err != nil {
		t.Fatal(err)
	}
	return cfCase{Kind: "input", Msg: msg, Full: fb, Delta: fc, Want: fmt.Sprintf("%d:%s", w.Len(), hex.EncodeToString(w.Bytes()))}
}

// ciModel returns the codec of ciModeled with a model trained on a few
// hundred random pairs.
func ciModel(t *testing.T) *bitwire.Codec[ciModeled] {
	c := bitwire.MustFor[ciModeled]()
	tr := c.NewTrainer()
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 300; i++ {
		a := ciModeled{X: float32(r.Float64()*19 - 9.5), Rot: f32Quat(ciQuat(r))}
		b := ciModeled{X: a.X + float32(r.Float64()*0.2-0.1), Rot: f32Quat(ciTurn(r, f64Quat(a.Rot)))}
		if err := tr.Add(&a, &b); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tr.Model()
	if err != nil {
		t.Fatal(err)
	}
	cm := c.WithModel(m)
	if err := cm.ModelErr(); err != nil {
		t.Fatal(err)
	}
	return cm
}
