package gateway_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gateway"
	"github.com/bitwire/bitwire/replicate"
)

// Box is a game entity.
type Box struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
	Z float32 `net:"q,min=-100,max=100,prec=0.01"`
}

func Example() {
	// A NATS server in the process (in production: the cluster's URL).
	ns, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	go ns.Start()
	defer ns.Shutdown()
	ns.ReadyForConnections(5 * time.Second)
	codec := bitwire.MustFor[Box]()
	bus := gateway.Config[Box]{Subject: "arena"}

	// The world process publishes.
	worldConn, _ := nats.Connect(ns.ClientURL())
	defer worldConn.Close()
	world, _ := gateway.NewPublisher(worldConn, codec, bus)

	// A gateway process rebuilds the world and serves its own clients.
	edgeConn, _ := nats.Connect(ns.ClientURL())
	defer edgeConn.Close()
	edge, _ := gateway.NewGateway(edgeConn, codec, bus)
	peer, _ := edge.Server().NewPeer(replicate.PeerConfig[Box]{Budget: 1200})
	client, _ := replicate.NewClient(codec) // on the player's machine
	edgeConn.Flush()                        // its request for the full state is in
	worldConn.Flush()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for tick := uint32(1); tick <= 3; tick++ {
		world.Advance(tick)
		for id := uint32(1); id <= 100; id++ {
			world.Set(id, &Box{X: float32(id) - 50 + float32(tick), Z: 10})
		}
		if tick == 3 {
			world.Remove(7)
		}
		world.Publish()

		// The gateway's loop: the world at a new tick, then its Peers.
		t, err := edge.Next(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		pkt, ok, _ := peer.Encode(nil)
		if ok {
			info, _ := client.Decode(pkt) // over the network, in truth
			peer.Ack(client.Ack())
			fmt.Printf("tick %d: %d bytes to the client, %d entities, %d removed\n", t, len(pkt), len(info.Updated), len(info.Removed))
		}
	}
	b, tick, _ := client.Get(50)
	fmt.Printf("box 50 at x=%.2f, from tick %d\n", b.X, tick)
	fmt.Printf("bus: %d bytes in %d messages\n", world.Stats().Bytes, world.Stats().Messages)
	// Output:
	// tick 1: 431 bytes to the client, 100 entities, 0 removed
	// tick 2: 242 bytes to the client, 100 entities, 0 removed
	// tick 3: 243 bytes to the client, 99 entities, 1 removed
	// box 50 at x=3.00, from tick 3
	// bus: 1756 bytes in 4 messages
}
