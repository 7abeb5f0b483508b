package gen

import (
	"encoding/binary"
	"fmt"
	mbits "math/bits"
	"strconv"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/fields"
)

// A schema's model (docs/wire-format.md, "Models"): the generators read the
// model file the schema carries, check it against the schema's layout, and
// build the tables into the generated code, so that a client decodes the
// deltas of a codec with that model exactly as Go does.

// The kinds of model tables (wire-format.md, "Tables and their numbering").
const (
	tkMask      = 1
	tkWindow    = 2
	tkModular   = 3
	tkQuatFirst = 4
	tkQuatDiff  = 5
)

// quatTables is the number of tables of one quaternion: the first table
// (the form and the first difference's slot), eight second and eight
// third differences by magnitude class.
const quatTables = 17

// modelLayout lists the tables a schema's deltas use, in their order, and
// where each node's and each struct type's tables start.
type modelLayout struct {
	kinds []uint8
	syms  []int
	nodes map[*bitwire.NodeSchema]int // a scalar's or quaternion's first table
	types map[int]int                 // a struct type's first mask table
}

// modularRange returns the keys kmin..kmin+rm (mod 2^64) of a q, range or
// bits node without a window, which a modular table codes.
func modularRange(n *bitwire.NodeSchema) (kmin, rm uint64, ok bool) {
	if n.Delta != nil {
		return 0, 0, false
	}
	switch n.Coding {
	case "q":
		return 0, n.Q.Steps, true
	case "range":
		if signed(n.Type) {
			lo, _ := strconv.ParseInt(n.Range.Min, 10, 64)
			hi, _ := strconv.ParseInt(n.Range.Max, 10, 64)
			return uint64(lo), uint64(hi) - uint64(lo), true
		}
		lo, _ := strconv.ParseUint(n.Range.Min, 10, 64)
		hi, _ := strconv.ParseUint(n.Range.Max, 10, 64)
		return lo, hi - lo, true
	case "bits":
		rm = ^uint64(0)
		if n.Bits.Width < 64 {
			rm = 1<<uint(n.Bits.Width) - 1
		}
		if signed(n.Type) {
			kmin = -(rm>>1 + 1)
		}
		return kmin, rm, true
	}
	return 0, 0, false
}

// modelLayoutOf numbers the tables of s by the depth-first walk of
// wire-format.md: a struct type (once, at its first meeting) gives its mask
// tables, one per chunk of 8 fields, then walks its fields' nodes; a node
// gives its own tables, then walks its element, its key and its struct
// type. The schema must have passed SchemaFingerprint (its references are
// in range).
func modelLayoutOf(s *bitwire.Schema) *modelLayout {
	l := &modelLayout{nodes: map[*bitwire.NodeSchema]int{}, types: map[int]int{}}
	add := func(kind uint8, syms int) {
		l.kinds = append(l.kinds, kind)
		l.syms = append(l.syms, syms)
	}
	var walkType func(t int)
	var walk func(n *bitwire.NodeSchema, fold bool)
	walk = func(n *bitwire.NodeSchema, fold bool) {
		if n == nil {
			return
		}
		switch {
		case n.Coding == "quat":
			l.nodes[n] = len(l.kinds)
			add(tkQuatFirst, 1+4*fields.TokenSlots(n.Quat.Bits)+b2i(fold))
			for range quatTables - 1 {
				add(tkQuatDiff, 1+fields.TokenSlots(n.Quat.Bits))
			}
		case n.Delta != nil && n.Coding != "struct":
			l.nodes[n] = len(l.kinds)
			add(tkWindow, 1+fields.TokenSlots(mbits.Len64(max(absI64(n.Delta.Lo), absI64(n.Delta.Hi)))))
		default:
			if _, rm, ok := modularRange(n); ok {
				l.nodes[n] = len(l.kinds)
				add(tkModular, 1+fields.TokenSlots(mbits.Len64(rm>>1+rm&1)))
			}
		}
		walk(n.Elem, false)
		walk(n.Key, false)
		if n.Coding == "struct" && n.Ref != nil {
			walkType(*n.Ref)
		}
	}
	walkType = func(t int) {
		if _, seen := l.types[t]; seen {
			return
		}
		l.types[t] = len(l.kinds)
		fs := s.Types[t].Fields
		for j := 0; 8*j < len(fs); j++ {
			add(tkMask, 1+1<<min(8, len(fs)-8*j))
		}
		for i := range fs {
			walk(fs[i].Node, foldable(fs))
		}
	}
	walkType(s.Root)
	return l
}

