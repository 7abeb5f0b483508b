package gen_test

import (
	"encoding/hex"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/gen"
)

// cfFlyers holds values tagged pred in every place prediction reaches: an
// entity set, an array, a pointer, signed and 64-bit integers.
type cfFlyers struct {
	Tick   uint32 `net:"bits=32"`
	Bodies []cfFlyer
	Aim    [2]float32 `net:"q,min=-1,max=1,bits=10,pred"`
	Spin   int16      `net:"bits=9,pred"`
	Far    int64      `net:"range,min=-9000000000000000000,max=9000000000000000000,pred"`
	Cam    *cfCam
	Ori    cfOri `net:"quat,bits=11,pred"`
}

// cfOri is a quaternion held in a struct of float64 components.
type cfOri struct{ X, Y, Z, W float64 }

type cfFlyer struct {
	ID  uint16     `net:"id,bits=16"`
	X   float32    `net:"q,min=-500,max=500,prec=0.05,dmin=-5,dmax=5,pred"`
	Y   float64    `net:"q,min=-500,max=500,prec=0.05,pred"`
	Dir uint8      `net:"range,min=0,max=200,pred"`
	Hp  uint8      `net:"range,min=0,max=100"`
	Rot [4]float32 `net:"quat,pred"`
}

// cfRecA and cfRecB hold each other: whether a field predicts depends on
// both types (a runtime that settles one type before the other must still
// find cfRecB's X below cfRecA's B and below cfRecB's own A).
type cfRecA struct {
	N uint8 `net:"range,min=0,max=9"`
	B *cfRecB
}

type cfRecB struct {
	A *cfRecA
	X int16 `net:"bits=12,pred"`
}

// recCases are predicted deltas of cfRecA chains of random depth whose X
// values move at random constant rates.
func recCases(t *testing.T, n int, r *rand.Rand) []cfCase {
	c := bitwire.MustFor[cfRecA]()
	var chain func(depth int, x []int16, step int) *cfRecB
	chain = func(depth int, x []int16, step int) *cfRecB {
		if depth == len(x) {
			return nil
		}
		b := &cfRecB{X: x[depth] + int16(step*(depth+1))}
		if next := chain(depth+1, x, step); next != nil {
			b.A = &cfRecA{N: uint8(depth % 10), B: next}
		}
		return b
	}
	var cases []cfCase
	for range n {
		x := make([]int16, 1+r.Intn(4))
		for i := range x {
			x[i] = int16(r.Intn(1500) - 750)
		}
		older, base, cur := cfRecA{N: 1, B: chain(0, x, 0)}, cfRecA{N: 1, B: chain(0, x, 1)}, cfRecA{N: 1, B: chain(0, x, 2)}
		data, err := c.MarshalPredicted(&older, &base, &cur)
		if err != nil {
			t.Fatal(err)
		}
		var out cfRecA
		if err := c.UnmarshalPredicted(data, &older, &base, &out); err != nil {
			t.Fatal(err)
		}
		full := func(v *cfRecA) string {
			b, err := c.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return hex.EncodeToString(b)
		}
		cases = append(cases, cfCase{Kind: "golden-predicted", Msg: "RecA", Full: full(&base), Older: full(&older), Delta: hex.EncodeToString(data), Want: full(&out)})
	}
	return cases
}

// spinOf is the rotation a flyer of the given id turns by each step: up
// to 21° about an axis of its own.
func spinOf(id uint16) [4]float64 {
	a := [3]float64{float64(id%5) - 2, float64(id%3) - 1, 1}
	l := math.Sqrt(a[0]*a[0] + a[1]*a[1] + a[2]*a[2])
	h := float64(id%7+1) * 1.5 * math.Pi / 180
	s := math.Sin(h) / l
	return [4]float64{a[0] * s, a[1] * s, a[2] * s, math.Cos(h)}
}

