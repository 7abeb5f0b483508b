package bench

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The limit subject must be bitwire's World codec, only faster: the same
// bytes, the same decoded values, the same inputs accepted and refused,
// with the same errors. These tests check it on random crates, on every
// quantization index, on every float32 position (by a monotonicity
// argument, see TestLimitQuantizers), on every quaternion code (up to
// an exact sign symmetry) and on damaged packets.

// limUnpack decodes the quaternion code u with the limit's decoder (a
// crate of ID 0 and positions of index 0, then u) and reports whether the
// decoder refuses it.
func limUnpack(l *Limit, u uint64) ([4]float32, bool) {
	var buf [limTailBytes]byte
	binary.LittleEndian.PutUint64(buf[0:], u<<53) // 6 + 17 + 13 + 17 bits before it
	binary.LittleEndian.PutUint64(buf[8:], u>>11)
	var c [1]Crate
	_, _, bad := l.decodeCrates(unsafe.Pointer(&buf), 0, 0, c[:])
	return c[0].Rot, bad
}

// limPack encodes the rotation with the limit's encoder (a crate of ID 0
// at the origin) and returns its code, and false when the encoder refuses.
func limPack(l *Limit, rot [4]float32) (uint64, bool) {
	b, err := l.Append(nil, &World{Crates: []Crate{{Rot: rot}}})
	if err != nil {
		return 0, false
	}
	return uint64(binary.LittleEndian.Uint32(b[12:])) & (1<<29 - 1), true // after 43 + 6 + 47 bits
}

// sameErr reports whether two errors are both nil or say the same.
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

// checkLimitEncode encodes w with both codecs and, when they agree that it
// encodes, decodes the bytes with both and compares the values.
func checkLimitEncode(t *testing.T, l *Limit, c *bitwire.Codec[World], w *World) bool {
	t.Helper()
	want, werr := c.Append(nil, w)
	got, gerr := l.Append(nil, w)
	if !sameErr(werr, gerr) {
		t.Errorf("encode: limit error %v, bitwire %v", gerr, werr)
		return false
	}
	if werr != nil {
		return true
	}
	if !slices.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("encode: limit wrote %d bytes, bitwire %d, first difference at byte %d", len(got), len(want), i)
		return false
	}
	return checkLimitDecode(t, l, c, want)
}

// checkLimitDecode decodes data with both codecs, into fresh values and
// into values holding other crates, and compares errors and values.
func checkLimitDecode(t *testing.T, l *Limit, c *bitwire.Codec[World], data []byte) bool {
	t.Helper()
	var want, got World
	werr := c.Unmarshal(data, &want)
	gerr := l.Unmarshal(data, &got)
	if !sameErr(werr, gerr) {
		t.Errorf("decode %x: limit error %v, bitwire %v", data, gerr, werr)
		return false
	}
	if werr != nil {
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decode %x: limit decoded %+v, bitwire %+v", data, got, want)
		return false
	}
	// Into a value that holds more crates than the packet: reused, cut.
	reuse := World{Crates: make([]Crate, len(want.Crates)+3)}
	if err := l.Unmarshal(data, &reuse); err != nil || !reflect.DeepEqual(reuse, want) {
		t.Errorf("decode %x into a used value: %v, %+v", data, err, reuse)
		return false
	}
	return true
}

// limitRand makes crates from distributions that reach the edges: ids of
// every length, positions on and next to rounding boundaries and range
// ends, rotations with ties, near ties, zeros and norms off 1.
type limitRand struct{ r *rand.Rand }

func (g limitRand) id() uint32 {
	switch g.r.IntN(4) {
	case 0:
		return uint32(g.r.IntN(4))
	case 1:
		return uint32(1) << g.r.IntN(32)
	case 2:
		return g.r.Uint32() >> g.r.IntN(32)
	}
	return g.r.Uint32()
}

// pos returns a float32 in [lo, hi] on the grid of step 0.01.
func (g limitRand) pos(lo, hi float64) float32 {
	var v float32
	switch g.r.IntN(6) {
	case 0: // next to a rounding boundary (k + 0.5)·0.01
		k := math.Floor(lo*100) + float64(g.r.IntN(int((hi-lo)*100)))
		v = float32((k + 0.5) * 0.01)
		for range g.r.IntN(3) {
			v = math.Nextafter32(v, float32(math.Inf(2*g.r.IntN(2)-1)))
		}
	case 1: // a range end or zero
		v = float32([]float64{lo, hi, 0}[g.r.IntN(3)])
		if g.r.IntN(2) == 0 {
			v = -v
		}
	case 2: // tiny
		v = float32(g.r.NormFloat64() * math.Pow(2, -float64(g.r.IntN(150))))
	default:
		v = uniform(g.r, lo, hi)
	}
	return min(max(v, float32(lo)), float32(hi))
}

