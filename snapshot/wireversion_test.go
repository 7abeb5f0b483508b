package snapshot

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
)

// TestWireVersion3Refused decodes the first golden packet that wire
// version 3 wrote (testdata/golden/packets.txt before version 4: the same
// state, the same bits after the header, the fingerprint of version 3):
// a receiver of version 4 refuses it as another protocol, since the wire
// version is part of every fingerprint, and so a peer of version 3
// refuses version 4's packets the same way.
func TestWireVersion3Refused(t *testing.T) {
	require.Equal(t, 4, bitwire.WireVersion)
	v3, err := hex.DecodeString("7eb277d4ce746400000040060000104040e4404906")
	require.NoError(t, err)
	c := bitwire.MustFor[goldenState]()
	rc, err := NewReceiver(c)
	require.NoError(t, err)
	var out goldenState
	_, err = rc.Decode(v3, &out)
	require.ErrorIs(t, err, ErrProtocolMismatch)
	// The same packet with version 4's fingerprint decodes.
	s, err := NewSender(c)
	require.NoError(t, err)
	st := goldenState{Tick: 100, Entities: []goldenEntity{{1, 0, 100}, {2, 10, 50}}}
	v4, err := s.Encode(nil, st.Tick, &st)
	require.NoError(t, err)
	require.Equal(t, v3[6:], v4[6:])
	_, err = rc.Decode(v4, &out)
	require.NoError(t, err)
}
