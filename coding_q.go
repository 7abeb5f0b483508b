package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// q,min=A,max=B,prec=P (or bits=N) on a float: the index of the value on
// a grid of steps over A..B; with clamp, values outside are clamped.

var qCoder = coder{
	name:  "q",
	tag:   true,
	fits:  isFloat,
	fill:  fillQ,
	width: func(n *node) int { return n.q.Bits() },
	key:   qKey,
	storeKey: func(n *node, p unsafe.Pointer, k uint64) error {
		if k > n.q.Steps() {
			return fmt.Errorf("%w: quantization index %d over %d", ErrOutOfRange, k, n.q.Steps())
		}
		storeFloat(p, n.mem, n.q.Value(k))
		return nil
	},
	step:      func(n *node) float64 { return n.q.Step() },
	predict:   predictLeaf,
	keyBounds: func(n *node) (uint64, uint64, bool) { return 0, n.q.Steps(), false },
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
	schemaOK: func(ns *NodeSchema) bool { return ns.Q != nil },
	hash: func(f *fpHasher, ns *NodeSchema) {
		f.u64(math.Float64bits(ns.Q.Min))
		f.u64(math.Float64bits(ns.Q.Max))
		f.u64(ns.Q.Steps)
		f.u64(math.Float64bits(ns.Q.Step))
	},
	describe: func(ns *NodeSchema) string {
		return fmt.Sprintf("min=%g max=%g steps=%d step=%g", ns.Q.Min, ns.Q.Max, ns.Q.Steps, ns.Q.Step)
	},
}

// qKey is the key of a q value: its quantization index.
func qKey(n *node, p unsafe.Pointer) (uint64, error) {
	if n.clamp {
		return n.q.IndexClamp(loadFloat(p, n.mem))
	}
	return n.q.Index(loadFloat(p, n.mem))
}

func fillQ(nd *node, path string, t reflect.Type, s spec, what string) error {
	if err := s.only(path, what, "min", "max", "prec", "bits", "dmin", "clamp"); err != nil {
		return err
	}
	if !s.hasMin || !s.hasMax {
		return badTag(path, "q needs both min and max")
	}
	if s.hasPrec == s.hasBits {
		return badTag(path, "q needs exactly one of prec and bits")
	}
	lo, err := parseFloatBound("min", s.min)
	if err != nil {
		return badTag(path, "%v", err)
	}
	hi, err := parseFloatBound("max", s.max)
	if err != nil {
		return badTag(path, "%v", err)
	}
	if lo >= hi {
		return badTag(path, "min=%s must be less than max=%s", s.min, s.max)
	}
	if nd.mem == mF32 {
		// A float32 field's grid runs between the float32 bounds
		// inside [min, max], so that every decoded value, once
		// stored as a float32, lies in the range and re-encodes.
		lo, hi = inward32(lo, 1), inward32(hi, -1)
		if !(lo < hi) {
			return badTag(path, "min=%s and max=%s hold fewer than two float32 values", s.min, s.max)
		}
	}
	if s.hasPrec {
		nd.q, err = fields.NewQuantizer(lo, hi, s.prec)
	} else {
		nd.q, err = fields.NewQuantizerBits(lo, hi, s.bits)
	}
	if err != nil {
		return badTag(path, "%v", err)
	}
	// The step must be coarse enough for the Go type to hold every
	// decoded value exactly enough to re-encode to the same index.
	mag := math.Max(math.Abs(lo), math.Abs(hi))
	ulpBits := -49.0
	if nd.mem == mF32 {
		ulpBits = -20
	}
	if nd.q.Step() < mag*math.Pow(2, ulpBits) {
		return badTag(path, "precision %g is finer than %s can hold over %s..%s", nd.q.Step(), t, s.min, s.max)
	}
	return nil
}

// inward32 returns the float32 nearest x on the side of x given by dir (1:
// up, -1: down), as a float64: x itself when a float32 holds it.
func inward32(x float64, dir float32) float64 {
	f := float32(x) // ±Inf beyond the float32 range
	if dir > 0 && float64(f) < x || dir < 0 && float64(f) > x {
		f = math.Nextafter32(f, dir*float32(math.Inf(1)))
	}
	return float64(f)
}

func (e *encoder) encQ(n *node, p unsafe.Pointer) error {
	if n.clamp {
		return n.q.WriteClamp(e.w, loadFloat(p, n.mem))
	}
	return n.q.Write(e.w, loadFloat(p, n.mem))
}

func (d *decoder) decQ(n *node, p unsafe.Pointer) error {
	v, err := n.q.Read(d.r)
	if err != nil {
		return err
	}
	storeFloat(p, n.mem, v)
	return nil
}