func (g limitRand) quat() [4]float32 {
	q := randQuat(g.r)
	switch g.r.IntN(8) {
	case 0: // two largest equal in magnitude
		i, j := g.r.IntN(4), g.r.IntN(4)
		q[i], q[j] = 0.6, float32(0.6*float64(2*g.r.IntN(2)-1))
		k := 6 - i - j
		if i == j {
			k = (i + 1) % 4
		}
		q[k%4], q[(k+1)%4] = 0.28, -0.28
		q = normQuat(q)
	case 1: // nearly tied: the second largest within a few grid steps
		i := g.r.IntN(4)
		j := (i + 1 + g.r.IntN(3)) % 4
		q[j] = q[i] * float32(1-g.r.Float64()*0.01)
		q = normQuat(q)
	case 2: // axis-aligned, or the four-way tie
		if g.r.IntN(2) == 0 {
			q = [4]float32{}
			q[g.r.IntN(4)] = float32(2*g.r.IntN(2) - 1)
		} else {
			q = [4]float32{0.5, -0.5, 0.5, 0.5}
		}
	case 3: // norm off 1 within the tolerance
		f := float32(1 + (g.r.Float64()-0.5)*0.998e-3) // the square within 1e-3
		for i := range q {
			q[i] *= f
		}
	case 4: // a component on a grid rounding boundary
		i := g.r.IntN(4)
		step := math.Sqrt2 / 510
		q[i] = float32((float64(g.r.IntN(400)-200) + 0.5) * step)
		q = normQuat(q)
	}
	return q
}

func normQuat(q [4]float32) [4]float32 {
	var n float64
	for _, c := range q {
		n += float64(c) * float64(c)
	}
	n = math.Sqrt(n)
	for i := range q {
		q[i] = float32(float64(q[i]) / n)
	}
	return q
}

func (g limitRand) crate() Crate {
	return Crate{
		ID:     g.id(),
		Pos:    CratePos{X: g.pos(-512, 512), Y: g.pos(0, 64), Z: g.pos(-512, 512)},
		Rot:    g.quat(),
		Asleep: g.r.IntN(2) == 0,
	}
}

// TestLimitWorkload checks the benchmark's own world.
func TestLimitWorkload(t *testing.T) {
	_, w := MakeWorlds()
	checkLimitEncode(t, NewLimit(), bitwire.MustFor[World](), &w)
}

// TestLimitRandomCrates checks 1,000 random worlds of every size up to
// 1024 (and the empty one, and a few tiny ones).
func TestLimitRandomCrates(t *testing.T) {
	l, c := NewLimit(), bitwire.MustFor[World]()
	g := limitRand{rand.New(rand.NewPCG(1, 2))}
	crates := 0
	for i := range 1000 {
		n := g.r.IntN(1025)
		if i == 0 {
			n = 0
		} else if g.r.IntN(10) == 0 {
			n = g.r.IntN(4)
		}
		w := World{Tick: g.r.Uint32(), Crates: make([]Crate, n)}
		for i := range w.Crates {
			w.Crates[i] = g.crate()
		}
		crates += n
		if !checkLimitEncode(t, l, c, &w) {
			return
		}
	}
	t.Logf("%d crates in 1000 worlds; %d rotations left to fields", crates, l.slow)
}

