package bitwire

import (
	"reflect"
	"unsafe"
)

// Copy makes dst a deep copy of src: every field the codec encodes is
// copied, and dst shares no slice, map or pointee with src afterwards (its
// own storage is reused where it is large enough). Fields the codec skips
// are left as they were in dst. dst and src may be the same value; Copy
// does nothing when either is nil.
//
// Keeping a copy of a snapshot (a baseline history, say) with Copy costs no
// encoding and, once dst's storage has grown, no allocation for values
// without maps.
func (c *Codec[T]) Copy(dst, src *T) {
	if dst == nil || src == nil {
		return
	}
	copyStruct(c.p, unsafe.Pointer(dst), unsafe.Pointer(src))
}

func copyStruct(p *plan, dst, src unsafe.Pointer) {
	if dst == src {
		return
	}
	for i := range p.fields {
		f := &p.fields[i]
		copyNode(f.node, ptrAt(dst, f.off), ptrAt(src, f.off))
	}
}

// copyNode makes dst's value equal to src's without sharing any mutable
// memory with it (slices, pointees and maps are copied), reusing dst's own
// storage where it can.
func copyNode(n *node, dst, src unsafe.Pointer) {
	if dst == src {
		return
	}
	if n.pod {
		copyPod(dst, src, n.size)
		return
	}
	// What is left holds pointers somewhere: a container, or a leaf whose
	// row copies it.
	switch n.code {
	case cStruct:
		copyStruct(n.sub, dst, src)
	case cArray:
		for i := 0; i < n.count; i++ {
			off := uintptr(i) * n.stride
			copyNode(n.elem, ptrAt(dst, off), ptrAt(src, off))
		}
	case cSlice:
		ss, ds := (*sliceHeader)(src), (*sliceHeader)(dst)
		if ss.len == 0 {
			*ds = sliceHeader{}
			return
		}
		growSlice(n, ds, ss.len, ss.data)
		for i := 0; i < ss.len; i++ {
			off := uintptr(i) * n.stride
			copyNode(n.elem, ptrAt(ds.data, off), ptrAt(ss.data, off))
		}
	case cPtr:
		sp, dp := *(*unsafe.Pointer)(src), (*unsafe.Pointer)(dst)
		if sp == nil {
			*dp = nil
			return
		}
		if *dp == nil || *dp == sp {
			*dp = reflect.New(n.typ.Elem()).UnsafePointer()
		}
		copyNode(n.elem, *dp, sp)
	case cMap:
		sm := reflect.NewAt(n.typ, src).Elem()
		dm := reflect.NewAt(n.typ, dst).Elem()
		if sm.Len() == 0 {
			dm.SetZero()
			return
		}
		dm.Set(copyMap(n, sm, sm.Len()))
	default:
		n.row.copy(n, dst, src)
	}
}

// copyMap returns a deep copy of map m (of map node n) with room for size
// entries. Keys and values go through two scratch values, without an
// allocation per entry; a value holding pointers is copied deeply into a
// third.
func copyMap(n *node, m reflect.Value, size int) reflect.Value {
	nm := reflect.MakeMapWithSize(n.typ, size)
	k := reflect.New(n.typ.Key()).Elem()
	sv := reflect.New(n.typ.Elem())
	dv := sv
	if !n.elem.pod {
		dv = reflect.New(n.typ.Elem())
	}
	it := m.MapRange()
	for it.Next() {
		k.SetIterKey(it)
		sv.Elem().SetIterValue(it)
		if !n.elem.pod {
			dv.Elem().SetZero()
			copyNode(n.elem, dv.UnsafePointer(), sv.UnsafePointer())
		}
		nm.SetMapIndex(k, dv.Elem())
	}
	return nm
}

// growSlice makes ds a slice of length l with storage of its own: it reuses
// ds's array when it is large enough and is not avoid (the baseline's).
func growSlice(n *node, ds *sliceHeader, l int, avoid unsafe.Pointer) {
	if ds.cap < l || ds.data == avoid {
		nv := reflect.MakeSlice(n.typ, l, l)
		ds.data, ds.cap = nv.UnsafePointer(), l
	}
	ds.len = l
}

// copyPod copies size bytes of a pointer-free value; the common sizes are
// single moves where the machine moves unaligned words (byte arrays, so
// the compiler moves bytes where it may not: a value of 8 bytes may be
// aligned to 4 or 1).
func copyPod(dst, src unsafe.Pointer, size uintptr) {
	switch size {
	case 4:
		*(*[4]byte)(dst) = *(*[4]byte)(src)
	case 8:
		*(*[8]byte)(dst) = *(*[8]byte)(src)
	case 1:
		*(*uint8)(dst) = *(*uint8)(src)
	case 2:
		*(*[2]byte)(dst) = *(*[2]byte)(src)
	default:
		copy(unsafe.Slice((*byte)(dst), size), unsafe.Slice((*byte)(src), size))
	}
}
