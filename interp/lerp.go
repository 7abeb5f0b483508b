package interp

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/internal/shape"
)

// Config is an Interpolator's choice of teleports.
type Config[E any] struct {
	// Threshold, when above 0, makes a jump a teleport: a quantized float
	// (q or fixed) that moves by more than Threshold, in its own units,
	// between the two states. A teleport is not interpolated: the older
	// state is held until the render time reaches the newer one.
	Threshold float64
	// Teleport, when not nil, decides instead of Threshold.
	Teleport func(a, b *E) bool
}

// Interpolator builds states between two states of an entity, by the
// codings of the codec's Schema. Create it with New.
type Interpolator[E any] struct {
	root  *shape.Node
	cfg   Config[E]
	lerps map[*shape.Node]bool // whether a node holds anything Lerp changes
}

// New returns the Interpolator of entities encoded by c.
func New[E any](c *bitwire.Codec[E], cfg Config[E]) (*Interpolator[E], error) {
	if c == nil {
		return nil, errors.New("interp: New with a nil codec")
	}
	if cfg.Threshold < 0 || math.IsNaN(cfg.Threshold) {
		return nil, fmt.Errorf("interp: teleport threshold %v", cfg.Threshold)
	}
	n, err := shape.Of(reflect.TypeFor[E](), c.Schema())
	if err != nil {
		return nil, fmt.Errorf("interp: %w", err)
	}
	ip := &Interpolator[E]{root: n, cfg: cfg, lerps: map[*shape.Node]bool{}}
	ip.mark(n)
	return ip, nil
}

// mark fills lerps for n and below; a cycle counts as false until proven.
func (ip *Interpolator[E]) mark(n *shape.Node) bool {
	if v, ok := ip.lerps[n]; ok {
		return v
	}
	ip.lerps[n] = false
	v := false
	switch n.Coding {
	case "q", "fixed", "quat":
		v = true
	case "struct":
		for i := range n.Fields {
			v = ip.mark(n.Fields[i].Node) || v
		}
	case "array", "slice", "ptr":
		v = ip.mark(n.Elem)
	}
	ip.lerps[n] = v
	return v
}

// Lerp sets dst to the state a fraction t (0..1) of the way from a to b:
// q and fixed floats lerped between their decoded values (the same as
// lerping the grid indexes, the grid being affine), quaternions slerped
// along the shorter arc, elements of arrays and of slices of one length
// by index, entities of entity sets by id; everything else (integers,
// bools, strings, maps, elements present on one side only) is a's. dst
// may share a's slices, maps and pointees where nothing in them was
// interpolated: treat it as read-only. It does not test teleports (see
// Teleport).
func (ip *Interpolator[E]) Lerp(dst, a, b *E, t float64) {
	*dst = *a
	t = min(max(t, 0), 1)
	ip.walk(ip.root, reflect.ValueOf(dst).Elem(), reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), t)
}

// Teleport reports whether going from a to b is a teleport (Config).
func (ip *Interpolator[E]) Teleport(a, b *E) bool {
	if ip.cfg.Teleport != nil {
		return ip.cfg.Teleport(a, b)
	}
	if ip.cfg.Threshold == 0 {
		return false
	}
	return ip.jump(ip.root, reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem())
}

