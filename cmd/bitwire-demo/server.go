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
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/replicate"
)

// One stream per client: package replicate.
//
// The whole world (the match, every player, every crate) is one
// replicate.Server; each client has one replicate.Peer, which fills the
// client's packets with the entities that matter most to it: its own
// player first, then by distance to its player, within the client's
// bandwidth budget (-budget kbit/s) and 1200-byte packets. Each entity goes
// as a delta against the last state of it the client acknowledged, or in
// full. docs/demo.md says more.

// ---- acks: client → server ----

// An ack datagram: 'A', the client (uint16, little-endian), then the
// replicate.Ack (replicate.AppendAck, 19 bytes, or 27 with a
// missing-baseline report). 22 or 30 bytes.
const ackSize = 3 + replicate.AckSize

func appendAck(dst []byte, client int, a replicate.Ack) []byte {
	dst = append(dst, 'A')
	dst = binary.LittleEndian.AppendUint16(dst, uint16(client))
	return replicate.AppendAck(dst, a)
}

type ack struct {
	client int
	ack    replicate.Ack
}

func parseAck(b []byte) (ack, bool) {
	if len(b) < ackSize || b[0] != 'A' {
		return ack{}, false
	}
	a, err := replicate.ParseAck(b[3:])
	if err != nil {
		return ack{}, false
	}
	return ack{client: int(binary.LittleEndian.Uint16(b[1:])), ack: a}, true
}

// ---- the server ----

// budget is the largest datagram, in bytes.
const budget = 1200

// peer is the server's side of one client.
type peer struct {
	addr *net.UDPAddr
	p    *replicate.Peer[Entity]
	own  uint32  // the entity id of the client's player, 0 while dead
	x, z float32 // where it stands

	// Written by send, read by the tick loop once send is done.
	buf       []byte
	sent      []int   // this tick's packet sizes
	perSecond []int64 // bytes by simulated second
	err       error
	onSend    func(pkt []byte) // Config.sent
}

// encodingAcct accumulates the sizes of one encoding's packets.
type encodingAcct struct {
	bytes      int64   // summed over clients
	perSecond  []int64 // bytes summed over clients, by simulated second
	sizes      []int   // packet sizes (naive, full: the mean of a tick's, the same for every client, counted once)
	packets    int     // all clients
	overBudget int
}

// add counts size bytes sent to each of clients in second sec, in packets
// datagrams.
func (a *encodingAcct) add(sec int, size, clients, packets int) {
	for len(a.perSecond) <= sec {
		a.perSecond = append(a.perSecond, 0)
	}
	a.bytes += int64(size * clients)
	a.perSecond[sec] += int64(size * clients)
	a.packets += clients * packets
	if size > budget*packets {
		a.overBudget += clients
	}
}

type server struct {
	cfg     Config
	conn    *net.UDPConn
	world   *world
	srv     *replicate.Server[Entity]
	pub     *publisher
	peers   []*peer
	truth   *truth
	acks    chan ack
	badAcks int // written by the ack reader; read once it has ended

	// The full and naive rows: what the whole world takes every tick,
	// kept up to date as entities change.
	plain    *bitwire.Codec[Entity]
	w        bits.Writer
	fullBits map[uint32]int // an entity's entry sent in full, in bits
	fullSum  int64
	naiveSum int64 // bytes of every entity in the naive encoding

	naive, fullAcct, deltaAcct encodingAcct
	workers                    int // goroutines encoding the clients' packets
	acksTaken                  int
	acksRefused                int // by Peer.Ack: a part with a wrong token (inject.go)
	spoofed                    int // spoofed acks sent (inject.go)
	spoofRng                   *rand.Rand
	awakeSum                   int64
	err                        error
	web                        *webGateway // -web: the browsers' sessions (web.go)
	// mirror, when set, is told every change of the Server's entities, in
	// order (v nil: a removal): -gateways publishes them (gateways.go).
	mirror func(id uint32, v *Entity)
}

// newServer returns the server; codec, with the shared Stats, is the one
// its replicate.Server uses.
func newServer(cfg Config, conn *net.UDPConn, codec *bitwire.Codec[Entity], truth *truth, clientAddrs []*net.UDPAddr) (*server, error) {
	srv, err := replicate.NewServer(codec, replicate.WithTickRate(cfg.Rate))
	if err != nil {
		return nil, err
	}
	s := &server{
		cfg:      cfg,
		conn:     conn,
		world:    newWorld(cfg.Seed, cfg.Rate, cfg.Clients+cfg.Node+cfg.Bots, cfg.Crates),
		srv:      srv,
		truth:    truth,
		acks:     make(chan ack, 64*(cfg.Clients+cfg.Node)),
		plain:    bitwire.MustFor[Entity](),
		fullBits: map[uint32]int{},
		workers:  max(1, min(runtime.GOMAXPROCS(0), len(clientAddrs))),
		spoofRng: rand.New(rand.NewPCG(cfg.Seed, 0x73706f6f66)),
	}
	s.pub = newPublisher(srv, s.world)
	for c, a := range clientAddrs {
		pr := &peer{addr: a, buf: make([]byte, 0, 2*budget), onSend: cfg.sent}
		pr.p, err = srv.NewPeer(replicate.PeerConfig[Entity]{
			Priority:      priorityFunc(&pr.own, &pr.x, &pr.z),
			PriorityEvery: priorityEvery,
			Budget:        budget,
			Bandwidth:     cfg.BudgetKbps * 1000 / 8,
			Refresh:       cfg.refreshTicks(),
			Integrity:     cfg.Inject.Integrity,
			Key:           streamKey(cfg, c),
		})
		if err != nil {
			return nil, err
		}
		s.peers = append(s.peers, pr)
	}
	return s, nil
}

