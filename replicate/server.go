package replicate

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// Server holds the world: the entities of one type E, keyed by id, with
// the last few quantized states of each, and the Peers that send it to the
// clients. Create it with NewServer.
//
// Each tick: Advance(tick), then Set the entities that may have changed
// and Remove the ones that are gone (an entity not Set keeps its state),
// then encode each Peer's packets. Set quantizes an entity once, for every
// client, and records the tick at which it last changed, so that Peers
// skip an unchanged entity with one comparison.
type Server[E any] struct {
	c       *bitwire.Codec[E]
	fp      uint32
	pred    bool // the codec has pred values: its deltas may be predicted from two baselines
	cfg     config
	tick    uint32
	started bool
	sealed  atomic.Bool // a Peer encoded this tick: the world is frozen until Advance
	nextGen uint32
	index   map[uint32]int32 // id → slot
	ents    []entity[E]      // by slot
	changed []uint32         // by slot: tick of the last change (hot copy)
	gens    []uint32         // by slot: the incarnation, 0 when free (hot copy)
	ids     []uint32         // by slot: the id (hot copy)
	cur     []E              // by slot: the newest state, a shallow copy of the newest version's (hot copy)
	free    []int32          // free slots
	peers   []*Peer[E]
	w       bits.Writer
	enc     []byte // the storage of w, reused by every Set
	r       bits.Reader

	// changeLog lists the slots Set changed (or gave a new incarnation),
	// in order, from position logBase on: each Peer's scan reads what is
	// new since its last, to visit those slots only (see waker).
	changeLog []int32
	logBase   int64

	pool   encodePool[E] // EncodeAll's workers
	deltas deltaShare    // the tick's deltas, shared by the Peers

	room   int  // entityRoom's value, valid when roomOK
	roomOK bool // cleared when a Peer comes or goes
}

// entity is one slot: the states of one incarnation of an id.
type entity[E any] struct {
	id    uint32
	full  []byte // Encode of the newest state, zero-padded
	nbits int    // its length in bits
	versions[E]
}

