package fields

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/internal/tumble"
)

// readDelta is ReadDelta on a packed baseline (baseOK false when it could
// not be packed).
func (q *Quat) readDelta(r *bits.Reader, s *QuatDeltaState, base uint64, baseOK bool) (uint64, error) {
	start := r.Pos()
	mode, err := s.readMode(r)
	if err != nil {
		return 0, err
	}
	if mode == quatModeAbsolute {
		s.afterAbs = 1
		return r.ReadBits(q.Bits())
	}
	if !baseOK {
		return 0, ErrInvalidValue
	}
	return q.readRelative(r, s, nil, base, mode, start, 0)
}

func TestIsqrt(t *testing.T) {
	for x := int64(0); x < 1<<16; x++ {
		r := isqrt(x)
		if r*r > x || (r+1)*(r+1) <= x {
			t.Fatalf("isqrt(%d) = %d", x, r)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		x := rng.Int64N(1 << 42)
		r := isqrt(x)
		if r*r > x || (r+1)*(r+1) <= x {
			t.Fatalf("isqrt(%d) = %d", x, r)
		}
	}
}

// TestIsqrtSmall checks the float square root against isqrt around every
// kind of square up to 2^50, its domain, and at random.
func TestIsqrtSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	check := func(x int64) {
		if x < 0 || x >= 1<<50 {
			return
		}
		if got, want := isqrtSmall(x), isqrt(x); got != want {
			t.Fatalf("isqrtSmall(%d) = %d, want %d", x, got, want)
		}
	}
	for e := uint(0); e <= 25; e++ {
		for _, r := range []int64{1<<e - 1, 1 << e, 1<<e + 1, 1<<25 - 1 - int64(e)} {
			for d := int64(-2); d <= 2; d++ {
				check(r*r + d)
			}
		}
	}
	for range 100000 {
		r := rng.Int64N(1 << 25)
		check(r*r - 1)
		check(r * r)
		check(rng.Int64N(1 << 50))
	}
}

// validPacks returns every packed quaternion Unpack accepts, for small n.
func validPacks(t *testing.T, q Quat) []uint64 {
	var out []uint64
	for u := uint64(0); u < 1<<uint(q.Bits()); u++ {
		if _, err := q.Unpack(u); err == nil {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		t.Fatal("no valid packs")
	}
	return out
}

// TestExpandQuat checks the integer rebuild of the dropped index against
// the float rebuild, for every valid quaternion of 2..6 bits a component,
// and that re-expressing with the same dropped component changes nothing.
func TestExpandQuat(t *testing.T) {
	for n := 2; n <= 6; n++ {
		q, _ := NewQuat(n)
		for _, u := range validPacks(t, q) {
			v, _ := q.Unpack(u)
			m := int(u & 3)
			all := q.ExpandQuat(u)
			want := q.index(v[m])
			if all[m] != want && math.Abs(q.value(all[m])-v[m]) > q.step/2+1e-12 {
				t.Fatalf("n=%d u=%#x: dropped index %d, float rounding gives %d (value %v)", n, u, all[m], want, v[m])
			}
			mask := uint64(1)<<uint(n) - 1
			if got, want := q.ReexpressQuat(u, m), [3]uint64{u >> 2 & mask, u >> (2 + uint(n)) & mask, u >> (2 + 2*uint(n)) & mask}; got != want {
				t.Fatalf("n=%d u=%#x: re-expressed with its own dropped component: %v, want %v", n, u, got, want)
			}
			// Re-expressed with another dropped component, the indexes
			// stay within a step of the rotation's own (or its negation's).
			for m2 := range 4 {
				if m2 == m {
					continue
				}
				got := q.ReexpressQuat(u, m2)
				s := 1.0
				if v[m2] < 0 {
					s = -1
				}
				o := quatOthers[m2]
				for k := range 3 {
					if d := math.Abs(q.value(got[k]) - s*v[o[k]]); d > q.step+1e-12 && got[k] != 0 && got[k] != q.steps {
						t.Fatalf("n=%d u=%#x m=%d: component %d at %v, rotation has %v", n, u, m2, o[k], q.value(got[k]), s*v[o[k]])
					}
				}
			}
		}
	}
}

// TestQuatDeltaExhaustive round-trips every pair of valid quaternions of 3
// bits a component, each delta alone and all of them in one stream sharing
// the adaptive state, and checks the size bound.
func TestQuatDeltaExhaustive(t *testing.T) {
	q, _ := NewQuat(3)
	packs := validPacks(t, q)
	var w bits.Writer
	ws, rs := NewQuatDeltaState(), NewQuatDeltaState()
	var pairs [][2]uint64
	for _, b := range packs {
		for _, c := range packs {
			pairs = append(pairs, [2]uint64{b, c})
		}
	}
	for _, p := range pairs {
		before := w.Len()
		q.WriteDelta(&w, &ws, p[0], true, p[1])
		if n := w.Len() - before; n > q.DeltaMaxBits() {
			t.Fatalf("%#x -> %#x: %d bits, over the bound %d", p[0], p[1], n, q.DeltaMaxBits())
		}
	}
	r := bits.NewReader(w.Bytes())
	for _, p := range pairs {
		got, err := q.readDelta(r, &rs, p[0], true)
		if err != nil || got != p[1] {
			t.Fatalf("%#x -> %#x: read %#x, %v", p[0], p[1], got, err)
		}
	}
	if ws != rs {
		t.Fatalf("states differ: writer %v, reader %v", ws, rs)
	}
}

// TestQuatDeltaRandom round-trips random and tumbling pairs at 9 and 14
// bits a component, without a baseline too.
func TestQuatDeltaRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{9, 14} {
		q, _ := NewQuat(n)
		var w bits.Writer
		ws, rs := NewQuatDeltaState(), NewQuatDeltaState()
		type pair struct {
			b, c uint64
			ok   bool
		}
		var pairs []pair
		world := tumble.NewSpinning(uint64(n), 64)
		for range 50 {
			prev := make([]uint64, world.Len())
			for i := range prev {
				prev[i] = mustPack(t, q, world.Rot(i))
			}
			world.Step()
			for i := range prev {
				pairs = append(pairs, pair{prev[i], mustPack(t, q, world.Rot(i)), true})
			}
			// Random rotations: mostly far apart, so absolute.
			pairs = append(pairs, pair{mustPack(t, q, randomRot(rng)), mustPack(t, q, randomRot(rng)), rng.IntN(4) != 0})
		}
		for _, p := range pairs {
			before := w.Len()
			q.WriteDelta(&w, &ws, p.b, p.ok, p.c)
			if got := w.Len() - before; got > q.DeltaMaxBits() {
				t.Fatalf("n=%d: %d bits, over %d", n, got, q.DeltaMaxBits())
			}
		}
		r := bits.NewReader(w.Bytes())
		for _, p := range pairs {
			got, err := q.readDelta(r, &rs, p.b, p.ok)
			if err != nil || got != p.c {
				t.Fatalf("n=%d: %#x -> %#x: read %#x, %v", n, p.b, p.c, got, err)
			}
		}
	}
}

