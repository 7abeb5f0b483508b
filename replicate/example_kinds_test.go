package replicate_test

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Pilot and Rock are two kinds of entity of one world.
type Pilot struct {
	X, Z   float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1"`
	Health uint8   `net:"range,min=0,max=100"`
}

type Rock struct {
	X, Z float32 `net:"q,min=-100,max=100,prec=0.1"`
}

// Thing is the entity type of the world: one pointer per kind, exactly one
// of them set. The other kinds cost a bit each: a nil pointer's presence bit
// in a full state, and in a delta the changed bit of a pointer that stays
// nil. The kinds share one Server, one space of ids, one priority order and
// one budget.
type Thing struct {
	Pilot *Pilot
	Rock  *Rock
}

// Several entity kinds in one world: a struct of pointers, one Server.
func Example_severalKinds() {
	codec := bitwire.MustFor[Thing]()
	srv, _ := replicate.NewServer(codec)
	peer, _ := srv.NewPeer(replicate.PeerConfig[Thing]{
		Priority: func(id uint32, t *Thing) float32 {
			if t.Pilot != nil {
				return 2 // pilots first
			}
			return 1
		},
		Budget: 1200,
	})
	client, _ := replicate.NewClient(codec)

	for tick := uint32(1); tick <= 2; tick++ {
		srv.Advance(tick)
		srv.Set(1, &Thing{Pilot: &Pilot{X: float32(tick), Z: 5, Health: 100}})
		srv.Set(2, &Thing{Pilot: &Pilot{X: -3, Z: float32(tick), Health: 90}})
		for id := uint32(100); id < 110; id++ { // ten rocks; they never move
			srv.Set(id, &Thing{Rock: &Rock{X: float32(id) - 100, Z: 20}})
		}
		pkt, ok, err := peer.Encode(nil)
		if err != nil || !ok {
			panic(err)
		}
		info, err := client.Decode(pkt)
		if err != nil {
			panic(err)
		}
		fmt.Printf("tick %d: %d bytes, %d entities\n", tick, len(pkt), len(info.Updated))
		peer.Ack(client.Ack())
	}
	for _, id := range []uint32{1, 2, 104} {
		t, tick, _ := client.Get(id)
		switch { // the set pointer tells the kind
		case t.Pilot != nil:
			fmt.Printf("%d: pilot at (%.2f, %.2f), health %d, from tick %d\n", id, t.Pilot.X, t.Pilot.Z, t.Pilot.Health, tick)
		case t.Rock != nil:
			fmt.Printf("%d: rock at (%.1f, %.1f), from tick %d\n", id, t.Rock.X, t.Rock.Z, tick)
		}
	}
	// Output:
	// tick 1: 64 bytes, 12 entities
	// tick 2: 21 bytes, 2 entities
	// 1: pilot at (2.00, 5.00), health 100, from tick 2
	// 2: pilot at (-3.00, 2.00), health 90, from tick 2
	// 104: rock at (4.0, 20.0), from tick 1
}
