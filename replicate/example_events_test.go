package replicate_test

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

type Unit struct {
	ID uint16 `net:"id"`
	Hp uint8  `net:"range,min=0,max=100"`
}

type Squad struct {
	X     float32 `net:"q,min=-100,max=100,prec=0.01"`
	Units []Unit  `net:",maxlen=8"`
}

// Events: what each applied packet removed, added and changed, with the
// paths of the changed fields (an entity of a nested entity set by id).
func ExampleClient_OnChange() {
	codec := bitwire.MustFor[Squad]()
	srv, _ := replicate.NewServer(codec)
	peer, _ := srv.NewPeer(replicate.PeerConfig[Squad]{})
	client, _ := replicate.NewClient(codec)

	client.OnRemove(func(id uint32) { fmt.Println("removed", id) })
	client.OnAdd(func(id uint32, s *Squad) { fmt.Println("added", id, "with", len(s.Units), "units") })
	detach := client.OnChange(func(id uint32, s *Squad, paths []string) { fmt.Println("changed", id, paths) })

	states := []map[uint32]Squad{
		{1: {X: 1, Units: []Unit{{1, 100}, {2, 100}}}, 2: {X: 5}},
		{1: {X: 1, Units: []Unit{{1, 70}, {3, 100}}}}, // unit 2 gone, 1 hit, 3 joined; squad 2 removed
		{1: {X: 2, Units: []Unit{{1, 70}, {3, 100}}}},
	}
	for i, world := range states {
		tick := uint32(i + 1)
		srv.Advance(tick)
		for id := uint32(1); id <= 2; id++ {
			if s, ok := world[id]; ok {
				srv.Set(id, &s)
			} else {
				srv.Remove(id)
			}
		}
		if i == 2 {
			detach()
		}
		pkt, _, _ := peer.Encode(nil)
		client.Decode(pkt)
		peer.Ack(client.Ack())
	}
	// Output:
	// added 1 with 2 units
	// added 2 with 0 units
	// removed 2
	// changed 1 [Units[id=2] Units[id=1].Hp Units[id=3]]
}
