package bitwire

import (
	"math"

	"github.com/bitwire/bitwire/bits"
)

// DefaultMaxLen caps the length of a string, slice or map that has no
// maxlen tag, when encoding and when decoding, unless Limits say otherwise.
const DefaultMaxLen = 1 << 20

// DefaultMaxDepth caps the nesting of structs while encoding or decoding
// (recursive types, cyclic values, hostile input), unless Limits say
// otherwise.
const DefaultMaxDepth = 100

// Limits bound what a codec accepts, so that hostile input can neither
// recurse deeply nor make the decoder allocate much: lengths are also always
// checked against what the rest of the input could hold before anything is
// allocated. The encoder applies the same limits on depth and lengths, so
// it never writes what a receiver with the same limits would refuse for
// those; the allocation budget (MaxAllocPerByte) only the decoder applies,
// so a valid value whose elements are much larger in memory than on the
// wire can encode and then be refused with ErrTooLong (snapshot.Sender
// reports it when it encodes such a state).
type Limits struct {
	// MaxDepth is the deepest nesting of structs (through pointers, slices
	// and maps of recursive types); 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxLen is the longest string, slice or map without a maxlen tag;
	// 0 means DefaultMaxLen. A maxlen tag overrides it for its field.
	MaxLen int
	// MaxAllocPerByte bounds the memory that decoding one input may
	// allocate for what the input brings (strings, byte slices, slice and
	// map storage, new pointees, the values Union.Decode returns, entities
	// and elements a delta adds), charged at what it costs on the heap
	// (unsent fields and the allocator's rounding included): at most
	// MaxAllocPerByte bytes per input byte, plus AllocBase. One input is
	// one buffer given to Unmarshal, or everything decoded from one
	// bits.Reader between NewReader or Reset and the next Reset (a
	// DecodeCount and the messages after it, or Decode in a loop): all
	// those decodes share the one budget. Going over is ErrTooLong,
	// before the allocation. 0 means DefaultMaxAllocPerByte; a negative
	// value turns the bound off. Copies of a delta's baseline (its
	// unchanged entries and elements) are not charged: they are bounded by
	// the receiver's own state. Raise it for types whose elements are much
	// larger in memory than on the wire (large `net:"-"` fields).
	MaxAllocPerByte int
}

// DefaultMaxAllocPerByte is the allocation bound per input byte when
// Limits.MaxAllocPerByte is 0.
const DefaultMaxAllocPerByte = 64

// AllocBase is the allocation decoding one input (see
// Limits.MaxAllocPerByte) may make beyond MaxAllocPerByte bytes per input
// byte.
const AllocBase = 4 << 10

// options are a codec's settings beyond its plan.
type options struct {
	stats *Stats
	lim   Limits
	debug bool
	model *modelRT // WithModel, or a Trainer's recording

	// general turns every fast path off, so that tests can hold each of
	// them to the general path's bits (see mark.go); slow is debug, Stats
	// or general, kept by WithDebug, WithStats and the tests, so that
	// making an encoder tests one field: the fast paths write without the
	// sentinels and the walker's Stats hooks.
	general, slow bool
}

// WithLimits returns a codec of the same plan that applies l.
func (c *Codec[T]) WithLimits(l Limits) *Codec[T] {
	cp := *c
	cp.o.lim = l
	return &cp
}

// WithDebug returns a codec of the same plan that, when on, writes an 8-bit
// sentinel (0xA5) after each top-level field and checks it when decoding: a
// reader and writer that disagree about a field's size fail at that field,
// with ErrMalformed naming it, instead of somewhere later. Both ends must
// use it; the debug format is not the wire format, so use it in tests and
// while developing a compatible decoder only.
//
// A debug codec has its own Fingerprint, so that snapshot peers of which
// only one is in debug mode see a protocol mismatch, not garbage.
func (c *Codec[T]) WithDebug(on bool) *Codec[T] {
	cp := *c
	cp.o.debug = on
	cp.o.slow = on || cp.o.general || cp.o.stats != nil // debug's sentinels sit between fields a kernel writes at once
	cp.fp = cp.fps[0]
	if on {
		cp.fp = cp.fps[1]
	}
	return &cp
}

// debugSentinel is the byte written after each top-level field in debug mode.
const debugSentinel = 0xA5

// plain reports whether o asks for neither accounting nor debug sentinels.
func (o *options) plain() bool { return o == nil || !o.slow }

func (o *options) statsOf() *Stats {
	if o == nil {
		return nil
	}
	return o.stats
}

func (o *options) limits() (depth, length int) {
	depth, length = DefaultMaxDepth, DefaultMaxLen
	if o != nil {
		if o.lim.MaxDepth > 0 {
			depth = o.lim.MaxDepth
		}
		if o.lim.MaxLen > 0 {
			length = o.lim.MaxLen
		}
	}
	return depth, length
}

// maxDepth is the nesting limit of o's Limits.
func (o *options) maxDepth() int {
	d, _ := o.limits()
	return d
}

func (o *options) encoder(w *bits.Writer, ar *arena, stats int32) encoder {
	depth, length := o.limits()
	e := encoder{w: w, ar: ar, stats: stats, statPath: -1, maxDepth: depth, maxLen: length}
	if o != nil {
		e.debug, e.general = o.debug, o.slow
	}
	return e
}

func (o *options) decoder(r *bits.Reader, ar *arena) decoder {
	depth, length := o.limits()
	d := decoder{r: r, ar: ar, maxDepth: depth, maxLen: length}
	if o != nil {
		d.allocPer, d.debug, d.general = o.lim.MaxAllocPerByte, o.debug, o.slow
	}
	return d
}

// startBudget sets the allocation budget of the reader's whole input, at the
// decode's first charge (so that decodes that allocate nothing never pay for
// it): allocPer bytes per byte of the input, plus AllocBase. What earlier
// decodes from the same reader allocated counts against it (see charge).
func (d *decoder) startBudget() {
	d.budgeted = true
	per := int64(d.allocPer)
	if per == 0 {
		per = DefaultMaxAllocPerByte
	}
	d.budget = math.MaxInt64
	if per > 0 {
		d.budget = per*int64((d.r.Pos()+d.r.Remaining()+7)/8) + AllocBase
	}
}
