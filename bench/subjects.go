package bench

import (
	"fmt"
	"slices"

	"github.com/bitwire/bitwire/bench/pb"
	"google.golang.org/protobuf/proto"
)

// A Subject is one serializer set up on one workload's data. Encode codes the
// workload's value (the bytes are valid until the next call); Decode decodes
// bytes that Encode produced into the subject's own reused output; Check then
// says whether that output is what this serializer must reproduce (the value
// itself, or for bitwire its quantized value).
type Subject struct {
	Name   string
	Encode func() ([]byte, error)
	Decode func(data []byte) error
	Check  func() error
}

// A Workload is a named value and every serializer set up on it.
type Workload struct {
	Name     string
	Subjects []Subject
}

// Workload names, as they appear in benchmark names.
const (
	WPerson     = "person"
	WPlayer     = "player"
	WSnapshot   = "snapshot64"
	WSnapDelta  = "snapshot64-delta"
	WWorld      = "world901"
	WWorldDelta = "world901-delta"
)

// Order is the order of serializers in every table: bitwire first, then its
// speed limit, then the peers.
var Order = []string{
	"bitwire-codec", "bitwire-model", "bitwire", "handwritten", "limit",
	"protobuf", "mus", "msgp", "flatbuffers", "binary", "kelindar", "msgpack", "cbor", "gob", "json",
}

// registry holds the subject constructors of each workload; files that need
// the root package or package fields register theirs in init, so the peers
// build and run on their own.
var registry = map[string][]func() Subject{}

func register(workload string, ctors ...func() Subject) {
	registry[workload] = append(registry[workload], ctors...)
}

// Workloads returns every workload with fresh subjects, in a fixed order.
func Workloads() []Workload {
	var ws []Workload
	for _, name := range []string{WPerson, WPlayer, WSnapshot, WSnapDelta, WWorld, WWorldDelta} {
		w := Workload{Name: name}
		for _, ctor := range registry[name] {
			w.Subjects = append(w.Subjects, ctor())
		}
		slices.SortStableFunc(w.Subjects, func(a, b Subject) int {
			return rank(a.Name) - rank(b.Name)
		})
		ws = append(ws, w)
	}
	return ws
}

func rank(name string) int {
	if i := slices.Index(Order, name); i >= 0 {
		return i
	}
	return len(Order)
}

func mismatch(name string, got, want any) error {
	return fmt.Errorf("%s: decoded\n\t%+v\nwant\n\t%+v", name, got, want)
}

// ---- reflection peers ----

func peerFull[T any](p Peer, v *T, eq func(a, b *T) bool) Subject {
	var out T
	return Subject{
		Name:   p.Name,
		Encode: func() ([]byte, error) { return p.Marshal(v) },
		Decode: func(data []byte) error {
			if p.Fresh {
				var zero T
				out = zero
			}
			return p.Unmarshal(data, &out)
		},
		Check: func() error {
			if !eq(&out, v) {
				return mismatch(p.Name, out, *v)
			}
			return nil
		},
	}
}

// peerDelta sends the crates that changed, found by Diff, and rebuilds the
// world with Apply: the delta that a user of a serializer without one writes.
func peerDelta(p Peer, base, cur *World) Subject {
	var changes, got, out World
	return Subject{
		Name: p.Name,
		Encode: func() ([]byte, error) {
			changes.Tick = cur.Tick
			changes.Crates = Diff(changes.Crates, base, cur)
			return p.Marshal(&changes)
		},
		Decode: func(data []byte) error {
			if p.Fresh {
				got = World{}
			}
			if err := p.Unmarshal(data, &got); err != nil {
				return err
			}
			Apply(&out, base, &got)
			return nil
		},
		Check: func() error {
			if !out.Equal(cur) {
				return fmt.Errorf("%s: delta did not rebuild the current world", p.Name)
			}
			return nil
		},
	}
}

