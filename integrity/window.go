package integrity

import "fmt"

// ReorderTicks is how far a stale packet may lag the newest accepted tick
// and still be taken for reordering: only a packet more than ReorderTicks
// older counts toward a backward run (see TickWindow). Half a second at 60
// ticks a second.
const ReorderTicks = 32

// TickWindow decides which ticks a receiver accepts: only ticks newer than
// the newest it accepted, and at most MaxAhead newer, so that no single
// packet (forged, or corrupted in a way no check caught) can move the
// receiver so far ahead that the honest stream looks stale for long. It
// also recovers by itself from a receiver whose newest tick is wrong: a
// run of RecoverAfter refused packets whose ticks increase, each at most
// MaxAhead after the previous one, looks like a live stream the window does
// not fit, and the window lets the packet that completes the run, and the
// following ones of that run, through (a re-anchoring).
//
// Two cases need it. After a long stall of the link, the sender's ticks
// are more than MaxAhead ahead: the run re-anchors forward. After a bad
// packet was accepted with a tick ahead of the sender's, every honest
// packet is stale: the run re-anchors backward (a rewind), and the
// receiver forgets what it held past that point. A stale packet counts
// toward a backward run only when it is more than ReorderTicks older than
// the newest accepted tick: late packets of an ordinary reordering are
// refused, never a rewind. (A bad tick at most ReorderTicks ahead is
// caught up by the honest stream instead, within ReorderTicks packets.) Rewinds are only enabled
// without a MAC (see NewTickWindow): with one, every accepted tick is the
// sender's, and a rewind could only be provoked by replaying old packets.
//
// TickWindow is the acceptance rule of snapshot.Receiver (over ticks) and
// replicate.Client (over sequence numbers), exported for other packet
// streams. The zero value is not usable; create one with
// NewTickWindow. It is not safe for concurrent use.
type TickWindow struct {
	maxAhead     uint32
	recoverAfter int
	rewind       bool

	accepted bool
	newest   uint32

	run     int    // refused packets in the current run
	runTick uint32 // the newest tick of the run
	runBack bool   // the run is of stale ticks (else of ticks too far ahead)

	// left is the newest tick before the last re-anchoring (when hasLeft):
	// a packet that continues that stream takes the window back to it at
	// once (see Check).
	left    uint32
	hasLeft bool
}

// NewTickWindow returns a window that accepts ticks up to maxAhead past
// the newest accepted one (any tick when none was), and re-anchors after
// recoverAfter refused packets of one increasing run (never when it is
// 0); backward only when rewind is set.
func NewTickWindow(maxAhead uint32, recoverAfter int, rewind bool) *TickWindow {
	return &TickWindow{maxAhead: maxAhead, recoverAfter: recoverAfter, rewind: rewind}
}

// Newest returns the newest accepted tick; ok is false when none was since
// creation or Reset.
func (w *TickWindow) Newest() (tick uint32, ok bool) { return w.newest, w.accepted }

// Check says whether a packet of tick may be decoded: nil, ErrStaleTick
// (not newer than the newest accepted) or ErrFutureTick (more than
// MaxAhead newer). A refused tick counts towards a run; the packet that
// completes a run, and the next ones of the run, pass. After a
// re-anchoring (with rewinds enabled), a packet that continues the stream
// the window left (newer than its newest tick, by at most MaxAhead)
// passes too, and Accept takes the window back to that stream. Check changes nothing
// else: call Accept once the packet was decoded whole.
func (w *TickWindow) Check(tick uint32) error {
	if !w.accepted {
		return nil
	}
	if w.hasLeft && tick > w.left && tick-w.left <= w.maxAhead && (tick <= w.newest || tick-w.newest > w.maxAhead) {
		return nil
	}
	var err error
	switch {
	case tick <= w.newest:
		err = fmt.Errorf("%w: tick %d, newest accepted %d", ErrStaleTick, tick, w.newest)
	case tick-w.newest > w.maxAhead:
		err = fmt.Errorf("%w: tick %d is %d ticks past the newest accepted %d (at most %d)", ErrFutureTick, tick, tick-w.newest, w.newest, w.maxAhead)
	default:
		return nil
	}
	if w.recoverAfter <= 0 {
		return err
	}
	back := tick <= w.newest
	if back && (!w.rewind || w.newest-tick <= ReorderTicks) {
		return err
	}
	switch {
	case w.run > 0 && back == w.runBack && tick == w.runTick:
		// a duplicate: neither counts nor breaks the run
	case w.run > 0 && back == w.runBack && tick > w.runTick && tick-w.runTick <= w.maxAhead:
		w.run++
		w.runTick = tick
	default:
		w.run, w.runTick, w.runBack = 1, tick, back
	}
	if w.run >= w.recoverAfter {
		return nil
	}
	return err
}

// Accept records that the packet of tick was decoded and kept. It returns
// true when tick is not newer than the previous newest: a rewind, after
// which the caller must forget what it holds of ticks from tick on.
//
// A re-anchoring (after a run, forward or backward) remembers the stream
// it left, when rewinds are enabled, until a packet continues that stream
// or the next re-anchoring: an off-path forger who does not know the tick
// can make a burst of RecoverAfter far-away (or old) ticks complete a run,
// but not keep the window there, since the next honest packet takes it
// back (a rewind). A long stall of the link moves the window forward for
// good, as its old stream does not come back (a straggler of it that
// arrives after the re-anchoring costs one more run); a rewind away from
// a bad tick ahead is undone only by a packet past that tick, which the
// honest stream sends anyway once it gets there.
func (w *TickWindow) Accept(tick uint32) (rewound bool) {
	rewound = w.accepted && tick <= w.newest
	switch {
	case w.hasLeft && tick > w.left && tick-w.left <= w.maxAhead:
		w.hasLeft = false // back to the stream it left
	case w.rewind && w.accepted && (tick <= w.newest || tick-w.newest > w.maxAhead):
		// a run re-anchored the window, forward or backward
		w.left, w.hasLeft = w.newest, true
	}
	w.accepted, w.newest = true, tick
	w.run = 0
	return rewound
}

// Reset forgets the newest tick and any run: the next tick is accepted,
// whatever it is.
func (w *TickWindow) Reset() {
	w.accepted, w.newest, w.run, w.hasLeft = false, 0, 0, false
}
