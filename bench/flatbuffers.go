package bench

import (
	"fmt"
	"time"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/bitwire/bitwire/bench/fb"
)

// FlatBuffers is a peer through the code Debian's flatc writes from
// fb/bench.fbs (by gen.sh), with the runtime of the same version: one
// Builder reused (Reset) per subject, players and crates as vectors of
// structs, the root read in place (no allocation) and every field copied
// into the reused Go value, which is what an application then uses. The
// Go runtime of this version has no verifier: a malformed buffer makes
// the accessors index out of range, so Read turns that panic into an
// error, as a server reading datagrams must.

func fbRead[T any](read func(data []byte, v *T)) func(data []byte, v *T) error {
	return func(data []byte, v *T) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("flatbuffers: malformed buffer: %v", r)
			}
		}()
		if len(data) < flatbuffers.SizeUOffsetT {
			return fmt.Errorf("flatbuffers: %d bytes", len(data))
		}
		read(data, v)
		return nil
	}
}

func fbRoot(data []byte) flatbuffers.UOffsetT { return flatbuffers.GetUOffsetT(data) }

func fbPerson() codecOf[Person] {
	b := flatbuffers.NewBuilder(256)
	return codecOf[Person]{
		Append: func(dst []byte, p *Person) ([]byte, error) {
			b.Reset()
			name, phone := b.CreateString(p.Name), b.CreateString(p.Phone)
			fb.PersonStart(b)
			fb.PersonAddName(b, name)
			fb.PersonAddBirthDayUnixNano(b, p.BirthDay.UnixNano())
			fb.PersonAddPhone(b, phone)
			fb.PersonAddSiblings(b, int32(p.Siblings))
			fb.PersonAddSpouse(b, p.Spouse)
			fb.PersonAddMoney(b, p.Money)
			b.Finish(fb.PersonEnd(b))
			return append(dst, b.FinishedBytes()...), nil
		},
		Read: fbRead(func(data []byte, p *Person) {
			var m fb.Person
			m.Init(data, fbRoot(data))
			p.Name, p.Phone = string(m.Name()), string(m.Phone())
			p.BirthDay = time.Unix(0, m.BirthDayUnixNano()).UTC()
			p.Siblings, p.Spouse, p.Money = int(m.Siblings()), m.Spouse(), m.Money()
		}),
	}
}

func fbPutPlayer(b *flatbuffers.Builder, p *PlayerState) flatbuffers.UOffsetT {
	return fb.CreatePlayerState(b, p.Pos.X, p.Pos.Y, p.Pos.Z, p.Yaw, int32(p.Health), int32(p.Weapon), p.Crouch, p.Firing)
}

func fbGetPlayer(m *fb.PlayerState, p *PlayerState) {
	*p = PlayerState{Pos: PlayerPos{X: m.X(), Y: m.Y(), Z: m.Z()}, Yaw: m.Yaw(), Health: int(m.Health()), Weapon: int(m.Weapon()), Crouch: m.Crouch(), Firing: m.Firing()}
}

func fbPlayer() codecOf[PlayerState] {
	b := flatbuffers.NewBuilder(64)
	return codecOf[PlayerState]{
		Append: func(dst []byte, p *PlayerState) ([]byte, error) {
			b.Reset()
			fb.PlayerStart(b)
			fb.PlayerAddState(b, fbPutPlayer(b, p))
			b.Finish(fb.PlayerEnd(b))
			return append(dst, b.FinishedBytes()...), nil
		},
		Read: fbRead(func(data []byte, p *PlayerState) {
			var m fb.Player
			var s fb.PlayerState
			m.Init(data, fbRoot(data))
			if m.State(&s) == nil {
				panic("no state")
			}
			fbGetPlayer(&s, p)
		}),
	}
}

