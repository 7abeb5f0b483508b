package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/snapshot"
)

// Splitting the world: sharding, not prioritisation.
//
// A full snapshot of the whole world (20 players and 300 crates: about
// 3.4 kB) does not fit a 1200-byte datagram, and the snapshot package
// rightly refuses to fragment. There are two ways out. Prioritisation
// (Tribes, Halo) sends each client the entities that matter most to it and
// as many others as fit; but then what a client holds is a per-client,
// partial and ageing view, "is the client's state the server's state?" no
// longer has a yes/no answer, and the per-client choice has to live in the
// game, outside the snapshot stream. Sharding keeps every guarantee of the
// snapshot model: the world is cut into independent streams, each with its
// own Sender per client and Receiver, its own baselines and acks, and each
// small enough that even a full snapshot of it always fits the budget.
// Every accepted packet can then be checked bit for bit against the
// server's state of that tick, which is the point of this demo. The price
// is one header (10 to 11 bytes) per stream and tick, and that a lost
// packet delays only its own shard.
//
// Stream 0 carries the match and the players; streams 1..K carry the crates
// of slots s, s+K, s+2K, ... (a slot keeps its stream when its crate is
// replaced). K is the smallest number of streams whose worst-case packet,
// full or delta, fits the budget: see streamsFor.

// streamPrefix is the byte before each snapshot packet in a datagram: the
// number of its stream. The snapshot header names a tick and a codec
// fingerprint, not a stream, and all streams share one type.
const streamPrefix = 1

// deltaSlackBits bounds what a crate can cost in a delta beyond its full
// encoding: its place in the changed, removed or added index sets (at most
// a bit or two each), a changed bit per field and a window bit per axis,
// a relative-quaternion flag. 16 is generous; an over-budget delta would
// still be handled (see encode), only less cheaply.
const deltaSlackBits = 16

// streamsFor returns the number of crate streams for n crates: every crate
// stream must hold its share of crates within the packet budget even in
// the worst case. crateBits is the worst-case size of one crate.
func streamsFor(n, budget, crateBits int) (k, perStream int) {
	// The packet: prefix byte, snapshot header and state hash (at most
	// MinBudget-1-MACSize bytes), then the body: a Match presence bit and
	// two slice lengths (16 bits), then the crates. The caller takes the
	// integrity trailer off the budget.
	const headerBytes = snapshot.MinBudget - 1 - snapshot.MACSize
	avail := (budget-streamPrefix-headerBytes)*8 - 1 - 16
	perStream = min(avail/(crateBits+deltaSlackBits), 255) // 255: Crates maxlen
	if n == 0 {
		return 0, perStream
	}
	k = (n + perStream - 1) / perStream
	return k, (n + k - 1) / k
}

// ---- the server's quantized states, for the clients' checks ----

// truthRing keeps, for the last size ticks, the state of every stream as a
// client must decode it: a deep copy of the server's state, quantized.
type truthRing struct {
	mu     sync.RWMutex
	codec  *bitwire.Codec[Shard]
	ticks  []uint32
	states [][]Shard // [slot][stream]
}

func newTruthRing(c *bitwire.Codec[Shard], size, streams int) *truthRing {
	t := &truthRing{codec: c, ticks: make([]uint32, size), states: make([][]Shard, size)}
	for i := range t.states {
		t.states[i] = make([]Shard, streams)
	}
	return t
}

func (t *truthRing) put(tick uint32, shards []Shard) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := int(tick % uint32(len(t.ticks)))
	t.ticks[i] = 0 // invalid while being written
	for k := range shards {
		dst := &t.states[i][k]
		t.codec.Copy(dst, &shards[k])
		if err := t.codec.Quantize(dst); err != nil {
			return fmt.Errorf("tick %d stream %d: %w", tick, k, err)
		}
	}
	t.ticks[i] = tick
	return nil
}

// check compares got, a client's decoded state of a stream at tick, with
// the server's. found is false when the tick has left the ring.
func (t *truthRing) check(tick uint32, stream int, got *Shard) (equal, found bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := int(tick % uint32(len(t.ticks)))
	if t.ticks[i] != tick {
		return false, false
	}
	return t.codec.Equal(got, &t.states[i][stream]), true
}

// ---- acks: client → server ----

// An ack datagram: 'A', the stream, the client (uint16, little-endian),
// then the stream Receiver's snapshot.Ack (AckSize bytes). 13 bytes.
const ackSize = 4 + snapshot.AckSize

