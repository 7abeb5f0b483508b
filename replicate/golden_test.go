package replicate_test

import (
	"encoding/hex"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/integrity"
	"github.com/bitwire/bitwire/internal/golden"
	"github.com/bitwire/bitwire/replicate"
)

// Golden replication packets: a short session frozen under
// testdata/golden, so that a change of the packet format fails a test on
// purpose. Run `go test ./replicate -run Golden -update` only for an
// intended change, and document it in docs/wire-format.md.
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

type goldenThing struct {
	X  float32 `net:"q,min=-64,max=64,prec=0.5"`
	Hp uint8   `net:"range,min=0,max=100"`
}

func TestGoldenPackets(t *testing.T) {
	var b strings.Builder
	b.WriteString("# bitwire golden replication packets (see docs/wire-format.md, \"Replication packets\").\n")
	b.WriteString("# A Server of goldenThing {X q,min=-64,max=64,prec=0.5; Hp range,min=0,max=100}, one Peer\n")
	b.WriteString("# (priority = id, budget 1200) and its Client; the client acknowledges the marked packets.\n")
	b.WriteString("# The session once in each integrity mode; mode mac with the key 00 01 02 .. 1f.\n")
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	for _, mode := range []integrity.Mode{integrity.ModeNone, integrity.ModeChecksum, integrity.ModeMAC} {
		k := key
		if mode != integrity.ModeMAC {
			k = nil
		}
		fmt.Fprintf(&b, "\n## integrity %v\n", mode)
		goldenSession(t, &b, mode, k)
	}
	got := b.String()
	path := filepath.Join("testdata", "golden", "packets.txt")
	golden.Check(t, path, got, *updateGolden, "the replication packet format", "go test ./replicate -run Golden -update")
}

func goldenSession(t *testing.T, b *strings.Builder, mode integrity.Mode, key []byte) {
	c := bitwire.MustFor[goldenThing]()
	srv, err := replicate.NewServer(c)
	require.NoError(t, err)
	peer, err := srv.NewPeer(replicate.PeerConfig[goldenThing]{Priority: func(id uint32, e *goldenThing) float32 { return float32(id) },
		Integrity: mode, Key: key})
	require.NoError(t, err)
	cl, err := replicate.NewClient(c, replicate.WithIntegrity(mode, key))
	require.NoError(t, err)

	type step struct {
		tick   uint32
		set    map[uint32]goldenThing
		remove []uint32
		ack    bool // the client acknowledges this tick's packet
	}
	steps := []step{
		{tick: 1, set: map[uint32]goldenThing{1: {0, 100}, 2: {10, 50}, 7: {-3, 1}}, ack: true},
		{tick: 2, set: map[uint32]goldenThing{1: {0.5, 100}}, ack: false},
		{tick: 3, set: map[uint32]goldenThing{1: {1, 99}, 9: {4, 4}}, remove: []uint32{2}, ack: true},
		{tick: 5, set: map[uint32]goldenThing{7: {-2.5, 1}}, ack: true},
	}
	for _, st := range steps {
		require.NoError(t, srv.Advance(st.tick))
		for _, id := range []uint32{1, 2, 7, 9} {
			if v, ok := st.set[id]; ok {
				_, err := srv.Set(id, &v)
				require.NoError(t, err)
			}
		}
		for _, id := range st.remove {
			_, err := srv.Remove(id)
			require.NoError(t, err)
		}
		pkt, ok, err := peer.Encode(nil)
		require.NoError(t, err)
		require.True(t, ok)
		info, err := cl.Decode(pkt)
		require.NoError(t, err)
		ack := cl.Ack()
		if st.ack {
			require.NoError(t, peer.Ack(ack))
		}
		fmt.Fprintf(b, "\n[tick %d]\nset      = %v\nremove   = %v\nupdated  = %v\nremoved  = %v\nacked    = %v\nhex      = %s\nack      = %s\n",
			st.tick, st.set, st.remove, info.Updated, info.Removed, st.ack, hex.EncodeToString(pkt), hex.EncodeToString(replicate.AppendAck(nil, ack)))
	}
}

// goldenShell moves on a line: its X is predicted from two baselines.
type goldenShell struct {
	X  float32 `net:"q,min=-64,max=64,prec=0.5,pred"`
	Hp uint8   `net:"range,min=0,max=100"`
}

// TestGoldenPredictedPackets freezes a session of a codec with pred
// values: entity 1 moves by 0.5 a tick, so from tick 3 on its deltas are
// predicted from the two states before (acknowledged at once) and cost
// their changed bits; entity 2 turns back at tick 4.
func TestGoldenPredictedPackets(t *testing.T) {
	c := bitwire.MustFor[goldenShell]()
	srv, err := replicate.NewServer(c)
	require.NoError(t, err)
	peer, err := srv.NewPeer(replicate.PeerConfig[goldenShell]{Priority: func(id uint32, e *goldenShell) float32 { return float32(id) }})
	require.NoError(t, err)
	cl, err := replicate.NewClient(c)
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("# bitwire golden replication packets of a predicting codec (see docs/wire-format.md,\n")
	b.WriteString("# \"Replication packets\", Body): goldenShell {X q,min=-64,max=64,prec=0.5,pred; Hp range,min=0,max=100},\n")
	b.WriteString("# one Peer (priority = id, budget 1200) and its Client, which acknowledges every packet.\n")
	xs := map[uint32][]float32{1: {0, 0.5, 1, 1.5, 2}, 2: {10, 11, 12, 11, 10}}
	for tick := uint32(1); tick <= 5; tick++ {
		require.NoError(t, srv.Advance(tick))
		set := map[uint32]goldenShell{}
		for id := uint32(1); id <= 2; id++ {
			v := goldenShell{X: xs[id][tick-1], Hp: 100}
			set[id] = v
			_, err := srv.Set(id, &v)
			require.NoError(t, err)
		}
		pkt, ok, err := peer.Encode(nil)
		require.NoError(t, err)
		require.True(t, ok)
		info, err := cl.Decode(pkt)
		require.NoError(t, err)
		require.NoError(t, peer.Ack(cl.Ack()))
		fmt.Fprintf(&b, "\n[tick %d]\nset      = %v\nupdated  = %v\npredicted = %d\nhex      = %s\n", tick, set, info.Updated, peer.Stats().Predicted, hex.EncodeToString(pkt))
	}
	require.Equal(t, 6, peer.Stats().Predicted, "both entities at ticks 3, 4 and 5")
	path := filepath.Join("testdata", "golden", "predicted.txt")
	golden.Check(t, path, b.String(), *updateGolden, "the replication packet format", "go test ./replicate -run Golden -update")
}
