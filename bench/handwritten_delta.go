package bench

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The hand-written delta of World: bitwire's delta layout for this one type,
// written out with packages bits and fields. A changed bit per top-level
// field; the crates as an entity set (new length, removed baseline indexes,
// where new crates go, which survivors changed, each changed survivor's
// field deltas without its id, then new crates in full); a changed
// quaternion against its baseline (fields.Quat.WriteDelta, wire version 2),
// with one adaptive state for all crates of the message.

var errHandDelta = errors.New("handwritten: malformed delta")

// HandWorldDelta holds the scratch lists of one encoder or decoder.
type HandWorldDelta struct {
	removed, added, survB, survC, changed []int32
	keys                                  [][2]crateKey // each changed survivor's keys, baseline and current
	rot                                   fields.QuatDeltaState
}

// crateKey is a crate as its coding sees it: two crates with the same key
// encode to the same bits.
type crateKey struct {
	id         uint32
	x, y, z    uint64
	rot        uint64
	asleep     bool
	posOK, rOK bool
}

func keyOf(c *Crate) crateKey {
	k := crateKey{id: c.ID, asleep: c.Asleep}
	var ex, ey, ez, er error
	k.x, ex = hand.crateXZ.Index(float64(c.Pos.X))
	k.y, ey = hand.crateY.Index(float64(c.Pos.Y))
	k.z, ez = hand.crateXZ.Index(float64(c.Pos.Z))
	k.rot, er = hand.rot.Pack(rot64(c.Rot))
	k.posOK = ex == nil && ey == nil && ez == nil
	k.rOK = er == nil
	return k
}

