package replicate_test

import (
	"encoding/binary"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/replicate"
)

// forgeIDs returns a packet without integrity that a forger who saw one
// genuine packet writes: n made-up entities with ids from first on, in
// full, under the genuine sequence number seq and tick.
func forgeIDs(t testing.TB, rng *rand.Rand, first uint32, n int, seq, tick uint32) []byte {
	srv, err := replicate.NewServer(bodyCodec)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Advance(1); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		b := randomBody(rng)
		if _, err := srv.Set(first+uint32(k), &b); err != nil {
			t.Fatal(err)
		}
	}
	p, err := srv.NewPeer(replicate.PeerConfig[Body]{Budget: 4000})
	if err != nil {
		t.Fatal(err)
	}
	pkt, ok, err := p.Encode(nil)
	if err != nil || !ok {
		t.Fatalf("forging: %v %v", ok, err)
	}
	// The header: magic (16 bits), fingerprint (32), then seq and tick.
	binary.LittleEndian.PutUint32(pkt[6:], seq)
	binary.LittleEndian.PutUint32(pkt[10:], tick)
	return pkt
}

// forgedRun runs a world of 50 moving, spawning and despawning entities to
// a client of the default options and opts, over a clean link; at ticks
// 100 to 100+packets-1 a forger delivers, after each genuine packet, a
// packet of perPacket made-up ids with the next sequence number and the
// genuine tick. It returns the client's genuine packets refused with
// ErrTooManyEntities in the last quiet ticks, and the entities it holds
// that the server does not, at the end.
func forgedRun(t *testing.T, packets, perPacket, ticks, quiet int, opts ...replicate.Option) (tooMany, madeUp, most int) {
	refusedAt, refused := -1, 0 // the last tick refused as too many, and how many
	s := newSim(t, 7, 50)
	s.move, s.spawn, s.despawn = 0.2, 0.002, 0.002
	p, err := s.srv.NewPeer(replicate.PeerConfig[Body]{})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := replicate.NewClient(bodyCodec, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	next := uint32(1 << 20) // the forger's ids
	for i := 0; i < ticks; i++ {
		s.advance()
		for _, id := range s.ids {
			if s.rng.Float64() < s.move {
				nudge(s.rng, s.bodies[id])
				s.set(id)
			}
		}
		for k := 0; k < len(s.ids); k++ {
			if s.rng.Float64() < s.despawn {
				s.remove(k)
			}
		}
		if s.rng.Float64() < s.spawn*float64(len(s.ids)) || len(s.ids) < 40 {
			s.create()
		}
		pkt, ok, err := p.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		h, _ := replicate.ParseHeader(pkt)
		_, err = cl.Decode(pkt)
		switch {
		case err == nil:
			ack, perr := replicate.ParseAck(replicate.AppendAck(nil, cl.Ack()))
			if perr != nil {
				t.Fatal(perr)
			}
			_ = p.Ack(ack)
		case errorsIs(err, replicate.ErrTooManyEntities):
			refusedAt, refused = i, refused+1
			if i >= ticks-quiet {
				tooMany++
			}
		case errorsIs(err, replicate.ErrStale), errorsIs(err, replicate.ErrNoBaseline):
			_ = p.Ack(cl.Ack())
		default:
			t.Fatalf("tick %d: a genuine packet: %v", s.tick, err)
		}
		if i >= 100 && i < 100+packets {
			if _, err := cl.Decode(forgeIDs(t, rng, next, perPacket, h.Seq+1, h.Tick)); err == nil {
				next += uint32(perPacket)
			}
		}
		most = max(most, cl.Len())
	}
	cl.Range(func(id, tick uint32, e *Body) bool {
		if _, ok := s.srv.Get(id); !ok {
			madeUp++
		}
		return true
	})
	t.Logf("%d genuine packets refused as too many, the last at tick %d (the forgery ran from tick 100 to %d)", refused, refusedAt, 100+packets-1)
	return tooMany, madeUp, most
}

// Forged packets without integrity made up entities that nothing removed:
// with WithMaxEntities(2000), 20 forged packets of 100 ids (here 400 of 5,
// to fill it to the limit exactly) made the
// genuine stream fail ErrTooManyEntities for good, since the Peer's
// refresh only re-sends what it sent. The client's default expiry, derived
// from the Peer's default Refresh, removes them, and the genuine stream
// goes on.
func TestForgedIDsDoNotLockTheClient(t *testing.T) {
	refresh := replicate.DefaultRefreshSeconds * replicate.DefaultTickRate
	tooMany, madeUp, most := forgedRun(t, 400, 5, 100+replicate.ExpiryRefreshes*refresh+1000, 500, replicate.WithMaxEntities(2000))
	t.Logf("at most %d held; in the last 500 ticks %d genuine packets refused as too many; %d made-up entities at the end", most, tooMany, madeUp)
	if tooMany != 0 || madeUp != 0 {
		t.Errorf("the client did not recover: %d genuine packets refused as too many in the last 500 ticks, %d made-up entities held", tooMany, madeUp)
	}
}

// Without a limit, 2,000 forged packets of 64 ids each made up 128,000
// entities that stayed; the default expiry drops them all.
func TestForgedIDsExpireByDefault(t *testing.T) {
	packets := 2000
	if testing.Short() {
		packets = 200
	}
	refresh := replicate.DefaultRefreshSeconds * replicate.DefaultTickRate
	_, madeUp, most := forgedRun(t, packets, 64, 100+packets+replicate.ExpiryRefreshes*refresh+800, 0)
	t.Logf("at most %d held; %d made-up entities at the end", most, madeUp)
	if madeUp != 0 {
		t.Errorf("%d made-up entities still held", madeUp)
	}
}

// The default expiry must never drop what the server still has: an idle
// entity is sent again only at its Peer's Refresh, and after an outage of
// the link longer than the expiry every entity's newest state is older
// than the expiry in ticks, yet the Peer believes the client holds them.
// An expiry counted in ticks (WithExpiry, as the generated clients do)
// drops them then; the default one counts the ticks the stream covered.
func TestDefaultExpiryKeepsIdleEntities(t *testing.T) {
	refresh := replicate.DefaultRefreshSeconds * replicate.DefaultTickRate
	expiry := replicate.ExpiryRefreshes * refresh
	for _, tc := range []struct {
		name string
		opts []replicate.Option
		lost bool // genuine entities are expected to be dropped
	}{
		{"default", nil, false},
		{"ticks", []replicate.Option{replicate.WithExpiry(expiry)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, 11, 300)
			c := s.addClient(replicate.PeerConfig[Body]{Budget: 600}, 0.1, 0.02, 3)
			cl, err := replicate.NewClient(bodyCodec, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			c.cl = cl
			dropped := 0
			cl.OnRemove(func(id uint32) {
				if _, ok := s.srv.Get(id); ok {
					dropped++
				}
			})
			// idle but for a few entities; then the link is down for
			// longer than the expiry; then up again, still idle
			s.move = 0.01
			ticks := 3*refresh + expiry + 2*refresh
			for i := range ticks {
				down := i >= 2*refresh && i < 2*refresh+expiry+100
				c.down.down, c.up.down = down, down
				s.step()
			}
			t.Logf("%d genuine entities dropped; holds %d of %d", dropped, cl.Len(), s.srv.Len())
			if !tc.lost && dropped != 0 {
				t.Errorf("the default expiry dropped %d entities the server still has", dropped)
			}
			if tc.lost && dropped == 0 {
				t.Errorf("an expiry in ticks dropped nothing after the outage: the test lost its point")
			}
			if !tc.lost {
				s.checkView(c, 0)
				if cl.Len() != s.srv.Len() {
					t.Errorf("holds %d entities, the server %d", cl.Len(), s.srv.Len())
				}
			}
		})
	}
}

// The same low-rate forgery against a Client's window over sequence
// numbers: a burst of RecoverAfter increasing far-away sequence numbers
// after every 8 genuine packets re-anchored it forward, and 88% of the
// genuine stream was refused. The window now goes back at the first
// genuine packet.
func TestLowRateForgeryAgainstTheClient(t *testing.T) {
	s := newSim(t, 13, 50)
	s.move = 0.2
	p, err := s.srv.NewPeer(replicate.PeerConfig[Body]{})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := replicate.NewClient(bodyCodec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(4))
	genuine, refused, forged, taken := 0, 0, 0, 0
	for i := 0; i < 1220; i++ {
		s.step()
		pkt, ok, err := p.Encode(nil)
		if err != nil || !ok {
			t.Fatalf("encode: %v %v", ok, err)
		}
		h, _ := replicate.ParseHeader(pkt)
		_, err = cl.Decode(pkt)
		if i >= 20 {
			genuine++
			if err != nil {
				refused++
			}
		}
		_ = p.Ack(cl.Ack())
		if i >= 20 && i%8 == 0 {
			far := h.Seq + 1_000_000 + uint32(rng.Intn(1<<30))
			for k := range replicate.RecoverAfter {
				forged++
				if _, err := cl.Decode(forgeIDs(t, rng, 1<<24, 1, far+uint32(k), h.Tick)); err == nil {
					taken++
				}
			}
		}
	}
	t.Logf("%d of %d genuine packets refused (%.1f%%), %d of %d forged accepted", refused, genuine, 100*float64(refused)/float64(genuine), taken, forged)
	if refused > genuine/100 {
		t.Errorf("%d of %d genuine packets refused", refused, genuine)
	}
}
