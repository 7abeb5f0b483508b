package main

// The naive baseline: what a straightforward server would send with
// encoding/binary, every field at a fixed size (floats as float32, ints as
// int32, bools as one byte), every entity (its id as a uint32, a kind
// byte, then its fields) every tick, in 1200-byte datagrams that each
// start with the tick and an entity count (6 bytes). Same entities, no
// quantization, no deltas, no priorities.

type naiveMatch struct {
	Clock uint16
	Score [2]uint16
}

type naivePlayer struct {
	Pos    [3]float32
	Yaw    float32
	Pitch  float32
	Health int32
	Weapon uint8
	Flags  [4]bool
}

type naiveCrate struct {
	Pos    [3]float32
	Rot    [4]float32
	Asleep bool
}

// Fixed sizes, checked against binary.Size in the tests.
const (
	naiveMatchSize  = 2 + 4
	naivePlayerSize = 12 + 4 + 4 + 4 + 1 + 4
	naiveCrateSize  = 12 + 16 + 1
)
