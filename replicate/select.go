package replicate

import "slices"

// cand is an entity a Peer may send this tick, with its accumulated
// priority.
type cand struct {
	slot int32
	acc  float32
}

// chunk is how many candidates are put in priority order at a time: more
// than a packet holds in practice, so one selection serves a packet, and
// few enough that ordering them is cheap next to scanning the world.
const chunk = 256

// orderTop reorders c so that its first min(k, len(c)) elements are the
// ones of highest accumulator, in descending order (ties by slot, so the
// order is deterministic). The rest is left in no particular order. Cost:
// O(len(c)) expected for the selection, O(k log k) for the sort.
func orderTop(c []cand, k int) {
	if k < len(c) {
		selectTop(c, k)
		c = c[:k]
	}
	slices.SortFunc(c, func(a, b cand) int {
		switch {
		case a.acc > b.acc:
			return -1
		case a.acc < b.acc:
			return 1
		}
		return int(a.slot - b.slot)
	})
}

// before is the strict order of orderTop: higher accumulator first.
func before(a, b cand) bool {
	return a.acc > b.acc || (a.acc == b.acc && a.slot < b.slot)
}

// selectTop moves the k first elements in the order of before to c[:k]
// (Hoare's selection with a median-of-three pivot), 0 < k < len(c).
func selectTop(c []cand, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		m := lo + (hi-lo)/2
		// Median of three into c[m].
		if before(c[hi], c[lo]) {
			c[lo], c[hi] = c[hi], c[lo]
		}
		if before(c[m], c[lo]) {
			c[m], c[lo] = c[lo], c[m]
		}
		if before(c[hi], c[m]) {
			c[m], c[hi] = c[hi], c[m]
		}
		pivot := c[m]
		i, j := lo, hi
		for i <= j {
			for before(c[i], pivot) {
				i++
			}
			for before(pivot, c[j]) {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		// c[lo..j] ≤ pivot-order, c[i..hi] ≥, c[j+1..i-1] equal to the pivot.
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
