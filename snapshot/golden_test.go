package snapshot

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
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

func TestGoldenPackets(t *testing.T) {
	c := bitwire.MustFor[goldenState]()
	s, err := NewSender(c)
	require.NoError(t, err)
	rc, err := NewReceiver(c)
	require.NoError(t, err)

	states := []goldenState{
		{Tick: 100, Entities: []goldenEntity{{1, 0, 100}, {2, 10, 50}}},
		{Tick: 101, Entities: []goldenEntity{{1, 0.5, 100}, {2, 10, 50}}},
		{Tick: 102, Entities: []goldenEntity{{1, 0.5, 100}, {3, -20, 1}}},
		{Tick: 105, Entities: []goldenEntity{{1, 1, 99}, {3, -20, 1}}},
	}
	acks := []bool{true, false, true, false} // which packets the client acknowledges
	var b strings.Builder
	b.WriteString("# bitwire golden snapshot packets (see docs/wire-format.md, \"Snapshot packets\").\n")
	b.WriteString("# A sender and a receiver of goldenState; the receiver acknowledges the marked ticks.\n")
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
		if acks[i] {
			s.Ack(tick)
		}
		fmt.Fprintf(&b, "\n[tick %d]\nstate    = %+v\nbaseline = %s\nacked    = %v\nhex      = %s\n",
			st.Tick, st, baselineText(h), acks[i], hex.EncodeToString(pkt))
	}
	got := b.String()
	path := filepath.Join("testdata", "golden", "packets.txt")
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./snapshot -run Golden -update once")
	require.Equal(t, string(want), got, "the snapshot packet format changed: if on purpose, run go test ./snapshot -run Golden -update and document it")
}

func baselineText(h Header) string {
	if !h.Delta {
		return "none (full)"
	}
	return fmt.Sprint(h.Baseline)
}
