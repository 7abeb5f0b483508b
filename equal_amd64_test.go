//go:build !purego

package bitwire

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// firstDiff finds the same byte with and without the vector comparison
// (where the processor has it), for differences in either half of a
// 64-byte step, at the step's edges and in the word tail after it.
func TestFirstDiffVectorAndWords(t *testing.T) {
	saved := haveAVX2
	defer func() { haveAVX2 = saved }()
	rng := rand.New(rand.NewSource(19))
	for trial := 0; trial < 4000; trial++ {
		n := rng.Intn(1100)
		off := rng.Intn(8)
		a := make([]byte, n+off+8)
		rng.Read(a)
		b := append([]byte(nil), a...)
		for k := off + n; k < len(b); k++ {
			b[k] ^= 0x55 // past the end: differs
		}
		want := n
		if n > 0 && trial%5 != 0 {
			switch trial % 3 {
			case 0:
				want = rng.Intn(n)
			case 1: // at a 32-byte edge
				want = min(n-1, 32*rng.Intn(n/32+1)+rng.Intn(2)*31)
			default: // in the last 64 bytes
				want = max(0, n-1-rng.Intn(64))
			}
			b[off+want] ^= byte(1 << rng.Intn(8))
		}
		a, b = a[off:off+n], b[off:off+n]
		for _, vec := range []bool{false, saved} {
			haveAVX2 = vec
			require.Equal(t, want, firstDiff(a, b), "n %d want %d vector %v", n, want, vec)
		}
	}
}
