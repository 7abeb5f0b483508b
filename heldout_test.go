package bitwire

import (
	"fmt"
	"math"
	mbits "math/bits"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/internal/tumble"
)

// The held-out harness: for many kinds of orientation streams, a model is
// trained through the public API on the first half of a recording and
// measured on the second half, beside the adaptive code (no model) and a
// bound (the empirical entropy of the second half's own symbols, plus the
// raw bits the tokens carry). TestHeldOut runs a quick sweep and checks
// that the model does not lose to the adaptive code by more than a little
// where it has enough data to learn from (below); with BITWIRE_HELDOUT=1 it runs
// the full sweep (recordings up to 100,000 pairs) and prints the table of
// docs/decisions.md:
//
//	BITWIRE_HELDOUT=1 go test -run TestHeldOut -v .

type hq7 struct {
	Rot [4]float32 `net:"quat,bits=7"`
}
type hq8 struct {
	Rot [4]float32 `net:"quat,bits=8"`
}
type hq9 struct {
	Rot [4]float32 `net:"quat,bits=9"`
}
type hq10 struct {
	Rot [4]float32 `net:"quat,bits=10"`
}
type hq11 struct {
	Rot [4]float32 `net:"quat,bits=11"`
}
type hq12 struct {
	Rot [4]float32 `net:"quat,bits=12"`
}

// hBody is a body with a windowed position, a yaw (modular) and an
// orientation.
type hBody struct {
	X   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Y   float32    `net:"q,min=-16,max=112,prec=0.01,dmin=-2,dmax=2"`
	Z   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Yaw float32    `net:"q,min=0,max=360,bits=10"`
	Rot [4]float32 `net:"quat,bits=9"`
}

// hState is one body's state in a stream.
type hState struct {
	pos [3]float64
	yaw float64
	q   [4]float64
}

// hStream generates one body's states over n ticks; the body is told the
// tick and the number of ticks (for streams whose behaviour shifts).
type hStream struct {
	name string
	gen  func(rng *rand.Rand, n int) []hState
}

const deg = math.Pi / 180

func hRandQuat(rng *rand.Rand) [4]float64 {
	for {
		var q [4]float64
		s := 0.0
		for k := range q {
			q[k] = rng.NormFloat64()
			s += q[k] * q[k]
		}
		if s > 1e-6 {
			s = math.Sqrt(s)
			for k := range q {
				q[k] /= s
			}
			return q
		}
	}
}

func hRandAxis(rng *rand.Rand) [3]float64 {
	q := hRandQuat(rng)
	s := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2])
	return [3]float64{q[0] / s, q[1] / s, q[2] / s}
}

// hRotate turns q by angle a about axis ax (world frame).
func hRotate(q [4]float64, ax [3]float64, a float64) [4]float64 {
	w := [3]float64{ax[0] * a, ax[1] * a, ax[2] * a}
	return rotateQ(q, w)
}

func rotateQ(q [4]float64, w [3]float64) [4]float64 {
	a := math.Sqrt(w[0]*w[0] + w[1]*w[1] + w[2]*w[2])
	if a == 0 {
		return q
	}
	s := math.Sin(a/2) / a
	dx, dy, dz, dw := w[0]*s, w[1]*s, w[2]*s, math.Cos(a/2)
	x, y, z, qw := q[0], q[1], q[2], q[3]
	r := [4]float64{
		dw*x + dx*qw + dy*z - dz*y,
		dw*y - dx*z + dy*qw + dz*x,
		dw*z + dx*y - dy*x + dz*qw,
		dw*qw - dx*x - dy*y - dz*z,
	}
	n := math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2] + r[3]*r[3])
	for k := range r {
		r[k] /= n
	}
	return r
}

