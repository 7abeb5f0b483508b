package bitwire

import (
	"slices"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Golden vectors of deltas coded with a model (wire-format.md, "Models"):
// hand-built tables, so that each vector's bits can be followed by hand.
// The model file is in each case's schema (schemas/<case>.json, "model").

// gmPlayer has a table of each kind: its mask (5 fields: S = 33), X's
// window (±200 steps, E = 8, 16 slots: S = 17), Yaw's and HP's modular
// tables (R = 1024, h = 512, C = 10: S = 21; R = 101, h = 50, C = 6: S =
// 13), and Rot's 21 (mode S = 5, differences S = 19).
type gmPlayer struct {
	X   float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
	Yaw float32 `net:"q,min=0,max=360,bits=10"`
	HP  int     `net:"range,min=0,max=100"`
	On  bool
	Rot [4]float32 `net:"quat,bits=9"`
}

// gmWorld holds entities: the id field's mask bit is always 0.
type gmWorld struct {
	Es []gmEntity
}

type gmEntity struct {
	ID uint16  `net:"id"`
	X  float32 `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
}

// gmTurn's mask table (2 fields: S = 5) is plain (all lengths 0): its
// chunk's changed bits are written as 2 plain bits, no symbol before them.
// X and Rot have gmPlayer's tables.
type gmTurn struct {
	X   float32    `net:"q,min=-128,max=128,prec=0.01,dmin=-2,dmax=2"`
	Rot [4]float32 `net:"quat,bits=9"`
}

// gmSpin's changed bit is folded into its quaternion's first table (one
// field, a quaternion): gmSpinModel codes its "unchanged" symbol (73).
type gmSpin struct {
	Rot [4]float32 `net:"quat,bits=9"`
}

// The hand-built tables (code lengths by symbol; symbol 0 is ESC).
var (
	// masks: ESC 2, mask 0 (symbol 1) 2, X+Yaw (mask 3, symbol 4) 2,
	// X+Rot (mask 17, symbol 18) 3, all five (mask 31, symbol 32) 3
	gmMask = func() []uint8 {
		l := make([]uint8, 33)
		l[0], l[1], l[4], l[18], l[32] = 2, 2, 2, 3, 3
		return l
	}()
	gmWindow  = lensOf(17, 3, 0, 3, 3, 3, 3, 3, 3, 3) // ESC and slots 1..7 (m = 1 .. 15) 3 bits
	gmYaw     = lensOf(21, 2, 0, 2, 2, 2)             // ESC 2, slots 1..3 (m = 1, 2, 3) 2
	gmHP      = lensOf(13, 1, 0, 2, 2)                // ESC 1, slots 1..2 2
	gmFirst   = gmFirstLens()                         // absolute 2; (rank, slot) below
	gmDiff    = lensOf(19, 3, 1, 2, 4, 4)             // ESC 3, slot 0 1, 1 2, 2..3 4
	gmDiffBig = lensOf(19, 2, 2, 1)                   // D1[c ≥ 1]: ESC 2, slot 0 2, slot 1 1
	// A difference table without ESC (model file version 3): slot 0 1,
	// slot 1 2, slot 2 3, slots 3..17 7 bits (15 of 16 codewords of 7 bits
	// under `111`).
	gmDiffNoEsc = lensOf(19, 0, 1, 2, 3, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7)
)

// gmFirstLens returns the first table of a 9-bit quaternion (73 symbols:
// the absolute form, then 1 + 18·rank + slot): absolute 2 bits; rank 0
// with slot 0, 1, 2, 3: 2, 3, 5, 5; rank 1: 4, 5, 7, 7; ranks 2 and 3:
// 5, 6, 8, 8; other slots none. (A rank's lengths are what a mode code of
// 1, 3, 4, 4 bits and a first difference's slot code of 1, 2, 4, 4 bits
// would give together.)
func gmFirstLens() []uint8 {
	l := make([]uint8, fields.QuatFirstSymbols(9))
	l[0] = 2
	for r, ls := range [][4]uint8{{2, 3, 5, 5}, {4, 5, 7, 7}, {5, 6, 8, 8}, {5, 6, 8, 8}} {
		copy(l[1+18*r:], ls[:])
	}
	return l
}

// lensOf returns n code lengths that start with l (the rest 0).
func lensOf(n int, l ...uint8) []uint8 {
	out := make([]uint8, n)
	copy(out, l)
	return out
}

// gmQuatTables returns a quaternion's 17 tables: the first table gmFirst,
// D1[0] gmDiff, D1[1..7] gmDiffBig, D2[0..7] gmDiff.
func gmQuatTables() (kinds []uint8, lens [][]uint8) {
	kinds = append(kinds, tkQuatFirst)
	lens = append(lens, gmFirst)
	for i := range fields.QuatTables - 1 {
		kinds = append(kinds, tkQuatDiff)
		if i >= 1 && i < 8 {
			lens = append(lens, gmDiffBig)
		} else {
			lens = append(lens, gmDiff)
		}
	}
	return kinds, lens
}

func gmModel(layout uint64, kinds []uint8, lens [][]uint8) *Model {
	m := &Model{layout: layout}
	for i, l := range lens {
		if err := fields.CheckCode(l); err != nil {
			panic(err)
		}
		m.addTable(kinds[i], l)
	}
	m.setHash()
	return m
}

func gmPlayerModel() *Model {
	qk, ql := gmQuatTables()
	return gmModel(MustFor[gmPlayer]().Fingerprint(),
		append([]uint8{tkMask, tkWindow, tkModular, tkModular}, qk...),
		append([][]uint8{gmMask, gmWindow, gmYaw, gmHP}, ql...))
}

func gmWorldModel() *Model {
	// the root's mask (1 field: ESC 1, unchanged 2, changed 2), the
	// entity's (2 fields: ESC 2, X changed (mask 2, symbol 3) 1, the
	// rest none), X's window
	return gmModel(MustFor[gmWorld]().Fingerprint(), []uint8{tkMask, tkMask, tkWindow},
		[][]uint8{{1, 2, 2}, {2, 0, 0, 1, 0}, gmWindow})
}

func gmTurnModel() *Model {
	qk, ql := gmQuatTables()
	return gmModel(MustFor[gmTurn]().Fingerprint(),
		append([]uint8{tkMask, tkWindow}, qk...),
		append([][]uint8{make([]uint8, 5), gmWindow}, ql...))
}

// gmTurnNoEscModel is gmTurnModel with every difference table gmDiffNoEsc
// and a first table that codes rank 0 with every slot: absolute 2 bits,
// rank 0 with slot 0, 1, 2: 2, 3, 4 bits, with slots 3..17: 8 bits, other
// ranks none.
func gmTurnNoEscModel() *Model {
	qk, ql := gmQuatTables()
	ql[0] = lensOf(fields.QuatFirstSymbols(9), 2, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8)
	for i := 1; i < len(ql); i++ {
		ql[i] = gmDiffNoEsc
	}
	return gmModel(MustFor[gmTurn]().Fingerprint(),
		append([]uint8{tkMask, tkWindow}, qk...),
		append([][]uint8{make([]uint8, 5), gmWindow}, ql...))
}

// gmSpinModel has gmSpin's plain mask table, gmPlayer's quaternion
// tables, and the first table's "unchanged" (symbol 73) in 4 bits.
func gmSpinModel() *Model {
	qk, ql := gmQuatTables()
	ql[0] = append(slices.Clone(gmFirst), 4)
	return gmModel(MustFor[gmSpin]().Fingerprint(),
		append([]uint8{tkMask}, qk...),
		append([][]uint8{make([]uint8, 3)}, ql...))
}

// modelDeltaCase is deltaCase with a model.
func modelDeltaCase[T any](name string, m *Model, base, cur T) goldenCase {
	c := MustFor[T]().WithModel(m)
	g := deltaCase(name, base, cur)
	g.schema = c.Schema
	g.enc = func() ([]byte, int, error) {
		var w bits.Writer
		err := c.EncodeDelta(&w, &base, &cur)
		return w.Bytes(), w.Len(), err
	}
	g.dec = func(data []byte) (any, error) {
		qb := base
		if err := c.Quantize(&qb); err != nil {
			return nil, err
		}
		var out T
		err := c.UnmarshalDelta(data, &qb, &out)
		return out, err
	}
	return g
}

func goldenModelCases() []goldenCase {
	pm, wm := gmPlayerModel(), gmWorldModel()
	p := gmPlayer{X: 10, Yaw: 359.5, HP: 100, Rot: q(0, 0, 0, 1)}
	moved := p
	moved.X, moved.Yaw = 10.05, 0.5 // 5 steps; Yaw wraps around
	esc := p
	esc.X, esc.HP, esc.On = -100, 50, true // out of the window; 50 is class 6; mask 13 has no code
	turn := p
	turn.X, turn.Rot = 10.01, q(0.0087, 0, 0, 0.99996)
	all := p
	all.X, all.Yaw, all.HP, all.On, all.Rot = 9.9, 358, 99, true, q(0.5, -0.5, 0.5, 0.5)
	return []goldenCase{
		modelDeltaCase("delta-model-unchanged", pm, p, p),
		modelDeltaCase("delta-model-window-modular", pm, p, moved),
		modelDeltaCase("delta-model-escapes", pm, p, esc),
		modelDeltaCase("delta-model-quat-relative", pm, p, turn),
		modelDeltaCase("delta-model-all", pm, p, all),
		modelDeltaCase("delta-model-entities", wm,
			gmWorld{Es: []gmEntity{{1, 1}, {2, 2}, {3, 3}}},
			gmWorld{Es: []gmEntity{{1, 1}, {2, 2.5}, {3, 3.02}}}),
		modelDeltaCase("delta-model-plain-mask", gmTurnModel(),
			gmTurn{X: 10, Rot: q(0, 0, 0, 1)}, gmTurn{X: 10.01, Rot: q(0.0087, 0, 0, 0.99996)}),
		modelDeltaCase("delta-model-folded-unchanged", gmSpinModel(),
			gmSpin{Rot: q(0, 0, 0, 1)}, gmSpin{Rot: q(0, 0, 0, 1)}),
		modelDeltaCase("delta-model-folded", gmSpinModel(),
			gmSpin{Rot: q(0, 0, 0, 1)}, gmSpin{Rot: q(0.0087, 0, 0, 0.99996)}),
		modelDeltaCase("delta-model-quat-no-esc", gmTurnNoEscModel(),
			gmTurn{X: 10, Rot: q(0, 0, 0, 1)}, gmTurn{X: 10, Rot: q(0.06, 0, -0.0087, 0.998155)}),
	}
}

func q(x, y, z, w float32) [4]float32 { return [4]float32{x, y, z, w} }
