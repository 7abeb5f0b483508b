package replicate_test

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/replicate"
)

// Shell flies at a constant velocity and spins at a constant rate: its
// position and rotation are predicted from two baselines.
type Shell struct {
	X   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2,pred"`
	Y   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2,pred"`
	Rot [4]float32 `net:"quat,bits=9,pred"`
	Hp  uint8      `net:"range,min=0,max=100"`
}

// ShellPlain is Shell without pred.
type ShellPlain struct {
	X   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Y   float32    `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Rot [4]float32 `net:"quat,bits=9"`
	Hp  uint8      `net:"range,min=0,max=100"`
}

// shellAt is shell id at tick: a straight line and a steady spin of its own.
func shellAt(id uint32, tick uint32) Shell {
	t := float64(tick)
	vx, vy := float64(int(id%7)-3)*0.11, float64(int(id%5)-2)*0.07
	h := float64(id%4+1) * 0.01 * t // half the angle turned
	ax := [3]float64{float64(id%3) - 1, 1, float64(id % 2)}
	l := math.Sqrt(ax[0]*ax[0] + ax[1]*ax[1] + ax[2]*ax[2])
	s := math.Sin(h) / l
	return Shell{X: float32(-100 + float64(id) + vx*t), Y: float32(vy * t),
		Rot: [4]float32{float32(ax[0] * s), float32(ax[1] * s), float32(ax[2] * s), float32(math.Cos(h))}, Hp: 100}
}

// shellRun sends shells of type E (Shell or ShellPlain, made from shellAt)
// to a client over a link that loses packets and acks at the given rates
// and checks every state the client accepts against the server's; it
// returns the Peer's counters.
func shellRun[E any](t *testing.T, loss float64, conv func(Shell) E) replicate.PeerStats {
	return shellRunOf(t, shellNet{loss: loss, peers: 1}, shellAt, conv)[0]
}

// shellNet is how shellRunOf sends: to peers clients, each over a link of
// its own that loses packets and acks at rate loss and delivers each ack
// it does not lose up to ackDelay ticks late, with PeerConfig.Refresh
// refresh.
type shellNet struct {
	loss                     float64
	peers, refresh, ackDelay int
}

// shellRunOf is shellRun with the shells' states given by state, over n.
func shellRunOf[E any](t *testing.T, n shellNet, state func(id, tick uint32) Shell, conv func(Shell) E) []replicate.PeerStats {
	c := bitwire.MustFor[E]()
	srv, err := replicate.NewServer(c)
	require.NoError(t, err)
	type lateAck struct {
		at  uint32
		ack replicate.Ack
	}
	type link struct {
		peer *replicate.Peer[E]
		cl   *replicate.Client[E]
		rng  *rand.Rand
		held []byte
		acks []lateAck
	}
	links := make([]link, n.peers)
	for i := range links {
		l := &links[i]
		l.peer, err = srv.NewPeer(replicate.PeerConfig[E]{Refresh: n.refresh})
		require.NoError(t, err)
		l.cl, err = replicate.NewClient(c)
		require.NoError(t, err)
		l.rng = rand.New(rand.NewSource(int64(5 + i)))
	}
	loss := n.loss
	const shells = 20
	for tick := uint32(1); tick <= 300; tick++ {
		require.NoError(t, srv.Advance(tick))
		for id := uint32(1); id <= shells; id++ {
			if tick > 1 && state(id, tick) == state(id, tick-1) {
				continue // at rest: its version stays the last one set
			}
			v := conv(state(id, tick))
			_, err := srv.Set(id, &v)
			require.NoError(t, err)
		}
		for i := range links {
			l := &links[i]
			for len(l.acks) > 0 && l.acks[0].at <= tick {
				require.NoError(t, l.peer.Ack(l.acks[0].ack))
				l.acks = l.acks[1:]
			}
			pkt, ok, err := l.peer.Encode(nil)
			require.NoError(t, err)
			require.True(t, ok)
			if l.rng.Float64() < loss/2 { // held back: delivered after the next one
				l.held, pkt = pkt, l.held
			}
			for _, p := range [][]byte{pkt, l.held} {
				if p == nil || l.rng.Float64() < loss/2 {
					continue
				}
				info, err := l.cl.Decode(p)
				if errors.Is(err, replicate.ErrStale) || errors.Is(err, replicate.ErrNoBaseline) {
					continue
				}
				require.NoError(t, err, "peer %d, tick %d", i, tick)
				for _, id := range info.Updated {
					got, at, ok := l.cl.Get(id)
					require.True(t, ok)
					want := conv(state(id, at))
					require.NoError(t, c.Quantize(&want))
					require.Equal(t, want, *got, "peer %d: id %d at tick %d", i, id, at)
				}
				switch {
				case l.rng.Float64() < loss:
				case n.ackDelay > 0:
					l.acks = append(l.acks, lateAck{tick + uint32(l.rng.Intn(n.ackDelay+1)), l.cl.Ack()})
				default:
					require.NoError(t, l.peer.Ack(l.cl.Ack()))
				}
			}
			l.held = nil
		}
	}
	stats := make([]replicate.PeerStats, n.peers)
	for i, l := range links {
		stats[i] = l.peer.Stats()
	}
	return stats
}

func TestPredictedDeltas(t *testing.T) {
	for _, loss := range []float64{0, 0.3} {
		pred := shellRun(t, loss, func(s Shell) Shell { return s })
		plain := shellRun(t, loss, func(s Shell) ShellPlain { return ShellPlain(s) })
		t.Logf("loss %.0f%%: bodies %d bits, %d deltas (%d predicted); without pred %d bits, %d deltas",
			100*loss, pred.Bits.Bodies, pred.Delta, pred.Predicted, plain.Bits.Bodies, plain.Delta)
		assert.Zero(t, plain.Predicted, "a codec without pred predicts nothing")
		assert.Greater(t, pred.Predicted, pred.Delta/2, "most deltas are predicted")
		// At constant velocity a delta predicted from as far back as it
		// is ahead costs its changed bits and the quantization's noise;
		// losses make the distances differ, and the prediction is a step
		// short or long.
		bound := 0.6
		if loss > 0 {
			bound = 0.9
		}
		assert.Less(t, float64(pred.Bits.Bodies), bound*float64(plain.Bits.Bodies))
	}
}

// TestPredictedIdleShared predicts shells that rest now and then (on a
// tick that a shell rests it is not Set, so its version is the tick
// before's) and are sent in full every 30 ticks, to eight clients whose
// acks arrive up to 3 ticks late and whose Peers share deltas. The older
// baseline is named by the distance between the acknowledged packets,
// which the client holds its states by, not between their versions, which
// may be one version (a distance of 0 that the prefix cannot say).
// TestSharedDeltaKey holds the shared deltas to the versions they were
// predicted from.
func TestPredictedIdleShared(t *testing.T) {
	// Even shells move on two ticks of three; shells 3, 7, 11… move for
	// 10 ticks, then rest for 10; shells 1, 9, 17… rest at random, a
	// third of the ticks; others always move.
	moved := map[uint32][]uint32{} // by id: ticks moved by each tick
	rng := rand.New(rand.NewSource(3))
	for id := uint32(1); id <= 20; id += 8 {
		m := make([]uint32, 302)
		for tick := 1; tick < len(m); tick++ {
			m[tick] = m[tick-1]
			if rng.Intn(3) != 0 {
				m[tick]++
			}
		}
		moved[id] = m
	}
	resting := func(id, tick uint32) Shell {
		switch {
		case id%2 == 0:
			return shellAt(id, tick-tick/3)
		case id%4 == 3:
			return shellAt(id, tick/20*10+min(tick%20, 10))
		case id%8 == 1:
			return shellAt(id, moved[id][tick])
		}
		return shellAt(id, tick)
	}
	for _, loss := range []float64{0, 0.3, 0.5} {
		stats := shellRunOf(t, shellNet{loss: loss, peers: 8, refresh: 30, ackDelay: 3}, resting, func(s Shell) Shell { return s })
		var delta, predicted int
		var bodies int64
		for i, st := range stats {
			delta, predicted, bodies = delta+st.Delta, predicted+st.Predicted, bodies+st.Bits.Bodies
			assert.Greater(t, st.Predicted, st.Delta/3, "peer %d", i)
			if loss == 0 {
				assert.Zero(t, st.Missing, "peer %d", i)
			}
		}
		t.Logf("loss %.0f%%, %d peers: %d deltas (%d predicted), %d body bits", 100*loss, len(stats), delta, predicted, bodies)
	}
}

// TestPredictedPrefix checks the prediction prefix of a delta body by
// hand: a packet whose delta names an older baseline the client does not
// hold is ErrNoBaseline, and one whose older distance reaches before tick
// 0 is ErrMalformed.
func TestPredictedPrefix(t *testing.T) {
	c := bitwire.MustFor[Shell]()
	cl, err := replicate.NewClient(c)
	require.NoError(t, err)
	fp := c.Fingerprint()
	packet := func(seq, tick uint32, body func(w *bits.Writer)) []byte {
		var w bits.Writer
		w.WriteBits(replicate.Magic, 16)
		w.WriteBits(uint64(uint32(fp)^uint32(fp>>32)), 32)
		w.WriteBits(uint64(seq), 32)
		w.WriteBits(uint64(tick), 32)
		w.WriteBits(0, 2)
		body(&w)
		return w.Bytes()
	}
	count := func(w *bits.Writer, n int) { // a list's count ("Lists")
		w.WriteBool(n != 0)
		if n != 0 {
			fields.WriteBitlen(w, uint64(n-1), 5)
		}
	}
	values := func(w *bits.Writer, vs ...uint64) { // values of one running mean
		var m fields.RiceMean
		for _, v := range vs {
			k := m.K()
			fields.WriteRiceBitlen(w, v, k, 5)
			m.AddCapped(v, k)
		}
	}
	// a full state of id 1 at tick 4: no removals, no common baseline,
	// entities [1], kinds [entity 0: full]
	s4 := shellAt(1, 4)
	_, err = cl.Decode(packet(1, 4, func(w *bits.Writer) {
		count(w, 0)
		w.WriteBool(false)
		count(w, 1)
		values(w, 1)
		count(w, 1)
		values(w, 0)
		values(w, 0)
		require.NoError(t, c.Encode(w, &s4))
	}))
	require.NoError(t, err)
	// a delta of id 1 against the common baseline, tick 4, with prefix
	delta := func(seq uint32, prefix func(w *bits.Writer)) []byte {
		return packet(seq, 5, func(w *bits.Writer) {
			count(w, 0)
			w.WriteBool(true)
			fields.WriteBitlen(w, 0, 5) // 5 - 4 - 1
			count(w, 1)
			values(w, 1)
			count(w, 0)
			prefix(w)
			w.WriteBits(0, 4) // nothing changed
		})
	}
	from := func(d uint64) func(w *bits.Writer) { // predicted from tick 4 - d
		return func(w *bits.Writer) {
			w.WriteBool(true)
			fields.WriteBitlen(w, d-1, 5)
		}
	}
	_, err = cl.Decode(delta(2, from(2)))
	require.ErrorIs(t, err, replicate.ErrNoBaseline, "tick 2 is not held")
	_, err = cl.Decode(delta(3, from(5)))
	require.ErrorIs(t, err, bitwire.ErrMalformed, "tick -1")
	// The same delta not predicted: accepted.
	ok := delta(4, func(w *bits.Writer) { w.WriteBool(false) })
	info, err := cl.Decode(ok)
	require.NoError(t, err)
	require.Equal(t, []uint32{1}, info.Updated)
	got, _, _ := cl.Get(1)
	want := s4
	require.NoError(t, c.Quantize(&want))
	require.Equal(t, want, *got)
}

// expiryRun sends two shells to a client that expires what it has heard
// nothing new of for 14 ticks, with a Refresh every 20: shell 1 moves on
// ticks 1 to 3, rests until tick 35 (the client expires it, and the
// Refresh sends it in full into a slot of its own), then moves again;
// shell 2 moves every tick. It returns how many packets the client
// refused for a baseline it lacked.
func expiryRun[E any](t *testing.T, conv func(Shell) E) (noBaseline int) {
	c := bitwire.MustFor[E]()
	srv, err := replicate.NewServer(c)
	require.NoError(t, err)
	peer, err := srv.NewPeer(replicate.PeerConfig[E]{Refresh: 20})
	require.NoError(t, err)
	cl, err := replicate.NewClient(c, replicate.WithExpiry(14))
	require.NoError(t, err)
	for tick := uint32(1); tick <= 60; tick++ {
		require.NoError(t, srv.Advance(tick))
		x1 := float32(min(tick, 3))
		if tick >= 35 {
			x1 = float32(3 + tick - 35)
		}
		s1 := conv(Shell{X: x1, Rot: [4]float32{0, 0, 0, 1}})
		s2 := conv(Shell{X: float32(tick) * 0.5, Y: 1, Rot: [4]float32{0, 0, 0, 1}})
		_, err := srv.Set(1, &s1)
		require.NoError(t, err)
		_, err = srv.Set(2, &s2)
		require.NoError(t, err)
		pkt, ok, err := peer.Encode(nil)
		require.NoError(t, err)
		require.True(t, ok)
		if _, err := cl.Decode(pkt); errors.Is(err, replicate.ErrNoBaseline) {
			noBaseline++
		} else {
			require.NoError(t, err, "tick %d", tick)
		}
		require.NoError(t, peer.Ack(cl.Ack()))
	}
	return noBaseline
}

// TestPredictedAfterExpiry: a full state may land in a client that
// expired the entity and holds none of its earlier states, so no delta
// is predicted from a send before the newest full one acknowledged.
func TestPredictedAfterExpiry(t *testing.T) {
	assert.Zero(t, expiryRun(t, func(s Shell) ShellPlain { return ShellPlain(s) }), "plain deltas")
	assert.Zero(t, expiryRun(t, func(s Shell) Shell { return s }), "predicted deltas")
}
