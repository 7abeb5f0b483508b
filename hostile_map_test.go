package bitwire

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

type hmVal struct {
	B   bool
	Pad [93]byte `net:"-"`
}

type hmMap16 struct {
	M map[uint16]hmVal
}

type hmMap32 struct {
	M map[uint32]hmVal
}

// Go's map tables round their slots up to powers of two (and a reused
// map grows by doubling), which the map's charge did not count: 3,585
// entries in 6,661 bytes allocated 885 KB against a bound of 430 KB.
func TestHostileMapAllocationBound(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads memory statistics around every decode")
	}
	worst, worstAt := 0.0, ""
	for _, count := range []int{9, 57, 100, 897, 1025, 3585, 7169, 14337} {
		v := hmMap16{M: map[uint16]hmVal{}}
		v32 := hmMap32{M: map[uint32]hmVal{}}
		for i := range count {
			v.M[uint16(i)] = hmVal{B: i%2 == 0}
			v32.M[uint32(i)*977] = hmVal{B: i%3 == 0}
		}
		for _, tc := range []struct {
			name   string
			in     []byte
			decode func([]byte) error
		}{
			{"uint16 keys, new map", must(Marshal(&v)), func(b []byte) error { var o hmMap16; return Unmarshal(b, &o) }},
			{"uint16 keys, reused empty map", must(Marshal(&v)), func(b []byte) error { o := hmMap16{M: map[uint16]hmVal{}}; return Unmarshal(b, &o) }},
			{"uint32 keys, new map", must(Marshal(&v32)), func(b []byte) error { var o hmMap32; return Unmarshal(b, &o) }},
			{"uint32 keys, reused empty map", must(Marshal(&v32)), func(b []byte) error { o := hmMap32{M: map[uint32]hmVal{}}; return Unmarshal(b, &o) }},
			// every entry new in a delta against an empty map: the new map
			// grows from the baseline's size
			{"uint16 keys, delta", must(MarshalDelta(&hmMap16{}, &v)), func(b []byte) error { var o hmMap16; return UnmarshalDelta(b, &hmMap16{}, &o) }},
			{"uint32 keys, delta", must(MarshalDelta(&hmMap32{}, &v32)), func(b []byte) error { var o hmMap32; return UnmarshalDelta(b, &hmMap32{}, &o) }},
		} {
			limit := uint64(DefaultMaxAllocPerByte*len(tc.in) + AllocBase)
			var err error
			n := minAllocatedBy(func() { err = tc.decode(tc.in) })
			require.LessOrEqual(t, n, limit, "%d entries, %s: %d bytes of input allocated %d bytes (%.2f× the bound), err %v",
				count, tc.name, len(tc.in), n, float64(n)/float64(limit), err)
			if r := float64(n) / float64(limit); r > worst {
				worst, worstAt = r, fmt.Sprintf("%d entries, %s, err %v", count, tc.name, err)
			}
		}
	}
	t.Logf("worst: %.2f× the bound (%s)", worst, worstAt)
}

type hmBig struct {
	M map[uint32]int32
}

// hmBigDelta is a baseline of n entries and a delta that removes its
// smallest key: a few bytes that make the decoder find that key.
func hmBigDelta(tb testing.TB, n int) (*hmBig, []byte) {
	base := &hmBig{M: make(map[uint32]int32, n)}
	for i := range n {
		base.M[uint32(i)*7] = int32(i)
	}
	cur := &hmBig{M: make(map[uint32]int32, n)}
	for k, v := range base.M {
		cur.M[k] = v
	}
	delete(cur.M, 0)
	d, err := MarshalDelta(base, cur)
	if err != nil {
		tb.Fatal(err)
	}
	return base, d
}

// BenchmarkHostileMapDeltaLarge: a 4-byte delta against a map of 65,536
// entries (one removed), which sorted the whole baseline through reflect.
func BenchmarkHostileMapDeltaLarge(b *testing.B) {
	base, d := hmBigDelta(b, 1<<16)
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	var out hmBig
	for range b.N {
		if err := UnmarshalDelta(d, base, &out); err != nil {
			b.Fatal(err)
		}
	}
}

type hmKinds struct {
	I map[int8]uint8
	S map[string]int16
	B map[bool]uint8
	F map[float32]uint8
	U map[uint64]bool
}

// Map deltas that remove, change and add entries of every key kind decode
// to the current map: the decoder names entries by their positions among
// the baseline's sorted keys (sortKeys).
func TestHostileMapDeltaPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 25))
	c := MustFor[hmKinds]()
	random := func() hmKinds {
		v := hmKinds{I: map[int8]uint8{}, S: map[string]int16{}, B: map[bool]uint8{}, F: map[float32]uint8{}, U: map[uint64]bool{}}
		for range rng.IntN(12) {
			v.I[int8(rng.IntN(256)-128)] = uint8(rng.IntN(4))
			v.S[strconv.Itoa(rng.IntN(40))] = int16(rng.IntN(4))
			v.B[rng.IntN(2) == 0] = uint8(rng.IntN(4))
			v.F[float32(rng.IntN(30))-15.5] = uint8(rng.IntN(4))
			v.U[rng.Uint64()>>uint(rng.IntN(64))] = rng.IntN(2) == 0
		}
		return v
	}
	for i := 0; i < 3000; i++ {
		base, cur := random(), random()
		if i%2 == 0 { // mostly the same keys: changes and a few removals
			cur = random()
			for k, v := range base.I {
				if rng.IntN(4) > 0 {
					cur.I[k] = v + uint8(rng.IntN(2))
				}
			}
			for k, v := range base.S {
				if rng.IntN(4) > 0 {
					cur.S[k] = v + int16(rng.IntN(2))
				}
			}
		}
		d, err := c.MarshalDelta(&base, &cur)
		require.NoError(t, err)
		var out hmKinds
		require.NoError(t, c.UnmarshalDelta(d, &base, &out))
		require.True(t, c.Equal(&out, &cur), "delta %x\nbase %v\ncur  %v\nout  %v", d, base, cur, out)
	}
}

type hmStr struct {
	M map[string]uint8
}

// A string map key that is not valid UTF-8 is refused when encoding and
// decoding (ErrInvalidValue): the TypeScript and C# clients hold keys as
// text, where every such key is U+FFFD, so they ordered and collided
// differently and gave other verdicts.
func TestHostileMapKeyUTF8(t *testing.T) {
	_, err := Marshal(&hmStr{M: map[string]uint8{"ok": 1, "\xff": 2}})
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = MarshalDelta(&hmStr{}, &hmStr{M: map[string]uint8{"\xc3": 2}})
	require.ErrorIs(t, err, ErrInvalidValue)
	// written key by key (a struct of one string field codes it as a key)
	c := MustFor[hmStr]()
	type key struct{ K string }
	type val struct{ V uint8 }
	for k, ok := range map[string]bool{"\xc3\xa9": true, "\xc3": false, "\x80a": false, "€": true, "a\xffb": false} {
		var w bits.Writer
		require.NoError(t, fields.WriteLen(&w, 1, 0))
		require.NoError(t, MustFor[key]().Encode(&w, &key{k}))
		require.NoError(t, MustFor[val]().Encode(&w, &val{1}))
		var out hmStr
		err := c.Unmarshal(w.Bytes(), &out)
		if ok {
			require.NoError(t, err, "%q", k)
			require.Equal(t, uint8(1), out.M[k])
		} else {
			require.ErrorIs(t, err, ErrInvalidValue, "%q", k)
		}
	}
}