func mustPack(t testing.TB, q Quat, v [4]float32) uint64 {
	u, err := q.Pack([4]float64{float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func randomRot(rng *rand.Rand) [4]float32 {
	var v [4]float64
	n := 0.0
	for k := range v {
		v[k] = rng.NormFloat64()
		n += v[k] * v[k]
	}
	n = math.Sqrt(n)
	return [4]float32{float32(v[0] / n), float32(v[1] / n), float32(v[2] / n), float32(v[3] / n)}
}

// TestQuatDeltaHostile reads random input against random baselines: no
// panic, and whatever is accepted is written back in the same bits.
func TestQuatDeltaHostile(t *testing.T) {
	q, _ := NewQuat(5)
	rng := rand.New(rand.NewPCG(5, 6))
	packs := validPacks(t, q)
	buf := make([]byte, 8)
	accepted := 0
	for range 200000 {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		base := packs[rng.IntN(len(packs))]
		s := NewQuatDeltaState()
		r := bits.NewReader(buf)
		u, err := q.readDelta(r, &s, base, true)
		if err != nil {
			continue
		}
		if _, err := q.Unpack(u); err != nil {
			continue // the codec's Unpack refuses it
		}
		accepted++
		var w bits.Writer
		ws := NewQuatDeltaState()
		q.WriteDelta(&w, &ws, base, true, u)
		if buf[0]&7 == 0b011 && w.Len() <= r.Pos() {
			continue // an absolute form the writer would write relative: accepted
		}
		if w.Len() != r.Pos() {
			t.Fatalf("base %#x, input %x: read %d bits as %#x, which is written in %d", base, buf, r.Pos(), u, w.Len())
		}
		got := bits.NewReader(w.Bytes())
		for i := 0; i < w.Len(); i++ {
			a, _ := got.ReadBits(1)
			if a != uint64(buf[i/8]>>uint(i%8)&1) {
				t.Fatalf("base %#x, input %x: %#x re-written differently at bit %d", base, buf, u, i)
			}
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d inputs accepted: the test checks too little", accepted)
	}
}

func TestRice(t *testing.T) {
	for width := 1; width <= 12; width++ {
		lim := int64(1)<<uint(width) - 1
		for k := 0; k <= width+1; k++ {
			var w bits.Writer
			for v := -lim; v <= lim; v++ {
				before := w.Len()
				WriteRice(&w, v, k, width)
				if got := w.Len() - before; got != RiceBits(v, k, width) || got > RiceMaxBits(k, width) {
					t.Fatalf("width %d k %d v %d: %d bits, RiceBits %d, max %d", width, k, v, got, RiceBits(v, k, width), RiceMaxBits(k, width))
				}
			}
			r := bits.NewReader(w.Bytes())
			for v := -lim; v <= lim; v++ {
				got, err := ReadRice(r, k, width)
				if err != nil || got != v {
					t.Fatalf("width %d k %d: %d read as %d, %v", width, k, v, got, err)
				}
			}
		}
	}
	// An escape holding a small magnitude, and a truncated code.
	var w bits.Writer
	w.WriteBits(1<<RiceEscape-1, RiceEscape)
	w.WriteBits(3, 8)
	if _, err := ReadRice(bits.NewReader(w.Bytes()), 1, 8); err != ErrMalformed {
		t.Fatalf("escaped 3 with k=1: %v, want ErrMalformed", err)
	}
	if _, err := ReadRice(bits.NewReader([]byte{0xFF}), 0, 8); err != bits.ErrUnexpectedEnd {
		t.Fatalf("truncated escape: %v, want ErrUnexpectedEnd", err)
	}
}

func TestRiceMean(t *testing.T) {
	a := NewRiceMean(0)
	if a.K() != 0 {
		t.Fatalf("K of mean 0 = %d", a.K())
	}
	for range 40 {
		a.Add(100)
	}
	// μ ≈ 100: floor(100·11/16) = 68, 7 bits.
	if a.K() != 7 {
		t.Fatalf("K of mean ~100 = %d, want 7", a.K())
	}
	for range 40 {
		a.Add(1 << 40)
	}
	if a.K() > RiceMaxK {
		t.Fatalf("K = %d over RiceMaxK", a.K())
	}
}

// BenchmarkQuatDeltaBits reports the size of the new quaternion delta on
// the data of the root package's BenchmarkQuatDeltaBits (256 tumbling
// bodies, 400 ticks, each against the tick before), its changed bit
// included, to compare with the codec's:
//
//	go test -run '^$' -bench QuatDeltaBits -benchtime 1x ./fields
func BenchmarkQuatDeltaBits(b *testing.B) {
	b.Run("spinning", func(b *testing.B) { quatDeltaBits(b, tumble.NewSpinning(1, 256)) })
	b.Run("settling", func(b *testing.B) { quatDeltaBits(b, tumble.New(1, 256)) })
}

func quatDeltaBits(b *testing.B, world *tumble.World) {
	q, _ := NewQuat(9)
	const ticks = 400
	prev := make([]uint64, world.Len())
	for i := range prev {
		prev[i] = mustPack(b, q, world.Rot(i))
	}
	var w bits.Writer
	changed, total := 0, 0
	for range ticks {
		world.Step()
		w.Reset(nil)
		s := NewQuatDeltaState() // one packet a tick
		for i := range prev {
			cur := mustPack(b, q, world.Rot(i))
			if cur != prev[i] {
				before := w.Len()
				q.WriteDelta(&w, &s, prev[i], true, cur)
				total += w.Len() - before + 1
				changed++
			}
			prev[i] = cur
		}
	}
	b.ReportMetric(float64(total)/float64(changed), "bits/changed")
}

// FuzzDeltaCodings reads hostile input as a quaternion delta and a windowed
// difference: no panic, and what is accepted is written back into bits
// that read as the same value.
func FuzzDeltaCodings(f *testing.F) {
	f.Add([]byte{0x15, 0x00}, uint16(0))
	f.Add([]byte{0xc3, 0x0b, 0xff, 0xff}, uint16(77))
	f.Add([]byte{0xff, 0x06, 0x00}, uint16(1234))
	q, _ := NewQuat(9)
	win, _ := NewWindow(-2, 2, 0.01)
	f.Fuzz(func(t *testing.T, data []byte, seed uint16) {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		base := randomRot(rng)
		b64 := [4]float64{float64(base[0]), float64(base[1]), float64(base[2]), float64(base[3])}
		r := bits.NewReader(data)
		s := NewQuatDeltaState()
		for i := 0; i < 4; i++ { // several in a row: the state carries
			before := s
			u, err := q.ReadDelta(r, &s, &b64)
			if err != nil {
				return
			}
			if _, err := q.Unpack(u); err != nil {
				return
			}
			var w bits.Writer
			ws := before
			q.WriteDelta(&w, &ws, mustPack(t, q, base), true, u)
			rs := before
			got, err := q.ReadDelta(bits.NewReader(w.Bytes()), &rs, &b64)
			if err != nil || got != u {
				t.Fatalf("%#x re-written does not read back: %#x, %v", u, got, err)
			}
			ws2 := win.NewState()
			d, in, err := win.Read(r, &ws2)
			if err != nil {
				return
			}
			if in && (d < win.Lo() || d > win.Hi()) {
				t.Fatalf("difference %d outside the window", d)
			}
		}
	})
}
