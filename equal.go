package bitwire

import (
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
		if ma.Len() != mb.Len() || zeroSignsDiffer(ma, mb) {
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
// single floats and integers are one comparison, and 16 bytes two, without
// a call (byte arrays and load64: whole words only where the machine loads
// them unaligned, since a value's alignment may be less than its size).
func memEqual(a, b unsafe.Pointer, size uintptr) bool {
	switch size {
	case 4:
		return *(*[4]byte)(a) == *(*[4]byte)(b)
	case 8:
		return load64(a) == load64(b)
	case 16: // a quaternion of float32s
		return load64(a) == load64(b) && load64(unsafe.Add(a, 8)) == load64(unsafe.Add(b, 8))
	}
	return a == b || string(unsafe.Slice((*byte)(a), size)) == string(unsafe.Slice((*byte)(b), size))
}

// equalRun returns how many leading elements of two arrays of count
// elements, stride bytes apart, are equal byte for byte.
func equalRun(a, b unsafe.Pointer, count int, stride uintptr) int {
	d := memDiff(a, b, count*int(stride))
	return int(uintptr(d) / stride)
}

// firstDiff returns the index of the first byte where a and b differ, or
// len(a) when b starts with a. Where the processor has vector
// instructions (vecDiff: AVX2 on amd64) they compare stretches of 128
// bytes or more; else it compares 64 bytes at a time (eight words at
// once, no call). Then it compares a word at a time, then the last eight
// bytes as one word that overlaps bytes already known equal, and places
// the difference in its word by the trailing zeros of the words'
// exclusive or (native loads; on a little-endian machine byte k of the
// word is bits 8k to 8k+7, on a big-endian one the leading zeros place
// it). Every load lies inside both slices. (A vectorised memory
// comparison a block at a time, then a narrowing to the word, took more
// instructions: the narrowing compares the differing block again.)
func firstDiff(a, b []byte) int {
	if len(a) == 0 {
		return 0
	}
	b = b[:len(a)]
	return memDiff(unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.SliceData(b)), len(a))
}

// memDiff is firstDiff of the n bytes at pa and pb.
func memDiff(pa, pb unsafe.Pointer, n int) int {
	if n < 8 {
		i := 0
		for i < n && *(*byte)(unsafe.Add(pa, i)) == *(*byte)(unsafe.Add(pb, i)) {
			i++
		}
		return i
	}
	i := 0
	if n >= 128 { // long stretches by vector instructions where there are any
		if v, ok := vecDiff(pa, pb, n); ok {
			if v < n&^63 {
				return v
			}
			i = v
		}
	}
	for ; i+64 <= n; i += 64 { // eight words at once
		x, y := unsafe.Add(pa, i), unsafe.Add(pb, i)
		if (load64(x)^load64(y))|(load64(unsafe.Add(x, 8))^load64(unsafe.Add(y, 8)))|
			(load64(unsafe.Add(x, 16))^load64(unsafe.Add(y, 16)))|(load64(unsafe.Add(x, 24))^load64(unsafe.Add(y, 24)))|
			(load64(unsafe.Add(x, 32))^load64(unsafe.Add(y, 32)))|(load64(unsafe.Add(x, 40))^load64(unsafe.Add(y, 40)))|
			(load64(unsafe.Add(x, 48))^load64(unsafe.Add(y, 48)))|(load64(unsafe.Add(x, 56))^load64(unsafe.Add(y, 56))) != 0 {
			break
		}
	}
	for ; i+8 <= n; i += 8 {
		if d := load64(unsafe.Add(pa, i)) ^ load64(unsafe.Add(pb, i)); d != 0 {
			return i + diffByte(d)
		}
	}
	if i < n { // the last 8 bytes; those before i are equal
		if d := load64(unsafe.Add(pa, n-8)) ^ load64(unsafe.Add(pb, n-8)); d != 0 {
			return n - 8 + diffByte(d)
		}
	}
	return n
}

// diffByte returns which byte of a word is the first (lowest addressed)
// to differ, given the nonzero exclusive or d of two native words.
func diffByte(d uint64) int {
	if bigEndian { // byte k of the word is bits 56-8k to 63-8k
		return mbits.LeadingZeros64(d) / 8
	}
	return mbits.TrailingZeros64(d) / 8
}

// bigEndian is whether words load big-endian (firstDiff's native loads).
var bigEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 0 }()
