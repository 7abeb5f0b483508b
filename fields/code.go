package fields

import (
	"container/heap"
	"errors"
	mbits "math/bits"
	"slices"

	"github.com/bitwire/bitwire/bits"
)

// Canonical prefix codes: the tables of a trained model (the root
// package's Model). A code is given by the length of each symbol's
// codeword alone (0: the symbol has none); codewords are assigned in order
// of (length, symbol), as Deflate does, and written most significant bit
// first. Symbol 0 of every model table is the escape (ESC), whose payload
// is a plain coding; docs/wire-format.md, "Models", says what each table
// codes.
const (
	// CodeMaxLen is the longest codeword.
	CodeMaxLen = 15
	// CodeEscMaxLen is the longest ESC codeword a model may hold: no
	// value costs more than its plain coding plus this.
	CodeEscMaxLen = 5
	// codeLookBits is the width of a Code's lookup table: longer codewords
	// are decoded bit by bit.
	codeLookBits = 10
)

// ErrCode is NewCode's error for lengths that are no prefix code.
var ErrCode = errors.New("bitwire: bad code lengths")

// Code is a canonical prefix code over symbols 0..N()-1. Build it with
// NewCode; it is read-only afterwards and safe for concurrent use.
type Code struct {
	lens []uint8  // each symbol's length, 0 for none
	rev  []uint16 // each symbol's codeword, bits reversed (stream order, low bit first)
	// look maps the next codeLookBits bits (low bit first) to
	// (symbol+1)<<4 | length, 0 when the codeword is longer or none.
	look []uint16
	// The canonical decoder's tables by length: the first codeword of
	// each length, the number of symbols of that length, and the number
	// of symbols shorter; sorted lists the symbols by (length, symbol).
	first, count, index [CodeMaxLen + 1]uint16
	sorted              []uint16
	maxLen              int
	// tok is look for ReadToken, with each token slot's decoding worked
	// out: its codeword's length | extra bits<<4 | top bits<<10 (the
	// magnitude is top<<extra | the extra bits) | kind<<12 (tokSigned,
	// tokZero, tokEsc); 0 when the codeword is longer or none. Only codes
	// of at most maxTokenSyms symbols have it.
	tok []uint16
	// put is each slot's token as WriteToken writes it: the codeword
	// (stream order) | its length<<16 | the slot's extra bits<<24; 0 for
	// a slot without a codeword.
	put []uint32
}

// The kinds of tok entries.
const (
	tokSigned = 1 // a magnitude of slot 1 and up: extra bits and a sign follow
	tokZero   = 2 // magnitude 0
	tokEsc    = 3 // ESC
)

// maxTokenSyms is the most symbols a token table has (ESC and the slots of
// 64-bit magnitudes).
const maxTokenSyms = 1 + 2*64

// CheckCode reports whether NewCode accepts lens (nil) or not (ErrCode),
// without building the code's tables: a check in time and memory
// proportional to len(lens), for files of many codes that are used later,
// or not at all.
func CheckCode(lens []uint8) error {
	if len(lens) < 2 || len(lens) > 1<<16-1 {
		return ErrCode
	}
	kraft := 0
	for _, l := range lens {
		if l > CodeMaxLen {
			return ErrCode
		}
		if l > 0 {
			kraft += 1 << (CodeMaxLen - l)
		}
	}
	if kraft > 1<<CodeMaxLen {
		return ErrCode
	}
	return nil
}

// NewCode returns the canonical code with the given lengths (each 0..15;
// they must not over-subscribe the code space: the sum of 2^(15-L) over
// coded symbols is at most 2^15). Fewer than two symbols, or bad lengths,
// are ErrCode.
func NewCode(lens []uint8) (*Code, error) {
	if err := CheckCode(lens); err != nil {
		return nil, err
	}
	c := &Code{lens: append([]uint8(nil), lens...), rev: make([]uint16, len(lens))}
	for _, l := range lens {
		if l > 0 {
			c.count[l]++
			c.maxLen = max(c.maxLen, int(l))
		}
	}
	code, n := 0, 0
	for l := 1; l <= CodeMaxLen; l++ {
		c.first[l] = uint16(code)
		c.index[l] = uint16(n)
		code = (code + int(c.count[l])) << 1
		n += int(c.count[l])
	}
	c.sorted = make([]uint16, 0, n)
	next := c.first
	for l := 1; l <= CodeMaxLen; l++ {
		for s, sl := range lens {
			if int(sl) == l {
				c.sorted = append(c.sorted, uint16(s))
				c.rev[s] = uint16(mbits.Reverse16(next[l]) >> (16 - l))
				next[l]++
			}
		}
	}
	look := min(c.maxLen, codeLookBits)
	c.look = make([]uint16, 1<<look)
	for s, l := range lens {
		if l == 0 || int(l) > look {
			continue
		}
		e := uint16(s+1)<<4 | uint16(l)
		for j := 0; j < 1<<(look-int(l)); j++ {
			c.look[int(c.rev[s])|j<<l] = e
		}
	}
	if len(lens) <= maxTokenSyms {
		c.tokenTables(look)
	}
	return c, nil
}

