package replicate_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/replicate"
)

// pair is a server with one peer and its client, driven by hand.
type pair struct {
	t    *testing.T
	srv  *replicate.Server[Body]
	peer *replicate.Peer[Body]
	cl   *replicate.Client[Body]
	tick uint32
	rng  *rand.Rand
}

func newPair(t *testing.T, cfg replicate.PeerConfig[Body]) *pair {
	srv, err := replicate.NewServer(bodyCodec)
	require.NoError(t, err)
	peer, err := srv.NewPeer(cfg)
	require.NoError(t, err)
	cl, err := replicate.NewClient(bodyCodec, replicate.WithIntegrity(cfg.Integrity, cfg.Key))
	require.NoError(t, err)
	return &pair{t: t, srv: srv, peer: peer, cl: cl, rng: rand.New(rand.NewSource(7))}
}

func (p *pair) advance() {
	p.tick++
	require.NoError(p.t, p.srv.Advance(p.tick))
}

func (p *pair) set(id uint32) {
	b := randomBody(p.rng)
	_, err := p.srv.Set(id, &b)
	require.NoError(p.t, err)
}

func (p *pair) remove(id uint32) {
	ok, err := p.srv.Remove(id)
	require.NoError(p.t, err)
	require.True(p.t, ok)
}

// packet encodes the tick's one packet (nil when there is nothing to send).
func (p *pair) packet() []byte {
	pkt, ok, err := p.peer.Encode(nil)
	require.NoError(p.t, err)
	if !ok {
		return nil
	}
	return pkt
}

func (p *pair) deliver(pkt []byte) {
	_, err := p.cl.Decode(pkt)
	require.NoError(p.t, err)
}

func (p *pair) holds(id uint32) bool {
	_, _, ok := p.cl.Get(id)
	return ok
}

func TestCreatedAndRemovedBetweenAcks(t *testing.T) {
	p := newPair(t, replicate.PeerConfig[Body]{})
	p.advance()
	p.set(1)
	p.set(2)
	p1 := p.packet() // creates 1 and 2
	p.deliver(p1)
	p.peer.Ack(p.cl.Ack())

	p.advance()
	p.set(3) // created ...
	p3 := p.packet()
	p.deliver(p3)
	require.True(t, p.holds(3))
	p.advance()
	p.remove(3) // ... and removed before any ack of it
	p4 := p.packet()
	require.NotNil(t, p4, "the removal must be sent")
	// p4 is lost: the removal is repeated in every packet until one
	// carrying it is acknowledged.
	p.advance()
	p5 := p.packet()
	require.NotNil(t, p5)
	p.deliver(p5)
	require.False(t, p.holds(3))
	require.Equal(t, 1, p.peer.Pending())
	p.peer.Ack(p.cl.Ack())
	require.Equal(t, 0, p.peer.Pending())
	p.advance()
	require.Nil(t, p.packet(), "nothing changed and nothing is pending: no packet")
	require.Equal(t, 2, p.cl.Len())
}

func TestRemovedWhileCreationInFlight(t *testing.T) {
	for _, order := range []string{"creation first", "removal first", "creation lost"} {
		t.Run(order, func(t *testing.T) {
			p := newPair(t, replicate.PeerConfig[Body]{})
			p.advance()
			p.set(10)
			create := p.packet()
			p.advance()
			p.remove(10)
			removal := p.packet()
			require.NotNil(t, removal)
			switch order {
			case "creation first":
				p.deliver(create)
				require.True(t, p.holds(10))
				p.deliver(removal)
			case "removal first":
				p.deliver(removal)
				_, err := p.cl.Decode(create)
				require.ErrorIs(t, err, replicate.ErrStale, "a late packet must not bring back a removed entity")
			case "creation lost":
				p.deliver(removal)
			}
			require.False(t, p.holds(10))
			require.Equal(t, 0, p.cl.Len())
			p.peer.Ack(p.cl.Ack())
			require.Equal(t, 0, p.peer.Pending())
		})
	}
}

// The same id removed and created again: the new entity replaces the old
// one, and a removal still pending for the old one must not remove it.
func TestRemovedAndRecreatedSameID(t *testing.T) {
	p := newPair(t, replicate.PeerConfig[Body]{})
	p.advance()
	p.set(5)
	p.deliver(p.packet())
	p.peer.Ack(p.cl.Ack())
	p.advance()
	p.remove(5)
	lost := p.packet() // carries the removal; lost
	require.NotNil(t, lost)
	p.advance()
	p.set(5) // a new entity with the same id
	p.deliver(p.packet())
	want, _ := p.srv.Get(5)
	got, _, ok := p.cl.Get(5)
	require.True(t, ok)
	require.Equal(t, *want, *got)
	require.Equal(t, 0, p.peer.Pending(), "the full state replaced the old entity: the removal is done")
	for range 5 {
		p.advance()
		if pkt := p.packet(); pkt != nil {
			p.deliver(pkt)
		}
	}
	require.True(t, p.holds(5))
}

