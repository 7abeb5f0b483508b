// Package entropy measures what an entropy stage would save on bitwire
// messages: for each field of a set of messages it adds up today's bits,
// the empirical order-0 entropy of the field's keys, and what realistic
// codes would spend on them (an adaptive Rice code within one message, a
// static prefix code per field trained on other messages). It is a
// measuring instrument for tests and benchmarks (docs/decisions.md, "Full
// messages and the entropy stage"), not part of the library.
package entropy

import (
	"container/heap"
	"fmt"
	"io"
	"math"
	mbits "math/bits"
	"sort"
	"strings"

	"github.com/bitwire/bitwire/fields"
)

// Value is one field value of one message: the field, its key (the
// integer the wire carries: a quantized index, a range offset, a length,
// a byte), the bits today's coding spends on it, and its plain width (the
// bits of the fixed-width spelling an escape falls back to; for a
// variable-length coding, today's bits of the value).
type Value struct {
	Field string
	Key   uint64
	Bits  int
	Width int
}

// Message is the values of one message in the order they are written.
type Message []Value

// Set is the messages of one data set.
type Set struct {
	Name string
	Msgs []Message
}

// Bits returns today's bits of every message of s.
func (s *Set) Bits() int64 {
	var n int64
	for _, m := range s.Msgs {
		for _, v := range m {
			n += int64(v.Bits)
		}
	}
	return n
}

// Entropy returns the empirical order-0 entropy of s in bits, field by
// field: the sum over fields of -Σ log2(count(key)/n) over the field's
// values. It is what a static per-field code fitted to s itself (with its
// tables free) would spend at best. A field with more distinct keys than
// an eighth of its values is undersampled, and its plug-in entropy would be
// far too low (at most log2 of its count): for such a field the key is
// split into its top 8 bits, whose entropy is counted, and the bits below
// them, counted in full, so that the figure stays an estimate from above.
func (s *Set) Entropy() float64 {
	byField := map[string][]Value{}
	for _, m := range s.Msgs {
		for _, v := range m {
			byField[v.Field] = append(byField[v.Field], v)
		}
	}
	var h float64
	for _, vs := range byField {
		h += fieldEntropy(vs)
	}
	return h
}

func fieldEntropy(vs []Value) float64 {
	count := map[uint64]int{}
	for _, v := range vs {
		count[v.Key]++
	}
	if len(count)*8 <= len(vs) {
		return plugIn(count, len(vs))
	}
	hi := map[uint64]int{}
	low := 0.0
	for _, v := range vs {
		s := max(v.Width-8, 0)
		hi[v.Key>>uint(s)]++
		low += float64(s)
	}
	return min(plugIn(hi, len(vs))+low, float64(sumBits(vs)))
}

func plugIn(count map[uint64]int, n int) float64 {
	var h float64
	for _, c := range count {
		h -= float64(c) * math.Log2(float64(c)/float64(n))
	}
	return h
}

func sumBits(vs []Value) int64 {
	var n int64
	for _, v := range vs {
		n += int64(v.Bits)
	}
	return n
}

// Adaptive returns the bits of s when the values of the fields that adapt
// says yes to are coded with an adaptive Rice code within each message
// (fields.RiceBits with the parameter of a fields.RiceMean per field that
// starts at start and follows the field's keys in the message, the escape
// width being the value's Width; no sign bit, keys are unsigned), and the
// other values as today. No state crosses messages.
func (s *Set) Adaptive(adapt func(field string) bool, start uint32) int64 {
	var n int64
	means := map[string]*fields.RiceMean{}
	for _, m := range s.Msgs {
		clear(means)
		for _, v := range m {
			if !adapt(v.Field) {
				n += int64(v.Bits)
				continue
			}
			a := means[v.Field]
			if a == nil {
				r := fields.NewRiceMean(start)
				a = &r
				means[v.Field] = a
			}
			b := fields.RiceBits(int64(v.Key), a.K(), v.Width)
			if v.Key != 0 {
				b-- // unsigned: no sign bit
			}
			n += int64(b)
			a.Add(v.Key)
		}
	}
	return n
}

