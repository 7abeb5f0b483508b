package bitwire

import (
	"reflect"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// A float without a coding: its IEEE 754 bits, 32 or 64.

var floatCoder = coder{
	name:  "float",
	fits:  isFloat,
	fill:  fillFloat,
	width: func(n *node) int { return n.mem.sizeBits() },
	key: func(n *node, p unsafe.Pointer) (uint64, error) {
		if n.mem == mF32 {
			return uint64(*(*uint32)(p)), nil
		}
		return *(*uint64)(p), nil
	},
	flat:     flatVia,
	schema:   func(n *node, ns *NodeSchema) { ns.Type = memName(n.mem) },
	describe: func(ns *NodeSchema) string { return ns.Type },
}

func fillFloat(nd *node, path string, t reflect.Type, s spec, what string) error {
	if err := s.only(path, what, "min", "max", "prec", "bits", "dmin"); err != nil {
		return err
	}
	return s.reject(path, what+" (raw float; use q or fixed to quantize)", "min", "max", "prec", "bits", "dmin")
}

func (e *encoder) encFloat(n *node, p unsafe.Pointer) error {
	// the bits of fields.WriteFloat32/64, which do not inline
	if n.mem == mF32 {
		e.w.WriteBits(uint64(*(*uint32)(p)), 32)
	} else {
		e.w.WriteBits(*(*uint64)(p), 64)
	}
	return nil
}

func (d *decoder) decFloat(n *node, p unsafe.Pointer) error {
	if n.mem == mF32 {
		v, err := fields.ReadFloat32(d.r)
		if err == nil {
			*(*float32)(p) = v
		}
		return err
	}
	v, err := fields.ReadFloat64(d.r)
	if err == nil {
		*(*float64)(p) = v
	}
	return err
}
