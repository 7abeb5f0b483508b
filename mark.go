package bitwire

import "github.com/bitwire/bitwire/bits"

// Take-backs and the fast-path contract.
//
// An encoder often writes before it knows whether it should have: a
// subtree's delta is written behind a 1 bit and taken back for a 0 bit when
// nothing in it changed, and every fast path writes optimistically and, on
// any failure, goes back and lets the general path write instead. Going back
// must restore every piece of state the writing touched, or the message (or
// the next one a trainer counts) differs from the one the general path
// writes. A mark holds all of it, so that no take-back site keeps its own
// tuple and forgets a piece:
//
//   - the writer's length in bits;
//   - whether the message's "any negative" flag has been written;
//   - the nesting depth;
//   - optionally (markStates, or saveStates later), the adaptive states of
//     relative quaternions and windowed values, which writing a changed
//     value advances, and the symbols a trainer has noted. Saving them
//     copies them, so a mark saves them only where a take-back can follow
//     a changed value; a subtree that turned out unchanged advanced none of
//     them, and unwrite takes back its bits and flag alone.
//
// Scratch lists (arena.buf, arena.words) are not in a mark: the function
// that takes one releases it on every return, failure or not.
//
// The fast paths (flat plans, delta plans, the fused passes over slices
// and entity sets, a model's judged structs) all follow one contract:
//
//  1. At plan compile time a fast path compiles to its kernel (a flat plan,
//     a delta plan) or to nil when the type does not fit; nil costs one
//     pointer test per use.
//  2. At run time the caller takes a mark and runs the kernel.
//  3. On success it commits the mark. On any failure (a value that cannot
//     be coded, a limit, a leaf the kernel does not know) it rewinds the
//     mark and runs the general path from the same state, which writes
//     the message or reports the error with its field path and bit
//     offset. A fast path never reports an error of its own.
//
// So every fast path writes exactly the bits of the general path; the
// options' general switch (generalOnly) turns them all off, and
// TestPathsSameBits holds each of them to it.

// mark is a point of the message being written that the encoder can go
// back to (rewind) or keep (commit). It has four fields, so that it stays
// in registers: what only some take-backs need (the adaptive states, the
// model's scratch sets and symbols) is saved on the arena's stack.
type mark struct {
	at      int   // the writer's length in bits
	depth   int32 // the nesting depth
	saved   int32 // 1 + the index of the states saved on arena.marks, or 0: none
	flagged bool  // the sign flag written, and its value
	neg     bool
}

// savedStates is what markStates saves on the arena: the mark of the
// adaptive states (arena.saveQuats) and the trainer's symbols noted.
type savedStates struct {
	quats, symbols int
}

// mark returns the current point, without the states.
func (e *encoder) mark() mark {
	return mark{at: e.w.Len(), depth: int32(e.depth), flagged: e.flagged, neg: e.neg}
}

// markStates returns the current point with the states, for a take-back
// after which the general path writes the same values again.
func (e *encoder) markStates() mark {
	m := e.mark()
	e.saveStates(&m)
	return m
}

// saveStates adds the states to m, if not yet saved: a fast path saves them
// lazily, before its first write that advances them.
func (e *encoder) saveStates(m *mark) {
	if m.saved == 0 {
		m.saved = e.ar.pushStates()
	}
}

func (a *arena) pushStates() int32 {
	s := savedStates{quats: a.saveQuats()}
	if a.rt != nil && a.rt.train != nil {
		s.symbols = len(a.rt.train.pending)
	}
	a.marks = append(a.marks, s)
	return int32(len(a.marks))
}

// rewind goes back to m after a failure: what was written since is gone,
// and the state is as it was (the states too, if m saved them).
func (e *encoder) rewind(m mark) {
	e.w.Truncate(m.at)
	e.flagged, e.neg, e.depth = m.flagged, m.neg, int(m.depth)
	if m.saved != 0 {
		e.ar.popStates(m.saved)
	}
}

// unwrite takes back what was written since m for a subtree that turned
// out unchanged: its values advanced no state and noted no symbol, so the
// bits and the flag are all there is to take back.
func (e *encoder) unwrite(m mark) {
	e.w.Truncate(m.at)
	e.flagged, e.neg = m.flagged, m.neg
}

// commit keeps what was written since m and forgets m's saved states.
func (e *encoder) commit(m *mark) {
	if m.saved != 0 {
		e.ar.dropStates(m.saved)
		m.saved = 0
	}
}

// dropStates forgets the states saved at mark i (1-based) and the ones
// above it.
func (a *arena) dropStates(i int32) {
	a.dropQuats(a.marks[i-1].quats)
	a.marks = a.marks[:i-1]
}

// popStates puts back the states saved at mark i (1-based) and forgets
// them and the ones above it.
func (a *arena) popStates(i int32) {
	s := a.marks[i-1]
	a.marks = a.marks[:i-1]
	a.restoreQuats(s.quats)
	if a.rt != nil && a.rt.train != nil {
		a.rt.train.pending = a.rt.train.pending[:s.symbols]
	}
}

// readMark is a point of the input being read that the decoder can go back
// to. The decoding fast paths (flat plans) change nothing but the reader:
// they hold no signed adaptive value (so no flag) and check the depth
// before they start, so the reader (position, cache and the allocation
// spent) is all a failed one must give back before the general path reads
// the same bits again.
// A mark is taken as readMark(*d.r), a plain copy: a method returning it,
// or a struct holding the reader, costs the hot paths a second copy or a
// zeroing.
type readMark bits.Reader

func (d *decoder) rewind(m *readMark) { *d.r = bits.Reader(*m) }
