package shape

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
)

// Diff calls emit with the path of every part of b that differs from a,
// once each, in wire order: a changed leaf (a scalar, a string, a
// quaternion) by its path ("Pos.X", "Rot"), an element of an array or a
// slice by index ("Items[2].Count"), an entity of an entity set by id
// ("Units[id=7].Hp"), a map entry by key (`Inv["sword"]`, "Slots[3]"); an
// element, entity or entry present on one side only by its own path; a
// pointer that became or stopped being nil by the pointer's. a and b are
// values of n's type as a decoder leaves them: quantized, so that equal
// means what a delta's changed bits mean. emit's path is valid during the
// call only. Diff allocates only for the ids of entity sets and the keys
// of maps.
func Diff(n *Node, a, b reflect.Value, path []byte, emit func(path []byte)) {
	switch n.Coding {
	case "struct":
		for i := range n.Fields {
			f := &n.Fields[i]
			p := path
			if len(p) > 0 {
				p = append(p, '.')
			}
			p = append(p, f.Name...)
			Diff(f.Node, a.FieldByIndex(f.Index), b.FieldByIndex(f.Index), p, emit)
		}
	case "array":
		for i := range a.Len() {
			Diff(n.Elem, a.Index(i), b.Index(i), indexPath(path, i), emit)
		}
	case "slice":
		if n.ID >= 0 {
			diffEntities(n, a, b, path, emit)
			return
		}
		for i := range max(a.Len(), b.Len()) {
			if i >= a.Len() || i >= b.Len() {
				emit(indexPath(path, i))
				continue
			}
			Diff(n.Elem, a.Index(i), b.Index(i), indexPath(path, i), emit)
		}
	case "map":
		diffMap(n, a, b, path, emit)
	case "ptr":
		switch {
		case a.IsNil() && b.IsNil():
		case a.IsNil() || b.IsNil():
			emit(path)
		default:
			Diff(n.Elem, a.Elem(), b.Elem(), path, emit)
		}
	default:
		if !Equal(a, b) {
			emit(path)
		}
	}
}

func indexPath(path []byte, i int) []byte {
	path = append(path, '[')
	path = strconv.AppendInt(path, int64(i), 10)
	return append(path, ']')
}

// diffEntities matches an entity set's elements by id, as its delta does.
func diffEntities(n *Node, a, b reflect.Value, path []byte, emit func([]byte)) {
	id := n.Elem.Fields[n.ID]
	idOf := func(v reflect.Value, i int) uint64 { return scalarBits(v.Index(i).FieldByIndex(id.Index)) }
	inA := make(map[uint64]int, a.Len())
	for i := range a.Len() {
		inA[idOf(a, i)] = i
	}
	seen := make(map[uint64]bool, b.Len())
	p := func(v reflect.Value, i int) []byte {
		q := append(path, "[id="...)
		q = appendScalar(q, v.Index(i).FieldByIndex(id.Index))
		return append(q, ']')
	}
	// Removed entities first, in a's order, then b's in its order: added
	// or changed.
	inB := make(map[uint64]bool, b.Len())
	for i := range b.Len() {
		inB[idOf(b, i)] = true
	}
	for i := range a.Len() {
		if !inB[idOf(a, i)] {
			emit(p(a, i))
		}
	}
	for i := range b.Len() {
		k := idOf(b, i)
		if seen[k] {
			continue
		}
		seen[k] = true
		j, ok := inA[k]
		if !ok {
			emit(p(b, i))
			continue
		}
		q := p(b, i)
		for fi := range n.Elem.Fields {
			if fi == n.ID {
				continue
			}
			f := &n.Elem.Fields[fi]
			fp := append(append(q, '.'), f.Name...)
			Diff(f.Node, a.Index(j).FieldByIndex(f.Index), b.Index(i).FieldByIndex(f.Index), fp, emit)
		}
	}
}

// diffMap matches entries by key, in the order of the keys' paths.
func diffMap(n *Node, a, b reflect.Value, path []byte, emit func([]byte)) {
	type entry struct {
		key  []byte
		a, b reflect.Value
	}
	byKey := map[string]*entry{}
	var order []*entry
	add := func(m reflect.Value, side int) {
		it := m.MapRange()
		for it.Next() {
			k := appendKey(nil, it.Key())
			e := byKey[string(k)]
			if e == nil {
				e = &entry{key: k}
				byKey[string(k)] = e
				order = append(order, e)
			}
			if side == 0 {
				e.a = it.Value()
			} else {
				e.b = it.Value()
			}
		}
	}
	add(a, 0)
	add(b, 1)
	slices.SortFunc(order, func(x, y *entry) int { return bytes.Compare(x.key, y.key) })
	for _, e := range order {
		p := append(append(append(path, '['), e.key...), ']')
		if !e.a.IsValid() || !e.b.IsValid() {
			emit(p)
			continue
		}
		Diff(n.Elem, e.a, e.b, p, emit)
	}
}

func appendKey(dst []byte, k reflect.Value) []byte {
	if k.Kind() == reflect.String {
		return strconv.AppendQuote(dst, k.String())
	}
	return appendScalar(dst, k)
}

func appendScalar(dst []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(dst, v.Uint(), 10)
	case reflect.Bool:
		return strconv.AppendBool(dst, v.Bool())
	case reflect.String:
		return strconv.AppendQuote(dst, v.String())
	case reflect.Float32, reflect.Float64:
		return strconv.AppendFloat(dst, v.Float(), 'g', -1, 64)
	}
	return fmt.Appendf(dst, "%v", v)
}

// scalarBits is an integer id's value as one key.
func scalarBits(v reflect.Value) uint64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return uint64(v.Int())
	}
	return v.Uint()
}

// Equal reports whether two values of one type are equal in every part,
// exported or not (readable through reflect without Interface): floats by
// ==, which is what quantized values need.
func Equal(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Array:
		for i := range a.Len() {
			if !Equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() { // nil and empty decode alike
			return false
		}
		if a.Type().Elem().Kind() == reflect.Uint8 {
			return bytes.Equal(a.Bytes(), b.Bytes())
		}
		for i := range a.Len() {
			if !Equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !Equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Pointer() == b.Pointer() || Equal(a.Elem(), b.Elem())
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			v := b.MapIndex(it.Key())
			if !v.IsValid() || !Equal(it.Value(), v) {
				return false
			}
		}
		return true
	}
	return false
}
