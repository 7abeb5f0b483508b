package bitwire

import (
	"fmt"
	"math"
	"unsafe"
)

// Entity sets: slices of structs with an id field, matched by id in deltas.

// encEntityDelta writes: the new length; the removed entities (a set of
// baseline indexes); where new entities go (a set of new indexes, whose
// count the reader infers); which survivors changed (a set of survivor
// ordinals); each changed survivor's delta without its id; then each new
// entity in full. Entities are matched in one pass that assumes ids ascend
// (or keep their order); any order is coded correctly, but an entity out of
// order may be sent as removed and new. It reports whether the set changed.
func (e *encoder) encEntityDelta(n *node, b, c unsafe.Pointer) (bool, error) {
	if !e.general && n.elem.sub.nest <= maxShallow {
		m := e.markStates()
		if changed, err := e.encEntityDeltaFused(n, b, c); err == nil {
			e.commit(&m)
			return changed, nil
		}
		// The fused pass locates errors inside its scratch writer; the
		// plain pass below finds the same error at its place in the message
		// (with the relative quaternions' states as they were).
		e.rewind(m)
	}
	sb, sc := (*sliceHeader)(b), (*sliceHeader)(c)
	if err := e.writeLen(sc.len, n.maxlen); err != nil {
		return false, err
	}
	if e.stats != 0 {
		e.noteUnordered(n, sc)
		id, saved, start := e.enter("[]")
		defer e.leave(id, saved, start, true)
	}
	mark := len(e.ar.buf)
	defer func() { e.ar.buf = e.ar.buf[:mark] }()
	removed := e.ar.take(sb.len)
	added := e.ar.take(sc.len)
	common := min(sb.len, sc.len)
	changed := e.ar.take(common)  // survivor ordinals
	changedB := e.ar.take(common) // their baseline indexes
	changedC := e.ar.take(common) // and new indexes
	idf := &n.elem.sub.fields[n.idField]
	idOff, idMem := idf.off, idf.node.mem
	survivors := 0
	i, j := 0, 0
	for i < sb.len && j < sc.len {
		pb, pc := ptrAt(sb.data, uintptr(i)*n.stride), ptrAt(sc.data, uintptr(j)*n.stride)
		ib, ic := loadInt(ptrAt(pb, idOff), idMem), loadInt(ptrAt(pc, idOff), idMem)
		switch {
		case ib == ic:
			if !eqNode(n.elem, pb, pc, 0) {
				changed = append(changed, int32(survivors))
				changedB, changedC = append(changedB, int32(i)), append(changedC, int32(j))
			}
			survivors++
			i++
			j++
		case ib < ic:
			removed = append(removed, int32(i))
			i++
		default:
			added = append(added, int32(j))
			j++
		}
	}
	added = e.writeEntitySets(sb.len, sc.len, i, j, removed, added, changed, survivors)
	for k := range changed {
		pb, pc := ptrAt(sb.data, uintptr(changedB[k])*n.stride), ptrAt(sc.data, uintptr(changedC[k])*n.stride)
		if _, err := e.encStructDelta(n.elem.sub, pb, pc, n.idField); err != nil {
			return false, wrapField(err, fmt.Sprintf("[%d]", changedC[k]), e.w.Len())
		}
	}
	return survivors != sb.len || survivors != sc.len || len(changed) > 0, e.encAdded(n, sc, added)
}