// NewServer returns an empty Server of entities encoded by c.
func NewServer[E any](c *bitwire.Codec[E], opts ...Option) (*Server[E], error) {
	if c == nil {
		return nil, errors.New("replicate: NewServer with a nil codec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Server[E]{c: c, fp: fingerprint32(c.Fingerprint()), pred: c.Predicts(), cfg: cfg, index: make(map[uint32]int32)}, nil
}

// Tick returns the current tick (0 before the first Advance).
func (s *Server[E]) Tick() uint32 { return s.tick }

// Len returns the number of entities.
func (s *Server[E]) Len() int { return len(s.index) }

// Advance starts tick, which must be newer than the current one
// (ErrTickOrder otherwise): Set and Remove then happen at tick.
func (s *Server[E]) Advance(tick uint32) error {
	if tick == 0 || (s.started && tick <= s.tick) {
		return fmt.Errorf("%w: Advance(%d) after tick %d", ErrTickOrder, tick, s.tick)
	}
	s.tick, s.started = tick, true
	s.sealed.Store(false)
	s.trimLog()
	return nil
}

// trimLog drops the change log's entries every Peer has read. A Peer that
// lags by more than a few worlds' worth (one that has not encoded for
// long) is told to visit every slot at its next scan instead.
func (s *Server[E]) trimLog() {
	end := s.logBase + int64(len(s.changeLog))
	keep := end - int64(4*len(s.ents)+1024)
	from := end
	for _, p := range s.peers {
		if p.wake.logAt < keep {
			p.wake.logAt = -1
			continue
		}
		from = min(from, p.wake.logAt)
	}
	if from == s.logBase {
		return
	}
	n := copy(s.changeLog, s.changeLog[from-s.logBase:])
	s.changeLog = s.changeLog[:n]
	s.logBase = from
}

// Set creates the entity id, or updates it, at the current tick: e is
// quantized once (encoded, and decoded back) and stored; e itself is not
// retained. It reports whether the entity is new or its quantized state
// differs from the previous one. An entity not Set in a tick keeps its
// state, so a world where few entities move only Sets those.
//
// Errors: ErrTickOrder before the first Advance or after a Peer encoded
// the tick; ErrEntityTooLarge for a state whose encoding alone would not
// fit a packet of the smallest budget among the Server's Peers; the
// codec's error for a state it cannot encode (nothing changes then).
func (s *Server[E]) Set(id uint32, e *E) (changed bool, err error) {
	if e == nil {
		return false, fmt.Errorf("replicate: Set of a nil state, id %d", id)
	}
	if !s.started || s.sealed.Load() {
		return false, fmt.Errorf("%w: Set of id %d at tick %d after encoding", ErrTickOrder, id, s.tick)
	}
	s.w.Reset(s.enc[:0]) // the storage of the last Set's encoding, copied since
	if err := s.c.Encode(&s.w, e); err != nil {
		return false, fmt.Errorf("replicate: id %d: %w", id, err)
	}
	nbits := s.w.Len()
	enc := s.w.Bytes()
	s.enc = enc
	if err := s.checkSize(id, nbits); err != nil {
		return false, err
	}
	slot, ok := s.index[id]
	if ok {
		ent := &s.ents[slot]
		if ent.nbits == nbits && bytes.Equal(ent.full, enc) {
			return false, nil
		}
	} else {
		slot = s.alloc(id)
	}
	ent := &s.ents[slot]
	v := s.nextVersion(ent)
	s.r.Reset(enc)
	if err := s.c.Decode(&s.r, &v.val); err != nil {
		return false, fmt.Errorf("replicate: internal: id %d does not decode: %w", id, err)
	}
	v.tick = s.tick
	ent.full = append(ent.full[:0], enc...)
	ent.nbits = nbits
	s.changed[slot] = s.tick
	s.changeLog = append(s.changeLog, slot)
	// cur shares the newest version's pointees (if E has any): that version
	// is written again only by a Set of this tick, which refreshes cur.
	s.cur[slot] = v.val
	return true, nil
}

// alloc gives id a slot and a new incarnation.
func (s *Server[E]) alloc(id uint32) int32 {
	var slot int32
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		slot = int32(len(s.ents))
		s.ents = append(s.ents, entity[E]{})
		s.changed = append(s.changed, 0)
		s.gens = append(s.gens, 0)
		s.ids = append(s.ids, 0)
		var zero E
		s.cur = append(s.cur, zero)
		s.deltas.grow(len(s.ents))
	}
	s.nextGen++
	if s.nextGen == 0 { // 0 means free: skip it on wrap-around
		s.nextGen++
	}
	s.gens[slot] = s.nextGen
	s.ids[slot] = id
	ent := &s.ents[slot]
	ent.id = id
	ent.reset()
	ent.nbits = 0
	ent.full = ent.full[:0]
	s.index[id] = slot
	return slot
}

// nextVersion returns the version to fill for the current tick: the newest
// one when it is of this tick already (Set twice), else a new one, which
// overwrites the oldest once the ring is full.
func (s *Server[E]) nextVersion(ent *entity[E]) *version[E] {
	if n := len(ent.vers); n > 0 {
		if nv := ent.newest(); nv.tick == s.tick {
			return nv
		}
	}
	return ent.push(s.cfg.versions)
}

// at returns the version the entity had at tick: its newest version from
// tick or before; nil when that version has left the ring.
func (ent *entity[E]) at(tick uint32) *version[E] {
	n := len(ent.vers)
	for k := 0; k < n; k++ {
		i := ent.head - 1 - k
		if i < 0 {
			i += n
		}
		if ent.vers[i].tick <= tick {
			return &ent.vers[i]
		}
	}
	return nil
}

// Remove removes the entity id at the current tick and reports whether it
// existed. Every client that may hold it is sent the removal, repeated
// until a packet carrying it is acknowledged. The id may be Set again
// later: that is a new entity, sent in full.
func (s *Server[E]) Remove(id uint32) (bool, error) {
	if !s.started || s.sealed.Load() {
		return false, fmt.Errorf("%w: Remove of id %d at tick %d after encoding", ErrTickOrder, id, s.tick)
	}
	slot, ok := s.index[id]
	if !ok {
		return false, nil
	}
	gen := s.gens[slot]
	for _, p := range s.peers {
		p.forget(slot, gen, id)
	}
	delete(s.index, id)
	s.gens[slot] = 0
	var zero E
	s.cur[slot] = zero
	s.free = append(s.free, slot)
	return true, nil
}

// Get returns the current quantized state of id. The value belongs to the
// Server: read it, and do not keep it past the next Set or Remove.
func (s *Server[E]) Get(id uint32) (*E, bool) {
	slot, ok := s.index[id]
	if !ok {
		return nil, false
	}
	return &s.ents[slot].newest().val, true
}

// Range calls f for every entity with its current quantized state, in no
// particular order, until f returns false.
func (s *Server[E]) Range(f func(id uint32, e *E) bool) {
	for slot := range s.ents {
		if s.gens[slot] == 0 {
			continue
		}
		ent := &s.ents[slot]
		if !f(ent.id, &ent.newest().val) {
			return
		}
	}
}