// A client that stops acknowledging (and receiving) for 5 seconds at 30 Hz
// comes back: within a few ticks it holds the world again, exactly, and
// nothing removed meanwhile.
func TestClientSilentFiveSeconds(t *testing.T) {
	s := newSim(t, 3, 200)
	s.move, s.spawn, s.despawn = 0.1, 0.01, 0.01
	c := s.addClient(replicate.PeerConfig[Body]{}, 0.05, 0, 2)
	for range 60 {
		s.step()
	}
	c.down.down, c.up.down = true, true
	for range 150 {
		s.step()
	}
	require.Greater(t, c.peer.Pending(), 0, "removals during the silence are pending")
	c.down.down, c.up.down = false, false
	c.down.loss, c.up.loss = 0, 0
	s.move, s.spawn, s.despawn = 0.1, 0, 0
	back := 0
	for ; back < 200; back++ {
		s.step()
		if s.checkView(c, 0) == 0 && c.peer.Pending() == 0 && c.cl.Len() == s.srv.Len() {
			break
		}
	}
	t.Logf("back in sync %d ticks after the silence ended", back)
	require.Less(t, back, 60, "the client did not catch up within 2 s")
	require.Equal(t, 0, s.checkView(c, 0))
}

// Removals reach the client within a bound: the first packet it accepts
// after the removal carries it (when removals fit half a packet), so a
// removed entity lingers only while packets are lost or in flight.
func TestRemovalBound(t *testing.T) {
	s := newSim(t, 4, 300)
	s.move, s.spawn, s.despawn = 0.1, 0.01, 0.01
	c := s.addClient(replicate.PeerConfig[Body]{Budget: 600}, 0.2, 0.05, 3)
	ticks := 2000
	if testing.Short() {
		ticks = 500
	}
	for range ticks {
		s.step()
		// No packet older than 3 ticks is in flight: anything removed 4
		// ticks ago has been carried by every packet since, and the client
		// accepted one of them unless all were lost or arrived late.
		if n := s.checkView(c, 4); n > 0 {
			// allowed only if the client accepted nothing since
			if c.cl.Tick()+4 > s.tick {
				t.Fatalf("tick %d: %d removed entities held though the client accepted tick %d", s.tick, n, c.cl.Tick())
			}
		}
	}
}

// Interest: an entity that stops being relevant leaves the client's view
// (reliably, like a removal); relevant again, it comes back in full.
func TestRelevance(t *testing.T) {
	hidden := map[uint32]bool{}
	p := newPair(t, replicate.PeerConfig[Body]{Relevant: func(id uint32, e *Body) bool { return !hidden[id] }})
	p.advance()
	p.set(1)
	p.set(2)
	p.deliver(p.packet())
	p.peer.Ack(p.cl.Ack())
	require.Equal(t, 2, p.cl.Len())

	p.advance()
	hidden[2] = true
	lost := p.packet() // carries the removal of 2; lost
	require.NotNil(t, lost)
	p.advance()
	info, err := p.cl.Decode(p.packet()) // repeated
	require.NoError(t, err)
	require.Equal(t, []uint32{2}, info.Removed)
	p.peer.Ack(p.cl.Ack())
	require.Equal(t, 0, p.peer.Pending())
	p.advance()
	p.set(2) // changes while hidden: nothing is sent
	require.Nil(t, p.packet())

	p.advance()
	hidden[2] = false
	pkt := p.packet()
	require.NotNil(t, pkt)
	info, err = p.cl.Decode(pkt)
	require.NoError(t, err)
	require.Equal(t, []uint32{2}, info.Updated)
	want, _ := p.srv.Get(2)
	got, tick, ok := p.cl.Get(2)
	require.True(t, ok)
	require.Equal(t, *want, *got)
	require.Equal(t, p.tick, tick)
	require.Equal(t, 1, p.peer.Stats().Full-2, "sent in full again")
}

// A packet whose sequence number is far ahead (corrupted or forged) is
// refused, and the genuine stream goes on; a stream that really moved on
// (a long stall) is accepted after RecoverAfter packets.
func TestSequenceFarAhead(t *testing.T) {
	p := newPair(t, replicate.PeerConfig[Body]{})
	p.advance()
	p.set(1)
	p.deliver(p.packet())
	p.advance()
	p.set(1)
	pkt := p.packet()
	bad := append([]byte(nil), pkt...)
	bad[9] ^= 0x40 // the sequence number's high byte: 2^30 ahead
	_, err := p.cl.Decode(bad)
	require.ErrorIs(t, err, replicate.ErrFuture)
	p.deliver(pkt)

	// A stall: the client misses MaxAhead+ packets, then the stream is
	// accepted again once RecoverAfter of them have arrived.
	for range replicate.MaxAhead + 5 {
		p.advance()
		p.set(1)
		require.NotNil(t, p.packet())
	}
	refused := 0
	for {
		p.advance()
		p.set(1)
		_, err := p.cl.Decode(p.packet())
		if err == nil {
			break
		}
		require.ErrorIs(t, err, replicate.ErrFuture)
		refused++
		require.Less(t, refused, replicate.RecoverAfter)
	}
	require.Equal(t, replicate.RecoverAfter-1, refused)
}