// TestLimitEncodeErrors checks that whatever bitwire refuses to encode the
// limit refuses with the same error: values out of range, NaN, infinities,
// quaternions too far from unit length, too many crates.
func TestLimitEncodeErrors(t *testing.T) {
	l, c := NewLimit(), bitwire.MustFor[World]()
	g := limitRand{rand.New(rand.NewPCG(3, 4))}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	spoil := []func(*Crate){
		func(c *Crate) { c.Pos.X = math.Nextafter32(512, 1000) },
		func(c *Crate) { c.Pos.X = -math.Nextafter32(512, 1000) },
		func(c *Crate) { c.Pos.Y = -math.SmallestNonzeroFloat32 },
		func(c *Crate) { c.Pos.Y = math.Nextafter32(64, 100) },
		func(c *Crate) { c.Pos.Z = 600 },
		func(c *Crate) { c.Pos.X = nan },
		func(c *Crate) { c.Pos.Y = inf },
		func(c *Crate) { c.Pos.Z = -inf },
		func(c *Crate) { c.Rot[g.r.IntN(4)] = nan },
		func(c *Crate) { c.Rot[g.r.IntN(4)] = inf },
		func(c *Crate) { c.Rot = [4]float32{} },
		func(c *Crate) {
			for i := range c.Rot {
				c.Rot[i] *= 1.0011
			}
		},
		func(c *Crate) {
			for i := range c.Rot {
				c.Rot[i] *= 0.9989
			}
		},
	}
	for range 3000 {
		w := World{Crates: make([]Crate, 1+g.r.IntN(20))}
		for i := range w.Crates {
			w.Crates[i] = g.crate()
		}
		spoil[g.r.IntN(len(spoil))](&w.Crates[g.r.IntN(len(w.Crates))])
		if !checkLimitEncode(t, l, c, &w) {
			return
		}
	}
	w := World{Crates: make([]Crate, limMaxLen+1)}
	for i := range w.Crates {
		w.Crates[i].Rot[3] = 1
	}
	if _, err := l.Append(nil, &w); err == nil || !checkLimitEncode(t, l, c, &w) {
		t.Errorf("%d crates: %v", len(w.Crates), err)
	}
}

// TestLimitQuantizers proves the multiply-only index of X, Z and Y exact
// for every float32 in range, and checks the value of every index.
//
// Both the limit's index and the definition, floor(v/step + 0.5) - kmin,
// are non-decreasing in v (every step of each rounds monotonically). So if
// they agree on every float32 near each rounding boundary, where the
// definition moves from j to j+1, and move there from the same j to the
// same j+1, they agree on every float32 between two boundaries too.
func TestLimitQuantizers(t *testing.T) {
	cases := []struct {
		name     string
		lo, hi   float64
		step     float64
		kmin     float64
		steps    uint64
		index    func(float64) uint64
		value    func(uint64) float32
		min, max float64 // the codec's quantizer bounds
	}{
		{"X, Z", -512, 512, 0.01, -51200, limXSteps, limIndexXZ, limValueXZ, -512, 512},
		{"Y", 0, 64, limYStep, 0, limYSteps, limIndexY, limValueY, 0, 64},
	}
	for _, tc := range cases {
		q := must(fields.NewQuantizer(tc.min, tc.max, 0.01))
		if q.Steps() != tc.steps || q.Step() != tc.step {
			t.Fatalf("%s: fields has %d steps of %v, the limit %d of %v", tc.name, q.Steps(), q.Step(), tc.steps, tc.step)
		}
		def := func(v float64) uint64 { // docs/wire-format.md, capped at steps
			return min(uint64(math.Floor(v/tc.step+0.5)-tc.kmin), tc.steps)
		}
		check := func(v float32) uint64 {
			want := def(float64(v))
			got := tc.index(float64(v))
			qi, err := q.Index(float64(v))
			if got != want || qi != want || err != nil {
				t.Fatalf("%s: index of %v (%08x): limit %d, definition %d, fields %d (%v)", tc.name, v, math.Float32bits(v), got, want, qi, err)
			}
			return want
		}
		// Every float32 in range lies in a window below or between two.
		const ulps = 40
		low, high := float32(tc.lo), float32(tc.hi)
		prev := check(low)
		if prev != 0 {
			t.Fatalf("%s: index of min is %d", tc.name, prev)
		}
		checked := 0
		for j := uint64(0); j < tc.steps; j++ {
			b := float32((tc.kmin + float64(j) + 0.5) * tc.step) // near where j becomes j+1
			v := b
			for range ulps {
				v = math.Nextafter32(v, low)
			}
			if check(v) != j {
				t.Fatalf("%s: window of boundary %d starts at index %d", tc.name, j, check(v))
			}
			for range 2 * ulps {
				v = math.Nextafter32(v, high)
				i := check(v)
				if i < j || i > j+1 {
					t.Fatalf("%s: %v has index %d inside the window of boundary %d", tc.name, v, i, j)
				}
				checked++
			}
			if check(v) != j+1 {
				t.Fatalf("%s: window of boundary %d ends at index %d", tc.name, j, check(v))
			}
		}
		if check(high) != tc.steps {
			t.Fatalf("%s: index of max is not %d", tc.name, tc.steps)
		}
		// Every index decodes to fields' value.
		for i := uint64(0); i <= tc.steps; i++ {
			if got, want := tc.value(i), float32(q.Value(i)); got != want {
				t.Fatalf("%s: value of %d: limit %v, fields %v", tc.name, i, got, want)
			}
		}
		t.Logf("%s: %d float32 around %d boundaries, %d values", tc.name, checked, tc.steps, tc.steps+1)
	}
}

