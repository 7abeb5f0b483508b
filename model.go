package bitwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	mbits "math/bits"
	"slices"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Models: canonical prefix codes for deltas, trained offline on recorded
// (baseline, current) pairs (Trainer) and shipped with client and server.
// A codec with a model (Codec.WithModel) codes, in deltas, the changed bits
// of each struct as mask symbols, windowed and bounded scalars as tokens
// of their difference, and quaternions with a first table (the form and
// the first difference's slot) and difference tables by context, instead of the codes that adapt within each message:
// no state at all crosses values. The tables are numbered by a depth-first
// walk of the plan (modelLayoutOf); docs/wire-format.md, "Models", gives
// the file format and how the tables are used.

var (
	// ErrModel: a model file that is corrupt, of another version, or for
	// another layout than the codec's. A codec given such a model by
	// WithModel returns it (wrapped) from every delta method.
	ErrModel = errors.New("bitwire: bad model")
	// ErrNoTraining: Trainer.Model before any pair was added.
	ErrNoTraining = errors.New("bitwire: no training data")
)

// modelMagic and a version byte open a model file. Version 3 changed the
// tables of quaternions (a first table that joins the form and the first
// difference's slot; difference tables that may omit ESC); a model
// without quaternion tables is the same in both and is written as version
// 2, byte for byte what earlier writers wrote, so that it keeps its hash.
const (
	modelMagic      = "BWM"
	modelVersion    = 3
	modelVersionOld = 2
)

// hasQuat reports whether kinds hold a quaternion's tables.
func hasQuat(kinds []uint8) bool {
	return slices.Contains(kinds, tkQuatFirst) || slices.Contains(kinds, tkQuatDiff)
}

// The kinds of model tables (wire-format.md, "Models").
const (
	tkMask      = 1 // the changed bits of a chunk of up to 8 fields
	tkWindow    = 2 // the difference of a windowed scalar
	tkModular   = 3 // the difference of a bounded scalar, modulo its range
	tkQuatFirst = 4 // a quaternion's form and first difference slot
	tkQuatDiff  = 5 // a quaternion's difference
)

// maskChunk is the number of fields one mask symbol covers.
const maskChunk = 8

// Model holds the trained tables of one message layout. The zero Model
// holds no tables and is refused by WithModel; fill it with
// Trainer.Model or UnmarshalBinary.
//
// A Model holds each table's code lengths, not its code: a code's lookup
// tables take some 4 KB even for a 5-byte table (loading a 1 MB file built
// 886 MB of them), so bindModel builds the codes once the number of tables
// is known to be the layout's, which the program defines.
type Model struct {
	layout uint64   // the fingerprint of the layout trained on
	kinds  []uint8  // each table's kind
	lens   []uint8  // every table's code lengths (checked by fields.CheckCode), one table after another
	ends   []uint32 // where each table's lengths end in lens
	hash   uint64   // FNV-1a 64 of MarshalBinary's bytes
}

// tables is the number of tables m holds.
func (m *Model) tables() int { return len(m.kinds) }

// tableLens returns table i's code lengths.
func (m *Model) tableLens(i int) []uint8 {
	start := uint32(0)
	if i > 0 {
		start = m.ends[i-1]
	}
	return m.lens[start:m.ends[i]:m.ends[i]]
}

// addTable appends a table of kind and code lengths lens.
func (m *Model) addTable(kind uint8, lens []uint8) {
	m.kinds = append(m.kinds, kind)
	m.lens = append(m.lens, lens...)
	m.ends = append(m.ends, uint32(len(m.lens)))
}

// Layout returns the fingerprint of the codec (without a model or debug
// mode) that the model was trained for.
func (m *Model) Layout() uint64 { return m.layout }

// Hash returns the model's hash: FNV-1a 64 of its MarshalBinary bytes. It
// goes into the fingerprint of a codec that uses the model.
func (m *Model) Hash() uint64 { return m.hash }

