package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/snapshot"
)

// A full state over the budget is refused with ErrOverBudget and counted;
// a state that fits is sent and not counted.
func TestOverBudgetCounted(t *testing.T) {
	big := newGame(16, 12, 12)
	s, err := snapshot.NewSender(worldCodec, snapshot.WithBudget(100))
	require.NoError(t, err)
	for tick := uint32(1); tick <= 3; tick++ {
		_, err := s.Encode(nil, tick, &big.w)
		require.ErrorIs(t, err, snapshot.ErrOverBudget)
	}
	require.Equal(t, 3, s.OverBudget())
	small := newGame(1, 1, 1)
	_, err = s.Encode(nil, 4, &small.w)
	require.NoError(t, err)
	require.Equal(t, 3, s.OverBudget())
}
