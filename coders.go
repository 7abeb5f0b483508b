package bitwire

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// The leaf codings, each described once: one coder row per coding says how
// many bits a value takes, how a value turns into the bits that are
// compared and delta-coded (its key) and back, how the schema (and so
// Layout) describes it, and what equality and copying need where a key
// does not do. Sizes (MaxBits, the bounds on lengths), the schema, eqNode,
// copyNode, delta windows and the flat plan read the row; the flat path's
// kernel for a leaf is chosen from the row when a plan is compiled
// (flat.go). The bits themselves are those of package fields, which a test
// checks coding by coding (fields_conformance_test.go).
//
// What a row does not hold is the writing and reading: those take the
// bits.Writer or the encoder, and a call through a function value makes
// its arguments escape, while the writer and the encoder live on the
// caller's stack (Append, Encode and Unmarshal allocate nothing). So each
// coding is written and read by one case of encNode and decNode, which
// call its fields functions. A new coding is a row here, a case in each of
// encNode and decNode, its tag in compile.go, and its file in fields.
type coder struct {
	name string

	// width is the size of every value of a fixed-width coding; nil for
	// the variable-width ones, whose size lies in minBits..maxBits
	// (maxBits -1: unbounded).
	width   func(n *node) int
	minBits func(n *node) int
	maxBits func(n *node) int

	// key is the value as the bits it codes to: two values with the same
	// key encode the same (eqNode), and a delta window counts in keys.
	// storeKey stores the value of a key decoded from a delta, checking it
	// is one the field can hold; step is the window's unit in the Go
	// value's terms (nil: the coding takes no dmin/dmax).
	key      func(n *node, p unsafe.Pointer) (uint64, error)
	storeKey func(n *node, p unsafe.Pointer, k uint64) error
	step     func(n *node) float64

	// eq compares values of a coding without a key; copy copies values of
	// a coding whose Go type holds pointers (others are copied as memory).
	eq   func(n *node, a, b unsafe.Pointer) bool
	copy func(n *node, dst, src unsafe.Pointer)

	// schema fills in the coding's parameters in the plan's schema (and
	// so in Layout, which prints the schema)
	schema func(n *node, ns *NodeSchema)
	signed func(n *node) bool // carries a sign bit under the message's "any negative" flag
	group  bool               // the elements of an array or slice share one bit length
	flat   func(n *node) flatCode
}

// coders is the table of rows, indexed by code; containers (struct, array,
// slice, pointer, map) have a name only.
var coders [cMap + 1]coder

func init() {
	coders = [...]coder{
		cBool:   boolCoder,
		cBits:   bitsCoder,
		cRange:  rangeCoder,
		cQ:      qCoder,
		cFloat:  floatCoder,
		cFixed:  fixedCoder,
		cVarint: varintCoder,
		cBitlen: bitlenCoder,
		cString: stringCoder,
		cBytes:  bytesCoder,
		cQuat:   quatCoder,
		cTime:   timeCoder,
		cStruct: {name: "struct"}, cArray: {name: "array"}, cSlice: {name: "slice"},
		cPtr: {name: "ptr"}, cMap: {name: "map"},
	}
}

// leaf reports whether a row describes a leaf coding.
func (c *coder) leaf() bool { return c.minBits != nil || c.width != nil }

// scalarKey returns the key of a keyed leaf (see coder.key).
func scalarKey(n *node, p unsafe.Pointer) (uint64, error) { return n.row.key(n, p) }

// storeKey stores a key decoded from a delta (see coder.storeKey).
func storeKey(n *node, p unsafe.Pointer, k uint64) error { return n.row.storeKey(n, p, k) }

// ---- the rows ----

func one(*node) int          { return 1 }
func unitStep(*node) float64 { return 1 }
func flatVia(*node) flatCode { return flatNode }

var boolCoder = coder{
	name:  "bool",
	width: one,
	key: func(_ *node, p unsafe.Pointer) (uint64, error) {
		if *(*bool)(p) {
			return 1, nil
		}
		return 0, nil
	},
	flat:   func(*node) flatCode { return flatBool },
	schema: func(_ *node, ns *NodeSchema) { ns.Type = "bool" },
}

var bitsCoder = coder{
	name:  "bits",
	width: func(n *node) int { return n.n },
	// The key is the value encBits writes, clamped with clamp: a window's
	// difference and equality are of what the receiver gets.
	key: func(n *node, p unsafe.Pointer) (uint64, error) { return clampBits(n, loadInt(p, n.mem)), nil },
	storeKey: func(n *node, p unsafe.Pointer, k uint64) error {
		if n.mem.signed() {
			if !fields.FitsInt(int64(k), n.n) {
				return fmt.Errorf("%w: %d does not fit %d bits", ErrOutOfRange, int64(k), n.n)
			}
		} else if !fields.FitsUint(k, n.n) {
			return fmt.Errorf("%w: %d does not fit %d bits", ErrOutOfRange, k, n.n)
		}
		storeInt(p, n.mem, k)
		return nil
	},
	step: unitStep,
	flat: flatVia,
	schema: func(n *node, ns *NodeSchema) {
		ns.Type, ns.Clamp = memName(n.mem), n.clamp
		ns.Bits = &BitsParams{Width: n.n}
	},
}

