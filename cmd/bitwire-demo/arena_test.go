package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The arena over UDP at 10% loss: every message arrives, in order, both
// ways; nearly every input is played on its tick (redundancy saves the
// lost ones); the drawn players are where the server had them.
func TestArena(t *testing.T) {
	sum, err := runArena(ArenaConfig{Duration: 2 * time.Second, Clients: 4, Rate: 30, Loss: 0.1, Seed: 1})
	require.NoError(t, err)
	require.True(t, sum.InOrder)
	require.Equal(t, sum.UpSent, sum.UpDelivered)
	require.Equal(t, sum.DownSent, sum.DownDelivered)
	require.GreaterOrEqual(t, sum.UpSent, 8)
	require.GreaterOrEqual(t, sum.DownSent, 4)
	require.Greater(t, sum.InputsPlayed, sum.InputsPushed*9/10)
	require.Greater(t, sum.InputsRecovered, 0)
	require.Greater(t, sum.Samples, 100)
	require.Less(t, sum.ErrMean, 0.1)
	require.GreaterOrEqual(t, sum.Delay, 2.0)
	var b strings.Builder
	printArena(&b, &sum, 30)
	require.Contains(t, b.String(), "all, in order")
}

// Node clients in the arena (nodeclient/arena.ts, the TypeScript runtime's
// conn.ts and interp.ts) beside Go ones: their inputs move their players,
// their messages and the server's arrive in order, and what they draw is
// where the server had the players.
func TestArenaNode(t *testing.T) {
	nodeTools(t)
	sum, err := runArena(ArenaConfig{Duration: 3 * time.Second, Clients: 2, Node: 2, Rate: 30, Loss: 0.1, Seed: 2})
	require.NoError(t, err)
	require.True(t, sum.InOrder)
	require.Equal(t, sum.UpSent, sum.UpDelivered)
	require.Equal(t, sum.DownSent, sum.DownDelivered)
	require.Greater(t, sum.InputsPlayed, sum.InputsPushed*8/10)
	require.Greater(t, sum.NodeSamples, 10)
	require.Less(t, sum.ErrMean, 0.1)
}
