// ---- delta encoding ----
// DeltaEncoder: what a receiver holding a baseline needs to rebuild a value,
// as Go's Codec.EncodeDelta writes it (a client's deltas: its inputs), the
// writing side of DeltaDecoder: a changed bit a field, windows with their
// adaptive Rice code, index sets of changed slice elements and map entries,
// pointers, relative quaternions and entity sets matched by id. Messages
// with a model are refused (ErrUnsupportedType).

import { BitwireError, ErrInvalidValue, ErrTooLong } from "./errors.js";
import { BitWriter } from "./stream.js";
import { QUAT_OTHERS, QuatCoder, bitsRequired, writeBitlen } from "./codings.js";
import { ArrayNode, MapNode, Node, QuatNode, SliceNode, StructPlan, byElem, q, qc, wrap } from "./plan.js";
import { UTF8E, f32Bits, f64Bits, loadQuat, toFixed } from "./decode.js";
import { Encoder, sortedKeys } from "./encode.js";
import { meanAdd, riceK, scalarKey } from "./window.js";
import { quatRebase } from "./delta.js";

/** the adaptive state of one node in one delta message, as DeltaDecoder keeps it */
interface Slot { mean: number; abs: number; warm: number; }

/** the encoder state of one delta message: Encoder plus the delta walk */
export class DeltaEncoder extends Encoder {
  /** the adaptive state of each windowed or quaternion node written so far in this message */
  private slots = new Map<Node, Slot>();
  begin(neg: boolean): void { super.begin(neg); this.slots.clear(); }
  private slot(n: Node, start: number): Slot {
    let st = this.slots.get(n);
    if (st === undefined) { st = { mean: start, abs: 0, warm: 0 }; this.slots.set(n, st); }
    return st;
  }

  /** a struct's delta from b to c: a changed bit a field but skip (an entity's id), then each changed field's delta */
  structDelta(t: StructPlan, b: any, c: any, skip: number): void {
    if (++this.depth > this.maxDepth) throw new ErrInvalidValue("nesting deeper than " + this.maxDepth + " (a cyclic value?)");
    if (c === null || typeof c !== "object") throw new ErrInvalidValue(`not a ${t.name}`);
    if (b === null || typeof b !== "object") throw new ErrInvalidValue(`baseline: not a ${t.name}`);
    const fs = t.fields, w = this.w;
    for (let i = 0; i < fs.length; i++) {
      if (i === skip) continue;
      const f = fs[i];
      try {
        const vb = b[f.name], vc = c[f.name];
        const changed = !same(f.node, vb, vc);
        w.bool(changed);
        if (changed) this.valueDelta(f.node, vb, vc);
      } catch (e) { throw wrap(e, f.name); }
    }
    this.depth--;
  }

  /** a changed array whose elements carry a window: a changed bit an element, then its delta */
  arrayDelta(n: ArrayNode, b: any[], c: any[]): void {
    for (let i = 0; i < n.count; i++) {
      try {
        const changed = !same(n.e, b[i], c[i]);
        this.w.bool(changed);
        if (changed) this.valueDelta(n.e, b[i], c[i]);
      } catch (e) { throw wrap(e, `[${i}]`); }
    }
  }

  /** the delta of c, a value of n that differs from its baseline b */
  valueDelta(n: Node, b: any, c: any): void {
    switch (n.k) {
      case "struct":
        if (n.composite) this.struct(n.t, c); else this.structDelta(n.t, b, c, -1);
        return;
      case "quat": this.quatDelta(n, b, c); return;
      case "slice":
        if (n.id !== undefined) this.entityDelta(n, b, c); else this.sliceDelta(n, b, c);
        return;
      case "ptr": {
        const has = c !== null && c !== undefined;
        this.w.bool(has);
        if (!has) return;
        if (b === null || b === undefined) this.node(n.e, c); else this.valueDelta(n.e, b, c);
        return;
      }
      case "map": this.mapDelta(n, b, c); return;
      case "array": if (byElem(n)) { this.arrayDelta(n, b, c); return; } break;
    }
    if (n.dlo !== undefined && this.window(n, b, c)) return;
    this.node(n, c);
  }

