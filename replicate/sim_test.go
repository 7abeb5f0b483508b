package replicate_test

import (
	"testing"

	"github.com/bitwire/bitwire/replicate"
)

// Exactness over a bad network: 20% loss, duplication and reordering, in
// both directions, for 10,000 ticks of a world that moves, spawns and
// despawns, to clients of different budgets. Every state a client accepts,
// and every state it holds at the end, must be the server's quantized state
// of that entity at the tick it is from; removed entities must leave.
func TestExactUnderLoss(t *testing.T) {
	ticks := 10000
	if testing.Short() {
		ticks = 2000
	}
	s := newSim(t, 1, 300)
	s.move, s.spawn, s.despawn = 0.08, 0.004, 0.004
	near := func(id uint32, e *Body) float32 { return 1 + 100/(1+e.X*e.X+e.Z*e.Z) }
	clients := []*simClient{
		s.addClient(replicate.PeerConfig[Body]{Budget: 400, Priority: near}, 0.2, 0.05, 3),
		s.addClient(replicate.PeerConfig[Body]{Budget: 1200, Bandwidth: 20000}, 0.2, 0.05, 3),
		s.addClient(replicate.PeerConfig[Body]{Budget: 200, Relevant: func(id uint32, e *Body) bool { return e.X < 0 }}, 0.2, 0.05, 3),
	}
	maxLinger := 0
	for i := 0; i < ticks; i++ {
		s.step()
		if i%97 == 0 {
			for _, c := range clients {
				maxLinger = max(maxLinger, s.checkView(c, 200))
			}
		}
	}
	for k, c := range clients {
		st := c.peer.Stats()
		t.Logf("client %d: %d packets, %d accepted, %d stale, %d without baseline; %d full, %d delta, %d removals, holds %d of %d; max packet %d",
			k, st.Packets, c.accepted, c.stale, c.noBase, st.Full, st.Delta, st.Removals, c.cl.Len(), s.srv.Len(), c.maxBytes)
		if c.accepted < st.Packets/2 {
			t.Errorf("client %d accepted only %d of %d packets", k, c.accepted, st.Packets)
		}
		if st.Delta < st.Full {
			t.Errorf("client %d: %d deltas, %d full: deltas should dominate", k, st.Delta, st.Full)
		}
	}
	if maxLinger > 0 {
		t.Errorf("a client held %d entities removed more than 200 ticks before", maxLinger)
	}
	// Quiet the network and let everything settle: every client then
	// holds exactly the server's world (the relevant part of it).
	s.move, s.spawn, s.despawn = 0, 0, 0
	for _, c := range clients {
		c.down.loss, c.up.loss, c.down.dup, c.up.dup = 0, 0, 0, 0
	}
	for range 400 {
		s.step()
	}
	for k, c := range clients {
		s.checkView(c, 0)
		want := 0
		s.srv.Range(func(id uint32, e *Body) bool {
			if k != 2 || e.X < 0 {
				want++
				if got, _, ok := c.cl.Get(id); !ok || *got != *e {
					t.Errorf("client %d: id %d not current after the quiet period", k, id)
				}
			}
			return true
		})
		if c.cl.Len() != want {
			t.Errorf("client %d holds %d entities, want %d", k, c.cl.Len(), want)
		}
		if c.peer.Pending() != 0 {
			t.Errorf("client %d: %d removals still pending", k, c.peer.Pending())
		}
	}
}