// Code is a static per-field code trained on one set and measured on
// another: for each field, the cheapest on held-out training values of
// today's coding, a prefix code over the field's frequent exact keys with an escape
// (followed by the plain spelling), and a prefix code over the keys' bit
// lengths followed by the bits below the leading 1.
type Code struct {
	fields map[string]*fieldCode
}

type fieldCode struct {
	kind   int // 0 today's coding, 1 exact keys, 2 bit-length classes
	lens   map[uint64]int
	escape int
}

// MaxTable is the most exact keys a field's table holds.
const MaxTable = 255

// Train builds the static code of every field of s.
func Train(s *Set) *Code {
	byField := map[string][]Value{}
	for _, m := range s.Msgs {
		for _, v := range m {
			byField[v.Field] = append(byField[v.Field], v)
		}
	}
	c := &Code{fields: map[string]*fieldCode{}}
	for f, vs := range byField {
		// The kind is chosen as a trainer would, against overfitting: the
		// codes built from the first half of the values are measured on the
		// second; the chosen kind is then built from all of them.
		a, b := vs[:len(vs)/2], vs[len(vs)/2:]
		kind, bestBits := 0, sumBits(b)
		for k, build := range []func([]Value) *fieldCode{exactCode, classCode} {
			if len(a) == 0 {
				break
			}
			if n := build(a).cost(b); n < bestBits {
				kind, bestBits = k+1, n
			}
		}
		switch kind {
		case 0:
			c.fields[f] = &fieldCode{kind: 0}
		case 1:
			c.fields[f] = exactCode(vs)
		case 2:
			c.fields[f] = classCode(vs)
		}
	}
	return c
}

// Kind names the coding chosen for field: "plain", "exact" or "class".
func (c *Code) Kind(field string) string {
	fc := c.fields[field]
	if fc == nil {
		return "plain"
	}
	return [...]string{"plain", "exact", "class"}[fc.kind]
}

func exactCode(vs []Value) *fieldCode {
	count := map[uint64]int{}
	for _, v := range vs {
		count[v.Key]++
	}
	keys := make([]uint64, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if count[keys[i]] != count[keys[j]] {
			return count[keys[i]] > count[keys[j]]
		}
		return keys[i] < keys[j]
	})
	// Frequent keys only: each at least 1/1024 of the values and seen twice.
	rest := len(vs)
	var syms []uint64
	var w []int
	for _, k := range keys {
		if len(syms) == MaxTable || count[k] < 2 || count[k]*1024 < len(vs) {
			break
		}
		syms = append(syms, k)
		w = append(w, count[k])
		rest -= count[k]
	}
	w = append(w, rest+1) // the escape, never of weight 0
	l := Huffman(w)
	fc := &fieldCode{kind: 1, lens: map[uint64]int{}, escape: l[len(l)-1]}
	for i, k := range syms {
		fc.lens[k] = l[i]
	}
	return fc
}

func classCode(vs []Value) *fieldCode {
	width := 0
	for _, v := range vs {
		width = max(width, v.Width)
	}
	w := make([]int, width+1)
	for i := range w {
		w[i] = 1 // every class can occur
	}
	for _, v := range vs {
		w[mbits.Len64(v.Key)]++
	}
	l := Huffman(w)
	fc := &fieldCode{kind: 2, lens: map[uint64]int{}}
	for i, n := range l {
		fc.lens[uint64(i)] = n
	}
	return fc
}

func (fc *fieldCode) bits(v Value) int {
	switch fc.kind {
	case 1:
		if n, ok := fc.lens[v.Key]; ok {
			return n
		}
		return fc.escape + v.Width
	case 2:
		c := mbits.Len64(v.Key)
		n, ok := fc.lens[uint64(c)]
		if !ok {
			return v.Bits + 8 // a class never trained: a long escape
		}
		return n + max(c-1, 0)
	}
	return v.Bits
}

