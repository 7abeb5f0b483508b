package replicate_test

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/integrity"
	"github.com/bitwire/bitwire/replicate"
)

// poolSession plays a session of 9 Peers (some with a bandwidth budget, so
// several packets a tick) whose acks come back 1 to 4 ticks late with loss,
// encoding each tick by encode, and returns every Peer's packets in order.
func poolSession(t *testing.T, ticks int, encode func(srv *replicate.Server[Body], peers []*replicate.Peer[Body], got [][][]byte)) [][][]byte {
	rng := rand.New(rand.NewSource(5))
	srv, err := replicate.NewServer(bodyCodec)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	const entities = 600
	bodies := make([]Body, entities)
	var peers []*replicate.Peer[Body]
	type pend struct {
		at  int
		ack replicate.Ack
	}
	clients := make([]*replicate.Client[Body], 9)
	acks := make([][]pend, 9)
	for i := range clients {
		x := float32(i*40 - 160)
		cfg := replicate.PeerConfig[Body]{Budget: 500, Priority: func(_ uint32, e *Body) float32 {
			dx := e.X - x
			return 1 / (1 + dx*dx*(1.0/1024))
		}}
		if i%3 == 0 {
			cfg.Bandwidth, cfg.Integrity = 30000, integrity.ModeChecksum
		}
		p, err := srv.NewPeer(cfg)
		require.NoError(t, err)
		peers = append(peers, p)
		clients[i], err = replicate.NewClient(bodyCodec, replicate.WithIntegrity(cfg.Integrity, nil))
		require.NoError(t, err)
	}
	all := make([][][]byte, len(peers))
	got := make([][][]byte, len(peers))
	for tick := 1; tick <= ticks; tick++ {
		require.NoError(t, srv.Advance(uint32(tick)))
		for i := range bodies {
			if tick == 1 {
				bodies[i] = randomBody(rng)
			} else if rng.Intn(10) != 0 {
				continue
			}
			nudge(rng, &bodies[i])
			_, err := srv.Set(uint32(i+1), &bodies[i])
			require.NoError(t, err)
		}
		for i, p := range peers {
			keep := acks[i][:0]
			for _, a := range acks[i] {
				if a.at <= tick {
					p.Ack(a.ack)
				} else {
					keep = append(keep, a)
				}
			}
			acks[i] = keep
			got[i] = got[i][:0]
		}
		encode(srv, peers, got)
		for i := range peers {
			for _, pkt := range got[i] {
				all[i] = append(all[i], pkt)
				if rng.Intn(20) == 0 {
					continue // lost
				}
				_, err := clients[i].Decode(pkt)
				require.NoError(t, err)
				acks[i] = append(acks[i], pend{at: tick + 1 + rng.Intn(4), ack: clients[i].Ack()})
			}
		}
	}
	return all
}

// EncodeAll makes the packets that each Peer's Encode, called in turn,
// makes; run under -race, it also checks that the workers share nothing
// they should not.
func TestEncodeAllMatchesEncode(t *testing.T) {
	byHand := poolSession(t, 150, func(_ *replicate.Server[Body], peers []*replicate.Peer[Body], got [][][]byte) {
		for i, p := range peers {
			for {
				pkt, ok, err := p.Encode(nil)
				require.NoError(t, err)
				if !ok {
					break
				}
				got[i] = append(got[i], pkt)
			}
		}
	})
	for _, workers := range []int{1, 3, 0} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			var mu sync.Mutex
			pooled := poolSession(t, 150, func(srv *replicate.Server[Body], peers []*replicate.Peer[Body], got [][][]byte) {
				index := map[*replicate.Peer[Body]]int{}
				for i, p := range peers {
					index[p] = i
				}
				require.NoError(t, srv.EncodeAll(workers, func(p *replicate.Peer[Body], pkt []byte) {
					mu.Lock() // index and got are shared; a Peer's packets come in order
					defer mu.Unlock()
					got[index[p]] = append(got[index[p]], append([]byte(nil), pkt...))
				}))
			})
			require.Equal(t, byHand, pooled)
		})
	}
}

func TestEncodeAllErrors(t *testing.T) {
	srv, err := replicate.NewServer(bodyCodec)
	require.NoError(t, err)
	_, err = srv.NewPeer(replicate.PeerConfig[Body]{})
	require.NoError(t, err)
	// Before the first Advance every Encode fails: the error is the Peer's.
	err = srv.EncodeAll(2, func(*replicate.Peer[Body], []byte) {})
	require.ErrorIs(t, err, replicate.ErrTickOrder)
	require.Error(t, srv.EncodeAll(2, nil))
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Advance(1))
	require.True(t, errors.Is(srv.EncodeAll(2, func(*replicate.Peer[Body], []byte) {}), replicate.ErrClosed))
}

// A tick encoded by EncodeAll allocates nothing once the rings and
// buffers are full, and starts no goroutine.
func TestEncodeAllAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rng := rand.New(rand.NewSource(9))
	srv, err := replicate.NewServer(bodyCodec)
	require.NoError(t, err)
	defer srv.Close()
	bodies := make([]Body, 300)
	const n = 6
	for range n {
		_, err := srv.NewPeer(replicate.PeerConfig[Body]{Budget: 400, Priority: func(_ uint32, e *Body) float32 { return 1 + e.Y }})
		require.NoError(t, err)
	}
	send := func(p *replicate.Peer[Body], pkt []byte) {} // the packets are lost: every tick sends again
	tick := uint32(0)
	step := func() {
		tick++
		require.NoError(t, srv.Advance(tick))
		for i := range bodies {
			if tick == 1 {
				bodies[i] = randomBody(rng)
			}
			nudge(rng, &bodies[i])
			srv.Set(uint32(i+1), &bodies[i])
		}
		require.NoError(t, srv.EncodeAll(3, send))
	}
	for range 300 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(50, step), "allocations per tick")
}
