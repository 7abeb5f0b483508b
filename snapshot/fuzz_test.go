package snapshot_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bitwire/bitwire/snapshot"
)

// fuzzFixture holds packets of one stream: the receiver of every fuzz input
// first takes full (tick 1) and delta (tick 2, against 1), so that deltas
// against 1 and 2 find their baseline.
type fuzzFixture struct {
	full, delta []byte
	seeds       [][]byte
	prefill     *World
}

func newFuzzFixture(tb testing.TB) *fuzzFixture {
	s, err := snapshot.NewSender(worldCodec)
	if err != nil {
		tb.Fatal(err)
	}
	g := newGame(40, 6, 12)
	f := &fuzzFixture{prefill: quantized(&newGame(41, 2, 2).w)}
	enc := func(tick uint32) []byte {
		g.step()
		pkt, err := s.Encode(nil, tick, &g.w)
		if err != nil {
			tb.Fatal(err)
		}
		return pkt
	}
	f.full = enc(1)
	s.Ack(1)
	f.delta = enc(2)
	f.seeds = append(f.seeds, enc(3)) // against 1: 2 was not acked yet
	s.Ack(2)
	g.w.Flag = &Vec3{X: 1}
	for range 3 {
		g.spawn()
	}
	f.seeds = append(f.seeds, enc(4)) // against 2, with new players
	s.Reset()
	f.seeds = append(f.seeds, enc(9)) // full
	return f
}

func FuzzReceiverDecode(f *testing.F) {
	fx := newFuzzFixture(f)
	for _, s := range fx.seeds {
		f.Add(s)
		f.Add(s[:len(s)/2])
		f.Add(append(append([]byte(nil), s...), 0))
		flipped := append([]byte(nil), s...)
		flipped[len(flipped)*2/3] ^= 0x10
		f.Add(flipped)
	}
	f.Add(fx.full)
	f.Add(fx.delta)
	f.Add([]byte{})
	f.Add([]byte{0x7E, 0xB1})
	f.Fuzz(func(t *testing.T, packet []byte) {
		r, err := snapshot.NewReceiver(worldCodec)
		if err != nil {
			t.Fatal(err)
		}
		var out World
		if _, err := r.Decode(fx.full, &out); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Decode(fx.delta, &out); err != nil {
			t.Fatal(err)
		}
		worldCodec.Copy(&out, fx.prefill)
		before, err := worldCodec.Marshal(&out)
		if err != nil {
			t.Fatal(err)
		}

		tick, err := r.Decode(packet, &out)
		newest, _ := r.Newest()
		after, merr := worldCodec.Marshal(&out)
		if err != nil {
			if tick != 0 || newest != 2 {
				t.Fatalf("failed decode moved the receiver: tick %d, newest %d", tick, newest)
			}
			if merr != nil || !bytes.Equal(before, after) {
				t.Fatalf("failed decode (%v) touched out", err)
			}
			return
		}
		// accepted: a newer tick, a value that encodes to what was decoded,
		// and the same packet again is a duplicate
		if tick <= 2 || newest != tick {
			t.Fatalf("accepted tick %d, newest %d", tick, newest)
		}
		if merr != nil {
			t.Fatalf("decoded a value that does not encode: %v", merr)
		}
		var q World
		worldCodec.Copy(&q, &out)
		if err := worldCodec.Quantize(&q); err != nil || !worldCodec.Equal(&q, &out) {
			t.Fatalf("decoded a value that is not quantized: %v", err)
		}
		var again World
		if _, err := r.Decode(packet, &again); !errors.Is(err, snapshot.ErrStaleTick) {
			t.Fatalf("a duplicate of tick %d: %v", tick, err)
		}
	})
}