// hMove gives a state a walk in position and yaw, some ticks still.
func hMove(rng *rand.Rand, out []hState) {
	p := [3]float64{rng.Float64()*400 - 200, rng.Float64() * 50, rng.Float64()*400 - 200}
	v := [3]float64{}
	yaw := rng.Float64() * 360
	for t := range out {
		if rng.Float64() < 0.05 {
			v = [3]float64{rng.NormFloat64() * 0.3, rng.NormFloat64() * 0.05, rng.NormFloat64() * 0.3}
		}
		if rng.Float64() < 0.02 {
			v = [3]float64{}
		}
		for k := range p {
			p[k] += v[k]
		}
		p[0] = math.Max(-250, math.Min(250, p[0]))
		p[1] = math.Max(-10, math.Min(100, p[1]))
		p[2] = math.Max(-250, math.Min(250, p[2]))
		if v != [3]float64{} {
			yaw = math.Mod(yaw+rng.NormFloat64()*3+360, 360)
		}
		out[t].pos, out[t].yaw = p, yaw
	}
}

// spin: a fixed axis, a speed uniform in lo..hi degrees a tick.
func hSpin(lo, hi float64) func(*rand.Rand, int) []hState {
	return func(rng *rand.Rand, n int) []hState {
		out := make([]hState, n)
		q, ax := hRandQuat(rng), hRandAxis(rng)
		a := (lo + (hi-lo)*rng.Float64()) * deg
		for t := range out {
			q = hRotate(q, ax, a)
			out[t].q = q
		}
		hMove(rng, out)
		return out
	}
}

// walk: a random axis every tick, the angle |N(0, s)| degrees.
func hWalk(s float64) func(*rand.Rand, int) []hState {
	return func(rng *rand.Rand, n int) []hState {
		out := make([]hState, n)
		q := hRandQuat(rng)
		for t := range out {
			q = hRotate(q, hRandAxis(rng), math.Abs(rng.NormFloat64())*s*deg)
			out[t].q = q
		}
		hMove(rng, out)
		return out
	}
}

// jitter: a slow drift (0.05° a tick) seen through a sensor's noise of
// s degrees, not accumulated.
func hJitter(s float64) func(*rand.Rand, int) []hState {
	return func(rng *rand.Rand, n int) []hState {
		out := make([]hState, n)
		q, ax := hRandQuat(rng), hRandAxis(rng)
		for t := range out {
			q = hRotate(q, ax, 0.05*deg)
			out[t].q = hRotate(q, hRandAxis(rng), rng.NormFloat64()*s*deg)
		}
		hMove(rng, out)
		return out
	}
}

// restWake: asleep (unchanged) most of the time; a wake-up gives a spin of
// up to hi degrees a tick that decays until the body sleeps again.
func hRestWake(hi float64) func(*rand.Rand, int) []hState {
	return func(rng *rand.Rand, n int) []hState {
		out := make([]hState, n)
		q := hRandQuat(rng)
		var w [3]float64
		for t := range out {
			if rng.Float64() < 0.01 {
				ax := hRandAxis(rng)
				a := rng.Float64() * hi * deg
				w = [3]float64{ax[0] * a, ax[1] * a, ax[2] * a}
			}
			q = rotateQ(q, w)
			for k := range w {
				w[k] *= 0.95
			}
			if math.Sqrt(w[0]*w[0]+w[1]*w[1]+w[2]*w[2]) < 0.02*deg {
				w = [3]float64{}
			}
			out[t].q = q
		}
		hMove(rng, out)
		return out
	}
}

// teleport: a spin of up to s degrees a tick, and with probability p a
// tick a reset to a random orientation.
func hTeleport(s, p float64) func(*rand.Rand, int) []hState {
	return func(rng *rand.Rand, n int) []hState {
		out := make([]hState, n)
		q, ax := hRandQuat(rng), hRandAxis(rng)
		a := rng.Float64() * s * deg
		for t := range out {
			if rng.Float64() < p {
				q, ax = hRandQuat(rng), hRandAxis(rng)
				a = rng.Float64() * s * deg
			}
			q = hRotate(q, ax, a)
			out[t].q = q
		}
		hMove(rng, out)
		return out
	}
}

// shift: the first half of the ticks spin at a°, the second at b°: what
// a model trained on the first half has never seen.
func hShift(a, b float64) func(*rand.Rand, int) []hState {
	return func(rng *rand.Rand, n int) []hState {
		out := make([]hState, n)
		q, ax := hRandQuat(rng), hRandAxis(rng)
		for t := range out {
			s := a
			if t >= n/2 {
				s = b
			}
			q = hRotate(q, ax, s*deg*(0.5+rng.Float64()))
			if rng.Float64() < 0.02 {
				ax = hRandAxis(rng)
			}
			out[t].q = q
		}
		hMove(rng, out)
		return out
	}
}

