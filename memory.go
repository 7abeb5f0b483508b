package bitwire

import (
	"math"
	"reflect"
	"unsafe"
)

// Loading and storing scalars of every in-memory kind at raw addresses.

type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

func loadInt(p unsafe.Pointer, m memKind) uint64 {
	switch m {
	case mU8:
		return uint64(*(*uint8)(p))
	case mU16:
		return uint64(*(*uint16)(p))
	case mU32:
		return uint64(*(*uint32)(p))
	case mU64:
		return *(*uint64)(p)
	case mI8:
		return uint64(int64(*(*int8)(p)))
	case mI16:
		return uint64(int64(*(*int16)(p)))
	case mI32:
		return uint64(int64(*(*int32)(p)))
	case mI64:
		return uint64(*(*int64)(p))
	}
	return 0
}

// loadInts is loadInt at p and at q, with one dispatch on m.
func loadInts(p, q unsafe.Pointer, m memKind) (uint64, uint64) {
	switch m {
	case mU8:
		return uint64(*(*uint8)(p)), uint64(*(*uint8)(q))
	case mU16:
		return uint64(*(*uint16)(p)), uint64(*(*uint16)(q))
	case mU32:
		return uint64(*(*uint32)(p)), uint64(*(*uint32)(q))
	case mU64, mI64:
		return *(*uint64)(p), *(*uint64)(q)
	case mI8:
		return uint64(int64(*(*int8)(p))), uint64(int64(*(*int8)(q)))
	case mI16:
		return uint64(int64(*(*int16)(p))), uint64(int64(*(*int16)(q)))
	case mI32:
		return uint64(int64(*(*int32)(p))), uint64(int64(*(*int32)(q)))
	}
	return 0, 0
}

func storeInt(p unsafe.Pointer, m memKind, v uint64) {
	switch m {
	case mU8, mI8:
		*(*uint8)(p) = uint8(v)
	case mU16, mI16:
		*(*uint16)(p) = uint16(v)
	case mU32, mI32:
		*(*uint32)(p) = uint32(v)
	case mU64, mI64:
		*(*uint64)(p) = v
	}
}

// fitsInt reports whether v (sign-extended for signed kinds) is a value of m.
func fitsInt(m memKind, v uint64) bool {
	switch m {
	case mU8:
		return v <= math.MaxUint8
	case mU16:
		return v <= math.MaxUint16
	case mU32:
		return v <= math.MaxUint32
	case mI8:
		return int64(v) >= math.MinInt8 && int64(v) <= math.MaxInt8
	case mI16:
		return int64(v) >= math.MinInt16 && int64(v) <= math.MaxInt16
	case mI32:
		return int64(v) >= math.MinInt32 && int64(v) <= math.MaxInt32
	}
	return true
}

func loadFloat(p unsafe.Pointer, m memKind) float64 {
	if m == mF32 {
		return float64(*(*float32)(p))
	}
	return *(*float64)(p)
}

func storeFloat(p unsafe.Pointer, m memKind, v float64) {
	if m == mF32 {
		*(*float32)(p) = float32(v)
	} else {
		*(*float64)(p) = v
	}
}

func loadQuat(n *node, p unsafe.Pointer) [4]float64 {
	o := &n.qoff
	if n.mem == mF32 { // the common case, unrolled
		return [4]float64{float64(*(*float32)(ptrAt(p, o[0]))), float64(*(*float32)(ptrAt(p, o[1]))),
			float64(*(*float32)(ptrAt(p, o[2]))), float64(*(*float32)(ptrAt(p, o[3])))}
	}
	return [4]float64{*(*float64)(ptrAt(p, o[0])), *(*float64)(ptrAt(p, o[1])),
		*(*float64)(ptrAt(p, o[2])), *(*float64)(ptrAt(p, o[3]))}
}

func storeQuat(n *node, p unsafe.Pointer, q [4]float64) {
	o := &n.qoff
	if n.mem == mF32 { // the common case, unrolled as in loadQuat
		*(*float32)(ptrAt(p, o[0])), *(*float32)(ptrAt(p, o[1])) = float32(q[0]), float32(q[1])
		*(*float32)(ptrAt(p, o[2])), *(*float32)(ptrAt(p, o[3])) = float32(q[2]), float32(q[3])
		return
	}
	for i := range q {
		storeFloat(ptrAt(p, o[i]), n.mem, q[i])
	}
}

// ptrAt offsets p by off bytes.
func ptrAt(p unsafe.Pointer, off uintptr) unsafe.Pointer { return unsafe.Add(p, off) }

// hasPointers reports whether values of t hold pointers (strings, slices,
// maps, pointers, interfaces, channels and functions included).
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

// storeIntErr stores v unless err is set, and returns err: a decoded
// integer's last step.
func storeIntErr(p unsafe.Pointer, m memKind, v uint64, err error) error {
	if err == nil {
		storeInt(p, m, v)
	}
	return err
}