// turn returns the rotation d·q, normalized.
func turn(d, q [4]float64) [4]float64 {
	p := [4]float64{
		d[3]*q[0] + d[0]*q[3] + d[1]*q[2] - d[2]*q[1],
		d[3]*q[1] - d[0]*q[2] + d[1]*q[3] + d[2]*q[0],
		d[3]*q[2] + d[0]*q[1] - d[1]*q[0] + d[2]*q[3],
		d[3]*q[3] - d[0]*q[0] - d[1]*q[1] - d[2]*q[2],
	}
	l := math.Sqrt(p[0]*p[0] + p[1]*p[1] + p[2]*p[2] + p[3]*p[3])
	return [4]float64{p[0] / l, p[1] / l, p[2] / l, p[3] / l}
}

func f32q(q [4]float64) [4]float32 {
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

func f64q(q [4]float32) [4]float64 {
	return [4]float64{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
}

type cfCam struct {
	Zoom float32 `net:"q,min=0,max=8,bits=7,pred"`
}

// flyerWorld makes a world and flyerStep moves it on: each body at its own
// constant velocity, with now and then a turn, a new body or one gone.
type flyerWorld struct {
	r   *rand.Rand
	v   cfFlyers
	vel map[uint16][2]float64
}

func newFlyers(r *rand.Rand) *flyerWorld {
	f := &flyerWorld{r: r, vel: map[uint16][2]float64{}}
	for id := uint16(1); id <= 12; id++ {
		f.add(id)
	}
	f.v.Aim = [2]float32{float32(r.Float64()*2 - 1), 0}
	o := turn([4]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}, [4]float64{0, 0, 0, 1})
	f.v.Ori = cfOri{o[0], o[1], o[2], o[3]}
	if r.Intn(2) == 0 {
		f.v.Cam = &cfCam{Zoom: 1}
	}
	return f
}

func (f *flyerWorld) add(id uint16) {
	r := f.r
	rot := f32q(turn([4]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}, [4]float64{0, 0, 0, 1}))
	f.v.Bodies = append(f.v.Bodies, cfFlyer{ID: id, X: float32(r.Float64()*800 - 400), Y: r.Float64()*800 - 400, Dir: uint8(r.Intn(201)), Hp: uint8(r.Intn(101)), Rot: rot})
	f.vel[id] = [2]float64{float64(r.Intn(41)-20) * 0.05, float64(r.Intn(41)-20) * 0.05}
}

func (f *flyerWorld) step() cfFlyers {
	r := f.r
	v := f.v
	v.Tick++
	v.Bodies = append([]cfFlyer(nil), f.v.Bodies...)
	for i := range v.Bodies {
		b := &v.Bodies[i]
		if r.Intn(20) == 0 {
			f.vel[b.ID] = [2]float64{float64(r.Intn(41)-20) * 0.05, float64(r.Intn(41)-20) * 0.05}
		}
		d := f.vel[b.ID]
		b.X = float32(min(500, max(-500, float64(b.X)+d[0])))
		b.Y = min(500, max(-500, b.Y+d[1]))
		b.Dir = uint8((int(b.Dir) + 1) % 201)
		b.Rot = f32q(turn(spinOf(b.ID), f64q(b.Rot)))
	}
	if r.Intn(10) == 0 && len(v.Bodies) > 0 {
		k := r.Intn(len(v.Bodies))
		v.Bodies = append(v.Bodies[:k:k], v.Bodies[k+1:]...)
	}
	if r.Intn(10) == 0 {
		f.v.Bodies = v.Bodies
		f.add(v.Bodies[len(v.Bodies)-1].ID + uint16(1+r.Intn(3)))
		v.Bodies = f.v.Bodies
	}
	v.Aim[1] = min(1, v.Aim[1]+0.01)
	v.Spin = int16(min(255, int(v.Spin)+3))
	v.Far += 1_000_000_000_000_000
	if v.Far > 8_000_000_000_000_000_000 {
		v.Far = -8_000_000_000_000_000_000
	}
	o := turn(spinOf(7), [4]float64{v.Ori.X, v.Ori.Y, v.Ori.Z, v.Ori.W})
	v.Ori = cfOri{o[0], o[1], o[2], o[3]}
	if v.Cam != nil {
		c := *v.Cam
		c.Zoom = min(8, c.Zoom+0.0625)
		v.Cam = &c
	}
	f.v = v
	return v
}

