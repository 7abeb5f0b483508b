package snapshot_test

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/snapshot"
)

// The state machine: a sender and a receiver over a link that an input
// drives through every fault at once (loss, reordering, duplication, bit
// flips, truncation, forged headers, forged packets, spoofed acks, resets
// of either side), then an honest phase. It checks, at every step, that
// no packet the integrity mode protects against is accepted and that every
// genuine packet accepted rebuilds the sender's state; and, in the honest
// phase, that the receiver is back in sync within the stated bound.

// smHashEvery is the state machine's state-hash period.
const smHashEvery = 4

// recoveryBound is the most packets of an honest, in-order stream whose
// acks arrive before the next packet that can be refused or rebuilt wrong
// after any fault: a run of DefaultRecoverAfter refused packets re-anchors
// the receiver (stale ones count only once they lag the bad newest tick by
// more than ReorderTicks, and the honest stream passes a bad tick at most
// ReorderTicks ahead by itself, so ReorderTicks more at worst); the packet that completes it may be a delta against a
// baseline that a packet the integrity mode let through spoiled, rebuilt
// wrong until the next state hash (smHashEvery packets at most), or
// against a baseline the receiver lost (reset, rewound, dropped after a
// mismatch); either way its ack asks for the full snapshot that comes
// next. docs/security.md states it in general.
const recoveryBound = snapshot.ReorderTicks + snapshot.DefaultRecoverAfter + smHashEvery

type packetKind uint8

const (
	genuine  packetKind = iota
	tampered            // bits flipped or cut in transit
	forged              // made by an attacker who knows the format, not the key
)

type inFlight struct {
	at   int
	data []byte
	kind packetKind
}

type smResult struct {
	accepted, refused, forgedIn, tamperedIn int
	cleanRefused                            int // refused or wrong in the honest phase, before sync
}

// input hands out the fuzzer's bytes; past the end, zeros (the end of the
// faulty phase).
type input struct {
	b []byte
	i int
}

func (in *input) more() bool { return in.i < len(in.b) }

func (in *input) byte() byte {
	if in.i >= len(in.b) {
		return 0
	}
	in.i++
	return in.b[in.i-1]
}