// encEntityDeltaFused writes what encEntityDelta writes, judging and
// encoding each survivor in one pass: a survivor's delta goes to a scratch
// writer while the entities are matched, and is dropped again if no field
// changed. Runs of survivors that are equal byte for byte (pointer-free
// elements only) are skipped at once (equalRun). Its errors carry bit
// offsets of the scratch writer; encEntityDelta reruns the plain pass for
// them.
func (e *encoder) encEntityDeltaFused(n *node, b, c unsafe.Pointer) (bool, error) {
	sb, sc := (*sliceHeader)(b), (*sliceHeader)(c)
	if err := e.writeLen(sc.len, n.maxlen); err != nil {
		return false, err
	}
	mark := len(e.ar.buf)
	sw := e.ar.writer()
	defer func() { e.ar.buf = e.ar.buf[:mark]; e.ar.release(sw) }()
	// The survivors' encoder: e with the scratch writer. (A local copy,
	// since storing sw into e.w would make every writer escape.)
	se := *e
	se.w = sw
	// The loop keeps few values live across the survivors' calls (which
	// save no registers): the sets are filled by counts, and the survivors
	// so far are i-nr.
	nb, nc, stride := sb.len, sc.len, n.stride
	db, dc := sb.data, sc.data
	removed := e.ar.take(nb)[:nb]
	added := e.ar.take(nc)[:nc]
	changed := e.ar.take(min(nb, nc))[:min(nb, nc)] // survivor ordinals
	nr, na, nch := 0, 0, 0
	idField := n.idField
	idf := &n.elem.sub.fields[idField]
	idOff, idMem := idf.off, idf.node.mem
	pod := n.elem.pod
	// The survivors' deltas by the struct's delta plan where it applies
	// (encStructDelta's choice, made once for the set).
	sub := n.elem.sub
	dp := sub.dflat
	if dp != nil && (e.ar.rt != nil || e.general || e.depth+dp.depth > e.maxDepth) {
		dp = nil
	}
	i, j := 0, 0
	for i < nb && j < nc {
		pb, pc := ptrAt(db, uintptr(i)*stride), ptrAt(dc, uintptr(j)*stride)
		// A first word that differs (a changed element, usually) needs no
		// call; else a run of equal elements is skipped at once.
		if pod && (stride < 8 || load64(pb) == load64(pc)) {
			if run := equalRun(pb, pc, min(nb-i, nc-j), stride); run > 0 {
				i += run
				j += run
				continue
			}
		}
		ib, ic := loadInts(ptrAt(pb, idOff), ptrAt(pc, idOff), idMem)
		if ib != ic {
			if ib < ic {
				removed[nr] = int32(i)
				nr++
				i++
			} else {
				added[na] = int32(j)
				na++
				j++
			}
			continue
		}
		m := se.mark()
		var ch, ok bool
		if dp != nil {
			ch, ok = se.encStructDeltaFlat(dp, pb, pc, idField)
		}
		if !ok {
			var err error
			if ch, err = se.encStructDelta(sub, pb, pc, idField); err != nil {
				return false, err
			}
		}
		if ch {
			changed[nch] = int32(i - nr)
			nch++
		} else {
			se.unwrite(m) // only unchanged bits: the survivor is unchanged
		}
		i++
		j++
	}
	survivors := i - nr
	added = e.writeEntitySets(nb, nc, i, j, removed[:nr], added[:na], changed[:nch], survivors)
	e.w.WriteFrom(sw)
	e.flagged, e.neg = se.flagged, se.neg
	return survivors != nb || survivors != nc || nch > 0, e.encAdded(n, sc, added)
}

// writeEntitySets ends the matching of nb baseline entities with nc new
// ones, stopped at i and j (what is left of either side was removed or is
// new), and writes the three index sets. It returns the full added set.
func (e *encoder) writeEntitySets(nb, nc, i, j int, removed, added, changed []int32, survivors int) []int32 {
	for ; i < nb; i++ {
		removed = append(removed, int32(i))
	}
	for ; j < nc; j++ {
		added = append(added, int32(j))
	}
	e.writeIndexSet(removed, nb, false)
	e.writeIndexSet(added, nc, true)
	e.writeIndexSet(changed, survivors, false)
	return added
}