// priorityEvery: the priority of an entity that did not change is
// computed again every 4 ticks (spread over the ticks), not every tick.
const priorityEvery = 4

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
		if !ok || a.client >= len(s.peers) || !sameAddr(from, s.peers[a.client].addr) {
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

// entryBits is what an entity costs sent in full in a replication packet:
// its announcing bit, its id (at most the id itself as a gap), the two
// kind bits and the body.
func entryBits(id uint32, body int) int {
	return 1 + fields.BitlenBits(uint64(id), 5) + 2 + body
}

// naiveEntitySize is an entity in the naive encoding: its id (uint32), a
// kind byte, and the mirror struct of its kind.
func naiveEntitySize(e *Entity) int {
	switch {
	case e.Match != nil:
		return 5 + naiveMatchSize
	case e.Player != nil:
		return 5 + naivePlayerSize
	}
	return 5 + naiveCrateSize
}

// tick produces and sends the packets of one tick.
func (s *server) tick(t uint32) error {
	// Acks that arrived since the last tick, and the spoofer's.
	s.spoof()
	for drained := false; !drained; {
		select {
		case a := <-s.acks:
			s.takeAck(a)
		default:
			drained = true
		}
	}
	if err := s.srv.Advance(t); err != nil {
		return err
	}
	s.world.step()
	s.err = nil
	err := s.pub.publish(s.world, func(id uint32) {
		v, _ := s.srv.Get(id)
		s.truth.record(id, t, v)
		if s.mirror != nil {
			s.mirror(id, v)
		}
		if s.cfg.Record != nil {
			s.cfg.Record(id, v)
		}
		s.w.Reset(nil)
		if err := s.plain.Encode(&s.w, v); err != nil && s.err == nil {
			s.err = err
		}
		if old, ok := s.fullBits[id]; ok {
			s.fullSum -= int64(old)
		} else {
			s.naiveSum += int64(naiveEntitySize(v))
		}
		b := entryBits(id, s.w.Len())
		s.fullBits[id] = b
		s.fullSum += int64(b)
	}, func(id uint32) {
		s.truth.remove(id, t)
		if s.mirror != nil {
			s.mirror(id, nil)
		}
		s.fullSum -= int64(s.fullBits[id])
		delete(s.fullBits, id)
		if isPlayerID(id) {
			s.naiveSum -= 5 + naivePlayerSize
		} else {
			s.naiveSum -= 5 + naiveCrateSize
		}
	})
	if err == nil {
		err = s.err
	}
	if err != nil {
		return fmt.Errorf("tick %d: %w", t, err)
	}
	own := make([]ownPlayer, len(s.peers))
	for i, pr := range s.peers {
		p := &s.world.players[i]
		pr.own, pr.x, pr.z = 0, float32(p.p.x), float32(p.p.z)
		if p.alive {
			pr.own = playerEntityID(p.id)
		}
		own[i] = ownPlayer{id: pr.own, x: pr.x, z: pr.z}
	}
	s.truth.setOwn(t, own)
	if s.cfg.tamper != nil {
		s.cfg.tamper(t, s.srv)
	}
	s.awakeSum += int64(s.world.awake())

	sec := int(t-1) / s.cfg.Rate
	clients := len(s.peers)
	// naive and full: the whole world every tick, in as many 1200-byte
	// datagrams as it takes, each with its own header (naive: tick and
	// count, 6 bytes; full: the replication header and list ends, 15
	// bytes).
	naivePackets := int((s.naiveSum + budget - 7) / (budget - 6))
	naiveBytes := int(s.naiveSum) + 6*naivePackets
	fullPackets := int((s.fullSum + (budget-15)*8 - 1) / ((budget - 15) * 8))
	fullBytes := int((s.fullSum+7)/8) + 15*fullPackets
	s.naive.add(sec, naiveBytes, clients, naivePackets)
	s.naive.sizes = append(s.naive.sizes, naiveBytes/max(naivePackets, 1))
	s.fullAcct.add(sec, fullBytes, clients, fullPackets)
	s.fullAcct.sizes = append(s.fullAcct.sizes, fullBytes/max(fullPackets, 1))

	// The clients' packets, encoded in parallel: Peers of one Server may
	// encode concurrently, and the socket is safe for concurrent writes.
	var wg sync.WaitGroup
	for w := range s.workers {
		wg.Go(func() {
			for c := w; c < clients; c += s.workers {
				s.peers[c].send(s.conn, sec)
			}
		})
	}
	wg.Wait()
	for c, p := range s.peers {
		if p.err != nil {
			return fmt.Errorf("client %d: %w", c, p.err)
		}
		for _, size := range p.sent {
			s.deltaAcct.add(sec, size, 1, 1)
			s.deltaAcct.sizes = append(s.deltaAcct.sizes, size)
		}
	}
	if s.web != nil {
		return s.web.onTick(s, t)
	}
	return nil
}

// send encodes and sends the client's packets of the tick: as many as its
// bandwidth budget allows, each at most 1200 bytes.
func (p *peer) send(conn *net.UDPConn, sec int) {
	p.sent = p.sent[:0]
	for len(p.perSecond) <= sec {
		p.perSecond = append(p.perSecond, 0)
	}
	for {
		pkt, ok, err := p.p.Encode(p.buf[:0])
		if err != nil {
			p.err = err
			return
		}
		if !ok {
			return
		}
		p.buf = pkt[:0]
		p.sent = append(p.sent, len(pkt))
		p.perSecond[sec] += int64(len(pkt))
		if p.onSend != nil {
			p.onSend(pkt)
		}
		if _, err := conn.WriteToUDP(pkt, p.addr); err != nil && !errors.Is(err, net.ErrClosed) {
			p.err = fmt.Errorf("send: %w", err)
			return
		}
	}
}