func rot64(q [4]float32) [4]float64 {
	return [4]float64{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
}

// Encode writes the delta from base to cur.
func (h *HandWorldDelta) Encode(w *bits.Writer, base, cur *World) error {
	h.rot = fields.NewQuatDeltaState()
	tickChanged := base.Tick != cur.Tick
	w.WriteBool(tickChanged)
	if tickChanged {
		w.WriteBits(uint64(cur.Tick), 32)
	}
	nb, nc := len(base.Crates), len(cur.Crates)
	// One pass matches ids and judges each survivor: equal memory codes
	// the same; otherwise the keys decide, and are kept for encoding.
	h.removed, h.added, h.survB, h.survC = h.removed[:0], h.added[:0], h.survB[:0], h.survC[:0]
	h.changed, h.keys = h.changed[:0], h.keys[:0]
	survivors := 0
	i, j := 0, 0
	for i < nb && j < nc {
		b, c := &base.Crates[i], &cur.Crates[j]
		switch {
		case b.ID == c.ID:
			if *b != *c {
				kb, kc := keyOf(b), keyOf(c)
				if !(kb.posOK && kb.rOK && kc.posOK && kc.rOK && kb == kc) {
					h.changed = append(h.changed, int32(survivors))
					h.survB, h.survC = append(h.survB, int32(i)), append(h.survC, int32(j))
					h.keys = append(h.keys, [2]crateKey{kb, kc})
				}
			}
			survivors++
			i++
			j++
		case b.ID < c.ID:
			h.removed = append(h.removed, int32(i))
			i++
		default:
			h.added = append(h.added, int32(j))
			j++
		}
	}
	for ; i < nb; i++ {
		h.removed = append(h.removed, int32(i))
	}
	for ; j < nc; j++ {
		h.added = append(h.added, int32(j))
	}
	cratesChanged := nb != nc || len(h.changed) > 0 || len(h.removed) > 0
	w.WriteBool(cratesChanged)
	if !cratesChanged {
		return nil
	}
	if err := fields.WriteLen(w, nc, cratesMax); err != nil {
		return err
	}
	writeIndexSet(w, h.removed, nb, false)
	writeIndexSet(w, h.added, nc, true)
	writeIndexSet(w, h.changed, survivors, false)
	for k := range h.changed {
		if err := encodeCrateDelta(w, &h.rot, h.keys[k][0], h.keys[k][1], &base.Crates[h.survB[k]], &cur.Crates[h.survC[k]]); err != nil {
			return fmt.Errorf("Crates[%d]: %w", h.survC[k], err)
		}
	}
	for _, j := range h.added {
		if err := HandEncodeCrate(w, &cur.Crates[j]); err != nil {
			return fmt.Errorf("Crates[%d]: %w", j, err)
		}
	}
	return nil
}

// encodeCrateDelta writes the field deltas of a crate that changed, whose
// keys are kb and kc; the id is left out, since it matched.
func encodeCrateDelta(w *bits.Writer, rs *fields.QuatDeltaState, kb, kc crateKey, b, c *Crate) error {
	if !kc.posOK || !kc.rOK {
		return fields.ErrOutOfRange
	}
	posChanged := kb.x != kc.x || kb.y != kc.y || kb.z != kc.z || !kb.posOK
	w.WriteBool(posChanged)
	if posChanged {
		for _, f := range [3]struct {
			bits   int
			ib, ic uint64
		}{{hand.crateXZ.Bits(), kb.x, kc.x}, {hand.crateY.Bits(), kb.y, kc.y}, {hand.crateXZ.Bits(), kb.z, kc.z}} {
			ch := f.ib != f.ic || !kb.posOK
			w.WriteBool(ch)
			if ch {
				w.WriteBits(f.ic, f.bits)
			}
		}
	}
	rotChanged := kb.rot != kc.rot || !kb.rOK
	w.WriteBool(rotChanged)
	if rotChanged {
		hand.rot.WriteDelta(w, rs, kb.rot, kb.rOK, kc.rot)
	}
	asleepChanged := b.Asleep != c.Asleep
	w.WriteBool(asleepChanged)
	if asleepChanged {
		w.WriteBool(c.Asleep)
	}
	return nil
}

func readQuatDelta(r *bits.Reader, rs *fields.QuatDeltaState, base [4]float32) ([4]float32, error) {
	b := rot64(base)
	q, err := hand.rot.ReadDelta(r, rs, &b)
	if err != nil {
		return base, err
	}
	v, err := hand.rot.Unpack(q)
	if err != nil {
		return base, err
	}
	return [4]float32{float32(v[0]), float32(v[1]), float32(v[2]), float32(v[3])}, nil
}

// Decode rebuilds into out the world whose delta from base is in r. out
// must not share its crates with base.
func (h *HandWorldDelta) Decode(r *bits.Reader, base, out *World) error {
	h.rot = fields.NewQuatDeltaState()
	tickChanged, err := r.ReadBool()
	if err != nil {
		return err
	}
	out.Tick = base.Tick
	if tickChanged {
		t, err := r.ReadBits(32)
		if err != nil {
			return err
		}
		out.Tick = uint32(t)
	}
	cratesChanged, err := r.ReadBool()
	if err != nil {
		return err
	}
	if !cratesChanged {
		out.Crates = append(out.Crates[:0], base.Crates...)
		return nil
	}
	nb := len(base.Crates)
	n, err := fields.ReadLen(r, cratesMax)
	if err != nil {
		return err
	}
	if h.removed, err = readIndexSet(r, h.removed[:0], nb, -1); err != nil {
		return err
	}
	surv := nb - len(h.removed)
	nAdded := n - surv
	if nAdded < 0 || nAdded*minCrateBits > r.Remaining() {
		return errHandDelta
	}
	if h.added, err = readIndexSet(r, h.added[:0], n, nAdded); err != nil {
		return err
	}
	if h.changed, err = readIndexSet(r, h.changed[:0], surv, -1); err != nil {
		return err
	}
	if cap(out.Crates) < n {
		out.Crates = make([]Crate, n)
	}
	out.Crates = out.Crates[:n]
	removed, added, changed := h.removed, h.added, h.changed
	bi, k := 0, 0
	for j := range out.Crates {
		if len(added) > 0 && int(added[0]) == j {
			added = added[1:]
			continue
		}
		for len(removed) > 0 && bi == int(removed[0]) {
			removed = removed[1:]
			bi++
		}
		if bi >= nb {
			return errHandDelta
		}
		out.Crates[j] = base.Crates[bi]
		if len(changed) > 0 && int(changed[0]) == k {
			changed = changed[1:]
			if err := decodeCrateDelta(r, &h.rot, &out.Crates[j]); err != nil {
				return err
			}
		}
		bi++
		k++
	}
	for _, j := range h.added {
		if err := HandDecodeCrate(r, &out.Crates[j]); err != nil {
			return err
		}
	}
	return nil
}

// decodeCrateDelta applies a crate's field deltas to c, which holds its
// baseline.
func decodeCrateDelta(r *bits.Reader, rs *fields.QuatDeltaState, c *Crate) error {
	posChanged, err := r.ReadBool()
	if err != nil {
		return err
	}
	if posChanged {
		for _, f := range [3]struct {
			q *fields.Quantizer
			p *float32
		}{{&hand.crateXZ, &c.Pos.X}, {&hand.crateY, &c.Pos.Y}, {&hand.crateXZ, &c.Pos.Z}} {
			ch, err := r.ReadBool()
			if err != nil {
				return err
			}
			if ch {
				v, err := f.q.Read(r)
				if err != nil {
					return err
				}
				*f.p = float32(v)
			}
		}
	}
	rotChanged, err := r.ReadBool()
	if err != nil {
		return err
	}
	if rotChanged {
		if c.Rot, err = readQuatDelta(r, rs, c.Rot); err != nil {
			return err
		}
	}
	asleepChanged, err := r.ReadBool()
	if err != nil {
		return err
	}
	if asleepChanged {
		if c.Asleep, err = r.ReadBool(); err != nil {
			return err
		}
	}
	return nil
}

// ---- index sets ----

// An index set is a sorted set of indexes in [0, n): its count (bitlen with
// a 5-bit prefix) unless the reader knows it; nothing more when the count
// is 0 or n; else one bit: 0 and a bitmask of n bits, or 1, a 5-bit Rice
// parameter k and each gap (the distance from the previous index, less one)
// as gap>>k one-bits, a zero and the low k bits. The shorter form wins, the
// bitmask on ties.

const (
	setCountWidth = 5
	riceKBits     = 5
	riceKMax      = 23
)

func riceBits(idx []int32, k int) int {
	n, prev := 0, int32(-1)
	for _, i := range idx {
		n += int(i-prev-1)>>k + 1 + k
		prev = i
	}
	return n
}

func writeIndexSet(w *bits.Writer, idx []int32, n int, countKnown bool) {
	if !countKnown {
		fields.WriteBitlen(w, uint64(len(idx)), setCountWidth)
	}
	if len(idx) == 0 || len(idx) == n {
		return
	}
	k, best := 0, riceBits(idx, 0)
	for kk := 1; kk <= riceKMax; kk++ {
		if c := riceBits(idx, kk); c < best {
			k, best = kk, c
		}
	}
	if n <= riceKBits+best {
		w.WriteBool(false)
		next := 0
		for i := range n {
			hit := next < len(idx) && int(idx[next]) == i
			w.WriteBool(hit)
			if hit {
				next++
			}
		}
		return
	}
	w.WriteBits(1|uint64(k)<<1, 1+riceKBits)
	prev := int32(-1)
	for _, i := range idx {
		g := uint64(i - prev - 1)
		for q := g >> k; q > 0; q-- {
			w.WriteBool(true)
		}
		w.WriteBool(false)
		w.WriteBits(g, k)
		prev = i
	}
}

// readIndexSet appends to dst the set of indexes in [0, n); count < 0 means
// the count is coded.
func readIndexSet(r *bits.Reader, dst []int32, n, count int) ([]int32, error) {
	if count < 0 {
		c, err := fields.ReadBitlen(r, setCountWidth)
		if err != nil {
			return dst, err
		}
		if c > uint64(n) {
			return dst, errHandDelta
		}
		count = int(c)
	}
	switch count {
	case 0:
		return dst, nil
	case n:
		for i := range n {
			dst = append(dst, int32(i))
		}
		return dst, nil
	}
	rice, err := r.ReadBool()
	if err != nil {
		return dst, err
	}
	if !rice {
		if n > r.Remaining() {
			return dst, bits.ErrUnexpectedEnd
		}
		for i := range n {
			if hit, _ := r.ReadBool(); hit {
				dst = append(dst, int32(i))
			}
		}
		if len(dst) != count {
			return dst, errHandDelta
		}
		return dst, nil
	}
	k, err := r.ReadBits(riceKBits)
	if err != nil {
		return dst, err
	}
	if k > riceKMax {
		return dst, errHandDelta
	}
	prev := int64(-1)
	for range count {
		var q int64
		for {
			one, err := r.ReadBool()
			if err != nil {
				return dst, err
			}
			if !one {
				break
			}
			if q++; q > int64(n) {
				return dst, errHandDelta
			}
		}
		low, err := r.ReadBits(int(k))
		if err != nil {
			return dst, err
		}
		i := prev + 1 + q<<k + int64(low)
		if i >= int64(n) {
			return dst, errHandDelta
		}
		dst = append(dst, int32(i))
		prev = i
	}
	return dst, nil
}