func (fc *fieldCode) cost(vs []Value) int64 {
	var n int64
	for _, v := range vs {
		n += int64(fc.bits(v))
	}
	return n
}

// Bits returns the bits of s under the code (fields it was not trained on
// are coded as today).
func (c *Code) Bits(s *Set) int64 {
	var n int64
	for _, m := range s.Msgs {
		for _, v := range m {
			if fc := c.fields[v.Field]; fc != nil {
				n += int64(fc.bits(v))
			} else {
				n += int64(v.Bits)
			}
		}
	}
	return n
}

// Huffman returns the code lengths of a Huffman code for weights w (all
// positive); a single symbol gets length 1.
func Huffman(w []int) []int {
	l := make([]int, len(w))
	if len(w) == 1 {
		l[0] = 1
		return l
	}
	type node struct{ w, parent int }
	nodes := make([]node, len(w), 2*len(w))
	h := &minHeap{}
	for i, x := range w {
		nodes[i] = node{w: x, parent: -1}
		heap.Push(h, item{x, i})
	}
	for h.Len() > 1 {
		a := heap.Pop(h).(item)
		b := heap.Pop(h).(item)
		p := len(nodes)
		nodes = append(nodes, node{w: a.w + b.w, parent: -1})
		nodes[a.i].parent, nodes[b.i].parent = p, p
		heap.Push(h, item{a.w + b.w, p})
	}
	for i := range w {
		for j := nodes[i].parent; j >= 0; j = nodes[j].parent {
			l[i]++
		}
	}
	return l
}

type item struct{ w, i int }
type minHeap []item

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].w != h[j].w {
		return h[i].w < h[j].w
	}
	return h[i].i < h[j].i
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// FieldRow is one field's figures in a Report.
type FieldRow struct {
	Field         string
	Values        int
	Today, Static int64
	Entropy       float64
	Kind          string
}

// Fields returns, per field of test, today's bits, the entropy and the
// static code's bits (trained on train), sorted by the field's name.
func Fields(train, test *Set) []FieldRow {
	c := Train(train)
	byField := map[string]*Set{}
	for _, m := range test.Msgs {
		for _, v := range m {
			s := byField[v.Field]
			if s == nil {
				s = &Set{Msgs: []Message{nil}}
				byField[v.Field] = s
			}
			s.Msgs[0] = append(s.Msgs[0], v)
		}
	}
	var rows []FieldRow
	for f, s := range byField {
		rows = append(rows, FieldRow{Field: f, Values: len(s.Msgs[0]), Today: s.Bits(), Entropy: s.Entropy(), Static: c.Bits(s), Kind: c.Kind(f)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Field < rows[j].Field })
	return rows
}

// PrintFields writes the rows, per message of test (n messages).
func PrintFields(w io.Writer, rows []FieldRow, n int) {
	fmt.Fprintf(w, "  %-28s %8s %9s %9s %9s  %s\n", "field", "values", "today", "entropy", "static", "code")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-28s %8d %9.2f %9.2f %9.2f  %s\n", r.Field, r.Values,
			float64(r.Today)/float64(n), r.Entropy/float64(n), float64(r.Static)/float64(n), r.Kind)
	}
}

// Pct formats a/b - 1 as a signed percentage.
func Pct(a, b float64) string { return fmt.Sprintf("%+.1f%%", 100*(a/b-1)) }

// Row formats one line of the summary table: bits per message today, the
// entropy, the adaptive and static codes (each with its change against
// today).
func Row(name string, n int, today int64, ent float64, adaptive, static int64) string {
	t := float64(today) / float64(n)
	f := func(x float64) string { return fmt.Sprintf("%.1f (%s)", x/float64(n), Pct(x, float64(today))) }
	return strings.Join([]string{name, fmt.Sprint(n), fmt.Sprintf("%.1f", t), f(ent), f(float64(adaptive)), f(float64(static))}, " | ")
}
