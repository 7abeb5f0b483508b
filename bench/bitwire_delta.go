package bench

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// The bitwire subjects of the delta workloads: the value one tick later
// against the previous tick, with package-level MarshalDelta/UnmarshalDelta,
// with a Codec's AppendDelta/UnmarshalDelta on reused buffers, and with the
// hand-written delta of the same layout (handwritten_delta.go for World,
// handwritten_snapdelta.go for DeltaSnapshot). A receiver holds the
// quantized previous tick and rebuilds the quantized current one.

func checkDelta[T any](name string, out, cur *T, eq func(a, b *T) bool) func() error {
	want := quantized(cur)
	return func() error {
		exp, err := want()
		if err != nil {
			return err
		}
		if !eq(out, &exp) {
			return fmt.Errorf("%s: delta did not rebuild the quantized current value", name)
		}
		return nil
	}
}

// deltaBase returns the receiver's baseline: base as it decoded it.
func deltaBase[T any](base *T) T {
	q, err := quantized(base)()
	if err != nil {
		panic(err)
	}
	return q
}

// bitwireDeltaFunc uses the package-level MarshalDelta and UnmarshalDelta.
func bitwireDeltaFunc[T any](base, cur *T, eq func(a, b *T) bool) Subject {
	recv := deltaBase(base)
	var out T
	return Subject{
		Name:   "bitwire",
		Encode: func() ([]byte, error) { return bitwire.MarshalDelta(base, cur) },
		Decode: func(data []byte) error { return bitwire.UnmarshalDelta(data, &recv, &out) },
		Check:  checkDelta("bitwire", &out, cur, eq),
	}
}

// bitwireDeltaCodec uses a Codec: AppendDelta into one reused buffer,
// UnmarshalDelta into one reused value.
func bitwireDeltaCodec[T any](base, cur *T, eq func(a, b *T) bool) Subject {
	recv := deltaBase(base)
	c := bitwire.MustFor[T]()
	var buf []byte
	var out T
	return Subject{
		Name: "bitwire-codec",
		Encode: func() ([]byte, error) {
			var err error
			buf, err = c.AppendDelta(buf[:0], base, cur)
			return buf, err
		},
		Decode: func(data []byte) error { return c.UnmarshalDelta(data, &recv, &out) },
		Check:  checkDelta("bitwire-codec", &out, cur, eq),
	}
}

// handDeltaCoder is a hand-written delta of one type; its value holds the
// scratch space of one encoder or decoder.
type handDeltaCoder[T any] interface {
	Encode(w *bits.Writer, base, cur *T) error
	Decode(r *bits.Reader, base, out *T) error
}

// handDelta uses a hand-written delta: Encode into a reused Writer, Decode
// from a reused Reader into a reused value.
func handDelta[T any](enc, dec handDeltaCoder[T], base, cur *T, eq func(a, b *T) bool) Subject {
	recv := deltaBase(base)
	var w bits.Writer
	var r bits.Reader
	var out T
	return Subject{
		Name: "handwritten",
		Encode: func() ([]byte, error) {
			w.Reset(w.Bytes()[:0])
			err := enc.Encode(&w, base, cur)
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
		Check: checkDelta("handwritten", &out, cur, eq),
	}
}

func init() {
	register(WWorldDelta,
		func() Subject { base, cur := MakeWorlds(); return bitwireDeltaFunc(&base, &cur, (*World).Equal) },
		func() Subject { base, cur := MakeWorlds(); return bitwireDeltaCodec(&base, &cur, (*World).Equal) },
		func() Subject {
			base, cur := MakeWorlds()
			return handDelta[World](new(HandWorldDelta), new(HandWorldDelta), &base, &cur, (*World).Equal)
		})
	register(WSnapDelta,
		func() Subject {
			base, cur := MakeSnapshotDeltas()
			return bitwireDeltaFunc(&base, &cur, (*DeltaSnapshot).Equal)
		},
		func() Subject {
			base, cur := MakeSnapshotDeltas()
			return bitwireDeltaCodec(&base, &cur, (*DeltaSnapshot).Equal)
		},
		func() Subject {
			base, cur := MakeSnapshotDeltas()
			return handDelta[DeltaSnapshot](new(HandSnapDelta), new(HandSnapDelta), &base, &cur, (*DeltaSnapshot).Equal)
		})
}
