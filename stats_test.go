package bitwire

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

func TestStatsFullAndDelta(t *testing.T) {
	st := NewStats()
	c := MustFor[DeltaPlayer]().WithStats(st)
	v := DeltaPlayer{Pos: PlayerPos{X: 1}, Yaw: 10, Health: 50}
	var w bits.Writer
	require.NoError(t, c.Encode(&w, &v))
	byPath := map[string]FieldStats{}
	for _, f := range st.Fields() {
		byPath[f.Path] = f
	}
	require.Equal(t, int64(48), byPath["Pos"].Bits)
	require.False(t, byPath["Pos"].Leaf)
	require.Equal(t, int64(17), byPath["Pos.X"].Bits)
	require.True(t, byPath["Pos.X"].Leaf)
	require.Equal(t, int64(10), byPath["Yaw"].Bits)
	require.Equal(t, int64(2), byPath["Flags"].Bits)

	st.Reset()
	cur := v
	cur.Yaw = 20
	w.Reset(nil)
	require.NoError(t, c.EncodeDelta(&w, &v, &cur))
	require.Equal(t, 5+10, w.Len())
	for _, f := range st.Fields() {
		switch f.Path {
		case "Yaw":
			require.Equal(t, int64(11), f.Bits)
			require.Equal(t, int64(1), f.Changed)
		case "Pos", "Health", "Weapon", "Flags":
			require.Equal(t, int64(1), f.Bits, f.Path)
			require.Equal(t, int64(0), f.Changed, f.Path)
			require.Equal(t, int64(1), f.Count, f.Path)
		}
	}
	require.Contains(t, st.String(), "Yaw")
}

func TestStatsEntitySetPaths(t *testing.T) {
	st := NewStats()
	c := MustFor[CubeWorld]().WithStats(st)
	rng := rand.New(rand.NewSource(9))
	base := makeWorld(rng, 20)
	cur := cloneWorld(base)
	cur.Cubes[3].Sleeping = true
	data, err := c.MarshalDelta(&base, &cur)
	require.NoError(t, err)
	// accounting does not change the bytes
	plain, err := MustFor[CubeWorld]().MarshalDelta(&base, &cur)
	require.NoError(t, err)
	require.Equal(t, plain, data)
	var total int64
	paths := []string{}
	for _, f := range st.Fields() {
		paths = append(paths, f.Path)
		if f.Path == "Cubes[].Sleeping" {
			require.Equal(t, int64(1), f.Changed)
		}
		if f.Path == "Tick" || f.Path == "Cubes" {
			total += f.Bits
		}
	}
	require.Contains(t, strings.Join(paths, " "), "Cubes[].Sleeping")
	require.Equal(t, int64(len(data)*8), (total+7)/8*8)
}

func TestStatsDropsFailedMessages(t *testing.T) {
	st := NewStats()
	c := MustFor[Transform]().WithStats(st)
	bad := Transform{X: 1000}
	_, err := c.Marshal(&bad)
	require.Error(t, err)
	for _, f := range st.Fields() {
		require.Zero(t, f.Bits, f.Path)
	}
}

// The zero Stats is ready to use, like NewStats().
func TestStatsZeroValue(t *testing.T) {
	var st Stats
	c := MustFor[DeltaPlayer]().WithStats(&st)
	v := DeltaPlayer{Pos: PlayerPos{X: 1}, Yaw: 10, Health: 50}
	_, err := c.Marshal(&v)
	require.NoError(t, err)
	require.NotEmpty(t, st.Fields())
	require.Equal(t, "Pos", st.Fields()[0].Path)
}

type ooEntity struct {
	ID uint16 `net:"id,bits=16"`
	X  int8
}

type ooSet struct{ Es []ooEntity }

// Issue 14: a shuffled but unchanged entity set costs bits silently; Stats
// now counts the entities out of id order, and its table says so.
func TestStatsCountsUnorderedEntities(t *testing.T) {
	var base, cur ooSet
	for i := range 900 {
		base.Es = append(base.Es, ooEntity{ID: uint16(i + 1)})
	}
	cur.Es = append([]ooEntity(nil), base.Es...)
	rand.New(rand.NewSource(3)).Shuffle(len(cur.Es), func(i, j int) { cur.Es[i], cur.Es[j] = cur.Es[j], cur.Es[i] })
	st := NewStats()
	c := MustFor[ooSet]().WithStats(st)
	_, err := c.MarshalDelta(&base, &cur)
	require.NoError(t, err)
	want := 0
	for j := 1; j < len(cur.Es); j++ {
		if cur.Es[j].ID < cur.Es[j-1].ID {
			want++
		}
	}
	var got int64
	for _, f := range st.Fields() {
		if f.Path == "Es" {
			got = f.Unordered
		}
	}
	require.Equal(t, int64(want), got)
	require.Contains(t, st.String(), fmt.Sprintf("Es: %d entities out of id order", want))

	// A sorted set notes nothing.
	st.Reset()
	_, err = c.MarshalDelta(&base, &base)
	require.NoError(t, err)
	require.NotContains(t, st.String(), "out of id order")
}

// BenchmarkStatsDelta measures what accounting costs a delta of a world of
// 300 entities (15 changed): allocations and bytes per message, with
// Stats off and on.
func BenchmarkStatsDelta(b *testing.B) {
	base, cur := changedWorlds()
	for _, on := range []bool{false, true} {
		name := "off"
		c := MustFor[CubeWorld]()
		if on {
			name = "on"
			c = c.WithStats(NewStats())
		}
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			var err error
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if buf, err = c.AppendDelta(buf[:0], &base, &cur); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStatsFull is BenchmarkStatsDelta for a message in full.
func BenchmarkStatsFull(b *testing.B) {
	_, cur := changedWorlds()
	for _, on := range []bool{false, true} {
		name := "off"
		c := MustFor[CubeWorld]()
		if on {
			name = "on"
			c = c.WithStats(NewStats())
		}
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 1<<16)
			var err error
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if buf, err = c.Append(buf[:0], &cur); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
