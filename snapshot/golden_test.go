package snapshot

import (
	"encoding/hex"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/internal/golden"
)

// Golden snapshot packets: the header and body bytes of a short session
// are frozen under testdata/golden, so that a change of the packet format
// fails a test on purpose. Run `go test ./snapshot -run Golden -update`
// only for an intended change, and document it in docs/wire-format.md.
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

type goldenEntity struct {
	ID uint16  `net:"id"`
	X  float32 `net:"q,min=-64,max=64,prec=0.5"`
	Hp uint8   `net:"range,min=0,max=100"`
}

type goldenState struct {
	Tick     uint32 `net:"bits=32"`
	Entities []goldenEntity
}

// goldenKey is the MAC secret of the golden session; the file spells its
// bytes, so that a reader in another language need not read this source.
var goldenKey = []byte("bitwire golden session key, 32B")

// spaced is b in hex, a space between bytes.
func spaced(b []byte) string {
	s := make([]string, len(b))
	for i, x := range b {
		s[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(s, " ")
}

func TestGoldenPackets(t *testing.T) {
	c := bitwire.MustFor[goldenState]()
	states := []goldenState{
		{Tick: 100, Entities: []goldenEntity{{1, 0, 100}, {2, 10, 50}}},
		{Tick: 101, Entities: []goldenEntity{{1, 0.5, 100}, {2, 10, 50}}},
		{Tick: 102, Entities: []goldenEntity{{1, 0.5, 100}, {3, -20, 1}}},
		{Tick: 105, Entities: []goldenEntity{{1, 1, 99}, {3, -20, 1}}},
	}
	acks := []bool{true, false, true, false} // which packets the client acknowledges
	var b strings.Builder
	b.WriteString("# bitwire golden snapshot packets (see docs/wire-format.md, \"Snapshot packets\" and \"Acks\").\n")
	b.WriteString("# A sender and a receiver of goldenState in each integrity mode;\n")
	fmt.Fprintf(&b, "# mode mac with the key %q (the %d bytes %s);\n", goldenKey, len(goldenKey), spaced(goldenKey))
	b.WriteString("# the state hash is in every other packet; the receiver acknowledges the marked ticks.\n")
	for _, mode := range []Option{nil, WithChecksum(), WithMAC(goldenKey)} {
		s, err := NewSender(c, mode, WithStateHash(2))
		require.NoError(t, err)
		rc, err := NewReceiver(c, mode)
		require.NoError(t, err)
		fmt.Fprintf(&b, "\n## mode %v\n", s.Mode())
		for i := range states {
			st := states[i]
			pkt, err := s.Encode(nil, st.Tick, &st)
			require.NoError(t, err)
			h, err := ParseHeader(pkt)
			require.NoError(t, err)
			var out goldenState
			tick, err := rc.Decode(pkt, &out)
			require.NoError(t, err)
			require.Equal(t, st.Tick, tick)
			want := st
			require.NoError(t, c.Quantize(&want))
			require.Equal(t, want, out)
			ack, ok := rc.Ack()
			require.True(t, ok)
			ackBytes, err := ack.MarshalBinary()
			require.NoError(t, err)
			if acks[i] {
				require.NoError(t, s.HandleAck(ack))
			}
			fmt.Fprintf(&b, "\n[tick %d]\nstate    = %+v\nbaseline = %s\nhashed   = %v\nacked    = %v\nhex      = %s\nack      = %s\n",
				st.Tick, st, baselineText(h), h.Hashed, acks[i], hex.EncodeToString(pkt), hex.EncodeToString(ackBytes))
		}
	}
	got := b.String()
	path := filepath.Join("testdata", "golden", "packets.txt")
	golden.Check(t, path, got, *updateGolden, "the snapshot packet format", "go test ./snapshot -run Golden -update")
}

func baselineText(h Header) string {
	if !h.Delta {
		return "none (full)"
	}
	return fmt.Sprint(h.Baseline)
}