// tokenTables fills in tok and put (look is the lookup width).
func (c *Code) tokenTables(look int) {
	c.tok = make([]uint16, len(c.look))
	for i, e := range c.look {
		if e == 0 {
			continue
		}
		l, sym := e&15, int(e>>4)-1
		switch s := sym - 1; {
		case sym == 0:
			c.tok[i] = l | tokEsc<<12
		case s == 0:
			c.tok[i] = l | tokZero<<12
		default:
			x := slotExtra(s)
			c.tok[i] = l | uint16(x)<<4 | uint16(slotBase(s)>>uint(x))<<10 | tokSigned<<12
		}
	}
	c.put = make([]uint32, len(c.lens)-1)
	for s := range c.put {
		if l := c.lens[s+1]; l > 0 {
			c.put[s] = uint32(c.rev[s+1]) | uint32(l)<<16 | uint32(slotExtra(s))<<24
		}
	}
}

// N returns the number of symbols.
func (c *Code) N() int { return len(c.lens) }

// Empty reports whether no symbol has a codeword (all lengths 0). A model
// mask table that is empty is "plain": a chunk's changed bits are written
// as plain bits, with no symbol before them (docs/wire-format.md,
// "Models").
func (c *Code) Empty() bool { return c.maxLen == 0 }

// Len returns the length of symbol s's codeword, 0 when it has none (or s
// is not a symbol).
func (c *Code) Len(s int) int {
	if uint(s) >= uint(len(c.lens)) {
		return 0
	}
	return int(c.lens[s])
}

// Lens returns the lengths the code was built from (not to be modified).
func (c *Code) Lens() []uint8 { return c.lens }

// Codeword returns symbol s's codeword as WriteBits takes it (stream
// order, low bit first) and its length, 0 when it has none (or s is not a
// symbol).
func (c *Code) Codeword(s int) (v uint64, n int) {
	if uint(s) >= uint(len(c.lens)) {
		return 0, 0
	}
	return uint64(c.rev[s]), int(c.lens[s])
}

// Write writes symbol s, which must have a codeword.
func (c *Code) Write(w *bits.Writer, s int) { w.WriteBits(uint64(c.rev[s]), int(c.lens[s])) }

// Read reads one symbol. A bit pattern that begins no codeword is
// ErrMalformed; a codeword cut off by the end of the input, or no input,
// is bits.ErrUnexpectedEnd (as Skip reports it).
func (c *Code) Read(r *bits.Reader) (int, error) {
	p := r.Lookahead()
	if e := c.look[p&uint64(len(c.look)-1)]; e != 0 {
		if !r.Drop(int(e & 15)) {
			return 0, r.Skip(int(e & 15)) // cut off by the end of the input
		}
		return int(e>>4) - 1, nil
	}
	return c.readSlow(r, p)
}

// readSlow decodes a codeword longer than the lookup table, or none, bit
// by bit from the peeked bits p.
func (c *Code) readSlow(r *bits.Reader, p uint64) (int, error) {
	code := 0
	for l := 1; l <= CodeMaxLen; l++ {
		code = code<<1 | int(p>>(l-1)&1)
		if d := code - int(c.first[l]); d >= 0 && d < int(c.count[l]) {
			if err := r.Skip(l); err != nil {
				return 0, err
			}
			return int(c.sorted[int(c.index[l])+d]), nil
		}
	}
	if r.Remaining() < CodeMaxLen {
		return 0, r.Skip(CodeMaxLen) // the end of the input cut it off
	}
	return 0, ErrMalformed
}

// ---- tokens: signed values by magnitude slot ----

// A token codes a signed value by the slot of its magnitude m: m itself
// for m < 4, else 2·(c-1) plus the bit below m's leading one, c the bit
// length of m (so two slots a bit length, as LZMA's distance slots); the
// slot's symbol (slot + 1; symbol 0 is ESC), then the bits of m below its
// top two (slot/2 - 1 of them, for slots 4 and up), then the sign when m
// is not 0.

