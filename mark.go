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
//   - the arena's scratch bit sets in use (model-coded structs' masks);
//   - the symbols a trainer has noted;
//   - optionally (markStates, or saveStates later), the adaptive states of
//     relative quaternions and windowed values, which writing a changed
//     value advances. Saving them copies them, so a mark saves them only
//     where a take-back can follow a changed value.
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
// back to (rewind) or keep (commit).
type mark struct {
	at      int // the writer's length in bits
	depth   int
	words   int // len(arena.words)
	symbols int // len(trainer's pending symbols)
	quats   int // the arena's saved adaptive states, or -1: not saved
	flagged bool
}

// mark returns the current point, without the adaptive states.
func (e *encoder) mark() mark {
	m := mark{at: e.w.Len(), depth: e.depth, quats: -1, flagged: e.flagged}
	if a := e.ar; a != nil {
		m.words = len(a.words)
		if a.rt != nil && a.rt.train != nil {
			m.symbols = len(a.rt.train.pending)
		}
	}
	return m
}

// markStates returns the current point with the adaptive states, for a
// take-back after which the general path writes the same values again.
func (e *encoder) markStates() mark {
	m := e.mark()
	e.saveStates(&m)
	return m
}

// saveStates adds the adaptive states to m, if not yet saved: a fast path
// saves them lazily, before its first write that advances them.
func (e *encoder) saveStates(m *mark) {
	if m.quats < 0 {
		m.quats = e.ar.saveQuats()
	}
}

// rewind goes back to m: what was written since is gone and the state is
// as it was.
func (e *encoder) rewind(m mark) {
	e.w.Truncate(m.at)
	e.flagged, e.depth = m.flagged, m.depth
	if a := e.ar; a != nil {
		a.words = a.words[:m.words]
		if a.rt != nil && a.rt.train != nil {
			a.rt.train.pending = a.rt.train.pending[:m.symbols]
		}
		if m.quats >= 0 {
			a.restoreQuats(m.quats)
		}
	}
}

// commit keeps what was written since m and forgets m's saved adaptive
// states; m then still rewinds the bits and the flag (as an unchanged
// subtree's take-back does: its values advanced no state).
func (e *encoder) commit(m *mark) {
	if m.quats >= 0 {
		e.ar.dropQuats(m.quats)
		m.quats = -1
	}
}

// readMark is a point of the input being read that the decoder can go back
// to: the reader (position, cache and allocation spent) and the decoder's
// own state. A fast path that fails rewinds it and the general path reads
// the same bits again.
type readMark struct {
	r       bits.Reader
	depth   int
	flagged bool
	sawNeg  bool
}

func (d *decoder) mark() readMark {
	return readMark{r: *d.r, depth: d.depth, flagged: d.flagged, sawNeg: d.sawNeg}
}

func (d *decoder) rewind(m *readMark) {
	*d.r = m.r
	d.depth, d.flagged, d.sawNeg = m.depth, m.flagged, m.sawNeg
}
