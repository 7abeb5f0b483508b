package fields

import (
	mbits "math/bits"

	"github.com/bitwire/bitwire/bits"
)

// Model tables of a quaternion field (docs/wire-format.md, "Models"): a
// first table, whose symbol is the form and the first difference's slot
// together (symbol 0 the absolute form, 1 + rank·S + slot the relative
// form of that rank whose first difference is in that slot, S the number
// of slots), then sixteen difference tables (symbol 0 ESC, which a
// trained table may leave out, s ≥ 1 magnitude slot s-1): the second and
// third differences by the magnitude class of those before them. One
// symbol for the form and the first slot costs what they carry: a mode
// symbol of its own cost a whole bit or more when one rank dominated.

// QuatClasses is the number of contexts of the second and third
// differences: magnitude classes 0..QuatClasses-1 (the last one for all
// larger).
const QuatClasses = 8

// QuatTables is the number of tables of one quaternion field: the first
// table, then 2·QuatClasses difference tables.
const QuatTables = 1 + 2*QuatClasses

// MagClass returns the context class of m: its bit length, at most
// QuatClasses - 1.
func MagClass(m uint64) int { return min(mbits.Len64(m), QuatClasses-1) }

// QuatCodes are a quaternion field's tables: Tab[0] the first table, then
// Tab[1+k] the difference table number k (QuatDiffTable).
type QuatCodes struct {
	Tab [QuatTables]*Code
}

// QuatDiffTable returns the number (0..2·QuatClasses-1) of the table of
// difference k (1 or 2) of a relative quaternion whose differences before
// k are e: MagClass(|e0|) for k = 1; QuatClasses + MagClass((|e0| + |e1|
// + 1) / 2) for k = 2.
func QuatDiffTable(e *[3]int64, k int) int {
	if k == 1 {
		return MagClass(abs64(e[0]))
	}
	return QuatClasses + MagClass((abs64(e[0])+abs64(e[1])+1)/2)
}

// QuatDiffSymbols returns the number of symbols of a difference table of a
// quaternion with n-bit components: ESC and the slots of magnitudes of up
// to n bits.
func QuatDiffSymbols(n int) int { return 1 + TokenSlots(n) }

// QuatFirstSymbols returns the number of symbols of the first table of a
// quaternion with n-bit components: the absolute form, and each of the
// four ranks with each slot of magnitudes of up to n bits. (A quaternion
// that is the only field of a struct has one more, its struct's
// "unchanged": docs/wire-format.md, "Models".)
func QuatFirstSymbols(n int) int { return 1 + 4*TokenSlots(n) }

// QuatFirstSymbol returns the first table's symbol of a relative form of
// rank rank whose first difference is e0, for n-bit components.
func QuatFirstSymbol(n, rank int, e0 int64) int {
	return 1 + rank*TokenSlots(n) + TokenSlot(abs64(e0))
}

// maxBitsCodes is the longest a quaternion delta may be with tables t:
// the absolute form.
func (q *Quat) maxBitsCodes(t *QuatCodes) int { return t.Tab[0].Len(0) + q.Bits() }

// diffBits is the size of difference v in table c: its token, or ESC, n
// bits and a sign; -1 when neither has a code.
func (q *Quat) diffBits(c *Code, v int64) int {
	m := abs64(v)
	if b := TokenBits(c, m); b >= 0 {
		return b
	}
	if c.Len(0) == 0 {
		return -1
	}
	b := c.Len(0) + q.n
	if m != 0 {
		b++
	}
	return b
}

// WriteDeltaCodes writes cur (packed) against base (packed; baseOK false
// when it could not be) with the tables t: the relative form when the
// baseline packs, every symbol it needs has a code and it is no longer
// than the absolute form; else the first table's symbol 0 and the packed
// value.
func (q *Quat) WriteDeltaCodes(w *bits.Writer, t *QuatCodes, base uint64, baseOK bool, cur uint64) {
	first := t.Tab[0]
	if baseOK {
		rank, e := q.quatDiffs(base, cur)
		sym := QuatFirstSymbol(q.n, rank, e[0])
		if fl := first.Len(sym); fl > 0 {
			size := fl + SlotTailBits(TokenSlot(abs64(e[0])))
			for k := 1; k < 3 && size >= 0; k++ {
				if b := q.diffBits(t.Tab[1+QuatDiffTable(&e, k)], e[k]); b >= 0 {
					size += b
				} else {
					size = -1
				}
			}
			if size >= 0 && size <= q.maxBitsCodes(t) {
				first.Write(w, sym)
				writeSlotTail(w, abs64(e[0]), e[0] < 0)
				for k := 1; k < 3; k++ {
					c := t.Tab[1+QuatDiffTable(&e, k)]
					m := abs64(e[k])
					if !WriteToken(w, c, m, e[k] < 0) {
						WriteEsc(w, c)
						w.WriteBits(m, q.n)
						if m != 0 {
							w.WriteBool(e[k] < 0)
						}
					}
				}
				return
			}
		}
	}
	first.Write(w, 0)
	w.WriteBits(cur, q.Bits())
}

