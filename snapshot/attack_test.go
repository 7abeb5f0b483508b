package snapshot_test

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/snapshot"
)

// The breaks of the snapshot layer against forged, corrupted and spoofed
// packets, each replayed as a test: a far-future tick that locked a
// receiver out, forged packets whose state lasted, corruption that
// decoded, spoofed acks that starved a client.

// testKey is the tests' per-connection secret.
var testKey = []byte("0123456789abcdef-connection-key")

// link is a sender and a receiver of one stream with a lossless, in-order
// path unless a test says otherwise; acks go back at once through
// HandleAck, as a server does with the acks it reads.
type link struct {
	t     testing.TB
	s     *snapshot.Sender[World]
	r     *snapshot.Receiver[World]
	g     *game
	tick  uint32
	truth map[uint32]*World
	out   World
	mode  snapshot.Mode
	// trusting: acks go to the unchecked Sender.Ack(tick) instead.
	trusting bool
}

func newLink(t testing.TB, seed int64, opts ...snapshot.Option) *link {
	s, err := snapshot.NewSender(worldCodec, opts...)
	require.NoError(t, err)
	r, err := snapshot.NewReceiver(worldCodec, opts...)
	require.NoError(t, err)
	return &link{t: t, s: s, r: r, g: newGame(seed, 8, 20), truth: map[uint32]*World{}, mode: s.Mode()}
}

// next encodes the next tick and returns its packet, not delivered.
func (l *link) next() []byte {
	l.g.step()
	l.tick++
	l.truth[l.tick] = quantized(&l.g.w)
	delete(l.truth, l.tick-200)
	pkt, err := l.s.Encode(nil, l.tick, &l.g.w)
	require.NoError(l.t, err)
	return pkt
}

// deliver hands pkt to the receiver and its ack, if any, to the sender.
// correct reports whether an accepted packet rebuilt the sender's state of
// its tick.
func (l *link) deliver(pkt []byte) (tick uint32, correct bool, err error) {
	tick, err = l.r.Decode(pkt, &l.out)
	if err == nil {
		want, ok := l.truth[tick]
		correct = ok && worldCodec.Equal(want, &l.out)
	}
	if a, ok := l.r.Ack(); ok {
		if l.trusting {
			if !a.NeedsFull() {
				l.s.Ack(a.Tick)
			} else {
				_ = l.s.HandleAck(a)
			}
		} else {
			_ = l.s.HandleAck(a)
		}
	}
	return tick, correct, err
}

// honest sends n ticks through and counts how they went.
func (l *link) honest(n int) (accepted, wrong, refused int) {
	for range n {
		_, ok, err := l.deliver(l.next())
		switch {
		case err != nil:
			refused++
		case ok:
			accepted++
		default:
			wrong++
		}
	}
	return
}

// forger seals forged packets the way the stream's peers do, except in
// ModeMAC, where it does not know the key.
func (l *link) forger() (*snapshot.Integrity, int) {
	var g *snapshot.Integrity
	var err error
	switch l.mode {
	case snapshot.ModeMAC:
		g, err = snapshot.NewIntegrity(snapshot.ModeMAC, []byte("not-the-key-but-a-guess"))
	default:
		g, err = snapshot.NewIntegrity(l.mode, nil)
	}
	require.NoError(l.t, err)
	return g, l.mode.Overhead()
}

// forgedDelta is a forger's delta at tick against base, a tick the
// receiver holds, saying that nothing changed.
func (l *link) forgedDelta(base, tick uint32, g *snapshot.Integrity) []byte {
	fs, err := snapshot.NewSender(worldCodec, snapshot.WithStateHash(0))
	require.NoError(l.t, err)
	_, err = fs.Encode(nil, base, l.truth[base])
	require.NoError(l.t, err)
	fs.Ack(base)
	pkt, err := fs.Encode(nil, tick, l.truth[base])
	require.NoError(l.t, err)
	return snapshot.Reheader(pkt, 0, func(*snapshot.Header) {}, g)
}

