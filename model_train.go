package bitwire

import (
	"cmp"
	"math"
	mbits "math/bits"
	"slices"

	"github.com/bitwire/bitwire/fields"
)

// The constants of the smoothing (Model). Chosen on the held-out harness
// (heldout_test.go); the strength of each table's prior is chosen per
// table by crossValidate among smoothings.
const (
	trainMix  = 0.5  // a quaternion prior's share of the adaptive code's expectation (the rest uniform over slots)
	trainBeta = 8.0  // pseudo-samples a quaternion context borrows from its group
	trainKern = 0.25 // the share of a count spread to each neighbouring slot in a prior
	trainEsc  = 0.25 // ESC's pseudo-count
	trainNear = 0.5  // the weight of a group's table one class away, halved again each class further
)

// Model returns the model trained on the recorded pairs: a Huffman code
// per table of the recorded symbols' counts, smoothed so that small
// recordings generalize (below), each code at most 15 bits long and its
// ESC at most 5. Before any pair was added it fails with ErrNoTraining.
//
// Smoothing: each table's weights are its counts plus a prior of a few
// pseudo-samples, so that every symbol has a codeword and a table with few
// samples follows its prior. A quaternion's first table is smoothed as
// the form and the first difference's slot by rank (smoothQuat); its
// difference tables in a hierarchy: a table borrows from its group (the
// first differences by rank, the second or third by class), the group from
// all twenty, and those from a prior that is uniform over magnitude slots
// (log-uniform in the magnitude); a window or modular table's prior is
// uniform over its slots, the form's over the forms, and a mask table's
// the product of each field's own frequency of change. Each prior also
// spreads each count a little to the neighbouring slots.
//
// A mask table of k fields whose code is expected to cost k bits a symbol
// or more is made plain (all lengths 0: the k changed bits alone; see
// plainMask). A one-field table always is: its ESC takes code space, so no
// code of its three symbols gives both masks one bit.
func (t *Trainer[T]) Model() (*Model, error) {
	if t.st.pairs == 0 {
		return nil, ErrNoTraining
	}
	lay := t.o.model.lay
	st := t.st.resolved(lay)
	m := &Model{layout: t.c.lfps[0]}
	w := make([][]float64, len(lay.kinds))
	ths := make([]smoothing, len(lay.kinds))
	for _, u := range trainUnits(lay) {
		th := st.crossValidate(lay, u)
		u.weights(lay, st.counts, th, w)
		ths[u.t0] = th
		if lay.hasUnchanged(u.t0) && !st.foldPays(lay, u, th) {
			w[u.t0][len(w[u.t0])-1] = 0 // not folded: no code for "unchanged"; the struct's changed bit is plain
		}
	}
	for i := range w {
		lens := trainLengths(lay, i, w[i])
		if lay.kinds[i] == tkMask && st.plainMask(lay, i, lens, ths[i]) {
			lens = make([]uint8, len(lens)) // plain: the k bits alone
		}
		if err := fields.CheckCode(lens); err != nil {
			return nil, err // not reached: TrainLengths gives prefix codes
		}
		m.addTable(lay.kinds[i], lens)
	}
	m.setHash()
	return m, nil
}

// resolved returns the recording with each recorded quaternion counted in
// the form the model will send it in (quatChoice): the first table's
// symbol and, when relative, its other two difference slots, in the counts and in its
// segment's. st itself is left as it is, so that more pairs can be added
// after a Model.
func (st *trainStats) resolved(lay *modelLayout) *trainStats {
	if len(st.quatRecs) == 0 {
		return st
	}
	out := &trainStats{counts: cloneCounts(st.counts), pairs: st.pairs, segLen: st.segLen}
	for _, seg := range st.segs {
		out.segs = append(out.segs, cloneCounts(seg))
	}
	byField := map[int32][]quatRec{}
	for r := range st.quatRecs {
		byField[r.t0] = append(byField[r.t0], r)
	}
	for t0, recs := range byField {
		// A fixed order: the choice's sums do not depend on it, but the
		// ties between starts would.
		slices.SortFunc(recs, quatRec.compare)
		cnt := make([]uint64, len(recs))
		for i, r := range recs {
			cnt[i] = st.quatRecs[r]
		}
		rel := quatChoice(lay, st.counts, int(t0), recs, cnt)
		for i, r := range recs {
			for _, c := range [][][]uint64{out.counts, out.segs[r.seg]} {
				if !rel[i] {
					c[t0][0] += cnt[i]
					continue
				}
				r.count(c[t0:], cnt[i])
			}
		}
	}
	return out
}

