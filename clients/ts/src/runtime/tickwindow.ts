// ---- the tick window (Go's integrity.TickWindow) ----
// Which ticks (or sequence numbers) a receiver accepts: the snapshot
// receiver's over ticks, the replica client's over sequence numbers.

/**
 * how far a stale packet may lag the newest accepted tick and still be
 * taken for reordering, never counting toward a backward run (Go's
 * integrity.ReorderTicks)
 */
export const REORDER_TICKS = 32;

/** why TickWindow.check refuses a tick: not newer than the newest accepted, or more than maxAhead newer */
export type TickRefusal = "stale" | "future";

/**
 * The acceptance rule of Go's integrity.TickWindow: a tick newer than the
 * newest accepted by at most maxAhead; a run of recoverAfter refused ticks
 * that increase, each at most maxAhead after the previous one, re-anchors
 * the window (forward after a stall; backward, a rewind, only when rewind
 * is set, and only for ticks more than REORDER_TICKS behind). A
 * re-anchoring with rewinds enabled remembers the stream it left, and a
 * packet that continues that stream (newer than its newest tick, by at
 * most maxAhead) takes the window back to it at once, so that a burst of
 * forged far-away ticks costs the honest stream nothing.
 */
export class TickWindow {
  readonly maxAhead: number;
  readonly recoverAfter: number;
  readonly rewind: boolean;
  private accepted = false;
  private newest = 0;
  private run = 0; // refused packets in the current run
  private runTick = 0; // the newest tick of the run
  private runBack = false; // the run is of stale ticks (else of ticks too far ahead)
  private left = 0; // the newest tick before the last re-anchoring, when hasLeft
  private hasLeft = false;
  /** a window of ticks up to maxAhead ahead, re-anchoring after recoverAfter refused packets of a run (never when 0), backward only when rewind is set */
  constructor(maxAhead: number, recoverAfter: number, rewind: boolean) {
    this.maxAhead = maxAhead; this.recoverAfter = recoverAfter; this.rewind = rewind;
  }
  /** the newest accepted tick, or undefined when none was since creation or reset */
  newestTick(): number | undefined { return this.accepted ? this.newest : undefined; }
  /**
   * whether a packet of tick may be decoded: null, or why not; a refused
   * tick counts toward a run, whose completing packet (and the next ones of
   * the run) pass. Nothing else changes: call accept once the packet was
   * decoded whole.
   */
  check(tick: number): TickRefusal | null {
    if (!this.accepted) return null;
    if (this.hasLeft && tick > this.left && tick - this.left <= this.maxAhead && (tick <= this.newest || tick - this.newest > this.maxAhead)) return null;
    let why: TickRefusal;
    if (tick <= this.newest) why = "stale";
    else if (tick - this.newest > this.maxAhead) why = "future";
    else return null;
    if (this.recoverAfter <= 0) return why;
    const back = tick <= this.newest;
    if (back && (!this.rewind || this.newest - tick <= REORDER_TICKS)) return why;
    if (this.run > 0 && back === this.runBack && tick === this.runTick) {
      // a duplicate: neither counts nor breaks the run
    } else if (this.run > 0 && back === this.runBack && tick > this.runTick && tick - this.runTick <= this.maxAhead) {
      this.run++; this.runTick = tick;
    } else {
      this.run = 1; this.runTick = tick; this.runBack = back;
    }
    return this.run >= this.recoverAfter ? null : why;
  }
  /**
   * records that the packet of tick was decoded and kept; true when tick is
   * not newer than the previous newest (a rewind: the caller forgets what it
   * holds of ticks from tick on)
   */
  accept(tick: number): boolean {
    const rewound = this.accepted && tick <= this.newest;
    if (this.hasLeft && tick > this.left && tick - this.left <= this.maxAhead) {
      this.hasLeft = false; // back to the stream it left
    } else if (this.rewind && this.accepted && (tick <= this.newest || tick - this.newest > this.maxAhead)) {
      // a run re-anchored the window, forward or backward
      this.left = this.newest; this.hasLeft = true;
    }
    this.accepted = true; this.newest = tick; this.run = 0;
    return rewound;
  }
  /** forgets the newest tick and any run: the next tick is accepted, whatever it is */
  reset(): void { this.accepted = false; this.newest = 0; this.run = 0; this.hasLeft = false; }
}