// peerSnapDelta is peerDelta for the snapshot delta workload: the players
// that changed, found by DiffPlayers, rebuilt with ApplyPlayers.
func peerSnapDelta(p Peer, base, cur *DeltaSnapshot) Subject {
	var changes, got, out DeltaSnapshot
	return Subject{
		Name: p.Name,
		Encode: func() ([]byte, error) {
			changes.Tick = cur.Tick
			changes.Players = DiffPlayers(changes.Players, base, cur)
			return p.Marshal(&changes)
		},
		Decode: func(data []byte) error {
			if p.Fresh {
				got = DeltaSnapshot{}
			}
			if err := p.Unmarshal(data, &got); err != nil {
				return err
			}
			ApplyPlayers(&out, base, &got)
			return nil
		},
		Check: func() error {
			if !out.Equal(cur) {
				return fmt.Errorf("%s: delta did not rebuild the current snapshot", p.Name)
			}
			return nil
		},
	}
}

func eqComparable[T comparable](a, b *T) bool { return *a == *b }

func init() {
	for i := range ReflectPeers() {
		pick := func() Peer { return ReflectPeers()[i] }
		register(WPerson, func() Subject {
			v := MakePerson()
			return peerFull(pick(), &v, (*Person).Equal)
		})
		register(WPlayer, func() Subject {
			v := MakePlayer()
			return peerFull(pick(), &v, eqComparable[PlayerState])
		})
		register(WSnapshot, func() Subject {
			v := MakeSnapshot()
			return peerFull(pick(), &v, eqComparable[Snapshot])
		})
		register(WSnapDelta, func() Subject {
			base, cur := MakeSnapshotDeltas()
			return peerSnapDelta(pick(), &base, &cur)
		})
		register(WWorld, func() Subject {
			_, v := MakeWorlds()
			return peerFull(pick(), &v, (*World).Equal)
		})
		register(WWorldDelta, func() Subject {
			base, cur := MakeWorlds()
			return peerDelta(pick(), &base, &cur)
		})
	}
	registerProtobuf()
	registerBytes()
}

// ---- protobuf ----

var pbMarshal = proto.MarshalOptions{}

func pbFull[M proto.Message](msg M, out M, check func() error) Subject {
	var buf []byte
	return Subject{
		Name: "protobuf",
		Encode: func() ([]byte, error) {
			var err error
			buf, err = pbMarshal.MarshalAppend(buf[:0], msg)
			return buf, err
		},
		Decode: func(data []byte) error { return proto.Unmarshal(data, out) },
		Check:  check,
	}
}

func registerProtobuf() {
	register(WPerson, func() Subject {
		v := MakePerson()
		out := new(pb.Person)
		return pbFull(PersonToPB(&v), out, func() error {
			if got := PersonFromPB(out); !got.Equal(&v) {
				return mismatch("protobuf", got, v)
			}
			return nil
		})
	})
	register(WPlayer, func() Subject {
		v := MakePlayer()
		out := new(pb.PlayerState)
		return pbFull(PlayerToPB(&v), out, func() error {
			if got := PlayerFromPB(out); got != v {
				return mismatch("protobuf", got, v)
			}
			return nil
		})
	})
	register(WSnapshot, func() Subject {
		v := MakeSnapshot()
		out := new(pb.Snapshot)
		return pbFull(SnapshotToPB(&v), out, func() error {
			if got := SnapshotFromPB(out); got != v || len(out.Players) != len(v.Players) {
				return mismatch("protobuf", got, v)
			}
			return nil
		})
	})
	register(WSnapDelta, func() Subject {
		base, cur := MakeSnapshotDeltas()
		var changes, got, out DeltaSnapshot
		var buf []byte
		msg, in := new(pb.DeltaSnapshot), new(pb.DeltaSnapshot)
		return Subject{
			Name: "protobuf",
			Encode: func() ([]byte, error) {
				changes.Tick = cur.Tick
				changes.Players = DiffPlayers(changes.Players, &base, &cur)
				DeltaSnapshotToPB(msg, &changes)
				var err error
				buf, err = pbMarshal.MarshalAppend(buf[:0], msg)
				return buf, err
			},
			Decode: func(data []byte) error {
				if err := proto.Unmarshal(data, in); err != nil {
					return err
				}
				DeltaSnapshotFromPB(&got, in)
				ApplyPlayers(&out, &base, &got)
				return nil
			},
			Check: func() error {
				if !out.Equal(&cur) {
					return fmt.Errorf("protobuf: delta did not rebuild the current snapshot")
				}
				return nil
			},
		}
	})
	register(WWorld, func() Subject {
		_, v := MakeWorlds()
		msg, out := new(pb.World), new(pb.World)
		WorldToPB(msg, &v)
		return pbFull(msg, out, func() error {
			var got World
			if WorldFromPB(&got, out); !got.Equal(&v) {
				return fmt.Errorf("protobuf: world differs")
			}
			return nil
		})
	})
	register(WWorldDelta, func() Subject {
		base, cur := MakeWorlds()
		var changes, got, out World
		var buf []byte
		msg, in := new(pb.World), new(pb.World)
		return Subject{
			Name: "protobuf",
			Encode: func() ([]byte, error) {
				changes.Tick = cur.Tick
				changes.Crates = Diff(changes.Crates, &base, &cur)
				WorldToPB(msg, &changes)
				var err error
				buf, err = pbMarshal.MarshalAppend(buf[:0], msg)
				return buf, err
			},
			Decode: func(data []byte) error {
				if err := proto.Unmarshal(data, in); err != nil {
					return err
				}
				WorldFromPB(&got, in)
				Apply(&out, &base, &got)
				return nil
			},
			Check: func() error {
				if !out.Equal(&cur) {
					return fmt.Errorf("protobuf: delta did not rebuild the current world")
				}
				return nil
			},
		}
	})
}