func (a quatRec) compare(b quatRec) int {
	return cmp.Or(cmp.Compare(a.seg, b.seg), cmp.Compare(a.first, b.first),
		slices.Compare(a.tab[:], b.tab[:]), slices.Compare(a.slot[:], b.slot[:]),
		cmp.Compare(b2u(a.adaptive), b2u(b.adaptive)))
}

func cloneCounts(c [][]uint64) [][]uint64 {
	out := make([][]uint64, len(c))
	for i := range c {
		out[i] = slices.Clone(c[i])
	}
	return out
}

// quatChoiceRounds is the most rounds quatChoice runs from each start.
const quatChoiceRounds = 8

// quatChoice decides which of a quaternion field's recorded relative forms
// (recs, cnt[i] times each; the field's tables start at t0, base holds
// the counts of the pairs that had no baseline) the trained tables will
// send absolute, as their encoder does: relative when it is no longer.
// The tables depend on the choice and the choice on the tables, so it
// alternates the two (each round trains the tables on the current choice
// and re-chooses every form under them) until nothing changes, from two
// starts: every form relative, and the adaptive code's choice. It keeps
// the choice whose tables cost least on the recording. Recording the
// adaptive choice alone (model file version 2 trainers did) trains on a
// code that sends a large turn absolute because its cold Rice parameter
// makes the turn dear, so the difference tables never saw large turns;
// recording every form relative gives the absolute form, which a model
// still needs for unrelated rotations, a long code.
func quatChoice(lay *modelLayout, base [][]uint64, t0 int, recs []quatRec, cnt []uint64) []bool {
	u := trainUnit{t0, fields.QuatTables}
	var n, absBits int
	for nd, t := range lay.nodes {
		if t == t0 && nd.code == cQuat {
			n, absBits = nd.quat.ComponentBits(), nd.quat.Bits()
		}
	}
	full := make([][]uint64, t0+u.n)
	w := make([][]float64, t0+u.n)
	lens := make([][]uint8, u.n)
	var best []bool
	bestCost := uint64(math.MaxUint64)
	for start := range 2 {
		rel := make([]bool, len(recs))
		for i, r := range recs {
			rel[i] = start == 0 || r.adaptive
		}
		var cost uint64
		for range quatChoiceRounds {
			for t := range u.n {
				full[t0+t] = slices.Clone(base[t0+t])
			}
			for i, r := range recs {
				if !rel[i] {
					full[t0][0] += cnt[i]
					continue
				}
				r.count(full[t0:], cnt[i])
			}
			u.weights(lay, full, smoothings[0], w)
			for t := range u.n {
				lens[t] = trainLengths(lay, t0+t, w[t0+t])
			}
			changed := false
			cost = 0
			for i, r := range recs {
				a, b := quatAbsBits(lens, absBits), quatRelBits(lens, r, n)
				cost += cnt[i] * uint64(min(a, b))
				if (b <= a) != rel[i] {
					rel[i], changed = b <= a, true
				}
			}
			if !changed {
				break
			}
		}
		if cost < bestCost {
			best, bestCost = rel, cost
		}
	}
	return best
}

