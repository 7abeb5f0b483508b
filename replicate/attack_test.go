package replicate_test

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/integrity"
	"github.com/bitwire/bitwire/replicate"
)

var attackKey = []byte("0123456789abcdef0123456789abcdef")

func keyFor(mode integrity.Mode) []byte {
	if mode == integrity.ModeMAC {
		return attackKey
	}
	return nil
}

var modes = []integrity.Mode{integrity.ModeNone, integrity.ModeChecksum, integrity.ModeMAC}

// A spoofed ack (a guessed token) is refused with ErrBadAck and changes
// nothing: the entities it claims stay unacknowledged, so they are sent
// again, and the next deltas are against what the client really holds.
func TestSpoofedAcksIgnored(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			p := newPair(t, replicate.PeerConfig[Body]{Integrity: mode, Key: keyFor(mode)})
			p.advance()
			for id := uint32(1); id <= 20; id++ {
				p.set(id)
			}
			if p.packet() == nil { // tick 1: everything in full, lost
				t.Fatal("nothing sent")
			}
			// The spoofer acks packet 1 with guessed tokens.
			rng := newRand(int64(mode))
			for range 100 {
				a := replicate.Ack{Seq: 1, Token: rng.Uint32()}
				if err := p.peer.Ack(a); !errorsIs(err, replicate.ErrBadAck) {
					t.Fatalf("spoofed ack: %v, want ErrBadAck", err)
				}
			}
			if st := p.peer.Stats(); st.Acks != 0 || st.BadAcks != 100 {
				t.Fatalf("stats after 100 spoofed acks: %+v", st)
			}
			// The peer still believes the client holds nothing: after the
			// resend delay, the next packets are full states, which the
			// client (which lost packet 1) decodes.
			for range 8 {
				p.advance()
				if pkt := p.packet(); pkt != nil {
					p.deliver(pkt)
				}
			}
			if st := p.peer.Stats(); st.Delta != 0 || p.cl.Len() == 0 {
				t.Fatalf("after spoofed acks: %+v, client holds %d", st, p.cl.Len())
			}
			// A spoofed mask (a genuine newest packet, guessed mask token)
			// is refused as a part: the genuine newest is still taken.
			a := p.cl.Ack()
			a.Mask, a.MaskToken = 0xffff, rng.Uint32()
			before := p.peer.Stats().Acks
			if err := p.peer.Ack(a); !errorsIs(err, replicate.ErrBadAck) {
				t.Fatalf("spoofed mask: %v", err)
			}
			if got := p.peer.Stats().Acks; got != before+1 {
				t.Fatalf("acks %d → %d: the genuine newest packet was not taken", before, got)
			}
			// The genuine ack is taken.
			if err := p.peer.Ack(p.cl.Ack()); err != nil {
				t.Fatalf("genuine ack: %v", err)
			}
		})
	}
}

// Every single-bit flip of every packet of a session, and every
// truncation, is refused with a CRC32C or HMAC trailer; without one, some
// flips decode (which is what the trailer is for). With a MAC, a forged
// header (another sequence number or tick, trailer recomputed as a CRC) is
// refused too.
func TestCorruptedPacketsRefused(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			s := newSim(t, 7, 60)
			s.move = 0.2
			c := s.addClient(replicate.PeerConfig[Body]{Budget: 300, Integrity: mode, Key: keyFor(mode)}, 0, 0, 0)
			flips, accepted, truncs := 0, 0, 0
			for range 40 {
				s.advance()
				for _, id := range s.ids {
					if s.rng.Float64() < s.move {
						nudge(s.rng, s.bodies[id])
						s.set(id)
					}
				}
				pkt, ok, err := c.peer.Encode(nil)
				if err != nil || !ok {
					t.Fatalf("encode: %v %v", ok, err)
				}
				for bit := 0; bit < len(pkt)*8; bit += 3 {
					bad := append([]byte(nil), pkt...)
					bad[bit/8] ^= 1 << (bit % 8)
					flips++
					if probe(t, mode, c, bad) {
						accepted++
					}
				}
				for n := 0; n < len(pkt); n += 5 {
					truncs++
					if probe(t, mode, c, pkt[:n]) && mode != integrity.ModeNone {
						t.Fatalf("a packet cut to %d of %d bytes was accepted", n, len(pkt))
					}
				}
				if mode != integrity.ModeNone {
					forged := append([]byte(nil), pkt[:len(pkt)-mode.Overhead()]...)
					binary.LittleEndian.PutUint32(forged[6:], binary.LittleEndian.Uint32(forged[6:])+5)
					forged = binary.LittleEndian.AppendUint32(forged, crc32.Checksum(forged, crc32.MakeTable(crc32.Castagnoli)))
					if mode == integrity.ModeMAC {
						forged = append(forged, 0, 0, 0, 0, 0, 0)
					}
					if probe(t, mode, c, forged) != (mode == integrity.ModeChecksum) {
						t.Fatalf("a forged header with a recomputed CRC: accepted %v in mode %v", !(mode != integrity.ModeChecksum), mode)
					}
				}
				c.receive(s, pkt)
				c.peer.Ack(c.cl.Ack())
			}
			t.Logf("%v: %d of %d single-bit flips got past the trailer to the body; %d truncations", mode, accepted, flips, truncs)
			if mode != integrity.ModeNone && accepted != 0 {
				t.Fatalf("%d corrupted packets accepted with integrity %v", accepted, mode)
			}
			if mode == integrity.ModeNone && accepted == 0 {
				t.Fatalf("no flip decoded without a trailer: the test does not test")
			}
		})
	}
}

