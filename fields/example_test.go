package fields_test

import (
	"fmt"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// A hand-written packet: a position quantized to 1 cm over ±512 m, a health
// value in 0..100, and a signed score delta as a varint.
func Example() {
	pos, _ := fields.NewQuantizer(-512, 512, 0.01)
	health, _ := fields.NewIntRange(0, 100)

	var w bits.Writer
	_ = pos.Write(&w, 12.345)
	_ = health.Write(&w, 87)
	fields.WriteVarint(&w, fields.Zigzag(-3), 7)
	fmt.Println("bits:", w.Len(), "bytes:", len(w.Bytes()))

	r := bits.NewReader(w.Bytes())
	x, _ := pos.Read(r)
	h, _ := health.Read(r)
	d, _ := fields.ReadVarint(r, 7)
	fmt.Printf("x=%.2f health=%d delta=%d\n", x, h, fields.Unzigzag(d))
	// Output:
	// bits: 32 bytes: 4
	// x=12.35 health=87 delta=-3
}

func ExampleQuantizer() {
	q, _ := fields.NewQuantizer(-100, 100, 0.1)
	fmt.Println("steps:", q.Steps(), "bits:", q.Bits())

	i, _ := q.Index(3.14159)
	fmt.Printf("index %d decodes to %.1f\n", i, q.Value(i))

	_, err := q.Index(100.5)
	fmt.Println(err)
	i, _ = q.IndexClamp(100.5)
	fmt.Println("clamped:", q.Value(i))
	// Output:
	// steps: 2000 bits: 11
	// index 1031 decodes to 3.1
	// bitwire: value out of range
	// clamped: 100
}

// The adaptive message of the wire-format document: one "any negative" flag,
// an int64, then a group of two int32 values.
func ExampleWriteBitlenInts() {
	var w bits.Writer
	neg := false
	w.WriteBool(neg)
	_ = fields.WriteBitlenInt(&w, 123456789, fields.BitlenWidth(64), neg)
	_ = fields.WriteBitlenInts(&w, []int64{25, 3}, fields.BitlenWidth(32), neg)
	fmt.Println("bits:", w.Len())

	r := bits.NewReader(w.Bytes())
	flag, _ := r.ReadBool()
	a, _ := fields.ReadBitlenInt(r, 6, flag)
	var pair [2]int64
	_ = fields.ReadBitlenInts(r, pair[:], 5, flag)
	fmt.Println(a, pair)
	// Output:
	// bits: 49
	// 123456789 [25 3]
}

func ExampleQuat() {
	q, _ := fields.NewQuat(fields.DefaultQuatBits)
	// A 60° turn about the vertical axis: (0, sin 30°, 0, cos 30°).
	rot := [4]float64{0, 0.5, 0, 0.8660254037844386}

	var w bits.Writer
	_ = q.Write(&w, rot)
	got, _ := q.Read(bits.NewReader(w.Bytes()))
	fmt.Println("bits:", w.Len())
	// The grid over ±1/√2 is anchored at zero: 0 decodes as exactly 0.
	fmt.Printf("%.3f\n", got)
	// Output:
	// bits: 29
	// [0.000 0.499 0.000 0.867]
}

func ExampleWriteString() {
	var w bits.Writer
	_ = fields.WriteString(&w, "gg", 16) // length in BitsRequired(16) = 5 bits
	fmt.Println("bits:", w.Len())

	s, _ := fields.ReadString(bits.NewReader(w.Bytes()), 16)
	fmt.Println(s)
	fmt.Println(fields.WriteString(&w, "seventeen letters", 16))
	// Output:
	// bits: 21
	// gg
	// bitwire: length over maxlen or allocation over budget
}
