package snapshot_test

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/snapshot"
)

type Avatar struct {
	ID   uint16  `net:"id"`
	X, Y float32 `net:"q,min=-100,max=100,prec=0.01"`
}

type Room struct {
	Avatars []Avatar `net:"maxlen=16"`
}

// A server sends one client a snapshot per tick; the client acknowledges
// each one it decodes. The packet of tick 3 is lost, so tick 4 is coded
// against tick 2, the newest the client acknowledged.
func Example() {
	codec := bitwire.MustFor[Room]()
	server, err := snapshot.NewSender(codec) // one per client
	if err != nil {
		panic(err)
	}
	client, err := snapshot.NewReceiver(codec)
	if err != nil {
		panic(err)
	}

	room := Room{Avatars: []Avatar{{ID: 1, X: 10, Y: 5}, {ID: 2, X: -3, Y: 0}}}
	var view Room                // the client's copy of the room
	buf := make([]byte, 0, 1500) // reused for every packet
	for tick := uint32(1); tick <= 5; tick++ {
		room.Avatars[0].X += 0.25 // avatar 1 walks

		packet, err := server.Encode(buf[:0], tick, &room)
		if err != nil {
			panic(err)
		}
		h, _ := snapshot.ParseHeader(packet)
		kind := "full"
		if h.Delta {
			kind = fmt.Sprintf("delta against %d", h.Baseline)
		}
		if tick == 3 {
			fmt.Printf("tick %d: %2d bytes, %s: lost\n", tick, len(packet), kind)
			continue
		}

		got, err := client.Decode(packet, &view)
		if err != nil {
			panic(err)
		}
		server.Ack(got) // in a game, inside the client's next input packet
		fmt.Printf("tick %d: %2d bytes, %s: avatar 1 at x=%.2f\n", got, len(packet), kind, view.Avatars[0].X)
	}
	// Output:
	// tick 1: 20 bytes, full: avatar 1 at x=10.25
	// tick 2: 16 bytes, delta against 1: avatar 1 at x=10.50
	// tick 3: 16 bytes, delta against 2: lost
	// tick 4: 16 bytes, delta against 2: avatar 1 at x=11.00
	// tick 5: 16 bytes, delta against 4: avatar 1 at x=11.25
}