// count adds x to the counts of relative form r's symbols in c, a
// quaternion's tables.
func (r quatRec) count(c [][]uint64, x uint64) {
	c[0][r.first] += x
	for k := range 2 {
		c[1+int(r.tab[k])][r.slot[k+1]+1] += x
	}
}

// quatAbsBits is the size of the absolute form with a quaternion's tables
// of lengths lens: the first table's symbol 0 and the packed value.
func quatAbsBits(lens [][]uint8, absBits int) int { return int(lens[0][0]) + absBits }

// quatRelBits is the size of relative form r with those tables (n-bit
// components), as fields' encoder counts it: the first table's symbol and
// the first difference's tail (the slot's low bits, a sign for a
// magnitude not 0), then the other two differences' tokens (the slot's
// codeword and its tail) or ESC, n bits and the sign. A symbol without a
// code is as long as anything.
func quatRelBits(lens [][]uint8, r quatRec, n int) int {
	fl := int(lens[0][r.first])
	if fl == 0 {
		return math.MaxInt32
	}
	size := fl + fields.SlotTailBits(int(r.slot[0]))
	for k := range 2 {
		tl, s := lens[1+int(r.tab[k])], int(r.slot[k+1])
		switch {
		case tl[s+1] > 0:
			size += int(tl[s+1]) + fields.SlotTailBits(s)
		case tl[0] > 0: // ESC, the magnitude in n bits, a sign unless 0
			size += int(tl[0]) + n + int(b2u(s > 0))
		default:
			return math.MaxInt32
		}
	}
	return size
}

// trainUnit is a run of tables trained together: one table, or a
// quaternion's QuatTables.
type trainUnit struct{ t0, n int }

func trainUnits(lay *modelLayout) []trainUnit {
	var out []trainUnit
	for i := 0; i < len(lay.kinds); {
		n := 1
		if lay.kinds[i] == tkQuatFirst {
			n = fields.QuatTables
		}
		out = append(out, trainUnit{i, n})
		i += n
	}
	return out
}

// smoothing is one choice of the smoothing's strengths: a, the
// pseudo-samples of each table's prior, and eps, more pseudo-samples in
// proportion to the table's count (which keeps some weight on the prior
// however much data there is, against a distribution that drifts).
type smoothing struct{ a, eps float64 }

// smoothings are the choices crossValidate picks from, the default first.
var smoothings = []smoothing{
	{32, 0}, {8, 0}, {2, 0}, {128, 0},
	{32, 0.1}, {32, 0.3}, {32, 1}, {128, 0.3}, {128, 1},
}

// weights fills w[u.t0 : u.t0+u.n] with the unit's smoothed weights from
// counts cnt.
func (u trainUnit) weights(lay *modelLayout, cnt [][]uint64, th smoothing, w [][]float64) {
	i := u.t0
	switch lay.kinds[i] {
	case tkWindow, tkModular:
		w[i] = smoothed(cnt[i], kernel(uniformSlots(len(cnt[i])), cnt[i], th.a), th)
	case tkMask:
		w[i] = smoothed(cnt[i], maskPrior(cnt[i]), th)
	case tkQuatFirst:
		smoothQuat(w[i:i+u.n], cnt[i:i+u.n], th, lay.hasUnchanged(i))
	}
}

// split is the counts of a unit's tables in the earlier (train) and the
// later (test) part of the recording.
type split struct{ train, test [][]uint64 }

// splits returns unit u's cross-validation splits: after half and after
// three quarters of the segments; none when the recording is too short
// to cross-validate on.
func (st *trainStats) splits(u trainUnit) []split {
	ns := len(st.segs)
	if ns < 4 || st.pairs < minCrossValidate {
		return nil
	}
	sum := func(lo, hi int) [][]uint64 {
		out := make([][]uint64, u.n)
		for t := range out {
			out[t] = make([]uint64, len(st.counts[u.t0+t]))
			for g := lo; g < hi; g++ {
				for s, x := range st.segs[g][u.t0+t] {
					out[t][s] += x
				}
			}
		}
		return out
	}
	var out []split
	for _, f := range []int{ns / 2, 3 * ns / 4} {
		out = append(out, split{sum(0, f), sum(f, ns)})
	}
	return out
}