// encAdded writes the new entities of an entity set in full.
func (e *encoder) encAdded(n *node, sc *sliceHeader, added []int32) error {
	for _, j := range added {
		if err := e.encNode(n.elem, ptrAt(sc.data, uintptr(j)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", j), e.w.Len())
		}
	}
	return nil
}

// entityCursor reads the changed entities of a set whose delta plan's
// word loop reads every leaf of an entity itself (dp.wordsNoID), when the
// kernel may run as decStructDeltaKernel decides it: at a bit position of
// its own, the reader moved to it only before another read of the set
// and at its end, which spares a reader round trip an entity.
type entityCursor struct {
	dp     *deltaPlan // nil: the entities are read through the reader
	data   []byte     // the input
	pos    int        // the cursor's bit in data
	behind bool       // the reader is not at pos yet
}

// start sets the cursor up for set n at the reader's position.
func (ec *entityCursor) start(d *decoder, n *node) {
	dp := n.elem.sub.dflat
	if dp == nil || !dp.wordsNoID || dp.decBitsNoID == 0 || dp.idField != n.idField ||
		d.general || d.debug || d.ar.rt != nil || d.depth+dp.depth > d.maxDepth {
		return
	}
	ec.dp = dp
	ec.data, ec.pos = d.r.Source()
}

// sync moves the reader to the cursor.
func (ec *entityCursor) sync(d *decoder) {
	if ec.behind {
		d.r.SkipTo(ec.pos)
		ec.behind = false
	}
}

// changed reads the delta of a changed survivor of set n from its
// baseline pb into pd (ec.dp set): by words at the cursor when it can,
// else through the reader (where an error is reported).
func (ec *entityCursor) changed(d *decoder, n *node, pb, pd unsafe.Pointer) error {
	if dp := ec.dp; dp != nil && ec.pos+dp.decBitsNoID+64 <= len(ec.data)*8 {
		if pb != pd {
			copyPod(pd, pb, dp.size)
		}
		src := unsafe.Pointer(unsafe.SliceData(ec.data))
		if next, _, st := deltaWords(dp.noID, 0, src, uint(ec.pos), pd); st == wordsDone {
			ec.pos, ec.behind = int(next), true
			return nil
		}
		// A key out of its range: the reader's paths report it.
	}
	ec.sync(d)
	if !d.decEntityKernel(n, pb, pd) {
		if err := d.decStructDelta(n.elem.sub, pb, pd, n.idField); err != nil {
			return err
		}
	}
	_, ec.pos = d.r.Source()
	return nil
}

// decEntityKernel reads a changed entity of set n by
// decStructDeltaKernel when its operations allow, and reports whether it
// did.
func (d *decoder) decEntityKernel(n *node, pb, pd unsafe.Pointer) bool {
	dp := n.elem.sub.dflat
	return dp != nil && dp.decBitsNoID > 0 && dp.idField == n.idField && d.decStructDeltaKernel(dp, dp.noID, dp.decBitsNoID, pb, pd)
}

func (d *decoder) decEntityDelta(n *node, b, dst unsafe.Pointer) error {
	sb, sd := (*sliceHeader)(b), (*sliceHeader)(dst)
	l, err := d.readLen(n, 0) // the elements are bounded below, by what is new
	if err != nil {
		return err
	}
	mark := len(d.ar.buf)
	defer func() { d.ar.buf = d.ar.buf[:mark] }()
	removed, added, changed, err := d.readEntitySets(n, sb.len, l)
	if err != nil {
		return err
	}
	if err := d.charge(len(added), n.stride); err != nil { // survivors are the baseline's
		return err
	}
	if l == 0 {
		*sd = sliceHeader{}
		return nil
	}
	growSlice(n, sd, l, sb.data)
	if err := d.decSurvivors(n, sb, sd, removed, added, changed); err != nil {
		return err
	}
	for _, j := range added {
		if err := d.decNode(n.elem, ptrAt(sd.data, uintptr(j)*n.stride)); err != nil {
			return wrapField(err, fmt.Sprintf("[%d]", j), d.r.Pos())
		}
	}
	return nil
}

// decSurvivors fills the survivors of entity set n into the new slice sd
// from the baseline sb, by the delta's index sets: it copies the unchanged
// ones and reads the changed ones' deltas, and leaves the slots of the
// added entities to be read after it.
func (d *decoder) decSurvivors(n *node, sb, sd *sliceHeader, removed, added, changed []int32) error {
	// The new slice is walked in stretches between events (a new entity,
	// a removed one, a changed survivor); each stretch is a run of
	// unchanged survivors, contiguous on both sides, copied at once.
	const none = math.MaxInt
	at := func(set []int32, k int) int { // the k-th entry of set, or none
		if k < len(set) {
			return int(set[k])
		}
		return none
	}
	bi, ai, ri, ci, k := 0, 0, 0, 0, 0 // baseline index, set positions, survivor ordinal
	na, nr, nc := at(added, 0), at(removed, 0), at(changed, 0)
	// Changed survivors the word loop reads whole are read at a bit
	// position of the set's own (see entityCursor).
	var ec entityCursor
	ec.start(d, n)
	for j, l := 0, sd.len; j < l; {
		if na == j {
			ai++
			na = at(added, ai)
			j++
			continue
		}
		if nr == bi {
			ri++
			nr = at(removed, ri)
			bi++
			continue
		}
		if bi >= sb.len {
			return fmt.Errorf("%w: entity set survivors run past the baseline", ErrMalformed)
		}
		if nc == k {
			ci++
			nc = at(changed, ci)
			pb, pd := ptrAt(sb.data, uintptr(bi)*n.stride), ptrAt(sd.data, uintptr(j)*n.stride)
			var err error
			if ec.dp != nil {
				err = ec.changed(d, n, pb, pd)
			} else if !d.decEntityKernel(n, pb, pd) {
				err = d.decStructDelta(n.elem.sub, pb, pd, n.idField)
			}
			if err != nil {
				return wrapField(err, fmt.Sprintf("[%d]", j), d.r.Pos())
			}
			j, bi, k = j+1, bi+1, k+1
			continue
		}
		run := min(na-j, nr-bi, nc-k, l-j, sb.len-bi)
		if n.elem.pod {
			sz := uintptr(run) * n.stride
			copy(unsafe.Slice((*byte)(ptrAt(sd.data, uintptr(j)*n.stride)), sz),
				unsafe.Slice((*byte)(ptrAt(sb.data, uintptr(bi)*n.stride)), sz))
		} else {
			for x := 0; x < run; x++ {
				copyNode(n.elem, ptrAt(sd.data, uintptr(j+x)*n.stride), ptrAt(sb.data, uintptr(bi+x)*n.stride))
			}
		}
		j, bi, k = j+run, bi+run, k+run
	}
	ec.sync(d)
	return nil
}

// readEntitySets reads the three index sets of an entity set's delta from
// a baseline of nb entities to l: the removed baseline indexes, where the
// new entities go, and which survivors changed.
func (d *decoder) readEntitySets(n *node, nb, l int) (removed, added, changed []int32, err error) {
	if removed, err = d.readIndexSet(d.ar, nb, -1); err != nil {
		return nil, nil, nil, err
	}
	surv := nb - len(removed)
	nAdded := l - surv
	if nAdded < 0 {
		return nil, nil, nil, fmt.Errorf("%w: %d entities after removing %d of %d", ErrMalformed, l, len(removed), nb)
	}
	if nAdded > 0 && nAdded > d.r.Remaining()/max(1, n.emin) {
		return nil, nil, nil, fmt.Errorf("%w: %d new entities need more input than remains", ErrUnexpectedEnd, nAdded)
	}
	if added, err = d.readIndexSet(d.ar, l, nAdded); err != nil {
		return nil, nil, nil, err
	}
	changed, err = d.readIndexSet(d.ar, surv, -1)
	return removed, added, changed, err
}
