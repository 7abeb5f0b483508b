package snapshot_test

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/snapshot"
)

type Terrain struct {
	Heights []uint16 `net:"maxlen=4096"`
}

// A state larger than a datagram: its first snapshot goes as a block of
// fragments, each within the budget, which the Receiver reassembles; once
// the client acknowledges the block, the next tick's small change is one
// delta packet.
func ExampleSender_EncodeFragments() {
	codec := bitwire.MustFor[Terrain]()
	server, _ := snapshot.NewSender(codec) // 1200-byte budget
	client, _ := snapshot.NewReceiver(codec)
	world := Terrain{Heights: make([]uint16, 3000)}
	for i := range world.Heights {
		world.Heights[i] = uint16(i * 7919)
	}
	for tick := uint32(1); tick <= 2; tick++ {
		pkts, err := server.EncodeFragments(tick, &world)
		if err != nil {
			panic(err)
		}
		fmt.Printf("tick %d: %d datagram(s)\n", tick, len(pkts))
		var got Terrain
		for _, p := range pkts {
			at, err := client.Decode(p, &got)
			switch {
			case errors.Is(err, snapshot.ErrIncomplete):
				continue // a fragment kept: the block is not whole yet
			case err != nil:
				panic(err)
			}
			fmt.Printf("  decoded tick %d, %d heights\n", at, len(got.Heights))
			ack, _ := client.Ack()
			_ = server.HandleAck(ack) // carried back by the client's packets
		}
		world.Heights[42]++
	}
	st := server.FragmentStats()
	fmt.Printf("%d block in %d fragments\n", st.Blocks, st.Fragments)
	// Output:
	// tick 1: 6 datagram(s)
	//   decoded tick 1, 3000 heights
	// tick 2: 1 datagram(s)
	//   decoded tick 2, 3000 heights
	// 1 block in 6 fragments
}