// MarshalBinary returns the model file: "BWM", a version byte (3 when the
// model holds a quaternion's tables, else 2), the layout fingerprint
// (8 bytes), the number of tables (4 bytes), each table's kind (1 byte),
// number of symbols S (2 bytes) and S code lengths (a byte each), and a
// CRC-32 (IEEE) of all the bytes before it; integers big-endian
// (docs/wire-format.md, "Models").
func (m *Model) MarshalBinary() ([]byte, error) {
	version := byte(modelVersionOld)
	if hasQuat(m.kinds) {
		version = modelVersion
	}
	n := 3 + 1 + 8 + 4 + 4
	for i := range m.tables() {
		n += 3 + len(m.tableLens(i))
	}
	b := make([]byte, 0, n)
	b = append(b, modelMagic...)
	b = append(b, version)
	b = binary.BigEndian.AppendUint64(b, m.layout)
	b = binary.BigEndian.AppendUint32(b, uint32(m.tables()))
	for i := range m.tables() {
		lens := m.tableLens(i)
		b = append(b, m.kinds[i])
		b = binary.BigEndian.AppendUint16(b, uint16(len(lens)))
		b = append(b, lens...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}

// UnmarshalBinary loads a model file written by MarshalBinary: version 3
// when it holds a quaternion's tables, else 2. A file of another version
// (version 1 files held Rice parameters, version 2 files with quaternion
// tables the tables that version 3 replaced: retrain), of the wrong
// length, with a bad checksum, a kind outside 1..5, fewer than two symbols
// in a table, or lengths that are no prefix code (a length above 15, an
// over-subscribed code, an ESC length outside 1..5, except in a plain mask
// table, whose lengths are all 0, and in a quaternion difference table
// that codes every slot) is refused with an error wrapping ErrModel, and m
// is left unchanged. Whether the model fits a codec is checked by
// WithModel.
func (m *Model) UnmarshalBinary(b []byte) error {
	if len(b) < 3+1+8+4+4 || string(b[:3]) != modelMagic {
		return fmt.Errorf("%w: not a model file", ErrModel)
	}
	version := b[3]
	if version != modelVersion && version != modelVersionOld {
		return fmt.Errorf("%w: model file version %d, want %d or %d", ErrModel, version, modelVersionOld, modelVersion)
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return fmt.Errorf("%w: checksum mismatch", ErrModel)
	}
	out := Model{layout: binary.BigEndian.Uint64(b[4:])}
	nt := binary.BigEndian.Uint32(b[12:])
	p := body[16:]
	if uint64(nt)*3 > uint64(len(p)) {
		return fmt.Errorf("%w: %d tables in %d bytes", ErrModel, nt, len(b))
	}
	out.kinds, out.ends = make([]uint8, 0, nt), make([]uint32, 0, nt)
	out.lens = make([]uint8, 0, len(p)-3*int(nt))
	for i := range int(nt) {
		if len(p) < 3 {
			return fmt.Errorf("%w: table %d cut off", ErrModel, i)
		}
		kind, s := p[0], int(binary.BigEndian.Uint16(p[1:]))
		p = p[3:]
		if kind < tkMask || kind > tkQuatDiff {
			return fmt.Errorf("%w: table %d: kind %d", ErrModel, i, kind)
		}
		if s < 2 || s > len(p) {
			return fmt.Errorf("%w: table %d: %d symbols", ErrModel, i, s)
		}
		lens := p[:s:s]
		if err := fields.CheckCode(lens); err != nil {
			return fmt.Errorf("%w: table %d: %v", ErrModel, i, err)
		}
		// A mask table with no codes at all is plain, and a quaternion
		// difference table that codes every slot may have no ESC; every
		// other table has an ESC of 1..5 bits.
		if l := int(lens[0]); (l < 1 || l > fields.CodeEscMaxLen) && (kind != tkMask || !allZero(lens)) && !escFree(kind, lens) {
			return fmt.Errorf("%w: table %d: ESC length %d", ErrModel, i, l)
		}
		p = p[s:]
		out.addTable(kind, lens)
	}
	if len(p) != 0 {
		return fmt.Errorf("%w: %d bytes after the tables", ErrModel, len(p))
	}
	switch q := hasQuat(out.kinds); {
	case q && version == modelVersionOld:
		return fmt.Errorf("%w: model file version 2 with quaternion tables, which version 3 replaced: retrain", ErrModel)
	case !q && version == modelVersion:
		return fmt.Errorf("%w: model file version 3 without quaternion tables: version 2, its only spelling", ErrModel)
	}
	out.setHash()
	*m = out
	return nil
}

// escFree reports whether a table of kind and code lengths lens is a
// quaternion difference table without an ESC: ESC's length 0, every slot's
// not. A quaternion's differences need no escape when every slot has a
// code: the absolute form bounds what the quaternion costs (wire-format.md,
// "Models").
func escFree(kind uint8, lens []uint8) bool {
	return kind == tkQuatDiff && lens[0] == 0 && !slices.Contains(lens[1:], 0)
}

// allZero reports whether every length is 0 (a plain mask table).
func allZero(lens []uint8) bool {
	for _, l := range lens {
		if l != 0 {
			return false
		}
	}
	return true
}

func (m *Model) setHash() {
	b, _ := m.MarshalBinary()
	h := fnv.New64a()
	h.Write(b)
	m.hash = h.Sum64()
}

// ---- the tables of a layout ----

// modelLayout lists the tables of a plan in their order (wire-format.md,
// "Models", "Tables and their numbering") and where each node's and each
// struct type's tables start.
type modelLayout struct {
	kinds []uint8
	syms  []int
	nodes map[*node]int // a leaf's first table
	plans map[*plan]int // a struct type's first mask table
	mods  []modRange    // by table: a modular table's key range
	// The same by uid (the coders' lookup): tab[uid - base] is the first
	// table of the node or plan of that uid, -1 for none.
	base int32
	tab  []int32
	// pod[uid - base] is the size of the struct type of that uid when all
	// its fields are pointer-free (a plain copy), else 0.
	pod []uintptr
}

// foldable reports whether struct type p's changed bit may be coded in
// its only field's first table: p has one field, a quaternion, whose
// first table then has one more symbol, p's "unchanged" (wire-format.md,
// "Models", "A quaternion struct's changed bit").
func foldable(p *plan) bool { return len(p.fields) == 1 && p.fields[0].node.code == cQuat }

// podSize returns the size of the struct type with this uid when all its
// fields are pointer-free, else 0.
func (l *modelLayout) podSize(uid int32) uintptr {
	if i := uid - l.base; uint32(i) < uint32(len(l.pod)) {
		return l.pod[i]
	}
	return 0
}

// hasUnchanged reports whether table t is a quaternion's first table with
// the "unchanged" symbol of a struct of that one quaternion (foldable): 2 +
// 4·slots symbols, the difference table after it 1 + slots.
func (l *modelLayout) hasUnchanged(t int) bool {
	return l.kinds[t] == tkQuatFirst && l.syms[t] == 4*l.syms[t+1]-2
}

// table returns the first table of the node or plan with this uid, or -1.
func (l *modelLayout) table(uid int32) int {
	if i := uid - l.base; uint32(i) < uint32(len(l.tab)) {
		return int(l.tab[i])
	}
	return -1
}

// index fills in base and tab.
func (l *modelLayout) index() {
	lo, hi := int32(1<<31-1), int32(0)
	for n := range l.nodes {
		lo, hi = min(lo, n.uid), max(hi, n.uid)
	}
	for p := range l.plans {
		lo, hi = min(lo, p.uid), max(hi, p.uid)
	}
	l.base = lo
	l.tab = make([]int32, hi-lo+1)
	for i := range l.tab {
		l.tab[i] = -1
	}
	for n, t := range l.nodes {
		l.tab[n.uid-lo] = int32(t)
	}
	l.pod = make([]uintptr, len(l.tab))
	for p, t := range l.plans {
		l.tab[p.uid-lo] = int32(t)
		pod := true
		for i := range p.fields {
			pod = pod && p.fields[i].node.pod
		}
		if pod {
			l.pod[p.uid-lo] = p.typ.Size()
		}
	}
}

// modularRange returns the keys kmin..kmin+rm of a scalar coded with a
// modular table (q, range and bits without a window).
func modularRange(n *node) (kmin, rm uint64, ok bool) {
	if n.hasD {
		return 0, 0, false
	}
	switch n.code {
	case cQ:
		return 0, n.q.Steps(), true
	case cRange:
		kmin, rm = n.rangeSpan()
		return kmin, rm, true
	case cBits:
		rm = 1<<uint(n.n) - 1
		if n.n >= 64 {
			rm = ^uint64(0)
		}
		if n.mem.signed() {
			kmin = -(rm>>1 + 1)
		}
		return kmin, rm, true
	}
	return 0, 0, false
}

// modRange is the key range of a modular table's scalar: keys kmin ..
// kmin+rm, h = modularHalf(rm).
type modRange struct{ kmin, rm, h uint64 }

// modularHalf returns h = floor(R/2) for R = rm + 1 keys.
func modularHalf(rm uint64) uint64 { return rm>>1 + rm&1 }

// modelLayoutOf walks p as wire-format.md says.
func modelLayoutOf(p *plan) *modelLayout {
	l := &modelLayout{nodes: map[*node]int{}, plans: map[*plan]int{}}
	add := func(kind uint8, syms int) {
		l.kinds = append(l.kinds, kind)
		l.syms = append(l.syms, syms)
		l.mods = append(l.mods, modRange{})
	}
	var walkPlan func(p *plan)
	var walk func(n *node, fold bool)
	walk = func(n *node, fold bool) {
		if n == nil {
			return
		}
		if _, seen := l.nodes[n]; !seen {
			switch {
			case n.code == cQuat:
				l.nodes[n] = len(l.kinds)
				add(tkQuatFirst, fields.QuatFirstSymbols(n.quat.ComponentBits())+int(b2u(fold)))
				for range fields.QuatTables - 1 {
					add(tkQuatDiff, fields.QuatDiffSymbols(n.quat.ComponentBits()))
				}
			case n.hasD && n.code != cStruct:
				l.nodes[n] = len(l.kinds)
				add(tkWindow, 1+fields.TokenSlots(n.win.EscapeBits()))
			default:
				if kmin, rm, ok := modularRange(n); ok {
					l.nodes[n] = len(l.kinds)
					add(tkModular, 1+fields.TokenSlots(mbits.Len64(modularHalf(rm))))
					l.mods[len(l.mods)-1] = modRange{kmin, rm, modularHalf(rm)}
				}
			}
		}
		walk(n.elem, false)
		walk(n.key, false)
		if n.sub != nil {
			walkPlan(n.sub)
		}
	}
	walkPlan = func(p *plan) {
		if _, seen := l.plans[p]; seen {
			return
		}
		l.plans[p] = len(l.kinds)
		for j := 0; j*maskChunk < len(p.fields); j++ {
			add(tkMask, 1+1<<min(maskChunk, len(p.fields)-j*maskChunk))
		}
		for i := range p.fields {
			walk(p.fields[i].node, foldable(p))
		}
	}
	walkPlan(p)
	l.index()
	return l
}

// modelRT is a model bound to a plan, or a trainer's recording.
type modelRT struct {
	lay   *modelLayout
	codes []*fields.Code      // by table number; nil when training
	mods  []modRange          // by table number (lay.mods)
	quats []*fields.QuatCodes // by uid - lay.base: a quaternion's tables
	// folded[uid - lay.base]: the struct type of that uid has its changed
	// bit in its quaternion's first table (foldable, and that table
	// codes the "unchanged" symbol); a trainer folds every foldable one.
	folded []bool
	err    error // the model does not fit: every delta method fails with it
	train  *trainStats
}

// foldedTable returns, for a struct type whose changed bit is folded,
// its quaternion's first table and the "unchanged" symbol; t < 0 when it
// is not folded.
func (rt *modelRT) foldedTable(p *plan) (t, unchanged int) {
	if i := p.uid - rt.lay.base; uint32(i) >= uint32(len(rt.folded)) || !rt.folded[i] {
		return -1, 0
	}
	t = rt.lay.table(p.fields[0].node.uid)
	return t, rt.lay.syms[t] - 1
}

// trainStats is what a Trainer has recorded: each table's symbol counts,
// and the symbols of the pair being added (counted once it is encoded).
type trainStats struct {
	counts  [][]uint64
	pending []uint64 // table<<32 | symbol
	pairs   int
	// The counts again by segment of consecutive pairs (segLen pairs
	// each, the last one filling), for Model's cross-validation.
	segs   [][][]uint64
	segLen int
	// The adaptive code's state of each quaternion node (by uid -
	// lay.base) in the pair being added: its choice of the absolute or
	// relative form is one of the starting points of Model's choice
	// (quatChoice).
	quats []fields.QuatDeltaState
	// Each changed quaternion whose baseline packs, counted by its
	// relative form and segment; Model decides which of them its tables
	// send absolute (resolved). pendingQ holds the pair being added's.
	quatRecs map[quatRec]uint64
	pendingQ []quatRec
}

// quatRec is the relative form of a recorded quaternion: the field's first
// table, the segment of its pair, its first table's symbol, the numbers
// of the second and third differences' tables (fields.QuatDiffTable), the
// three differences' magnitude slots, and whether the adaptive code sent
// it relative.
type quatRec struct {
	t0       int32
	seg      uint16
	first    uint16
	tab      [2]uint8
	slot     [3]uint8
	adaptive bool
}

// note records symbol s of table t.
func (st *trainStats) note(t, s int) { st.pending = append(st.pending, uint64(t)<<32|uint64(s)) }

// noteQuat records a changed quaternion (n-bit components, first table
// t0) whose baseline packs: rank and differences d of its relative form,
// rel the adaptive code's choice.
func (st *trainStats) noteQuat(t0, n, rank int, d *[3]int64, rel bool) {
	r := quatRec{t0: int32(t0), first: uint16(fields.QuatFirstSymbol(n, rank, d[0])), adaptive: rel}
	for k := range 3 {
		r.slot[k] = uint8(fields.TokenSlot(abs64(d[k])))
	}
	r.tab = [2]uint8{uint8(fields.QuatDiffTable(d, 1)), uint8(fields.QuatDiffTable(d, 2))}
	st.pendingQ = append(st.pendingQ, r)
}

// bindModel binds m to plan p whose layout fingerprint is fp.
func bindModel(p *plan, fp uint64, m *Model) *modelRT {
	rt := &modelRT{lay: modelLayoutOf(p)}
	rt.mods = rt.lay.mods
	switch {
	case m == nil || m.hash == 0:
		rt.err = fmt.Errorf("%w: an empty model", ErrModel)
	case m.layout != fp:
		rt.err = fmt.Errorf("%w: trained for layout %016x, not %016x", ErrModel, m.layout, fp)
	case m.tables() != len(rt.lay.kinds):
		rt.err = fmt.Errorf("%w: %d tables, the layout has %d", ErrModel, m.tables(), len(rt.lay.kinds))
	}
	if rt.err != nil {
		return rt
	}
	for i := range m.tables() {
		if n := len(m.tableLens(i)); m.kinds[i] != rt.lay.kinds[i] || n != rt.lay.syms[i] {
			rt.err = fmt.Errorf("%w: table %d: kind %d with %d symbols, the layout's is kind %d with %d", ErrModel, i, m.kinds[i], n, rt.lay.kinds[i], rt.lay.syms[i])
			return rt
		}
	}
	rt.codes = make([]*fields.Code, m.tables())
	for i := range rt.codes {
		c, err := fields.NewCode(m.tableLens(i))
		if err != nil { // checked when the model was made or loaded: never
			rt.err = fmt.Errorf("%w: table %d: %v", ErrModel, i, err)
			return rt
		}
		rt.codes[i] = c
	}
	rt.quats = make([]*fields.QuatCodes, len(rt.lay.tab))
	for n, t := range rt.lay.nodes {
		if n.code == cQuat {
			qc := new(fields.QuatCodes)
			copy(qc.Tab[:], rt.codes[t:t+fields.QuatTables])
			rt.quats[n.uid-rt.lay.base] = qc
		}
	}
	rt.folded = make([]bool, len(rt.lay.tab))
	for p, t := range rt.lay.plans {
		if !foldable(p) {
			continue
		}
		qt := rt.lay.table(p.fields[0].node.uid)
		if rt.codes[qt].Len(rt.lay.syms[qt]-1) == 0 {
			continue // not folded: the struct's mask table says whether it changed
		}
		if !rt.codes[t].Empty() {
			rt.err = fmt.Errorf("%w: table %d: the mask table of a struct whose changed bit table %d holds is not plain", ErrModel, t, qt)
			return rt
		}
		rt.folded[p.uid-rt.lay.base] = true
	}
	return rt
}

// modelFingerprint is the fingerprint of a codec with fingerprint fp using
// a model of hash h: FNV-1a 64 of the 16 bytes of fp and h, big-endian.
func modelFingerprint(fp, h uint64) uint64 {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], fp)
	binary.BigEndian.PutUint64(b[8:], h)
	f := fnv.New64a()
	f.Write(b[:])
	return f.Sum64()
}