  /**
   * a changed windowed scalar (wire version 4, wire-format.md "Windows"): the window bit and,
   * when the difference of the keys lies in the window, the difference (the first of the
   * message in its short form of dk low bits or the plain fixed coding, later ones Rice-coded
   * against the running mean with an escape after du ones); false when the caller writes the
   * value in full
   */
  private window(n: Node, b: any, c: any): boolean {
    let kb: number | bigint;
    try { kb = scalarKey(n, b); } catch (e) { if (e instanceof BitwireError) e.detail = "baseline: " + e.detail; throw e; }
    const kc = scalarKey(n, c);
    const lo = n.dlo as number, hi = n.dhi as number, wb = n.dbits as number, k0 = n.dk as number;
    let diff: number;
    if (typeof kb === "number" && typeof kc === "number" && Number.isSafeInteger(kb) && Number.isSafeInteger(kc)) {
      diff = kc - kb;
      if (diff < lo || diff > hi) { this.w.bool(false); return false; }
    } else {
      const d = BigInt.asIntN(64, BigInt(kc) - BigInt(kb));
      if (d < BigInt(lo) || d > BigInt(hi)) { this.w.bool(false); return false; }
      diff = Number(d);
    }
    const w = this.w;
    w.bool(true);
    const m = Math.abs(diff);
    const st = this.slot(n, 0);
    let fixed = true;
    if (k0 > 0) {
      const k = st.warm ? Math.min(riceK(st.mean), Math.max(0, wb - 2)) : k0;
      const u = st.warm ? (n.du as number) : 1;
      const qn = Math.floor(m / 2 ** k);
      if (qn < u) {
        ones(w, qn);
        w.bool(false);
        w.write(m % 2 ** k, k);
        if (m !== 0) w.bool(diff < 0);
        fixed = false;
      } else ones(w, u);
    }
    if (fixed) {
      if (wb > 53) w.writeBig(BigInt(diff) - BigInt(lo), wb); else w.write(diff - lo, wb);
    }
    st.mean = st.warm ? meanAdd(st.mean, m) : 16 * Math.min(m, 2 ** 20);
    st.warm = 1;
    return true;
  }

  /**
   * a changed quaternion against its baseline (wire version 4, wire-format.md "Quaternions in
   * deltas"): the mode, then three index differences in the Rice code with an Exp-Golomb
   * escape, when that is no longer than the absolute form; else the absolute form
   */
  quatDelta(n: QuatNode, b: any, c: any): void {
    const qq = qc(n), w = this.w;
    const pc = qq.pack(loadQuat(n, c));
    let pb: number[] | null = null;
    try { pb = qq.pack(loadQuat(n, b)); } catch (e) { if (!(e instanceof BitwireError)) throw e; } // absolute, as Go does for a baseline it cannot pack
    const st = this.slot(n, 32);
    const order = st.abs ? QUAT_AFTER_ABS : QUAT_ORDER;
    if (pb !== null) {
      const [rank, e] = quatDiffs(qq, pb, pc);
      const a0 = Math.abs(e[0]), a1 = Math.abs(e[1]), a2 = Math.abs(e[2]);
      const k = [riceK(st.mean), riceK(16 * Math.min(a0, 2 ** 20)), riceK(16 * Math.min(Math.floor((a0 + a1 + 1) / 2), 2 ** 20))];
      const u = [st.warm ? 5 : 3, 5, 5];
      const size = modeLen(order, rank) + riceEGLen(a0, k[0], u[0]) + riceEGLen(a1, k[1], u[1]) + riceEGLen(a2, k[2], u[2]);
      if (size <= 5 + 3 * qq.n) {
        writeMode(w, order, rank);
        for (let i = 0; i < 3; i++) writeRiceEG(w, e[i], k[i], u[i]);
        st.mean = meanAdd(st.mean, Math.floor((a0 + a1 + a2 + 1) / 3));
        st.abs = 0;
        st.warm = 1;
        return;
      }
    }
    writeMode(w, order, QUAT_ABSOLUTE);
    qq.write(w, pc);
    st.abs = 1;
  }

