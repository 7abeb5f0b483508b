package replicate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
)

// scanAllSlots is the scan's pass as it was before the Peer kept the events
// that name the slots to visit: the same rules, over every slot every tick.
// TestScanMatchesFullPass runs Peers with it beside Peers without.
func scanAllSlots(gens, changed []uint32, hot []hotTrack, tracks []track, tick, resend, every uint32, attend []int32) []int32 {
	n := len(gens)
	attend = slices.Grow(attend[:0], n)[:n]
	na := 0
	hot, tracks, changed = hot[:n], tracks[:n], changed[:n]
	for slot := 0; slot < n; slot++ {
		gen := gens[slot]
		if gen == 0 {
			continue
		}
		h := &hot[slot]
		if h.gen != gen {
			*h = hotTrack{gen: gen}
			tracks[slot] = track{prDue: tick + uint32(slot)%every}
		}
		ch := changed[slot]
		if (h.have >= ch && (tick < h.due || h.due == 0)) || (h.flight >= ch && tick-h.flight <= resend) || h.out {
			if h.waiting {
				h.waiting = false
				t := &tracks[slot]
				if tick-1 > t.accTick {
					t.acc += t.pr * float32(tick-1-t.accTick)
					t.accTick = tick - 1
				}
			}
			continue
		}
		if !h.waiting {
			h.waiting, h.wake = true, 0
			tracks[slot].accTick = tick - 1
		} else if tick < h.wake {
			continue
		}
		attend[na] = int32(slot)
		na++
	}
	return attend[:na]
}

type equivThing struct {
	X  float32 `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Z  float32 `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Hp uint8   `net:"range,min=0,max=100"`
}

// TestScanMatchesFullPass runs the same random sessions twice, once with
// Peers that visit only the slots events named and once with Peers that
// visit every slot every tick (the earlier algorithm), and requires the
// same packets, byte for byte, and the same counters. The sessions move,
// create and remove entities, lose and delay packets and acks by up to
// hundreds of ticks (so the round-trip estimate, and with it the resend
// window, swings both ways and reaches past the packet records), skip
// ticks for some Peers (gaps past the wheel's span too), and cover
// priorities with ties, none, PriorityEvery, Refresh, bandwidth budgets
// and small budgets.
func TestScanMatchesFullPass(t *testing.T) {
	cfgs := []func(pos *[2]float32) PeerConfig[equivThing]{
		func(pos *[2]float32) PeerConfig[equivThing] {
			return PeerConfig[equivThing]{Priority: func(_ uint32, e *equivThing) float32 {
				dx, dz := e.X-pos[0], e.Z-pos[1]
				return 1 / (1 + (dx*dx+dz*dz)*(1.0/1024))
			}, Budget: 400}
		},
		func(pos *[2]float32) PeerConfig[equivThing] {
			return PeerConfig[equivThing]{Priority: func(id uint32, _ *equivThing) float32 { return float32(id%4) * 0.5 }, Budget: 300, Refresh: 30}
		},
		func(pos *[2]float32) PeerConfig[equivThing] {
			return PeerConfig[equivThing]{Budget: 200, PriorityEvery: 5}
		},
		func(pos *[2]float32) PeerConfig[equivThing] {
			return PeerConfig[equivThing]{Priority: func(_ uint32, e *equivThing) float32 { return 1 + e.X*e.X*(1.0/4096) }, Budget: 250, Bandwidth: 12000, Refresh: 17, PriorityEvery: 3}
		},
	}
	seeds, ticks := uint64(4), uint32(700)
	if testing.Short() { // CI's race detector run
		seeds, ticks = 2, 300
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			fast := runEquivSession(t, seed, ticks, cfgs, false)
			ref := runEquivSession(t, seed, ticks, cfgs, true)
			require.Equal(t, len(ref), len(fast))
			for i := range ref {
				if !bytes.Equal(ref[i], fast[i]) {
					t.Fatalf("record %d differs:\nfull pass %x\nevents    %x", i, ref[i], fast[i])
				}
			}
		})
	}
}