// ---- encoding/binary, byte-aligned by hand ----

func bytesFull[T any](v *T, app func([]byte, *T) []byte, read func([]byte, *T) error, eq func(a, b *T) bool) Subject {
	var buf []byte
	var out T
	return Subject{
		Name:   "binary",
		Encode: func() ([]byte, error) { buf = app(buf[:0], v); return buf, nil },
		Decode: func(data []byte) error { return read(data, &out) },
		Check: func() error {
			if !eq(&out, v) {
				return mismatch("binary", out, *v)
			}
			return nil
		},
	}
}

func registerBytes() {
	register(WPerson, func() Subject {
		v := MakePerson()
		return bytesFull(&v, BytesAppendPerson, BytesReadPerson, (*Person).Equal)
	})
	register(WPlayer, func() Subject {
		v := MakePlayer()
		return bytesFull(&v, BytesAppendPlayer, BytesReadPlayer, eqComparable[PlayerState])
	})
	register(WSnapshot, func() Subject {
		v := MakeSnapshot()
		return bytesFull(&v, BytesAppendSnapshot, BytesReadSnapshot, eqComparable[Snapshot])
	})
	register(WSnapDelta, func() Subject {
		base, cur := MakeSnapshotDeltas()
		var changes, got, out DeltaSnapshot
		var buf []byte
		return Subject{
			Name: "binary",
			Encode: func() ([]byte, error) {
				changes.Tick = cur.Tick
				changes.Players = DiffPlayers(changes.Players, &base, &cur)
				buf = BytesAppendDeltaSnapshot(buf[:0], &changes)
				return buf, nil
			},
			Decode: func(data []byte) error {
				if err := BytesReadDeltaSnapshot(data, &got); err != nil {
					return err
				}
				ApplyPlayers(&out, &base, &got)
				return nil
			},
			Check: func() error {
				if !out.Equal(&cur) {
					return fmt.Errorf("binary: delta did not rebuild the current snapshot")
				}
				return nil
			},
		}
	})
	register(WWorld, func() Subject {
		_, v := MakeWorlds()
		return bytesFull(&v, BytesAppendWorld, BytesReadWorld, (*World).Equal)
	})
	register(WWorldDelta, func() Subject {
		base, cur := MakeWorlds()
		var changes, got, out World
		var buf []byte
		return Subject{
			Name: "binary",
			Encode: func() ([]byte, error) {
				changes.Tick = cur.Tick
				changes.Crates = Diff(changes.Crates, &base, &cur)
				buf = BytesAppendWorld(buf[:0], &changes)
				return buf, nil
			},
			Decode: func(data []byte) error {
				if err := BytesReadWorld(data, &got); err != nil {
					return err
				}
				Apply(&out, &base, &got)
				return nil
			},
			Check: func() error {
				if !out.Equal(&cur) {
					return fmt.Errorf("binary: delta did not rebuild the current world")
				}
				return nil
			},
		}
	})
}