// tumbleStream records internal/tumble bodies (one world of one body per
// stream, so that the seed varies).
func hTumble(spinning bool) func(*rand.Rand, int) []hState {
	return func(rng *rand.Rand, n int) []hState {
		var w *tumble.World
		if spinning {
			w = tumble.NewSpinning(rng.Uint64(), 1)
		} else {
			w = tumble.New(rng.Uint64(), 1)
		}
		out := make([]hState, n)
		for t := range out {
			w.Step()
			r := w.Rot(0)
			out[t].q = [4]float64{float64(r[0]), float64(r[1]), float64(r[2]), float64(r[3])}
		}
		hMove(rng, out)
		return out
	}
}

func hStreams() []hStream {
	return []hStream{
		{"spin 0.1°", hSpin(0.05, 0.1)},
		{"spin 0.5°", hSpin(0.25, 0.5)},
		{"spin 2°", hSpin(0, 2)},
		{"spin 8°", hSpin(4, 8)},
		{"spin 30°", hSpin(15, 30)},
		{"walk 0.3°", hWalk(0.3)},
		{"walk 3°", hWalk(3)},
		{"jitter 0.2°", hJitter(0.2)},
		{"jitter 1°", hJitter(1)},
		{"rest/wake 3°", hRestWake(3)},
		{"teleport 1% spin 2°", hTeleport(2, 0.01)},
		{"teleport 10% spin 2°", hTeleport(2, 0.1)},
		{"shift 0.5°→5°", hShift(0.5, 5)},
		{"shift 5°→0.5°", hShift(5, 0.5)},
		{"tumble spinning", hTumble(true)},
		{"tumble settling", hTumble(false)},
	}
}

// hAge is how old the baseline of each pair is: fixed, or uniform in
// 1..max.
type hAge struct {
	name string
	max  int
	rand bool
}

// hPairs records n (baseline, current) pairs of a stream, in time order:
// bodies of up to 500 ticks each, the pairs of tick t from all bodies
// before those of t+1.
func hPairs(s hStream, seed uint64, n int, age hAge) (base, cur []hState) {
	rng := rand.New(rand.NewPCG(seed, 0x68656c64))
	ticks := min(n, 500)
	bodies := (n + ticks - 1) / ticks
	ticks = (n+bodies-1)/bodies + age.max
	st := make([][]hState, bodies)
	for i := range st {
		st[i] = s.gen(rng, ticks)
	}
	for t := age.max; t < ticks && len(cur) < n; t++ {
		for i := range st {
			a := age.max
			if age.rand {
				a = 1 + rng.IntN(age.max)
			}
			base = append(base, st[i][t-a])
			cur = append(cur, st[i][t])
			if len(cur) == n {
				break
			}
		}
	}
	return base, cur
}

