package bitwire

import (
	"fmt"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// The delta coders' side of models (wire-format.md, "Models"): a struct's
// changed fields as mask symbols written before the fields, windowed and
// bounded scalars as tokens, quaternions with their tables. A trainer runs
// the same code with no tables: each symbol is noted instead of written.

// encStructDeltaModel writes a struct's masks, then each changed field's
// delta (compare first, then write). It reports whether any field changed.
func (e *encoder) encStructDeltaModel(p *plan, b, c unsafe.Pointer, skip int) (bool, error) {
	rt := e.ar.rt
	t0 := rt.lay.plans[p]
	nf := len(p.fields)
	mark := len(e.ar.buf)
	ch := e.ar.take(nf)[:nf]
	dirty := false
	for i := range p.fields {
		ch[i] = 0
		if i == skip {
			continue
		}
		f := &p.fields[i]
		if !eqNode(f.node, ptrAt(b, f.off), ptrAt(c, f.off), 0) {
			ch[i] = 1
			dirty = true
		}
	}
	for j := 0; j*maskChunk < nf; j++ {
		k := min(maskChunk, nf-j*maskChunk)
		var m uint64
		for i := range k {
			m |= uint64(ch[j*maskChunk+i]) << i
		}
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
	for i := range p.fields {
		if i == skip {
			continue
		}
		f := &p.fields[i]
		var err error
		if e.stats != 0 {
			id, saved, start := e.enter(f.name)
			if ch[i] != 0 {
				err = e.encValueDelta(f.node, ptrAt(b, f.off), ptrAt(c, f.off))
			}
			e.leave(id, saved, start, ch[i] != 0)
		} else if ch[i] != 0 {
			err = e.encValueDelta(f.node, ptrAt(b, f.off), ptrAt(c, f.off))
		}
		if err != nil {
			e.ar.buf = e.ar.buf[:mark]
			return false, wrapField(err, f.name, e.w.Len())
		}
		if e.debug {
			e.writeSentinel()
		}
	}
	e.ar.buf = e.ar.buf[:mark]
	return dirty, nil
}

// decStructDeltaModel reads what encStructDeltaModel wrote.
func (d *decoder) decStructDeltaModel(p *plan, b, dst unsafe.Pointer, skip int) error {
	rt := d.ar.rt
	t0 := rt.lay.plans[p]
	nf := len(p.fields)
	mark := len(d.ar.buf)
	defer func() { d.ar.buf = d.ar.buf[:mark] }()
	ch := d.ar.take(nf)[:nf]
	for j := 0; j*maskChunk < nf; j++ {
		k := min(maskChunk, nf-j*maskChunk)
		s, err := rt.codes[t0+j].Read(d.r)
		if err != nil {
			return err
		}
		m := uint64(s - 1)
		if s == 0 {
			if m, err = d.r.ReadBits(k); err != nil {
				return err
			}
		}
		for i := range k {
			ch[j*maskChunk+i] = int32(m >> i & 1)
		}
	}
	if skip >= 0 && ch[skip] != 0 {
		return fmt.Errorf("%w: the id field %s marked changed", ErrMalformed, p.fields[skip].name)
	}
	for i := range p.fields {
		f := &p.fields[i]
		n := f.node
		pb, pd := ptrAt(b, f.off), ptrAt(dst, f.off)
		if ch[i] != 0 {
			if err := d.decValueDelta(n, pb, pd); err != nil {
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
	return nil
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
	var m uint64
	var neg, ok bool
	if n.hasD {
		diff := int64(kc - kb)
		if diff >= n.win.Lo() && diff <= n.win.Hi() {
			m, neg, ok = abs64(diff), diff < 0, true
		}
	} else {
		kmin, rm, _ := modularRange(n)
		if ub, uc := kb-kmin, kc-kmin; errb == nil && ub <= rm && uc <= rm {
			m, neg, ok = modularDiff(ub, uc, rm)
		}
	}
	if rt.train != nil {
		s := 0
		if ok {
			s = fields.TokenClass(m) + 1
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
	kb, err := scalarKey(n, b)
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
	kmin, rm, _ := modularRange(n)
	ub := kb - kmin
	if ub > rm {
		return fmt.Errorf("baseline: %w: key %d outside the field's range", ErrOutOfRange, int64(kb))
	}
	h := modularHalf(rm)
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
	return storeKey(n, dst, u+kmin)
}

// writeQuatModel writes a changed quaternion with its tables (or, for a
// trainer, notes its symbols).
func (e *encoder) writeQuatModel(rt *modelRT, n *node, qb uint64, okb bool, qc uint64) {
	if st := rt.train; st != nil {
		t0 := rt.lay.nodes[n]
		rank, d, rel := n.quat.DeltaSymbols(qb, okb, qc)
		if !rel {
			st.note(t0, 0)
			return
		}
		st.note(t0, rank+1)
		for k := range 3 {
			st.note(t0+1+fields.QuatDiffTable(rank, &d, k), fields.TokenClass(abs64(d[k]))+1)
		}
		return
	}
	n.quat.WriteDeltaCodes(e.w, rt.quats[n], qb, okb, qc)
}

func abs64(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}
