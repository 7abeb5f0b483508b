package replicate

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOrderTop checks orderTop against a full sort: its first k elements
// are the k smallest in order, and the slice keeps its elements, over
// random lengths, k and orders, and slices whose evenly spaced positions
// hold the largest or the smallest values (a pivot taken from them is the
// worst there is).
func TestOrderTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 400; iter++ {
		n := 1 + rng.IntN(3000)
		k := 1 + rng.IntN(min(n, 300))
		c := make([]cand, n)
		for i := range c {
			// Distinct words, as candidates are (one a slot), with ties of
			// the accumulator.
			c[i] = newCand(int32(i), float32(rng.IntN(50)))
		}
		rng.Shuffle(n, func(i, j int) { c[i], c[j] = c[j], c[i] })
		switch iter % 4 {
		case 1, 2: // the sampled positions hold the largest (1) or smallest (2) values
			sorted := slices.Clone(c)
			slices.Sort(sorted)
			if iter%4 == 1 {
				slices.Reverse(sorted)
			}
			at := map[int]bool{}
			for i := 0; i < 64; i++ {
				at[i*n/64] = true
			}
			next := 0
			for i := range c {
				if at[i] {
					c[i] = sorted[next]
					next++
				}
			}
			for i := range c {
				if !at[i] {
					c[i] = sorted[next]
					next++
				}
			}
		}
		want := slices.Clone(c)
		slices.Sort(want)
		orderTop(c, k)
		require.Equal(t, want[:k], c[:k], "n %d k %d case %d", n, k, iter%4)
		got := slices.Clone(c)
		slices.Sort(got)
		require.Equal(t, want, got, "n %d k %d: elements lost or duplicated", n, k)
	}
}