// WithModel returns a codec of the same plan whose deltas (MarshalDelta,
// AppendDelta, UnmarshalDelta, EncodeDelta, DecodeDelta) use the tables of
// m; full messages are unchanged. Its Fingerprint mixes in the model's
// hash, so that peers with different models, or one without, see a
// protocol mismatch. WithModel(nil) returns a codec without a model.
//
// A model trained for another layout (or empty) is not refused here,
// since WithModel returns a codec: every delta method of the returned
// codec fails with an error wrapping ErrModel instead, as does ModelErr,
// which callers loading a model file should check once.
func (c *Codec[T]) WithModel(m *Model) *Codec[T] {
	cp := *c
	cp.o.model = nil
	cp.fps = c.lfps
	cp.fp = cp.fps[0]
	if cp.o.debug {
		cp.fp = cp.fps[1]
	}
	if m == nil {
		return &cp
	}
	cp.o.model = bindModel(c.p, c.lfps[0], m)
	for i := range cp.fps {
		cp.fps[i] = modelFingerprint(cp.fps[i], m.hash)
	}
	cp.fp = cp.fps[0]
	if cp.o.debug {
		cp.fp = cp.fps[1]
	}
	cp.mdl = m
	return &cp
}

// ModelErr returns the error that the codec's delta methods fail with
// because its model does not fit (see WithModel), or nil.
func (c *Codec[T]) ModelErr() error {
	if c.o.model == nil {
		return nil
	}
	return c.o.model.err
}

