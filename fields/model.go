package fields

import mbits "math/bits"

// Static codes: with a trained model (the root package's Model), a delta
// carries no adaptive state at all. A windowed field codes its differences
// with one fixed Rice parameter; a quaternion field codes its mode with a
// fixed order of the five mode codes and its three differences with fixed
// parameters chosen by context (QuatTable). Training picks each parameter
// to minimize the bits of the recorded differences (RiceCost).

// QuatClasses is the number of magnitude classes the second and third
// differences of a quaternion are conditioned on.
const QuatClasses = 8

// MagClass returns the magnitude class of m: its bit length, at most
// QuatClasses - 1.
func MagClass(m uint64) int { return min(mbits.Len64(m), QuatClasses-1) }

// QuatTable is a quaternion field's static code: Order lists the mode at
// each code position (codes 0, 10, 110, 1110, 1111; modes 0..3 the
// relative ranks, 4 absolute), K0 the parameter of the first difference by
// mode (rank), K1 that of the second by MagClass(|e0|), K2 that of the
// third by MagClass((|e0| + |e1| + 1) / 2).
type QuatTable struct {
	Order [5]uint8
	K0    [4]uint8
	K1    [QuatClasses]uint8
	K2    [QuatClasses]uint8
}

// Valid reports whether t can code a quaternion whose components take n
// bits: Order a permutation of 0..4, every parameter at most n.
func (t *QuatTable) Valid(n int) bool {
	var seen [5]bool
	for _, m := range t.Order {
		if m > 4 || seen[m] {
			return false
		}
		seen[m] = true
	}
	for _, k := range t.K0 {
		if int(k) > n {
			return false
		}
	}
	for i := range t.K1 {
		if int(t.K1[i]) > n || int(t.K2[i]) > n {
			return false
		}
	}
	return true
}

// RiceCost counts, for each parameter k, the bits that Rice codes with
// parameter k would spend on the values added.
type RiceCost [RiceMaxK + 1]uint64

// Add adds the cost of v with escape width width.
func (c *RiceCost) Add(v int64, width int) {
	for k := range c {
		c[k] += uint64(RiceBits(v, k, width))
	}
}

// Best returns the parameter, at most maxK, of the least cost (the smallest
// on ties); def when nothing was added.
func (c *RiceCost) Best(maxK int, def uint8) uint8 {
	maxK = min(maxK, RiceMaxK)
	if c[0] == 0 {
		return min(def, uint8(maxK))
	}
	best := 0
	for k := 1; k <= maxK; k++ {
		if c[k] < c[best] {
			best = k
		}
	}
	return uint8(best)
}

// QuatStats is what training records of one quaternion field.
type QuatStats struct {
	Mode   [5]uint64
	K0     [4]RiceCost
	K1, K2 [QuatClasses]RiceCost
}

// Record records the symbols of cur (packed) against base (packed; baseOK
// false when it could not be), as the adaptive code would choose its mode.
func (q *Quat) Record(st *QuatStats, base uint64, baseOK bool, cur uint64) {
	if !baseOK {
		st.Mode[quatModeAbsolute]++
		return
	}
	rank, e := q.quatDiffs(base, cur)
	s := NewQuatDeltaState()
	size := 2
	for i := range 3 {
		size += RiceBits(e[i], s.params(e, i), q.n)
	}
	if size > 3+q.Bits() {
		st.Mode[quatModeAbsolute]++
		return
	}
	st.Mode[rank]++
	st.K0[rank].Add(e[0], q.n)
	st.K1[MagClass(abs64(e[0]))].Add(e[1], q.n)
	st.K2[MagClass((abs64(e[0])+abs64(e[1])+1)/2)].Add(e[2], q.n)
}

// Table returns the static code that spends the fewest bits on what st
// recorded, for components of n bits: modes ordered by decreasing count
// (the adaptive order on ties), each parameter the cheapest (at most n).
func (st *QuatStats) Table(n int) QuatTable {
	var t QuatTable
	t.Order = quatModeOrder[0]
	// A stable insertion sort by decreasing count.
	for i := 1; i < 5; i++ {
		for j := i; j > 0 && st.Mode[t.Order[j]] > st.Mode[t.Order[j-1]]; j-- {
			t.Order[j], t.Order[j-1] = t.Order[j-1], t.Order[j]
		}
	}
	for i := range t.K0 {
		t.K0[i] = st.K0[i].Best(n, 1)
	}
	for i := range t.K1 {
		d := uint8(max(i-1, 0))
		t.K1[i] = st.K1[i].Best(n, d)
		t.K2[i] = st.K2[i].Best(n, d)
	}
	return t
}

// NewQuatDeltaStateTable returns the state of a quaternion field coded with
// the static table t: it never changes.
func NewQuatDeltaStateTable(t *QuatTable) QuatDeltaState {
	return QuatDeltaState{static: true, tab: *t}
}

// Record adds the difference of cur from base to c when it lies in the
// window (its escape width EscapeBits()).
func (w Window) Record(c *RiceCost, base, cur uint64) {
	diff := int64(cur - base)
	if diff >= w.lo && diff <= w.hi {
		c.Add(diff, w.esc)
	}
}

// NewStaticState returns the state of a window coded with the fixed Rice
// parameter k (at most EscapeBits()): it never changes.
func (w Window) NewStaticState(k int) WindowState {
	return WindowState{fixed: uint8(min(k, w.esc)) + 1}
}
