package main

import (
	"sort"
	"sync"

	"github.com/bitwire/bitwire"
)

// truth is the server's record of every quantized state of every entity,
// with the tick it began, and of every removal: what the clients check
// what they hold against. The server appends to it each tick; the clients
// read it from their own goroutines.
type truth struct {
	mu    sync.RWMutex
	codec *bitwire.Codec[Entity]
	hist  map[uint32][]truthEntry // by id, in tick order
	// own[t][c] is the entity id of client c's player at tick t (0 when
	// dead), and where it stands.
	own map[uint32][]ownPlayer
}

type truthEntry struct {
	tick uint32
	gone bool // removed at tick
	val  Entity
}

type ownPlayer struct {
	id   uint32
	x, z float32
}

func newTruth(c *bitwire.Codec[Entity]) *truth {
	return &truth{codec: c, hist: map[uint32][]truthEntry{}, own: map[uint32][]ownPlayer{}}
}

// record appends the quantized state v of id from tick on.
func (t *truth) record(id, tick uint32, v *Entity) {
	var e truthEntry
	e.tick = tick
	t.codec.Copy(&e.val, v)
	t.mu.Lock()
	t.hist[id] = append(t.hist[id], e)
	t.mu.Unlock()
}

// remove records that id was removed at tick.
func (t *truth) remove(id, tick uint32) {
	t.mu.Lock()
	t.hist[id] = append(t.hist[id], truthEntry{tick: tick, gone: true})
	t.mu.Unlock()
}

func (t *truth) setOwn(tick uint32, own []ownPlayer) {
	t.mu.Lock()
	t.own[tick] = own
	t.mu.Unlock()
}

// index returns the entry of h in force at tick, or -1.
func index(h []truthEntry, tick uint32) int {
	i := sort.Search(len(h), func(i int) bool { return h[i].tick > tick }) - 1
	return i
}

// check compares a client's state of id, from tick, with the server's.
// found is false when the server had no such entity at that tick.
func (t *truth) check(id, tick uint32, got *Entity) (equal, found bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	h := t.hist[id]
	i := index(h, tick)
	if i < 0 || h[i].gone {
		return false, false
	}
	return sameEntity(got, &h[i].val), true
}

// sameEntity compares two quantized entities by value: both are decoded
// states (the truth went through Quantize, the client's through a
// decoder), so equal bits mean equal values, and a field by field
// comparison is exact and much cheaper than encoding both.
func sameEntity(a, b *Entity) bool {
	switch {
	case (a.Match == nil) != (b.Match == nil), (a.Player == nil) != (b.Player == nil), (a.Crate == nil) != (b.Crate == nil):
		return false
	case a.Match != nil && *a.Match != *b.Match:
		return false
	case a.Player != nil && *a.Player != *b.Player:
		return false
	case a.Crate != nil && *a.Crate != *b.Crate:
		return false
	}
	return true
}

// maxSample is the most entities a staleness sample looks at.
const maxSample = 2000

// held is what a client holds of one entity, for staleness.
type held func(id uint32) (tick uint32, ok bool)

// staleness samples, at tick, how many ticks behind the server each entity
// is at a client (0 when the client holds its current state; for an entity
// the client lacks, the ticks since it appeared), split by distance from
// the client's player. Entities removed but still held are counted in
// lingering.
//
// In worlds of more than maxSample entities, each sample takes every k-th
// entity (by id, from an offset that turns with every sample), to keep
// the clients' checking cheap next to the server's work.
func (t *truth) staleness(tick uint32, client int, get held, holds func(func(id uint32) bool), near, far *[]uint32) (lingering int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	own := t.own[tick]
	if client >= len(own) {
		return 0
	}
	me := own[client]
	k := uint32(len(t.hist)/maxSample + 1)
	off := (tick/7 + uint32(client)) % k
	for id, h := range t.hist {
		if id%k != off && id != me.id {
			continue
		}
		i := index(h, tick)
		if i < 0 || h[i].gone {
			continue
		}
		var behind uint32
		if ct, ok := get(id); ok {
			j := index(h, ct)
			if j >= 0 && j < i {
				behind = tick - h[j+1].tick
			}
		} else {
			// Not held: behind since it appeared (after its last removal).
			k := i
			for k > 0 && !h[k-1].gone {
				k--
			}
			behind = tick - h[k].tick
		}
		if id == me.id || dist2(&h[i].val, me.x, me.z) <= nearRadius*nearRadius {
			*near = append(*near, behind)
		} else {
			*far = append(*far, behind)
		}
	}
	holds(func(id uint32) bool {
		h := t.hist[id]
		if i := index(h, tick); i >= 0 && h[i].gone {
			lingering++
		}
		return true
	})
	return lingering
}
