package fields

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/bits"
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

// WriteIndexSet writes, bit for bit, what its description says, written
// here a bit at a time: the count, then the bitmask or the Rice code of
// the least k of least cost, for sets from empty to full, with gaps whose
// quotients reach past 63.
func TestWriteIndexSetBitExact(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.Intn(3000)
		var idx []int32
		p := math.Pow(10, -4*rng.Float64())
		if trial%10 == 0 {
			p = 1 - p/100 // nearly full: bitmasks
		}
		for i := 0; i < n; i++ {
			if rng.Float64() < p {
				idx = append(idx, int32(i))
			}
		}
		if trial%7 == 0 && n > 1000 { // one near neighbour, one far away
			idx = []int32{1, int32(n - 1)}
		}
		if trial%11 == 0 { // neighbours, then quotients past 63 (k small)
			n = 2000 + rng.Intn(3000)
			idx = idx[:0]
			for i := int32(0); i < int32(50+rng.Intn(100)); i++ {
				idx = append(idx, i)
			}
			idx = append(idx, int32(n-2-rng.Intn(20)), int32(n-1))
		}
		countKnown := trial%2 == 0
		var got, want bits.Writer
		WriteIndexSet(&got, idx, n, countKnown)
		refIndexSet(&want, idx, n, countKnown)
		require.Equal(t, want.Len(), got.Len(), "%d indexes of %d", len(idx), n)
		require.Equal(t, want.Bytes(), got.Bytes(), "%d indexes of %d", len(idx), n)
	}
}

// refIndexSet is the index set's coding a bit at a time.
func refIndexSet(w *bits.Writer, idx []int32, n int, countKnown bool) {
	c := len(idx)
	if !countKnown {
		WriteBitlen(w, uint64(c), indexCountWidth)
	}
	if c == 0 || c == n {
		return
	}
	bestK, best := 0, riceCost(idx, 0)
	for k := 1; k <= min(BitsRequired(uint64(n)), 23); k++ {
		if cost := riceCost(idx, k); cost < best {
			bestK, best = k, cost
		}
	}
	if n <= 5+best {
		w.WriteBool(false)
		set := map[int32]bool{}
		for _, i := range idx {
			set[i] = true
		}
		for i := 0; i < n; i++ {
			w.WriteBool(set[int32(i)])
		}
		return
	}
	w.WriteBool(true)
	for b := 0; b < 5; b++ {
		w.WriteBool(bestK>>b&1 == 1)
	}
	prev := int32(-1)
	for _, i := range idx {
		g := int(i - prev - 1)
		for q := g >> bestK; q > 0; q-- {
			w.WriteBool(true)
		}
		w.WriteBool(false)
		for b := 0; b < bestK; b++ {
			w.WriteBool(g>>b&1 == 1)
		}
		prev = i
	}
}