// flyerCases are predicted deltas of random triples of flyer worlds, as
// golden-predicted cases: the older baseline and the baseline in full, the
// delta, and the full message of what Go decodes.
func flyerCases(t *testing.T, n int, r *rand.Rand) []cfCase {
	c := bitwire.MustFor[cfFlyers]()
	var cases []cfCase
	for range n {
		f := newFlyers(r)
		older := f.step()
		for range r.Intn(3) {
			older = f.step()
		}
		base, cur := f.step(), f.step()
		for _, v := range []*cfFlyers{&older, &base} {
			if err := c.Quantize(v); err != nil {
				t.Fatal(err)
			}
		}
		data, err := c.MarshalPredicted(&older, &base, &cur)
		if err != nil {
			t.Fatal(err)
		}
		var out cfFlyers
		if err := c.UnmarshalPredicted(data, &older, &base, &out); err != nil {
			t.Fatal(err)
		}
		full := func(v *cfFlyers) string {
			b, err := c.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return hex.EncodeToString(b)
		}
		cases = append(cases, cfCase{Kind: "golden-predicted", Msg: "Flyers", Full: full(&base), Older: full(&older), Delta: hex.EncodeToString(data), Want: full(&out)})
	}
	return cases
}

// predictedPacket reports whether a snapshot packet of a predicting codec
// names an older snapshot (wire-format.md, "Snapshot packets").
func predictedPacket(t *testing.T, packet string) bool {
	p, err := hex.DecodeString(packet)
	if err != nil {
		t.Fatal(err)
	}
	r := bits.NewReader(p)
	if err := r.Skip(16 + 32 + 32 + 2 + 1); err != nil {
		t.Fatal(err)
	}
	if delta, _ := r.ReadBool(); !delta {
		return false
	}
	if _, err := fields.ReadBitlen(r, 5); err != nil {
		t.Fatal(err)
	}
	on, err := r.ReadBool()
	if err != nil {
		t.Fatal(err)
	}
	return on
}

// predictedCases are Go's predicted deltas of random flyer worlds and of
// types that hold each other, and the
// snapshot streams of a predicting type (packets lost, reordered,
// duplicated and damaged on the way, acks lost), whose deltas name an older
// snapshot when the sender has one; the generated clients of both
// languages must agree with Go on each.
func predictedCases(t *testing.T) ([]gen.Message, []cfCase) {
	r := rand.New(rand.NewSource(21))
	cases := append(flyerCases(t, 300, r), recCases(t, 60, r)...)
	snapCorpus(t, "Flyers", 6, 150, r, &cases, func() cfFlyers { return newFlyers(r).step() }, func(v cfFlyers) cfFlyers {
		f := &flyerWorld{r: r, v: v, vel: map[uint16][2]float64{}}
		for _, b := range v.Bodies {
			f.vel[b.ID] = [2]float64{float64(int(b.ID)%9-4) * 0.05, 0.1}
		}
		return f.step()
	})
	snaps, predicted := 0, 0
	for _, c := range cases {
		if c.Kind == "snap" && c.Err == "" {
			snaps++
			if predictedPacket(t, c.Packet) {
				predicted++
			}
		}
	}
	if snaps < 500 || predicted < snaps/2 {
		t.Fatalf("%d snapshot packets decoded, %d of them predicted", snaps, predicted)
	}
	return []gen.Message{gen.Named("Flyers", bitwire.MustFor[cfFlyers]().Schema()), gen.Named("RecA", bitwire.MustFor[cfRecA]().Schema())}, cases
}

func TestPredictedTypeScript(t *testing.T) {
	node, tsc := clientTools(t)
	msgs, cases := predictedCases(t)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", msgs...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

func TestPredictedCSharp(t *testing.T) {
	mcs, mono := csTools(t)
	msgs, cases := predictedCases(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", msgs...); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)
}
