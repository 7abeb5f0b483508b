package bitwire

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A leaf wider than a flat run (a full-range int64 range: 64 bits) after
// another leaf, on the flat full-message path: decWords' 8-byte load at a
// bit offset lost its top bit, and Quantize agreed with the wrong value.
func TestHostileWideRangeAfterLeaf(t *testing.T) {
	type S struct {
		A bool
		B int64 `net:"range,min=-9223372036854775808,max=9223372036854775807"`
	}
	b, err := Marshal(&S{B: 42})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b, []byte{0x54, 0, 0, 0, 0, 0, 0, 0, 0x01}; string(got) != string(want) {
		t.Fatalf("Marshal = % x, want % x", got, want)
	}
	var out S
	if err := Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.B != 42 {
		t.Fatalf("Unmarshal: B = %d, want 42", out.B)
	}

	// 57 to 64 bits, at every bit offset from 0 to 7, with a leaf after.
	type W struct {
		A [7]bool
		B int64 `net:"range,min=-9223372036854775808,max=9223372036854775807"`
		C int64 `net:"range,min=-4611686018427387904,max=4611686018427387903"` // 63 bits
		D int64 `net:"range,min=-72057594037927936,max=72057594037927935"`     // 58 bits
		E int64 `net:"range,min=0,max=144115188075855871"`                     // 57 bits
		F bool
	}
	c := MustFor[W]()
	rng := rand.New(rand.NewPCG(25, 1))
	for i := 0; i < 2000; i++ {
		in := W{B: int64(rng.Uint64()), C: rng.Int64N(1<<62) - rng.Int64N(1<<62),
			D: rng.Int64N(1<<56) - rng.Int64N(1<<56), E: rng.Int64N(1 << 57), F: rng.IntN(2) == 1}
		for j := range in.A {
			in.A[j] = rng.IntN(2) == 1
		}
		switch i {
		case 0:
			in.B, in.C, in.D, in.E = math.MaxInt64, 1<<62-1, 1<<56-1, 1<<57-1
		case 1:
			in.B, in.C, in.D = math.MinInt64, -1<<62, -1<<56
		}
		b, err := c.Marshal(&in)
		if err != nil {
			t.Fatal(err)
		}
		var out W
		if err := c.Unmarshal(b, &out); err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		if out != in {
			t.Fatalf("round trip\n got %+v\nwant %+v", out, in)
		}
		q := in
		if err := c.Quantize(&q); err != nil || q != in {
			t.Fatalf("Quantize = %+v, %v; want %+v", q, err, in)
		}
		// many of them in one packet: encWords/decWords over a slice
		many := []W{in, in, in, in}
		type M struct{ L []W }
		mb, err := Marshal(&M{many})
		if err != nil {
			t.Fatal(err)
		}
		var mo M
		if err := Unmarshal(mb, &mo); err != nil || len(mo.L) != 4 || mo.L[3] != in {
			t.Fatalf("slice round trip: %v %+v", err, mo.L)
		}
	}
}
