package bitwire

import (
	"bytes"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// string, and []byte without a coding: the length (in BitsRequired(maxlen)
// bits with maxlen=N, else as a varint-like length, fields.WriteLen), then
// the bytes. Without maxlen, the codec's default limit applies.

func lenMin(n *node) int { return fields.LenBits(0, n.maxlen) }

func bytesMax(n *node) int {
	if n.maxlen == 0 {
		return -1
	}
	return fields.LenBits(0, n.maxlen) + 8*n.maxlen
}

// hashMaxLen feeds a string's or byte slice's maxlen to the fingerprint.
func hashMaxLen(f *fpHasher, ns *NodeSchema) { f.u64(uint64(ns.MaxLen)) }

// fillBytes compiles string and []byte: maxlen is their only option.
func fillBytes(nd *node, path string, _ reflect.Type, s spec, what string) error {
	nd.maxlen = s.maxlen
	return s.only(path, what, "maxlen")
}

var stringCoder = coder{
	name:    "string",
	fits:    func(t reflect.Type) bool { return t.Kind() == reflect.String },
	fill:    fillBytes,
	minBits: lenMin,
	maxBits: bytesMax,
	eq:      func(_ *node, a, b unsafe.Pointer) bool { return *(*string)(a) == *(*string)(b) },
	copy:    func(_ *node, dst, src unsafe.Pointer) { *(*string)(dst) = *(*string)(src) },
	flat:    flatVia,
	schema:  func(n *node, ns *NodeSchema) { ns.Type, ns.MaxLen = "string", n.maxlen },
	hash:    hashMaxLen,
}

func (e *encoder) encString(n *node, p unsafe.Pointer) error {
	s := *(*string)(p)
	if n.maxlen == 0 && len(s) > e.maxLen {
		return e.tooLong(len(s))
	}
	return fields.WriteString(e.w, s, n.maxlen)
}

// decString reads a string, reusing the scratch buffer for short ones and
// the old string when it is unchanged.
func (d *decoder) decString(n *node, p unsafe.Pointer) error {
	r := d.r
	l, err := d.readLen(n, 8)
	if err != nil {
		return err
	}
	sp := (*string)(p)
	if l <= len(d.scratch) {
		buf := d.scratch[:l]
		if err := r.ReadBytes(buf); err != nil {
			return err
		}
		if *sp != string(buf) { // unchanged strings cost no allocation
			*sp = string(buf)
		}
		return nil
	}
	if err := d.charge(l, 1); err != nil {
		return err
	}
	buf := make([]byte, l)
	if err := r.ReadBytes(buf); err != nil {
		return err
	}
	*sp = unsafe.String(&buf[0], l)
	return nil
}

var bytesCoder = coder{
	name:    "bytes",
	fits:    func(t reflect.Type) bool { return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 },
	fill:    fillBytes,
	minBits: lenMin,
	maxBits: bytesMax,
	eq:      func(_ *node, a, b unsafe.Pointer) bool { return bytes.Equal(*(*[]byte)(a), *(*[]byte)(b)) },
	copy: func(_ *node, dst, src unsafe.Pointer) {
		s, d := *(*[]byte)(src), (*[]byte)(dst)
		if s == nil {
			*d = nil
			return
		}
		buf := *d
		if cap(buf) < len(s) || (len(buf) > 0 && &buf[:1][0] == &s[:1][0]) {
			buf = make([]byte, len(s))
		}
		buf = buf[:len(s)]
		copy(buf, s)
		*d = buf
	},
	flat:   flatVia,
	schema: func(n *node, ns *NodeSchema) { ns.Type, ns.MaxLen = "bytes", n.maxlen },
	hash:   hashMaxLen,
}

func (e *encoder) encBytes(n *node, p unsafe.Pointer) error {
	b := *(*[]byte)(p)
	if n.maxlen == 0 && len(b) > e.maxLen {
		return e.tooLong(len(b))
	}
	return fields.WriteBytes(e.w, b, n.maxlen)
}

// decBytes reads a byte slice into the slice's own storage when it is large
// enough.
func (d *decoder) decBytes(n *node, p unsafe.Pointer) error {
	r := d.r
	bp := (*[]byte)(p)
	l, err := d.readLen(n, 8)
	if err != nil {
		return err
	}
	if l == 0 {
		*bp = nil
		return nil
	}
	b := *bp
	if cap(b) < l {
		if err := d.charge(l, 1); err != nil {
			return err
		}
		b = make([]byte, l)
	}
	b = b[:l]
	if err := r.ReadBytes(b); err != nil {
		return err
	}
	*bp = b
	return nil
}

// tooLong is the error for a string or byte slice without a maxlen that is
// over the codec's default limit.
func (e *encoder) tooLong(l int) error {
	return fmt.Errorf("%w: %d bytes, over the limit %d", ErrTooLong, l, e.maxLen)
}