// ReadDeltaCodes reads what WriteDeltaCodes wrote against the baseline
// base, as ReadDelta does for the adaptive code.
func (q *Quat) ReadDeltaCodes(r *bits.Reader, t *QuatCodes, base *[4]float64) (uint64, error) {
	start := r.Pos()
	sym, err := t.Tab[0].Read(r)
	if err != nil {
		return 0, err
	}
	return q.ReadDeltaCodesFrom(r, t, base, sym, start)
}

// ReadDeltaCodesFrom is ReadDeltaCodes after its first table's symbol sym
// was read, starting at bit start: for a struct whose changed bit the
// first table holds, which reads the symbol to know whether the struct
// changed. A symbol past the forms (that changed bit's) is ErrMalformed.
func (q *Quat) ReadDeltaCodesFrom(r *bits.Reader, t *QuatCodes, base *[4]float64, sym, start int) (uint64, error) {
	if sym == 0 {
		return r.ReadBits(q.Bits())
	}
	slots := TokenSlots(q.n)
	if sym >= QuatFirstSymbols(q.n) {
		return 0, ErrMalformed
	}
	rank, slot := (sym-1)/slots, (sym-1)%slots
	m, neg, err := readSlotTail(r, slot)
	if err != nil {
		return 0, err
	}
	qb, err := q.Pack(*base)
	if err != nil {
		return 0, errBaseline(err)
	}
	e0 := int64(m)
	if neg {
		e0 = -e0
	}
	return q.readRelative(r, nil, t, qb, rank, start, e0)
}

// readDiffCodes reads difference k (1 or 2) of a relative quaternion with
// tables t.
func (q *Quat) readDiffCodes(r *bits.Reader, t *QuatCodes, e *[3]int64, k int) (int64, error) {
	m, neg, esc, err := ReadToken(r, t.Tab[1+QuatDiffTable(e, k)])
	if err != nil {
		return 0, err
	}
	if esc {
		if m, err = r.ReadBits(q.n); err != nil {
			return 0, err
		}
		if m != 0 {
			if neg, err = r.ReadBool(); err != nil {
				return 0, err
			}
		}
	}
	if neg {
		return -int64(m), nil
	}
	return int64(m), nil
}

// DeltaSymbols returns what a model records of cur against base: relative
// false for the absolute form (no baseline, or a relative form longer
// than the adaptive code's choice allows), else the rank and the three
// differences. The choice is made in the state at a message's start
// (DeltaSymbolsIn).
func (q *Quat) DeltaSymbols(base uint64, baseOK bool, cur uint64) (rank int, e [3]int64, relative bool) {
	s := NewQuatDeltaState()
	return q.DeltaSymbolsIn(&s, base, baseOK, cur)
}

// DeltaSymbolsIn is DeltaSymbols with the choice made in state s (its
// running mean warmed by the quaternions before this one in the same
// message, as the adaptive code's is): relative when the three Rice codes
// of the differences with s's parameters and a 2-bit mode fit in the
// adaptive code's bound. s is updated as WriteDelta updates it.
func (q *Quat) DeltaSymbolsIn(s *QuatDeltaState, base uint64, baseOK bool, cur uint64) (rank int, e [3]int64, relative bool) {
	if baseOK {
		rank, e = q.quatDiffs(base, cur)
		k := s.allParams(e)
		size := 2 + RiceBits(e[0], k[0], q.n) + RiceBits(e[1], k[1], q.n) + RiceBits(e[2], k[2], q.n)
		if size <= 3+q.Bits() {
			s.update(e)
			return rank, e, true
		}
	}
	s.afterAbs = 1
	return rank, e, false
}
