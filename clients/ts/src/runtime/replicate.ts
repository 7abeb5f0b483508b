// ---- replication (the client side of package replicate) ----
// Replication headers, acks and the client of a replicate stream.

import { BitwireError, ErrBadMagic, ErrMalformed, ErrNoBaseline, ErrProtocolMismatch, ErrTrailingData, ErrUnexpectedEnd } from "./errors.js";
import { BitReader } from "./stream.js";
import { readBitlen } from "./codings.js";
import { StructPlan, q } from "./plan.js";
import { meanAdd, riceK } from "./window.js";
import { checkPadding, decode, decodeFrom, decodePredictedFrom } from "./message.js";
import { predicts } from "./predict.js";
import { MODE_MAC, MODE_NONE, fingerprint32, openTrailer } from "./snapshot.js";
import { TickWindow } from "./tickwindow.js";

export class ErrStale extends BitwireError { constructor(d = "stale or duplicate packet") { super("ErrStale", d); } }
export class ErrFuture extends BitwireError { constructor(d = "sequence number too far ahead") { super("ErrFuture", d); } }
export class ErrTooManyEntities extends BitwireError { constructor(d = "too many entities") { super("ErrTooManyEntities", d); } }

/** the magic of replication packets, version 4 (they start with 7F B4), and of their acks (A7 B2) */
export const REPLICATE_MAGIC = 0xb47f, REPLICATE_ACK_MAGIC = 0xb2a7;
/** as Go's replicate constants */
export const BASELINE_DEPTH = 8, REPLICATE_MAX_AHEAD = 1024, REPLICATE_RECOVER_AFTER = 8, REPLICATE_ACK_WINDOW = 32;
/**
 * as Go's replicate constants: a Peer's default Refresh in seconds, the
 * default expiry in Refreshes, and the default tick rate of a Server
 */
export const DEFAULT_REFRESH_SECONDS = 10, EXPIRY_REFRESHES = 3, DEFAULT_TICK_RATE = 30;
// each accepted packet's expiry looks at EXPIRY_SWEEP slots; the default
// expiry also at two for each entity the packet added, and one in
// SWEEP_ROUND of all (Go's expirySweep, sweepRound)
const EXPIRY_SWEEP = 32, SWEEP_ROUND = 256;
// how far one packet moves the default expiry's stream clock (Go's maxClockStep)
const MAX_CLOCK_STEP = 8;
const REPLICA_HEADER_BITS = 114;

/** the header of a replication packet */
export interface ReplicaHeader { fingerprint: number; seq: number; tick: number; mode: number; }

/** reads a replication packet header; errors as Go's replicate.readHeader */
export function readReplicaHeader(r: BitReader): ReplicaHeader {
  if (r.remaining() < 16) throw new ErrUnexpectedEnd("replicate: header: unexpected end of input");
  const m = r.read(16);
  if (m !== REPLICATE_MAGIC) throw new ErrBadMagic(`replicate: bad magic number: 0x${m.toString(16)}`);
  if (r.remaining() < REPLICA_HEADER_BITS - 16) throw new ErrUnexpectedEnd("replicate: header: unexpected end of input");
  const fingerprint = r.read(32), seq = r.read(32), tick = r.read(32), mode = r.read(2);
  if (mode > MODE_MAC) throw new ErrMalformed(`replicate: header: integrity mode ${mode}`);
  if (seq === 0) throw new ErrMalformed("replicate: header: sequence number 0");
  return { fingerprint, seq, tick, mode };
}

/**
 * a replication ack (Go's replicate.Ack): the newest packet accepted and the
 * 32 before it (bit i: seq-1-i), with their ack tokens, and the newest packet
 * refused for a missing baseline since (0: none) with its token
 */
export interface ReplicaAck { seq: number; mask: number; token: number; maskToken: number; missing: number; missingToken: number; }

