package gateway

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/bitwire/bitwire/bits"
)

// TestHeader: the header's fields round trip, and each kind of bad header
// is ErrBadMessage.
func TestHeader(t *testing.T) {
	h := header{kind: kindFull, flags: flagLast, part: 513, fp: 0xDEADBEEF, tick: 7, prev: 6, cell: 65535, count: 3}
	msg := appendHeader(nil, h)
	if len(msg) != headerSize {
		t.Fatalf("header of %d bytes, want %d", len(msg), headerSize)
	}
	msg = sealMessage(append(msg, 0, 0, 0, 0)) // room for 3 events of at least 9 bits
	got, body, err := parseHeader(msg)
	if err != nil || got != h || len(body) != 4 {
		t.Fatalf("%+v %d %v, want %+v", got, len(body), err, h)
	}
	bad := map[string]func([]byte){
		"magic":   func(m []byte) { m[0] = 'X' },
		"version": func(m []byte) { m[2] = BusVersion + 1 },
		"kind":    func(m []byte) { m[3] = 2 },
		"flags":   func(m []byte) { m[6] = 2 },
		"zero":    func(m []byte) { m[7] = 1 },
		"count":   func(m []byte) { m[24] = 4 }, // 4 events cannot fit 32 bits
	}
	for name, spoil := range bad {
		m := append([]byte(nil), msg...)
		spoil(m)
		if _, _, err := parseHeader(m); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s, CRC not redone: %v", name, err)
		}
		if _, _, err := parseHeader(sealMessage(m)); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Every single bit flip is refused (the CRC).
	for i := range len(msg) * 8 {
		m := append([]byte(nil), msg...)
		m[i/8] ^= 1 << (i % 8)
		if _, _, err := parseHeader(m); !errors.Is(err, ErrBadMessage) {
			t.Fatalf("bit %d flipped: %v", i, err)
		}
	}
	if _, _, err := parseHeader(msg[:headerSize-1]); !errors.Is(err, ErrBadMessage) {
		t.Errorf("short: %v", err)
	}
}

// TestIDStep: ids round trip through their zigzag steps, both ways and at
// the ends of the range; a step out of the range is ErrBadMessage.
func TestIDStep(t *testing.T) {
	ids := []uint32{0, 1, 2, 1, 0, 1<<32 - 1, 0, 1 << 31, 12345, 12346, 12344}
	var w bits.Writer
	var s idStep
	for _, id := range ids {
		s.write(&w, id)
	}
	r := bits.NewReader(w.Bytes())
	var q idStep
	for i, want := range ids {
		got, err := q.read(r)
		if err != nil || got != want {
			t.Fatalf("id %d: %d %v, want %d", i, got, err, want)
		}
	}
	// A step of -1 from 0.
	var neg bits.Writer
	neg.WriteBits(0, idWidth) // HighBit 0
	neg.WriteBits(1, 1)       // zigzag 1: -1
	if _, err := (&idStep{}).read(bits.NewReader(neg.Bytes())); !errors.Is(err, ErrBadMessage) {
		t.Errorf("id -1: %v", err)
	}
}

// TestMalformedMessages: random bytes, truncations and bit flips of
// genuine messages never panic a gateway; each is counted and resynced,
// and the genuine stream serves again after.
func TestMalformedMessages(t *testing.T) {
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	nc := connect(t, ns)
	pub, err := NewPublisher(nc, bodyCodec, Config[Body]{Subject: "bad"})
	if err != nil {
		t.Fatal(err)
	}
	var out []captured
	pub.out = func(subject string, data []byte) error {
		out = append(out, captured{subject: subject, data: append([]byte(nil), data...)})
		return nil
	}
	g, err := NewGateway(nc, bodyCodec, Config[Body]{Subject: "bad"})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	waitRequests(t, pub, 1)
	w := newWorld(4, 200)
	rng := rand.New(rand.NewSource(5))
	feed := func(m captured) (uint32, bool) {
		tick, ok, err := g.handle(m.subject == g.inbox, m.data)
		if err != nil {
			t.Fatal(err)
		}
		return tick, ok
	}
	for tick := uint32(1); tick <= 300; tick++ {
		play(t, pub, tick, w.step(tick == 1))
		if tick%10 == 0 {
			pub.syncs <- &nats.Msg{Reply: g.inbox} // the gateway's retry
		}
		pub.Publish()
		for _, m := range out {
			spoilt := append([]byte(nil), m.data...)
			switch rng.Intn(4) {
			case 0:
				spoilt = spoilt[:rng.Intn(len(spoilt))]
			case 1:
				i := rng.Intn(len(spoilt))
				spoilt[i] ^= 1 << rng.Intn(8)
			case 2:
				rng.Read(spoilt[min(len(spoilt), headerSize):])
			case 3:
				spoilt = make([]byte, rng.Intn(64))
				rng.Read(spoilt)
			}
			if rng.Intn(3) == 0 {
				if _, ok := feed(captured{subject: m.subject, data: spoilt}); ok {
					t.Fatalf("tick %d: a spoilt message completed a tick", tick)
				}
			}
			if got, ok := feed(m); ok && got == tick {
				holds(t, g, w)
			}
		}
		out = out[:0]
	}
	// A run of malformed messages is not a run of requests (resync).
	if st := g.Stats(); st.Bad == 0 || st.Syncs < 2 || st.Requests > st.Syncs+5 {
		t.Errorf("%+v", st)
	}
	// Now the genuine stream alone: the gateway serves again, and holds
	// the world.
	pub.syncs <- &nats.Msg{Reply: g.inbox}
	served := 0
	for tick := uint32(301); tick <= 320; tick++ {
		play(t, pub, tick, w.step(false))
		pub.Publish()
		for _, m := range out {
			if got, ok := feed(m); ok && got == tick {
				served++
			}
		}
		out = out[:0]
	}
	if served < 19 {
		t.Fatalf("served %d of the last 20 ticks: %+v", served, g.Stats())
	}
	holds(t, g, w)
}

// holds fails unless g holds w's quantized states exactly.
func holds(t *testing.T, g *Gateway[Body], w *world) {
	t.Helper()
	n := 0
	for id, b := range w.states {
		got, ok := g.Server().Get(id)
		q := *b
		bodyCodec.Quantize(&q)
		if !ok || *got != q {
			t.Fatalf("id %d: %+v, want %+v", id, got, q)
		}
		n++
	}
	if g.Server().Len() != n {
		t.Fatalf("%d entities, want %d", g.Server().Len(), n)
	}
}
