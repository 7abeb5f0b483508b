package replicate_test

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/internal/golden"
	"github.com/bitwire/bitwire/replicate"
)

// TestGoldenPacketsSchema keeps the schema of the golden packets' entity
// type beside them (testdata/golden/schema.json), so that another
// implementation can decode packets.txt without guessing the type, and
// checks that the headers' fingerprint is the schema's, folded.
func TestGoldenPacketsSchema(t *testing.T) {
	c := bitwire.MustFor[goldenThing]()
	js, err := json.MarshalIndent(c.Schema(), "", "  ")
	require.NoError(t, err)
	js = append(js, '\n')
	path := filepath.Join("testdata", "golden", "schema.json")
	golden.Check(t, path, string(js), *updateGolden, "the schema of the golden packets", "go test ./replicate -run Golden -update")

	var s bitwire.Schema
	require.NoError(t, json.Unmarshal(js, &s))
	fp, err := strconv.ParseUint(s.Fingerprint, 16, 64)
	require.NoError(t, err)
	require.Equal(t, c.Fingerprint(), fp)
	srv, err := replicate.NewServer(c)
	require.NoError(t, err)
	peer, err := srv.NewPeer(replicate.PeerConfig[goldenThing]{})
	require.NoError(t, err)
	require.NoError(t, srv.Advance(1))
	_, err = srv.Set(1, &goldenThing{})
	require.NoError(t, err)
	pkt, ok, err := peer.Encode(nil)
	require.NoError(t, err)
	require.True(t, ok)
	h, err := replicate.ParseHeader(pkt)
	require.NoError(t, err)
	require.Equal(t, uint32(fp)^uint32(fp>>32), h.Fingerprint)
}
