package bench

import "fmt"

// codecOf is a serializer of T used the way generated or hand-written
// code is: Append appends v's encoding to dst (grown only when too short),
// Read decodes data into v, reusing its slices.
type codecOf[T any] struct {
	Append func(dst []byte, v *T) ([]byte, error)
	Read   func(data []byte, v *T) error
}

// appenders is one serializer on every workload's types.
type appenders struct {
	Person   codecOf[Person]
	Player   codecOf[PlayerState]
	Snapshot codecOf[Snapshot]
	Delta    codecOf[DeltaSnapshot]
	World    codecOf[World]
}

// appendFull is the subject of c on v: encode v into a reused buffer,
// decode into a reused value, compare with eq.
func appendFull[T any](name string, v *T, c codecOf[T], eq func(a, b *T) bool) Subject {
	var buf []byte
	var out T
	return Subject{
		Name: name,
		Encode: func() ([]byte, error) {
			var err error
			buf, err = c.Append(buf[:0], v)
			return buf, err
		},
		Decode: func(data []byte) error { return c.Read(data, &out) },
		Check: func() error {
			if !eq(&out, v) {
				return mismatch(name, out, *v)
			}
			return nil
		},
	}
}

// registerAppenders registers a's subjects on the six workloads; the
// deltas are the changed players or crates (DiffPlayers, Diff), rebuilt
// with ApplyPlayers and Apply, as for the other peers.
func registerAppenders(name string, a appenders) {
	register(WPerson, func() Subject {
		v := MakePerson()
		return appendFull(name, &v, a.Person, (*Person).Equal)
	})
	register(WPlayer, func() Subject {
		v := MakePlayer()
		return appendFull(name, &v, a.Player, eqComparable[PlayerState])
	})
	register(WSnapshot, func() Subject {
		v := MakeSnapshot()
		return appendFull(name, &v, a.Snapshot, eqComparable[Snapshot])
	})
	register(WWorld, func() Subject {
		_, v := MakeWorlds()
		return appendFull(name, &v, a.World, (*World).Equal)
	})
	register(WSnapDelta, func() Subject {
		base, cur := MakeSnapshotDeltas()
		var changes, got, out DeltaSnapshot
		var buf []byte
		return Subject{
			Name: name,
			Encode: func() ([]byte, error) {
				changes.Tick = cur.Tick
				changes.Players = DiffPlayers(changes.Players, &base, &cur)
				var err error
				buf, err = a.Delta.Append(buf[:0], &changes)
				return buf, err
			},
			Decode: func(data []byte) error {
				if err := a.Delta.Read(data, &got); err != nil {
					return err
				}
				ApplyPlayers(&out, &base, &got)
				return nil
			},
			Check: func() error {
				if !out.Equal(&cur) {
					return fmt.Errorf("%s: delta did not rebuild the current snapshot", name)
				}
				return nil
			},
		}
	})
	register(WWorldDelta, func() Subject {
		base, cur := MakeWorlds()
		var changes, got, out World
		var buf []byte
		return Subject{
			Name: name,
			Encode: func() ([]byte, error) {
				changes.Tick = cur.Tick
				changes.Crates = Diff(changes.Crates, &base, &cur)
				var err error
				buf, err = a.World.Append(buf[:0], &changes)
				return buf, err
			},
			Decode: func(data []byte) error {
				if err := a.World.Read(data, &got); err != nil {
					return err
				}
				Apply(&out, &base, &got)
				return nil
			},
			Check: func() error {
				if !out.Equal(&cur) {
					return fmt.Errorf("%s: delta did not rebuild the current world", name)
				}
				return nil
			},
		}
	})
}
