package conn_test

import (
	"encoding/hex"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/conn"
	"github.com/bitwire/bitwire/internal/golden"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The connection packets of a fixed exchange, byte for byte: their format
// (docs/replicate.md, "Connection packets") is a contract, which the
// generated clients are held to.
func TestGoldenPackets(t *testing.T) {
	var out strings.Builder
	out.WriteString("# bitwire golden connection packets (conn/golden_test.go): hex per line.\n")
	for _, mode := range []snapshot.Mode{snapshot.ModeNone, snapshot.ModeChecksum} {
		s := newSession(t, 1, 0, 0, 0, 3, mode)
		pkts := exchange(t, s)
		for i, p := range pkts {
			fmt.Fprintf(&out, "%v %s %d: %s\n", mode, p.dir, i, hex.EncodeToString(p.b))
		}
	}
	golden.Check(t, "testdata/golden/packets.txt", out.String(), *update, "the connection packet format", "go test ./conn -run Golden -update")
}

type dirPacket struct {
	dir string
	b   []byte
}

// exchange runs three ticks by hand: inputs, one message each way, the
// state and its acks.
func exchange(t *testing.T, s *session) []dirPacket {
	var pkts []dirPacket
	for tick := uint32(1); tick <= 3; tick++ {
		mv := Move{DX: int8(tick%3) - 1, Fire: tick == 2, Aim: float32(tick)}
		require.NoError(t, moveCodec.Quantize(&mv))
		require.NoError(t, s.client.Inputs.Push(tick+2, &mv))
		if tick == 1 {
			require.NoError(t, s.client.Messages.Send(&Chat{From: 3, Text: "gg"}))
			require.NoError(t, s.server.Messages.Send(&Hit{Target: 9, Damage: 40}))
		}
		up, err := s.client.Append(nil)
		require.NoError(t, err)
		pkts = append(pkts, dirPacket{"up", up})
		require.NoError(t, s.srv.Advance(tick))
		require.NoError(t, s.server.Receive(up))
		s.server.Inputs.Next()
		_, err = s.srv.Set(1, &Player{X: float32(tick), Y: -1})
		require.NoError(t, err)
		down, ok, err := s.server.Append(nil)
		require.NoError(t, err)
		require.True(t, ok)
		pkts = append(pkts, dirPacket{"down", down})
		_, _, err = s.client.Receive(down)
		require.NoError(t, err)
	}
	m, ok := s.client.Messages.Receive()
	require.True(t, ok)
	require.Equal(t, &Hit{Target: 9, Damage: 40}, m)
	m, ok = s.server.Messages.Receive()
	require.True(t, ok)
	require.Equal(t, &Chat{From: 3, Text: "gg"}, m)
	return pkts
}

// Every single-bit flip of a packet with a CRC is refused, and nothing
// changes; a truncated one too; an uplink is not a downlink.
func TestPacketErrors(t *testing.T) {
	s := newSession(t, 1, 0, 0, 0, 3, snapshot.ModeChecksum)
	pkts := exchange(t, s)
	up, down := pkts[4].b, pkts[5].b
	for i := range len(up) * 8 {
		b := append([]byte(nil), up...)
		b[i/8] ^= 1 << (i % 8)
		require.Error(t, s.server.Receive(b), "bit %d", i)
	}
	for i := range len(down) * 8 {
		b := append([]byte(nil), down...)
		b[i/8] ^= 1 << (i % 8)
		_, _, err := s.client.Receive(b)
		require.Error(t, err, "bit %d", i)
	}
	for n := range len(up) {
		require.Error(t, s.server.Receive(up[:n]))
	}
	_, _, err := s.client.Receive(up)
	require.Error(t, err)
	require.ErrorIs(t, s.server.Receive(down), bitwire.ErrMalformed)
	plain := exchange(t, newSession(t, 1, 0, 0, 0, 3, snapshot.ModeNone))
	require.ErrorIs(t, s.server.Receive(plain[0].b), replicate.ErrProtocolMismatch)
	_, _, err = s.client.Receive([]byte{1, 2, 3, 4, 5, 6})
	require.ErrorIs(t, err, conn.ErrBadMagic)
}
