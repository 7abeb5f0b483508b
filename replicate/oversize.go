package replicate

import (
	"errors"
	"fmt"
)

// Nothing is lost silently: a Peer sends an entity only whole, in one
// packet, so an entity whose encoding alone does not fit a packet could
// never reach a client. Server.Set refuses it (ErrEntityTooLarge) against
// the smallest packet of the Server's Peers, and a Peer that passes over
// an entity that cannot fit its packets (a Peer created after the Set
// with a smaller budget, or a delta larger than the room) counts it in
// PeerStats.Oversize.

// ErrEntityTooLarge: Server.Set of a state whose full encoding alone would
// not fit a packet of one of the Server's Peers (DefaultBudget when it has
// none); nothing changes then. Keep entity types small, or split a large
// one into several entities.
var ErrEntityTooLarge = errors.New("replicate: entity larger than a packet")

// soloBits is the size in bits of a packet, without its trailer, that
// carries only the entity id as n bits of body (no removals, and no
// common baseline, so that its kind is listed: the most an entry costs).
func soloBits(id uint32, n int) int {
	q := newIDSeq()
	var kinds riceSeq
	return headerBits + countBits(0) + 1 + countBits(1) + q.bits(id) + countBits(1) + kinds.bits(0) + n
}

// soloFixedMax bounds soloBits(id, n) - n over every id: below it, no
// exact computation is needed.
var soloFixedMax = soloBits(^uint32(0), 0)

// roomBytes is the largest packet of p without its trailer.
func (p *Peer[E]) roomBytes() int { return p.cfg.Budget - p.guard.Overhead() }

// fits reports whether an entity id of n bits fits one packet of
// roomBytes bytes (trailer excluded).
func fits(id uint32, n, roomBytes int) bool {
	if n+soloFixedMax <= roomBytes*8 {
		return true
	}
	return (soloBits(id, n)+7)/8 <= roomBytes
}

// entityRoom returns the room, in bytes without trailer, of the smallest
// packet of the Server's Peers: what every entity must fit. It is kept
// between changes of the Peers (a Peer's budget and trailer are fixed),
// since Set asks for it for every entity above the smallest budget's
// room, and the Peers are many.
func (s *Server[E]) entityRoom() int {
	if s.roomOK {
		return s.room
	}
	room := DefaultBudget
	if len(s.peers) > 0 {
		room = s.peers[0].roomBytes()
		for _, p := range s.peers[1:] {
			room = min(room, p.roomBytes())
		}
	}
	s.room, s.roomOK = room, true
	return room
}

// checkSize is Set's test of a new encoding of nbits bits for id.
func (s *Server[E]) checkSize(id uint32, nbits int) error {
	if nbits+soloFixedMax <= MinBudget*8 { // fits every Peer's packets (NewPeer's minimum): no loop
		return nil
	}
	if room := s.entityRoom(); !fits(id, nbits, room) {
		return fmt.Errorf("%w: id %d is %d bits in full, a packet holds %d bytes (the smallest Peer's budget less its trailer)", ErrEntityTooLarge, id, nbits, room)
	}
	return nil
}

// oversize reports whether the entity id, whose body is n bits, can never
// fit p's packets: Encode then counts it in PeerStats.Oversize.
func (p *Peer[E]) oversize(id uint32, n int) bool {
	return !fits(id, n, p.roomBytes())
}
