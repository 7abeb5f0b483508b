package bitwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Models: static code tables for deltas, trained offline on recorded
// (baseline, current) pairs (Trainer) and shipped with client and server.
// A codec with a model (Codec.WithModel) codes the differences of every
// windowed field with one fixed Rice parameter and every quaternion field
// with a fixed mode order and fixed parameters by context
// (fields.QuatTable), instead of the parameters that adapt within each
// message: no state at all crosses values. The delta-coded fields are
// numbered in the order a depth-first walk of the plan first meets them
// (modelNodes); docs/wire-format.md, "Models", gives the file format and
// how the tables are used.

var (
	// ErrModel: a model file that is corrupt, of another version, or for
	// another layout than the codec's. A codec given such a model by
	// WithModel returns it (wrapped) from every delta method.
	ErrModel = errors.New("bitwire: bad model")
	// ErrNoTraining: Trainer.Model before any pair was added.
	ErrNoTraining = errors.New("bitwire: no training data")
)

// modelMagic and modelVersion open a model file.
const (
	modelMagic   = "BWM"
	modelVersion = 1
)

// Model holds the trained tables of one message layout. The zero Model
// holds no tables and is refused by WithModel; fill it with
// Trainer.Model or UnmarshalBinary.
type Model struct {
	layout uint64             // the fingerprint of the layout trained on
	wins   []uint8            // the Rice parameter of each windowed field
	quats  []fields.QuatTable // the table of each quaternion field
	hash   uint64             // FNV-1a 64 of MarshalBinary's bytes
}

// Layout returns the fingerprint of the codec (without a model or debug
// mode) that the model was trained for.
func (m *Model) Layout() uint64 { return m.layout }

// Hash returns the model's hash: FNV-1a 64 of its MarshalBinary bytes. It
// goes into the fingerprint of a codec that uses the model.
func (m *Model) Hash() uint64 { return m.hash }

// quatTableSize is the bytes of one quaternion table in a model file.
const quatTableSize = 5 + 4 + 2*fields.QuatClasses

