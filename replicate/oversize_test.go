package replicate_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Blob is an entity whose size the test chooses.
type Blob struct {
	Data []byte `net:",maxlen=4000"`
}

var blobCodec = bitwire.MustFor[Blob]()

// An entity larger than a packet was accepted by Set and then never sent
// (Encode returned ok and a packet of the header alone); Set refuses it
// now, and the world is as it was.
func TestSetRefusesEntityLargerThanPacket(t *testing.T) {
	s, err := replicate.NewServer(blobCodec)
	require.NoError(t, err)
	p, err := s.NewPeer(replicate.PeerConfig[Blob]{Budget: 1200})
	require.NoError(t, err)
	require.NoError(t, s.Advance(1))
	_, err = s.Set(1, &Blob{Data: bytes.Repeat([]byte{7}, 1300)})
	require.ErrorIs(t, err, replicate.ErrEntityTooLarge)
	require.Equal(t, 0, s.Len())
	_, ok, err := p.Encode(nil)
	require.NoError(t, err)
	require.False(t, ok, "nothing to send")

	// The largest that fits a 1200-byte packet is sent and arrives; one
	// byte more is refused.
	cl, err := replicate.NewClient(blobCodec)
	require.NoError(t, err)
	require.NoError(t, s.Advance(2))
	largest := 0
	for n := 1150; n < 1200; n++ {
		if _, err := s.Set(2, &Blob{Data: make([]byte, n)}); err != nil {
			require.ErrorIs(t, err, replicate.ErrEntityTooLarge)
			break
		}
		largest = n
	}
	require.Greater(t, largest, 1150)
	_, err = s.Set(2, &Blob{Data: bytes.Repeat([]byte{1}, largest)})
	require.NoError(t, err)
	pkt, ok, err := p.Encode(nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.LessOrEqual(t, len(pkt), 1200)
	_, err = cl.Decode(pkt)
	require.NoError(t, err)
	got, _, ok := cl.Get(2)
	require.True(t, ok)
	require.Equal(t, largest, len(got.Data))
	require.Equal(t, 0, p.Stats().Oversize)
}

// The smallest Peer decides: with a 300-byte Peer beside a 1200-byte one,
// a 400-byte entity is refused; a Peer created after the Set with a
// smaller budget counts what it cannot send in PeerStats.Oversize.
func TestOversizeCountedByPeer(t *testing.T) {
	s, err := replicate.NewServer(blobCodec)
	require.NoError(t, err)
	big, err := s.NewPeer(replicate.PeerConfig[Blob]{Budget: 1200})
	require.NoError(t, err)
	require.NoError(t, s.Advance(1))
	_, err = s.Set(1, &Blob{Data: make([]byte, 400)})
	require.NoError(t, err)
	small, err := s.NewPeer(replicate.PeerConfig[Blob]{Budget: 300})
	require.NoError(t, err)
	require.NoError(t, s.Advance(2))
	_, err = s.Set(2, &Blob{Data: make([]byte, 400)})
	require.ErrorIs(t, err, replicate.ErrEntityTooLarge)
	_, err = s.Set(3, &Blob{Data: make([]byte, 10)})
	require.NoError(t, err)
	_, ok, err := big.Encode(nil)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = small.Encode(nil)
	require.NoError(t, err)
	require.True(t, ok, "entity 3 fits")
	require.Equal(t, 1, small.Stats().Oversize, "entity 1 cannot fit a 300-byte packet")
	require.Equal(t, 0, big.Stats().Oversize)
	s.RemovePeer(small)
	require.NoError(t, s.Advance(3))
	_, err = s.Set(2, &Blob{Data: make([]byte, 400)})
	require.NoError(t, err, "the smallest remaining Peer holds 1200 bytes")
}
