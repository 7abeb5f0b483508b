package bench

import (
	"fmt"

	"github.com/bitwire/bitwire"
)

// The bitwire subjects of the delta workload: the world one tick later
// against the previous tick, with package-level MarshalDelta/UnmarshalDelta
// and with a Codec's AppendDelta/UnmarshalDelta on reused buffers. A receiver
// rebuilds the quantized current world.

func checkDelta(name string, out, cur *World) func() error {
	want := quantized(cur)
	return func() error {
		exp, err := want()
		if err != nil {
			return err
		}
		if !out.Equal(&exp) {
			return fmt.Errorf("%s: delta did not rebuild the quantized current world", name)
		}
		return nil
	}
}

// deltaBase returns the receiver's baseline: base as it decoded it.
func deltaBase(base *World) World {
	q, err := quantized(base)()
	if err != nil {
		panic(err)
	}
	return q
}

func init() {
	register(WWorldDelta,
		func() Subject {
			base, cur := MakeWorlds()
			recv := deltaBase(&base)
			var out World
			return Subject{
				Name:   "bitwire",
				Encode: func() ([]byte, error) { return bitwire.MarshalDelta(&base, &cur) },
				Decode: func(data []byte) error { return bitwire.UnmarshalDelta(data, &recv, &out) },
				Check:  checkDelta("bitwire", &out, &cur),
			}
		},
		func() Subject {
			base, cur := MakeWorlds()
			recv := deltaBase(&base)
			c := bitwire.MustFor[World]()
			var buf []byte
			var out World
			return Subject{
				Name: "bitwire-codec",
				Encode: func() ([]byte, error) {
					var err error
					buf, err = c.AppendDelta(buf[:0], &base, &cur)
					return buf, err
				},
				Decode: func(data []byte) error { return c.UnmarshalDelta(data, &recv, &out) },
				Check:  checkDelta("bitwire-codec", &out, &cur),
			}
		})
}
