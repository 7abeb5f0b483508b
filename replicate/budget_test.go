package replicate_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/replicate"
)

// No packet is ever over its budget, and with a bandwidth budget no
// tick-rate window of ticks (one second) carries more than it.
func TestBudgetNeverExceeded(t *testing.T) {
	s := newSim(t, 5, 2000, replicate.WithTickRate(30))
	s.move, s.spawn, s.despawn = 0.1, 0.005, 0.005
	budgets := []replicate.PeerConfig[Body]{
		{Budget: replicate.MinBudget},
		{Budget: 300},
		{Budget: 1200},
		{Budget: 1200, Bandwidth: 8000},  // 266 bytes a tick
		{Budget: 500, Bandwidth: 100000}, // several packets a tick
	}
	for _, cfg := range budgets {
		s.addClient(cfg, 0.1, 0, 2)
	}
	ticks := 600
	if testing.Short() {
		ticks = 150
	}
	for range ticks {
		s.step()
	}
	for k, c := range s.clients {
		cfg := budgets[k]
		require.LessOrEqual(t, c.maxBytes, cfg.Budget, "client %d", k)
		require.Greater(t, c.peer.Stats().Packets, 0)
		if cfg.Bandwidth > 0 {
			most := 0
			for i := range c.bytes {
				sum := 0
				for _, b := range c.bytes[i:min(i+30, len(c.bytes))] {
					sum += b
				}
				most = max(most, sum)
			}
			require.LessOrEqual(t, most, cfg.Bandwidth, "client %d: %d bytes in one second", k, most)
			require.Greater(t, most, cfg.Bandwidth*8/10, "client %d: the budget should be used", k)
		}
	}
	require.Greater(t, s.clients[4].peer.Stats().Packets, ticks, "several packets a tick")
}

// The entity with the highest accumulator goes first: with every entity
// new (same full size) and the priority its id, the first packet carries
// the ids from the highest down, with none left out in between; the next
// packet carries the next ones.
func TestPriorityOrder(t *testing.T) {
	p := newPair(t, replicate.PeerConfig[Body]{Budget: 200, Priority: func(id uint32, e *Body) float32 { return float32(id) }})
	p.advance()
	for id := uint32(1); id <= 100; id++ {
		p.set(id)
	}
	first, err := p.cl.Decode(p.packet())
	require.NoError(t, err)
	got := slices.Clone(first.Updated)
	require.NotEmpty(t, got)
	require.Less(t, len(got), 100)
	for i, id := range got {
		require.Equal(t, uint32(100-(len(got)-1-i)), id, "sent %v", got)
	}
	// Tick 2: the unsent ones have accumulated twice their id; the highest
	// of them comes first.
	p.advance()
	second, err := p.cl.Decode(p.packet())
	require.NoError(t, err)
	lowest := got[0]
	require.Contains(t, second.Updated, lowest-1)
	for _, id := range second.Updated {
		require.Less(t, id, lowest)
	}
}

// Sending resets an accumulator, and the others keep growing: an entity of
// a third of another's priority still gets every fourth slot.
func TestAccumulatorResetWhenSent(t *testing.T) {
	pri := map[uint32]float32{1: 10, 2: 3}
	p := newPair(t, replicate.PeerConfig[Body]{Budget: replicate.MinBudget, Priority: func(id uint32, e *Body) float32 { return pri[id] }})
	p.advance()
	p.set(1)
	p.set(2)
	var order []uint32
	for range 6 {
		info, err := p.cl.Decode(p.packet())
		require.NoError(t, err)
		require.Len(t, info.Updated, 1, "one entity fits")
		order = append(order, info.Updated[0])
		p.advance()
		p.set(1) // both change every tick
		p.set(2)
	}
	// acc: tick1 1:10 2:3 → 1 (reset); tick2 1:10 2:6 → 1; tick3 1:10
	// 2:9 → 1; tick4 1:10 2:12 → 2; ...
	require.Equal(t, []uint32{1, 1, 1, 2, 1, 1}, order)
}
