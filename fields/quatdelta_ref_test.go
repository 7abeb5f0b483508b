package fields

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/internal/tumble"
)

// refQuatDiffs is quatDiffs by the description: the rank of the new dropped
// component among quatRanks' modes and the differences against the
// baseline re-expressed by ReexpressQuat.
func refQuatDiffs(q *Quat, base, cur uint64) (int, [3]int64) {
	ranks := q.quatRanks(base)
	m := int(cur & 3)
	rank := 0
	for rank < 4 && ranks[rank] != m {
		rank++
	}
	n := uint(q.n)
	mask := uint64(1)<<n - 1
	b := [3]uint64{base >> 2 & mask, base >> (2 + n) & mask, base >> (2 + 2*n) & mask}
	if rank != 0 {
		b = q.ReexpressQuat(base, m)
	}
	var e [3]int64
	for k := range 3 {
		e[k] = int64(cur>>(2+uint(k)*n)&mask) - int64(b[k])
	}
	return rank, e
}

// refWriteDelta is WriteDelta by the description: the relative form, its
// mode code and three WriteRiceEG calls, when it is no longer than the
// bound; else the absolute form's code and Bits() bits.
func refWriteDelta(q *Quat, w *bits.Writer, s *QuatDeltaState, base uint64, baseOK bool, cur uint64) {
	if baseOK {
		rank, e := refQuatDiffs(q, base, cur)
		code, cn := s.modeCode(rank)
		var k [3]int
		size := cn
		u := [3]int{s.u0(), quatUnary, quatUnary}
		for i := range 3 {
			k[i] = s.params(e, i)
			size += RiceEGBits(e[i], k[i], u[i])
		}
		if size <= q.DeltaMaxBits() {
			w.WriteBits(code, cn)
			for i := range 3 {
				WriteRiceEG(w, e[i], k[i], u[i])
			}
			s.update(e)
			return
		}
	}
	code, cn := s.modeCode(quatModeAbsolute)
	w.WriteBits(code, cn)
	w.WriteBits(cur, q.Bits())
	s.afterAbs = 1
}

// sameDeltas writes the pairs with WriteDelta and with refWriteDelta, in
// one stream each sharing the adaptive state, and also each pair in the
// state of a fresh packet and after an absolute quaternion, and fails
// unless every bit and every state agrees.
func sameDeltas(t *testing.T, q Quat, pairs [][2]uint64) {
	t.Helper()
	var w, rw bits.Writer
	s, rs := NewQuatDeltaState(), NewQuatDeltaState()
	for i, p := range pairs {
		r, e := q.quatDiffs(p[0], p[1])
		if rr, re := refQuatDiffs(&q, p[0], p[1]); r != rr || e != re {
			t.Fatalf("n=%d %#x -> %#x: quatDiffs %d %v, want %d %v", q.n, p[0], p[1], r, e, rr, re)
		}
		q.WriteDelta(&w, &s, p[0], true, p[1])
		refWriteDelta(&q, &rw, &rs, p[0], true, p[1])
		if s != rs || w.Len() != rw.Len() {
			t.Fatalf("n=%d pair %d %#x -> %#x: state %v, %d bits; want %v, %d bits", q.n, i, p[0], p[1], s, w.Len(), rs, rw.Len())
		}
		for _, abs := range []uint8{0, 1} {
			var w1, w2 bits.Writer
			s1, s2 := NewQuatDeltaState(), NewQuatDeltaState()
			s1.afterAbs, s2.afterAbs = abs, abs
			q.WriteDelta(&w1, &s1, p[0], true, p[1])
			refWriteDelta(&q, &w2, &s2, p[0], true, p[1])
			if s1 != s2 || w1.Len() != w2.Len() || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
				t.Fatalf("n=%d %#x -> %#x alone (afterAbs %d): %x (%d bits), want %x (%d bits)", q.n, p[0], p[1], abs, w1.Bytes(), w1.Len(), w2.Bytes(), w2.Len())
			}
		}
	}
	if !bytes.Equal(w.Bytes(), rw.Bytes()) {
		t.Fatalf("n=%d: streams differ", q.n)
	}
}

// TestQuatDeltaMatchesReference checks WriteDelta, bit for bit, against
// the coding as described (refWriteDelta): every pair of valid
// quaternions of 2 and 3 bits a component, and random, tumbling and
// nearby pairs at 4..20 bits.
func TestQuatDeltaMatchesReference(t *testing.T) {
	for n := 2; n <= 3; n++ {
		q, _ := NewQuat(n)
		packs := validPacks(t, q)
		var pairs [][2]uint64
		for _, b := range packs {
			for _, c := range packs {
				pairs = append(pairs, [2]uint64{b, c})
			}
		}
		sameDeltas(t, q, pairs)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{4, 5, 7, 9, 12, 16, 20} {
		if testing.Short() && n > 12 {
			continue
		}
		q, _ := NewQuat(n)
		var pairs [][2]uint64
		world := tumble.NewSpinning(uint64(n), 64)
		for range 40 {
			prev := make([]uint64, world.Len())
			for i := range prev {
				prev[i] = mustPack(t, q, world.Rot(i))
			}
			world.Step()
			for i := range prev {
				pairs = append(pairs, [2]uint64{prev[i], mustPack(t, q, world.Rot(i))})
			}
		}
		for range 3000 {
			v := randomRot(rng)
			b := mustPack(t, q, v)
			pairs = append(pairs, [2]uint64{b, mustPack(t, q, randomRot(rng))})
			// A nearby rotation, often across a change of the largest
			// component when v's two largest are close.
			d := 0.05 * rng.Float64() * rng.Float64()
			var u [4]float64
			for k := range u {
				u[k] = float64(v[k]) + d*rng.NormFloat64()
			}
			u = normalize(u)
			pairs = append(pairs, [2]uint64{b, mustPack(t, q, [4]float32{float32(u[0]), float32(u[1]), float32(u[2]), float32(u[3])})})
		}
		sameDeltas(t, q, pairs)
	}
}

// TestRiceCode checks riceLen and riceCode against RiceBits and WriteRice for every parameter and
// width, values near zero, near the escape and at the widest.
func TestRiceCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for width := 1; width <= 20; width++ {
		for k := 0; k <= RiceMaxK; k++ {
			top := int64(1)<<uint(width) - 1
			vs := []int64{0, 1, -1, top, -top}
			for d := int64(-2); d <= 2; d++ {
				if e := int64(RiceEscape)<<uint(k) + d; e <= top {
					vs = append(vs, e, -e)
				}
			}
			for range 20 {
				vs = append(vs, rng.Int64N(2*top+1)-top)
			}
			for _, v := range vs {
				var w bits.Writer
				WriteRice(&w, v, k, width)
				n := RiceBits(v, k, width)
				m := abs64(v)
				if got := riceLen(m, m>>uint(k), k, width); got != n {
					t.Fatalf("v=%d k=%d width=%d: riceLen %d, RiceBits %d", v, k, width, got, n)
				}
				var cw bits.Writer
				cw.WriteBits(riceCode(m, m>>uint(k), uint64(v)>>63, k, n), n)
				if w.Len() != n || !bytes.Equal(w.Bytes(), cw.Bytes()) {
					t.Fatalf("v=%d k=%d width=%d: riceCode %x (%d bits), WriteRice %x (%d bits)", v, k, width, cw.Bytes(), n, w.Bytes(), w.Len())
				}
			}
		}
	}
}