// crossValidate picks the smoothing of unit u: the one whose codes,
// trained on the earlier part of the recording, cost least on the later
// part (splits).
func (st *trainStats) crossValidate(lay *modelLayout, u trainUnit) smoothing {
	splits := st.splits(u)
	if splits == nil {
		return smoothings[0]
	}
	best, bestCost := smoothings[0], math.Inf(1)
	w := make([][]float64, u.t0+u.n)
	for _, th := range smoothings {
		cost := 0.0
		for _, sp := range splits {
			// Lay the split's counts where weights expects them.
			full := make([][]uint64, u.t0+u.n)
			copy(full[u.t0:], sp.train)
			u.weights(lay, full, th, w)
			for t := range u.n {
				lens := trainLengths(lay, u.t0+t, w[u.t0+t])
				for s, x := range sp.test[t] {
					l := int(lens[s])
					if l == 0 {
						l = int(lens[0]) + 16
					}
					cost += float64(x) * float64(l)
				}
			}
		}
		if cost < bestCost {
			best, bestCost = th, cost
		}
	}
	return best
}

// plainMask reports whether mask table t (k fields, S = 1 + 2^k) is to be
// plain: whether its trained code is expected to cost at least k bits a
// symbol. The expectation is measured as crossValidate measures: the code
// trained with smoothing th on the earlier part of the recording, costed
// on the later part (over both splits); on a recording too short for
// that, lens (the code trained on all of it) costed on all of it. A
// symbol without a codeword costs ESC and the k bits. A table with no
// recorded symbol is plain.
func (st *trainStats) plainMask(lay *modelLayout, t int, lens []uint8, th smoothing) bool {
	k := mbits.Len(uint(len(lens) - 2)) // S - 1 = 2^k
	cost := func(lens []uint8, cnt []uint64) (bits, n float64) {
		for s, x := range cnt {
			l := int(lens[s])
			if l == 0 {
				l = int(lens[0]) + k
			}
			bits += float64(x) * float64(l)
			n += float64(x)
		}
		return bits, n
	}
	u := trainUnit{t, 1}
	var bits, n float64
	if splits := st.splits(u); splits != nil {
		w := make([][]float64, t+1)
		full := make([][]uint64, t+1)
		for _, sp := range splits {
			full[t] = sp.train[0]
			u.weights(lay, full, th, w)
			b, m := cost(trainLengths(lay, t, w[t]), sp.test[0])
			bits, n = bits+b, n+m
		}
	} else {
		bits, n = cost(lens, st.counts[t])
	}
	return bits >= float64(k)*n
}

// foldPays reports whether a foldable struct's changed bit is to be folded
// into its quaternion's first table (unit u, smoothing th): whether the
// first table with its "unchanged" symbol costs less than the table
// without it plus the plain changed bit of every pair. It is measured as
// crossValidate measures, trained on the earlier part of the recording and
// costed on the later; a recording too short for that folds (on the data
// it was trained on, one code of the two together never costs more).
func (st *trainStats) foldPays(lay *modelLayout, u trainUnit, th smoothing) bool {
	splits := st.splits(u)
	if splits == nil {
		return true
	}
	w := make([][]float64, u.t0+u.n)
	full := make([][]uint64, u.t0+u.n)
	var fold, plain float64
	for _, sp := range splits {
		copy(full[u.t0:], sp.train)
		u.weights(lay, full, th, w)
		lf := trainLengths(lay, u.t0, w[u.t0])
		w[u.t0][len(w[u.t0])-1] = 0
		lp := trainLengths(lay, u.t0, w[u.t0])
		cnt := sp.test[0]
		last := len(cnt) - 1
		for sym, x := range cnt {
			f, p := int(lf[sym]), 1+int(lp[sym])
			if sym == last {
				p = 1
			}
			if f == 0 || (p == 1 && sym != last) {
				f, p = f+16, p+16 // a symbol without a code: as long as anything
			}
			fold += float64(x) * float64(f)
			plain += float64(x) * float64(p)
		}
	}
	return fold < plain
}

