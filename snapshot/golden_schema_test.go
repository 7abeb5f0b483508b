package snapshot

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/internal/golden"
)

// TestGoldenPacketsSchema keeps the schema of the golden packets' state
// type beside them (testdata/golden/schema.json), so that another
// implementation can decode packets.txt without guessing the type, and
// checks that the headers' fingerprint is the schema's, folded.
func TestGoldenPacketsSchema(t *testing.T) {
	c := bitwire.MustFor[goldenState]()
	js, err := json.MarshalIndent(c.Schema(), "", "  ")
	require.NoError(t, err)
	js = append(js, '\n')
	path := filepath.Join("testdata", "golden", "schema.json")
	golden.Check(t, path, string(js), *updateGolden, "the schema of the golden packets", "go test ./snapshot -run Golden -update")

	var s bitwire.Schema
	require.NoError(t, json.Unmarshal(js, &s))
	fp, err := strconv.ParseUint(s.Fingerprint, 16, 64)
	require.NoError(t, err)
	require.Equal(t, c.Fingerprint(), fp)
	pkt, err := mustSender(t, c).Encode(nil, 1, &goldenState{Tick: 1})
	require.NoError(t, err)
	h, err := ParseHeader(pkt)
	require.NoError(t, err)
	require.Equal(t, uint32(fp)^uint32(fp>>32), h.Fingerprint)
}

func mustSender(t *testing.T, c *bitwire.Codec[goldenState]) *Sender[goldenState] {
	s, err := NewSender(c)
	require.NoError(t, err)
	return s
}