  /** a slice matched by index: the new length, the changed indexes among those both have and their deltas, then the new elements in full */
  sliceDelta(n: SliceNode, b: any[], c: any[]): void {
    b = b ?? []; c = c ?? [];
    this.writeLen(c.length, n.maxlen);
    const common = Math.min(b.length, c.length);
    const changed: number[] = [];
    for (let i = 0; i < common; i++) if (!same(n.e, b[i], c[i])) changed.push(i);
    writeIndexSet(this.w, changed, common, false);
    for (const i of changed) {
      try { this.valueDelta(n.e, b[i], c[i]); } catch (e) { throw wrap(e, `[${i}]`); }
    }
    for (let i = common; i < c.length; i++) {
      try { this.node(n.e, c[i]); } catch (e) { throw wrap(e, `[${i}]`); }
    }
  }

  /**
   * an entity set: the new length; the removed entities (baseline indexes), where new ones go
   * (new indexes, the count left out) and which survivors changed (survivor ordinals); each
   * changed survivor's delta without its id; then each new entity in full. Entities are matched
   * in one pass that assumes ids ascend (as unsigned 64-bit integers, as Go compares them):
   * any order is coded correctly, one out of order may go as removed and new
   */
  entityDelta(n: SliceNode, b: any[], c: any[]): void {
    b = b ?? []; c = c ?? [];
    const e = n.e;
    if (e.k !== "struct") throw new ErrInvalidValue("an entity set of " + e.k + " values");
    const t = e.t, skip = n.id as number, idf = t.fields[skip].name;
    this.writeLen(c.length, n.maxlen);
    const removed: number[] = [], added: number[] = [], changed: number[] = [], pairs: number[] = [];
    let i = 0, j = 0, surv = 0;
    while (i < b.length && j < c.length) {
      const ib = idKey(b[i][idf]), ic = idKey(c[j][idf]);
      if (ib === ic) {
        if (!same(e, b[i], c[j])) { changed.push(surv); pairs.push(i, j); }
        surv++; i++; j++;
      } else if (ib < ic) removed.push(i++);
      else added.push(j++);
    }
    while (i < b.length) removed.push(i++);
    while (j < c.length) added.push(j++);
    writeIndexSet(this.w, removed, b.length, false);
    writeIndexSet(this.w, added, c.length, true);
    writeIndexSet(this.w, changed, surv, false);
    for (let k = 0; k < pairs.length; k += 2) {
      try { this.structDelta(t, b[pairs[k]], c[pairs[k + 1]], skip); } catch (x) { throw wrap(x, `[${pairs[k + 1]}]`); }
    }
    for (const a of added) {
      try { this.node(e, c[a]); } catch (x) { throw wrap(x, `[${a}]`); }
    }
  }

  /**
   * a map: the removed keys (indexes into the baseline's sorted keys), the changed survivors
   * (survivor ordinals) and their value deltas, then the count of new entries and each new
   * key and value in full, in key order
   */
  mapDelta(n: MapNode, b: Map<any, any>, c: Map<any, any>): void {
    b = b ?? new Map(); c = c ?? new Map();
    if ((n.maxlen && c.size > n.maxlen) || (!n.maxlen && c.size > this.maxLen)) throw new ErrTooLong(`${c.size} entries`);
    const bk = sortedKeys(b);
    const removed: number[] = [], changed: number[] = [], surv: any[] = [];
    for (let i = 0; i < bk.length; i++) {
      const k = bk[i];
      if (!c.has(k)) { removed.push(i); continue; }
      if (!same(n.e, b.get(k), c.get(k))) changed.push(surv.length);
      surv.push(k);
    }
    writeIndexSet(this.w, removed, bk.length, false);
    writeIndexSet(this.w, changed, surv.length, false);
    for (const s of changed) {
      const k = surv[s];
      try { this.valueDelta(n.e, b.get(k), c.get(k)); } catch (e) { throw wrap(e, `[${k}]`); }
    }
    const added = sortedKeys(c).filter((k) => !b.has(k));
    for (const k of added) if (typeof k === "number" && Number.isNaN(k)) throw new ErrInvalidValue("NaN map key");
    writeBitlen(this.w, added.length, 5);
    for (const k of added) {
      try { this.node(n.key, k); } catch (e) { throw wrap(e, `{${k}}`); }
      try { this.node(n.e, c.get(k)); } catch (e) { throw wrap(e, `[${k}]`); }
    }
  }
}