var rangeCoder = coder{
	name: "range",
	width: func(n *node) int {
		if n.mem.signed() {
			return n.irng.Bits()
		}
		return n.urng.Bits()
	},
	key: func(n *node, p unsafe.Pointer) (uint64, error) {
		x := loadInt(p, n.mem)
		if n.clamp {
			if n.mem.signed() {
				return uint64(n.irng.Clamp(int64(x))), nil
			}
			return n.urng.Clamp(x), nil
		}
		return x, nil
	},
	storeKey: func(n *node, p unsafe.Pointer, k uint64) error {
		if n.mem.signed() {
			if int64(k) < n.irng.Min() || int64(k) > n.irng.Max() {
				return fmt.Errorf("%w: %d outside %d..%d", ErrOutOfRange, int64(k), n.irng.Min(), n.irng.Max())
			}
		} else if k < n.urng.Min() || k > n.urng.Max() {
			return fmt.Errorf("%w: %d outside %d..%d", ErrOutOfRange, k, n.urng.Min(), n.urng.Max())
		}
		storeInt(p, n.mem, k)
		return nil
	},
	step: unitStep,
	flat: func(n *node) flatCode {
		if n.mem.signed() && !n.clamp {
			return flatRangeInt
		}
		return flatNode
	},
	schema: func(n *node, ns *NodeSchema) {
		ns.Type, ns.Clamp = memName(n.mem), n.clamp
		if n.mem.signed() {
			ns.Range = &RangeParams{Min: strconv.FormatInt(n.irng.Min(), 10), Max: strconv.FormatInt(n.irng.Max(), 10), Bits: n.irng.Bits()}
		} else {
			ns.Range = &RangeParams{Min: strconv.FormatUint(n.urng.Min(), 10), Max: strconv.FormatUint(n.urng.Max(), 10), Bits: n.urng.Bits()}
		}
	},
}

var qCoder = coder{
	name:  "q",
	width: func(n *node) int { return n.q.Bits() },
	key:   qKey,
	storeKey: func(n *node, p unsafe.Pointer, k uint64) error {
		if k > n.q.Steps() {
			return fmt.Errorf("%w: quantization index %d over %d", ErrOutOfRange, k, n.q.Steps())
		}
		storeFloat(p, n.mem, n.q.Value(k))
		return nil
	},
	step: func(n *node) float64 { return n.q.Step() },
	flat: func(n *node) flatCode {
		if n.mem == mF32 && !n.clamp {
			return flatQ32
		}
		return flatNode
	},
	schema: func(n *node, ns *NodeSchema) {
		ns.Type, ns.Clamp = memName(n.mem), n.clamp
		ns.Q = &QParams{Min: n.q.Min(), Max: n.q.Max(), Steps: n.q.Steps(), Step: n.q.Step(), Bits: n.q.Bits(),
			Zero: n.q.ZeroAnchored(), KMin: n.q.KMin()}
	},
}

// qKey is the key of a q value: its quantization index.
func qKey(n *node, p unsafe.Pointer) (uint64, error) {
	if n.clamp {
		return n.q.IndexClamp(loadFloat(p, n.mem))
	}
	return n.q.Index(loadFloat(p, n.mem))
}

var floatCoder = coder{
	name:  "float",
	width: func(n *node) int { return n.mem.sizeBits() },
	key: func(n *node, p unsafe.Pointer) (uint64, error) {
		if n.mem == mF32 {
			return uint64(*(*uint32)(p)), nil
		}
		return *(*uint64)(p), nil
	},
	flat:   flatVia,
	schema: func(n *node, ns *NodeSchema) { ns.Type = memName(n.mem) },
}

var fixedCoder = coder{
	name:    "fixed",
	minBits: func(n *node) int { return n.n + 1 },
	maxBits: func(n *node) int { return 1 + n.n + 64 - 1 },
	key: func(n *node, p unsafe.Pointer) (uint64, error) {
		i, err := n.fx.ToInt(loadFloat(p, n.mem))
		return uint64(i), err
	},
	storeKey: func(n *node, p unsafe.Pointer, k uint64) error {
		storeFloat(p, n.mem, n.fx.FromInt(int64(k)))
		return nil
	},
	step:   func(n *node) float64 { return n.fx.Prec() },
	signed: func(*node) bool { return true },
	group:  true,
	schema: func(n *node, ns *NodeSchema) {
		ns.Type = memName(n.mem)
		ns.Fixed = &FixedParams{Prec: n.fx.Prec(), Width: n.n}
	},
}

