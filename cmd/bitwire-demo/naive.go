package main

import "encoding/binary"

// The naive baseline: what a straightforward server would send with
// encoding/binary, every field at a fixed size (floats as float32, ints as
// int32, bools as one byte), the whole state of a stream every tick, with a
// small header of its own (stream number, tick, counts). Same structs, same
// sharding, no quantization and no deltas.

type naiveHeader struct {
	Stream   uint8
	Tick     uint32
	HasMatch bool
	Players  uint16
	Crates   uint16
}

type naiveMatch struct {
	Clock uint16
	Score [2]uint16
}

type naivePlayer struct {
	ID     uint32
	Pos    [3]float32
	Yaw    float32
	Pitch  float32
	Health int32
	Weapon uint8
	Flags  [4]bool
}

type naiveCrate struct {
	ID     uint32
	Pos    [3]float32
	Rot    [4]float32
	Asleep bool
}

// Fixed sizes, checked against binary.Size in the tests.
const (
	naiveHeaderSize = 1 + 4 + 1 + 2 + 2
	naiveMatchSize  = 2 + 4
	naivePlayerSize = 4 + 12 + 4 + 4 + 4 + 1 + 4
	naiveCrateSize  = 4 + 12 + 16 + 1
)

// appendNaive appends the naive encoding of one stream's state.
func appendNaive(dst []byte, stream int, tick uint32, s *Shard) []byte {
	le := binary.LittleEndian
	h := naiveHeader{Stream: uint8(stream), Tick: tick, HasMatch: s.Match != nil,
		Players: uint16(len(s.Players)), Crates: uint16(len(s.Crates))}
	dst, _ = binary.Append(dst, le, &h)
	if s.Match != nil {
		dst, _ = binary.Append(dst, le, &naiveMatch{Clock: s.Match.Clock, Score: s.Match.Score})
	}
	for i := range s.Players {
		p := &s.Players[i]
		np := naivePlayer{
			ID: p.ID, Pos: [3]float32{p.Pos.X, p.Pos.Y, p.Pos.Z}, Yaw: p.Yaw, Pitch: p.Pitch,
			Health: int32(p.Health), Weapon: p.Weapon,
			Flags: [4]bool{p.Flags.Crouch, p.Flags.Firing, p.Flags.Airborne, p.Flags.Reloading},
		}
		dst, _ = binary.Append(dst, le, &np)
	}
	for i := range s.Crates {
		c := &s.Crates[i]
		nc := naiveCrate{ID: c.ID, Pos: [3]float32{c.Pos.X, c.Pos.Y, c.Pos.Z}, Rot: c.Rot, Asleep: c.Asleep}
		dst, _ = binary.Append(dst, le, &nc)
	}
	return dst
}

// naiveSize is len(appendNaive(nil, ...)) without encoding.
func naiveSize(s *Shard) int {
	n := naiveHeaderSize + len(s.Players)*naivePlayerSize + len(s.Crates)*naiveCrateSize
	if s.Match != nil {
		n += naiveMatchSize
	}
	return n
}
