package bench

import (
	"errors"
	"slices"

	"github.com/mus-format/mus-go/ord"
	"github.com/mus-format/mus-go/raw"
	"github.com/mus-format/mus-go/unsafe"
	"github.com/mus-format/mus-go/varint"
)

// mus-go (the MUS format) is a peer written the way its users write it:
// one function per type over the library's serializers, sized first, then
// marshalled into a buffer of that size. Floats and fixed-width integers
// go through its unsafe package, its fastest (raw words in the machine's
// byte order: little-endian here), counts and small integers varints,
// strings a varint length and the bytes, the time Unix nanoseconds in UTC.

var errMusLength = errors.New("mus: length out of range, or a message too short")

// musGrow returns dst extended by n bytes, and the extension.
func musGrow(dst []byte, n int) ([]byte, []byte) {
	dst = slices.Grow(dst, n)[:len(dst)+n]
	return dst, dst[len(dst)-n:]
}

func musPerson() codecOf[Person] {
	size := func(p *Person) int {
		return ord.String.Size(p.Name) + raw.TimeUnixNanoUTC.Size(p.BirthDay) + ord.String.Size(p.Phone) +
			varint.PositiveInt.Size(p.Siblings) + ord.Bool.Size(p.Spouse) + unsafe.Float64.Size(p.Money)
	}
	return codecOf[Person]{
		Append: func(dst []byte, p *Person) ([]byte, error) {
			dst, bs := musGrow(dst, size(p))
			n := ord.String.Marshal(p.Name, bs)
			n += raw.TimeUnixNanoUTC.Marshal(p.BirthDay, bs[n:])
			n += ord.String.Marshal(p.Phone, bs[n:])
			n += varint.PositiveInt.Marshal(p.Siblings, bs[n:])
			n += ord.Bool.Marshal(p.Spouse, bs[n:])
			unsafe.Float64.Marshal(p.Money, bs[n:])
			return dst, nil
		},
		Read: func(bs []byte, p *Person) (err error) {
			var n, k int
			if p.Name, k, err = ord.String.Unmarshal(bs); err != nil {
				return err
			}
			n += k
			if p.BirthDay, k, err = raw.TimeUnixNanoUTC.Unmarshal(bs[n:]); err != nil {
				return err
			}
			n += k
			if p.Phone, k, err = ord.String.Unmarshal(bs[n:]); err != nil {
				return err
			}
			n += k
			if p.Siblings, k, err = varint.PositiveInt.Unmarshal(bs[n:]); err != nil {
				return err
			}
			n += k
			if p.Spouse, k, err = ord.Bool.Unmarshal(bs[n:]); err != nil {
				return err
			}
			n += k
			p.Money, _, err = unsafe.Float64.Unmarshal(bs[n:])
			return err
		},
	}
}

// musPlayerSize is the size of a PlayerState: four raw floats, two
// varints, two bools.
func musPlayerSize(p *PlayerState) int {
	return 4*4 + varint.PositiveInt.Size(p.Health) + varint.PositiveInt.Size(p.Weapon) + 2
}

func musPutPlayer(p *PlayerState, bs []byte) int {
	n := unsafe.Float32.Marshal(p.Pos.X, bs)
	n += unsafe.Float32.Marshal(p.Pos.Y, bs[n:])
	n += unsafe.Float32.Marshal(p.Pos.Z, bs[n:])
	n += unsafe.Float32.Marshal(p.Yaw, bs[n:])
	n += varint.PositiveInt.Marshal(p.Health, bs[n:])
	n += varint.PositiveInt.Marshal(p.Weapon, bs[n:])
	n += ord.Bool.Marshal(p.Crouch, bs[n:])
	return n + ord.Bool.Marshal(p.Firing, bs[n:])
}

