package bench

import (
	"time"

	"github.com/bitwire/bitwire/bench/pb"
)

// Conversions between the workloads' Go structs and the protobuf messages.
// The full-message benchmarks encode a prebuilt message and decode into a
// reused one, as protobuf users who keep their state in generated types do;
// only the delta workload converts inside the timed loop (its Diff and Apply
// work on the Go structs).

// PersonToPB returns p as a protobuf message.
func PersonToPB(p *Person) *pb.Person {
	return &pb.Person{
		Name:             p.Name,
		BirthDayUnixNano: p.BirthDay.UnixNano(),
		Phone:            p.Phone,
		Siblings:         int32(p.Siblings),
		Spouse:           p.Spouse,
		Money:            p.Money,
	}
}

// PersonFromPB is the inverse of PersonToPB.
func PersonFromPB(m *pb.Person) Person {
	return Person{
		Name:     m.GetName(),
		BirthDay: time.Unix(0, m.GetBirthDayUnixNano()).UTC(),
		Phone:    m.GetPhone(),
		Siblings: int(m.GetSiblings()),
		Spouse:   m.GetSpouse(),
		Money:    m.GetMoney(),
	}
}

func playerToPB(m *pb.PlayerState, p *PlayerState) {
	m.X, m.Y, m.Z = p.Pos.X, p.Pos.Y, p.Pos.Z
	m.Yaw = p.Yaw
	m.Health, m.Weapon = int32(p.Health), int32(p.Weapon)
	m.Crouch, m.Firing = p.Crouch, p.Firing
}

func playerFromPB(m *pb.PlayerState) PlayerState {
	return PlayerState{
		Pos:    PlayerPos{X: m.GetX(), Y: m.GetY(), Z: m.GetZ()},
		Yaw:    m.GetYaw(),
		Health: int(m.GetHealth()),
		Weapon: int(m.GetWeapon()),
		Crouch: m.GetCrouch(),
		Firing: m.GetFiring(),
	}
}

// PlayerToPB returns p as a protobuf message.
func PlayerToPB(p *PlayerState) *pb.PlayerState {
	m := new(pb.PlayerState)
	playerToPB(m, p)
	return m
}

// PlayerFromPB is the inverse of PlayerToPB.
func PlayerFromPB(m *pb.PlayerState) PlayerState { return playerFromPB(m) }

// SnapshotToPB returns s as a protobuf message.
func SnapshotToPB(s *Snapshot) *pb.Snapshot {
	m := &pb.Snapshot{Tick: s.Tick, Players: make([]*pb.PlayerState, len(s.Players))}
	for i := range s.Players {
		m.Players[i] = PlayerToPB(&s.Players[i])
	}
	return m
}

// SnapshotFromPB is the inverse of SnapshotToPB; extra players are dropped.
func SnapshotFromPB(m *pb.Snapshot) Snapshot {
	s := Snapshot{Tick: m.GetTick()}
	for i, p := range m.GetPlayers() {
		if i < len(s.Players) {
			s.Players[i] = playerFromPB(p)
		}
	}
	return s
}

// WorldToPB fills m with w, reusing m's crate messages.
func WorldToPB(m *pb.World, w *World) {
	m.Tick = w.Tick
	for len(m.Crates) < len(w.Crates) {
		m.Crates = append(m.Crates, new(pb.Crate))
	}
	m.Crates = m.Crates[:len(w.Crates)]
	for i := range w.Crates {
		c, mc := &w.Crates[i], m.Crates[i]
		mc.Id = c.ID
		mc.X, mc.Y, mc.Z = c.Pos.X, c.Pos.Y, c.Pos.Z
		mc.Qx, mc.Qy, mc.Qz, mc.Qw = c.Rot[0], c.Rot[1], c.Rot[2], c.Rot[3]
		mc.Asleep = c.Asleep
	}
}

// WorldFromPB fills w with m, reusing w's crate slice.
func WorldFromPB(w *World, m *pb.World) {
	w.Tick = m.GetTick()
	w.Crates = w.Crates[:0]
	for _, mc := range m.GetCrates() {
		w.Crates = append(w.Crates, Crate{
			ID:     mc.GetId(),
			Pos:    CratePos{X: mc.GetX(), Y: mc.GetY(), Z: mc.GetZ()},
			Rot:    [4]float32{mc.GetQx(), mc.GetQy(), mc.GetQz(), mc.GetQw()},
			Asleep: mc.GetAsleep(),
		})
	}
}

// DeltaSnapshotToPB fills m with s, reusing m's player messages.
func DeltaSnapshotToPB(m *pb.DeltaSnapshot, s *DeltaSnapshot) {
	m.Tick = s.Tick
	for len(m.Players) < len(s.Players) {
		m.Players = append(m.Players, new(pb.IDPlayer))
	}
	m.Players = m.Players[:len(s.Players)]
	for i := range s.Players {
		p, mp := &s.Players[i], m.Players[i]
		mp.Id = uint32(p.ID)
		mp.X, mp.Y, mp.Z = p.Pos.X, p.Pos.Y, p.Pos.Z
		mp.Yaw = p.Yaw
		mp.Health, mp.Weapon = int32(p.Health), int32(p.Weapon)
		mp.Crouch, mp.Firing = p.Flags.Crouch, p.Flags.Firing
	}
}

// DeltaSnapshotFromPB fills s with m, reusing s's player slice.
func DeltaSnapshotFromPB(s *DeltaSnapshot, m *pb.DeltaSnapshot) {
	s.Tick = m.GetTick()
	s.Players = s.Players[:0]
	for _, mp := range m.GetPlayers() {
		s.Players = append(s.Players, IDPlayer{
			ID:     uint8(mp.GetId()),
			Pos:    PlayerPos{X: mp.GetX(), Y: mp.GetY(), Z: mp.GetZ()},
			Yaw:    mp.GetYaw(),
			Health: int(mp.GetHealth()),
			Weapon: int(mp.GetWeapon()),
			Flags:  PlayerFlags{Crouch: mp.GetCrouch(), Firing: mp.GetFiring()},
		})
	}
}