// smoothed returns a table's weights: its counts plus a pseudo-samples
// spread as prior (a distribution over symbols 1..), and ESC's count plus
// trainEsc.
func smoothed(cnt []uint64, prior []float64, th smoothing) []float64 {
	w := make([]float64, len(cnt))
	var n float64
	for _, x := range cnt {
		n += float64(x)
	}
	a := th.a + th.eps*n
	w[0] = float64(cnt[0]) + trainEsc
	for s := 1; s < len(w); s++ {
		w[s] = float64(cnt[s]) + a*prior[s]
	}
	return w
}

// uniformSlots is the uniform distribution over symbols 1..n-1.
func uniformSlots(n int) []float64 {
	p := make([]float64, n)
	for s := 1; s < n; s++ {
		p[s] = 1 / float64(n-1)
	}
	return p
}

// kernel returns the distribution (cnt + a·prior) / (N + a) over symbols
// 1.., each count spread a share trainKern to each neighbouring symbol.
func kernel(prior []float64, cnt []uint64, a float64) []float64 {
	p := make([]float64, len(cnt))
	var n float64
	for s := 1; s < len(cnt); s++ {
		x := float64(cnt[s])
		n += x
		p[s] += x * (1 - 2*trainKern)
		for _, d := range []int{s - 1, s + 1} {
			if d >= 1 && d < len(cnt) {
				p[d] += x * trainKern
			} else {
				p[s] += x * trainKern
			}
		}
	}
	for s := 1; s < len(p); s++ {
		p[s] = (p[s] + a*prior[s]) / (n + a)
	}
	return p
}

// maskPrior is the distribution of masks if each field changed alone at
// its recorded frequency: symbol mask+1.
func maskPrior(cnt []uint64) []float64 {
	k := 0
	for 1<<k+1 < len(cnt) {
		k++
	}
	var n float64
	f := make([]float64, k)
	for s := 1; s < len(cnt); s++ {
		x := float64(cnt[s])
		n += x
		for i := range k {
			if (s-1)>>i&1 != 0 {
				f[i] += x
			}
		}
	}
	p := make([]float64, len(cnt))
	for s := 1; s < len(cnt); s++ {
		q := 1.0
		for i := range k {
			pi := (f[i] + 0.5) / (n + 1)
			if (s-1)>>i&1 != 0 {
				q *= pi
			} else {
				q *= 1 - pi
			}
		}
		p[s] = q
	}
	return p
}

// smoothQuat fills w (a quaternion's tables: the first table, then the
// sixteen difference tables) from their counts cnt. The first table is
// smoothed as the two tables it joins: the form (absolute, or relative of
// rank r) and, for each rank, the first difference's slot (D0[r]); its
// weight of (r, slot) is the product of the two. So a pair's first symbol
// is trained as the mode and first difference were before they were
// joined, and costs what they carry together.
//
// A folded quaternion's first table has one more symbol, its struct's
// "unchanged": its weight is its share of the struct's pairs, smoothed by
// half a pair each way, and the others share the rest.
func smoothQuat(w [][]float64, cnt [][]uint64, th smoothing, unchanged bool) {
	slots := len(cnt[1]) - 1 // the difference tables: ESC and the slots
	mode := make([]uint64, 5)
	d := make([][]uint64, 4, 4+len(cnt)-1)
	mode[0] = cnt[0][0]
	for r := range 4 {
		d[r] = make([]uint64, 1+slots)
		for sl := range slots {
			x := cnt[0][1+r*slots+sl]
			mode[r+1] += x
			d[r][1+sl] += x
		}
	}
	d = append(d, cnt[1:]...)
	wd := make([][]float64, len(d))
	smoothDiffs(wd, d, th)
	wm := smoothed(mode, uniformSlots(len(mode)), th)
	w[0] = make([]float64, len(cnt[0]))
	tot := sum(wm)
	if unchanged {
		var changed uint64
		for _, x := range cnt[0][:len(cnt[0])-1] {
			changed += x
		}
		un := cnt[0][len(cnt[0])-1]
		pu := (float64(un) + 0.5) / float64(un+changed+1)
		w[0][len(w[0])-1] = pu
		tot /= 1 - pu
	}
	w[0][0] = wm[0] / tot
	for r := range 4 {
		td := sum(wd[r][1:])
		for sl := range slots {
			w[0][1+r*slots+sl] = wm[r+1] / tot * wd[r][1+sl] / td
		}
	}
	copy(w[1:], wd[4:])
}

