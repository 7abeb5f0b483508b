package bench

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// The bitwire subjects of the delta workload: the world one tick later
// against the previous tick, with package-level MarshalDelta/UnmarshalDelta,
// with a Codec's AppendDelta/UnmarshalDelta on reused buffers, and with the
// hand-written delta of the same layout (handwritten_delta.go). A receiver
// holds the quantized previous tick and rebuilds the quantized current one.

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
		},
		func() Subject {
			base, cur := MakeWorlds()
			recv := deltaBase(&base)
			var enc, dec HandWorldDelta
			var w bits.Writer
			var r bits.Reader
			var out World
			return Subject{
				Name: "handwritten",
				Encode: func() ([]byte, error) {
					w.Reset(w.Bytes()[:0])
					err := enc.Encode(&w, &base, &cur)
					return w.Bytes(), err
				},
				Decode: func(data []byte) error {
					r.Reset(data)
					if err := dec.Decode(&r, &recv, &out); err != nil {
						return err
					}
					if !r.CheckPadding() {
						return errors.New("handwritten: trailing data")
					}
					return nil
				},
				Check: checkDelta("handwritten", &out, &cur),
			}
		})
}