// MarshalBinary returns the model file: "BWM", a version byte (1), the
// layout fingerprint (8 bytes, big-endian), the number of windowed fields
// and of quaternion fields (2 bytes each, big-endian), one parameter byte
// per windowed field, 25 bytes per quaternion field (Order, K0, K1, K2),
// and a CRC-32 (IEEE, big-endian) of all the bytes before it.
func (m *Model) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 3+1+8+4+len(m.wins)+quatTableSize*len(m.quats)+4)
	b = append(b, modelMagic...)
	b = append(b, modelVersion)
	b = binary.BigEndian.AppendUint64(b, m.layout)
	b = binary.BigEndian.AppendUint16(b, uint16(len(m.wins)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(m.quats)))
	b = append(b, m.wins...)
	for i := range m.quats {
		t := &m.quats[i]
		b = append(b, t.Order[:]...)
		b = append(b, t.K0[:]...)
		b = append(b, t.K1[:]...)
		b = append(b, t.K2[:]...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}

// UnmarshalBinary loads a model file written by MarshalBinary. A file of
// another version, of the wrong length, with a bad checksum or with a table
// no writer produces (a parameter above 20, a mode order that is not a
// permutation) is refused with an error wrapping ErrModel, and m is left
// unchanged. Whether the model fits a codec is checked by WithModel.
func (m *Model) UnmarshalBinary(b []byte) error {
	if len(b) < 3+1+8+4+4 || string(b[:3]) != modelMagic {
		return fmt.Errorf("%w: not a model file", ErrModel)
	}
	if b[3] != modelVersion {
		return fmt.Errorf("%w: model file version %d, want %d", ErrModel, b[3], modelVersion)
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return fmt.Errorf("%w: checksum mismatch", ErrModel)
	}
	nw := int(binary.BigEndian.Uint16(b[12:]))
	nq := int(binary.BigEndian.Uint16(b[14:]))
	if len(body) != 16+nw+quatTableSize*nq {
		return fmt.Errorf("%w: %d bytes for %d windows and %d quaternions", ErrModel, len(b), nw, nq)
	}
	out := Model{layout: binary.BigEndian.Uint64(b[4:])}
	p := body[16:]
	out.wins = append([]uint8(nil), p[:nw]...)
	for _, k := range out.wins {
		if k > fields.RiceMaxK {
			return fmt.Errorf("%w: window parameter %d", ErrModel, k)
		}
	}
	p = p[nw:]
	out.quats = make([]fields.QuatTable, nq)
	for i := range out.quats {
		t := &out.quats[i]
		copy(t.Order[:], p[0:5])
		copy(t.K0[:], p[5:9])
		copy(t.K1[:], p[9:9+fields.QuatClasses])
		copy(t.K2[:], p[9+fields.QuatClasses:quatTableSize])
		p = p[quatTableSize:]
		if !t.Valid(fields.RiceMaxK) {
			return fmt.Errorf("%w: quaternion table %d", ErrModel, i)
		}
	}
	out.setHash()
	*m = out
	return nil
}

func (m *Model) setHash() {
	b, _ := m.MarshalBinary()
	h := fnv.New64a()
	h.Write(b)
	m.hash = h.Sum64()
}

// modelNodes returns the delta-coded leaves of p in the order a depth-first
// walk over fields (and then element, key and value nodes) first meets
// them: the windowed scalars and the quaternions, each type's nodes once.
func modelNodes(p *plan) (wins, quats []*node) {
	seen := map[*plan]bool{}
	var walkPlan func(p *plan)
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		switch {
		case n.code == cQuat:
			quats = append(quats, n)
		case n.hasD && n.code != cStruct:
			wins = append(wins, n)
		}
		walk(n.elem)
		walk(n.key)
		if n.sub != nil {
			walkPlan(n.sub)
		}
	}
	walkPlan = func(p *plan) {
		if seen[p] {
			return
		}
		seen[p] = true
		for i := range p.fields {
			walk(p.fields[i].node)
		}
	}
	walkPlan(p)
	return wins, quats
}

// modelRT is a model bound to a plan: each node's table by address.
type modelRT struct {
	wins  map[uintptr]uint8
	quats map[uintptr]*fields.QuatTable
	err   error // the model does not fit: every delta method fails with it
	train *trainStats
}

// trainStats is what a Trainer has recorded, per node.
type trainStats struct {
	wins  map[uintptr]*fields.RiceCost
	quats map[uintptr]*fields.QuatStats
	pairs int
}

