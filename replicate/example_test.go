package replicate_test

import (
	"fmt"
	"sync"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Box is a game entity; its id travels in the packet, not in the struct.
type Box struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
	Z float32 `net:"q,min=-100,max=100,prec=0.01"`
}

func Example() {
	codec := bitwire.MustFor[Box]()
	srv, _ := replicate.NewServer(codec)

	// One Peer per client: its priorities (nearest first, from where the
	// client's player stands) and its budget.
	px, pz := float32(0), float32(0)
	peer, _ := srv.NewPeer(replicate.PeerConfig[Box]{
		Priority: func(id uint32, b *Box) float32 {
			dx, dz := b.X-px, b.Z-pz
			return 1 / (1 + dx*dx + dz*dz)
		},
		Budget:    1200,  // bytes per packet
		Bandwidth: 16000, // bytes per second: 128 kbit/s
	})
	client, _ := replicate.NewClient(codec)

	for tick := uint32(1); tick <= 3; tick++ {
		srv.Advance(tick)
		for id := uint32(1); id <= 100; id++ { // a world of 100 boxes
			srv.Set(id, &Box{X: float32(id) - 50 + float32(tick), Z: 10})
		}
		if tick == 3 {
			srv.Remove(7)
		}
		for { // the tick's packets, as many as the budget allows
			pkt, ok, err := peer.Encode(nil)
			if err != nil || !ok {
				break
			}
			info, err := client.Decode(pkt) // on the client
			if err != nil {
				continue // a bad or late packet: not acknowledged
			}
			fmt.Printf("tick %d: packet %d, %d bytes, %d entities, %d removed\n", tick, info.Seq, len(pkt), len(info.Updated), len(info.Removed))
			peer.Ack(client.Ack()) // the ack travels back in the client's own datagrams
		}
	}
	b, tick, _ := client.Get(50)
	fmt.Printf("box 50 at x=%.2f, from tick %d\n", b.X, tick)
	_, _, held := client.Get(7)
	fmt.Println("box 7 held:", held)
	// Output:
	// tick 1: packet 1, 431 bytes, 100 entities, 0 removed
	// tick 2: packet 2, 242 bytes, 100 entities, 0 removed
	// tick 3: packet 3, 243 bytes, 99 entities, 1 removed
	// box 50 at x=3.00, from tick 3
	// box 7 held: false
}

// A server's tick over a pool of workers: every Peer's packets, encoded
// on up to two goroutines, each handed to send as soon as it is made.
func ExampleServer_EncodeAll() {
	codec := bitwire.MustFor[Box]()
	srv, _ := replicate.NewServer(codec)
	defer srv.Close() // stops the workers
	peers := map[*replicate.Peer[Box]]string{}
	for _, name := range []string{"ann", "bob", "cyd"} {
		p, _ := srv.NewPeer(replicate.PeerConfig[Box]{})
		peers[p] = name
	}
	srv.Advance(1)
	for id := uint32(1); id <= 50; id++ {
		srv.Set(id, &Box{X: float32(id), Z: -float32(id)})
	}
	var mu sync.Mutex
	sizes := map[string]int{}
	err := srv.EncodeAll(2, func(p *replicate.Peer[Box], pkt []byte) {
		// Called concurrently for different Peers: a real server writes
		// pkt to the Peer's socket here (pkt is reused after send returns).
		mu.Lock()
		sizes[peers[p]] += len(pkt)
		mu.Unlock()
	})
	fmt.Println(err, sizes["ann"], sizes["bob"], sizes["cyd"])
	// Output:
	// <nil> 224 224 224
}
