package bitwire

import (
	"reflect"
	"slices"
)

// sortedKeys are a map's keys in ascending order (the order of keyLess),
// held as plain integers, floats or strings and sorted natively, for the
// decoder of a map delta: its removed and changed entries are named by
// their positions in that order.
type sortedKeys struct {
	typ reflect.Type
	i   []int64   // signed integer keys
	u   []uint64  // unsigned integer keys; bools as 0 and 1
	f   []float64 // float keys (never NaN: the encoder refuses them)
	s   []string  // string keys
}

// sortKeys returns m's keys in ascending order.
func sortKeys(m reflect.Value) sortedKeys {
	typ := m.Type().Key()
	sk := sortedKeys{typ: typ}
	k := reflect.New(typ).Elem()
	it := m.MapRange()
	switch typ.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		sk.i = make([]int64, 0, m.Len())
		for it.Next() {
			k.SetIterKey(it)
			sk.i = append(sk.i, k.Int())
		}
		slices.Sort(sk.i)
	case reflect.Float32, reflect.Float64:
		sk.f = make([]float64, 0, m.Len())
		for it.Next() {
			k.SetIterKey(it)
			sk.f = append(sk.f, k.Float())
		}
		slices.Sort(sk.f)
	case reflect.String:
		sk.s = make([]string, 0, m.Len())
		for it.Next() {
			k.SetIterKey(it)
			sk.s = append(sk.s, k.String())
		}
		slices.Sort(sk.s)
	case reflect.Bool:
		sk.u = make([]uint64, 0, m.Len())
		for it.Next() {
			k.SetIterKey(it)
			if k.Bool() {
				sk.u = append(sk.u, 1)
			} else {
				sk.u = append(sk.u, 0)
			}
		}
		slices.Sort(sk.u)
	default: // unsigned integers
		sk.u = make([]uint64, 0, m.Len())
		for it.Next() {
			k.SetIterKey(it)
			sk.u = append(sk.u, k.Uint())
		}
		slices.Sort(sk.u)
	}
	return sk
}

// key returns the i-th key as a value of the map's key type.
func (sk *sortedKeys) key(i int) reflect.Value {
	v := reflect.New(sk.typ).Elem()
	switch {
	case sk.i != nil:
		v.SetInt(sk.i[i])
	case sk.f != nil:
		v.SetFloat(sk.f[i])
	case sk.s != nil:
		v.SetString(sk.s[i])
	case sk.typ.Kind() == reflect.Bool:
		v.SetBool(sk.u[i] == 1)
	default:
		v.SetUint(sk.u[i])
	}
	return v
}