func f32q(q [4]float64) [4]float32 {
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

// hResult is one row: bits per changed value on the test half.
type hResult struct {
	changed         int     // test pairs that changed
	noModel, model  float64 // bits per changed pair (all test pairs' bits)
	bound           float64 // the entropy bound, per changed pair
	trainN, testN   int
	modelWorseBy    float64 // model / noModel - 1
	boundExcess     float64 // model / bound - 1
	unchangedModel  float64
	unchangedNone   float64
	changedAbsolute int
	plainMasks      float64 // model bits with the masks as plain changed bits
}

// heldOut trains on the first half of the pairs and measures the second.
func heldOut[T any](tb testing.TB, base, cur []T) hResult {
	tb.Helper()
	c := MustFor[T]()
	h := len(base) / 2
	tr := c.NewTrainer()
	for i := range h {
		if err := tr.Add(&base[i], &cur[i]); err != nil {
			tb.Fatal(err)
		}
	}
	m, err := tr.Model()
	if err != nil {
		tb.Fatal(err)
	}
	// The file round trip, as a user would ship it.
	file, _ := m.MarshalBinary()
	var m2 Model
	if err := m2.UnmarshalBinary(file); err != nil {
		tb.Fatal(err)
	}
	cm := c.WithModel(&m2)
	// The bound: a model of the test half's own symbols (in-sample), its
	// codeword bits replaced by the symbols' empirical entropy.
	to := c.NewTrainer()
	for i := h; i < len(base); i++ {
		if err := to.Add(&base[i], &cur[i]); err != nil {
			tb.Fatal(err)
		}
	}
	mo, err := to.Model()
	if err != nil {
		tb.Fatal(err)
	}
	co := c.WithModel(mo)
	var w bits.Writer
	var got T
	var r hResult
	var bn, bm, bo float64
	var un, um, nun float64
	for i := h; i < len(base); i++ {
		size := func(c *Codec[T], check bool) float64 {
			w.Reset(w.Bytes()[:0])
			if err := c.EncodeDelta(&w, &base[i], &cur[i]); err != nil {
				tb.Fatal(err)
			}
			if check {
				rd := bits.NewReader(w.Bytes())
				if err := c.DecodeDelta(rd, &base[i], &got); err != nil || !c.Equal(&got, &cur[i]) {
					tb.Fatalf("pair %d: round trip failed: %v", i, err)
				}
			}
			return float64(w.Len())
		}
		n, mm, o := size(c, false), size(cm, i%7 == 0), size(co, false)
		bn, bm, bo = bn+n, bm+mm, bo+o
		if c.Equal(&base[i], &cur[i]) {
			un, um, nun = un+n, um+mm, nun+1
		} else {
			r.changed++
		}
	}
	// Replace the in-sample model's codeword bits by the entropy. (A
	// quaternion struct's changed bit is counted in its first table; when
	// that model did not fold it, each of its pairs paid a plain bit.)
	var hbits, cbits float64
	lay := to.o.model.lay
	for t, cnt := range to.st.resolved(lay).counts {
		var tot uint64
		for _, x := range cnt {
			tot += x
		}
		if lay.hasUnchanged(t) && mo.testCode(t).Len(len(cnt)-1) == 0 {
			cbits += float64(tot)
		}
		for s, x := range cnt {
			if x > 0 {
				hbits -= float64(x) * math.Log2(float64(x)/float64(tot))
				l := mo.testCode(t).Len(s)
				if mo.testCode(t).Empty() { // a plain mask table: k bits a symbol
					l = mbits.Len(uint(len(cnt) - 2))
				}
				cbits += float64(x) * float64(l)
			}
		}
	}
	bo += hbits - cbits
	// What the masks cost under the trained model, and as plain bits (a
	// changed bit a field, as without a model).
	var maskModel, maskPlain float64
	for tb, cnt := range to.st.resolved(to.o.model.lay).counts {
		if to.o.model.lay.kinds[tb] != tkMask {
			continue
		}
		k := 0
		for 1<<k+1 < len(cnt) {
			k++
		}
		for sym, x := range cnt {
			l := m.testCode(tb).Len(sym)
			if l == 0 || sym == 0 {
				l = m.testCode(tb).Len(0) + k
			}
			maskModel += float64(x) * float64(l)
			maskPlain += float64(x) * float64(k)
		}
	}
	r.plainMasks = (bm - maskModel + maskPlain) / float64(max(r.changed, 1))
	d := float64(max(r.changed, 1))
	r.noModel, r.model, r.bound = bn/d, bm/d, bo/d
	r.trainN, r.testN = h, len(base)-h
	r.modelWorseBy = r.model/r.noModel - 1
	r.boundExcess = r.model/r.bound - 1
	if nun > 0 {
		r.unchangedNone, r.unchangedModel = un/nun, um/nun
	}
	return r
}

// hRun builds the pairs of one row for the layout named by kind.
func hRun(tb testing.TB, kind string, s hStream, seed uint64, n int, age hAge) hResult {
	base, cur := hPairs(s, seed, n, age)
	switch kind {
	case "body":
		bb, cc := make([]hBody, len(base)), make([]hBody, len(cur))
		for i := range base {
			for j, x := range []*hState{&base[i], &cur[i]} {
				v := hBody{X: float32(x.pos[0]), Y: float32(x.pos[1]), Z: float32(x.pos[2]), Yaw: float32(x.yaw), Rot: f32q(x.q)}
				if j == 0 {
					bb[i] = v
				} else {
					cc[i] = v
				}
			}
		}
		return heldOut(tb, bb, cc)
	case "7":
		return heldOutQ(tb, base, cur, func(q [4]float32) hq7 { return hq7{q} })
	case "8":
		return heldOutQ(tb, base, cur, func(q [4]float32) hq8 { return hq8{q} })
	case "9":
		return heldOutQ(tb, base, cur, func(q [4]float32) hq9 { return hq9{q} })
	case "10":
		return heldOutQ(tb, base, cur, func(q [4]float32) hq10 { return hq10{q} })
	case "11":
		return heldOutQ(tb, base, cur, func(q [4]float32) hq11 { return hq11{q} })
	case "12":
		return heldOutQ(tb, base, cur, func(q [4]float32) hq12 { return hq12{q} })
	}
	tb.Fatalf("kind %q", kind)
	return hResult{}
}

func heldOutQ[T any](tb testing.TB, base, cur []hState, mk func([4]float32) T) hResult {
	bb, cc := make([]T, len(base)), make([]T, len(cur))
	for i := range base {
		bb[i], cc[i] = mk(f32q(base[i].q)), mk(f32q(cur[i].q))
	}
	return heldOut(tb, bb, cc)
}

// TestHeldOut runs the sweep (quick, or full with BITWIRE_HELDOUT=1) and
// checks the model against the adaptive code where the training half has
// at least 500 pairs.
func TestHeldOut(t *testing.T) {
	full := os.Getenv("BITWIRE_HELDOUT") != ""
	if testing.Short() && !full {
		t.Skip("short")
	}
	sizes := []int{100, 2000, 10000}
	kinds := []string{"9"}
	ages := []hAge{{"1", 1, false}}
	if os.Getenv("BITWIRE_HELDOUT") == "mid" {
		sizes = []int{100, 1000, 10000}
		kinds = []string{"9", "body"}
		ages = []hAge{{"1", 1, false}, {"1..8", 8, true}}
	} else if full {
		sizes = []int{100, 1000, 10000, 100000}
		kinds = []string{"9", "body", "7", "8", "10", "11", "12"}
		ages = []hAge{{"1", 1, false}, {"4", 4, false}, {"1..8", 8, true}}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "| stream | layout | pairs | age | no model | model | bound | model vs none | plain masks |\n|---|---|--:|---|--:|--:|--:|--:|--:|\n")
	worst, logs, nrow, tot := 0.0, 0.0, 0, 0.0
	for _, s := range hStreams() {
		for _, kind := range kinds {
			for _, n := range sizes {
				for _, age := range ages {
					if n == 100000 && (age.name != "1" || kind == "body") || len(kind) == 1 && kind != "9" && (n != 10000 || age.name != "1") || len(kind) == 2 && (n != 10000 || age.name != "1") {
						continue // other widths: one size and age
					}
					r := hRun(t, kind, s, uint64(n)*131+uint64(len(s.name)), n, age)
					fmt.Fprintf(&sb, "| %s | %s | %d | %s | %.2f | %.2f | %.2f | %+.1f%% | %.2f |\n",
						s.name, kind, n, age.name, r.noModel, r.model, r.bound, 100*r.modelWorseBy, r.plainMasks)
					logs += math.Log(r.model / r.noModel)
					nrow++
					tot += r.model
					if r.trainN >= 500 {
						worst = max(worst, r.modelWorseBy)
					}
					// A model trained on 5000 pairs or more of a
					// stream whose behaviour does not change costs at
					// most 10% more than the adaptive code (the loss
					// left: a few bodies drift between the halves); any
					// model at most twice as much.
					if r.trainN >= 5000 && !strings.HasPrefix(s.name, "shift") && r.modelWorseBy > 0.10 || r.modelWorseBy > 1 {
						t.Errorf("%s, layout %s, %d pairs, age %s: model %.2f bits, no model %.2f", s.name, kind, n, age.name, r.model, r.noModel)
					}
				}
			}
		}
	}
	t.Log("\n" + sb.String())
	t.Logf("geomean model/none %.4f, sum of model %.1f", math.Exp(logs/float64(nrow)), tot)
	t.Logf("worst model vs none (training ≥ 500 pairs): %+.1f%%", 100*worst)
}
