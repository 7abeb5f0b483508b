package bitwire

import (
	"math/rand"
	"runtime"
	"testing"
)

// hostileCorpus returns inputs of up to 1 KiB: random bytes, valid
// encodings, and valid encodings with bytes flipped, cut or extended.
func hostileCorpus(valid [][]byte, count int, seed int64) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	out := make([][]byte, 0, count)
	for len(out) < count {
		var b []byte
		switch k := rng.Intn(4); {
		case k == 0 || len(valid) == 0:
			b = make([]byte, rng.Intn(1025))
			rng.Read(b)
		default:
			v := valid[rng.Intn(len(valid))]
			b = append([]byte(nil), v...)
			for i := rng.Intn(4); i >= 0 && len(b) > 0; i-- {
				b[rng.Intn(len(b))] ^= byte(1 << rng.Intn(8))
			}
			if k == 2 && len(b) > 0 {
				b = b[:rng.Intn(len(b))]
			}
			if k == 3 {
				extra := make([]byte, rng.Intn(16))
				rng.Read(extra)
				b = append(b, extra...)
			}
		}
		if len(b) > 1024 {
			b = b[:1024]
		}
		out = append(out, b)
	}
	return out
}

// allocatedBy returns the bytes allocated while f runs.
func allocatedBy(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestDecodeAllocationBound: decoding any input of up to 1 KiB allocates at
// most 64 bytes per input byte plus 4 KiB, full and delta, for types with
// slices, strings, maps, pointers and entity sets.
func TestDecodeAllocationBound(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads memory statistics around every decode")
	}
	c := MustFor[fuzzScene]()
	base, cur := fuzzScenes()
	if err := c.Quantize(&base); err != nil {
		t.Fatal(err)
	}
	full1, _ := c.Marshal(&base)
	full2, _ := c.Marshal(&cur)
	d1, _ := c.MarshalDelta(&base, &cur)
	d2, _ := c.MarshalDelta(&cur, &base)
	valid := [][]byte{full1, full2, d1, d2}
	worst := 0.0
	for i, in := range hostileCorpus(valid, 3000, 1) {
		limit := uint64(64*len(in) + 4096)
		var out fuzzScene
		n := allocatedBy(func() { _ = c.Unmarshal(in, &out) })
		if n > limit {
			t.Fatalf("input %d (%d bytes): Unmarshal allocated %d bytes, over %d", i, len(in), n, limit)
		}
		var dout fuzzScene
		m := allocatedBy(func() { _ = c.UnmarshalDelta(in, &base, &dout) })
		if m > limit {
			t.Fatalf("input %d (%d bytes): UnmarshalDelta allocated %d bytes, over %d", i, len(in), m, limit)
		}
		if len(in) > 0 {
			worst = max(worst, float64(max(n, m))/float64(len(in)))
		}
	}
	t.Logf("worst: %.1f bytes allocated per input byte", worst)
}

type hostileTarget struct {
	Names []string
	Cubes []Cube
	Tree  *RTTree
}

// BenchmarkHostileInput: ten bytes that claim huge lengths or impossible
// values are rejected quickly and before anything large is allocated.
func BenchmarkHostileInput(b *testing.B) {
	cases := []struct {
		name string
		in   []byte
	}{
		// a length prefix of 31: a slice of 2^31 and more strings
		{"huge-length", []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		// an empty Names, then a Cubes length of 2^31 and more
		{"huge-second-length", []byte{0x00, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		// no names, no cubes, a tree whose first value does not fit int16
		{"value-too-wide", []byte{0x00, 0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
	}
	c := MustFor[hostileTarget]()
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var out hostileTarget
			if c.Unmarshal(tc.in, &out) == nil {
				b.Fatal("hostile input accepted")
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				out = hostileTarget{}
				if c.Unmarshal(tc.in, &out) == nil {
					b.Fatal("hostile input accepted")
				}
			}
		})
	}
}
