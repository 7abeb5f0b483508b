package replicate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/integrity"
)

// PeerConfig is what the application decides for one client. The funcs
// are functions of the client (the Peer they configure: close over what
// they need of it, such as its player's position) and of the entity.
type PeerConfig[E any] struct {
	// Priority returns how much the client needs the entity's current
	// state this tick: each tick the client lacks it, the entity's
	// accumulator for the client grows by this much, and packets take the
	// highest accumulators first; sending resets it to 0. Negative values
	// count as 0. nil: 1 for every entity (oldest change first). The
	// calls of a tick come in no particular order of the entities.
	Priority func(id uint32, e *E) float32
	// Relevant reports whether the client should hold the entity at all.
	// An entity that stops being relevant is removed from the client's
	// view (reliably, like a removal), and sent in full when it is
	// relevant again. nil: every entity is relevant. It is called for
	// every entity every tick, so keep it cheap.
	Relevant func(id uint32, e *E) bool
	// Budget is the largest packet in bytes: DefaultBudget when 0, at
	// least MinBudget.
	Budget int
	// PriorityEvery, when above 1, spares Priority calls: the priority of
	// an entity that has not changed is computed again only every that
	// many ticks (spread over the ticks by slot), and the last value is
	// used in between. 0 or 1: every tick.
	PriorityEvery int
	// Bandwidth, in bytes per second, when not 0: the Peer sends as many
	// packets a tick as it allows, each at most Budget bytes, and over any
	// tick-rate consecutive ticks (one second at the Server's WithTickRate)
	// never more than Bandwidth bytes. When 0, one packet a tick.
	Bandwidth int
	// Integrity is the packets' trailer (integrity.ModeNone,
	// integrity.ModeChecksum or integrity.ModeMAC), which the client's
	// WithIntegrity must match; Key is the connection's secret for
	// integrity.ModeMAC (at least integrity.MinKeySize bytes, copied), nil
	// otherwise. The trailer counts towards Budget. docs/security.md weighs
	// the modes.
	Integrity integrity.Mode
	Key       []byte
	// Refresh is the most ticks the Peer lets the client hold an entity
	// after the last full state of it the client acknowledged before it
	// sends the entity in full again, whether it changed or not: whatever
	// the client came to hold wrongly (a forged or corrupted packet that
	// got through) lasts at most that long, plus the time to send it. 0:
	// DefaultRefreshSeconds at the Server's tick rate; negative: never.
	Refresh int
}

// sentEntity is one entity of a packet, for its acknowledgement.
type sentEntity struct {
	slot int32
	gen  uint32
	n    uint32
	tick uint32
	full bool
}

// record is what a Peer remembers of a packet it sent.
type record struct {
	seq      uint32
	tick     uint32
	token    uint32 // the packet's ack token
	acked    bool
	ents     []sentEntity
	removals []uint32
}

// removal is an id the client may still hold that it must drop; packets
// from sequence number since on carry it.
type removal struct {
	id      uint32
	since   uint32
	carried uint32 // the last tick a packet carried it
}

// choice is an entity placed in the packet being built: its body is bits
// [off, off+n) of the Peer's scratch writer for a delta, its full
// encoding (n bits) otherwise.
type choice struct {
	slot   int32
	id     uint32
	off, n int32 // off is that of a delta; a full state is the entity's encoding
	full   bool
	// refresh: sent in full because its Refresh was due
	refresh bool
	pred    bool   // a delta predicted from an older baseline too
	base    uint32 // the baseline's tick, for a delta
	acc     float32
}

// PeerStats counts what a Peer sent.
type PeerStats struct {
	Packets int   // packets encoded
	Bytes   int64 // their bytes
	Full    int   // entities sent in full
	Delta   int   // entities sent as deltas
	// Predicted counts the deltas (of Delta) coded against a prediction
	// from two baselines: only a codec with pred values has any.
	Predicted int
	Removals  int // removal entries sent (a removal repeats until acknowledged)
	Acks      int // packets acknowledged
	BadAcks   int // acks, or their masks or reports, refused for a token that does not match
	Missing   int // missing-baseline reports taken (their packets' entities resent in full)
	Refresh   int // entities sent in full because their Refresh was due
	// Oversize counts the times an entity was passed over because it can
	// never fit this Peer's packets (ErrEntityTooLarge refuses most at
	// Server.Set; a Peer with a smaller budget than those before it, or a
	// delta larger than the packet, still lands here).
	Oversize int
	// Bits splits the bits of the packets by what they carry.
	Bits PacketBits
}

// PacketBits splits the bits of the packets a Peer sent by what they carry
// (docs/wire-format.md, "Replication packets"); the fields sum to 8 times
// PeerStats.Bytes.
type PacketBits struct {
	Header   int64 // the fixed headers
	Removals int64 // the removal lists
	IDs      int64 // the entity id lists
	Kinds    int64 // the common baselines and the lists of entities that are not deltas against them
	Bodies   int64 // the entities' messages
	Padding  int64 // zero bits to the byte boundary
	Trailer  int64 // integrity trailers
}