// writable returns v made settable: v is addressable (a field of dst), but
// reflect refuses to set an unexported field, which bitwire encodes when
// it is tagged.
func writable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// readable returns v without the read-only mark of an unexported field,
// so that it may be copied from (reflect.Copy, Set): v is addressable (a
// field of a, b, or an element of theirs).
func readable(v reflect.Value) reflect.Value {
	if v.CanInterface() || !v.CanAddr() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

func (ip *Interpolator[E]) walk(n *shape.Node, d, a, b reflect.Value, t float64) {
	if !ip.lerps[n] {
		return
	}
	switch n.Coding {
	case "q", "fixed":
		x, y := a.Float(), b.Float()
		writable(d).SetFloat(x + (y-x)*t)
	case "quat":
		slerp(n, writable(d), a, b, t)
	case "struct":
		for i := range n.Fields {
			f := &n.Fields[i]
			ip.walk(f.Node, d.FieldByIndex(f.Index), a.FieldByIndex(f.Index), b.FieldByIndex(f.Index), t)
		}
	case "array":
		for i := range a.Len() {
			ip.walk(n.Elem, d.Index(i), a.Index(i), b.Index(i), t)
		}
	case "slice":
		if a.Len() == 0 {
			return
		}
		// dst shares a's storage: interpolate into a copy of its own.
		c := reflect.MakeSlice(a.Type(), a.Len(), a.Len())
		reflect.Copy(c, readable(a))
		writable(d).Set(c)
		if n.ID >= 0 {
			id := n.Elem.Fields[n.ID].Index
			at := make(map[uint64]int, b.Len())
			for j := range b.Len() {
				at[idKey(b.Index(j).FieldByIndex(id))] = j
			}
			for i := range c.Len() {
				if j, ok := at[idKey(c.Index(i).FieldByIndex(id))]; ok {
					ip.walk(n.Elem, c.Index(i), a.Index(i), b.Index(j), t)
				}
			}
			return
		}
		if a.Len() == b.Len() {
			for i := range c.Len() {
				ip.walk(n.Elem, c.Index(i), a.Index(i), b.Index(i), t)
			}
		}
	case "ptr":
		if a.IsNil() || b.IsNil() {
			return
		}
		c := reflect.New(a.Type().Elem())
		c.Elem().Set(readable(a.Elem()))
		writable(d).Set(c)
		ip.walk(n.Elem, c.Elem(), a.Elem(), b.Elem(), t)
	}
}

// jump reports whether a q or fixed float moves by more than the
// threshold between a and b.
func (ip *Interpolator[E]) jump(n *shape.Node, a, b reflect.Value) bool {
	if !ip.lerps[n] {
		return false
	}
	switch n.Coding {
	case "q", "fixed":
		return math.Abs(b.Float()-a.Float()) > ip.cfg.Threshold
	case "struct":
		for i := range n.Fields {
			f := &n.Fields[i]
			if ip.jump(f.Node, a.FieldByIndex(f.Index), b.FieldByIndex(f.Index)) {
				return true
			}
		}
	case "array":
		for i := range a.Len() {
			if ip.jump(n.Elem, a.Index(i), b.Index(i)) {
				return true
			}
		}
	case "slice":
		if n.ID < 0 && a.Len() == b.Len() {
			for i := range a.Len() {
				if ip.jump(n.Elem, a.Index(i), b.Index(i)) {
					return true
				}
			}
		}
	case "ptr":
		if !a.IsNil() && !b.IsNil() {
			return ip.jump(n.Elem, a.Elem(), b.Elem())
		}
	}
	return false
}

func idKey(v reflect.Value) uint64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return uint64(v.Int())
	}
	return v.Uint()
}

// slerp writes to d the quaternion a fraction t of the way from a to b
// along the shorter arc (q and -q are one rotation), normalized.
func slerp(n *shape.Node, d, a, b reflect.Value, t float64) {
	comp := func(v reflect.Value, i int) reflect.Value {
		if n.QuatFields != nil {
			return v.FieldByIndex(n.QuatFields[i])
		}
		return v.Index(i)
	}
	var p, q [4]float64
	dot := 0.0
	for i := range 4 {
		p[i], q[i] = comp(a, i).Float(), comp(b, i).Float()
		dot += p[i] * q[i]
	}
	if dot < 0 {
		dot = -dot
		for i := range q {
			q[i] = -q[i]
		}
	}
	wa, wb := 1-t, t
	if dot < 0.9995 { // else nearly parallel: lerp, then normalize
		th := math.Acos(min(dot, 1))
		s := math.Sin(th)
		wa, wb = math.Sin((1-t)*th)/s, math.Sin(t*th)/s
	}
	var r [4]float64
	norm := 0.0
	for i := range r {
		r[i] = wa*p[i] + wb*q[i]
		norm += r[i] * r[i]
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		return
	}
	for i := range r {
		writable(comp(d, i)).SetFloat(r[i] / norm)
	}
}

// Source is what holds the kept states of entities: replicate.Client.
type Source[E any] interface {
	States(id uint32, f func(tick uint32, e *E) bool) bool
}

// Sample tells how Interpolator.Sample built a state.
type Sample struct {
	// From and To are the ticks of the two states around the render
	// time, Frac how far between them it is (0..1). From == To when a
	// state was held.
	From, To uint32
	Frac     float64
	// Held: the render time is outside the kept states (before the
	// oldest: it is held; after the newest: the newest is held, never
	// extrapolated), or the entity has a single state.
	Held bool
	// Teleport: the two states are a teleport; the older is held.
	Teleport bool
}

// Sample sets dst to id's state at the render tick (Clock.RenderTick): the
// two states of src around it, lerped (Lerp), unless they are a teleport.
// It reports false when src does not hold id. dst may share storage with
// src's states: read-only, valid until src changes (the next Decode).
func (ip *Interpolator[E]) Sample(src Source[E], id uint32, render float64, dst *E) (Sample, bool) {
	var prev, next *E
	var pt, nt uint32
	held := src.States(id, func(tick uint32, e *E) bool {
		if float64(tick) <= render {
			prev, pt = e, tick
			return true
		}
		next, nt = e, tick
		return false
	})
	switch {
	case !held:
		return Sample{}, false
	case prev == nil && next == nil:
		return Sample{}, false
	case prev == nil:
		*dst = *next
		return Sample{From: nt, To: nt, Held: true}, true
	case next == nil:
		*dst = *prev
		return Sample{From: pt, To: pt, Held: true}, true
	}
	s := Sample{From: pt, To: nt, Frac: (render - float64(pt)) / float64(nt-pt)}
	if ip.Teleport(prev, next) {
		*dst = *prev
		s.Teleport = true
		return s, true
	}
	ip.Lerp(dst, prev, next, s.Frac)
	return s, true
}