// limitMessage is a world of one crate with the given codes, written bit
// by bit as docs/wire-format.md says.
func limitMessage(id uint32, x, y, z, rot uint64, asleep bool) []byte {
	var w bits.Writer
	w.WriteBits(77, 32)
	w.WriteBits(1, limLenBits)
	fields.WriteBitlen(&w, uint64(id), 5)
	w.WriteBits(x, 17)
	w.WriteBits(y, 13)
	w.WriteBits(z, 17)
	w.WriteBits(rot, 29)
	w.WriteBool(asleep)
	return w.Bytes()
}

// TestLimitEveryPositionCode decodes every 17-bit X and Z code and every
// 13-bit Y code, those above the grid included, with both codecs.
func TestLimitEveryPositionCode(t *testing.T) {
	l, c := NewLimit(), bitwire.MustFor[World]()
	id := uint64(limQHalf)
	ident := 3 | id<<2 | id<<11 | id<<20 // the identity rotation
	for i := range uint64(1 << 17) {
		if !checkLimitDecode(t, l, c, limitMessage(5, i, 100, 51200, ident, false)) ||
			!checkLimitDecode(t, l, c, limitMessage(6, 51200, 100, i, ident, true)) {
			return
		}
	}
	for i := range uint64(1 << 13) {
		if !checkLimitDecode(t, l, c, limitMessage(1<<31, 3, i, 102400, ident, false)) {
			return
		}
	}
}

// TestLimitEveryQuatCode compares the limit's quaternion decoder with
// fields.Quat.Unpack on every code whose three indices are at most 255 (the
// index of 0), all 256³ of them, with x dropped, and on the codes with an
// index of 511. That covers every code: index 510-i decodes to exactly the
// negation of index i (checked here), and both decoders judge a code by the
// squares and magnitudes of its components alone, so negating a component
// keeps its verdict and negates its value; and the dropped component only
// says where the values go, which the other three are checked for on every
// pair of the first two indices.
func TestLimitEveryQuatCode(t *testing.T) {
	l := NewLimit()
	q := must(fields.NewQuat(limQBits))
	for i := range limQSteps + 1 {
		if l.qd[limQSteps-i].val != -l.qd[i].val {
			t.Fatalf("grid not symmetric at %d", i)
		}
	}
	check := func(u uint64) bool {
		got, bad := limUnpack(l, u)
		want, err := q.Unpack(u)
		if (err != nil) != bad {
			t.Errorf("code %#x: limit rejects: %v, fields: %v", u, bad, err)
			return false
		}
		if err == nil && got != [4]float32{float32(want[0]), float32(want[1]), float32(want[2]), float32(want[3])} {
			t.Errorf("code %#x: limit %v, fields %v", u, got, want)
			return false
		}
		return true
	}
	valid := 0
	for a := range uint64(256) {
		for b := range uint64(256) {
			for c := range uint64(256) {
				u := a<<2 | b<<11 | c<<20
				if !check(u) {
					return
				}
				if _, bad := limUnpack(l, u); !bad {
					valid++
				}
			}
			for m := range uint64(4) {
				if !check(m | a<<2 | b<<11 | (a*b)%256<<20) {
					return
				}
			}
		}
	}
	for m := range uint64(4) {
		for i := range uint64(512) {
			for _, u := range []uint64{m | 511<<2 | i<<11 | i<<20, m | i<<2 | 511<<11 | 255<<20, m | 255<<2 | i<<11 | 511<<20} {
				if !check(u) {
					return
				}
			}
		}
	}
	t.Logf("%d of 256³ codes valid", valid)
}