func sum(x []float64) float64 {
	var t float64
	for _, v := range x {
		t += v
	}
	return t
}

// smoothDiffs fills w (the twenty difference tables of a quaternion, the
// first difference's by rank included) from their counts cnt: D0 by rank,
// D1 and D2 by class (fields.QuatDiffTable). Each table's prior is what
// the adaptive code expects there (riceSlots) mixed with the counts of the
// other tables of its group, those of neighbouring classes moved by two
// slots a class and weighing half as much a class further.
func smoothDiffs(w [][]float64, cnt [][]uint64, th smoothing) {
	n := len(cnt[0])
	width := (n - 1) / 2
	qc := fields.QuatClasses
	for j := range cnt {
		var k int
		var lo, hi, cls int
		switch {
		case j < 4:
			k = fields.NewRiceMean(2).K()
			lo, hi, cls = 0, 4, 0
		case j < 4+qc:
			k = fields.NewRiceMean(classRep(j - 4)).K()
			lo, hi, cls = 4, 4+qc, j-4
		default:
			k = fields.NewRiceMean(classRep(j - 4 - qc)).K()
			lo, hi, cls = 4+qc, 4+2*qc, j-4-qc
		}
		prior := riceSlots(n, k, width)
		for s := 1; s < n; s++ {
			prior[s] = trainMix*prior[s] + (1-trainMix)/float64(n-1)
		}
		p := make([]float64, n)
		var tot float64
		for j2 := lo; j2 < hi; j2++ {
			if j2 == j {
				continue
			}
			wt := 1.0
			if lo > 0 {
				wt = math.Pow(trainNear, math.Abs(float64(cls-(j2-lo))))
			}
			for s := 1; s < n; s++ {
				x := float64(cnt[j2][s]) * wt
				if x == 0 {
					continue
				}
				tot += x
				p[s] += x * (1 - 2*trainKern)
				p[max(s-1, 1)] += x * trainKern
				p[min(s+1, n-1)] += x * trainKern
			}
		}
		for s := 1; s < n; s++ {
			p[s] = (p[s] + th.a*prior[s]) / (tot + th.a)
		}
		w[j] = smoothed(cnt[j], p, smoothing{trainBeta, th.eps})
	}
}

// classRep is a magnitude of class c (its bit length): about the middle
// of 2^(c-1) .. 2^c - 1.
func classRep(c int) uint32 {
	if c == 0 {
		return 0
	}
	return uint32(3) << uint(c) >> 2
}

// riceSlots returns the distribution over slot symbols 1..n-1 that the
// adaptive code of parameter k expects: each magnitude of width bits
// weighs 2^-(its Rice code's bits), summed over its slot.
func riceSlots(n, k, width int) []float64 {
	p := make([]float64, n)
	var tot float64
	for m := uint64(0); m < 1<<uint(width); m++ {
		s := fields.TokenSlot(m) + 1
		if s >= n {
			break
		}
		x := math.Exp2(-float64(fields.RiceBits(int64(m), k, width)))
		p[s] += x
		tot += x
	}
	for s := range p {
		p[s] /= tot
	}
	return p
}

