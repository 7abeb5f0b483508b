package bitwire

import (
	"encoding/binary"
	mbits "math/bits"
	"reflect"
	"unsafe"
)

// Equality after quantization: two values are equal when they encode to
// the same bits, which is what a delta's changed bits say and what
// Codec.Equal reports. Pointer-free values that are equal byte for byte
// are equal without looking at their codings.

func eqStruct(p *plan, a, b unsafe.Pointer, depth int) bool {
	if depth > DefaultMaxDepth {
		return false
	}
	for i := range p.fields {
		f := &p.fields[i]
		if !eqNode(f.node, ptrAt(a, f.off), ptrAt(b, f.off), depth) {
			return false
		}
	}
	return true
}

func eqNode(n *node, a, b unsafe.Pointer, depth int) bool {
	if n.pod && memEqual(a, b, n.size) {
		return true // the same bits code the same way
	}
	switch n.code {
	case cStruct:
		return eqStruct(n.sub, a, b, depth+1)
	case cArray:
		return eqElems(n, a, b, n.count, depth)
	case cSlice:
		sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
		return sa.len == sb.len && eqElems(n, sa.data, sb.data, sa.len, depth)
	case cPtr:
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa == nil || pb == nil {
			return pa == nil && pb == nil
		}
		return eqNode(n.elem, pa, pb, depth+1)
	case cMap:
		ma, mb := reflect.NewAt(n.typ, a).Elem(), reflect.NewAt(n.typ, b).Elem()
		if ma.Len() != mb.Len() {
			return false
		}
		it := ma.MapRange()
		for it.Next() {
			vb := mb.MapIndex(it.Key())
			if !vb.IsValid() {
				return false
			}
			va := reflect.New(n.typ.Elem())
			va.Elem().Set(it.Value())
			cb := reflect.New(n.typ.Elem())
			cb.Elem().Set(vb)
			if !eqNode(n.elem, va.UnsafePointer(), cb.UnsafePointer(), depth+1) {
				return false
			}
		}
		return true
	}
	r := n.row // a leaf
	if r.eq != nil {
		return r.eq(n, a, b)
	}
	ka, ea := r.key(n, a)
	kb, eb := r.key(n, b)
	return ea == nil && eb == nil && ka == kb
}

func eqElems(n *node, a, b unsafe.Pointer, count, depth int) bool {
	for i := 0; i < count; i++ {
		off := uintptr(i) * n.stride
		if !eqNode(n.elem, ptrAt(a, off), ptrAt(b, off), depth) {
			return false
		}
	}
	return true
}

// memEqual reports whether size bytes at a and b are equal. The sizes of
// single floats and integers are one comparison, without a call.
func memEqual(a, b unsafe.Pointer, size uintptr) bool {
	switch size {
	case 4:
		return *(*uint32)(a) == *(*uint32)(b)
	case 8:
		return *(*uint64)(a) == *(*uint64)(b)
	}
	return a == b || string(unsafe.Slice((*byte)(a), size)) == string(unsafe.Slice((*byte)(b), size))
}

// equalRun returns how many leading elements of two arrays of count
// elements, stride bytes apart, are equal byte for byte.
func equalRun(a, b unsafe.Pointer, count int, stride uintptr) int {
	size := uintptr(count) * stride
	d := firstDiff(unsafe.Slice((*byte)(a), size), unsafe.Slice((*byte)(b), size))
	return int(uintptr(d) / stride)
}

// firstDiff returns the index of the first byte where a and b differ, or
// len(a) when b starts with a. It skips equal stretches a block at a time
// (one vectorised memory comparison each), then compares 32 bytes at a
// time (four words at once), then a word at a time, and places the
// difference in its word by the trailing zeros of the words' exclusive or
// (little-endian loads: byte k of the word is bits 8k to 8k+7). A
// difference in the first 32 bytes (a changed first element) is found
// a word at a time, without a call.
func firstDiff(a, b []byte) int {
	const block = 256
	n := len(a)
	b = b[:n]
	le := binary.LittleEndian
	i := 0
	if n >= 32 && !differ32(a, b) { // a changed first element: no call
		i = 32
		for i+block <= n && string(a[i:i+block]) == string(b[i:i+block]) {
			i += block
		}
	}
	for i+32 <= n && !differ32(a[i:], b[i:]) {
		i += 32
	}
	for ; i+8 <= n; i += 8 {
		if d := le.Uint64(a[i:]) ^ le.Uint64(b[i:]); d != 0 {
			return i + mbits.TrailingZeros64(d)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// differ32 reports whether the first 32 bytes of a and b differ, comparing
// four words at once.
func differ32(a, b []byte) bool {
	le := binary.LittleEndian
	x, y := a[:32], b[:32]
	return (le.Uint64(x)^le.Uint64(y))|(le.Uint64(x[8:])^le.Uint64(y[8:]))|
		(le.Uint64(x[16:])^le.Uint64(y[16:]))|(le.Uint64(x[24:])^le.Uint64(y[24:])) != 0
}

// firstWord returns the first eight bytes at p, which must hold them.
func firstWord(p unsafe.Pointer) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(p), 8))
}