// TestLimitQuatReencodes encodes the decoded value of valid codes (every
// pair of the first two indices, with a random third and dropped
// component) with the limit's encoder and fields', and of a million random
// rotations: the same code, and for decoded values the code they came from.
func TestLimitQuatReencodes(t *testing.T) {
	l := NewLimit()
	q := must(fields.NewQuat(limQBits))
	r := rand.New(rand.NewPCG(5, 6))
	g := limitRand{r}
	fields := func(rot [4]float32) (uint64, error) {
		return q.Pack([4]float64{float64(rot[0]), float64(rot[1]), float64(rot[2]), float64(rot[3])})
	}
	for a := range uint64(limQSteps + 1) {
		for b := range uint64(limQSteps + 1) {
			u := r.Uint64N(4) | a<<2 | b<<11 | r.Uint64N(limQSteps+1)<<20
			rot, bad := limUnpack(l, u)
			if bad {
				continue
			}
			got, ok := limPack(l, rot)
			want, err := fields(rot)
			if !ok || err != nil || got != want || got != u {
				t.Fatalf("code %#x decodes to %v: limit %#x (%v), fields %#x (%v)", u, rot, got, ok, want, err)
			}
		}
	}
	t.Logf("re-encoding decoded codes: %d left to fields", l.slow)
	l.slow = 0
	for range 1_000_000 {
		rot := g.quat()
		got, ok := limPack(l, rot)
		want, err := fields(rot)
		if ok != (err == nil) || got != want {
			t.Fatalf("%v: limit %#x (%v), fields %#x (%v)", rot, got, ok, want, err)
		}
	}
	t.Logf("random rotations: %d of a million left to fields", l.slow)
}

// TestLimitDamagedPackets decodes truncated, extended and bit-flipped
// packets and random bytes with both codecs.
func TestLimitDamagedPackets(t *testing.T) {
	l, c := NewLimit(), bitwire.MustFor[World]()
	g := limitRand{rand.New(rand.NewPCG(7, 8))}
	rejected := 0
	for range 4000 {
		w := World{Tick: g.r.Uint32(), Crates: make([]Crate, g.r.IntN(40))}
		for i := range w.Crates {
			w.Crates[i] = g.crate()
		}
		data, err := c.Append(nil, &w)
		if err != nil {
			continue // a rotation too far from unit length
		}
		var bad []byte
		switch g.r.IntN(5) {
		case 0:
			bad = data[:g.r.IntN(len(data))]
		case 1:
			bad = append(slices.Clone(data), make([]byte, 1+g.r.IntN(3))...)
		case 2:
			bad = slices.Clone(data)
			bad[len(bad)-1] |= 0x80 // padding, or the last crate
		case 3:
			bad = slices.Clone(data)
			for range 1 + g.r.IntN(3) {
				i := g.r.IntN(len(bad) * 8)
				bad[i/8] ^= 1 << (i % 8)
			}
		default:
			bad = make([]byte, g.r.IntN(200))
			for i := range bad {
				bad[i] = byte(g.r.Uint32())
			}
		}
		var out World
		if c.Unmarshal(bad, &out) != nil {
			rejected++
		}
		if !checkLimitDecode(t, l, c, bad) {
			return
		}
	}
	t.Logf("%d of 4000 damaged packets rejected", rejected)
	// Every error of a decoder is one of bitwire's sentinels.
	var out World
	if err := l.Unmarshal([]byte{1, 2, 3}, &out); !errors.Is(err, bits.ErrUnexpectedEnd) {
		t.Errorf("3 bytes: %v", err)
	}
}

// TestLimitSameLayout checks the benchmark subject against bitwire-codec.
func TestLimitSameLayout(t *testing.T) {
	for _, w := range Workloads() {
		if w.Name != WWorld {
			continue
		}
		enc := map[string][]byte{}
		for _, s := range w.Subjects {
			if s.Name == "bitwire-codec" || s.Name == "limit" {
				b, err := s.Encode()
				if err != nil {
					t.Fatal(err)
				}
				enc[s.Name] = slices.Clone(b)
			}
		}
		if len(enc) != 2 || !slices.Equal(enc["limit"], enc["bitwire-codec"]) {
			t.Errorf("limit and bitwire-codec write different bytes (or one is missing)")
		}
	}
}

// limFull says whether the exhaustive tests run: every quaternion code and
// every float32 position (minutes, not seconds).
func limFull(t *testing.T) {
	if os.Getenv("BITWIRE_LIMIT_FULL") == "" {
		t.Skip("set BITWIRE_LIMIT_FULL=1 to check every code and every float32 (TestLimitEveryQuatCode and TestLimitQuantizers check samples that cover them by symmetry and monotonicity)")
	}
}