func musGetPlayer(bs []byte, p *PlayerState) (n int, err error) {
	var k int
	if len(bs) < 4*4 {
		return 0, errMusLength
	}
	p.Pos.X, n, _ = unsafe.Float32.Unmarshal(bs)
	p.Pos.Y, k, _ = unsafe.Float32.Unmarshal(bs[n:])
	n += k
	p.Pos.Z, k, _ = unsafe.Float32.Unmarshal(bs[n:])
	n += k
	p.Yaw, k, _ = unsafe.Float32.Unmarshal(bs[n:])
	n += k
	if p.Health, k, err = varint.PositiveInt.Unmarshal(bs[n:]); err != nil {
		return
	}
	n += k
	if p.Weapon, k, err = varint.PositiveInt.Unmarshal(bs[n:]); err != nil {
		return
	}
	n += k
	if p.Crouch, k, err = ord.Bool.Unmarshal(bs[n:]); err != nil {
		return
	}
	n += k
	if p.Firing, k, err = ord.Bool.Unmarshal(bs[n:]); err != nil {
		return
	}
	return n + k, nil
}

func musPlayer() codecOf[PlayerState] {
	return codecOf[PlayerState]{
		Append: func(dst []byte, p *PlayerState) ([]byte, error) {
			dst, bs := musGrow(dst, musPlayerSize(p))
			musPutPlayer(p, bs)
			return dst, nil
		},
		Read: func(bs []byte, p *PlayerState) error {
			_, err := musGetPlayer(bs, p)
			return err
		},
	}
}

func musSnapshot() codecOf[Snapshot] {
	return codecOf[Snapshot]{
		Append: func(dst []byte, s *Snapshot) ([]byte, error) {
			size := unsafe.Uint32.Size(s.Tick)
			for i := range s.Players {
				size += musPlayerSize(&s.Players[i])
			}
			dst, bs := musGrow(dst, size)
			n := unsafe.Uint32.Marshal(s.Tick, bs)
			for i := range s.Players {
				n += musPutPlayer(&s.Players[i], bs[n:])
			}
			return dst, nil
		},
		Read: func(bs []byte, s *Snapshot) (err error) {
			var n, k int
			if s.Tick, n, err = unsafe.Uint32.Unmarshal(bs); err != nil {
				return err
			}
			for i := range s.Players {
				if k, err = musGetPlayer(bs[n:], &s.Players[i]); err != nil {
					return err
				}
				n += k
			}
			return nil
		},
	}
}

func musDeltaSnapshot() codecOf[DeltaSnapshot] {
	return codecOf[DeltaSnapshot]{
		Append: func(dst []byte, s *DeltaSnapshot) ([]byte, error) {
			size := unsafe.Uint32.Size(s.Tick) + varint.PositiveInt.Size(len(s.Players))
			for i := range s.Players {
				p := &s.Players[i]
				size += 1 + 4*4 + varint.PositiveInt.Size(p.Health) + varint.PositiveInt.Size(p.Weapon) + 2
			}
			dst, bs := musGrow(dst, size)
			n := unsafe.Uint32.Marshal(s.Tick, bs)
			n += varint.PositiveInt.Marshal(len(s.Players), bs[n:])
			for i := range s.Players {
				p := &s.Players[i]
				n += unsafe.Uint8.Marshal(p.ID, bs[n:])
				n += unsafe.Float32.Marshal(p.Pos.X, bs[n:])
				n += unsafe.Float32.Marshal(p.Pos.Y, bs[n:])
				n += unsafe.Float32.Marshal(p.Pos.Z, bs[n:])
				n += unsafe.Float32.Marshal(p.Yaw, bs[n:])
				n += varint.PositiveInt.Marshal(p.Health, bs[n:])
				n += varint.PositiveInt.Marshal(p.Weapon, bs[n:])
				n += ord.Bool.Marshal(p.Flags.Crouch, bs[n:])
				n += ord.Bool.Marshal(p.Flags.Firing, bs[n:])
			}
			return dst, nil
		},
		Read: func(bs []byte, s *DeltaSnapshot) (err error) {
			var n, k, count int
			if s.Tick, n, err = unsafe.Uint32.Unmarshal(bs); err != nil {
				return err
			}
			if count, k, err = varint.PositiveInt.Unmarshal(bs[n:]); err != nil {
				return err
			}
			n += k
			if count < 0 || count > NumPlayers {
				return errMusLength
			}
			s.Players = slices.Grow(s.Players[:0], count)[:count]
			for i := range s.Players {
				p := &s.Players[i]
				if p.ID, k, err = unsafe.Uint8.Unmarshal(bs[n:]); err != nil {
					return err
				}
				n += k
				var ps PlayerState
				if k, err = musGetPlayer(bs[n:], &ps); err != nil {
					return err
				}
				n += k
				p.Pos, p.Yaw, p.Health, p.Weapon = ps.Pos, ps.Yaw, ps.Health, ps.Weapon
				p.Flags = PlayerFlags{Crouch: ps.Crouch, Firing: ps.Firing}
			}
			return nil
		},
	}
}