func appendAck(dst []byte, client, stream int, a snapshot.Ack) []byte {
	dst = append(dst, 'A', byte(stream))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(client))
	dst, _ = a.AppendBinary(dst)
	return dst
}

type ack struct {
	client, stream int
	ack            snapshot.Ack
}

func parseAck(b []byte) (ack, bool) {
	if len(b) != ackSize || b[0] != 'A' {
		return ack{}, false
	}
	var a snapshot.Ack
	if a.UnmarshalBinary(b[4:]) != nil {
		return ack{}, false
	}
	return ack{stream: int(b[1]), client: int(binary.LittleEndian.Uint16(b[2:])), ack: a}, true
}

// ---- the server ----

// peer is the server's side of one client.
type peer struct {
	addr    *net.UDPAddr
	senders []*snapshot.Sender[Shard] // one per stream

	// Written by send, read by the tick loop once send is done.
	buf       []byte
	sent      []sentPacket // this tick's
	fallbacks int
	err       error
}

type sentPacket struct {
	size  int
	delta bool
	age   uint32 // tick - baseline tick, for a delta
}

// encodingAcct accumulates the sizes of one encoding's packets.
type encodingAcct struct {
	bytes      int64   // summed over clients
	perSecond  []int64 // bytes summed over clients, by simulated second
	sizes      []int   // every packet's size (naive, full: one per stream and tick; identical for every client)
	overBudget int
	full       int // packets sent in full, all clients
	delta      int
}

func (a *encodingAcct) add(sec int, size, clients int, delta bool) {
	for len(a.perSecond) <= sec {
		a.perSecond = append(a.perSecond, 0)
	}
	a.bytes += int64(size * clients)
	a.perSecond[sec] += int64(size * clients)
	if size > budget {
		a.overBudget += clients
	}
	if delta {
		a.delta += clients
	} else {
		a.full += clients
	}
}

// budget is the largest datagram, in bytes: the stream prefix and the
// snapshot packet, whose own budget is one byte less.
const budget = 1200

type server struct {
	cfg      Config
	conn     *net.UDPConn
	world    *world
	shards   []Shard
	peers    []*peer
	full     []*snapshot.Sender[Shard] // never acked: a full snapshot every tick
	truth    *truthRing
	acks     chan ack
	buf      []byte // the full snapshots'
	naiveBuf []byte
	badAcks  int // written by the ack reader; read once it has ended
	spoofRng *rand.Rand
	spoofed  int // acks the spoofer sent (inject.go)

	naive, fullAcct, deltaAcct encodingAcct
	workers                    int // goroutines encoding the clients' packets
	fallbacks                  int // deltas over budget, sent in full instead
	acksTaken                  int
	acksRefused                int   // by HandleAck: the token did not match
	baselineAge                int64 // summed over delta packets
	awakeSum                   int64
}

// newServer returns the server; codec, with the shared Stats, is the one
// its Senders use.
func newServer(cfg Config, conn *net.UDPConn, codec *bitwire.Codec[Shard], streams, history int, truth *truthRing, clientAddrs []*net.UDPAddr) (*server, error) {
	s := &server{
		cfg:      cfg,
		conn:     conn,
		world:    newWorld(cfg.Seed, cfg.Rate, cfg.Clients+cfg.Node+cfg.Bots, cfg.Crates),
		shards:   make([]Shard, streams),
		truth:    truth,
		acks:     make(chan ack, 64*(cfg.Clients+cfg.Node)*streams),
		buf:      make([]byte, 0, 2*budget),
		workers:  max(1, min(runtime.GOMAXPROCS(0), len(clientAddrs))),
		spoofRng: rand.New(rand.NewPCG(cfg.Seed, 0x73706f6f66)),
	}
	opts := []snapshot.Option{snapshot.WithBudget(budget - streamPrefix), snapshot.WithHistorySize(history)}
	plain := bitwire.MustFor[Shard]().WithModel(cfg.Model)
	for k := 0; k < streams; k++ {
		fs, err := snapshot.NewSender(plain, append(opts, streamOptions(cfg, 0)...)...)
		if err != nil {
			return nil, err
		}
		s.full = append(s.full, fs)
	}
	for c, a := range clientAddrs {
		p := &peer{addr: a, buf: make([]byte, 0, 2*budget)}
		for k := 0; k < streams; k++ {
			snd, err := snapshot.NewSender(codec, append(opts, streamOptions(cfg, c)...)...)
			if err != nil {
				return nil, err
			}
			p.senders = append(p.senders, snd)
		}
		s.peers = append(s.peers, p)
	}
	return s, nil
}

