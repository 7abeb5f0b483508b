package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// bitsWriter measures bodies.
type bitsWriter struct{ w bits.Writer }

func (b *bitsWriter) deltaBits(t *testing.T, base, cur *World) int {
	t.Helper()
	b.w.Reset(nil)
	require.NoError(t, worldCodec.EncodeDelta(&b.w, base, cur))
	return b.w.Len()
}
