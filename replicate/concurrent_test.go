//go:build go1.25

package replicate_test

import (
	"sync"
	"testing"

	"github.com/bitwire/bitwire/replicate"
)

// Peers of one Server encode concurrently once the tick's entities are set
// (run under -race in CI); each client still gets exactly the server's
// states.
func TestPeersEncodeConcurrently(t *testing.T) {
	s := newSim(t, 11, 500)
	s.move, s.spawn, s.despawn = 0.1, 0.01, 0.01
	const n = 8
	for range n {
		s.addClient(replicate.PeerConfig[Body]{Budget: 600, Bandwidth: 40000}, 0, 0, 1)
	}
	pkts := make([][][]byte, n)
	for range 60 {
		s.advance()
		for _, id := range s.ids {
			if s.rng.Float64() < s.move {
				nudge(s.rng, s.bodies[id])
				s.set(id)
			}
		}
		var wg sync.WaitGroup
		for k, c := range s.clients {
			wg.Go(func() {
				pkts[k] = pkts[k][:0]
				for {
					pkt, ok, err := c.peer.Encode(nil)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						return
					}
					pkts[k] = append(pkts[k], pkt)
				}
			})
		}
		wg.Wait()
		if _, err := s.srv.Set(s.ids[0], s.bodies[s.ids[0]]); err == nil {
			t.Fatal("Set after the Peers encoded the tick was accepted")
		}
		for k, c := range s.clients {
			for _, pkt := range pkts[k] {
				c.receive(s, pkt)
			}
			c.peer.Ack(c.cl.Ack())
		}
	}
	for _, c := range s.clients {
		s.checkView(c, 0)
		if c.accepted == 0 {
			t.Fatal("nothing accepted")
		}
	}
}