// Break 1: a far-future tick. A genuine packet with its tick set to
// 0xFFFFFFFF, and a forged "nothing changed" delta a million ticks ahead,
// are refused; a forged tick inside the window, and every single-bit flip
// of the tick field, cost at most DefaultRecoverAfter honest packets
// (ReorderTicks more when the tick moved less than ReorderTicks ahead).
func TestFarFutureTickLockout(t *testing.T) {
	l := newLink(t, 1)
	acc, wrong, _ := l.honest(10)
	require.Equal(t, 10, acc)
	require.Zero(t, wrong)
	forge, _ := l.forger()

	// a genuine full packet (a fresh sender's), bytes 6..9 set to FF
	fresh, err := snapshot.NewSender(worldCodec)
	require.NoError(t, err)
	full, err := fresh.Encode(nil, l.tick+1, &l.g.w)
	require.NoError(t, err)
	copy(full[6:10], []byte{0xFF, 0xFF, 0xFF, 0xFF})
	_, _, err = l.deliver(full)
	require.ErrorIs(t, err, snapshot.ErrFutureTick)
	_, _, err = l.deliver(l.next())
	require.NoError(t, err)

	// a forged delta far ahead against a baseline the receiver holds,
	// saying "nothing changed"
	_, _, err = l.deliver(l.forgedDelta(l.tick, l.tick+1_000_000, forge))
	require.ErrorIs(t, err, snapshot.ErrFutureTick)

	// inside the window: accepted (nothing tells it from the sender's
	// without integrity), then the honest stream is stale until the
	// receiver re-anchors
	_, _, err = l.deliver(l.forgedDelta(l.tick, l.tick+200, forge))
	require.NoError(t, err)
	acc, wrong, refused := l.honest(200)
	t.Logf("after a forged tick 200 ahead: %d of 200 honest packets refused, %d accepted, %d wrong", refused, acc, wrong)
	require.LessOrEqual(t, refused, snapshot.DefaultRecoverAfter-1+2) // the run, then a missing baseline and its full
	require.Zero(t, wrong)

	// every single-bit flip of a genuine packet's tick field
	var jumped, worst int
	step := 1
	if testing.Short() {
		step = 3 // a third of the bits, for the race detector's sake
	}
	for bit := 48; bit < 80; bit += step {
		l := newLink(t, int64(100+bit))
		l.honest(10)
		l.s.Reset() // the next packet is a full one
		flipped := l.next()
		flipped[bit/8] ^= 1 << (bit % 8)
		if _, _, err := l.deliver(flipped); err == nil {
			jumped++
		}
		_, wrong, refused := l.honest(30)
		worst = max(worst, refused)
		require.Zero(t, wrong, "bit %d", bit)
		// a tick flipped up to ReorderTicks ahead is caught up, not rewound
		require.LessOrEqual(t, refused, snapshot.ReorderTicks+snapshot.DefaultRecoverAfter+2, "bit %d", bit)
	}
	t.Logf("tick bit flips: %d accepted, at most %d honest packets refused after one", jumped, worst)
}

// Break 2: a forged full packet at tick T, arriving before the real T and
// acknowledged by the client, used to poison every later tick. Its ack
// does not match what the sender sent, so the sender never builds on it:
// it lasts one tick. A sender that trusts acks (Sender.Ack) builds on it,
// and the state hash bounds the damage to DefaultHashEvery packets.
func TestForgedFullPacketDoesNotPersist(t *testing.T) {
	for _, trusting := range []bool{false, true} {
		l := newLink(t, 2)
		l.trusting = trusting
		l.honest(20)
		forge, _ := l.forger()

		// The forger's packet: a plausible state, a player renamed.
		fake := *l.truth[l.tick]
		fake.Players = append([]Player(nil), fake.Players...)
		fake.Players[0].Name = "HACKED"
		fs, err := snapshot.NewSender(worldCodec, snapshot.WithStateHash(0))
		require.NoError(t, err)
		forged, err := fs.Encode(nil, l.tick+1, &fake)
		require.NoError(t, err)
		forged = snapshot.Reheader(forged, 0, func(*snapshot.Header) {}, forge)

		// the forgery arrives first; the client's ack of it reaches the
		// server after the real T went out
		_, err = l.r.Decode(forged, &l.out)
		require.NoError(t, err, "a plausible forgery is accepted without integrity")
		require.Equal(t, "HACKED", l.out.Players[0].Name)
		ack, ok := l.r.Ack()
		require.True(t, ok)
		real := l.next()
		if trusting {
			l.s.Ack(ack.Tick)
		} else {
			require.ErrorIs(t, l.s.HandleAck(ack), snapshot.ErrBadAck)
		}
		_, _, err = l.deliver(real) // the real T: overtaken
		require.ErrorIs(t, err, snapshot.ErrStaleTick)

		acc, wrong, refused := l.honest(300)
		t.Logf("trusting acks %v: after the forgery, %d of 300 honest ticks wrong, %d refused", trusting, wrong, refused)
		if trusting {
			require.LessOrEqual(t, wrong+refused, snapshot.DefaultHashEvery+1)
		} else {
			require.Zero(t, wrong)
			require.Zero(t, refused)
		}
		require.GreaterOrEqual(t, acc, 300-snapshot.DefaultHashEvery-1)
		require.NotEqual(t, "HACKED", l.out.Players[0].Name)
	}
}

