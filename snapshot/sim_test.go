package snapshot_test

import (
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/snapshot"
)

// channel is an unreliable datagram link: it drops, duplicates and delays
// (hence reorders) what it carries, from a seeded generator.
type channel[M any] struct {
	rng      *rand.Rand
	loss     float64 // chance a datagram is lost
	dup      float64 // chance a datagram that is not lost arrives twice
	maxDelay int     // each copy arrives 0..maxDelay ticks late
	queue    []flight[M]
}

type flight[M any] struct {
	at  int
	msg M
}

func (c *channel[M]) send(now int, m M) {
	if c.rng.Float64() < c.loss {
		return
	}
	copies := 1
	if c.rng.Float64() < c.dup {
		copies = 2
	}
	for range copies {
		c.queue = append(c.queue, flight[M]{at: now + c.rng.Intn(c.maxDelay+1), msg: m})
	}
}

// receive returns what arrives at tick now, in a random order.
func (c *channel[M]) receive(now int) []M {
	var out []M
	keep := c.queue[:0]
	for _, f := range c.queue {
		if f.at <= now {
			out = append(out, f.msg)
		} else {
			keep = append(keep, f)
		}
	}
	clear(c.queue[len(keep):])
	c.queue = keep
	c.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

type simConfig struct {
	seed         int64
	ticks        int
	loss, dup    float64
	maxDelay     int
	senderHist   int
	receiverHist int
}

type simStats struct {
	full, delta             int
	fullBytes, deltaBytes   int
	maxBytes                int
	accepted, stale, noBase int
	fullAccepted            int
	fullEquivBytes          int // what every tick would cost in full
	distance                int // sum of tick-baseline over the deltas
}

// runSim plays a game over a lossy link in both directions and checks, at
// every step, that the receiver accepts only the sender's quantized states
// and that the sender picks its baseline exactly as the Quake 3 model says,
// against a model of the sender kept by the test.
func runSim(t *testing.T, cfg simConfig) simStats {
	t.Helper()
	rng := rand.New(rand.NewSource(cfg.seed))
	data := &channel[[]byte]{rng: rand.New(rand.NewSource(rng.Int63())), loss: cfg.loss, dup: cfg.dup, maxDelay: cfg.maxDelay}
	acks := &channel[snapshot.Ack]{rng: rand.New(rand.NewSource(rng.Int63())), loss: cfg.loss, dup: cfg.dup, maxDelay: cfg.maxDelay}
	g := newGame(rng.Int63(), 12, 40)

	s, err := snapshot.NewSender(worldCodec, snapshot.WithHistorySize(cfg.senderHist))
	require.NoError(t, err)
	r, err := snapshot.NewReceiver(worldCodec, snapshot.WithHistorySize(cfg.receiverHist))
	require.NoError(t, err)

	// The test's model of the sender: the ticks in its ring and the acks.
	var ring []uint32          // the last senderHist ticks sent
	acked := map[uint32]bool{} // every tick acknowledged to the sender
	var newestAck uint32       // the newest ack of a tick in the ring
	haveAck := false
	wants := map[uint32]*World{} // the quantized state of each recent tick
	var st simStats
	var out World
	buf := make([]byte, 0, 2048)

	for now := 1; now <= cfg.ticks; now++ {
		tick := uint32(now)
		g.step()
		wants[tick] = quantized(&g.w)
		delete(wants, tick-64)

		for _, ack := range acks.receive(now) {
			require.NoError(t, s.HandleAck(ack), "tick %d", ack.Tick) // honest acks all match
			if a := ack.Tick; slices.Contains(ring, a) {
				acked[a] = true
				if !haveAck || a > newestAck {
					newestAck, haveAck = a, true
				}
			}
		}

		// The model's baseline: the newest acknowledged tick still in the
		// ring, and none when no acknowledged tick is in the ring.
		wantDelta := haveAck && slices.Contains(ring, newestAck)
		anyAcked := slices.ContainsFunc(ring, func(x uint32) bool { return acked[x] })
		require.Equal(t, wantDelta, anyAcked, "tick %d", tick)
		bt, ok := s.Baseline()
		require.Equal(t, wantDelta, ok, "tick %d", tick)
		if wantDelta {
			require.Equal(t, newestAck, bt, "tick %d", tick)
		}

		pkt, err := s.Encode(buf[:0], tick, &g.w)
		require.NoError(t, err, "tick %d", tick)
		require.LessOrEqual(t, len(pkt), snapshot.DefaultBudget)
		h, err := snapshot.ParseHeader(pkt)
		require.NoError(t, err)
		require.Equal(t, tick, h.Tick)
		require.Equal(t, wantDelta, h.Delta, "tick %d", tick)
		if h.Delta {
			require.Equal(t, newestAck, h.Baseline)
			st.delta++
			st.deltaBytes += len(pkt)
			st.distance += int(h.Tick - h.Baseline)
		} else {
			st.full++
			st.fullBytes += len(pkt)
		}
		st.maxBytes = max(st.maxBytes, len(pkt))
		body, err := worldCodec.Marshal(&g.w)
		require.NoError(t, err)
		st.fullEquivBytes += len(body) + 11 // a full header, without trailer or hash
		ring = append(ring, tick)
		if len(ring) > cfg.senderHist {
			ring = ring[1:]
		}
		data.send(now, slices.Clone(pkt))

		for _, p := range data.receive(now) {
			before, _ := r.Newest()
			got, err := r.Decode(p, &out)
			switch {
			case err == nil:
				want, ok := wants[got]
				require.True(t, ok, "accepted tick %d, not a recent one", got)
				require.Equal(t, *want, out, "tick %d", got)
				wb, err := worldCodec.Marshal(want)
				require.NoError(t, err)
				ob, err := worldCodec.Marshal(&out)
				require.NoError(t, err)
				require.Equal(t, wb, ob)
				require.Greater(t, got, before)
				if h, _ := snapshot.ParseHeader(p); !h.Delta {
					st.fullAccepted++
				}
				st.accepted++
				ack, ok := r.Ack()
				require.True(t, ok)
				require.Equal(t, got, ack.Tick)
				acks.send(now, ack)
			case errors.Is(err, snapshot.ErrStaleTick):
				st.stale++
			case errors.Is(err, snapshot.ErrNoBaseline):
				st.noBase++
				after, _ := r.Newest()
				require.Equal(t, before, after)
			default:
				t.Fatalf("tick %d: unexpected error %v", now, err)
			}
		}
	}
	return st
}

func logStats(t *testing.T, cfg simConfig, st simStats) {
	t.Helper()
	n := st.full + st.delta
	t.Logf("%d ticks, loss %.0f%%, dup %.0f%%, delay 0..%d, rings %d/%d", cfg.ticks, cfg.loss*100, cfg.dup*100, cfg.maxDelay, cfg.senderHist, cfg.receiverHist)
	t.Logf("packets: %d full (mean %.1f B), %d delta (mean %.1f B), mean %.1f B, max %d B",
		st.full, float64(st.fullBytes)/float64(max(1, st.full)), st.delta, float64(st.deltaBytes)/float64(max(1, st.delta)),
		float64(st.fullBytes+st.deltaBytes)/float64(n), st.maxBytes)
	t.Logf("every tick in full would average %.1f B; deltas reach back %.1f ticks on average",
		float64(st.fullEquivBytes)/float64(n), float64(st.distance)/float64(max(1, st.delta)))
	t.Logf("receiver: %d accepted (%d full), %d stale or duplicate, %d without baseline", st.accepted, st.fullAccepted, st.stale, st.noBase)
}

func TestLossyChannel(t *testing.T) {
	cfg := simConfig{seed: 1, ticks: 10000, loss: 0.2, dup: 0.1, maxDelay: 4, senderHist: 32, receiverHist: 32}
	st := runSim(t, cfg)
	logStats(t, cfg, st)
	require.Equal(t, cfg.ticks, st.full+st.delta)
	// with rings of the same size, a baseline the sender picks is always
	// still held by the receiver
	require.Zero(t, st.noBase)
	require.Greater(t, st.accepted, cfg.ticks/2)
	require.Greater(t, st.stale, 0)
	require.Greater(t, st.delta, 9*cfg.ticks/10)
	require.Less(t, float64(st.fullBytes+st.deltaBytes), 0.5*float64(st.fullEquivBytes))
}

// TestLossyChannelVariants runs harsher links and a receiver whose ring is
// smaller than its sender's, which then meets deltas it cannot decode and
// recovers through the full snapshot the sender falls back to.
func TestLossyChannelVariants(t *testing.T) {
	for _, cfg := range []simConfig{
		{seed: 2, ticks: 2000, loss: 0.5, dup: 0.2, maxDelay: 8, senderHist: 32, receiverHist: 32},
		{seed: 3, ticks: 2000, loss: 0.2, dup: 0.1, maxDelay: 4, senderHist: 8, receiverHist: 8},
		{seed: 4, ticks: 2000, loss: 0.3, dup: 0.1, maxDelay: 6, senderHist: 16, receiverHist: 2},
		{seed: 5, ticks: 2000, loss: 0.9, dup: 0.5, maxDelay: 10, senderHist: 4, receiverHist: 4},
	} {
		st := runSim(t, cfg)
		logStats(t, cfg, st)
		require.Greater(t, st.accepted, 0)
		if cfg.receiverHist >= cfg.senderHist {
			require.Zero(t, st.noBase)
		}
	}
}
