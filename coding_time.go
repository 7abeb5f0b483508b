package bitwire

import (
	"reflect"
	"time"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// time.Time: its Unix seconds zigzagged as a bitlen, then 30 bits of
// nanoseconds; the location is not sent.

var timeType = reflect.TypeOf(time.Time{})

var timeCoder = coder{
	name:    "time",
	fits:    func(t reflect.Type) bool { return t == timeType },
	fill:    func(nd *node, path string, _ reflect.Type, s spec, what string) error { return s.only(path, what) },
	minBits: func(*node) int { return fields.TimeMinBits },
	maxBits: func(*node) int { return fields.TimeMaxBits },
	eq: func(_ *node, a, b unsafe.Pointer) bool {
		ta, tb := (*time.Time)(a), (*time.Time)(b)
		return ta.Unix() == tb.Unix() && ta.Nanosecond() == tb.Nanosecond()
	},
	copy:   func(_ *node, dst, src unsafe.Pointer) { *(*time.Time)(dst) = *(*time.Time)(src) },
	flat:   flatVia,
	schema: func(_ *node, ns *NodeSchema) { ns.Type = "time" },
}

func (e *encoder) encTime(_ *node, p unsafe.Pointer) error {
	fields.WriteTime(e.w, *(*time.Time)(p))
	return nil
}

func (d *decoder) decTime(_ *node, p unsafe.Pointer) error {
	t, err := fields.ReadTime(d.r)
	if err != nil {
		return err
	}
	*(*time.Time)(p) = t
	return nil
}
