package bitwire

import (
	"testing"

	"github.com/stretchr/testify/require"
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
		}
	}
}