/** the bytes of a replication ack (Go's replicate.AppendAck): 19, or 27 with a missing-baseline report */
export function encodeReplicaAck(a: ReplicaAck): Uint8Array {
  const b = new Uint8Array(a.missing !== 0 ? 27 : 19);
  const dv = new DataView(b.buffer);
  dv.setUint16(0, REPLICATE_ACK_MAGIC, true);
  b[2] = a.missing !== 0 ? 1 : 0;
  dv.setUint32(3, a.seq >>> 0, true);
  dv.setUint32(7, a.mask >>> 0, true);
  dv.setUint32(11, a.token >>> 0, true);
  dv.setUint32(15, a.maskToken >>> 0, true);
  if (a.missing !== 0) {
    dv.setUint32(19, a.missing >>> 0, true);
    dv.setUint32(23, a.missingToken >>> 0, true);
  }
  return b;
}

/** what an accepted replication packet changed (Go's replicate.Info) */
export interface ReplicaInfo { seq: number; tick: number; updated: number[]; removed: number[]; }

/**
 * options of a replica client, as Go's replicate options: the integrity
 * mode and MAC key (WithIntegrity, the Peer's), the most entities held
 * (WithMaxEntities, 2^20 by default), the expiry in ticks (WithExpiry, 0:
 * never), the Peer's Refresh in ticks (WithRefresh: 0, the default
 * DEFAULT_REFRESH_SECONDS at tickRate; negative, never) and the Server's
 * tick rate (WithTickRate, DEFAULT_TICK_RATE by default). Without expiry,
 * the client expires by default as Go's: EXPIRY_REFRESHES times the Peer's
 * Refresh, counted on a clock of the ticks the stream covered (an outage
 * ages nothing); off with a MAC or a Refresh of never.
 */
export interface ReplicaOptions { mode?: number; key?: Uint8Array; maxEntities?: number; expiry?: number; refresh?: number; tickRate?: number; }

/**
 * the values of one list of a replication packet (version 3): unsigned
 * Rice codes whose parameter follows the running mean of the values before
 * them, each value capped at the escape when it moves the mean; the escape
 * (six 1 bits) is followed by the value as a bitlen of prefix width 5
 */
class ReplicaSeq {
  private mean = 0;
  read(r: BitReader): number {
    const k = riceK(this.mean);
    let q = 0;
    while (q < 6 && r.bool()) q++;
    let m: number;
    if (q < 6) m = q * 2 ** k + r.read(k);
    else {
      m = readBitlen(r, 5) as number;
      if (Math.floor(m / 2 ** k) < 6) throw new ErrMalformed("escaped Rice value that fits unescaped");
    }
    this.mean = meanAdd(this.mean, Math.min(m, 6 * 2 ** k));
    return m;
  }
}
/** a list's count: a 0 bit for none, else a 1 bit and count - 1 as a bitlen of prefix width 5, at most the bits left */
function readReplicaCount(r: BitReader): number {
  if (!r.bool()) return 0;
  const n = readBitlen(r, 5) as number;
  if (n >= r.remaining()) throw new ErrUnexpectedEnd(`replicate: a list of ${n + 1} entries in ${r.remaining()} bits`);
  return n + 1;
}
/** the ids of a list, as gaps (id - previous - 1) */
function readReplicaIDs(r: BitReader, n: number, each: (id: number) => void): void {
  const q = new ReplicaSeq();
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const v = prev + 1 + q.read(r);
    if (v > 0xffffffff) throw new ErrMalformed("replicate: id gap past 2^32");
    prev = v;
    each(v);
  }
}
function readReplicaBase(r: BitReader, tick: number): number {
  const d = Number(readBitlen(r, 5));
  if (d >= tick) throw new ErrMalformed(`baseline ${d + 1} ticks before tick ${tick}`);
  return tick - d - 1;
}