// foldable reports whether a struct type of fields fs may have its changed
// bit in its quaternion's first table: one field, a quaternion, whose first
// table then has one more symbol, "unchanged" (docs/wire-format.md,
// "Models").
func foldable(fs []bitwire.FieldSchema) bool { return len(fs) == 1 && fs[0].Node.Coding == "quat" }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func absI64(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

// schemaModel is a schema's model as the generators use it: the layout,
// each table's code lengths, and which tables are plain (every length 0: a
// mask table whose chunk is written as its k changed bits, with no symbol).
type schemaModel struct {
	layout *modelLayout
	lens   [][]uint8
	plain  []bool
	// folded: the struct types (by index) whose changed bit their
	// quaternion's first table holds: foldable, and that table codes its
	// last symbol, "unchanged".
	folded map[int]bool
}

// checkModel reads and checks the model of s, which has passed
// SchemaFingerprint: so its file is a valid model file whose hash is the
// schema's, trained for the schema's layout (both as the schema states it
// and as the file holds it). Its tables must be the schema's, in number,
// kind and symbols, only mask tables plain, and the schema not a union's.
// Anything else is ErrSchema.
func checkModel(s *bitwire.Schema) (*schemaModel, error) {
	ms := s.Model
	if s.Union != nil {
		return nil, fmt.Errorf("%w: a union schema with a model (unions have no deltas)", ErrSchema)
	}
	var m bitwire.Model
	if err := m.UnmarshalBinary(ms.File); err != nil {
		return nil, fmt.Errorf("%w: model: %w", ErrSchema, err)
	}
	l := modelLayoutOf(s)
	// The file's tables (UnmarshalBinary has checked its structure): kind,
	// S (u16) and S lengths each, after a 16-byte header.
	p := ms.File[16 : len(ms.File)-4]
	nt := int(binary.BigEndian.Uint32(ms.File[12:]))
	if nt != len(l.kinds) {
		return nil, fmt.Errorf("%w: the model has %d tables, the schema's layout %d", ErrSchema, nt, len(l.kinds))
	}
	sm := &schemaModel{layout: l}
	for i := range nt {
		kind, n := p[0], int(binary.BigEndian.Uint16(p[1:]))
		if kind != l.kinds[i] || n != l.syms[i] {
			return nil, fmt.Errorf("%w: model table %d is of kind %d with %d symbols, the schema's of kind %d with %d", ErrSchema, i, kind, n, l.kinds[i], l.syms[i])
		}
		lens, plain := p[3:3+n], true
		for _, l := range lens {
			plain = plain && l == 0
		}
		if plain && kind != tkMask {
			return nil, fmt.Errorf("%w: model table %d of kind %d has no code (only a mask table may be plain)", ErrSchema, i, kind)
		}
		sm.lens = append(sm.lens, lens)
		sm.plain = append(sm.plain, plain)
		p = p[3+n:]
	}
	sm.folded = map[int]bool{}
	for ti, t0 := range l.types {
		if fs := s.Types[ti].Fields; foldable(fs) {
			if q := sm.lens[l.nodes[fs[0].Node]]; q[len(q)-1] != 0 {
				if !sm.plain[t0] {
					return nil, fmt.Errorf("%w: model table %d, the mask table of a struct whose changed bit its quaternion's first table holds, is not plain", ErrSchema, t0)
				}
				sm.folded[ti] = true
			}
		}
	}
	return sm, nil
}
