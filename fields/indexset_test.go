package fields

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// bestRiceK's walk finds what trying every k finds: the least cost, at the
// least k that has it.
func TestBestRiceKIsTheArgmin(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	for trial := 0; trial < 5000; trial++ {
		n := 2 + rng.Intn(5000)
		var idx []int32
		p := math.Pow(10, -4*rng.Float64())
		for i := 0; i < n; i++ {
			if rng.Float64() < p {
				idx = append(idx, int32(i))
			}
		}
		if len(idx) == 0 {
			continue
		}
		kmax := 1 + rng.Intn(24)
		wantK, want := 0, riceCost(idx, 0)
		for k := 1; k <= min(kmax, 23); k++ {
			if c := riceCost(idx, k); c < want {
				wantK, want = k, c
			}
		}
		k, cost := bestRiceK(idx, kmax)
		require.Equal(t, [2]int{wantK, want}, [2]int{k, cost}, "%d indexes of %d, kmax %d", len(idx), n, kmax)
	}
}
