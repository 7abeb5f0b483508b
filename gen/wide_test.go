package gen_test

import (
	"math"
	"math/rand"
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