// Trainer records (baseline, current) pairs of T and trains a Model on
// them. It is not safe for concurrent use.
type Trainer[T any] struct {
	c  *Codec[T]
	o  options
	st *trainStats
	w  bits.Writer
}

// NewTrainer returns a trainer for the codec's layout.
func (c *Codec[T]) NewTrainer() *Trainer[T] {
	lay := modelLayoutOf(c.p)
	st := &trainStats{counts: make([][]uint64, len(lay.kinds))}
	for i, s := range lay.syms {
		st.counts[i] = make([]uint64, s)
	}
	t := &Trainer[T]{c: c, st: st}
	t.o.model = &modelRT{lay: lay, mods: lay.mods, train: st, folded: make([]bool, len(lay.tab))}
	for p := range lay.plans {
		t.o.model.folded[p.uid-lay.base] = foldable(p)
	}
	return t
}

// AddPredicted records the symbols of the delta that EncodePredicted writes
// from older and base to cur: each pred value against its prediction, as a
// sender that predicts codes it. Training on these pairs fits the tables to
// the residue of the prediction rather than to the plain step. With older
// nil, or no pred value in T, it is Add(base, cur).
func (t *Trainer[T]) AddPredicted(older, base, cur *T) error {
	b, ps := predicted(t.c.p, unsafe.Pointer(older), unsafe.Pointer(base))
	defer ps.release(b)
	return t.Add((*T)(b), cur)
}

