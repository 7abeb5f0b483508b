package fields

import (
	"fmt"
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// An index set says which elements of a list of n were removed, added or
// changed in a delta: a sorted set of distinct indexes in [0, n). It is
// coded as its count (bitlen, prefix width 5; left out when the reader
// knows it), then, unless the count is 0 or n, one bit choosing a bitmask
// of n bits, bit i set for index i (0), or Rice-coded gaps (1): a 5-bit
// parameter k, then each gap (the first index, then the distance to the
// previous index minus one) as gap>>k one-bits, a zero bit and the low k
// bits of the gap. The writer picks the bitmask when it is no longer than
// the Rice code with the best k (the least k on ties).

// riceCost is the size of idx's gaps Rice-coded with parameter k.
func riceCost(idx []int32, k int) int {
	total, prev := 0, int32(-1)
	for _, i := range idx {
		g := int(i - prev - 1)
		total += g>>uint(k) + 1 + k
		prev = i
	}
	return total
}

// bestRiceK returns the k in 0..min(23, kmax) of least riceCost (the least
// such k on ties) and that cost. The cost is convex in k: from k to k+1 it
// changes by c minus the sum over gaps of floor(g/2^k) - floor(g/2^(k+1)),
// and each of those terms only shrinks as k grows. So a walk from a guess
// (the bit length of the mean gap) to the first k that its neighbours do
// not beat finds the minimum, in a few passes rather than one per k. One
// pass sums the quotients of the guess and its two neighbours, where the
// walk usually ends; a walk past them costs a pass a step.
func bestRiceK(idx []int32, kmax int) (int, int) {
	kmax = min(kmax, 23)
	mean := (int(idx[len(idx)-1]) + 1) / len(idx)
	k := min(BitsRequired(uint64(mean))-1, kmax)
	k = max(k, 0)
	lo := max(k-1, 0) // the window lo..lo+2 holds k and its neighbours
	var win [3]int
	prev := int32(-1)
	for _, i := range idx {
		g := int(i - prev - 1)
		win[0] += g >> uint(lo)
		win[1] += g >> uint(lo+1)
		win[2] += g >> uint(lo+2)
		prev = i
	}
	c := len(idx)
	costAt := func(k int) int { // riceCost(idx, k)
		if d := uint(k - lo); d < 3 {
			return win[d] + c*(1+k)
		}
		return riceCost(idx, k)
	}
	cost := costAt(k)
	for k > 0 { // down, through ties, to the least k of least cost
		c := costAt(k - 1)
		if c > cost {
			break
		}
		k, cost = k-1, c
	}
	for k < kmax { // or up, while strictly better
		c := costAt(k + 1)
		if c >= cost {
			break
		}
		k, cost = k+1, c
	}
	return k, cost
}

// WriteIndexSet writes idx, a sorted set of distinct indexes in [0, n).
// With countKnown the count is left out: the reader must know it (it passes
// it to ReadIndexSet).
func WriteIndexSet(w *bits.Writer, idx []int32, n int, countKnown bool) {
	c := len(idx)
	if !countKnown {
		WriteBitlen(w, uint64(c), indexCountWidth)
	}
	if c == 0 || c == n {
		return
	}
	// The bitmask wins whenever n ≤ 5 + c: a Rice code takes at least one
	// bit a gap. Otherwise try every useful k (beyond BitsRequired(n) every
	// quotient is 0 and a larger k only costs more).
	bestK, useMask := 0, n <= 5+c
	if !useMask {
		var best int
		bestK, best = bestRiceK(idx, BitsRequired(uint64(n)))
		useMask = n <= 5+best
	}
	if useMask {
		w.WriteBool(false)
		// the bitmask, 64 bits at a time, each word set from the indexes
		// that fall in it
		j := 0
		for base := 0; base < n; base += 64 {
			var word uint64
			for ; j < c && int(idx[j]) < base+64; j++ {
				word |= 1 << (uint(idx[j]) & 63)
			}
			w.WriteBits(word, min(64, n-base))
		}
		return
	}
	w.WriteBool(true)
	w.WriteBits(uint64(bestK), 5)
	prev := int32(-1)
	low := uint64(1)<<uint(bestK) - 1
	// Gaps are gathered in acc (nacc bits) and written a word at a time.
	var acc uint64
	nacc := 0
	kk := uint(bestK) & 63 // (masked shifts: no tests of 64 or more)
	for _, i := range idx {
		g := uint64(i - prev - 1)
		q := g >> kk
		prev = i
		width := int(q) + 1 + bestK
		if width > 64 { // a quotient of 64 or more (rare)
			writeLongGap(w, acc, nacc, g, bestK)
			acc, nacc = 0, 0
			continue
		}
		// The ones, the zero and the low bits at once: q ≤ 63, and q+1 =
		// 64 only with k = 0, when g&low is 0.
		v := 1<<(q&63) - 1 | (g&low)<<((q+1)&63)
		if nacc+width > 64 {
			w.WriteBits(acc, nacc)
			acc, nacc = 0, 0
		}
		acc |= v << uint(nacc&63)
		nacc += width
	}
	w.WriteBits(acc, nacc)
}

// writeLongGap writes the nacc gathered bits acc, then gap g with Rice
// parameter k, whose code is longer than a word. (Out of WriteIndexSet's
// loop, which keeps its registers.)
//
//go:noinline
func writeLongGap(w *bits.Writer, acc uint64, nacc int, g uint64, k int) {
	w.WriteBits(acc, nacc)
	q := g >> uint(k)
	for ; q >= 63; q -= 63 {
		w.WriteBits(1<<63-1, 63)
	}
	w.WriteBits(1<<q-1, int(q)+1) // q ones, then a zero
	w.WriteBits(g, k)
}

// indexCountWidth is the bitlen prefix width of an index set's count.
const indexCountWidth = 5

// ReadIndexCount reads the count of an index set in [0, n), as
// WriteIndexSet writes it when the count is not known; a count over n is
// ErrMalformed.
func ReadIndexCount(r *bits.Reader, n int) (int, error) {
	c, err := ReadBitlen(r, indexCountWidth)
	if err != nil {
		return 0, err
	}
	if c > uint64(n) {
		return 0, fmt.Errorf("%w: index set of %d in %d", ErrMalformed, c, n)
	}
	return int(c), nil
}

// ReadIndexSet reads the indexes of a set of count indexes in [0, n) (the
// count read by ReadIndexCount, or known) into dst[:0], which should have
// room for count, and returns them. Input no writer produces (a bitmask with
// a different count, an index at or past n, a Rice parameter over 23) is
// ErrMalformed.
func ReadIndexSet(r *bits.Reader, dst []int32, n, count int) ([]int32, error) {
	idx := dst[:0]
	if count == n {
		for i := 0; i < n; i++ {
			idx = append(idx, int32(i))
		}
		return idx, nil
	}
	if count == 0 {
		return idx, nil
	}
	rice, err := r.ReadBool()
	if err != nil {
		return nil, err
	}
	if !rice {
		if n > r.Remaining() {
			return nil, bits.ErrUnexpectedEnd
		}
		for base := 0; base < n; base += 64 {
			word, _ := r.ReadBits(min(64, n-base))
			for word != 0 {
				if len(idx) == count {
					return nil, fmt.Errorf("%w: bitmask holds more than %d indexes", ErrMalformed, count)
				}
				idx = append(idx, int32(base+mbits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
		if len(idx) != count {
			return nil, fmt.Errorf("%w: bitmask holds %d indexes, not %d", ErrMalformed, len(idx), count)
		}
		return idx, nil
	}
	k, err := r.ReadBits(5)
	if err != nil {
		return nil, err
	}
	if k >= 24 {
		return nil, fmt.Errorf("%w: Rice parameter %d", ErrMalformed, k)
	}
	prev := int64(-1)
	for j := 0; j < count; j++ {
		var q int64
		for {
			one, err := r.ReadBool()
			if err != nil {
				return nil, err
			}
			if !one {
				break
			}
			q++
			if q > int64(n) {
				return nil, fmt.Errorf("%w: index gap past %d", ErrMalformed, n)
			}
		}
		low, err := r.ReadBits(int(k))
		if err != nil {
			return nil, err
		}
		i := prev + 1 + q<<k + int64(low)
		if i >= int64(n) {
			return nil, fmt.Errorf("%w: index %d past %d", ErrMalformed, i, n)
		}
		idx = append(idx, int32(i))
		prev = i
	}
	return idx, nil
}