/** an entity's id as Go compares ids: its integer as an unsigned 64-bit one */
function idKey(v: any): number | bigint {
  if (typeof v === "number" && v >= 0) return v;
  return BigInt.asUintN(64, BigInt(v));
}

// ---- equality after quantization ----

/**
 * whether a and b, values of n, encode the same (Go's eqNode, what a delta's changed bits say):
 * leaves by the key they are coded as (quantization indexes, fixed-point step counts, clamped
 * integers, float bits, text as UTF-8), containers element by element (nil and empty alike)
 */
export function same(n: Node, a: any, b: any): boolean {
  switch (n.k) {
    case "struct": {
      if (a === b) return true;
      for (const f of n.t.fields) if (!same(f.node, a[f.name], b[f.name])) return false;
      return true;
    }
    case "array": case "slice": {
      const x = (a ?? []) as any[], y = (b ?? []) as any[];
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) if (!same(n.e, x[i], y[i])) return false;
      return true;
    }
    case "ptr": {
      const na = a === null || a === undefined, nb = b === null || b === undefined;
      if (na || nb) return na && nb;
      return same(n.e, a, b);
    }
    case "map": {
      const x = (a ?? new Map()) as Map<any, any>, y = (b ?? new Map()) as Map<any, any>;
      if (x.size !== y.size) return false;
      for (const [k, v] of x) if (!y.has(k) || !same(n.e, v, y.get(k))) return false;
      return true;
    }
    case "bool": return !!a === !!b;
    case "string": return a === b || sameBytes(UTF8E.encode(a), UTF8E.encode(b));
    case "bytes": return sameBytes(a ?? EMPTY, b ?? EMPTY);
    case "time": return a.sec === b.sec && a.nsec === b.nsec;
  }
  if (Object.is(a, b)) return true; // the same bits code the same way
  try {
    switch (n.k) {
      case "float":
        if (n.f32) return f32Bits(a) === f32Bits(b);
        { const x = f64Bits(a), y = f64Bits(b); return x[0] === y[0] && x[1] === y[1]; }
      case "quat": {
        const qq = qc(n), x = qq.pack(loadQuat(n, a)), y = qq.pack(loadQuat(n, b));
        return x[0] === y[0] && x[1] === y[1] && x[2] === y[2] && x[3] === y[3];
      }
      case "q": return q(n).index(a, !!n.clamp) === q(n).index(b, !!n.clamp);
      case "fixed": return toFixed(n, a) === toFixed(n, b);
      case "range": return sameInt(scalarKey(n, a), scalarKey(n, b));
    }
    return sameInt(a, b); // bits, varint, bitlen: the integer itself
  } catch (e) {
    if (e instanceof BitwireError) return false; // a value without a key differs (and its delta reports why)
    throw e;
  }
}

const EMPTY = new Uint8Array(0);
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
/** integers held as numbers or bigints */
function sameInt(a: any, b: any): boolean { return typeof a === typeof b ? a === b : BigInt(a) === BigInt(b); }

// ---- the codes of deltas ----

function ones(w: BitWriter, n: number): void {
  for (; n >= 32; n -= 32) w.write(0xffffffff, 32);
  if (n > 0) w.write(2 ** n - 1, n);
}

/**
 * an index set: a sorted set of distinct indexes in [0, n): its count (bitlen, prefix width
 * 5; left out with countKnown), then, unless the count is 0 or n, a bitmask of n bits (0) or
 * Rice-coded gaps (1: a 5-bit parameter k, then each gap's quotient in unary and its k low
 * bits), whichever is shorter, the bitmask on a tie, the least k of least cost
 */
