//go:build go1.24

package entropy

import (
	mbits "math/bits"
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The cost of decoding with a table against today's fixed-width reads, on
// 1024 values of a 13-bit field of which 60% are one key (a crate resting
// on the ground) and the rest uniform: BenchmarkDecodeFixed reads them as
// today, BenchmarkDecodeTable through a prefix code over 16 frequent keys
// and an escape (a peek, a table lookup, a skip, and the plain bits after
// an escape), BenchmarkDecodeRice with fields.ReadRice, the delta coder's
// read. Instructions per value, counted by cachegrind at two iteration
// counts (docs/decisions.md, "Full messages and the entropy stage").

const (
	benchN     = 1024
	benchWidth = 13
	tableBits  = 12 // the longest code, and the table's index width
)

type tableEntry struct {
	sym uint16 // index into keys; len(keys) is the escape
	n   uint8
}

type prefixCode struct {
	keys  []uint64
	index map[uint64]int
	code  []uint64 // reversed (first bit lowest), by symbol
	lens  []int
	table []tableEntry
}

// newPrefixCode builds the canonical code with lengths lens (the last
// symbol is the escape) and its decoding table.
func newPrefixCode(keys []uint64, lens []int) *prefixCode {
	pc := &prefixCode{keys: keys, index: map[uint64]int{}, code: make([]uint64, len(lens)), lens: lens, table: make([]tableEntry, 1<<tableBits)}
	for i, k := range keys {
		pc.index[k] = i
	}
	// Canonical: by length, then symbol.
	code, prevLen := uint64(0), 0
	for l := 1; l <= tableBits; l++ {
		for s, n := range lens {
			if n != l {
				continue
			}
			code <<= uint(l - prevLen)
			prevLen = l
			rev := mbits.Reverse64(code) >> uint(64-l)
			pc.code[s] = rev
			for j := uint64(0); j < 1<<uint(tableBits-l); j++ {
				pc.table[rev|j<<uint(l)] = tableEntry{sym: uint16(s), n: uint8(l)}
			}
			code++
		}
	}
	return pc
}

func (pc *prefixCode) write(w *bits.Writer, v uint64) {
	if s, ok := pc.index[v]; ok {
		w.WriteBits(pc.code[s], pc.lens[s])
		return
	}
	esc := len(pc.keys)
	w.WriteBits(pc.code[esc], pc.lens[esc])
	w.WriteBits(v, benchWidth)
}

func (pc *prefixCode) read(r *bits.Reader) (uint64, error) {
	e := pc.table[r.Peek(tableBits)]
	if err := r.Skip(int(e.n)); err != nil {
		return 0, err
	}
	if int(e.sym) < len(pc.keys) {
		return pc.keys[e.sym], nil
	}
	return r.ReadBits(benchWidth)
}

func benchValues() []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]uint64, benchN)
	for i := range v {
		if r.IntN(10) < 6 {
			v[i] = 250
		} else {
			v[i] = r.Uint64N(1 << benchWidth)
		}
	}
	return v
}

func benchCode(vs []uint64) *prefixCode {
	count := map[uint64]int{}
	for _, v := range vs {
		count[v]++
	}
	keys := []uint64{250}
	for k := uint64(0); len(keys) < 16; k++ {
		keys = append(keys, k)
	}
	w := make([]int, len(keys)+1)
	for i, k := range keys {
		w[i] = count[k] + 1
	}
	w[len(keys)] = benchN
	return newPrefixCode(keys, Huffman(w))
}

func TestPrefixCodeRoundTrip(t *testing.T) {
	vs := benchValues()
	pc := benchCode(vs)
	var w bits.Writer
	for _, v := range vs {
		pc.write(&w, v)
	}
	r := bits.NewReader(w.Bytes())
	for i, want := range vs {
		got, err := pc.read(r)
		if err != nil || got != want {
			t.Fatalf("value %d: got %d, %v, want %d", i, got, err, want)
		}
	}
	if w.Len() >= benchN*benchWidth {
		t.Errorf("the prefix code took %d bits, plain %d", w.Len(), benchN*benchWidth)
	}
}

func BenchmarkDecodeFixed(b *testing.B) {
	var w bits.Writer
	for _, v := range benchValues() {
		w.WriteBits(v, benchWidth)
	}
	data := w.Bytes()
	var r bits.Reader
	var sum uint64
	for b.Loop() {
		r.Reset(data)
		for range benchN {
			v, _ := r.ReadBits(benchWidth)
			sum += v
		}
	}
	_ = sum
}

func BenchmarkDecodeTable(b *testing.B) {
	vs := benchValues()
	pc := benchCode(vs)
	var w bits.Writer
	for _, v := range vs {
		pc.write(&w, v)
	}
	data := w.Bytes()
	var r bits.Reader
	var sum uint64
	for b.Loop() {
		r.Reset(data)
		for range benchN {
			v, _ := pc.read(&r)
			sum += v
		}
	}
	_ = sum
}

func BenchmarkDecodeRice(b *testing.B) {
	var w bits.Writer
	for _, v := range benchValues() {
		fields.WriteRice(&w, int64(v), 8, benchWidth)
	}
	data := w.Bytes()
	var r bits.Reader
	var sum int64
	for b.Loop() {
		r.Reset(data)
		for range benchN {
			v, _ := fields.ReadRice(&r, 8, benchWidth)
			sum += v
		}
	}
	_ = sum
}
