package bench

import (
	"fmt"
	"math"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The hand-written delta of DeltaSnapshot: bitwire's delta layout for this
// one type, written out with packages bits and fields. A changed bit per
// top-level field; the players as an entity set (the index sets of
// handwritten_delta.go); each changed survivor's fields without its id, each
// behind a changed bit: Pos in full when any coordinate changed (it is
// composite), Yaw, Health, Weapon, then Flags, both bits (composite). New
// players go in full. Each value is quantized once: the encoder keeps the
// current indexes it compared with and writes those.

const (
	playersMax   = 64 // maxlen of DeltaSnapshot.Players
	playerIDBits = 3  // bitlen prefix of a uint8: fields.BitlenWidth(8)
)

// minIDPlayerBits is the smallest a coded IDPlayer can be; it bounds the
// count of new players a decoder believes.
var minIDPlayerBits = playerIDBits + 1 + 2*hand.playerX.Bits() + hand.playerY.Bits() +
	hand.yaw.Bits() + hand.health.Bits() + hand.weapon.Bits() + 2

// The fields of a player that a delta can send, as bits of playerDiff.mask.
const (
	chPos = 1 << iota
	chYaw
	chHealth
	chWeapon
	chFlags
)

// playerDiff is what one survivor's delta writes: which fields changed,
// the current position and yaw as quantization indexes, and the error of a
// changed field that cannot be coded.
type playerDiff struct {
	mask         uint8
	x, y, z, yaw uint64
	err          error
}

// HandSnapDelta holds the scratch lists of one encoder or decoder.
type HandSnapDelta struct {
	removed, added, survB, survC, changed []int32
	diffs                                 []playerDiff // of the changed survivors, in order
}

// quantDiff returns c's quantization index and whether c codes differently
// from b. Like bitwire, it takes equal memory as unchanged, else compares
// indexes; a value that cannot be quantized differs from everything.
func quantDiff(q *fields.Quantizer, b, c float32) (ic uint64, changed bool, err error) {
	ic, err = q.Index(float64(c))
	if math.Float32bits(b) == math.Float32bits(c) {
		return ic, false, err
	}
	ib, errb := q.Index(float64(b))
	return ic, err != nil || errb != nil || ib != ic, err
}

// diffPlayer compares a survivor with its baseline; mask 0 means the
// survivor is unchanged. The ids are equal: entities are matched by id.
func diffPlayer(b, c *IDPlayer) playerDiff {
	var d playerDiff
	if *b == *c {
		return d
	}
	x, cx, ex := quantDiff(&hand.playerX, b.Pos.X, c.Pos.X)
	y, cy, ey := quantDiff(&hand.playerY, b.Pos.Y, c.Pos.Y)
	z, cz, ez := quantDiff(&hand.playerX, b.Pos.Z, c.Pos.Z)
	if cx || cy || cz {
		d.mask |= chPos
		d.x, d.y, d.z = x, y, z
		for _, e := range [3]error{ex, ey, ez} {
			if e != nil && d.err == nil {
				d.err = fmt.Errorf("Pos: %w", e)
			}
		}
	}
	yaw, cyaw, eyaw := quantDiff(&hand.yaw, b.Yaw, c.Yaw)
	if cyaw {
		d.mask |= chYaw
		d.yaw = yaw
		if eyaw != nil && d.err == nil {
			d.err = fmt.Errorf("Yaw: %w", eyaw)
		}
	}
	if b.Health != c.Health {
		d.mask |= chHealth
	}
	if b.Weapon != c.Weapon {
		d.mask |= chWeapon
	}
	if b.Flags != c.Flags {
		d.mask |= chFlags
	}
	return d
}

// Encode writes the delta from base to cur.
func (h *HandSnapDelta) Encode(w *bits.Writer, base, cur *DeltaSnapshot) error {
	tickChanged := base.Tick != cur.Tick
	w.WriteBool(tickChanged)
	if tickChanged {
		w.WriteBits(uint64(cur.Tick), 32)
	}
	nb, nc := len(base.Players), len(cur.Players)
	h.removed, h.added, h.survB, h.survC = h.removed[:0], h.added[:0], h.survB[:0], h.survC[:0]
	i, j := 0, 0
	for i < nb && j < nc {
		switch ib, ic := base.Players[i].ID, cur.Players[j].ID; {
		case ib == ic:
			h.survB, h.survC = append(h.survB, int32(i)), append(h.survC, int32(j))
			i++
			j++
		case ib < ic:
			h.removed = append(h.removed, int32(i))
			i++
		default:
			h.added = append(h.added, int32(j))
			j++
		}
	}
	for ; i < nb; i++ {
		h.removed = append(h.removed, int32(i))
	}
	for ; j < nc; j++ {
		h.added = append(h.added, int32(j))
	}
	h.changed, h.diffs = h.changed[:0], h.diffs[:0]
	for k := range h.survB {
		if d := diffPlayer(&base.Players[h.survB[k]], &cur.Players[h.survC[k]]); d.mask != 0 {
			h.changed = append(h.changed, int32(k))
			h.diffs = append(h.diffs, d)
		}
	}
	playersChanged := nb != nc || len(h.changed) > 0 || len(h.removed) > 0
	w.WriteBool(playersChanged)
	if !playersChanged {
		return nil
	}
	if err := fields.WriteLen(w, nc, playersMax); err != nil {
		return fmt.Errorf("Players: %w", err)
	}
	writeIndexSet(w, h.removed, nb, false)
	writeIndexSet(w, h.added, nc, true)
	writeIndexSet(w, h.changed, len(h.survB), false)
	for n, k := range h.changed {
		if err := writePlayerDelta(w, &h.diffs[n], &cur.Players[h.survC[k]]); err != nil {
			return fmt.Errorf("Players[%d].%w", h.survC[k], err)
		}
	}
	for _, j := range h.added {
		if err := HandEncodeIDPlayer(w, &cur.Players[j]); err != nil {
			return fmt.Errorf("Players[%d].%w", j, err)
		}
	}
	return nil
}

// writePlayerDelta writes the changed bits and new values of one player
// whose diff from its baseline is d.
func writePlayerDelta(w *bits.Writer, d *playerDiff, c *IDPlayer) error {
	if d.err != nil {
		return d.err
	}
	pos := d.mask&chPos != 0
	w.WriteBool(pos)
	if pos {
		w.WriteBits(d.x, hand.playerX.Bits())
		w.WriteBits(d.y, hand.playerY.Bits())
		w.WriteBits(d.z, hand.playerX.Bits())
	}
	yaw := d.mask&chYaw != 0
	w.WriteBool(yaw)
	if yaw {
		w.WriteBits(d.yaw, hand.yaw.Bits())
	}
	health := d.mask&chHealth != 0
	w.WriteBool(health)
	if health {
		if err := hand.health.Write(w, int64(c.Health)); err != nil {
			return fmt.Errorf("Health: %w", err)
		}
	}
	weapon := d.mask&chWeapon != 0
	w.WriteBool(weapon)
	if weapon {
		if err := hand.weapon.Write(w, int64(c.Weapon)); err != nil {
			return fmt.Errorf("Weapon: %w", err)
		}
	}
	flags := d.mask&chFlags != 0
	w.WriteBool(flags)
	if flags {
		w.WriteBool(c.Flags.Crouch)
		w.WriteBool(c.Flags.Firing)
	}
	return nil
}

// Decode rebuilds into out the snapshot whose delta from base is in r. out
// must not share its players with base.
func (h *HandSnapDelta) Decode(r *bits.Reader, base, out *DeltaSnapshot) error {
	tickChanged, err := r.ReadBool()
	if err != nil {
		return err
	}
	out.Tick = base.Tick
	if tickChanged {
		t, err := r.ReadBits(32)
		if err != nil {
			return err
		}
		out.Tick = uint32(t)
	}
	playersChanged, err := r.ReadBool()
	if err != nil {
		return err
	}
	if !playersChanged {
		out.Players = append(out.Players[:0], base.Players...)
		return nil
	}
	nb := len(base.Players)
	n, err := fields.ReadLen(r, playersMax)
	if err != nil {
		return err
	}
	if h.removed, err = readIndexSet(r, h.removed[:0], nb, -1); err != nil {
		return err
	}
	surv := nb - len(h.removed)
	nAdded := n - surv
	if nAdded < 0 || nAdded*minIDPlayerBits > r.Remaining() {
		return errHandDelta
	}
	if h.added, err = readIndexSet(r, h.added[:0], n, nAdded); err != nil {
		return err
	}
	if h.changed, err = readIndexSet(r, h.changed[:0], surv, -1); err != nil {
		return err
	}
	if cap(out.Players) < n {
		out.Players = make([]IDPlayer, n)
	}
	out.Players = out.Players[:n]
	removed, added, changed := h.removed, h.added, h.changed
	bi, k := 0, 0
	for j := range out.Players {
		if len(added) > 0 && int(added[0]) == j {
			added = added[1:]
			continue
		}
		for len(removed) > 0 && bi == int(removed[0]) {
			removed = removed[1:]
			bi++
		}
		if bi >= nb {
			return errHandDelta
		}
		out.Players[j] = base.Players[bi]
		if len(changed) > 0 && int(changed[0]) == k {
			changed = changed[1:]
			if err := readPlayerDelta(r, &out.Players[j]); err != nil {
				return err
			}
		}
		bi++
		k++
	}
	for _, j := range h.added {
		if err := HandDecodeIDPlayer(r, &out.Players[j]); err != nil {
			return err
		}
	}
	return nil
}

// readPlayerDelta applies a player's field deltas to p, which holds its
// baseline.
func readPlayerDelta(r *bits.Reader, p *IDPlayer) error {
	pos, err := r.ReadBool()
	if err != nil {
		return err
	}
	if pos {
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
		p.Pos = PlayerPos{X: float32(x), Y: float32(y), Z: float32(z)}
	}
	yaw, err := r.ReadBool()
	if err != nil {
		return err
	}
	if yaw {
		v, err := hand.yaw.Read(r)
		if err != nil {
			return err
		}
		p.Yaw = float32(v)
	}
	health, err := r.ReadBool()
	if err != nil {
		return err
	}
	if health {
		v, err := hand.health.Read(r)
		if err != nil {
			return err
		}
		p.Health = int(v)
	}
	weapon, err := r.ReadBool()
	if err != nil {
		return err
	}
	if weapon {
		v, err := hand.weapon.Read(r)
		if err != nil {
			return err
		}
		p.Weapon = int(v)
	}
	flags, err := r.ReadBool()
	if err != nil {
		return err
	}
	if flags {
		crouch, err := r.ReadBool()
		if err != nil {
			return err
		}
		firing, err := r.ReadBool()
		if err != nil {
			return err
		}
		p.Flags = PlayerFlags{Crouch: crouch, Firing: firing}
	}
	return nil
}

// HandEncodeIDPlayer writes p in full in bitwire's layout: what a delta
// sends for a new player.
func HandEncodeIDPlayer(w *bits.Writer, p *IDPlayer) error {
	fields.WriteBitlen(w, uint64(p.ID), playerIDBits)
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
	w.WriteBool(p.Flags.Crouch)
	w.WriteBool(p.Flags.Firing)
	return nil
}

// HandDecodeIDPlayer reads what HandEncodeIDPlayer wrote.
func HandDecodeIDPlayer(r *bits.Reader, p *IDPlayer) error {
	id, err := fields.ReadBitlen(r, playerIDBits) // 3 bits of prefix hold any uint8
	if err != nil {
		return err
	}
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
	*p = IDPlayer{
		ID:     uint8(id),
		Pos:    PlayerPos{X: float32(x), Y: float32(y), Z: float32(z)},
		Yaw:    float32(yaw),
		Health: int(health),
		Weapon: int(weapon),
		Flags:  PlayerFlags{Crouch: crouch, Firing: firing},
	}
	return nil
}