/**
 * The client side of one replicate.Peer (Go's replicate.Client, packet
 * version 4): checks the header, the integrity mode and trailer, accepts
 * packets in order within the bounded sequence window (re-anchoring
 * backward too without a MAC, as Go's), keeps the last BASELINE_DEPTH
 * states of every entity it holds (with their ticks) as baselines, applies
 * removals, full states and deltas against the right baseline with the
 * generated plan of the entity type, and says what to acknowledge (ack(),
 * with the packets' tokens and the missing-baseline report). A packet that
 * fails changes nothing, except that a body it cannot apply (any error
 * after the window but ErrTooManyEntities) is reported in its acks.
 */
export class ReplicaClient<T> {
  t: StructPlan;
  fp: number;
  max: number;
  mode: number;
  key: Uint8Array;
  /** the expiry in ticks (0: never): the expiry option's, or the default one */
  readonly expiry: number;
  /** the expiry is the default one (no expiry option), which ages entities by the stream clock instead of by ticks */
  readonly auto: boolean;
  // the entities held, in slots as Go's (the expiry sweeps them in slot
  // order): each with its kept states, oldest first, and their ticks, and
  // the stream clock when its newest state was kept
  private slots: { id: number; ticks: number[]; vals: T[]; seen: number }[] = [];
  private free: number[] = [];
  private index: Map<number, number> = new Map();
  private sweep = 0;
  // the stream clock of the default expiry: each packet decoded whole
  // (accepted, or refused only as too many) advances it by its distance in
  // ticks from the previous such packet (clockTick), at most MAX_CLOCK_STEP
  private clock = 0; private clockTick = 0; private clocked = false;
  // the packet being applied fits the limit only once every expired entity is dropped
  private expireAll = false;
  // the sequence numbers accepted: Go's integrity.TickWindow, rewinding only without a MAC
  private window: TickWindow;
  accepted = false;
  newest = 0;
  mask = 0;
  tick = 0;
  private tokens: { seq: number; token: number }[] = Array.from({ length: REPLICATE_ACK_WINDOW + 1 }, () => ({ seq: 0, token: 0 }));
  private missing = { seq: 0, token: 0 };
  // the codec has pred values: its deltas start with the prediction prefix
  private readonly pred: boolean;
  constructor(t: StructPlan, fingerprint: bigint, opts: ReplicaOptions = {}) {
    this.t = t; this.fp = fingerprint32(fingerprint); this.pred = predicts(t);
    this.max = opts.maxEntities ?? (1 << 20);
    this.mode = opts.mode ?? MODE_NONE;
    this.key = opts.key ?? new Uint8Array(0);
    const refresh = opts.refresh ?? 0, rate = opts.tickRate ?? DEFAULT_TICK_RATE;
    if (opts.expiry !== undefined && (!Number.isInteger(opts.expiry) || opts.expiry < 0 || opts.expiry > 0xffffffff)) throw new Error("replicate: negative expiry");
    if (!Number.isInteger(rate) || rate < 1 || rate > 1000) throw new Error("replicate: tick rate outside 1..1000");
    if (!Number.isInteger(refresh)) throw new Error("replicate: refresh not an integer");
    if (this.max < 1) throw new Error("replicate: max entities under 1");
    if (this.mode < MODE_NONE || this.mode > MODE_MAC) throw new Error(`replicate: integrity mode ${this.mode}`);
    if ((this.mode === MODE_MAC) !== (this.key.length > 0) || (this.mode === MODE_MAC && this.key.length < 16)) {
      throw new Error("replicate: a MAC key of at least 16 bytes with mode 2, and none otherwise");
    }
    // as Go's expiryTicks: nothing to expire when the Peer never refreshes, or nothing forged gets through
    this.auto = opts.expiry === undefined;
    if (!this.auto) this.expiry = opts.expiry as number;
    else if (refresh < 0 || this.mode === MODE_MAC) this.expiry = 0;
    else if (refresh === 0) this.expiry = EXPIRY_REFRESHES * DEFAULT_REFRESH_SECONDS * rate;
    else this.expiry = Math.min(EXPIRY_REFRESHES * refresh, 2 ** 31);
    this.window = new TickWindow(REPLICATE_MAX_AHEAD, REPLICATE_RECOVER_AFTER, this.mode !== MODE_MAC);
  }
  private tokenOf(seq: number): number {
    const t = this.tokens[seq % this.tokens.length];
    return t.seq === seq ? t.token : 0;
  }
  /** the acknowledgement of what was accepted so far (seq 0 before any packet), with tokens and the missing-baseline report */
  ack(): ReplicaAck {
    const a: ReplicaAck = { seq: 0, mask: 0, token: 0, maskToken: 0, missing: this.missing.seq, missingToken: this.missing.token };
    if (!this.accepted) return a;
    a.seq = this.newest; a.mask = this.mask; a.token = this.tokenOf(this.newest);
    for (let i = 0; i < REPLICATE_ACK_WINDOW; i++) {
      if ((this.mask >>> i) & 1) a.maskToken = (a.maskToken ^ this.tokenOf(this.newest - 1 - i)) >>> 0;
    }
    return a;
  }
  /** the number of entities held */
  get size(): number { return this.index.size; }
  /** the ids held, in no particular order */
  ids(): number[] { return [...this.index.keys()]; }
  /** the state held of id and the tick it is from, or undefined */
  get(id: number): { value: T; tick: number } | undefined {
    const slot = this.index.get(id);
    if (slot === undefined) return undefined;
    const e = this.slots[slot];
    const n = e.ticks.length - 1;
    return { value: e.vals[n], tick: e.ticks[n] };
  }
  /** the states kept of id (up to the baseline depth), oldest first, with their ticks (Go's Client.States); read-only */
  states(id: number): { ticks: number[]; vals: T[] } | undefined {
    const slot = this.index.get(id);
    return slot === undefined ? undefined : this.slots[slot];
  }
  private check(seq: number): void {
    const why = this.window.check(seq);
    if (why === "stale") throw new ErrStale(`replicate: stale or duplicate packet: packet ${seq}, newest accepted ${this.newest}`);
    if (why === "future") throw new ErrFuture(`replicate: sequence number too far ahead: packet ${seq}, newest accepted ${this.newest} (at most ${REPLICATE_MAX_AHEAD} ahead)`);
  }
  /** applies one packet and returns what it changed; on any error nothing changes and the packet must not be acknowledged */
  decode(packet: Uint8Array): ReplicaInfo {
    const h = readReplicaHeader(new BitReader(packet));
    if (h.fingerprint !== this.fp) throw new ErrProtocolMismatch(`replicate: protocol mismatch: packet 0x${h.fingerprint.toString(16)}, client 0x${this.fp.toString(16)}`);
    if (h.mode !== this.mode) throw new ErrProtocolMismatch(`replicate: packet integrity ${h.mode}, client ${this.mode}`);
    const { body, token } = openTrailer(this.mode, this.key, packet, "replicate: header: unexpected end of input");
    if (body.length * 8 < REPLICA_HEADER_BITS) throw new ErrUnexpectedEnd(`replicate: packet ${h.seq}: unexpected end of input`);
    const r = new BitReader(body);
    r.pos = REPLICA_HEADER_BITS; // past the header
    this.check(h.seq);
    const rem: number[] = [];
    const dec: { id: number; slot: number; v: T }[] = [];
    try {
      let held = this.index.size;
      readReplicaIDs(r, readReplicaCount(r), (id) => {
        rem.push(id);
        if (this.index.has(id)) held--;
      });
      let common = 0;
      const hasCommon = r.bool();
      if (hasCommon) common = readReplicaBase(r, h.tick);
      let ri = 0;
      // the entities: ids, then the kinds of those that are not deltas
      // against the common baseline, then the bodies
      const ents: { id: number; slot: number; kind: number; base: number }[] = [];
      readReplicaIDs(r, readReplicaCount(r), (id) => {
        while (ri < rem.length && rem[ri] < id) ri++;
        const removedHere = ri < rem.length && rem[ri] === id;
        const slot = removedHere ? undefined : this.index.get(id);
        ents.push({ id, slot: slot ?? -1, kind: 0, base: common });
      });
      const nk = readReplicaCount(r);
      const at = new ReplicaSeq(), vals = new ReplicaSeq();
      let last = -1;
      for (let i = 0; i < nk; i++) {
        const g = at.read(r);
        if (g >= ents.length - last - 1) throw new ErrMalformed(`a kind past the ${ents.length} entities`);
        last += 1 + g;
        const d = ents[last];
        const v = vals.read(r);
        if (v === 0) d.kind = 2;
        else if (v > h.tick) throw new ErrMalformed(`id ${d.id}: baseline ${v} ticks before tick ${h.tick}`);
        else if (hasCommon && h.tick - v === common) throw new ErrMalformed(`id ${d.id}: its own baseline is the common one`);
        else { d.kind = 1; d.base = h.tick - v; }
      }
      for (const { id, slot, kind, base } of ents) {
        const ent = slot < 0 ? undefined : this.slots[slot];
        let v: T;
        if (kind === 2) {
          v = decodeFrom<T>(this.t, r);
          if (!ent) held++;
        } else {
          if (kind === 0 && !hasCommon) throw new ErrMalformed(`id ${id}: a delta against the common baseline of a packet without one`);
          const i = ent ? ent.ticks.indexOf(base) : -1;
          if (!ent || i < 0) throw new ErrNoBaseline(`replicate: entity baseline not held: id ${id} against tick ${base}`);
          // a predicting codec's prediction prefix: whether the delta is predicted, and from which older state
          let older: T | null = null;
          if (this.pred && r.bool()) {
            const o = readReplicaBase(r, base);
            const k = ent.ticks.indexOf(o);
            if (k < 0) throw new ErrNoBaseline(`replicate: entity baseline not held: id ${id} predicted from tick ${o}`);
            older = ent.vals[k];
          }
          v = decodePredictedFrom<T>(this.t, r, older, ent.vals[i]);
        }
        dec.push({ id, slot, v });
      }
      if (!checkPadding(r)) throw new ErrTrailingData(`${r.remaining()} bits left`);
      this.expireAll = false;
      if (held > this.max) {
        const clock = this.clockAt(h.tick);
        if (held - this.expired(h.tick, clock, ents, rem) > this.max) {
          // the stream goes on meanwhile: what a forgery made up ages even
          // while every genuine packet is refused
          this.clock = clock; this.clockTick = h.tick; this.clocked = true;
          throw new ErrTooManyEntities(`replicate: too many entities: ${held}, limit ${this.max}`);
        }
        this.expireAll = true;
      }
    } catch (e) {
      // a body it cannot apply, which passed the trailer (a baseline it
      // lacks, or one a forgery altered): the ack reports it
      if (!(e instanceof ErrTooManyEntities)) this.missing = { seq: h.seq, token };
      if (e instanceof BitwireError) e.message = `replicate: packet ${h.seq} (tick ${h.tick}): ` + e.message;
      throw e;
    }
    // commit: removals, then the entities
    const removed: number[] = [], updated: number[] = [];
    const held = this.index.size;
    this.clock = this.clockAt(h.tick); this.clockTick = h.tick; this.clocked = true;
    for (const id of rem) {
      const slot = this.index.get(id);
      if (slot === undefined) continue;
      this.index.delete(id);
      this.free.push(slot);
      removed.push(id);
    }
    for (const { id, slot, v } of dec) {
      const ent = this.slots[slot >= 0 ? slot : this.alloc(id)];
      // states of this tick or later are dropped first (never in the sender's
      // own stream); kept ticks therefore always increase
      while (ent.ticks.length > 0 && ent.ticks[ent.ticks.length - 1] >= h.tick) { ent.ticks.pop(); ent.vals.pop(); }
      ent.ticks.push(h.tick); ent.vals.push(v);
      if (ent.ticks.length > BASELINE_DEPTH) { ent.ticks.shift(); ent.vals.shift(); }
      ent.seen = this.clock;
      updated.push(id);
    }
    if (!this.accepted || h.seq <= this.newest) this.mask = 0;
    else {
      const shift = h.seq - this.newest;
      this.mask = shift > REPLICATE_ACK_WINDOW ? 0 : shift === 32 ? (2 ** 31) >>> 0 : ((this.mask << shift) | (1 << (shift - 1))) >>> 0;
    }
    this.accepted = true; this.newest = h.seq; this.tick = h.tick;
    this.tokens[h.seq % this.tokens.length] = { seq: h.seq, token };
    if (h.seq > this.missing.seq) this.missing = { seq: 0, token: 0 };
    this.window.accept(h.seq);
    if (this.expiry !== 0) {
      // the sweep keeps ahead of what packets add, and goes round a large
      // view in a bounded number of packets
      let n = EXPIRY_SWEEP;
      if (this.auto) n += 2 * Math.max(this.index.size - held, 0) + Math.floor(this.slots.length / SWEEP_ROUND);
      if (this.expireAll) n = this.slots.length;
      this.expire(h.tick, n, removed);
    }
    return { seq: h.seq, tick: h.tick, updated, removed };
  }
  private alloc(id: number): number {
    let slot = this.free.pop();
    if (slot === undefined) { slot = this.slots.length; this.slots.push({ id, ticks: [], vals: [], seen: 0 }); }
    this.slots[slot] = { id, ticks: [], vals: [], seen: 0 };
    this.index.set(id, slot);
    return slot;
  }
  // the stream clock once the packet of tick is accepted
  private clockAt(tick: number): number {
    if (!this.clocked) return this.clock;
    return (this.clock + Math.min(Math.abs(tick - this.clockTick), MAX_CLOCK_STEP)) >>> 0;
  }
  // whether the expiry drops the entity of slot at the packet of tick, after
  // which the stream clock reads clock: the default expiry, when the clock
  // moved on by more than the expiry since its newest state was kept; the
  // expiry option, when its newest state is more than the expiry away from
  // tick, either way
  private stale(slot: number, tick: number, clock: number): boolean {
    const e = this.slots[slot];
    if (this.auto) return ((clock - e.seen) >>> 0) > this.expiry;
    return Math.abs(e.ticks[e.ticks.length - 1] - tick) > this.expiry;
  }
  // the entities held, and neither removed nor set by the packet being
  // read, that the expiry would drop at tick: looked at only for a packet
  // that would otherwise be refused as too many
  private expired(tick: number, clock: number, ents: { slot: number }[], rem: number[]): number {
    if (this.expiry === 0) return 0;
    let n = 0;
    for (const slot of this.index.values()) if (this.stale(slot, tick, clock)) n++;
    for (const { slot } of ents) if (slot >= 0 && this.stale(slot, tick, clock)) n--;
    for (const id of rem) {
      const slot = this.index.get(id);
      if (slot !== undefined && this.stale(slot, tick, clock)) n--;
    }
    return n;
  }
  // drops the entities, among the next n slots, that are stale at tick
  private expire(tick: number, n: number, removed: number[]): void {
    for (let k = 0; k < n && this.slots.length > 0; k++) {
      if (this.sweep >= this.slots.length) this.sweep = 0;
      const slot = this.sweep++;
      const e = this.slots[slot];
      if (this.index.get(e.id) !== slot || e.ticks.length === 0) continue; // a free slot
      if (this.stale(slot, tick, this.clock)) {
        this.index.delete(e.id);
        this.free.push(slot);
        removed.push(e.id);
      }
    }
  }
}