func runStateMachine(t testing.TB, data []byte) smResult {
	in := &input{b: data}
	var opts []snapshot.Option
	switch in.byte() % 3 {
	case 1:
		opts = append(opts, snapshot.WithChecksum())
	case 2:
		opts = append(opts, snapshot.WithMAC(testKey))
	}
	opts = append(opts, snapshot.WithHistorySize(8), snapshot.WithStateHash(smHashEvery))
	l := newLink(t, int64(in.byte()), opts...)
	forge, overhead := l.forger()
	rng := rand.New(rand.NewSource(int64(in.byte())))
	var res smResult
	var queue []inFlight
	var acks []struct {
		at int
		a  snapshot.Ack
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("mode %v, step %d: "+format, append([]any{l.mode, in.i}, args...)...)
	}

	deliver := func(p inFlight, now int) {
		tick, err := l.r.Decode(p.data, &l.out)
		if err == nil {
			res.accepted++
			switch p.kind {
			case genuine:
				// Once a packet got through that the mode cannot stop, a
				// genuine delta may be rebuilt from the baseline it
				// spoiled, until a state hash catches it: the honest phase
				// checks that bound.
				want, ok := l.truth[tick]
				if (!ok || !worldCodec.Equal(want, &l.out)) && res.forgedIn+res.tamperedIn == 0 {
					fail("genuine packet of tick %d accepted with a wrong state", tick)
				}
			case tampered:
				res.tamperedIn++
				if l.mode != snapshot.ModeNone {
					fail("a corrupted packet of tick %d accepted", tick)
				}
			case forged:
				res.forgedIn++
				if l.mode == snapshot.ModeMAC {
					fail("a forged packet of tick %d accepted", tick)
				}
			}
		} else {
			res.refused++
		}
		if a, ok := l.r.Ack(); ok {
			acks = append(acks, struct {
				at int
				a  snapshot.Ack
			}{now + int(in.byte()%3), a})
		}
	}

	now := 0
	for in.more() && now < 2000 {
		now++
		op := in.byte()
		pkt := l.next()
		copies := 1
		switch op % 16 {
		case 6:
			copies = 0 // lost
		case 7:
			copies = 2
		case 8: // flip 1 to 3 bits of a packet in flight
			if len(queue) > 0 {
				q := &queue[int(in.byte())%len(queue)]
				if len(q.data) == 0 {
					break
				}
				orig := q.data
				q.data = append([]byte(nil), q.data...)
				for range 1 + int(in.byte())%3 {
					bit := rng.Intn(len(q.data) * 8)
					q.data[bit/8] ^= 1 << (bit % 8)
				}
				if q.kind == genuine && !bytes.Equal(q.data, orig) { // two flips of one bit cancel
					q.kind = tampered
				}
			}
		case 9: // cut a packet in flight short
			if len(queue) > 0 {
				q := &queue[int(in.byte())%len(queue)]
				if len(q.data) == 0 {
					break
				}
				q.data = q.data[:int(in.byte())%len(q.data)]
				if q.kind == genuine {
					q.kind = tampered
				}
			}
		case 10: // the same packet, its tick moved (baseline along)
			d := uint32(in.byte())<<2 | uint32(in.byte())<<10
			bad := snapshot.Reheader(pkt, overhead, func(h *snapshot.Header) {
				if h.Delta && h.Baseline+d < h.Baseline {
					return
				}
				h.Tick += d
				if h.Delta {
					h.Baseline += d
				}
			}, forge)
			queue = append(queue, inFlight{at: now, data: bad, kind: forged})
		case 11: // a forged delta at a tick ahead, "nothing changed"
			if base := l.tick - 1 - uint32(in.byte()%4); l.truth[base] != nil {
				queue = append(queue, inFlight{at: now, data: l.forgedDelta(base, l.tick+uint32(in.byte()), forge), kind: forged})
			}
		case 12: // spoofed acks
			for range 1 + int(in.byte()%4) {
				a := snapshot.Ack{Tick: l.tick - uint32(in.byte()%8), Token: rng.Uint32(), MissingBaseline: in.byte()%2 == 0}
				_ = l.s.HandleAck(a)
			}
		case 13:
			l.s.Reset()
		case 14:
			l.r.Reset()
		case 15:
			acks = acks[:0] // the acks in flight are lost
		}
		for range copies {
			queue = append(queue, inFlight{at: now + int(in.byte()%4), data: pkt})
		}
		// deliver what is due, in a shuffled order
		rng.Shuffle(len(queue), func(i, j int) { queue[i], queue[j] = queue[j], queue[i] })
		keep := queue[:0]
		for _, p := range queue {
			if p.at <= now {
				deliver(p, now)
			} else {
				keep = append(keep, p)
			}
		}
		queue = keep
		keepAcks := acks[:0]
		for _, a := range acks {
			if a.at <= now {
				_ = l.s.HandleAck(a.a)
			} else {
				keepAcks = append(keepAcks, a)
			}
		}
		acks = keepAcks
	}

	// The honest phase: in order, nothing lost, acks back before the next
	// packet, nothing injected; what was in flight is gone.
	synced := false
	for i := 0; i < 3*recoveryBound+10; i++ {
		_, ok, err := l.deliver(l.next())
		switch {
		case err == nil && ok:
			synced = true
		case synced:
			fail("honest phase: packet %d refused or wrong after sync: %v", i, err)
		case err == nil && res.forgedIn+res.tamperedIn == 0:
			fail("honest phase: packet %d accepted with a wrong state", i)
		default:
			res.cleanRefused++
		}
	}
	if !synced || res.cleanRefused > recoveryBound {
		fail("honest phase: %d packets refused before sync, bound %d", res.cleanRefused, recoveryBound)
	}
	return res
}

// TestStateMachine runs the state machine over random inputs of every
// mode.
func TestStateMachine(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	n := 300
	if testing.Short() {
		n = 40
	}
	var worst, forgedIn, tamperedIn int
	for i := range n {
		data := make([]byte, 20+rng.Intn(600))
		rng.Read(data)
		data[0] = byte(i % 3)
		res := runStateMachine(t, data)
		worst = max(worst, res.cleanRefused)
		forgedIn += res.forgedIn
		tamperedIn += res.tamperedIn
	}
	t.Logf("%d runs: at most %d honest packets refused or wrong before sync (bound %d); %d forged and %d corrupted packets accepted, all without a MAC or without integrity",
		n, worst, recoveryBound, forgedIn, tamperedIn)
}

func FuzzStateMachine(f *testing.F) {
	rng := rand.New(rand.NewSource(17))
	for i := range 6 {
		data := make([]byte, 40+rng.Intn(200))
		rng.Read(data)
		data[0] = byte(i % 3)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runStateMachine(t, data)
	})
}
