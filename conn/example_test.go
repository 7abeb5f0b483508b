package conn_test

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/conn"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

type Avatar struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
}

type Steer struct {
	DX int8 `net:"range,min=-1,max=1"`
}

type Say struct {
	Text string `net:",maxlen=64"`
}

// Both ends of a connection: the client sends its inputs (with the last
// three in every packet) and chat; the server plays one input a tick,
// moves the avatar from it, and sends the state and its own messages.
func Example() {
	avatars, steers := bitwire.MustFor[Avatar](), bitwire.MustFor[Steer]()
	chat, _ := bitwire.NewUnion(Say{})
	const budget = 1200

	// The server's end.
	world, _ := replicate.NewServer(avatars)
	peer, _ := world.NewPeer(replicate.PeerConfig[Avatar]{Budget: conn.StateBudget(budget, conn.DefaultShare, snapshot.ModeChecksum)})
	queue, _ := conn.NewInputQueue(steers, 0) // a jitter buffer of 2 ticks
	serverChat, _ := conn.NewChannel(chat, conn.ChannelConfig{})
	server, _ := conn.NewServer(peer, queue, serverChat, budget, snapshot.ModeChecksum, nil)

	// The client's end.
	view, _ := replicate.NewClient(avatars)
	inputs, _ := conn.NewInputSender(steers, 3)
	clientChat, _ := conn.NewChannel(chat, conn.ChannelConfig{})
	client, _ := conn.NewClient(view, inputs, clientChat, snapshot.ModeChecksum, nil)

	x := float32(0)
	clientChat.Send(&Say{Text: "hi"})
	for tick := uint32(1); tick <= 10; tick++ {
		inputs.Push(tick, &Steer{DX: 1})
		up, _ := client.Append(nil)
		if tick != 4 { // one lost packet: its input comes in the next
			server.Receive(up)
		}
		world.Advance(tick)
		in, _, _ := queue.Next()
		x += float32(in.DX)
		world.Set(1, &Avatar{X: x})
		if tick == 5 {
			serverChat.Send(&Say{Text: "welcome"})
		}
		down, ok, _ := server.Append(nil)
		if ok {
			client.Receive(down)
		}
		for m, ok := serverChat.Receive(); ok; m, ok = serverChat.Receive() {
			fmt.Println("server got:", m.(*Say).Text)
		}
		for m, ok := clientChat.Receive(); ok; m, ok = clientChat.Receive() {
			fmt.Println("client got:", m.(*Say).Text)
		}
	}
	a, tick, _ := view.Get(1)
	st := queue.Stats()
	fmt.Printf("avatar at x=%.0f from tick %d; inputs played %d, recovered %d, repeated %d\n", a.X, tick, st.Consumed, st.Recovered, st.Repeated)
	// Output:
	// server got: hi
	// client got: welcome
	// avatar at x=8 from tick 10; inputs played 8, recovered 1, repeated 0
}
