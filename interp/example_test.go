package interp_test

import (
	"fmt"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/interp"
	"github.com/bitwire/bitwire/replicate"
)

type Ball struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
}

// A client draws a ball between the two states it holds around the render
// time, a few ticks behind the server's clock.
func Example() {
	codec := bitwire.MustFor[Ball]()
	srv, _ := replicate.NewServer(codec)
	peer, _ := srv.NewPeer(replicate.PeerConfig[Ball]{})
	client, _ := replicate.NewClient(codec)
	clock := interp.NewClock(30) // the server's ticks a second
	ip, _ := interp.New(codec, interp.Config[Ball]{Threshold: 10})

	start := time.Unix(0, 0)
	for tick := uint32(1); tick <= 30; tick++ {
		srv.Advance(tick)
		srv.Set(1, &Ball{X: float32(tick)}) // one unit a tick
		pkt, _, _ := peer.Encode(nil)
		arrival := start.Add(time.Duration(tick) * time.Second / 30)
		if info, err := client.Decode(pkt); err == nil {
			clock.Observe(info.Tick, arrival)
			peer.Ack(client.Ack())
		}
	}
	now := start.Add(30*time.Second/30 + 10*time.Millisecond)
	render := clock.RenderTick(now)
	var b Ball
	s, _ := ip.Sample(client, 1, render, &b)
	fmt.Printf("delay %.1f ticks: between ticks %d and %d, x=%.1f\n", clock.Delay(), s.From, s.To, b.X)
	// Output:
	// delay 2.0 ticks: between ticks 28 and 29, x=28.3
}
