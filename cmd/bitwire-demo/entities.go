package main

import "github.com/bitwire/bitwire/replicate"

// Entity is what the server replicates: one thing of the world, with its
// kind told by which pointer is set (each pointer costs a presence bit; a
// delta against the same kind costs one changed bit per pointer, and the
// changed fields of the one that is set). The match, every living player
// and every crate is one entity, keyed by an entity id (below).
type Entity struct {
	Match  *Match
	Player *Player
	Crate  *Crate
}

// Entity ids: the match is 0, a crate its crate id (below 2^24), a player
// 2^24 plus its player id. A respawn or a replaced crate takes a new id.
const (
	matchID      = 0
	playerIDBase = 1 << 24
)

func playerEntityID(pid uint32) uint32 { return playerIDBase + pid }

// isPlayerID reports whether an entity id is a player's.
func isPlayerID(id uint32) bool { return id >= playerIDBase }

// publisher turns the world into the Server's entities each tick: it Sets
// what may have changed and Removes what is gone, and tells the caller
// (through changed and removed) so it can keep its records of the truth.
type publisher struct {
	srv      *replicate.Server[Entity]
	crateIDs []uint32 // by crate slot: the id published last
	wasAwake []bool   // by crate slot: awake when published last
	players  []uint32 // by player slot: the entity id published last, 0 none
	scratch  Entity
	p        Player
	c        Crate
	m        Match
}

func newPublisher(srv *replicate.Server[Entity], w *world) *publisher {
	return &publisher{
		srv:      srv,
		crateIDs: make([]uint32, len(w.crates)),
		wasAwake: make([]bool, len(w.crates)),
		players:  make([]uint32, len(w.players)),
	}
}

// publish makes the Server's entities the world's at the current tick.
// Crates asleep now and at the last tick did not move: they are not Set.
func (pb *publisher) publish(w *world, changed func(id uint32), removed func(id uint32)) error {
	set := func(id uint32, e *Entity) error {
		ch, err := pb.srv.Set(id, e)
		if err == nil && ch {
			changed(id)
		}
		return err
	}
	remove := func(id uint32) error {
		ok, err := pb.srv.Remove(id)
		if err == nil && ok {
			removed(id)
		}
		return err
	}
	pb.m = w.match
	if err := set(matchID, &Entity{Match: &pb.m}); err != nil {
		return err
	}
	for i := range w.players {
		p := &w.players[i]
		id := uint32(0)
		if p.alive {
			id = playerEntityID(p.id)
		}
		if old := pb.players[i]; old != 0 && old != id {
			if err := remove(old); err != nil {
				return err
			}
		}
		pb.players[i] = id
		if id == 0 {
			continue
		}
		pb.p = Player{Pos: p.p.pos(), Yaw: float32(p.yaw), Pitch: float32(p.pitch), Health: p.health, Weapon: p.weapon, Flags: p.flags}
		if err := set(id, &Entity{Player: &pb.p}); err != nil {
			return err
		}
	}
	for i := range w.crates {
		c := &w.crates[i]
		fresh := pb.crateIDs[i] != c.id
		if fresh && pb.crateIDs[i] != 0 {
			if err := remove(pb.crateIDs[i]); err != nil {
				return err
			}
		}
		if !fresh && c.asleep && !pb.wasAwake[i] {
			continue
		}
		pb.crateIDs[i], pb.wasAwake[i] = c.id, !c.asleep
		pb.c = Crate{Pos: c.p.cratePos(),
			Rot:    [4]float32{float32(c.q[0]), float32(c.q[1]), float32(c.q[2]), float32(c.q[3])},
			Asleep: c.asleep}
		if err := set(c.id, &Entity{Crate: &pb.c}); err != nil {
			return err
		}
	}
	return nil
}

// position returns where an entity is on the ground plane; ok is false for
// the match, which is nowhere.
func position(e *Entity) (x, z float32, ok bool) {
	switch {
	case e.Player != nil:
		return e.Player.Pos.X, e.Player.Pos.Z, true
	case e.Crate != nil:
		return e.Crate.Pos.X, e.Crate.Pos.Z, true
	}
	return 0, 0, false
}

// nearRadius is where "near" ends, for the priorities and the staleness
// figures: 20 m from the client's player.
const nearRadius = 20

// priorityFunc is the priority of entities for the client whose player is
// at *x, *z (own is its player's entity id): its own player first by far,
// then by distance, players counting double. The match rides along with
// the near things.
func priorityFunc(own *uint32, x, z *float32) func(id uint32, e *Entity) float32 {
	return func(id uint32, e *Entity) float32 {
		if id == *own {
			return 1e6
		}
		ex, ez, ok := position(e)
		if !ok {
			return 1
		}
		dx, dz := ex-*x, ez-*z
		p := 1 / (1 + (dx*dx+dz*dz)*(1.0/(nearRadius*nearRadius)))
		if e.Player != nil {
			p *= 2
		}
		return p
	}
}

// dist2 is the squared ground distance between an entity and a point.
func dist2(e *Entity, x, z float32) float64 {
	ex, ez, ok := position(e)
	if !ok {
		return 0
	}
	dx, dz := float64(ex-x), float64(ez-z)
	return dx*dx + dz*dz
}