// Break 2, second form: a genuine delta re-labelled to name another
// baseline the receiver holds. Accepted with a wrong state without
// integrity (one tick), never acknowledged into the sender's baselines;
// refused with a checksum or MAC.
func TestRelabelledBaseline(t *testing.T) {
	for _, opt := range []snapshot.Option{nil, snapshot.WithChecksum(), snapshot.WithMAC(testKey)} {
		l := newLink(t, 3, opt)
		forge, overhead := l.forger()
		if l.mode == snapshot.ModeChecksum {
			// a forger who recomputes the CRC gets through: CRC is not
			// authentication. Corruption in transit does not (below).
			forge = nil
		}
		l.honest(10)
		var forgedWrong, forgedAccepted int
		for range 28 {
			pkt := l.next()
			h, err := snapshot.ParseHeader(pkt)
			require.NoError(t, err)
			require.True(t, h.Delta)
			bad := snapshot.Reheader(pkt, overhead, func(h *snapshot.Header) {
				h.Baseline-- // another held baseline, same distance code length
				if h.Tick-h.Baseline > 4 {
					h.Baseline += 2
				}
			}, forge)
			if forge == nil && overhead > 0 {
				bad = append(bad, pkt[len(pkt)-overhead:]...) // the old trailer
			}
			if _, ok, err := l.deliver(bad); err == nil {
				forgedAccepted++
				if !ok {
					forgedWrong++
				}
			}
			_, _, _ = l.deliver(pkt) // the genuine one, refused as stale once the forgery got in
			acc, wrong, _ := l.honest(5)
			require.Zero(t, wrong)
			require.Greater(t, acc, 0)
		}
		t.Logf("mode %v: %d of 28 relabelled deltas accepted (%d wrong); every later tick right", l.mode, forgedAccepted, forgedWrong)
		if l.mode != snapshot.ModeNone {
			require.Zero(t, forgedAccepted)
		}
	}
}

// Break 3: single-bit flips over a genuine stream. Without integrity
// some decode into a wrong state, for one tick only; with a checksum or a
// MAC none is accepted.
func TestCorruptionIsCaught(t *testing.T) {
	for _, opt := range []snapshot.Option{nil, snapshot.WithChecksum(), snapshot.WithMAC(testKey)} {
		l := newLink(t, 4, opt)
		rng := rand.New(rand.NewSource(4))
		flips, accepted, wrongAccepted := 0, 0, 0
		for range 400 {
			pkt := l.next()
			for range 3 {
				bad := append([]byte(nil), pkt...)
				bit := rng.Intn(len(bad) * 8)
				bad[bit/8] ^= 1 << (bit % 8)
				flips++
				if _, ok, err := l.deliver(bad); err == nil {
					accepted++
					if !ok {
						wrongAccepted++
					}
				}
			}
			if _, ok, err := l.deliver(pkt); err == nil {
				require.True(t, ok)
			}
		}
		t.Logf("mode %v: %d single-bit flips, %d accepted, %d of them wrong", l.mode, flips, accepted, wrongAccepted)
		if l.mode != snapshot.ModeNone {
			require.Zero(t, accepted)
		}
		// whatever got through did not last
		_, wrong, refused := l.honest(50)
		require.Zero(t, wrong)
		require.LessOrEqual(t, refused, snapshot.ReorderTicks+snapshot.DefaultRecoverAfter+2)
	}
}

// Break 4: spoofed acks. An off-path attacker who acks every tick (with
// tokens it must guess, asking for full snapshots or not) while the link
// drops 10% changes nothing: the client receives as many ticks as with
// honest acks alone. And a baseline the receiver lacks costs one packet,
// not a ring's worth.
func TestSpoofedAcks(t *testing.T) {
	run := func(spoof bool) (received, badAcks int) {
		l := newLink(t, 5)
		rng := rand.New(rand.NewSource(5))
		guess := rand.New(rand.NewSource(6))
		for range 1000 {
			pkt := l.next()
			if spoof {
				for _, a := range []snapshot.Ack{
					{Tick: l.tick, Token: guess.Uint32()},
					{Tick: l.tick, Token: guess.Uint32(), MissingBaseline: true},
					{Tick: l.tick + 1, Token: guess.Uint32()},
				} {
					if errors.Is(l.s.HandleAck(a), snapshot.ErrBadAck) {
						badAcks++
					}
				}
			}
			if rng.Float64() < 0.1 {
				continue
			}
			if _, ok, err := l.deliver(pkt); err == nil && ok {
				received++
			}
		}
		return received, badAcks
	}
	honest, _ := run(false)
	spoofed, bad := run(true)
	t.Logf("received %d of 1000 ticks with honest acks, %d with spoofed acks as well (%d refused)", honest, spoofed, bad)
	require.Greater(t, honest, 850)
	require.Equal(t, honest, spoofed)
	require.Equal(t, 3000, bad)

	// an ack for a tick the client lost: a spoofed one is refused, and a
	// trusted one (Sender.Ack) costs one delta the receiver cannot use
	l := newLink(t, 6)
	l.honest(10)
	lost := l.next()
	h, err := snapshot.ParseHeader(lost)
	require.NoError(t, err)
	require.ErrorIs(t, l.s.HandleAck(snapshot.Ack{Tick: h.Tick, Token: 12345}), snapshot.ErrBadAck)
	l.s.Ack(h.Tick)
	_, _, err = l.deliver(l.next())
	require.ErrorIs(t, err, snapshot.ErrNoBaseline)
	a, ok := l.r.Ack()
	require.True(t, ok)
	require.True(t, a.MissingBaseline)
	_, ok = l.s.Baseline()
	require.False(t, ok, "the sender falls back at once")
	acc, wrong, refused := l.honest(40)
	require.Equal(t, 40, acc)
	require.Zero(t, wrong+refused)
}
