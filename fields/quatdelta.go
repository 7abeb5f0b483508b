package fields

import (
	"fmt"
	"math"
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// A quaternion delta codes a changed quaternion against its baseline, both
// packed by Pack. Its first symbol is the mode, one of
//
//	relative, rank 0: the same dropped component as the baseline
//	relative, rank 1: the baseline's largest coded component is dropped
//	relative, rank 2 and 3: its second or third coded component
//	absolute: the Bits() bits of Pack
//
// (the baseline's three coded components ranked by magnitude, |2i - steps|
// of their indexes i, larger first, lower component first on ties), coded
// as quatModeOrder says: usually 0 for rank 0, 10 for rank 1, 110 for
// absolute, 1110 and 1111 for ranks 2 and 3. A
// relative quaternion then holds three index differences, cur - base in
// the component order of the new dropped component, each in the Rice code
// with an Exp-Golomb escape (RiceEG; wire version 4) with a parameter the
// reader derives as the writer does (QuatDeltaState).
//
// When the dropped component changes, the baseline is first re-expressed
// on the index grid, exactly in integers (ReexpressQuat), so that the
// differences stay small: that is what lets a rotation that crosses over
// from one largest component to another be sent as a small change.
//
// The writer takes whichever of the relative and absolute forms is
// shorter (relative on a tie), so a delta never costs more than
// DeltaMaxBits.

// QuatDeltaState is the adaptive part of the code, one per quaternion
// field per packet: a running mean of index differences, which sets the
// Rice parameter of the first difference; the second and third follow the
// differences of the same quaternion before them.
type QuatDeltaState struct {
	mean     RiceMean
	afterAbs uint8 // 1 when the node's last quaternion was absolute
	warm     bool  // a relative quaternion of the node was coded
}

// quatDeltaStart is the running mean a packet starts with, in grid steps.
const quatDeltaStart = 2

// The differences' code is the Rice code with an Exp-Golomb escape
// (RiceEG). Its unary limit is quatUnary, but for the first difference of
// a node's first relative quaternion in a message, quatColdUnary: its
// parameter is the starting mean's guess, and a turn larger than the
// guess reaches the Exp-Golomb part, which costs about two bits for each
// doubling, sooner.
const (
	quatUnary     = 5
	quatColdUnary = 3
)

// k0 returns the parameter of the first difference.
func (s *QuatDeltaState) k0() int { return s.mean.K() }

// u0 returns the unary limit of the first difference.
func (s *QuatDeltaState) u0() int {
	if !s.warm {
		return quatColdUnary
	}
	return quatUnary
}

// NewQuatDeltaState returns the state at the start of a packet.
func NewQuatDeltaState() QuatDeltaState {
	return QuatDeltaState{mean: NewRiceMean(quatDeltaStart)}
}

// ExpandQuat returns the four grid indexes of the packed quaternion u, in
// component order: the three coded ones as they are, and the dropped one
// rebuilt in integers. In half steps from the middle of the grid a coded
// index i is s = 2i - steps, the unit length says the dropped component is
// sqrt(T) half steps with T = 2·steps² - s₀² - s₁² - s₂² (0 when negative),
// and its index is the nearest, floor((isqrt(T) + steps + 1)/2), at most
// steps. Integer arithmetic makes every implementation agree to the bit.
func (q *Quat) ExpandQuat(u uint64) [4]uint64 {
	m := int(u & 3)
	mask := uint64(1)<<uint(q.n) - 1
	n := uint(q.n)
	c := [3]uint64{u >> 2 & mask, u >> (2 + n) & mask, u >> (2 + 2*n) & mask}
	steps := int64(q.steps)
	t := 2 * steps * steps
	for _, i := range c {
		s := 2*int64(i) - steps
		t -= s * s
	}
	var out [4]uint64
	out[m] = min(uint64(isqrt(max(t, 0))+steps+1)/2, q.steps)
	o := &quatOthers[m]
	for k := range 3 {
		out[o[k]] = c[k]
	}
	return out
}

// isqrt returns floor(sqrt(x)) for 0 <= x < 2^62, exactly.
func isqrt(x int64) int64 {
	if x < 2 {
		return x
	}
	// A float guess within one of the answer, then corrected in integers.
	r := int64(math.Sqrt(float64(x)))
	for r*r > x {
		r--
	}
	for (r+1)*(r+1) <= x {
		r++
	}
	return r
}

// isqrtSmall is isqrt for 0 <= x < 2^50, where the float square root is
// already exact: float64(x) is x, and for r² < x < (r+1)² the root lies
// more than 1/(2(r+1)) below r+1, more than half a float64 ulp of r+1
// (under (r+1)·2^-53) while (r+1)² < 2^52, so its rounding stays below
// r+1, and it stays at or above r, which is a float64.
func isqrtSmall(x int64) int64 { return int64(math.Sqrt(float64(x))) }

// ReexpressQuat returns the three indexes the baseline u (packed) has when
// component m is the dropped one instead: its four indexes (ExpandQuat),
// all flipped (i -> steps - i, the same rotation) when component m's is
// below the middle of the grid, so that the dropped component is positive,
// then the three other than m in component order.
func (q *Quat) ReexpressQuat(u uint64, m int) [3]uint64 {
	all := q.ExpandQuat(u)
	if 2*all[m] < q.steps {
		for k := range all {
			all[k] = q.steps - all[k]
		}
	}
	o := &quatOthers[m&3]
	return [3]uint64{all[o[0]], all[o[1]], all[o[2]]}
}

// quatRanks returns the dropped component for each relative mode: the
// baseline's own, then its coded components by decreasing magnitude.
func (q *Quat) quatRanks(base uint64) [4]int {
	m := int(base & 3)
	o := &quatOthers[m]
	n := uint(q.n)
	mask := uint64(1)<<n - 1
	var d [3]uint64
	for k := range 3 {
		d[k] = q.dist(base >> (2 + uint(k)*n) & mask)
	}
	// A stable sort of three by decreasing magnitude.
	r := [3]int{0, 1, 2}
	if d[r[1]] > d[r[0]] {
		r[0], r[1] = r[1], r[0]
	}
	if d[r[2]] > d[r[1]] {
		r[1], r[2] = r[2], r[1]
		if d[r[1]] > d[r[0]] || d[r[1]] == d[r[0]] && r[1] < r[0] {
			r[0], r[1] = r[1], r[0]
		}
	}
	return [4]int{m, int(o[r[0]]), int(o[r[1]]), int(o[r[2]])}
}

// quatModeAbsolute is the mode of the absolute form; modes 0..3 are the
// relative forms by rank.
const quatModeAbsolute = 4

// The mode codes are 0, 10, 110, 1110 and 1111 (bits in stream order); the
// code for position i is i one bits then a zero, but for the last, four
// ones. quatModeOrder lists the mode at each position: the usual order,
// and the order after an absolute quaternion of the same node in the
// message, where another is likely (a message of teleports, or of new
// random rotations, costs one bit a quaternion more than the plain coding,
// not three).
var quatModeOrder = [2][5]uint8{
	{0, 1, quatModeAbsolute, 2, 3},
	{quatModeAbsolute, 0, 1, 2, 3},
}

// modeCode returns the code of a mode (low bit first) and its length, from
// quatModeCodes.
func (s *QuatDeltaState) modeCode(mode int) (uint64, int) {
	c := &quatModeCodes[s.afterAbs&1][mode&7]
	return uint64(c.code), int(c.n)
}

// quatModeCodes is quatModeOrder inverted: the code of each mode after
// each kind of quaternion (built from it once, so the two cannot differ).
var quatModeCodes = func() (t [2][8]struct{ code, n uint8 }) {
	for a, order := range quatModeOrder {
		for i, mode := range order {
			code, n := uint8(1)<<uint(i)-1, uint8(i+1)
			if i == 4 {
				code, n = 0b1111, 4
			}
			t[a][mode] = struct{ code, n uint8 }{code, n}
		}
	}
	return t
}()

// readMode reads a mode code.
func (s *QuatDeltaState) readMode(r *bits.Reader) (int, error) {
	i := min(mbits.TrailingZeros64(^r.Peek(4)), 4)
	n := i + 1
	if i == 4 {
		n = 4
	}
	if err := r.Skip(n); err != nil {
		return 0, err
	}
	return int(quatModeOrder[s.afterAbs&1][i]), nil
}

// ComponentBits returns n, the bits of each of the three coded components.
func (q Quat) ComponentBits() int { return q.n }

// DeltaMaxBits returns the largest size of a quaternion delta (without its
// changed bit): the absolute mode and Bits() bits.
func (q Quat) DeltaMaxBits() int { return 3 + q.Bits() }

// quatDiffs returns the mode (rank) and the three differences of cur
// against base for a relative coding (diffs, as an array).
func (q *Quat) quatDiffs(base, cur uint64) (int, [3]int64) {
	rank, e0, e1, e2 := q.diffs(base, cur)
	return rank, [3]int64{e0, e1, e2}
}

// diffs returns the mode (rank) and the three differences of cur against
// base for a relative coding: quatRanks' rank of cur's dropped component
// and the differences against ReexpressQuat's indexes, computed without
// building their arrays (TestQuatDeltaMatchesReference holds them to
// those definitions), as scalars, which a call returns in registers. In
// half steps from the middle of the grid a baseline index is
// s = 2i - steps; the rebuilt component (ExpandQuat) goes where quatCross
// says; the rank of a new dropped component is one more than the number
// of the baseline's other coded components larger in magnitude, or as
// large and before it; and the re-expressed indexes are flipped to
// steps - i when the new dropped component is below the middle.
func (q *Quat) diffs(base, cur uint64) (rank int, e0, e1, e2 int64) {
	n := uint(q.n) & 31
	mask := uint64(1)<<n - 1
	bb, cc := base>>2, cur>>2
	b0, c0 := int64(bb&mask), int64(cc&mask)
	bb, cc = bb>>n, cc>>n
	b1, c1 := int64(bb&mask), int64(cc&mask)
	bb, cc = bb>>n, cc>>n
	b2, c2 := int64(bb&mask), int64(cc&mask)
	if base&3 == cur&3 {
		return 0, c0 - b0, c1 - b1, c2 - b2
	}
	steps := int64(q.steps)
	s0, s1, s2 := 2*b0-steps, 2*b1-steps, 2*b2-steps
	t := 2*steps*steps - s0*s0 - s1*s1 - s2*s2
	x := &quatCross[base&3][cur&3]
	v := [4]int64{b0, b1, b2, min((isqrtSmall(max(t, 0))+steps+1)>>1, steps)} // t < 2^41; >>1: /2 of a non-negative
	jm := x.jm & 3
	sm := 2*v[jm] - steps
	dm := abs64(sm)
	d0, d1, d2 := abs64(s0), abs64(s1), abs64(s2)
	rank = 1
	if d0 > dm || d0 == dm && jm > 0 {
		rank++
	}
	if d1 > dm || d1 == dm && jm > 1 {
		rank++
	}
	if d2 > dm {
		rank++
	}
	// f is 0, or -1 to flip: steps&f + (i^f - f) is i or steps - i.
	f := sm >> 63
	o := steps & f
	return rank, c0 - (o + (v[x.src[0]&3] ^ f - f)), c1 - (o + (v[x.src[1]&3] ^ f - f)), c2 - (o + (v[x.src[2]&3] ^ f - f))
}

// quatCross tells diffs, for the baseline's dropped component mb and
// the new one m (different), where the new coded components come from
// (src: 0..2 the baseline's coded index at that position, 3 the rebuilt
// one) and where m is among the baseline's coded ones (jm). Built from
// quatOthers.
var quatCross = func() (t [4][4]quatCrossEntry) {
	for mb := range 4 {
		for m := range 4 {
			if m == mb {
				continue
			}
			x := &t[mb][m]
			for k, comp := range quatOthers[m] {
				x.src[k] = 3 // mb, the rebuilt component
				for j, bc := range quatOthers[mb] {
					if bc == comp {
						x.src[k] = uint8(j)
					}
				}
			}
			for j, bc := range quatOthers[mb] {
				if int(bc) == m {
					x.jm = uint8(j)
				}
			}
		}
	}
	return t
}()

// quatCrossEntry is an entry of quatCross.
type quatCrossEntry struct {
	src [3]uint8
	jm  uint8
}

// params returns the Rice parameter of the next difference and the context
// after it: the first follows the packet's running mean; the second and
// third the mean of the differences before them in this quaternion.
func (s *QuatDeltaState) params(e [3]int64, k int) int {
	switch k {
	case 0:
		return s.k0()
	case 1:
		return NewRiceMean(uint32(min(abs64(e[0]), 1<<20))).K()
	}
	return NewRiceMean(uint32(min((abs64(e[0])+abs64(e[1])+1)/2, 1<<20))).K()
}

// allParams returns the three parameters params gives for the differences
// e, without a call and a switch for each.
func (s *QuatDeltaState) allParams(e [3]int64) [3]int {
	a0, a1 := abs64(e[0]), abs64(e[1])
	return [3]int{s.mean.K(), NewRiceMean(uint32(min(a0, 1<<20))).K(), NewRiceMean(uint32(min((a0+a1+1)/2, 1<<20))).K()}
}

// WriteDelta writes cur (packed by Pack) against base (packed by Pack;
// baseOK false when the baseline could not be packed, which forces the
// absolute mode), and updates s. It writes no changed bit. Either form
// goes out in one write when it fits 64 bits (always, up to 19 bits a
// component). It spells Bits() and DeltaMaxBits() out: their value
// receivers would copy q.
func (q *Quat) WriteDelta(w *bits.Writer, s *QuatDeltaState, base uint64, baseOK bool, cur uint64) {
	if baseOK {
		rank, e0, e1, e2 := q.diffs(base, cur)
		a0, a1, a2 := abs64(e0), abs64(e1), abs64(e2)
		k0, k1, k2 := s.k0(), riceK(a0), riceK((a0+a1+1)/2)
		code, cn := s.modeCode(rank)
		// At most 64 bits a code up to 20 bits a component (k <= 20). A
		// quotient in its unary part is the plain Rice code's short form
		// (riceLen and riceCode, inlined; the unary limits are below
		// RiceEscape); another takes the Exp-Golomb escape instead.
		u0 := uint64(s.u0())
		q0, q1, q2 := a0>>(uint(k0)&63), a1>>(uint(k1)&63), a2>>(uint(k2)&63)
		n0, n1, n2 := riceLen(a0, q0, k0, 0), riceLen(a1, q1, k1, 0), riceLen(a2, q2, k2, 0)
		if q0 >= u0 {
			n0 = riceEGEscapeLen(a0, k0, int(u0))
		}
		if q1 >= quatUnary {
			n1 = riceEGEscapeLen(a1, k1, quatUnary)
		}
		if q2 >= quatUnary {
			n2 = riceEGEscapeLen(a2, k2, quatUnary)
		}
		if size := cn + n0 + n1 + n2; size <= 5+3*q.n {
			// The codes, only for a relative form that is written.
			c0 := riceCode(a0, q0, uint64(e0)>>63, k0, n0)
			c1 := riceCode(a1, q1, uint64(e1)>>63, k1, n1)
			c2 := riceCode(a2, q2, uint64(e2)>>63, k2, n2)
			if q0 >= u0 {
				c0, _ = riceEGEscape(a0, uint64(e0)>>63, k0, int(u0))
			}
			if q1 >= quatUnary {
				c1, _ = riceEGEscape(a1, uint64(e1)>>63, k1, quatUnary)
			}
			if q2 >= quatUnary {
				c2, _ = riceEGEscape(a2, uint64(e2)>>63, k2, quatUnary)
			}
			if size <= 64 {
				w.WriteBits(code|c0<<(uint(cn)&63)|c1<<(uint(cn+n0)&63)|c2<<(uint(cn+n0+n1)&63), size)
			} else {
				w.WriteBits(code, cn)
				w.WriteBits(c0, n0)
				w.WriteBits(c1, n1)
				w.WriteBits(c2, n2)
			}
			s.updateMags(a0, a1, a2)
			return
		}
	}
	code, cn := s.modeCode(quatModeAbsolute)
	if nb := cn + 2 + 3*q.n; nb <= 64 {
		w.WriteBits(code|cur<<(uint(cn)&63), nb)
	} else {
		w.WriteBits(code, cn)
		w.WriteBits(cur, 2+3*q.n)
	}
	s.afterAbs = 1
}

// riceK is the parameter params derives from a mean magnitude a, for the
// writer, whose differences of indexes of at most 20 bits are below 2^20:
// there neither of RiceMean's caps applies (a reader's params keeps them,
// since a short Rice form can spell more).
func riceK(a uint64) int { return riceKOf16(uint32(a) << 4) }

// update moves the packet's running mean toward this relative
// quaternion's mean difference (an absolute one leaves it alone).
func (s *QuatDeltaState) update(e [3]int64) {
	s.updateMags(abs64(e[0]), abs64(e[1]), abs64(e[2]))
}

// updateMags is update of the differences' magnitudes.
func (s *QuatDeltaState) updateMags(a0, a1, a2 uint64) {
	s.mean.Add((a0 + a1 + a2 + 1) / 3)
	s.warm = true
	s.afterAbs = 0
}

// ReadDelta reads a quaternion delta against the baseline base and returns
// the quaternion packed: Unpack gives its components (and rejects what no
// writer packs). The baseline is packed only for a relative mode, and one
// that cannot be packed is then an error (prefixed "baseline: "). An index
// outside the grid is ErrMalformed, and so is a relative form longer than
// the absolute one. An absolute form is accepted even where the writer
// would have used the relative one (as wire versions 1 and 2 did): both spell the
// same value, and checking would cost the reader the relative coding's
// work on every absolute quaternion.
func (q *Quat) ReadDelta(r *bits.Reader, s *QuatDeltaState, base *[4]float64) (uint64, error) {
	start := r.Pos()
	mode, err := s.readMode(r)
	if err != nil {
		return 0, err
	}
	if mode == quatModeAbsolute {
		s.afterAbs = 1
		return r.ReadBits(q.Bits())
	}
	qb, err := q.Pack(*base)
	if err != nil {
		return 0, errBaseline(err)
	}
	return q.readRelative(r, s, nil, qb, mode, start, 0)
}

// errBaseline is the error for a baseline that cannot be packed.
func errBaseline(err error) error { return fmt.Errorf("baseline: %w", err) }

// readRelative reads the differences of a relative quaternion of the given
// mode (rank) whose mode code began at bit start: Rice codes with the
// adaptive state s, or, when t is not nil, the tables t.
func (q *Quat) readRelative(r *bits.Reader, s *QuatDeltaState, t *QuatCodes, base uint64, mode, start int, e0 int64) (uint64, error) {
	ranks := q.quatRanks(base)
	m := ranks[mode]
	n := uint(q.n)
	mask := uint64(1)<<n - 1
	var b [3]uint64
	if mode == 0 {
		b = [3]uint64{base >> 2 & mask, base >> (2 + n) & mask, base >> (2 + 2*n) & mask}
	} else {
		b = q.ReexpressQuat(base, m)
	}
	var e [3]int64
	out := uint64(m)
	maxBits := q.DeltaMaxBits()
	if t != nil {
		maxBits = q.maxBitsCodes(t)
	}
	for i := range 3 {
		var v int64
		var err error
		switch {
		case t != nil && i == 0:
			v = e0 // read with the first table's symbol
		case t != nil:
			v, err = q.readDiffCodes(r, t, &e, i)
		case i == 0:
			v, err = ReadRiceEG(r, s.params(e, i), s.u0())
		default:
			v, err = ReadRiceEG(r, s.params(e, i), quatUnary)
		}
		if err != nil {
			return 0, err
		}
		e[i] = v
		c := int64(b[i]) + v
		if c < 0 || uint64(c) > q.steps {
			return 0, ErrMalformed
		}
		out |= uint64(c) << (2 + uint(i)*n)
	}
	if r.Pos()-start > maxBits {
		return 0, ErrMalformed // the writer codes it absolute
	}
	if t == nil {
		s.update(e)
	}
	return out, nil
}