// TokenSlot returns the slot of magnitude m.
func TokenSlot(m uint64) int {
	c := mbits.Len64(m)
	if c <= 2 {
		return int(m)
	}
	return 2*(c-1) + int(m>>uint(c-2)&1)
}

// TokenSlots returns the number of slots of the magnitudes of at most c
// bits: c+1 for c ≤ 1, else 2c.
func TokenSlots(c int) int {
	if c <= 1 {
		return c + 1
	}
	return 2 * c
}

// slotExtra returns the number of low bits of a magnitude in slot s.
func slotExtra(s int) int {
	if s < 4 {
		return 0
	}
	return s>>1 - 1
}

// TokenBits returns the size of the token of magnitude m in c (its slot's
// codeword, the low bits, a sign when m is not 0), or -1 when its slot has
// no codeword.
func TokenBits(c *Code, m uint64) int {
	s := TokenSlot(m)
	l := c.Len(s + 1)
	if l == 0 {
		return -1
	}
	if m == 0 {
		return l
	}
	return l + slotExtra(s) + 1
}

// WriteToken writes the token of magnitude m (negative when neg and m is
// not 0) and reports true, or writes nothing and reports false when its
// slot has no codeword (the caller writes ESC and a plain coding).
func WriteToken(w *bits.Writer, c *Code, m uint64, neg bool) bool {
	s := TokenSlot(m)
	if c.put == nil {
		return writeTokenSlow(w, c, m, neg)
	}
	if s >= len(c.put) || c.put[s] == 0 {
		return false
	}
	e := c.put[s]
	l, x := uint(e>>16&0xFF), uint(e>>24)
	if m == 0 {
		w.WriteBits(uint64(e&0xFFFF), int(l))
		return true
	}
	tail := m&(1<<x-1) | b2u(neg)<<x // the low bits, then the sign
	if l+x+1 <= 64 {
		w.WriteBits(uint64(e&0xFFFF)|tail<<l, int(l+x+1))
	} else {
		w.WriteBits(uint64(e&0xFFFF), int(l))
		w.WriteBits(tail, int(x+1))
	}
	return true
}

// writeTokenSlow is WriteToken for a code without token tables.
func writeTokenSlow(w *bits.Writer, c *Code, m uint64, neg bool) bool {
	s := TokenSlot(m)
	if s+1 >= len(c.lens) || c.lens[s+1] == 0 {
		return false
	}
	l := int(c.lens[s+1])
	if m == 0 {
		w.WriteBits(uint64(c.rev[1]), l)
		return true
	}
	x := slotExtra(s)
	tail := m&(1<<uint(x)-1) | b2u(neg)<<uint(x)
	if l+x+1 <= 64 {
		w.WriteBits(uint64(c.rev[s+1])|tail<<uint(l), l+x+1)
	} else {
		w.WriteBits(uint64(c.rev[s+1]), l)
		w.WriteBits(tail, x+1)
	}
	return true
}

// SlotTailBits returns the size of the tail of a token of slot s, what
// follows its symbol: the magnitude's bits below the slot's top ones, and
// a sign unless the slot is 0 (magnitude 0).
func SlotTailBits(s int) int {
	if s == 0 {
		return 0
	}
	return slotExtra(s) + 1
}

// writeSlotTail writes the tail of a token of magnitude m (negative when
// neg): what follows its slot's symbol.
func writeSlotTail(w *bits.Writer, m uint64, neg bool) {
	if m == 0 {
		return
	}
	x := uint(slotExtra(TokenSlot(m)))
	w.WriteBits(m&(1<<x-1)|b2u(neg)<<x, int(x+1))
}

// readSlotTail reads the tail of a token of slot s: its magnitude and
// sign.
func readSlotTail(r *bits.Reader, s int) (m uint64, neg bool, err error) {
	if s == 0 {
		return 0, false, nil
	}
	x := slotExtra(s)
	tail, err := r.ReadBits(x + 1)
	if err != nil {
		return 0, false, err
	}
	return slotBase(s) | tail&(1<<uint(x)-1), tail>>uint(x) != 0, nil
}

// WriteEsc writes c's ESC codeword (symbol 0).
func WriteEsc(w *bits.Writer, c *Code) { c.Write(w, 0) }

// slotBase returns the smallest magnitude of slot s.
func slotBase(s int) uint64 {
	if s < 4 {
		return uint64(s)
	}
	return uint64(2|s&1) << uint(s>>1-1)
}