// musCrateSize is a crate's size: a varint id, seven raw floats, a bool.
func musCrateSize(c *Crate) int { return varint.Uint32.Size(c.ID) + 7*4 + 1 }

func musWorld() codecOf[World] {
	return codecOf[World]{
		Append: func(dst []byte, w *World) ([]byte, error) {
			size := unsafe.Uint32.Size(w.Tick) + varint.PositiveInt.Size(len(w.Crates))
			for i := range w.Crates {
				size += musCrateSize(&w.Crates[i])
			}
			dst, bs := musGrow(dst, size)
			n := unsafe.Uint32.Marshal(w.Tick, bs)
			n += varint.PositiveInt.Marshal(len(w.Crates), bs[n:])
			for i := range w.Crates {
				c := &w.Crates[i]
				n += varint.Uint32.Marshal(c.ID, bs[n:])
				n += unsafe.Float32.Marshal(c.Pos.X, bs[n:])
				n += unsafe.Float32.Marshal(c.Pos.Y, bs[n:])
				n += unsafe.Float32.Marshal(c.Pos.Z, bs[n:])
				for _, q := range c.Rot {
					n += unsafe.Float32.Marshal(q, bs[n:])
				}
				n += ord.Bool.Marshal(c.Asleep, bs[n:])
			}
			return dst, nil
		},
		Read: func(bs []byte, w *World) (err error) {
			var n, k, count int
			if w.Tick, n, err = unsafe.Uint32.Unmarshal(bs); err != nil {
				return err
			}
			if count, k, err = varint.PositiveInt.Unmarshal(bs[n:]); err != nil {
				return err
			}
			n += k
			if count < 0 || count > 1024 {
				return errMusLength
			}
			w.Crates = slices.Grow(w.Crates[:0], count)[:count]
			for i := range w.Crates {
				c := &w.Crates[i]
				if c.ID, k, err = varint.Uint32.Unmarshal(bs[n:]); err != nil {
					return err
				}
				n += k
				if len(bs)-n < 7*4 {
					return errMusLength
				}
				c.Pos.X, k, _ = unsafe.Float32.Unmarshal(bs[n:])
				n += k
				c.Pos.Y, k, _ = unsafe.Float32.Unmarshal(bs[n:])
				n += k
				c.Pos.Z, k, _ = unsafe.Float32.Unmarshal(bs[n:])
				n += k
				for j := range c.Rot {
					c.Rot[j], k, _ = unsafe.Float32.Unmarshal(bs[n:])
					n += k
				}
				if c.Asleep, k, err = ord.Bool.Unmarshal(bs[n:]); err != nil {
					return err
				}
				n += k
			}
			return nil
		},
	}
}

func init() {
	registerAppenders("mus", appenders{
		Person: musPerson(), Player: musPlayer(), Snapshot: musSnapshot(),
		Delta: musDeltaSnapshot(), World: musWorld(),
	})
}
