package gen_test

import (
	"encoding/hex"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// cfWide has ranges wider than a flat run (57 to 64 bits) after other
// leaves, in a struct of fixed-width leaves: the flat full-message path
// once lost their top bit in Go, while the clients decoded them right.
type cfWide struct {
	A bool
	B int64  `net:"range,min=-9223372036854775808,max=9223372036854775807"`
	C int64  `net:"range,min=-4611686018427387904,max=4611686018427387903"`
	D uint64 `net:"range,min=0,max=18446744073709551615"`
	E int64  `net:"range,min=0,max=144115188075855871"`
	F bool
}

func randWide(r *rand.Rand) cfWide {
	v := cfWide{A: r.Intn(2) == 0, B: int64(r.Uint64()), C: r.Int63n(1<<62) - r.Int63n(1<<62),
		D: r.Uint64(), E: r.Int63n(1 << 57), F: r.Intn(2) == 0}
	switch r.Intn(4) {
	case 0:
		v.B, v.C, v.D, v.E = math.MaxInt64, 1<<62-1, math.MaxUint64, 1<<57-1
	case 1:
		v.B, v.C, v.D, v.E = math.MinInt64, -1<<62, 0, 0
	}
	return v
}

type cfEmpty struct{}

// cfZero holds elements that take no bits: a few bytes may ask for
// billions of them, which Go, TypeScript and C# charge one byte each to
// the allocation budget (64 bytes an input byte plus 4096).
type cfZero struct {
	S []cfEmpty `net:"maxlen=2147483647"`
	N [][]cfEmpty
	A [][0]int32 `net:"maxlen=65535"`
}

// zeroCases are cfZero messages written length by length: lengths around
// what the budget allows, the 4-byte bomb and nested ones, each with Go's
// value or error under the default budget.
func zeroCases(t *testing.T, r *rand.Rand) []cfCase {
	c := bitwire.MustFor[cfZero]()
	s := c.Schema()
	var cs []cfCase
	add := func(b []byte) {
		var v cfZero
		cc := cfCase{Kind: "damaged", Msg: "Zero", Full: hex.EncodeToString(b)}
		if err := c.Unmarshal(b, &v); err != nil {
			cc.Err, cc.ErrMsg = sentinel(err), err.Error()
		} else {
			cc.Want = canonOf(t, s, &v)
		}
		cs = append(cs, cc)
	}
	add([]byte{0xff, 0xff, 0xff, 0x7f})       // S: 2^31-1 elements, then cut off
	add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0}) // and whole
	for i := 0; i < 300; i++ {
		w := bits.NewWriter(nil)
		lens := []int{r.Intn(8000), r.Intn(4) * r.Intn(1<<20)}
		if i%3 == 0 {
			lens[0] = 3700 + r.Intn(300) // near the edge of the budget of a short input
		}
		w.WriteBits(uint64(lens[0]), 31)
		nOuter := r.Intn(40)
		var inner []int
		for j := 0; j < nOuter; j++ {
			inner = append(inner, r.Intn(1<<20+1)*r.Intn(2)+r.Intn(300))
		}
		if err := fields.WriteLen(w, nOuter, 0); err != nil {
			t.Fatal(err)
		}
		for _, l := range inner {
			if err := fields.WriteLen(w, l, 0); err != nil {
				t.Fatal(err)
			}
		}
		w.WriteBits(uint64(r.Intn(1<<16)), 16)
		add(append([]byte(nil), w.Bytes()...))
	}
	return cs
}

// utf8KeyCases are cfMaps messages whose string keys are written byte by
// byte, some not valid UTF-8 (lone continuation bytes, a cut sequence,
// 0xff), in and out of order: Go refuses those with ErrInvalidValue, and
// so must the clients (they hold keys as text, where every bad key would
// be U+FFFD).
func utf8KeyCases(t *testing.T, r *rand.Rand) []cfCase {
	c := bitwire.MustFor[cfMaps]().WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
	s := c.Schema()
	pieces := []string{"a", "b", "\x80", "\xff", "\xc3", "\xc3\xa9", "\xe2\x82", "\xe2\x82\xac", "z"}
	var cs []cfCase
	for i := 0; i < 200; i++ {
		w := bits.NewWriter(nil)
		writeMap[cfKeyU8, cfValI8](t, w, 3, nil, nil)
		n := 1 + r.Intn(3)
		ks := make([]cfKeyS, n)
		for j := range ks {
			for range 1 + r.Intn(3) {
				ks[j].K += pieces[r.Intn(len(pieces))]
			}
		}
		sort.Slice(ks, func(a, b int) bool { return ks[a].K < ks[b].K })
		if r.Intn(4) == 0 && n > 1 {
			ks[0], ks[1] = ks[1], ks[0]
		}
		writeMap(t, w, 3, ks, make([]cfKeyB, n))
		writeMap[cfKeyB, cfValU16](t, w, 2, nil, nil)
		writeMap[cfKeyI16, cfValU8](t, w, 3, nil, nil)
		b := append([]byte(nil), w.Bytes()...)
		var v cfMaps
		cc := cfCase{Kind: "damaged", Msg: "Maps", Full: hex.EncodeToString(b)}
		if err := c.Unmarshal(b, &v); err != nil {
			cc.Err, cc.ErrMsg = sentinel(err), err.Error()
		} else {
			cc.Want = canonOf(t, s, &v)
		}
		cs = append(cs, cc)
	}
	return cs
}
