package replicate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// TestSharedDeltaKey holds the shared deltas to their key: two Peers
// whose clients hold the same version of an entity as their baseline and
// predict at the same distance, but from different older versions, write
// different deltas, and the second must not copy the first's. The
// entity has versions at ticks 3, 5 and 9; client A acknowledged the
// sends of ticks 3 and 5, client B (whose send of tick 5 was slow to be
// acknowledged, so it was sent again at 7, at rest) those of 5 and 7.
func TestSharedDeltaKey(t *testing.T) {
	type body struct {
		X float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-8,dmax=8,pred"`
	}
	c := bitwire.MustFor[body]()
	srv, err := NewServer(c)
	require.NoError(t, err)
	pa, err := srv.NewPeer(PeerConfig[body]{})
	require.NoError(t, err)
	pb, err := srv.NewPeer(PeerConfig[body]{})
	require.NoError(t, err)
	for tick := uint32(1); tick <= 9; tick++ {
		require.NoError(t, srv.Advance(tick))
		if tick == 1 || tick == 3 || tick == 5 || tick == 9 {
			_, err := srv.Set(1, &body{X: float32(tick)})
			require.NoError(t, err)
		}
	}
	slot := srv.index[1]
	held := func(p *Peer[body], sends, acked uint32, prev prevAck) {
		n := int(slot) + 1
		p.tracks, p.hot, p.prev = make([]track, n), make([]hotTrack, n), make([]prevAck, n)
		p.hot[slot].have = acked
		p.tracks[slot] = track{sends: sends, ackedN: sends, acked: acked}
		p.prev[slot] = prev
	}
	held(pa, 3, 5, prevAck{n: 2, tick: 3})
	held(pb, 4, 7, prevAck{n: 3, tick: 5})
	delta := func(p *Peer[body]) []byte {
		ch, err := p.body(newCand(slot, 1))
		require.NoError(t, err)
		require.True(t, ch.pred, "predicted")
		var w bits.Writer
		copyBits(&w, p.scratch.Bytes(), int(ch.off), int(ch.n))
		return w.Bytes()
	}
	a, b := delta(pa), delta(pb)
	require.NotEqual(t, a, b, "A predicts 5 + (5 - 3), B 5 + (5 - 5)")

	// Each is what its client decodes to tick 9's state.
	for _, k := range []struct {
		data        []byte
		older, base float32
	}{{a, 3, 5}, {b, 5, 5}} {
		r := bits.NewReader(k.data)
		on, err := r.ReadBool()
		require.NoError(t, err)
		require.True(t, on)
		dist, err := fields.ReadBitlen(r, distWidth)
		require.NoError(t, err)
		require.Equal(t, uint64(1), dist, "2 ticks before the baseline")
		var got body
		require.NoError(t, c.DecodePredicted(r, &body{X: k.older}, &body{X: k.base}, &got))
		require.Equal(t, body{X: 9}, got)
	}
}