// trainLengths returns the code lengths of table t of the layout from its
// smoothed weights w: a quaternion difference table, whose every slot has
// a weight, gets no ESC (escFree); any other table keeps ESC's weight.
func trainLengths(lay *modelLayout, t int, w []float64) []uint8 {
	iw := intWeights(w)
	if lay.kinds[t] == tkQuatDiff {
		iw[0] = 0
	}
	lens := fields.TrainLengths(iw)
	// A first table with "unchanged" (its last symbol) keeps it within
	// unchangedMaxLen bits, unless it has no weight (not folded).
	if last := len(iw) - 1; lay.hasUnchanged(t) && iw[last] > 0 {
		for lens[last] > unchangedMaxLen {
			iw[last] *= 2
			lens = fields.TrainLengths(iw)
		}
	}
	return lens
}

// unchangedMaxLen is the longest code a trainer gives a folded struct's
// "unchanged", as ESC's is at most 5 bits: a recording whose every pair
// changed still leaves an unchanged message at most 4 bits dearer than
// its plain changed bit, for about 0.05 bits a changed one. Measured
// (held-out harness, teleport 1% spin 2°, 1,000 pairs, whose later half
// held unchanged pairs its earlier never showed: 12.53 bits a pair
// unfolded, 15.14 folded without a cap; caps of 3, 4, 5, 9 bits: 9.09,
// 8.97, 9.38, 10.52; internal/tumble, only changed pairs, spinning /
// settling: 9.705 / 7.547 without a cap, 9.791 / 7.883 at 4, 9.792 /
// 7.599 at 5, 9.729 / 7.599 at 6; the quick sweep 584.4 without, 584.8
// at 5).
const unchangedMaxLen = 5

// intWeights scales weights to integers (a positive weight stays
// positive) for fields.TrainLengths.
func intWeights(w []float64) []uint64 {
	var tot float64
	for _, x := range w {
		tot += x
	}
	out := make([]uint64, len(w))
	if tot == 0 {
		return out
	}
	sc := float64(1<<40) / tot
	for s, x := range w {
		if x > 0 {
			out[s] = max(1, uint64(math.Round(x*sc)))
		}
	}
	return out
}

// minCrossValidate is the fewest pairs crossValidate chooses for: with
// fewer, the default smoothing (held-out measurement: cross-validating on
// a few dozen pairs chooses worse than the default).
const minCrossValidate = 400

// maxSegs is the most segments a trainer keeps: past it, neighbouring
// segments merge and segLen doubles.
const maxSegs = 32

// segment returns the counts of the segment the next pair goes to.
func (st *trainStats) segment() [][]uint64 {
	if st.segLen == 0 {
		st.segLen = 1
	}
	if len(st.segs) == 0 || st.pairs%st.segLen == 0 && st.pairs/st.segLen >= len(st.segs) {
		if len(st.segs) == maxSegs {
			for i := 0; i < maxSegs/2; i++ {
				a, b := st.segs[2*i], st.segs[2*i+1]
				for t := range a {
					for s := range a[t] {
						a[t][s] += b[t][s]
					}
				}
				st.segs[i] = a
			}
			st.segs = st.segs[:maxSegs/2]
			st.segLen *= 2
			if len(st.quatRecs) > 0 {
				merged := make(map[quatRec]uint64, len(st.quatRecs))
				for r, x := range st.quatRecs {
					r.seg /= 2
					merged[r] += x
				}
				st.quatRecs = merged
			}
			if st.pairs/st.segLen < len(st.segs) {
				return st.segs[len(st.segs)-1]
			}
		}
		seg := make([][]uint64, len(st.counts))
		for t := range seg {
			seg[t] = make([]uint64, len(st.counts[t]))
		}
		st.segs = append(st.segs, seg)
	}
	return st.segs[len(st.segs)-1]
}
