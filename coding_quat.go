package bitwire

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// quat[,bits=N] on [4]float32, [4]float64 or a struct of float fields X, Y,
// Z and W: smallest three, the index of the largest component in 2 bits
// and the other three in N bits each (9 by default).

var quatCoder = coder{
	name: "quat",
	tag:  true,
	fits: func(t reflect.Type) bool {
		return t.Kind() == reflect.Array && t.Len() == 4 && isFloat(t.Elem()) || t.Kind() == reflect.Struct && t != timeType
	},
	fill:  fillQuat,
	width: func(n *node) int { return n.quat.Bits() },
	key:   quatKey,
	// pred: the rotation from the older baseline to the newer applied again
	predict: predictQuat,
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
	schemaOK: func(ns *NodeSchema) bool { return ns.Quat != nil },
	hash:     func(f *fpHasher, ns *NodeSchema) { f.u64(uint64(ns.Quat.Bits)) },
	describe: func(ns *NodeSchema) string { return fmt.Sprintf("component bits=%d", ns.Quat.Bits) },
}

// quatKey is the key of a quaternion: its smallest-three packing.
func quatKey(n *node, p unsafe.Pointer) (uint64, error) { return n.quat.Pack(loadQuat(n, p)) }

// predictQuat replaces the rotation at dst, a copy of the newer baseline,
// by the rotation from older to it applied once more (fields.Quat.Predict
// on their packings), stored as Unpack gives it. A rotation that does not
// pack on either side (which no decoded value is) leaves dst as it is.
func predictQuat(n *node, dst, older unsafe.Pointer) {
	k1, err := quatKey(n, dst)
	if err != nil {
		return
	}
	k0, err := quatKey(n, older)
	if err != nil {
		return
	}
	k, err := n.quat.Predict(k0, k1)
	if err != nil || k == k1 {
		return
	}
	v, _ := n.quat.Unpack(k) // Pack's result: Unpack accepts it
	storeQuat(n, dst, v)
}

func fillQuat(nd *node, path string, t reflect.Type, s spec, what string) error {
	if err := s.reject(path, what, "min", "max", "prec", "group", "maxlen", "id", "clamp", "dmin"); err != nil {
		return err
	}
	n := 9
	if s.hasBits {
		n = s.bits
	}
	q, err := fields.NewQuat(n)
	if err != nil {
		return badTag(path, "%v", err)
	}
	switch {
	case t.Kind() == reflect.Array && t.Len() == 4 && (t.Elem().Kind() == reflect.Float32 || t.Elem().Kind() == reflect.Float64):
		nd.mem = memOf(t.Elem())
		sz := t.Elem().Size()
		nd.qoff = [4]uintptr{0, sz, 2 * sz, 3 * sz}
	case t.Kind() == reflect.Struct:
		for i, name := range []string{"X", "Y", "Z", "W"} {
			f, ok := t.FieldByName(name)
			if !ok || len(f.Index) != 1 || (f.Type.Kind() != reflect.Float32 && f.Type.Kind() != reflect.Float64) {
				return badTag(path, "quat on struct %s needs float fields X, Y, Z and W", t)
			}
			m := memOf(f.Type)
			if i > 0 && m != nd.mem {
				return badTag(path, "quat on struct %s needs X, Y, Z and W of one float type", t)
			}
			nd.mem = m
			nd.qoff[i] = f.Offset
		}
	default:
		return badTag(path, "coding quat does not apply to %s (use [4]float32, [4]float64 or a struct of X, Y, Z, W)", t)
	}
	nd.quat = q
	return nil
}

func (e *encoder) encQuat(n *node, p unsafe.Pointer) error {
	return n.quat.Write(e.w, loadQuat(n, p))
}

func (d *decoder) decQuat(n *node, p unsafe.Pointer) error {
	q, err := n.quat.Read(d.r)
	if err != nil {
		return err
	}
	storeQuat(n, p, q)
	return nil
}