// TestLimitAllQuatCodes decodes every one of the 2^29 quaternion codes with
// the limit's decoder and with fields.Quat.Unpack, and re-encodes every
// valid one with the limit's encoder and fields.Quat.Pack: the same
// verdict, the same values, the same code.
func TestLimitAllQuatCodes(t *testing.T) {
	limFull(t)
	var valid, slow atomic.Int64
	var wg sync.WaitGroup
	const parts = 64
	work := make(chan uint64, parts)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := NewLimit()
			q := must(fields.NewQuat(limQBits))
			buf := make([]byte, 64)
			crate := make([]Crate, 1)
			for part := range work {
				for u := part << 23; u < (part+1)<<23; u++ {
					got, bad := limUnpack(l, u)
					want, err := q.Unpack(u)
					if (err != nil) != bad {
						t.Errorf("code %#x: limit rejects: %v, fields: %v", u, bad, err)
						return
					}
					if err != nil {
						continue
					}
					if got != [4]float32{float32(want[0]), float32(want[1]), float32(want[2]), float32(want[3])} {
						t.Errorf("code %#x: limit %v, fields %v", u, got, want)
						return
					}
					valid.Add(1)
					// Re-encode: a crate of ID 0 at the origin, whose code
					// starts at bit 43 + 6 + 47.
					crate[0] = Crate{Rot: got}
					clear(buf)
					var code uint64
					if bp, stop := l.encodeRun(unsafe.Pointer(&buf[0]), limHeadBits, crate); stop == 0 {
						slow.Add(1)
						var ok bool
						if code, ok = l.packSlow(&crate[0].Rot); !ok {
							t.Errorf("code %#x: the limit refuses its own decoding %v", u, got)
							return
						}
					} else if bp != limHeadBits+limCrateMin {
						t.Errorf("code %#x: a crate of %d bits", u, bp-limHeadBits)
						return
					} else {
						code = uint64(binary.LittleEndian.Uint32(buf[12:])) & (1<<29 - 1)
					}
					fcode, err := q.Pack([4]float64{float64(got[0]), float64(got[1]), float64(got[2]), float64(got[3])})
					if err != nil || code != fcode || code != u {
						t.Errorf("code %#x decodes to %v: limit %#x, fields %#x (%v)", u, got, code, fcode, err)
						return
					}
				}
			}
		}()
	}
	for part := range uint64(parts) {
		work <- part
	}
	close(work)
	wg.Wait()
	t.Logf("%d of 2^29 codes valid, %d of them re-encoded by the careful path", valid.Load(), slow.Load())
}

// TestLimitAllPositions compares the limit's index of every float32 in
// range, X and Z in [-512, 512] and Y in [0, 64], with fields' quantizer.
func TestLimitAllPositions(t *testing.T) {
	limFull(t)
	cases := []struct {
		name   string
		lo, hi float32
		index  func(float64) uint64
	}{
		{"X, Z", -512, 512, limIndexXZ},
		{"Y", 0, 64, limIndexY},
	}
	for _, tc := range cases {
		q := must(fields.NewQuantizer(float64(tc.lo), float64(tc.hi), 0.01))
		// Both signs' bit patterns from 0 up to the range's end.
		var wg sync.WaitGroup
		var checked atomic.Int64
		for _, sign := range []uint32{0, 1 << 31} {
			if sign != 0 && tc.lo == 0 {
				continue // -0 alone, below
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := int64(0)
				for b := uint32(0); b <= math.Float32bits(tc.hi); b++ {
					v := float64(math.Float32frombits(b | sign))
					want, err := q.Index(v)
					if got := tc.index(v); err != nil || got != want {
						t.Errorf("%s: index of %v: limit %d, fields %d (%v)", tc.name, v, got, want, err)
						return
					}
					n++
				}
				checked.Add(n)
			}()
		}
		wg.Wait()
		if want, err := q.Index(math.Copysign(0, -1)); err != nil || tc.index(math.Copysign(0, -1)) != want {
			t.Errorf("%s: index of -0: limit %d, fields %d (%v)", tc.name, tc.index(math.Copysign(0, -1)), want, err)
		}
		t.Logf("%s: %d float32", tc.name, checked.Load())
	}
}
