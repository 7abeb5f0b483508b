package gateway

import (
	"encoding/binary"
	"testing"

	"github.com/nats-io/nats.go"
)

// FuzzMessage feeds arbitrary bus messages, as stream or as answers, to a
// gateway that holds a world, then a genuine tick: none may panic or
// return an error, and the genuine stream goes on. An input of a header's
// length or more is given the world's fingerprint and a correct CRC, so
// that the fuzzer explores the events rather than the CRC's refusals.
func FuzzMessage(f *testing.F) {
	ns := startNATS(f, -1)
	defer ns.Shutdown()
	nc := connect(f, ns)
	pub, err := NewPublisher(nc, bodyCodec, Config[Body]{Subject: "fuzz", Cells: 2, Cell: quadrant2, MaxMessage: 1024})
	if err != nil {
		f.Fatal(err)
	}
	var out []captured
	pub.out = func(subject string, data []byte) error {
		out = append(out, captured{subject: subject, data: append([]byte(nil), data...)})
		return nil
	}
	g, err := NewGateway(nc, bodyCodec, Config[Body]{Subject: "fuzz", Cells: 2})
	if err != nil {
		f.Fatal(err)
	}
	g.Close()
	waitRequests(f, pub, 1)
	w := newWorld(9, 100)
	tick := uint32(0)
	// step publishes a tick and feeds it to the gateway.
	step := func(t testing.TB) {
		tick++
		play(t, pub, tick, w.step(tick == 1))
		pub.Publish()
		for _, m := range out {
			if _, _, err := g.handle(m.subject == g.inbox, m.data); err != nil {
				t.Fatal(err)
			}
		}
		out = out[:0]
	}
	step(f)
	for range 3 {
		step(f)
		// Seeds: the genuine messages of a tick, as stream and as answers.
		play(f, pub, tick+1, w.step(false))
		pub.syncs <- &nats.Msg{Reply: g.inbox}
		pub.Publish()
		tick++
		for _, m := range out {
			f.Add(m.data, false)
			f.Add(m.data, true)
			g.handle(m.subject == g.inbox, m.data)
		}
		out = out[:0]
	}
	f.Fuzz(func(t *testing.T, data []byte, reply bool) {
		if len(data) >= headerSize {
			data = append([]byte(nil), data...)
			binary.LittleEndian.PutUint32(data[8:], g.fp)
			sealMessage(data)
		}
		if _, _, err := g.handle(reply, data); err != nil {
			t.Fatal(err)
		}
		step(t)
	})
}

// quadrant2 is two cells by the sign of X.
func quadrant2(_ uint32, b *Body) int {
	if b.X >= 0 {
		return 1
	}
	return 0
}
