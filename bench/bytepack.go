package bench

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// The "binary" peer: what a Go programmer writes by hand with encoding/binary
// for a byte-aligned packet. Fixed-width little-endian floats and uint32s,
// ints as zig-zag varints, a byte per bool, strings and slices with a uvarint
// length, time.Time as Unix seconds (int64) and nanoseconds (uint32). No
// reflection: binary.Write/Read would reflect on every call and cannot code
// int, string or time.Time fields at all.

var errShort = errors.New("bytepack: short input")

type byteReader struct {
	b   []byte
	err error
}

func (r *byteReader) need(n int) bool {
	if r.err != nil || len(r.b) < n {
		r.err = errShort
		return false
	}
	return true
}

func (r *byteReader) u8() byte {
	if !r.need(1) {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *byteReader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *byteReader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *byteReader) f32() float32 { return math.Float32frombits(r.u32()) }

func (r *byteReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *byteReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *byteReader) str() string {
	n := r.uvarint()
	if r.err != nil || uint64(len(r.b)) < n {
		r.err = errShort
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func appendF32(dst []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
}

func appendStr(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// BytesAppendPerson appends p's byte-aligned encoding.
func BytesAppendPerson(dst []byte, p *Person) []byte {
	dst = appendStr(dst, p.Name)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(p.BirthDay.Unix()))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(p.BirthDay.Nanosecond()))
	dst = appendStr(dst, p.Phone)
	dst = binary.AppendVarint(dst, int64(p.Siblings))
	dst = appendBool(dst, p.Spouse)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.Money))
}

// BytesReadPerson decodes what BytesAppendPerson wrote.
func BytesReadPerson(data []byte, p *Person) error {
	r := byteReader{b: data}
	p.Name = r.str()
	sec := int64(r.u64())
	nsec := int64(r.u32())
	p.BirthDay = time.Unix(sec, nsec).UTC()
	p.Phone = r.str()
	p.Siblings = int(r.varint())
	p.Spouse = r.u8() != 0
	p.Money = math.Float64frombits(r.u64())
	return r.err
}

func appendPlayer(dst []byte, p *PlayerState) []byte {
	dst = appendF32(dst, p.Pos.X)
	dst = appendF32(dst, p.Pos.Y)
	dst = appendF32(dst, p.Pos.Z)
	dst = appendF32(dst, p.Yaw)
	dst = binary.AppendVarint(dst, int64(p.Health))
	dst = binary.AppendVarint(dst, int64(p.Weapon))
	dst = appendBool(dst, p.Crouch)
	return appendBool(dst, p.Firing)
}

func readPlayer(r *byteReader, p *PlayerState) {
	p.Pos.X, p.Pos.Y, p.Pos.Z = r.f32(), r.f32(), r.f32()
	p.Yaw = r.f32()
	p.Health = int(r.varint())
	p.Weapon = int(r.varint())
	p.Crouch = r.u8() != 0
	p.Firing = r.u8() != 0
}

// BytesAppendPlayer appends p's byte-aligned encoding.
func BytesAppendPlayer(dst []byte, p *PlayerState) []byte { return appendPlayer(dst, p) }

// BytesReadPlayer decodes what BytesAppendPlayer wrote.
func BytesReadPlayer(data []byte, p *PlayerState) error {
	r := byteReader{b: data}
	readPlayer(&r, p)
	return r.err
}

// BytesAppendSnapshot appends s's byte-aligned encoding.
func BytesAppendSnapshot(dst []byte, s *Snapshot) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, s.Tick)
	for i := range s.Players {
		dst = appendPlayer(dst, &s.Players[i])
	}
	return dst
}

// BytesReadSnapshot decodes what BytesAppendSnapshot wrote.
func BytesReadSnapshot(data []byte, s *Snapshot) error {
	r := byteReader{b: data}
	s.Tick = r.u32()
	for i := range s.Players {
		readPlayer(&r, &s.Players[i])
	}
	return r.err
}

// BytesAppendWorld appends w's byte-aligned encoding.
func BytesAppendWorld(dst []byte, w *World) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, w.Tick)
	dst = binary.AppendUvarint(dst, uint64(len(w.Crates)))
	for i := range w.Crates {
		c := &w.Crates[i]
		dst = binary.LittleEndian.AppendUint32(dst, c.ID)
		dst = appendF32(dst, c.Pos.X)
		dst = appendF32(dst, c.Pos.Y)
		dst = appendF32(dst, c.Pos.Z)
		for _, f := range c.Rot {
			dst = appendF32(dst, f)
		}
		dst = appendBool(dst, c.Asleep)
	}
	return dst
}

// BytesReadWorld decodes what BytesAppendWorld wrote, reusing w's slice.
func BytesReadWorld(data []byte, w *World) error {
	r := byteReader{b: data}
	w.Tick = r.u32()
	n := r.uvarint()
	const crateSize = 4 + 3*4 + 4*4 + 1
	if r.err != nil || n > uint64(len(r.b)/crateSize) {
		return errShort
	}
	w.Crates = w.Crates[:0]
	for range n {
		var c Crate
		c.ID = r.u32()
		c.Pos.X, c.Pos.Y, c.Pos.Z = r.f32(), r.f32(), r.f32()
		for i := range c.Rot {
			c.Rot[i] = r.f32()
		}
		c.Asleep = r.u8() != 0
		w.Crates = append(w.Crates, c)
	}
	return r.err
}

// BytesAppendDeltaSnapshot appends s's byte-aligned encoding: the tick, the
// player count, then each player as its id byte and appendPlayer's fields.
func BytesAppendDeltaSnapshot(dst []byte, s *DeltaSnapshot) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, s.Tick)
	dst = binary.AppendUvarint(dst, uint64(len(s.Players)))
	for i := range s.Players {
		p := &s.Players[i]
		dst = append(dst, p.ID)
		dst = appendF32(dst, p.Pos.X)
		dst = appendF32(dst, p.Pos.Y)
		dst = appendF32(dst, p.Pos.Z)
		dst = appendF32(dst, p.Yaw)
		dst = binary.AppendVarint(dst, int64(p.Health))
		dst = binary.AppendVarint(dst, int64(p.Weapon))
		dst = appendBool(dst, p.Flags.Crouch)
		dst = appendBool(dst, p.Flags.Firing)
	}
	return dst
}

// BytesReadDeltaSnapshot decodes what BytesAppendDeltaSnapshot wrote,
// reusing s's slice.
func BytesReadDeltaSnapshot(data []byte, s *DeltaSnapshot) error {
	r := byteReader{b: data}
	s.Tick = r.u32()
	n := r.uvarint()
	const minPlayer = 1 + 4*4 + 1 + 1 + 2
	if r.err != nil || n > uint64(len(r.b)/minPlayer) {
		return errShort
	}
	s.Players = s.Players[:0]
	for range n {
		var p IDPlayer
		p.ID = r.u8()
		p.Pos.X, p.Pos.Y, p.Pos.Z = r.f32(), r.f32(), r.f32()
		p.Yaw = r.f32()
		p.Health = int(r.varint())
		p.Weapon = int(r.varint())
		p.Flags.Crouch = r.u8() != 0
		p.Flags.Firing = r.u8() != 0
		s.Players = append(s.Players, p)
	}
	return r.err
}
