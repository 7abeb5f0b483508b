package replicate

import (
	"math"
	"slices"
)

// cand is an entity a Peer may send this tick, with its accumulated
// priority, packed in one word whose order as an integer is the priority
// order: the complement of the accumulator's bits above, the slot below.
// An accumulator is never negative (priorities below 0 count as 0), and
// the bits of non-negative floats ascend with their values, so ascending
// cands are descending accumulators, ties by ascending slot. The order is
// then a plain comparison of integers, which the sort and the selection do
// several times per candidate. (A NaN priority, which the application
// should not return, sorts before every number.)
type cand uint64

func newCand(slot int32, acc float32) cand {
	return cand(uint64(^math.Float32bits(acc))<<32 | uint64(uint32(slot)))
}

func (c cand) slot() int32  { return int32(uint32(c)) }
func (c cand) acc() float32 { return math.Float32frombits(^uint32(c >> 32)) }

// chunk is how many candidates are put in priority order at a time: about
// what a packet of the default budget holds of small entities (in
// BenchmarkServerTick about 105 are taken a packet), so one selection
// usually serves a packet, and few enough that sorting them costs little
// (128 against 256: 2% fewer instructions a tick there; 112 and 160 did
// no better).
const chunk = 128

// orderTop reorders c so that its first min(k, len(c)) elements are the
// ones of highest accumulator, in descending order (ties by slot, so the
// order is deterministic). The rest is left in no particular order. Cost:
// O(len(c)) expected for the selection, O(k log k) for the sort.
func orderTop(c []cand, k int) {
	if k < len(c) {
		selectTop(c, k)
		c = c[:k]
	}
	slices.Sort(c)
}

// selectTop moves the k first elements in priority order (the smallest
// cands) to c[:k] (Hoare's selection with a median-of-three pivot),
// 0 < k < len(c).
func selectTop(c []cand, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		m := lo + (hi-lo)/2
		// Median of three into c[m].
		if c[hi] < c[lo] {
			c[lo], c[hi] = c[hi], c[lo]
		}
		if c[m] < c[lo] {
			c[m], c[lo] = c[lo], c[m]
		}
		if c[hi] < c[m] {
			c[m], c[hi] = c[hi], c[m]
		}
		pivot := c[m]
		i, j := lo, hi
		for i <= j {
			for c[i] < pivot {
				i++
			}
			for pivot < c[j] {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		// c[lo..j] ≤ pivot, c[i..hi] ≥, c[j+1..i-1] equal to the pivot.
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}