// Peer is the server's side of one client: what the client holds of each
// entity, as far as acknowledgements tell, and the packets in flight.
// Create it with Server.NewPeer.
type Peer[E any] struct {
	s       *Server[E]
	cfg     PeerConfig[E]
	hot     []hotTrack
	tracks  []track
	prev    []prevAck // by slot, for a codec that predicts; else nil
	seq     uint32
	recs    []record
	pending []removal
	pendIdx map[uint32]int // id → index in pending

	// The current tick's state.
	tick    uint32
	scanned bool
	packets int // sent this tick
	// Candidates at or above the threshold, and below: hi holds those at
	// or above cut as well, hi2 the others above the threshold. A packet
	// takes hi's before hi2's, which is their priority order (each of hi
	// has a larger accumulator than any of hi2), and most packets take
	// only hi's: ordering hi alone spares the selection most candidates.
	hi, hi2, lo candList
	cut         float32 // the lowest accumulator the last packet sent
	// threshold is an accumulator most of the tick's packets will not
	// reach: three quarters of the lowest sent in the last packet.
	threshold float32
	attend    []int32 // this tick's slots the client lacks the current state of that are awake
	sleepers  []int32 // weigh's storage for the slots it puts to sleep
	scanThr   float32 // the threshold this tick's scan used
	loListed  bool    // lo holds this tick's candidates below the threshold
	retry     []cand
	deferred  []cand
	rem       []uint32
	remOut    []uint32 // the removals the packet carries: rem less those carried by a full state
	chosen    []choice
	sorted    []choice // chosen's storage while sorting by id
	keys      []uint64 // the sort keys of chosen
	lists     bits.Writer
	entryBits int // what an entity's id and kind are costed at while chosen (entryEstimate)
	scratch   bits.Writer
	w         bits.Writer

	// Bandwidth: a token bucket, and the bytes of the last tickRate ticks.
	tokens   float64
	perTick  float64
	window   []int
	wsum     int
	lastTick uint32

	srtt    float64 // smoothed ack delay, in ticks
	stats   PeerStats
	guard   *integrity.Guard
	refresh uint32 // ticks; 0: never

	wake waker // which slots the next scan visits
	// fullPass, set by tests only, replaces the scan's visit of the slots
	// events named with a pass over every slot by the given func (the
	// earlier algorithm), to check that both make the same packets.
	fullPass func(gens, changed []uint32, hot []hotTrack, tracks []track, tick, resend, every uint32, attend []int32) []int32
}

// NewPeer returns the Peer of a new client, which holds nothing yet.
func (s *Server[E]) NewPeer(cfg PeerConfig[E]) (*Peer[E], error) {
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.Budget < MinBudget {
		return nil, fmt.Errorf("replicate: budget %d bytes, under the minimum %d", cfg.Budget, MinBudget)
	}
	if cfg.Bandwidth < 0 {
		return nil, errors.New("replicate: negative bandwidth")
	}
	guard, err := integrity.New(cfg.Integrity, cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	if cfg.Budget < MinBudget+guard.Overhead() {
		return nil, fmt.Errorf("replicate: budget %d bytes, under the minimum %d with a %v trailer", cfg.Budget, MinBudget+guard.Overhead(), cfg.Integrity)
	}
	cfg.Key = nil // the guard holds its copy
	p := &Peer[E]{s: s, cfg: cfg, recs: make([]record, recordRing), pendIdx: make(map[uint32]int), srtt: 3, guard: guard, entryBits: entryEstimate}
	p.wake.logAt = s.logBase + int64(len(s.changeLog))
	switch {
	case cfg.Refresh > 0:
		p.refresh = uint32(cfg.Refresh)
	case cfg.Refresh == 0:
		p.refresh = uint32(DefaultRefreshSeconds * s.cfg.tickRate)
	}
	if cfg.Bandwidth > 0 {
		p.perTick = float64(cfg.Bandwidth) / float64(s.cfg.tickRate)
		p.window = make([]int, s.cfg.tickRate)
		p.tokens = p.perTick
	}
	s.peers = append(s.peers, p)
	s.roomOK = false
	return p, nil
}

// RemovePeer forgets p (a client that left). p must not be used again.
func (s *Server[E]) RemovePeer(p *Peer[E]) {
	if i := slices.Index(s.peers, p); i >= 0 {
		s.peers = slices.Delete(s.peers, i, i+1)
		s.roomOK = false
	}
}

// Stats returns the Peer's counters.
func (p *Peer[E]) Stats() PeerStats { return p.stats }

// Pending returns the number of removals not yet acknowledged.
func (p *Peer[E]) Pending() int { return len(p.pending) }

// forget is the Server's Remove of slot's incarnation gen, id: the client
// must drop it if it may hold it.
func (p *Peer[E]) forget(slot int32, gen uint32, id uint32) {
	if int(slot) >= len(p.tracks) {
		return
	}
	h, t := &p.hot[slot], &p.tracks[slot]
	if h.gen == gen && t.sends > t.viewFrom {
		p.addRemoval(id)
	}
	*h, *t = hotTrack{}, track{}
	if p.prev != nil {
		p.prev[slot] = prevAck{}
	}
}

func (p *Peer[E]) addRemoval(id uint32) {
	if i, ok := p.pendIdx[id]; ok {
		p.pending[i].since, p.pending[i].carried = p.seq+1, 0
		return
	}
	p.pendIdx[id] = len(p.pending)
	p.pending = append(p.pending, removal{id: id, since: p.seq + 1})
}

func (p *Peer[E]) dropRemoval(id uint32) {
	i, ok := p.pendIdx[id]
	if !ok {
		return
	}
	last := len(p.pending) - 1
	if i != last {
		p.pending[i] = p.pending[last]
		p.pendIdx[p.pending[i].id] = i
	}
	p.pending = p.pending[:last]
	delete(p.pendIdx, id)
}
