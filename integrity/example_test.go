package integrity_test

import (
	"fmt"

	"github.com/bitwire/bitwire/integrity"
)

// A Guard frames any packet, not only a snapshot Sender's: seal what you wrote,
// open what you read, and echo the token in your acknowledgements.
func ExampleGuard() {
	g, err := integrity.New(integrity.ModeChecksum, nil)
	if err != nil {
		panic(err)
	}
	packet := append([]byte{0xAA}, "hello"...) // a byte of your own framing, then the message
	packet, token := g.Seal(packet, 1)         // the CRC covers packet[1:]
	fmt.Println(len(packet), "bytes")

	body, got, err := g.Open(packet[1:])
	fmt.Printf("%s %v %v\n", body, got == token, err)

	packet[3] ^= 0x20 // corrupted on the way
	_, _, err = g.Open(packet[1:])
	fmt.Println(err)
	// Output:
	// 10 bytes
	// hello true <nil>
	// integrity: check failed: crc32c trailer does not match
}

// A TickWindow accepts each tick once, in order, at most MaxAhead ahead,
// and re-anchors after a run of refused packets.
func ExampleTickWindow() {
	w := integrity.NewTickWindow(300, 3, true)
	for _, tick := range []uint32{100, 101, 101, 99, 5000, 5001, 5002, 5003} {
		if err := w.Check(tick); err != nil {
			fmt.Println(tick, err)
			continue
		}
		w.Accept(tick)
		fmt.Println(tick, "accepted")
	}
	// Output:
	// 100 accepted
	// 101 accepted
	// 101 integrity: stale or duplicate tick: tick 101, newest accepted 101
	// 99 integrity: stale or duplicate tick: tick 99, newest accepted 101
	// 5000 integrity: tick too far ahead: tick 5000 is 4899 ticks past the newest accepted 101 (at most 300)
	// 5001 integrity: tick too far ahead: tick 5001 is 4900 ticks past the newest accepted 101 (at most 300)
	// 5002 accepted
	// 5003 accepted
}
