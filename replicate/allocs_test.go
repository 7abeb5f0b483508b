package replicate_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/integrity"
	"github.com/bitwire/bitwire/replicate"
)

// TestTickAllocsSteadyState checks that a server tick (Advance, Sets,
// every Peer's Encode and Ack) allocates nothing once the rings are full:
// the Peers' packet records, the entities' versions and the buffers.
func TestTickAllocsSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rng := rand.New(rand.NewSource(3))
	srv, err := replicate.NewServer(bodyCodec)
	require.NoError(t, err)
	const entities = 400
	bodies := make([]Body, entities)
	type client struct {
		peer   *replicate.Peer[Body]
		guard  *integrity.Guard
		tokens [33]uint32
		newest uint32
		mask   uint32
		acks   []pendingAck
		buf    []byte
	}
	cfgs := []replicate.PeerConfig[Body]{
		{Priority: func(id uint32, e *Body) float32 { return 1 / (1 + e.X*e.X*(1.0/1024)) }},
		{Priority: func(id uint32, e *Body) float32 { return float32(id % 4) }, Budget: 300, Bandwidth: 20000, Integrity: integrity.ModeChecksum},
		{Relevant: func(id uint32, e *Body) bool { return e.Z < 100 }, PriorityEvery: 4, Refresh: 50},
	}
	var cs []*client
	for _, cfg := range cfgs {
		c := &client{acks: make([]pendingAck, 0, 64), buf: make([]byte, 0, 2048)}
		c.peer, err = srv.NewPeer(cfg)
		require.NoError(t, err)
		c.guard, err = integrity.New(cfg.Integrity, nil)
		require.NoError(t, err)
		cs = append(cs, c)
	}
	tick := uint32(0)
	step := func() {
		tick++
		require.NoError(t, srv.Advance(tick))
		moving := entities / 10
		if tick == 1 {
			moving = 0
			for i := range bodies {
				bodies[i] = randomBody(rng)
				_, err := srv.Set(uint32(i+1), &bodies[i])
				require.NoError(t, err)
			}
		}
		for range moving {
			i := rng.Intn(entities)
			nudge(rng, &bodies[i])
			_, err := srv.Set(uint32(i+1), &bodies[i])
			require.NoError(t, err)
		}
		for _, c := range cs {
			keep := c.acks[:0]
			for _, a := range c.acks {
				if a.at <= tick {
					require.NoError(t, c.peer.Ack(a.ack))
				} else {
					keep = append(keep, a)
				}
			}
			c.acks = keep
			for {
				pkt, ok, err := c.peer.Encode(c.buf[:0])
				require.NoError(t, err)
				if !ok {
					break
				}
				if rng.Intn(20) == 0 {
					continue // lost
				}
				h, err := replicate.ParseHeader(pkt)
				require.NoError(t, err)
				if d := h.Seq - c.newest; c.newest == 0 || d > 32 {
					c.mask = 0
				} else {
					c.mask = c.mask<<d | 1<<(d-1)
				}
				c.newest = h.Seq
				_, token, err := c.guard.Open(pkt)
				require.NoError(t, err)
				c.tokens[h.Seq%33] = token
				a := replicate.Ack{Seq: h.Seq, Mask: c.mask, Token: token}
				for i := uint32(0); i < 32; i++ {
					if c.mask&(1<<i) != 0 {
						a.MaskToken ^= c.tokens[(h.Seq-1-i)%33]
					}
				}
				c.acks = append(c.acks, pendingAck{at: tick + 1 + uint32(rng.Intn(4)), ack: a})
			}
		}
	}
	for range 800 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(100, step), "allocations per tick")
}
