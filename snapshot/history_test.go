package snapshot_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/snapshot"
)

func worldAt(tick uint32) *World {
	return &World{Players: []Player{{ID: uint16(tick), Health: int(tick % 100), Rot: [4]float32{0, 0, 0, 1}}}, Round: uint8(tick % 16)}
}

func TestHistoryOverwrite(t *testing.T) {
	h := snapshot.NewHistory(worldCodec, 4)
	require.Equal(t, 4, h.Size())
	require.Zero(t, h.Len())
	_, ok := h.Newest()
	require.False(t, ok)
	_, ok = h.Get(0)
	require.False(t, ok, "an empty history holds no tick, not even 0")

	// ticks 3, 7, 11, ... all fall in the same slot of a ring indexed by
	// tick mod 4; this ring keeps the last four of them anyway
	var put []uint32
	for tick := uint32(3); tick <= 43; tick += 4 {
		require.NoError(t, h.Put(tick, worldAt(tick)))
		put = append(put, tick)
		for i, old := range put {
			v, ok := h.Get(old)
			if i < len(put)-4 {
				require.False(t, ok, "tick %d overwritten, asked after %d", old, tick)
				require.Nil(t, v)
				continue
			}
			require.True(t, ok, "tick %d", old)
			require.Equal(t, *worldAt(old), *v)
		}
		for _, never := range []uint32{tick - 1, tick + 1, tick + 4} {
			_, ok := h.Get(never)
			require.False(t, ok)
		}
	}
	require.Equal(t, 4, h.Len())
	oldest, _ := h.Oldest()
	newest, _ := h.Newest()
	require.Equal(t, uint32(31), oldest)
	require.Equal(t, uint32(43), newest)

	// consecutive ticks: each overwrites the oldest
	for tick := uint32(44); tick < 100; tick++ {
		require.NoError(t, h.Put(tick, worldAt(tick)))
		put = append(put, tick)
		kept := put[len(put)-4:]
		for q := tick - 12; q <= tick+1; q++ {
			v, ok := h.Get(q)
			require.Equal(t, slices.Contains(kept, q), ok, "tick %d at %d", q, tick)
			if ok {
				require.Equal(t, *worldAt(q), *v)
			}
		}
	}
}

func TestHistoryTicksIncrease(t *testing.T) {
	h := snapshot.NewHistory(worldCodec, 8)
	require.NoError(t, h.Put(10, worldAt(10)))
	require.ErrorIs(t, h.Put(10, worldAt(99)), snapshot.ErrStaleTick)
	require.ErrorIs(t, h.Put(9, worldAt(9)), snapshot.ErrStaleTick)
	require.Error(t, h.Put(11, nil))
	v, ok := h.Get(10)
	require.True(t, ok)
	require.Equal(t, *worldAt(10), *v)
	require.Equal(t, 1, h.Len())
}

func TestHistoryKeepsCopies(t *testing.T) {
	h := snapshot.NewHistory(worldCodec, 2)
	g := newGame(30, 5, 5)
	g.w.Flag = &Vec3{X: 1, Y: 2, Z: 3}
	want := quantized(&g.w) // g.w's values are already representable
	require.NoError(t, h.Put(1, &g.w))
	g.w.Players[0].Pos.X = 100
	g.w.Players = g.w.Players[:1]
	g.w.Flag.X = 50
	v, ok := h.Get(1)
	require.True(t, ok)
	require.Equal(t, len(want.Players), len(v.Players))
	require.NotEqual(t, float32(100), v.Players[0].Pos.X)
	require.Equal(t, float32(1), v.Flag.X)

	var dst World
	require.True(t, h.Load(1, &dst))
	require.Equal(t, *v, dst)
	dst.Players[1].Health = -5
	require.NotEqual(t, -5, v.Players[1].Health)
	require.False(t, h.Load(2, &dst))

	h.Reset()
	require.Zero(t, h.Len())
	_, ok = h.Get(1)
	require.False(t, ok)
	require.NoError(t, h.Put(1, worldAt(1)), "after Reset any tick goes")
}

func TestNewHistoryPanics(t *testing.T) {
	require.Panics(t, func() { snapshot.NewHistory(worldCodec, 0) })
	require.Panics(t, func() { snapshot.NewHistory(worldCodec, snapshot.MaxHistorySize+1) })
	require.Panics(t, func() { snapshot.NewHistory[World](nil, 4) })
}