// probe decodes pkt on a fresh client of the mode and reports whether it
// got past the header and trailer checks to the body (decoded, or refused
// for a baseline only the real client holds): the checks a trailer adds.
func probe(t *testing.T, mode integrity.Mode, _ *simClient, pkt []byte) bool {
	t.Helper()
	cl, err := replicate.NewClient(bodyCodec, replicate.WithIntegrity(mode, keyFor(mode)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Decode(pkt)
	return err == nil || errorsIs(err, replicate.ErrNoBaseline)
}

// attackStats counts what the adversary of TestAttackStateMachine did.
type attackStats struct {
	flips, truncs, forged, replays, spoofs int
	acceptedBad                            int // corrupted (flipped or truncated) packets the client accepted
	acceptedForged                         int // forged headers accepted
	spoofsTaken                            int // spoofed acks Peer.Ack took
}

// The adversarial state machine: an honest stream over a lossy,
// duplicating, reordering link, and an adversary that flips bits in copies
// of genuine packets, truncates them, forges headers (sequence number or
// tick moved, the trailer recomputed as a CRC, which anyone can), replays
// old packets and spoofs acks with guessed tokens; then the adversary
// stops. With a MAC, nothing the adversary sends is ever accepted and every
// state the client holds is always the server's; with a CRC, no corrupted
// packet is accepted. In every mode, once the adversary stops, the client
// holds exactly the server's world within the Peer's Refresh plus a few
// round trips (WithExpiry drops what forgeries made up).
func TestAttackStateMachine(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			for seed := int64(1); seed <= 3; seed++ {
				attackRun(t, mode, seed)
			}
		})
	}
}