// readAcks runs until the server's socket is closed, passing every valid
// ack to the tick loop. An ack that does not fit the channel is dropped,
// like any lost ack.
func (s *server) readAcks() {
	buf := make([]byte, 64)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		a, ok := parseAck(buf[:n])
		if !ok || a.client >= len(s.peers) || a.stream >= len(s.shards) || !sameAddr(from, s.peers[a.client].addr) {
			s.badAcks++
			continue
		}
		select {
		case s.acks <- a:
		default:
		}
	}
}

func sameAddr(a, b *net.UDPAddr) bool { return a.Port == b.Port && a.IP.Equal(b.IP) }

// tick produces and sends the snapshots of one tick.
func (s *server) tick(t uint32) error {
	// Acks that arrived since the last tick (and the spoofer's).
	s.spoof(t)
	for drained := false; !drained; {
		select {
		case a := <-s.acks:
			s.takeAck(a)
		default:
			drained = true
		}
	}
	s.world.step()
	s.world.fill(s.shards)
	s.awakeSum += int64(s.world.awake())
	if err := s.truth.put(t, s.shards); err != nil {
		return err
	}
	if s.cfg.Record != nil {
		s.cfg.Record(s.shards)
	}
	if s.cfg.tamper != nil {
		s.cfg.tamper(t, s.shards)
	}
	sec := int(t-1) / s.cfg.Rate
	clients := len(s.peers)
	for k := range s.shards {
		st := &s.shards[k]
		s.naiveBuf = appendNaive(s.naiveBuf[:0], k, t, st)
		n := len(s.naiveBuf)
		s.naive.add(sec, n, clients, false)
		s.naive.sizes = append(s.naive.sizes, n)
		pkt, err := s.full[k].Encode(s.buf[:0], t, st)
		if err != nil {
			return fmt.Errorf("full snapshot of stream %d at tick %d: %w", k, t, err)
		}
		s.fullAcct.add(sec, streamPrefix+len(pkt), clients, false)
		s.fullAcct.sizes = append(s.fullAcct.sizes, streamPrefix+len(pkt))
	}
	// The clients' packets, encoded in parallel: each peer's Senders are
	// its own, and the socket is safe for concurrent writes.
	var wg sync.WaitGroup
	for w := range s.workers {
		wg.Go(func() {
			for c := w; c < clients; c += s.workers {
				s.peers[c].send(s.conn, s.shards, t)
			}
		})
	}
	wg.Wait()
	for c, p := range s.peers {
		if p.err != nil {
			return fmt.Errorf("client %d: %w", c, p.err)
		}
		s.fallbacks += p.fallbacks
		p.fallbacks = 0
		for _, r := range p.sent {
			s.deltaAcct.add(sec, r.size, 1, r.delta)
			s.deltaAcct.sizes = append(s.deltaAcct.sizes, r.size)
			if r.delta {
				s.baselineAge += int64(r.age)
			}
		}
	}
	return nil
}

// send encodes and sends the datagrams of tick t to the peer, one per
// stream: the stream byte, then the Sender's packet. A delta over the
// budget (possible in principle when a stream churns a lot; the stream
// sizing makes it unlikely) falls back to a full snapshot, which always
// fits: the Sender is reset, as for a new connection.
func (p *peer) send(conn *net.UDPConn, shards []Shard, t uint32) {
	p.sent = p.sent[:0]
	for k := range shards {
		dst := append(p.buf[:0], byte(k))
		pkt, err := p.senders[k].Encode(dst, t, &shards[k])
		if errors.Is(err, snapshot.ErrOverBudget) {
			p.fallbacks++
			p.senders[k].Reset()
			pkt, err = p.senders[k].Encode(dst, t, &shards[k])
		}
		var h snapshot.Header
		if err == nil {
			h, err = snapshot.ParseHeader(pkt[streamPrefix:])
		}
		if err != nil {
			p.err = fmt.Errorf("stream %d tick %d: %w", k, t, err)
			return
		}
		p.buf = pkt[:0]
		p.sent = append(p.sent, sentPacket{size: len(pkt), delta: h.Delta, age: h.Tick - h.Baseline})
		if _, err := conn.WriteToUDP(pkt, p.addr); err != nil && !errors.Is(err, net.ErrClosed) {
			p.err = fmt.Errorf("send: %w", err)
			return
		}
	}
}
