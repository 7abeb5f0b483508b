package bench

import (
	"errors"
	"fmt"
	"time"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The hand-written bit packer: the same layout that bitwire derives from the
// workloads' tags, written out field by field with packages bits and fields.
// It is the speed limit that bitwire's compiled plans chase, and the round-
// trip test checks that it writes exactly the bytes bitwire writes.

// layout holds the codings of every tagged field, built once.
type layout struct {
	siblings         fields.IntRange
	playerX, playerY fields.Quantizer // Z uses playerX's range
	yaw              fields.Quantizer
	health, weapon   fields.IntRange
	crateXZ, crateY  fields.Quantizer
	rot              fields.Quat
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var hand = layout{
	siblings: must(fields.NewIntRange(0, 4)),
	playerX:  must(fields.NewQuantizer(-512, 512, 0.01)),
	playerY:  must(fields.NewQuantizer(-16, 112, 0.01)),
	yaw:      must(fields.NewQuantizerBits(0, 360, 10)),
	health:   must(fields.NewIntRange(0, 200)),
	weapon:   must(fields.NewIntRange(0, 15)),
	crateXZ:  must(fields.NewQuantizer(-512, 512, 0.01)),
	crateY:   must(fields.NewQuantizer(0, 64, 0.01)),
	rot:      must(fields.NewQuat(9)),
}

const (
	stringMax   = 64   // maxlen of Person's strings
	cratesMax   = 1024 // maxlen of World.Crates
	crateIDBits = 5    // bitlen prefix of a uint32: fields.BitlenWidth(32)
	timeSecBits = 6    // bitlen prefix of the zig-zagged Unix seconds
	timeNsBits  = 30   // nanoseconds, raw
)

var errHandNanos = errors.New("handwritten: nanoseconds out of range")

// ---- Person ----

// HandEncodePerson writes p in bitwire's layout.
func HandEncodePerson(w *bits.Writer, p *Person) error {
	if err := fields.WriteString(w, p.Name, stringMax); err != nil {
		return err
	}
	// bitwire's time.Time coding; package fields has no helper for it.
	fields.WriteBitlen(w, fields.Zigzag(p.BirthDay.Unix()), timeSecBits)
	w.WriteBits(uint64(p.BirthDay.Nanosecond()), timeNsBits)
	if err := fields.WriteString(w, p.Phone, stringMax); err != nil {
		return err
	}
	if err := hand.siblings.Write(w, int64(p.Siblings)); err != nil {
		return err
	}
	w.WriteBool(p.Spouse)
	fields.WriteFloat64(w, p.Money)
	return nil
}

// HandDecodePerson reads what HandEncodePerson wrote.
func HandDecodePerson(r *bits.Reader, p *Person) error {
	var err error
	if p.Name, err = fields.ReadString(r, stringMax); err != nil {
		return err
	}
	z, err := fields.ReadBitlen(r, timeSecBits)
	if err != nil {
		return err
	}
	ns, err := r.ReadBits(timeNsBits)
	if err != nil {
		return err
	}
	if ns >= 1e9 {
		return errHandNanos
	}
	p.BirthDay = time.Unix(fields.Unzigzag(z), int64(ns)).UTC()
	if p.Phone, err = fields.ReadString(r, stringMax); err != nil {
		return err
	}
	s, err := hand.siblings.Read(r)
	if err != nil {
		return err
	}
	p.Siblings = int(s)
	if p.Spouse, err = r.ReadBool(); err != nil {
		return err
	}
	p.Money, err = fields.ReadFloat64(r)
	return err
}

// ---- PlayerState and Snapshot ----

// HandEncodePlayer writes p in bitwire's layout: 72 bits.
func HandEncodePlayer(w *bits.Writer, p *PlayerState) error {
	if err := hand.playerX.Write(w, float64(p.Pos.X)); err != nil {
		return fmt.Errorf("Pos.X: %w", err)
	}
	if err := hand.playerY.Write(w, float64(p.Pos.Y)); err != nil {
		return fmt.Errorf("Pos.Y: %w", err)
	}
	if err := hand.playerX.Write(w, float64(p.Pos.Z)); err != nil {
		return fmt.Errorf("Pos.Z: %w", err)
	}
	if err := hand.yaw.Write(w, float64(p.Yaw)); err != nil {
		return fmt.Errorf("Yaw: %w", err)
	}
	if err := hand.health.Write(w, int64(p.Health)); err != nil {
		return fmt.Errorf("Health: %w", err)
	}
	if err := hand.weapon.Write(w, int64(p.Weapon)); err != nil {
		return fmt.Errorf("Weapon: %w", err)
	}
	w.WriteBool(p.Crouch)
	w.WriteBool(p.Firing)
	return nil
}

// HandDecodePlayer reads what HandEncodePlayer wrote.
func HandDecodePlayer(r *bits.Reader, p *PlayerState) error {
	x, err := hand.playerX.Read(r)
	if err != nil {
		return err
	}
	y, err := hand.playerY.Read(r)
	if err != nil {
		return err
	}
	z, err := hand.playerX.Read(r)
	if err != nil {
		return err
	}
	yaw, err := hand.yaw.Read(r)
	if err != nil {
		return err
	}
	health, err := hand.health.Read(r)
	if err != nil {
		return err
	}
	weapon, err := hand.weapon.Read(r)
	if err != nil {
		return err
	}
	crouch, err := r.ReadBool()
	if err != nil {
		return err
	}
	firing, err := r.ReadBool()
	if err != nil {
		return err
	}
	*p = PlayerState{
		Pos:    PlayerPos{X: float32(x), Y: float32(y), Z: float32(z)},
		Yaw:    float32(yaw),
		Health: int(health),
		Weapon: int(weapon),
		Crouch: crouch,
		Firing: firing,
	}
	return nil
}

// HandEncodeSnapshot writes s in bitwire's layout.
func HandEncodeSnapshot(w *bits.Writer, s *Snapshot) error {
	w.WriteBits(uint64(s.Tick), 32)
	for i := range s.Players {
		if err := HandEncodePlayer(w, &s.Players[i]); err != nil {
			return fmt.Errorf("Players[%d].%w", i, err)
		}
	}
	return nil
}

// HandDecodeSnapshot reads what HandEncodeSnapshot wrote.
func HandDecodeSnapshot(r *bits.Reader, s *Snapshot) error {
	t, err := r.ReadBits(32)
	if err != nil {
		return err
	}
	s.Tick = uint32(t)
	for i := range s.Players {
		if err := HandDecodePlayer(r, &s.Players[i]); err != nil {
			return err
		}
	}
	return nil
}

// ---- World ----

// HandEncodeCrate writes one crate in bitwire's layout.
func HandEncodeCrate(w *bits.Writer, c *Crate) error {
	fields.WriteBitlen(w, uint64(c.ID), crateIDBits)
	if err := hand.crateXZ.Write(w, float64(c.Pos.X)); err != nil {
		return err
	}
	if err := hand.crateY.Write(w, float64(c.Pos.Y)); err != nil {
		return err
	}
	if err := hand.crateXZ.Write(w, float64(c.Pos.Z)); err != nil {
		return err
	}
	q := [4]float64{float64(c.Rot[0]), float64(c.Rot[1]), float64(c.Rot[2]), float64(c.Rot[3])}
	if err := hand.rot.Write(w, q); err != nil {
		return err
	}
	w.WriteBool(c.Asleep)
	return nil
}

// HandDecodeCrate reads what HandEncodeCrate wrote.
func HandDecodeCrate(r *bits.Reader, c *Crate) error {
	id, err := fields.ReadBitlen(r, crateIDBits)
	if err != nil {
		return err
	}
	if id > 1<<32-1 {
		return fields.ErrOutOfRange
	}
	x, err := hand.crateXZ.Read(r)
	if err != nil {
		return err
	}
	y, err := hand.crateY.Read(r)
	if err != nil {
		return err
	}
	z, err := hand.crateXZ.Read(r)
	if err != nil {
		return err
	}
	q, err := hand.rot.Read(r)
	if err != nil {
		return err
	}
	asleep, err := r.ReadBool()
	if err != nil {
		return err
	}
	*c = Crate{
		ID:     uint32(id),
		Pos:    CratePos{X: float32(x), Y: float32(y), Z: float32(z)},
		Rot:    [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])},
		Asleep: asleep,
	}
	return nil
}