export /* internal */ function writeIndexSet(w: BitWriter, idx: number[], n: number, countKnown: boolean): void {
  const c = idx.length;
  if (!countKnown) writeBitlen(w, c, 5);
  if (c === 0 || c === n) return;
  let bestK = 0, useMask = n <= 5 + c;
  if (!useMask) {
    let best = Infinity;
    const kmax = Math.min(23, bitsRequired(n));
    for (let k = 0; k <= kmax; k++) {
      let cost = 0, prev = -1;
      for (const i of idx) { cost += Math.floor((i - prev - 1) / 2 ** k) + 1 + k; prev = i; }
      if (cost < best) { best = cost; bestK = k; }
    }
    useMask = n <= 5 + best;
  }
  if (useMask) {
    w.bool(false);
    let j = 0;
    for (let i = 0; i < n; i++) {
      const set = j < c && idx[j] === i;
      if (set) j++;
      w.bool(set);
    }
    return;
  }
  w.bool(true);
  w.write(bestK, 5);
  let prev = -1;
  for (const i of idx) {
    const g = i - prev - 1;
    ones(w, Math.floor(g / 2 ** bestK));
    w.bool(false);
    w.write(g % 2 ** bestK, bestK);
    prev = i;
  }
}

/** the size of a magnitude m (its sign bit included) in the Rice code with parameter k, unary limit u and an Exp-Golomb escape of order k + 1 */
function riceEGLen(m: number, k: number, u: number): number {
  const sign = m !== 0 ? 1 : 0;
  if (Math.floor(m / 2 ** k) < u) return Math.floor(m / 2 ** k) + 1 + k + sign;
  const j = k + 1;
  const l = bitsRequired(m - u * 2 ** k + 2 ** j);
  return u + 2 * l - j - 1 + sign;
}

/** a signed difference v in that code: q ones, a 0 and k low bits below the limit, else u ones and the Exp-Golomb code of m - u·2^k; then the sign of a nonzero v */
function writeRiceEG(w: BitWriter, v: number, k: number, u: number): void {
  const m = Math.abs(v), qn = Math.floor(m / 2 ** k);
  if (qn < u) {
    ones(w, qn);
    w.bool(false);
    w.write(m % 2 ** k, k);
  } else {
    const j = k + 1;
    const y = m - u * 2 ** k + 2 ** j;
    const l = bitsRequired(y);
    ones(w, u);
    ones(w, l - 1 - j);
    w.bool(false);
    w.write(y - 2 ** (l - 1), l - 1);
  }
  if (m !== 0) w.bool(v < 0);
}

/** the quaternion modes: the relative ones by rank (0..3), then absolute (4) */
const QUAT_ABSOLUTE = 4;
/** the mode at each code position (i ones then a 0; the last, four ones): the usual order, and the order after an absolute quaternion of the node */
const QUAT_ORDER = [0, 1, QUAT_ABSOLUTE, 2, 3], QUAT_AFTER_ABS = [QUAT_ABSOLUTE, 0, 1, 2, 3];
function modeLen(order: number[], mode: number): number { const i = order.indexOf(mode); return i === 4 ? 4 : i + 1; }
function writeMode(w: BitWriter, order: number[], mode: number): void {
  const i = order.indexOf(mode);
  ones(w, Math.min(i, 4));
  if (i < 4) w.bool(false);
}

/**
 * the mode (rank) and the three index differences of cur against base (both packed:
 * [m, a, b, c]): rank 0 keeps the dropped component; another is the rank of cur's dropped
 * component among the baseline's coded ones (larger magnitude |2i - steps| first, lower
 * component first on ties), against the baseline re-expressed with it dropped (quatRebase)
 */
function quatDiffs(qq: QuatCoder, pb: number[], pc: number[]): [number, number[]] {
  const mb = pb[0], mc = pc[0];
  if (mb === mc) return [0, [pc[1] - pb[1], pc[2] - pb[2], pc[3] - pb[3]]];
  const ob = QUAT_OTHERS[mb], steps = qq.steps;
  const dist = (i: number) => Math.abs(2 * i - steps);
  const at = ob.indexOf(mc), dm = dist(pb[at + 1]);
  let rank = 1;
  for (let k = 0; k < 3; k++) {
    if (k === at) continue;
    const d = dist(pb[k + 1]);
    if (d > dm || (d === dm && k < at)) rank++;
  }
  const bb = quatRebase(qq, pb, rank);
  return [rank, [pc[1] - bb[1], pc[2] - bb[2], pc[3] - bb[3]]];
}
