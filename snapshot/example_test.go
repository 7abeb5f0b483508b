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
// each one it decodes with the Ack its Receiver returns. The packet of
// tick 3 is lost, so tick 4 is coded against tick 2, the newest the client
// acknowledged.
//
// The Sender belongs to the server's tick loop: acks read from the
// network (by another goroutine, in a real server) reach it through a
// channel, which the loop drains before it encodes. A spoofed ack is
// refused by HandleAck and changes nothing.
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
	acks := make(chan []byte, 64) // filled by the goroutine reading the socket

	room := Room{Avatars: []Avatar{{ID: 1, X: 10, Y: 5}, {ID: 2, X: -3, Y: 0}}}
	var view Room                // the client's copy of the room
	buf := make([]byte, 0, 1500) // reused for every packet
	for tick := uint32(1); tick <= 5; tick++ {
		// The server's loop: take the acks that arrived, then encode.
		for drained := false; !drained; {
			select {
			case b := <-acks:
				var a snapshot.Ack
				if err := a.UnmarshalBinary(b); err == nil {
					if err := server.HandleAck(a); err != nil {
						fmt.Println("refused:", err)
					}
				}
			default:
				drained = true
			}
		}
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
			// an attacker acknowledges the lost tick, guessing its token
			spoof, _ := snapshot.Ack{Tick: 3, Token: 0xDEADBEEF}.MarshalBinary()
			acks <- spoof
			continue
		}

		// The client.
		got, err := client.Decode(packet, &view)
		if ack, ok := client.Ack(); ok {
			b, _ := ack.MarshalBinary() // inside its next input packet, in a game
			acks <- b
		}
		if err != nil {
			fmt.Printf("tick %d: %v\n", tick, err)
			continue
		}
		fmt.Printf("tick %d: %2d bytes, %s: avatar 1 at x=%.2f\n", got, len(packet), kind, view.Avatars[0].X)
	}
	// Output:
	// tick 1: 20 bytes, full: avatar 1 at x=10.25
	// tick 2: 16 bytes, delta against 1: avatar 1 at x=10.50
	// tick 3: 16 bytes, delta against 2: lost
	// refused: integrity: ack does not match a packet sent: tick 3: wrong token
	// tick 4: 16 bytes, delta against 2: avatar 1 at x=11.00
	// tick 5: 16 bytes, delta against 4: avatar 1 at x=11.25
}

// With a per-connection secret, packets carry a MAC: a receiver refuses
// any packet that was not sealed with the same secret, and acks cannot be
// forged even by someone who reads the packets.
func ExampleWithMAC() {
	codec := bitwire.MustFor[Room]()
	secret := []byte("32 bytes from the key exchange..") // the application's, per connection
	server, _ := snapshot.NewSender(codec, snapshot.WithMAC(secret))
	client, _ := snapshot.NewReceiver(codec, snapshot.WithMAC(secret))
	room := Room{Avatars: []Avatar{{ID: 1, X: 10, Y: 5}}}

	packet, _ := server.Encode(nil, 1, &room)
	fmt.Printf("%d bytes, of which %d of MAC\n", len(packet), snapshot.MACSize)

	forged := append([]byte(nil), packet...)
	forged[12] ^= 0x01 // an attacker changes a bit of the state
	var view Room
	_, err := client.Decode(forged, &view)
	fmt.Println(err)
	tick, err := client.Decode(packet, &view)
	fmt.Println(tick, err, view.Avatars[0].X)
	// Output:
	// 26 bytes, of which 10 of MAC
	// integrity: check failed: hmac-sha256-80 trailer does not match
	// 1 <nil> 10
}