// runEquivSession plays one session of about ticks ticks and returns every packet each Peer
// sent, and at the end each Peer's counters, in order.
func runEquivSession(t *testing.T, seed uint64, ticks uint32, cfgs []func(*[2]float32) PeerConfig[equivThing], fullPass bool) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 77))
	c := bitwire.MustFor[equivThing]()
	srv, err := NewServer(c, WithVersions(1+rng.IntN(16)))
	require.NoError(t, err)
	type delayed struct {
		at  uint32
		ack Ack
	}
	type client struct {
		peer *Peer[equivThing]
		cl   *Client[equivThing]
		pos  [2]float32
		acks []delayed
		held [][]byte
		// lag: the most ticks an ack waits (it changes during the session)
		lag  int
		slow bool // its acks come 150 to 250 ticks late
	}
	var cs []*client
	for i := range 2 * len(cfgs) {
		cl := &client{pos: [2]float32{float32(rng.Float64()*300 - 150), float32(rng.Float64()*300 - 150)}, lag: 3, slow: i >= len(cfgs) && i%2 == 1}
		cl.peer, err = srv.NewPeer(cfgs[i%len(cfgs)](&cl.pos))
		require.NoError(t, err)
		if fullPass {
			cl.peer.fullPass = scanAllSlots
		}
		cl.cl, err = NewClient(c)
		require.NoError(t, err)
		cs = append(cs, cl)
	}
	ents := map[uint32]*equivThing{}
	nextID := uint32(1)
	var out [][]byte
	for tick := uint32(1); tick <= ticks; tick++ {
		if tick > 1 && rng.IntN(40) == 0 {
			tick += uint32(rng.IntN(5)) // the server skips ticks
		}
		if rng.IntN(300) == 0 {
			tick += wheelTicks // and sometimes many
		}
		require.NoError(t, srv.Advance(tick))
		// Create, move, remove.
		for range rng.IntN(12) {
			if len(ents) < 400 {
				e := &equivThing{X: float32(rng.Float64()*400 - 200), Z: float32(rng.Float64()*400 - 200), Hp: uint8(rng.IntN(101))}
				ents[nextID] = e
				_, err := srv.Set(nextID, e)
				require.NoError(t, err)
				nextID++
			}
		}
		ids := make([]uint32, 0, len(ents))
		for id := range ents {
			ids = append(ids, id)
		}
		slices.Sort(ids) // the map's order is random
		for _, id := range ids {
			e := ents[id]
			switch r := rng.IntN(100); {
			case r < 8 && id%3 == 0: // two thirds never move
				e.X = max(-255, min(255, e.X+float32(rng.Float64()*2-1)))
				e.Z = max(-255, min(255, e.Z+float32(rng.Float64()*2-1)))
				_, err := srv.Set(id, e)
				require.NoError(t, err)
			case r < 9:
				_, err := srv.Remove(id)
				require.NoError(t, err)
				delete(ents, id)
			case r < 10 && rng.IntN(4) == 0:
				// Removed and set again in the same tick: a new incarnation.
				_, err := srv.Remove(id)
				require.NoError(t, err)
				_, err = srv.Set(id, e)
				require.NoError(t, err)
			}
		}
		for _, cl := range cs {
			if rng.IntN(10) == 0 {
				cl.lag = 1 + rng.IntN(2+rng.IntN(400)) // the round trip swings
				if rng.IntN(8) == 0 {
					cl.lag = 300 + rng.IntN(1200) // past the packet records
				}
			}
			if rng.IntN(250) == 0 {
				// The client starts again from nothing: its acks report
				// the baselines it lacks.
				cl.cl, err = NewClient(c)
				require.NoError(t, err)
			}
			keep := cl.acks[:0]
			for _, a := range cl.acks {
				if a.at <= tick {
					cl.peer.Ack(a.ack)
				} else {
					keep = append(keep, a)
				}
			}
			cl.acks = keep
			if rng.IntN(15) == 0 {
				continue // this Peer skips the tick
			}
			for {
				pkt, ok, err := cl.peer.Encode(nil)
				require.NoError(t, err)
				if !ok {
					break
				}
				out = append(out, pkt)
				switch r := rng.IntN(20); {
				case r == 0, cl.slow && r < 8:
					continue // lost
				case r == 1:
					cl.held = append(cl.held, pkt) // late, out of order
					continue
				}
				cl.cl.Decode(pkt)
				if len(cl.held) > 0 && rng.IntN(3) == 0 {
					cl.cl.Decode(cl.held[0])
					cl.held = cl.held[1:]
				}
				if rng.IntN(10) != 0 {
					at := tick + uint32(rng.IntN(cl.lag))
					if cl.slow {
						// Acks a little less than the packet records' span
						// late: the resend window reaches past them.
						at = tick + 150 + uint32(rng.IntN(100))
					}
					cl.acks = append(cl.acks, delayed{at: at, ack: cl.cl.Ack()})
				}
			}
		}
	}
	for _, cl := range cs {
		out = append(out, fmt.Appendf(nil, "%+v", cl.peer.Stats()))
	}
	return out
}
