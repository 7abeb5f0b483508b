package bitwire

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
)

// Prediction from two baselines. A value tagged pred is delta-coded
// against what its two newest baselines predict: base + (base - older),
// counted in keys (a q value's quantization index, a range or bits value
// itself) and clamped to the keys the field can hold. The message is the
// plain delta from a predicted baseline: base, with each pred value
// replaced by its prediction. So a value that moves at constant velocity
// is unchanged against its prediction and costs its changed bit alone,
// and every path of the delta walker (windows, entity sets, the flat
// kernels, models) applies as it is. docs/wire-format.md ("Prediction
// from two baselines") states the rule for other decoders.

// markPred marks, in the plans just compiled, every container that holds
// a value tagged pred and every plan with such a field, then refuses pred
// below a map, whose values cannot be replaced in place. Types may
// contain themselves, so the marks grow until they stop changing.
func markPred(order []*plan) error {
	for changed := true; changed; {
		changed = false
		for _, q := range order {
			for _, f := range q.fields {
				if predReach(f.node) && !q.pred {
					q.pred, changed = true, true
				}
			}
		}
	}
	for _, q := range order {
		for _, f := range q.fields {
			if err := checkPredMap(f.node, f.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// predReach reports whether n holds a pred value, marking the containers
// on the way (a struct's mark is its plan's).
func predReach(n *node) bool {
	switch n.code {
	case cStruct:
		n.pred = n.sub.pred
	case cArray, cSlice, cPtr:
		n.pred = predReach(n.elem)
	case cMap:
		n.pred = predReach(n.elem)
	}
	return n.pred
}

func checkPredMap(n *node, path string) error {
	switch n.code {
	case cMap:
		if n.pred {
			return badTag(path, "option pred below a map: a map's values are not predicted; hold them in a slice of structs with an id field")
		}
	case cArray, cSlice, cPtr:
		return checkPredMap(n.elem, path+"[]")
	}
	return nil
}

// predictStruct replaces each pred value in dst, a copy of the newer
// baseline that shares no memory with it, by its prediction from dst's
// value and older's.
func predictStruct(p *plan, dst, older unsafe.Pointer) {
	for i := range p.fields {
		f := &p.fields[i]
		if f.node.pred {
			predictNode(f.node, ptrAt(dst, f.off), ptrAt(older, f.off))
		}
	}
}

// predictNode predicts the pred values of one value of node n. Arrays and
// slices pair their elements by index, entity sets by id (both sorted by
// id, as their deltas assume; an entity without a partner in older, or a
// pointer that is nil on either side, is not predicted).
func predictNode(n *node, dst, older unsafe.Pointer) {
	switch n.code {
	case cStruct:
		predictStruct(n.sub, dst, older)
	case cArray:
		for i := 0; i < n.count; i++ {
			off := uintptr(i) * n.stride
			predictNode(n.elem, ptrAt(dst, off), ptrAt(older, off))
		}
	case cSlice:
		sd, so := (*sliceHeader)(dst), (*sliceHeader)(older)
		if n.idField < 0 {
			for i := 0; i < min(sd.len, so.len); i++ {
				off := uintptr(i) * n.stride
				predictNode(n.elem, ptrAt(sd.data, off), ptrAt(so.data, off))
			}
			return
		}
		idf := &n.elem.sub.fields[n.idField]
		for i, j := 0, 0; i < sd.len && j < so.len; {
			pd, po := ptrAt(sd.data, uintptr(i)*n.stride), ptrAt(so.data, uintptr(j)*n.stride)
			id, io := loadInt(ptrAt(pd, idf.off), idf.node.mem), loadInt(ptrAt(po, idf.off), idf.node.mem)
			switch {
			case id == io:
				predictStruct(n.elem.sub, pd, po)
				i++
				j++
			case id < io:
				i++
			default:
				j++
			}
		}
	case cPtr:
		pd, po := *(*unsafe.Pointer)(dst), *(*unsafe.Pointer)(older)
		if pd != nil && po != nil {
			predictNode(n.elem, pd, po)
		}
	default:
		n.row.predict(n, dst, older)
	}
}

// predictLeaf stores the prediction of a pred leaf into dst. A value with
// no key, or a key outside the field's bounds, on either side (which no
// decoded value has) leaves dst as it is.
func predictLeaf(n *node, dst, older unsafe.Pointer) {
	k1, err := n.row.key(n, dst)
	if err != nil {
		return
	}
	k0, err := n.row.key(n, older)
	if err != nil {
		return
	}
	lo, hi, signed := n.row.keyBounds(n)
	if !keyWithin(k1, lo, hi, signed) || !keyWithin(k0, lo, hi, signed) {
		return
	}
	if k := extrapolate(k1, k0, lo, hi, signed); k != k1 {
		_ = n.row.storeKey(n, dst, k) // within the bounds: storeKey accepts it
	}
}

// keyWithin reports whether lo <= k <= hi, compared as int64s when signed.
func keyWithin(k, lo, hi uint64, signed bool) bool {
	if signed {
		return int64(lo) <= int64(k) && int64(k) <= int64(hi)
	}
	return lo <= k && k <= hi
}

// extrapolate returns k1 + (k1 - k0) clamped to lo..hi, computed without
// overflow; k1 and k0 lie in lo..hi.
func extrapolate(k1, k0, lo, hi uint64, signed bool) uint64 {
	down := k1 < k0
	if signed {
		down = int64(k1) < int64(k0)
	}
	if !down {
		// k0 <= k1 <= hi: both differences are exact as unsigned.
		if k1-k0 > hi-k1 {
			return hi
		}
		return k1 + (k1 - k0)
	}
	if k0-k1 > k1-lo {
		return lo
	}
	return k1 - (k0 - k1)
}

// ---- the predicted baseline ----

// predScratch holds the predicted baselines of one plan's messages: a
// value of the plan's type that a message copies its baseline into, kept
// for the next message so that its storage is reused.
type predScratch struct {
	pool sync.Pool // of unsafe.Pointer to a value of the plan's type
}

var predScratches sync.Map // *plan -> *predScratch

// predicted returns base with each pred value replaced by its prediction
// from base and older, in a scratch value to give back with ps.release; it
// returns base itself and a nil ps when there is nothing to predict: no
// older baseline, or no pred value in the plan.
func predicted(p *plan, older, base unsafe.Pointer) (pred unsafe.Pointer, ps *predScratch) {
	if older == nil || base == nil || !p.pred {
		return base, nil
	}
	s, ok := predScratches.Load(p)
	if !ok {
		s, _ = predScratches.LoadOrStore(p, &predScratch{})
	}
	ps = s.(*predScratch)
	v, _ := ps.pool.Get().(unsafe.Pointer)
	if v == nil {
		v = reflect.New(p.typ).UnsafePointer()
	}
	copyStruct(p, v, base)
	predictStruct(p, v, older)
	return v, ps
}

// release gives back a scratch value of predicted; on a nil ps it does
// nothing.
func (ps *predScratch) release(v unsafe.Pointer) {
	if ps != nil {
		ps.pool.Put(v)
	}
}

// ---- the API ----

// MarshalPredicted encodes what a receiver holding base and older (an
// earlier baseline) needs to rebuild cur, with each value tagged pred coded
// against its prediction base + (base - older). With older nil, or no pred
// value in T, it is MarshalDelta(base, cur). The receiver decodes it with
// UnmarshalPredicted and the same two baselines; docs/guide.md says how to
// pick older so that the prediction is a straight line in time.
func (c *Codec[T]) MarshalPredicted(older, base, cur *T) ([]byte, error) {
	b, ps := predicted(c.p, unsafe.Pointer(older), unsafe.Pointer(base))
	defer ps.release(b)
	w := bits.GetWriter()
	defer bits.PutWriter(w)
	if err := encodeDeltaRoot(c.p, w, b, unsafe.Pointer(cur), &c.o); err != nil {
		return nil, err
	}
	return append([]byte(nil), w.Bytes()...), nil
}

// AppendPredicted appends the delta from the prediction of older and base
// to cur to dst (see MarshalPredicted). On error it returns dst unchanged.
func (c *Codec[T]) AppendPredicted(dst []byte, older, base, cur *T) ([]byte, error) {
	b, ps := predicted(c.p, unsafe.Pointer(older), unsafe.Pointer(base))
	defer ps.release(b)
	return appendDeltaPlan(dst, c.p, b, unsafe.Pointer(cur), &c.o)
}

// UnmarshalPredicted rebuilds into v the value that data, written by
// MarshalPredicted with the same older and base, codes. v may be base or
// older. On error, v may be partly overwritten.
func (c *Codec[T]) UnmarshalPredicted(data []byte, older, base, v *T) error {
	b, ps := predicted(c.p, unsafe.Pointer(older), unsafe.Pointer(base))
	defer ps.release(b)
	return unmarshalDeltaPlan(data, c.p, b, unsafe.Pointer(v), &c.o)
}

// EncodePredicted writes to w the delta from the prediction of older and
// base to cur (see MarshalPredicted). On error w is left as it was.
func (c *Codec[T]) EncodePredicted(w *bits.Writer, older, base, cur *T) error {
	b, ps := predicted(c.p, unsafe.Pointer(older), unsafe.Pointer(base))
	defer ps.release(b)
	return encodeDeltaRoot(c.p, w, b, unsafe.Pointer(cur), &c.o)
}

// DecodePredicted reads from r what EncodePredicted wrote with the same
// older and base and rebuilds the value into v.
func (c *Codec[T]) DecodePredicted(r *bits.Reader, older, base, v *T) error {
	b, ps := predicted(c.p, unsafe.Pointer(older), unsafe.Pointer(base))
	defer ps.release(b)
	return decodeDeltaRoot(c.p, r, b, unsafe.Pointer(v), &c.o)
}

// Predicts reports whether T has a value tagged pred, that is whether the
// Predicted forms of a delta differ from the plain ones.
func (c *Codec[T]) Predicts() bool { return c.p.pred }