// ReadToken reads a token or ESC (esc true, nothing more read).
func ReadToken(r *bits.Reader, c *Code) (m uint64, neg, esc bool, err error) {
	// The fast path: a codeword in the lookup table, and its tail in the
	// bits looked ahead at.
	if c.tok != nil {
		p := r.Lookahead()
		if e := c.tok[p&uint64(len(c.tok)-1)]; e != 0 {
			l := uint(e & 15)
			switch e >> 12 {
			case tokSigned:
				x := uint(e >> 4 & 63)
				if n := l + x + 1; n <= 56 && r.Drop(int(n)) {
					tail := p >> l
					return uint64(e>>10&3)<<x | tail&(1<<x-1), tail>>x&1 != 0, false, nil
				}
			case tokZero:
				if r.Drop(int(l)) {
					return 0, false, false, nil
				}
			default:
				if r.Drop(int(l)) {
					return 0, false, true, nil
				}
			}
		}
	}
	sym, err := c.Read(r)
	if err != nil || sym == 0 {
		return 0, false, sym == 0 && err == nil, err
	}
	s := sym - 1
	if s == 0 {
		return 0, false, false, nil
	}
	x := slotExtra(s)
	tail, err := r.ReadBits(x + 1)
	if err != nil {
		return 0, false, false, err
	}
	return slotBase(s) | tail&(1<<uint(x)-1), tail>>uint(x) != 0, false, nil
}

// ---- training ----

// TrainLengths returns the code lengths of a Huffman code for symbols of
// weights w (0: no codeword), limited to CodeMaxLen bits, with ESC (symbol
// 0) at most CodeEscMaxLen bits: while the longest codeword is too long
// every weight is halved (rounding up), and while ESC's is too long its
// weight doubles. ESC always has a codeword (a weight of 0 counts as 1),
// except when its weight is 0 and every other symbol's, of two or more,
// is not: a complete table, whose symbols cover every value, has no ESC.
// Ties are broken by symbol, so the result depends on the weights alone.
func TrainLengths(w []uint64) []uint8 {
	w = append([]uint64(nil), w...)
	esc := w[0] > 0 || len(w) < 3 || slices.Contains(w[1:], 0)
	if esc {
		w[0] = max(w[0], 1)
	}
	for {
		l := huffmanLengths(w)
		long := 0
		for _, x := range l {
			long = max(long, int(x))
		}
		switch {
		case long > CodeMaxLen:
			for i := range w {
				w[i] = (w[i] + 1) / 2
			}
		case esc && l[0] > CodeEscMaxLen:
			w[0] *= 2
		default:
			return l
		}
	}
}

// huffNode is a node of the Huffman tree being built.
type huffNode struct {
	w     uint64
	order int // the smallest symbol under it: ties go to the smaller
	kids  [2]int
}

type huffHeap struct {
	nodes []huffNode
	ids   []int
}

func (h *huffHeap) Len() int { return len(h.ids) }
func (h *huffHeap) Less(i, j int) bool {
	a, b := &h.nodes[h.ids[i]], &h.nodes[h.ids[j]]
	return a.w < b.w || a.w == b.w && a.order < b.order
}
func (h *huffHeap) Swap(i, j int) { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *huffHeap) Push(x any)    { h.ids = append(h.ids, x.(int)) }
func (h *huffHeap) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}

// huffmanLengths returns the Huffman code lengths for weights w (0: no
// codeword); a single weighted symbol gets length 1.
func huffmanLengths(w []uint64) []uint8 {
	h := &huffHeap{}
	for s, x := range w {
		if x > 0 {
			h.nodes = append(h.nodes, huffNode{w: x, order: s, kids: [2]int{-1, s}})
			h.ids = append(h.ids, len(h.nodes)-1)
		}
	}
	out := make([]uint8, len(w))
	if len(h.ids) == 1 {
		out[h.nodes[0].order] = 1
		return out
	}
	heap.Init(h)
	for h.Len() > 1 {
		a, b := heap.Pop(h).(int), heap.Pop(h).(int)
		na, nb := h.nodes[a], h.nodes[b]
		h.nodes = append(h.nodes, huffNode{w: na.w + nb.w, order: min(na.order, nb.order), kids: [2]int{a, b}})
		heap.Push(h, len(h.nodes)-1)
	}
	var walk func(i, depth int)
	walk = func(i, depth int) {
		n := &h.nodes[i]
		if n.kids[0] < 0 {
			out[n.kids[1]] = uint8(min(depth, 255))
			return
		}
		walk(n.kids[0], depth+1)
		walk(n.kids[1], depth+1)
	}
	walk(h.ids[0], 0)
	return out
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
