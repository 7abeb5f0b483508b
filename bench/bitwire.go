package bench

import (
	"github.com/bitwire/bitwire"
)

// The bitwire subjects of the full-message workloads: the package-level
// functions, a Codec with reused buffers, and the hand-written packer of the
// same layout. The delta workloads' are in bitwire_delta.go.

// quantized returns v as a bitwire receiver decodes it.
func quantized[T any](v *T) func() (T, error) {
	return func() (T, error) {
		q := *v
		switch s := any(&q).(type) { // do not quantize the caller's slices
		case *World:
			s.Crates = append([]Crate(nil), s.Crates...)
		case *DeltaSnapshot:
			s.Players = append([]IDPlayer(nil), s.Players...)
		}
		err := bitwire.MustFor[T]().Quantize(&q)
		return q, err
	}
}

func checkQuantized[T any](name string, out, v *T, eq func(a, b *T) bool) func() error {
	want := quantized(v)
	return func() error {
		exp, err := want()
		if err != nil {
			return err
		}
		if !eq(out, &exp) {
			return mismatch(name, *out, exp)
		}
		return nil
	}
}

// bitwireFunc uses the package-level Marshal and Unmarshal.
func bitwireFunc[T any](v *T, eq func(a, b *T) bool) Subject {
	var out T
	return Subject{
		Name:   "bitwire",
		Encode: func() ([]byte, error) { return bitwire.Marshal(v) },
		Decode: func(data []byte) error { return bitwire.Unmarshal(data, &out) },
		Check:  checkQuantized("bitwire", &out, v, eq),
	}
}

// bitwireCodec uses a Codec: Append into one reused buffer, Unmarshal into
// one reused value.
func bitwireCodec[T any](v *T, eq func(a, b *T) bool) Subject {
	c := bitwire.MustFor[T]()
	var buf []byte
	var out T
	return Subject{
		Name: "bitwire-codec",
		Encode: func() ([]byte, error) {
			var err error
			buf, err = c.Append(buf[:0], v)
			return buf, err
		},
		Decode: func(data []byte) error { return c.Unmarshal(data, &out) },
		Check:  checkQuantized("bitwire-codec", &out, v, eq),
	}
}

func init() {
	register(WPerson,
		func() Subject { v := MakePerson(); return bitwireFunc(&v, (*Person).Equal) },
		func() Subject { v := MakePerson(); return bitwireCodec(&v, (*Person).Equal) },
		func() Subject {
			v := MakePerson()
			return handFull(&v, HandEncodePerson, HandDecodePerson, quantized(&v), (*Person).Equal)
		})
	register(WPlayer,
		func() Subject { v := MakePlayer(); return bitwireFunc(&v, eqComparable[PlayerState]) },
		func() Subject { v := MakePlayer(); return bitwireCodec(&v, eqComparable[PlayerState]) },
		func() Subject {
			v := MakePlayer()
			return handFull(&v, HandEncodePlayer, HandDecodePlayer, quantized(&v), eqComparable[PlayerState])
		})
	register(WSnapshot,
		func() Subject { v := MakeSnapshot(); return bitwireFunc(&v, eqComparable[Snapshot]) },
		func() Subject { v := MakeSnapshot(); return bitwireCodec(&v, eqComparable[Snapshot]) },
		func() Subject {
			v := MakeSnapshot()
			return handFull(&v, HandEncodeSnapshot, HandDecodeSnapshot, quantized(&v), eqComparable[Snapshot])
		})
	register(WWorld,
		func() Subject { _, v := MakeWorlds(); return bitwireFunc(&v, (*World).Equal) },
		func() Subject { _, v := MakeWorlds(); return bitwireCodec(&v, (*World).Equal) },
		func() Subject {
			_, v := MakeWorlds()
			return handFull(&v, HandEncodeWorld, HandDecodeWorld, quantized(&v), (*World).Equal)
		})
}
