package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// fixed,prec=P on a float: round(v/P) as a signed bitlen (written and read
// by encInt and decInt, coding_bitlen.go, which bitlen shares).

var fixedCoder = coder{
	name:    "fixed",
	tag:     true,
	fits:    isFloat,
	fill:    fillFixed,
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
	schemaOK: func(ns *NodeSchema) bool { return ns.Fixed != nil },
	hash: func(f *fpHasher, ns *NodeSchema) {
		f.u64(math.Float64bits(ns.Fixed.Prec))
		f.u64(uint64(ns.Fixed.Width))
	},
	describe: func(ns *NodeSchema) string { return fmt.Sprintf("prec=%g", ns.Fixed.Prec) },
}

func fillFixed(nd *node, path string, t reflect.Type, s spec, what string) error {
	if err := s.only(path, what, "prec", "dmin"); err != nil {
		return err
	}
	if !s.hasPrec {
		return badTag(path, "fixed needs prec")
	}
	fx, err := fields.NewFixed(s.prec)
	if err != nil {
		return badTag(path, "%v", err)
	}
	nd.fx, nd.n = fx, fields.BitlenWidth(64)
	if !fixedExact(nd, 1) {
		// Every count would decode to one value (0): the field could
		// hold nothing else, and its encodings would not be unique.
		return badTag(path, "fixed: one step of %g is 0 in %s; use a coarser prec", s.prec, t)
	}
	return nil
}

// fixedExact reports whether i steps of a fixed-point field survive a trip
// through the field's float type: ToInt(FromInt(i)) == i. Below 2^22 steps
// (float32) or 2^50 (float64) they always do, as long as i·prec stays a
// finite normal number of the type: prec at least the smallest normal
// (2^-126, 2^-1022) and below 1e30 (float32) or 1e290 (float64), where
// 2^22·prec and 2^50·prec are still far from the largest finite value.
// Otherwise, and beyond those counts, the encoder and the decoder both
// refuse the counts that do not survive (ErrOutOfRange): an i·prec that
// overflows to ±Inf, or lands among the subnormals where neighbouring counts
// share one value. So a decoded value always encodes to the same bits and
// Quantize is idempotent.
func fixedExact(n *node, i int64) bool {
	lim, lo, hi := int64(1)<<50, 0x1p-1022, 1e290
	if n.mem == mF32 {
		lim, lo, hi = 1<<22, 0x1p-126, 1e30
	}
	if p := n.fx.Prec(); i > -lim && i < lim && p >= lo && p < hi {
		return true
	}
	f := n.fx.FromInt(i)
	if n.mem == mF32 {
		f = float64(float32(f))
	}
	j, err := n.fx.ToInt(f)
	return err == nil && j == i
}