// bindModel binds m to plan p whose layout fingerprint is fp.
func bindModel(p *plan, fp uint64, m *Model) *modelRT {
	rt := &modelRT{}
	wins, quats := modelNodes(p)
	switch {
	case m == nil || m.hash == 0:
		rt.err = fmt.Errorf("%w: an empty model", ErrModel)
	case m.layout != fp:
		rt.err = fmt.Errorf("%w: trained for layout %016x, not %016x", ErrModel, m.layout, fp)
	case len(m.wins) != len(wins) || len(m.quats) != len(quats):
		rt.err = fmt.Errorf("%w: %d windows and %d quaternions, the layout has %d and %d", ErrModel, len(m.wins), len(m.quats), len(wins), len(quats))
	}
	if rt.err != nil {
		return rt
	}
	rt.wins = make(map[uintptr]uint8, len(wins))
	rt.quats = make(map[uintptr]*fields.QuatTable, len(quats))
	for i, n := range wins {
		if int(m.wins[i]) > n.win.EscapeBits() {
			rt.err = fmt.Errorf("%w: window %d: parameter %d above its %d escape bits", ErrModel, i, m.wins[i], n.win.EscapeBits())
			return rt
		}
		rt.wins[uintptr(unsafe.Pointer(n))] = m.wins[i]
	}
	for i, n := range quats {
		if !m.quats[i].Valid(n.quat.ComponentBits()) {
			rt.err = fmt.Errorf("%w: quaternion %d: a parameter above its %d component bits", ErrModel, i, n.quat.ComponentBits())
			return rt
		}
		rt.quats[uintptr(unsafe.Pointer(n))] = &m.quats[i]
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
// AppendDelta, UnmarshalDelta, EncodeDelta, DecodeDelta) use the static
// tables of m; full messages are unchanged. Its Fingerprint mixes in the
// model's hash, so that peers with different models, or one without, see a
// protocol mismatch. WithModel(nil) returns a codec without a model.
//
// A model trained for another layout (or empty, or with a parameter the
// layout's fields cannot use) is not refused here, since WithModel returns
// a codec: every delta method of the returned codec fails with an error
// wrapping ErrModel instead, as does ModelErr, which callers loading a
// model file should check once.
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
	st := &trainStats{wins: map[uintptr]*fields.RiceCost{}, quats: map[uintptr]*fields.QuatStats{}}
	wins, quats := modelNodes(c.p)
	for _, n := range wins {
		st.wins[uintptr(unsafe.Pointer(n))] = new(fields.RiceCost)
	}
	for _, n := range quats {
		st.quats[uintptr(unsafe.Pointer(n))] = new(fields.QuatStats)
	}
	t := &Trainer[T]{c: c, st: st}
	t.o.model = &modelRT{train: st}
	return t
}

// Add records the differences that a delta from base to cur codes: each
// changed windowed value and each changed quaternion, with its context.
// A pair that the codec cannot encode is not recorded and its error is
// returned. Values that the encoder codes twice (a message it restarts to
// set the sign flag, a fused pass over a slice that it redoes) are
// recorded twice: a small bias of weight, never of correctness.
func (t *Trainer[T]) Add(base, cur *T) error {
	t.w.Reset(t.w.Bytes()[:0])
	if err := encodeDeltaRoot(t.c.p, &t.w, unsafe.Pointer(base), unsafe.Pointer(cur), &t.o); err != nil {
		return err
	}
	t.st.pairs++
	return nil
}

// Model returns the model that codes the recorded pairs in the fewest bits
// (each parameter chosen to minimize the recorded differences' bits, the
// quaternion modes ordered by frequency). Fields that saw no differences
// get default parameters. Before any pair was added it fails with
// ErrNoTraining.
func (t *Trainer[T]) Model() (*Model, error) {
	if t.st.pairs == 0 {
		return nil, ErrNoTraining
	}
	m := &Model{layout: t.c.lfps[0]}
	wins, quats := modelNodes(t.c.p)
	for _, n := range wins {
		c := t.st.wins[uintptr(unsafe.Pointer(n))]
		m.wins = append(m.wins, c.Best(n.win.EscapeBits(), uint8(min(fields.BitsRequired(uint64(n.win.Hi()-n.win.Lo())/32), n.win.EscapeBits()))))
	}
	for _, n := range quats {
		m.quats = append(m.quats, t.st.quats[uintptr(unsafe.Pointer(n))].Table(n.quat.ComponentBits()))
	}
	m.setHash()
	return m, nil
}

// ---- the delta coders' side ----

// winState returns the state a message starts windowed node n with.
func (rt *modelRT) winState(n *node) fields.WindowState {
	if rt != nil && rt.wins != nil {
		return n.win.NewStaticState(int(rt.wins[uintptr(unsafe.Pointer(n))]))
	}
	return n.win.NewState()
}

// quatState returns the state a message starts quaternion node n with.
func (rt *modelRT) quatState(n *node) fields.QuatDeltaState {
	if rt != nil && rt.quats != nil {
		return fields.NewQuatDeltaStateTable(rt.quats[uintptr(unsafe.Pointer(n))])
	}
	return fields.NewQuatDeltaState()
}
