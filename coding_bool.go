package bitwire

import (
	"reflect"
	"unsafe"
)

// bool: one bit, 1 for true.

var boolCoder = coder{
	name:  "bool",
	fits:  func(t reflect.Type) bool { return t.Kind() == reflect.Bool },
	fill:  func(nd *node, path string, _ reflect.Type, s spec, what string) error { return s.only(path, what) },
	width: one,
	key: func(_ *node, p unsafe.Pointer) (uint64, error) {
		if *(*bool)(p) {
			return 1, nil
		}
		return 0, nil
	},
	flat:   func(*node) flatCode { return flatBool },
	schema: func(_ *node, ns *NodeSchema) { ns.Type = "bool" },
}

func (e *encoder) encBool(_ *node, p unsafe.Pointer) error {
	e.w.WriteBool(*(*bool)(p))
	return nil
}

func (d *decoder) decBool(_ *node, p unsafe.Pointer) error {
	b, err := d.r.ReadBool()
	if err != nil {
		return err
	}
	*(*bool)(p) = b
	return nil
}