func fbSnapshot() codecOf[Snapshot] {
	b := flatbuffers.NewBuilder(2048)
	return codecOf[Snapshot]{
		Append: func(dst []byte, s *Snapshot) ([]byte, error) {
			b.Reset()
			fb.SnapshotStartPlayersVector(b, len(s.Players))
			for i := len(s.Players) - 1; i >= 0; i-- { // vectors are built back to front
				fbPutPlayer(b, &s.Players[i])
			}
			players := b.EndVector(len(s.Players))
			fb.SnapshotStart(b)
			fb.SnapshotAddTick(b, s.Tick)
			fb.SnapshotAddPlayers(b, players)
			b.Finish(fb.SnapshotEnd(b))
			return append(dst, b.FinishedBytes()...), nil
		},
		Read: fbRead(func(data []byte, s *Snapshot) {
			var m fb.Snapshot
			var p fb.PlayerState
			m.Init(data, fbRoot(data))
			s.Tick = m.Tick()
			if m.PlayersLength() != len(s.Players) {
				panic("player count")
			}
			for i := range s.Players {
				m.Players(&p, i)
				fbGetPlayer(&p, &s.Players[i])
			}
		}),
	}
}

func fbDeltaSnapshot() codecOf[DeltaSnapshot] {
	b := flatbuffers.NewBuilder(2048)
	return codecOf[DeltaSnapshot]{
		Append: func(dst []byte, s *DeltaSnapshot) ([]byte, error) {
			b.Reset()
			fb.DeltaSnapshotStartPlayersVector(b, len(s.Players))
			for i := len(s.Players) - 1; i >= 0; i-- {
				p := &s.Players[i]
				fb.CreateIDPlayer(b, p.ID, p.Pos.X, p.Pos.Y, p.Pos.Z, p.Yaw, int32(p.Health), int32(p.Weapon), p.Flags.Crouch, p.Flags.Firing)
			}
			players := b.EndVector(len(s.Players))
			fb.DeltaSnapshotStart(b)
			fb.DeltaSnapshotAddTick(b, s.Tick)
			fb.DeltaSnapshotAddPlayers(b, players)
			b.Finish(fb.DeltaSnapshotEnd(b))
			return append(dst, b.FinishedBytes()...), nil
		},
		Read: fbRead(func(data []byte, s *DeltaSnapshot) {
			var m fb.DeltaSnapshot
			var p fb.IDPlayer
			m.Init(data, fbRoot(data))
			s.Tick = m.Tick()
			n := m.PlayersLength()
			if n > NumPlayers {
				panic("player count")
			}
			s.Players = s.Players[:0]
			for i := range n {
				m.Players(&p, i)
				s.Players = append(s.Players, IDPlayer{
					ID: p.Id(), Pos: PlayerPos{X: p.X(), Y: p.Y(), Z: p.Z()}, Yaw: p.Yaw(),
					Health: int(p.Health()), Weapon: int(p.Weapon()),
					Flags: PlayerFlags{Crouch: p.Crouch(), Firing: p.Firing()},
				})
			}
		}),
	}
}

func fbWorld() codecOf[World] {
	b := flatbuffers.NewBuilder(64 << 10)
	return codecOf[World]{
		Append: func(dst []byte, w *World) ([]byte, error) {
			b.Reset()
			fb.WorldStartCratesVector(b, len(w.Crates))
			for i := len(w.Crates) - 1; i >= 0; i-- {
				c := &w.Crates[i]
				fb.CreateCrate(b, c.ID, c.Pos.X, c.Pos.Y, c.Pos.Z, c.Rot[0], c.Rot[1], c.Rot[2], c.Rot[3], c.Asleep)
			}
			crates := b.EndVector(len(w.Crates))
			fb.WorldStart(b)
			fb.WorldAddTick(b, w.Tick)
			fb.WorldAddCrates(b, crates)
			b.Finish(fb.WorldEnd(b))
			return append(dst, b.FinishedBytes()...), nil
		},
		Read: fbRead(func(data []byte, w *World) {
			var m fb.World
			var c fb.Crate
			m.Init(data, fbRoot(data))
			w.Tick = m.Tick()
			n := m.CratesLength()
			if n > 1024 {
				panic("crate count")
			}
			w.Crates = w.Crates[:0]
			for i := range n {
				m.Crates(&c, i)
				w.Crates = append(w.Crates, Crate{
					ID: c.Id(), Pos: CratePos{X: c.X(), Y: c.Y(), Z: c.Z()},
					Rot: [4]float32{c.Rx(), c.Ry(), c.Rz(), c.Rw()}, Asleep: c.Asleep(),
				})
			}
		}),
	}
}

func init() {
	registerAppenders("flatbuffers", appenders{
		Person: fbPerson(), Player: fbPlayer(), Snapshot: fbSnapshot(),
		Delta: fbDeltaSnapshot(), World: fbWorld(),
	})
}