func attackRun(t *testing.T, mode integrity.Mode, seed int64) {
	const refresh = 90
	ticks := 1500
	if testing.Short() {
		ticks = 500
	}
	s := newSim(t, seed, 120)
	s.move, s.spawn, s.despawn = 0.1, 0.003, 0.003
	cfg := replicate.PeerConfig[Body]{Budget: 600, Integrity: mode, Key: keyFor(mode), Refresh: refresh}
	c := s.addClient(cfg, 0.1, 0.02, 3)
	cl, err := replicate.NewClient(bodyCodec, replicate.WithIntegrity(mode, keyFor(mode)), replicate.WithExpiry(3*refresh))
	if err != nil {
		t.Fatal(err)
	}
	c.cl = cl
	rng := s.rng
	var st attackStats
	var old [][]byte // genuine packets, for replays and copies
	crcTable := crc32.MakeTable(crc32.Castagnoli)
	deliver := func(pkt []byte) error {
		_, err := c.cl.Decode(pkt)
		if err == nil {
			c.up.send(int(s.tick), replicate.AppendAck(nil, c.cl.Ack()))
		} else if errorsIs(err, replicate.ErrNoBaseline) {
			c.up.send(int(s.tick), replicate.AppendAck(nil, c.cl.Ack()))
		}
		return err
	}
	for i := 0; i < ticks+refresh*2+200; i++ {
		attacking := i < ticks
		if !attacking { // the world and the network quiet down
			s.move, s.spawn, s.despawn = 0, 0, 0
			c.down.loss, c.up.loss, c.down.dup, c.up.dup = 0, 0, 0, 0
		}
		s.advance()
		for _, id := range s.ids {
			if rng.Float64() < s.move {
				nudge(rng, s.bodies[id])
				s.set(id)
			}
		}
		for k := 0; k < len(s.ids); k++ {
			if rng.Float64() < s.despawn {
				s.remove(k)
			}
		}
		if rng.Float64() < s.spawn*float64(len(s.ids)) {
			s.create()
		}
		now := int(s.tick)
		for {
			pkt, ok, err := c.peer.Encode(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			c.down.send(now, pkt)
			old = append(old, pkt)
			if len(old) > 64 {
				old = old[1:]
			}
		}
		if attacking && len(old) > 0 {
			src := old[rng.Intn(len(old))]
			bad := append([]byte(nil), src...)
			kind := rng.Intn(5)
			switch kind {
			case 0: // bit flips
				for n := 1 + rng.Intn(3); n > 0; n-- {
					b := rng.Intn(len(bad) * 8)
					bad[b/8] ^= 1 << (b % 8)
				}
				st.flips++
			case 1:
				bad = bad[:rng.Intn(len(bad))]
				st.truncs++
			case 2, 3: // a forged header: seq or tick moved, the trailer redone as a CRC
				body := bad[:len(bad)-mode.Overhead()]
				off := 6 + 4*(kind-2)
				binary.LittleEndian.PutUint32(body[off:], binary.LittleEndian.Uint32(body[off:])+uint32(1+rng.Intn(3000)))
				bad = body
				if mode != integrity.ModeNone {
					bad = binary.LittleEndian.AppendUint32(bad, crc32.Checksum(body, crcTable))
				}
				if mode == integrity.ModeMAC {
					bad = append(bad, byte(rng.Intn(256)), 0, 0, 0, 0, 0)
				}
				st.forged++
			case 4:
				st.replays++
			}
			err := deliver(bad)
			if err == nil {
				switch kind {
				case 0, 1:
					if string(bad) != string(src) {
						st.acceptedBad++
					}
				case 2, 3:
					st.acceptedForged++
				}
			}
			// Spoofed acks: a plausible sequence number, guessed tokens.
			a := replicate.Ack{Seq: uint32(c.peer.Stats().Packets) - uint32(rng.Intn(40)), Mask: rng.Uint32(), Token: rng.Uint32(), MaskToken: rng.Uint32()}
			if a.Seq == 0 {
				a.Seq = 1
			}
			st.spoofs++
			if err := c.peer.Ack(a); err == nil {
				st.spoofsTaken++
			}
		}
		for _, pkt := range c.down.receive(now) {
			err := deliver(pkt)
			if err != nil && !errorsIs(err, replicate.ErrStale) && !errorsIs(err, replicate.ErrNoBaseline) &&
				!errorsIs(err, replicate.ErrFuture) {
				t.Fatalf("tick %d: a genuine packet: %v", s.tick, err)
			}
		}
		for _, a := range c.up.receive(now) {
			ack, err := replicate.ParseAck(a)
			if err != nil {
				t.Fatal(err)
			}
			c.peer.Ack(ack)
		}
		if mode == integrity.ModeMAC && i%10 == 0 {
			s.checkView(c, 1<<30) // fatal on any wrong state
		}
	}
	ps := c.peer.Stats()
	t.Logf("%v seed %d: %+v; peer %+v", mode, seed, st, ps)
	if st.spoofsTaken != 0 {
		t.Errorf("%d spoofed acks taken", st.spoofsTaken)
	}
	if mode != integrity.ModeNone && st.acceptedBad != 0 {
		t.Errorf("%d corrupted packets accepted with integrity %v", st.acceptedBad, mode)
	}
	if mode == integrity.ModeMAC && st.acceptedForged != 0 {
		t.Errorf("%d forged packets accepted with a MAC", st.acceptedForged)
	}
	// After the attack, the client holds exactly the server's world.
	s.checkView(c, 0)
	held := 0
	s.srv.Range(func(id uint32, e *Body) bool {
		if got, _, ok := c.cl.Get(id); !ok || *got != *e {
			t.Errorf("%v seed %d: id %d not current %d ticks after the attack", mode, seed, id, refresh*2+200)
		}
		held++
		return true
	})
	if c.cl.Len() != held {
		t.Errorf("%v seed %d: client holds %d entities, server %d", mode, seed, c.cl.Len(), held)
	}
}

// A client that lacks a delta's baseline (here: it was reset) reports the
// packet in its ack, with its token, and the Peer sends those entities in
// full with the next packet, instead of after BaselineDepth sends. A
// report with a wrong token changes nothing.
func TestMissingBaselineReported(t *testing.T) {
	p := newPair(t, replicate.PeerConfig[Body]{})
	p.advance()
	for id := uint32(1); id <= 10; id++ {
		p.set(id)
	}
	p.deliver(p.packet())
	require.NoError(t, p.peer.Ack(p.cl.Ack()))
	p.cl.Reset() // the client lost its state; the Peer does not know
	p.advance()
	for id := uint32(1); id <= 10; id++ {
		p.set(id)
	}
	pkt := p.packet()
	_, err := p.cl.Decode(pkt)
	require.ErrorIs(t, err, replicate.ErrNoBaseline)
	a := p.cl.Ack()
	require.Equal(t, uint32(2), a.Missing)
	bad := a
	bad.MissingToken++
	require.ErrorIs(t, p.peer.Ack(bad), replicate.ErrBadAck)
	require.Equal(t, 0, p.peer.Stats().Missing)
	require.NoError(t, p.peer.Ack(a))
	require.Equal(t, 1, p.peer.Stats().Missing)
	p.advance()
	before := p.peer.Stats()
	p.deliver(p.packet()) // all ten in full: the client decodes them
	after := p.peer.Stats()
	require.Equal(t, 10, after.Full-before.Full)
	require.Equal(t, 10, p.cl.Len())
}