var varintCoder = coder{
	name:    "varint",
	minBits: func(n *node) int { return n.n + 1 },
	// the widest value: all ones (zigzagged, the most negative)
	maxBits: func(n *node) int { return fields.VarintBits(math.MaxUint64>>uint(64-n.mem.sizeBits()), n.n) },
	key:     func(n *node, p unsafe.Pointer) (uint64, error) { return loadInt(p, n.mem), nil },
	flat:    flatVia,
	schema: func(n *node, ns *NodeSchema) {
		ns.Type = memName(n.mem)
		ns.Varint = &VarintParams{Group: n.n}
	},
}

var bitlenCoder = coder{
	name:    "bitlen",
	minBits: func(n *node) int { return n.n + 1 },
	maxBits: func(n *node) int {
		sign := 0
		if n.mem.signed() {
			sign = 1
		}
		return sign + n.n + n.mem.sizeBits() - 1
	},
	key:    func(n *node, p unsafe.Pointer) (uint64, error) { return loadInt(p, n.mem), nil },
	signed: func(n *node) bool { return n.mem.signed() },
	group:  true,
	flat: func(n *node) flatCode {
		if n.mem.signed() {
			return flatNone // its sign flag cannot be taken back by a rewind
		}
		return flatBitlenU
	},
	schema: func(n *node, ns *NodeSchema) {
		ns.Type = memName(n.mem)
		ns.Bitlen = &BitlenParams{Width: n.n}
	},
}

func lenMin(n *node) int { return fields.LenBits(0, n.maxlen) }

func bytesMax(n *node) int {
	if n.maxlen == 0 {
		return -1
	}
	return fields.LenBits(0, n.maxlen) + 8*n.maxlen
}

var stringCoder = coder{
	name:    "string",
	minBits: lenMin,
	maxBits: bytesMax,
	eq:      func(_ *node, a, b unsafe.Pointer) bool { return *(*string)(a) == *(*string)(b) },
	copy:    func(_ *node, dst, src unsafe.Pointer) { *(*string)(dst) = *(*string)(src) },
	flat:    flatVia,
	schema:  func(n *node, ns *NodeSchema) { ns.Type, ns.MaxLen = "string", n.maxlen },
}

var bytesCoder = coder{
	name:    "bytes",
	minBits: lenMin,
	maxBits: bytesMax,
	eq:      func(_ *node, a, b unsafe.Pointer) bool { return bytes.Equal(*(*[]byte)(a), *(*[]byte)(b)) },
	copy: func(_ *node, dst, src unsafe.Pointer) {
		s, d := *(*[]byte)(src), (*[]byte)(dst)
		if s == nil {
			*d = nil
			return
		}
		buf := *d
		if cap(buf) < len(s) || (len(buf) > 0 && &buf[:1][0] == &s[:1][0]) {
			buf = make([]byte, len(s))
		}
		buf = buf[:len(s)]
		copy(buf, s)
		*d = buf
	},
	flat:   flatVia,
	schema: func(n *node, ns *NodeSchema) { ns.Type, ns.MaxLen = "bytes", n.maxlen },
}

var quatCoder = coder{
	name:  "quat",
	width: func(n *node) int { return n.quat.Bits() },
	key:   quatKey,
	// a struct with X, Y, Z, W and fields of its own, some with pointers:
	// only the components belong to this node
	copy: func(n *node, dst, src unsafe.Pointer) { storeQuat(n, dst, loadQuat(n, src)) },
	flat: func(*node) flatCode { return flatQuat },
	schema: func(n *node, ns *NodeSchema) {
		ns.Type = memName(n.mem)
		ns.Quat = &QuatParams{Bits: n.quat.ComponentBits()}
		if n.typ.Kind() == reflect.Struct {
			ns.Quat.Fields = []string{"X", "Y", "Z", "W"}
		}
	},
}

// quatKey is the key of a quaternion: its smallest-three packing.
func quatKey(n *node, p unsafe.Pointer) (uint64, error) { return n.quat.Pack(loadQuat(n, p)) }

var timeCoder = coder{
	name:    "time",
	minBits: func(*node) int { return fields.TimeMinBits },
	maxBits: func(*node) int { return fields.TimeMaxBits },
	eq: func(_ *node, a, b unsafe.Pointer) bool {
		ta, tb := (*time.Time)(a), (*time.Time)(b)
		return ta.Unix() == tb.Unix() && ta.Nanosecond() == tb.Nanosecond()
	},
	copy:   func(_ *node, dst, src unsafe.Pointer) { *(*time.Time)(dst) = *(*time.Time)(src) },
	flat:   flatVia,
	schema: func(_ *node, ns *NodeSchema) { ns.Type = "time" },
}
