package bitwire

import "unsafe"

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