// minCrateBits is the smallest a coded crate can be; it bounds the count a
// decoder believes before it grows its slice.
var minCrateBits = crateIDBits + 1 + hand.crateXZ.Bits()*2 + hand.crateY.Bits() + hand.rot.Bits() + 1

// HandEncodeWorld writes w in bitwire's layout.
func HandEncodeWorld(bw *bits.Writer, w *World) error {
	bw.WriteBits(uint64(w.Tick), 32)
	if err := fields.WriteLen(bw, len(w.Crates), cratesMax); err != nil {
		return err
	}
	for i := range w.Crates {
		if err := HandEncodeCrate(bw, &w.Crates[i]); err != nil {
			return fmt.Errorf("Crates[%d]: %w", i, err)
		}
	}
	return nil
}

// HandDecodeWorld reads what HandEncodeWorld wrote, reusing w's slice.
func HandDecodeWorld(r *bits.Reader, w *World) error {
	t, err := r.ReadBits(32)
	if err != nil {
		return err
	}
	n, err := fields.ReadLen(r, cratesMax)
	if err != nil {
		return err
	}
	if n*minCrateBits > r.Remaining() {
		return bits.ErrUnexpectedEnd
	}
	w.Tick = uint32(t)
	if cap(w.Crates) < n {
		w.Crates = make([]Crate, n)
	}
	w.Crates = w.Crates[:n]
	for i := range w.Crates {
		if err := HandDecodeCrate(r, &w.Crates[i]); err != nil {
			return err
		}
	}
	return nil
}

// ---- the benchmark subjects ----

// handFull sets up the hand-written packer on v: Encode into a reused
// Writer, Decode from a reused Reader into a reused value. want returns the
// value a decoder must rebuild (bitwire's quantization of v).
func handFull[T any](v *T, enc func(*bits.Writer, *T) error, dec func(*bits.Reader, *T) error,
	want func() (T, error), eq func(a, b *T) bool) Subject {
	var w bits.Writer
	var r bits.Reader
	var out T
	return Subject{
		Name: "handwritten",
		Encode: func() ([]byte, error) {
			w.Reset(w.Bytes()[:0])
			err := enc(&w, v)
			return w.Bytes(), err
		},
		Decode: func(data []byte) error {
			r.Reset(data)
			if err := dec(&r, &out); err != nil {
				return err
			}
			if !r.CheckPadding() {
				return errors.New("handwritten: trailing data")
			}
			return nil
		},
		Check: func() error {
			exp, err := want()
			if err != nil {
				return err
			}
			if !eq(&out, &exp) {
				return mismatch("handwritten", out, exp)
			}
			return nil
		},
	}
}
