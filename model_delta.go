package bitwire

import (
	"fmt"
	mbits "math/bits"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// The delta coders' side of models (wire-format.md, "Models"): a struct's
// changed fields as mask symbols written before the fields, windowed and
// bounded scalars as tokens, quaternions with their tables. A trainer runs
// the same code with no tables: each symbol is noted instead of written.

// encStructDeltaModel writes a struct's masks, then each changed field's
// delta. It reports whether any field changed. A struct other than the
// root that did not change writes nothing. Shallow structs are judged while
// their fields are written, and the masks (which come first) are inserted
// before the fields once known; others, Stats and errors take
// encStructDeltaCompare.
func (e *encoder) encStructDeltaModel(p *plan, b, c unsafe.Pointer, skip int) (bool, error) {
	if e.general || p.nest > maxShallow {
		return e.encStructDeltaCompare(p, b, c, skip)
	}
	words := len(e.ar.words) // this struct's scratch, released below
	m := e.mark()
	var small [1]uint64
	ch := fieldSet(small[:])
	if len(p.fields) > 64 {
		ch = e.ar.takeSet(len(p.fields))
	}
	dirty, err := e.encFieldsJudged(p, b, c, skip, ch)
	switch {
	case err != nil:
		e.rewind(m)
		e.ar.words = e.ar.words[:words]
		return e.encStructDeltaCompare(p, b, c, skip) // places the error
	case dirty || e.depth == 1:
		e.insertMasks(p, ch, m.at)
	default:
		e.unwrite(m)
	}
	e.ar.words = e.ar.words[:words]
	return dirty, nil
}

// insertMasks inserts (or, training, notes) the mask symbols of a struct's
// changed fields ch at bit position at, before the fields' deltas. A plain
// table (no codes) has an ESC of 0 bits: its chunk is just the k bits.
func (e *encoder) insertMasks(p *plan, ch fieldSet, at int) {
	rt := e.ar.rt
	if e.foldedMask(rt, p, ch, at) {
		return
	}
	t0, nf := rt.lay.table(p.uid), len(p.fields)
	if nf <= maskChunk && rt.train == nil { // one symbol, the common case
		c := rt.codes[t0]
		v, l := c.Codeword(int(ch[0]) + 1)
		if l == 0 {
			ev, el := c.Codeword(0)
			v, l = ev|ch[0]<<uint(el), el+nf
		}
		e.w.Insert(at, v, l)
		return
	}
	for j := 0; j*maskChunk < nf; j++ {
		k := min(maskChunk, nf-j*maskChunk)
		m := ch.chunk(j)
		if rt.train != nil {
			rt.train.note(t0+j, int(m)+1)
			continue
		}
		v, l := rt.codes[t0+j].Codeword(int(m) + 1)
		if l == 0 {
			ev, el := rt.codes[t0+j].Codeword(0)
			v, l = ev|m<<uint(el), el+k // ESC, then one bit a field
		}
		e.w.Insert(at, v, l)
		at += l
	}
}

// foldedMask codes the changed bit ch of a struct whose changed bit its
// quaternion's first table holds (reporting true; false for any other
// struct): when it changed, nothing (the quaternion's symbol says so),
// else the "unchanged" symbol, inserted at bit position at (or, training,
// noted).
func (e *encoder) foldedMask(rt *modelRT, p *plan, ch fieldSet, at int) bool {
	t, unchanged := rt.foldedTable(p)
	switch {
	case t < 0:
		return false
	case ch[0] != 0:
	case rt.train != nil:
		rt.train.note(t, unchanged)
	default:
		v, l := rt.codes[t].Codeword(unchanged)
		e.w.Insert(at, v, l)
	}
	return true
}

// encFieldsJudged writes the delta of each changed field of a struct,
// judging each while writing it, and marks it in ch.
func (e *encoder) encFieldsJudged(p *plan, b, c unsafe.Pointer, skip int, ch fieldSet) (dirty bool, err error) {
	for i := range p.fields {
		if i == skip {
			continue
		}
		f := &p.fields[i]
		n := f.node
		pb, pc := ptrAt(b, f.off), ptrAt(c, f.off)
		if n.pod && memEqual(pb, pc, n.size) {
			if e.debug {
				e.writeSentinel()
			}
			continue
		}
		changed, err := e.encFieldJudged(f, pb, pc)
		if err != nil {
			return false, err
		}
		if changed {
			ch.set(i)
			dirty = true
		}
		if e.debug {
			e.writeSentinel()
		}
	}
	return dirty, nil
}

// encFieldJudged writes the delta of field f from pb to pc when it changed,
// and reports whether it did: q and quaternion leaves by their keys,
// structs and pointers to them by their own judged deltas (taken back when
// nothing changed), once-judged containers by their deltas, the rest by
// comparing first.
func (e *encoder) encFieldJudged(f *field, pb, pc unsafe.Pointer) (changed bool, err error) {
	rt := e.ar.rt
	n := f.node
	switch {
	case n.code == cQ:
		kc, err := qKey(n, pc)
		if err != nil {
			return false, err
		}
		kb, errb := qKey(n, pb)
		if errb == nil && kb == kc {
			return false, nil
		}
		return true, e.encKeysModel(rt, n, rt.lay.table(n.uid), kb, errb, kc, pc)
	case n.code == cQuat:
		qc, err := n.quat.Pack(loadQuat(n, pc))
		if err != nil {
			return false, err
		}
		qb, errb := n.quat.Pack(loadQuat(n, pb))
		if errb == nil && qb == qc {
			return false, nil
		}
		e.writeQuatModel(rt, n, qb, errb == nil, qc)
		return true, nil
	case n.code == cStruct && !n.spec.composite:
		return e.encStructDelta(n.sub, pb, pc, -1)
	case n.code == cPtr && n.elem.code == cStruct && !n.elem.spec.composite:
		xb, xc := *(*unsafe.Pointer)(pb), *(*unsafe.Pointer)(pc)
		switch {
		case xb == nil && xc == nil:
			return false, nil
		case xb == nil || xc == nil:
			return true, e.encValueDelta(n, pb, pc)
		}
		m := e.mark()
		e.w.WriteBool(true)
		if changed, err = e.encStructDelta(n.elem.sub, xb, xc, -1); err == nil && !changed {
			e.unwrite(m)
		}
		return changed, err
	case f.once:
		m := e.mark()
		switch n.code {
		case cSlice:
			if n.idField >= 0 {
				changed, err = e.encEntityDelta(n, pb, pc)
			} else {
				changed, err = e.encSliceDelta(n, pb, pc)
			}
		case cMap:
			changed, err = e.encMapDelta(n, pb, pc)
		default:
			if changed = !eqNode(n, pb, pc, 0); changed {
				err = e.encValueDelta(n, pb, pc)
			}
		}
		if err == nil && !changed {
			e.unwrite(m)
		}
		return changed, err
	}
	if changed = !eqNode(n, pb, pc, 0); changed {
		err = e.encValueDelta(n, pb, pc)
	}
	return changed, err
}

// writeMasks writes (or, training, notes) the mask symbols of a struct's
// changed fields ch.
func (e *encoder) writeMasks(p *plan, ch fieldSet) {
	rt := e.ar.rt
	if e.foldedMask(rt, p, ch, e.w.Len()) {
		return
	}
	t0, nf := rt.lay.table(p.uid), len(p.fields)
	for j := 0; j*maskChunk < nf; j++ {
		k := min(maskChunk, nf-j*maskChunk)
		m := ch.chunk(j)
		if rt.train != nil {
			rt.train.note(t0+j, int(m)+1)
			continue
		}
		code := rt.codes[t0+j]
		if code.Len(int(m)+1) > 0 {
			code.Write(e.w, int(m)+1)
		} else {
			fields.WriteEsc(e.w, code)
			e.w.WriteBits(m, k)
		}
	}
}

// encStructDeltaCompare is encStructDeltaModel comparing each field first,
// then writing the masks and the changed fields' deltas in place (with
// Stats, each field's bits counted).
func (e *encoder) encStructDeltaCompare(p *plan, b, c unsafe.Pointer, skip int) (bool, error) {
	mark := len(e.ar.words)
	ch := e.ar.takeSet(len(p.fields))
	dirty := false
	for i := range p.fields {
		if i == skip {
			continue
		}
		f := &p.fields[i]
		if !eqNode(f.node, ptrAt(b, f.off), ptrAt(c, f.off), 0) {
			ch.set(i)
			dirty = true
		}
	}
	if !dirty && e.depth > 1 {
		e.ar.words = e.ar.words[:mark]
		return false, nil
	}
	e.writeMasks(p, ch)
	for i := range p.fields {
		if i == skip {
			continue
		}
		f := &p.fields[i]
		var err error
		if e.stats != 0 {
			id, saved, start := e.enter(f.name)
			if ch.has(i) {
				err = e.encValueDelta(f.node, ptrAt(b, f.off), ptrAt(c, f.off))
			}
			e.leave(id, saved, start, ch.has(i))
		} else if ch.has(i) {
			err = e.encValueDelta(f.node, ptrAt(b, f.off), ptrAt(c, f.off))
		}
		if err != nil {
			e.ar.words = e.ar.words[:mark]
			return false, wrapField(err, f.name, e.w.Len())
		}
		if e.debug {
			e.writeSentinel()
		}
	}
	e.ar.words = e.ar.words[:mark]
	return dirty, nil
}

// decStructDeltaModel reads what encStructDeltaModel wrote.
func (d *decoder) decStructDeltaModel(p *plan, b, dst unsafe.Pointer, skip int) error {
	rt := d.ar.rt
	if t, _ := rt.foldedTable(p); t >= 0 {
		return d.decFoldedModel(rt, p, t, b, dst)
	}
	nf := len(p.fields)
	var small [1]uint64
	ch := fieldSet(small[:])
	mark := len(d.ar.words)
	if nf > 64 {
		ch = d.ar.takeSet(nf) // (an error ends the message, which resets the arena)
	}
	if err := d.readMasks(rt, p, ch); err != nil {
		return err
	}
	if skip >= 0 && ch.has(skip) {
		return fmt.Errorf("%w: the id field %s marked changed", ErrMalformed, p.fields[skip].name)
	}
	if size := rt.lay.podSize(p.uid); size > 0 && nf <= 64 && !d.general {
		// Pointer-free fields: copy the unchanged ones (the whole baseline
		// when that is fewer copies), then read the changed ones, each
		// found by its bit.
		if same := ^ch[0] & (1<<uint(nf) - 1); b != dst && same != 0 {
			if mbits.OnesCount64(same) > 2 {
				copyPod(dst, b, size)
			} else {
				for m := same; m != 0; m &= m - 1 {
					f := &p.fields[mbits.TrailingZeros64(m)]
					copyPod(ptrAt(dst, f.off), ptrAt(b, f.off), f.node.size)
				}
			}
		}
		for m := ch[0]; m != 0; m &= m - 1 {
			f := &p.fields[mbits.TrailingZeros64(m)]
			if err := d.decFieldModel(rt, f.node, ptrAt(b, f.off), ptrAt(dst, f.off)); err != nil {
				return wrapField(err, f.name, d.r.Pos())
			}
		}
		return nil
	}
	for i := range p.fields {
		f := &p.fields[i]
		n := f.node
		pb, pd := ptrAt(b, f.off), ptrAt(dst, f.off)
		if ch.has(i) {
			if err := d.decFieldModel(rt, n, pb, pd); err != nil {
				return wrapField(err, f.name, d.r.Pos())
			}
		} else {
			if !n.pod {
				copyNode(n, pd, pb)
			} else if pb != pd {
				copyPod(pd, pb, n.size)
			}
			if i == skip {
				continue
			}
		}
		if d.debug {
			if err := d.sentinel(); err != nil {
				return wrapField(err, f.name, d.r.Pos())
			}
		}
	}
	d.ar.words = d.ar.words[:mark]
	return nil
}

// readMasks reads the mask symbols of struct type p into ch (empty).
func (d *decoder) readMasks(rt *modelRT, p *plan, ch fieldSet) (err error) {
	t0, nf := rt.lay.table(p.uid), len(p.fields)
	if nf <= maskChunk { // one symbol, the common case
		ch[0], err = d.readMask(rt.codes[t0], nf)
		return err
	}
	for j := 0; j*maskChunk < nf; j++ {
		m, err := d.readMask(rt.codes[t0+j], min(maskChunk, nf-j*maskChunk))
		if err != nil {
			return err
		}
		ch.setChunk(j, m)
	}
	return nil
}

// readMask reads the mask of a chunk of k fields with table c: its symbol,
// or ESC and the k bits; a plain table's (no codes) reads as ESC, the k
// bits alone.
func (d *decoder) readMask(c *fields.Code, k int) (uint64, error) {
	if !c.Empty() {
		if s, err := c.Read(d.r); err != nil || s != 0 {
			return uint64(s - 1), err
		}
	}
	return d.r.ReadBits(k)
}

// decFoldedModel reads the delta of a struct whose changed bit its
// quaternion's first table t holds: the table's symbol is "unchanged",
// or the quaternion's first symbol.
func (d *decoder) decFoldedModel(rt *modelRT, p *plan, t int, b, dst unsafe.Pointer) error {
	f := &p.fields[0]
	n := f.node
	pb, pd := ptrAt(b, f.off), ptrAt(dst, f.off)
	start := d.r.Pos()
	sym, err := rt.codes[t].Read(d.r)
	if err != nil {
		return wrapField(err, f.name, d.r.Pos())
	}
	if sym == rt.lay.syms[t]-1 { // unchanged
		if pb != pd {
			copyPod(pd, pb, n.size)
		}
	} else {
		bq := loadQuat(n, pb)
		u, err := n.quat.ReadDeltaCodesFrom(d.r, rt.quats[n.uid-rt.lay.base], &bq, sym, start)
		if err == nil {
			err = storePacked(n, pd, u)
		}
		if err != nil {
			return wrapField(err, f.name, d.r.Pos())
		}
	}
	if d.debug {
		if err := d.sentinel(); err != nil {
			return wrapField(err, f.name, d.r.Pos())
		}
	}
	return nil
}

// decFieldModel reads the delta of a changed field of node n.
func (d *decoder) decFieldModel(rt *modelRT, n *node, pb, pd unsafe.Pointer) error {
	switch {
	case n.code == cQuat:
		return d.decQuatDelta(n, pb, pd)
	case n.row.step != nil: // a leaf that may have a table
		if t := rt.lay.table(n.uid); t >= 0 {
			return d.decScalarModel(rt, n, t, pb, pd)
		}
	}
	return d.decValueDelta(n, pb, pd)
}

// encScalarModel writes a changed scalar with table t: a window's or a
// bounded scalar's difference as a token, or ESC and the value in full.
func (e *encoder) encScalarModel(rt *modelRT, n *node, t int, b, c unsafe.Pointer) error {
	kb, errb := scalarKey(n, b)
	if n.hasD && errb != nil {
		return fmt.Errorf("baseline: %w", errb)
	}
	kc, err := scalarKey(n, c)
	if err != nil {
		return err
	}
	return e.encKeysModel(rt, n, t, kb, errb, kc, c)
}

// encKeysModel is encScalarModel given the keys: kb (errb when the
// baseline has none) and kc of the value at c.
func (e *encoder) encKeysModel(rt *modelRT, n *node, t int, kb uint64, errb error, kc uint64, c unsafe.Pointer) error {
	if n.hasD && errb != nil {
		return fmt.Errorf("baseline: %w", errb)
	}
	var m uint64
	var neg, ok bool
	if n.hasD {
		diff := int64(kc - kb)
		if diff >= n.win.Lo() && diff <= n.win.Hi() {
			m, neg, ok = abs64(diff), diff < 0, true
		}
	} else {
		mr := &rt.mods[t]
		if ub, uc := kb-mr.kmin, kc-mr.kmin; errb == nil && ub <= mr.rm && uc <= mr.rm {
			m, neg, ok = modularDiff(ub, uc, mr.rm)
		}
	}
	if rt.train != nil {
		s := 0
		if ok {
			s = fields.TokenSlot(m) + 1
		}
		rt.train.note(t, s)
		return e.encNode(n, c)
	}
	code := rt.codes[t]
	if ok && fields.WriteToken(e.w, code, m, neg) {
		return nil
	}
	fields.WriteEsc(e.w, code)
	return e.encNode(n, c)
}

// modularDiff returns the shortest signed difference from ub to uc modulo
// rm + 1, as a magnitude and a sign (wire-format.md, "Modular scalars").
func modularDiff(ub, uc, rm uint64) (m uint64, neg, ok bool) {
	r := uc - ub
	if uc < ub {
		r += rm + 1 // wraps to r itself when rm + 1 is 2^64
	}
	if r <= modularHalf(rm) {
		return r, false, r != 0
	}
	return rm - r + 1, true, true
}

// decScalarModel reads what encScalarModel wrote.
func (d *decoder) decScalarModel(rt *modelRT, n *node, t int, b, dst unsafe.Pointer) error {
	m, neg, esc, err := fields.ReadToken(d.r, rt.codes[t])
	if err != nil {
		return err
	}
	if esc {
		return d.decNode(n, dst)
	}
	var kb uint64
	if n.code == cQ { // the commonest, without the row's indirect call
		kb, err = qKey(n, b)
	} else {
		kb, err = scalarKey(n, b)
	}
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	if n.hasD {
		diff := int64(m)
		if neg {
			diff = -diff
		}
		if m>>63 != 0 || diff < n.win.Lo() || diff > n.win.Hi() {
			return fmt.Errorf("%w: difference %d outside the window", ErrMalformed, diff)
		}
		return storeKey(n, dst, kb+uint64(diff))
	}
	mr := &rt.mods[t]
	kmin, rm := mr.kmin, mr.rm
	ub := kb - kmin
	if ub > rm {
		return fmt.Errorf("baseline: %w: key %d outside the field's range", ErrOutOfRange, int64(kb))
	}
	h := mr.h
	if m == 0 || !neg && m > h || neg && m > rm-h {
		return fmt.Errorf("%w: modular difference %d", ErrMalformed, m)
	}
	var u uint64
	switch {
	case !neg && m > rm-ub:
		u = m - (rm - ub) - 1
	case !neg:
		u = ub + m
	case m > ub:
		u = rm - (m - ub) + 1
	default:
		u = ub - m
	}
	if n.code == cQ { // u ≤ rm, the largest index: storeKey without its call
		storeFloat(dst, n.mem, n.q.Value(u+kmin))
		return nil
	}
	return storeKey(n, dst, u+kmin)
}

// writeQuatModel writes a changed quaternion with its tables (or, for a
// trainer, notes its symbols).
func (e *encoder) writeQuatModel(rt *modelRT, n *node, qb uint64, okb bool, qc uint64) {
	if st := rt.train; st != nil {
		t0 := rt.lay.table(n.uid)
		rank, d, rel := n.quat.DeltaSymbolsIn(&st.quats[n.uid-rt.lay.base], qb, okb, qc)
		if !okb {
			st.note(t0, 0) // no baseline to be relative to
			return
		}
		st.noteQuat(t0, n.quat.ComponentBits(), rank, &d, rel)
		return
	}
	n.quat.WriteDeltaCodes(e.w, rt.quats[n.uid-rt.lay.base], qb, okb, qc)
}

func abs64(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

// fieldSet is a set of field indexes, a bit each (mask chunk j is bits
// 8j..8j+7).
type fieldSet []uint64

func (s fieldSet) set(i int)      { s[i>>6] |= 1 << (i & 63) }
func (s fieldSet) has(i int) bool { return s[i>>6]>>(i&63)&1 != 0 }

// chunk returns mask chunk j.
func (s fieldSet) chunk(j int) uint64 { return s[j>>3] >> ((j & 7) * 8) & 0xFF }

// setChunk sets mask chunk j (which must be clear) to m.
func (s fieldSet) setChunk(j int, m uint64) { s[j>>3] |= m << ((j & 7) * 8) }

// takeSet returns an empty set for n fields from the arena's words; the
// caller truncates a.words back when done.
func (a *arena) takeSet(n int) fieldSet {
	k := len(a.words)
	nw := (n + 63) >> 6
	for range nw {
		a.words = append(a.words, 0)
	}
	return fieldSet(a.words[k : k+nw : k+nw])
}