// Add records the symbols that a delta from base to cur codes with a
// model: each struct's changed-field masks, each changed windowed or
// bounded scalar's difference class, each changed quaternion's relative
// form (Model decides which of them its tables send absolute). Each pair
// is recorded once. A pair
// that the codec cannot encode is not recorded and its error is returned.
func (t *Trainer[T]) Add(base, cur *T) error {
	t.st.pending = t.st.pending[:0]
	t.st.pendingQ = t.st.pendingQ[:0]
	if t.st.quats == nil {
		t.st.quats = make([]fields.QuatDeltaState, len(t.o.model.lay.tab))
	}
	for i := range t.st.quats {
		t.st.quats[i] = fields.NewQuatDeltaState()
	}
	t.w.Reset(t.w.Bytes()[:0])
	if err := encodeDeltaRoot(t.c.p, &t.w, unsafe.Pointer(base), unsafe.Pointer(cur), &t.o); err != nil {
		return err
	}
	seg := t.st.segment()
	for _, x := range t.st.pending {
		t.st.counts[x>>32][uint32(x)]++
		seg[x>>32][uint32(x)]++
	}
	if len(t.st.pendingQ) > 0 && t.st.quatRecs == nil {
		t.st.quatRecs = map[quatRec]uint64{}
	}
	for _, r := range t.st.pendingQ {
		r.seg = uint16(len(t.st.segs) - 1)
		t.st.quatRecs[r]++
	}
	t.st.pairs++
	return nil
}
