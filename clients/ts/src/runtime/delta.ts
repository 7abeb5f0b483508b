// ---- delta decoding ----
// DeltaDecoder: a delta applied to a baseline, with or without a model,
// including entity sets, maps and relative quaternions.

import { BitwireError, ErrMalformed, ErrOutOfRange, ErrTooLong, ErrUnexpectedEnd } from "./errors.js";
import { Mag, POW2, QUAT_OTHERS, QuatCoder, bitsRequired, readBitlen } from "./codings.js";
import { ArrayNode, MapNode, Node, QuatNode, SliceNode, StructPlan, byElem, code, emin, q, qc, wrap } from "./plan.js";
import { Decoder, loadQuat, seqTo, storeQuat } from "./decode.js";
import { sortedKeys } from "./encode.js";
import { meanAdd, riceK, scalarKey, storeKey, wrapAdd } from "./window.js";
import { Code, ModelTables, QUAT_CLASSES, modularHalf, modularRange } from "./model.js";

/**
 * the baseline (packed: [m, a, b, c]) of a relative quaternion of the given rank (0..3), as
 * [m_C, b_0, b_1, b_2]: rank 0 keeps its dropped component m_B and its indexes; rank r > 0
 * drops the baseline's component of rank r instead, re-expressing it in integers
 * (wire-format.md, "Quaternions in deltas")
 */
export /* internal */ function quatRebase(qq: QuatCoder, pb: number[], rank: number): number[] {
  if (rank === 0) return pb;
  const steps = qq.steps;
  const mb = pb[0];
  const all = [0, 0, 0, 0];
  const ob = QUAT_OTHERS[mb];
  let t = 2 * steps * steps;
  for (let k = 0; k < 3; k++) {
    all[ob[k]] = pb[k + 1];
    const sx = 2 * pb[k + 1] - steps;
    t -= sx * sx;
  }
  let root = t > 0 ? Math.floor(Math.sqrt(t)) : 0;
  while (root * root > t) root--;
  while ((root + 1) * (root + 1) <= t) root++;
  all[mb] = Math.min(Math.floor((root + steps + 1) / 2), steps);
  const dist = (i: number) => Math.abs(2 * i - steps);
  let mc = mb;
  for (const c of ob) {
    let rk = 1;
    for (const c2 of ob) if (c2 !== c && (dist(all[c2]) > dist(all[c]) || (dist(all[c2]) === dist(all[c]) && c2 < c))) rk++;
    if (rk === rank) mc = c;
  }
  if (2 * all[mc] < steps) for (let k = 0; k < 4; k++) all[k] = steps - all[k];
  const oc = QUAT_OTHERS[mc];
  return [mc, all[oc[0]], all[oc[1]], all[oc[2]]];
}

/**
 * a relative quaternion's mode by the count of leading one bits of its prefix (4: absolute, else
 * the rank of quatRebase), after a relative quaternion of the node or none, and after an absolute one
 */
const QUAT_MODES = [0, 1, 4, 2, 3], QUAT_MODES_AFTER_ABS = [4, 0, 1, 2, 3];

/** the state of a delta decode: Decoder plus the delta walk */
export class DeltaDecoder extends Decoder {
  /** the message's model, or null: without one, the codes that adapt within the message */
  m: ModelTables | null = null;
  /** a struct's delta against baseline b; skip is the id field of an entity (no changed bit) */
  structDelta(t: StructPlan, b: any, skip: number): any {
    if (++this.depth > this.maxDepth) throw new ErrMalformed("nesting deeper than " + this.maxDepth);
    if (this.m !== null || t.readDelta !== undefined) {
      const v = this.m !== null ? this.structDeltaModel(t, b, skip, this.m) : (t.readDelta as NonNullable<StructPlan["readDelta"]>)(this, b, skip);
      this.depth--;
      return v;
    }
    const o = t.make();
    const fs = t.fields;
    for (let i = 0; i < fs.length; i++) {
      const f = fs[i];
      try {
        const changed = i !== skip && this.r.bool();
        o[f.name] = changed ? this.valueDelta(f.node, b[f.name]) : b[f.name];
      } catch (e) { throw wrap(e, f.name); }
    }
    this.depth--;
    return o;
  }
  /** a changed array whose elements carry a window: a changed bit an element, then its delta */
  arrayDelta(n: ArrayNode, b: any[]): any[] {
    const o: any[] = new Array(n.count);
    for (let i = 0; i < n.count; i++) {
      try { o[i] = this.r.bool() ? this.valueDelta(n.e, b[i]) : b[i]; } catch (e) { throw wrap(e, `[${i}]`); }
    }
    return o;
  }
  valueDelta(n: Node, b: any): any {
    switch (n.k) {
      case "struct": return n.composite ? this.struct(n.t as StructPlan) : this.structDelta(n.t as StructPlan, b, -1);
      case "quat": return this.m !== null ? this.quatDeltaModel(n, b, this.m) : this.quatDelta(n, b);
      case "slice": return n.id !== undefined ? this.entityDelta(n, b) : this.sliceDelta(n, b);
      case "ptr": {
        if (!this.r.bool()) return null;
        return b === null || b === undefined ? this.node(n.e as Node) : this.valueDelta(n.e as Node, b);
      }
      case "map": return this.mapDelta(n, b);
      case "array": if (byElem(n)) return this.arrayDelta(n, b); break;
    }
    if (this.m !== null) {
      const t = this.m.nodes.get(n);
      if (t !== undefined) return this.scalarModel(n, b, this.m.codes[t]);
    }
    if (n.dlo !== undefined && this.r.bool()) {
      // wire version 4 (wire-format.md, "Windows"): a message's first
      // difference in a short form of dk low bits or the plain fixed
      // coding; later ones Rice-coded against the running mean, escaping
      // after du ones to the plain fixed coding
      const lo = n.dlo as number, hi = n.dhi as number, wb = n.dbits as number, k0 = n.dk as number;
      const st = this.slot(n, 0);
      const k = st.warm ? Math.min(riceK(st.mean), Math.max(0, wb - 2)) : k0;
      const u = st.warm ? (n.du as number) : 1;
      let q = 0;
      if (k0 > 0) while (q < u && this.r.bool()) q++;
      let diff: number;
      if (k0 > 0 && q < u) {
        const m = q * 2 ** k + this.r.read(k);
        diff = m !== 0 && this.r.bool() ? -m : m;
      } else {
        diff = Number(this.r.readBig(wb)) + lo;
        if (k0 > 0 && Math.floor(Math.abs(diff) / 2 ** k) < u) throw new ErrMalformed("escaped window difference that fits the short form");
      }
      if (diff < lo || diff > hi) throw new ErrMalformed(`window difference ${diff} outside ${lo}..${hi}`);
      const x = 16 * Math.min(Math.abs(diff), 2 ** 20);
      st.mean = st.warm ? meanAdd(st.mean, Math.abs(diff)) : x;
      st.warm = 1;
      let kb: number | bigint;
      try { kb = scalarKey(n, b); } catch (e) { if (e instanceof BitwireError) e.detail = "baseline: " + e.detail; throw e; }
      return storeKey(n, wrapAdd(n, kb, diff));
    }
    return this.node(n);
  }
  /**
   * a struct's delta with a model: one mask symbol per chunk of 8 fields (ESC: the chunk's
   * changed bits follow; a plain table: the changed bits alone), then the changed fields'
   * value deltas in field order
   */
  private structDeltaModel(t: StructPlan, b: any, skip: number, m: ModelTables): any {
    const r = this.r;
    const fs = t.fields, nf = fs.length;
    if (m.folded.has(t)) { // one quaternion field whose first table holds the changed bit: "unchanged" is its last symbol
      const f = fs[0], q = m.codes[m.nodes.get(f.node) as number];
      const o = t.make(), start = r.pos, s = q.read(r);
      if (s === q.lens.length - 1) o[f.name] = b[f.name];
      else try { o[f.name] = this.quatDeltaModel(f.node as QuatNode, b[f.name], m, s, start); } catch (e) { throw wrap(e, f.name); }
      return o;
    }
    const t0 = m.plans.get(t) as number;
    const ch: number[] = new Array(nf);
    for (let j = 0; j * 8 < nf; j++) {
      const k = Math.min(8, nf - 8 * j);
      const c = m.codes[t0 + j];
      const s = c.plain ? 0 : c.read(r);
      const mask = s === 0 ? r.read(k) : s - 1;
      for (let i = 0; i < k; i++) ch[8 * j + i] = (mask >>> i) & 1;
    }
    if (skip >= 0 && ch[skip] !== 0) throw new ErrMalformed(`the id field ${fs[skip].name} marked changed`);
    const o = t.make();
    for (let i = 0; i < nf; i++) {
      const f = fs[i];
      if (ch[i] === 0) { o[f.name] = b[f.name]; continue; }
      try { o[f.name] = this.valueDelta(f.node, b[f.name]); } catch (e) { throw wrap(e, f.name); }
    }
    return o;
  }
  /** the magnitude and sign of the last token read */
  private tm: Mag = 0;
  private tneg = false;
  /**
   * reads a token of table c into tm and tneg; false for ESC. Symbol s + 1 is magnitude slot
   * s: m itself below 4, else 2 or 3 (the top two bits) times 2^x and x low bits, x = s/2 - 1
   */
  private token(c: Code): boolean {
    const sym = c.read(this.r);
    if (sym === 0) return false;
    this.tokenTail(sym - 1);
    return true;
  }
  /** reads what follows the symbol of a token of slot s (its low bits and sign) into tm and tneg */
  private tokenTail(s: number): void {
    const r = this.r;
    this.tm = 0; this.tneg = false;
    if (s === 0) return;
    if (s < 4) this.tm = s;
    else {
      const x = (s >> 1) - 1;
      this.tm = x <= 50 ? (2 + (s & 1)) * 2 ** x + r.read(x) : (BigInt(2 + (s & 1)) << BigInt(x)) | r.readBig(x);
    }
    this.tneg = r.bool();
  }
  /** a changed windowed (window table) or bounded (modular table) scalar with a model */
  private scalarModel(n: Node, b: any, c: Code): any {
    if (!this.token(c)) return this.node(n); // ESC: the value in full
    const m = this.tm, neg = this.tneg;
    let kb: number | bigint;
    try { kb = scalarKey(n, b); } catch (e) { if (e instanceof BitwireError) e.detail = "baseline: " + e.detail; throw e; }
    if (n.dlo !== undefined) {
      const lo = n.dlo, hi = n.dhi as number;
      if (typeof m === "bigint") {
        const d = neg ? -m : m;
        if (m >= 1n << 63n || d < BigInt(lo) || d > BigInt(hi)) throw new ErrMalformed(`window difference ${d} outside ${lo}..${hi}`);
        return storeKey(n, wrapAdd(n, kb, typeof kb === "bigint" ? d : Number(d)));
      }
      const d = neg ? -m : m;
      if (d < lo || d > hi) throw new ErrMalformed(`window difference ${d} outside ${lo}..${hi}`);
      return storeKey(n, wrapAdd(n, kb, d));
    }
    // modular: u = (u_base ± m) mod R over the keys kmin..kmin+rm
    const [kmin, rm] = n._mr ??= modularRange(n) as [bigint, bigint];
    if (typeof kb === "number" && rm < 9007199254740992n && typeof m === "number") {
      const rmn = Number(rm), ub = kb - Number(kmin);
      if (!(ub >= 0 && ub <= rmn)) throw new ErrOutOfRange(`baseline: key ${kb} outside the field's range`);
      const h = Math.floor(rmn / 2) + (rmn % 2);
      if (m === 0 || (!neg && m > h) || (neg && m > rmn - h)) throw new ErrMalformed(`modular difference ${neg ? -m : m}`);
      const u = !neg ? (m > rmn - ub ? m - (rmn - ub) - 1 : ub + m) : (m > ub ? rmn - (m - ub) + 1 : ub - m);
      return storeKey(n, u + Number(kmin));
    }
    const ub = BigInt.asUintN(64, BigInt(kb) - kmin), mb = BigInt(m);
    if (ub > rm) throw new ErrOutOfRange(`baseline: key ${kb} outside the field's range`);
    const h = modularHalf(rm);
    if (mb === 0n || (!neg && mb > h) || (neg && mb > rm - h)) throw new ErrMalformed(`modular difference ${neg ? -mb : mb}`);
    const u = !neg ? (mb > rm - ub ? mb - (rm - ub) - 1n : ub + mb) : (mb > ub ? rm - (mb - ub) + 1n : ub - mb);
    const k = BigInt.asUintN(64, u + kmin);
    const key = n.signed ? BigInt.asIntN(64, k) : k;
    return storeKey(n, n.big ? key : Number(key));
  }
  /**
   * a changed quaternion with a model: the first table's symbol (0: absolute; else the rank and the first
   * difference's slot), the first difference's tail, then the other two differences by context
   */
  private quatDeltaModel(n: QuatNode, b: any, m: ModelTables, pre = -1, preStart = 0): any {
    const r = this.r;
    const t0 = m.nodes.get(n) as number;
    const start = pre >= 0 ? preStart : r.pos;
    const first = pre >= 0 ? pre : m.codes[t0].read(r); // pre: read by a folded struct
    if (first === 0) return this.node(n);
    const qq = qc(n);
    const slots = qq.n <= 1 ? qq.n + 1 : 2 * qq.n; // the slots of magnitudes of up to n bits
    if (first > 4 * slots) throw new ErrMalformed("a folded struct's unchanged symbol where a quaternion's form belongs");
    const rank = Math.floor((first - 1) / slots);
    this.tokenTail((first - 1) % slots);
    const e0 = this.tneg ? -(this.tm as number) : this.tm as number;
    let pb: number[];
    try { pb = qq.pack(loadQuat(n, b)); } catch (e) { if (e instanceof BitwireError) e.detail = "baseline: " + e.detail; throw e; }
    const bb = quatRebase(qq, pb, rank);
    const e = [0, 0, 0];
    const p = [bb[0], 0, 0, 0];
    for (let k = 0; k < 3; k++) {
      const tab = k === 1 ? Math.min(bitsRequired(Math.abs(e[0])), QUAT_CLASSES - 1)
        : QUAT_CLASSES + Math.min(bitsRequired(Math.floor((Math.abs(e[0]) + Math.abs(e[1]) + 1) / 2)), QUAT_CLASSES - 1);
      let v: number;
      if (k === 0) v = e0;
      else if (this.token(m.codes[t0 + 1 + tab])) v = this.tneg ? -(this.tm as number) : this.tm as number;
      else {
        const mag = r.read(qq.n);
        v = mag !== 0 && r.bool() ? -mag : mag;
      }
      e[k] = v;
      const c = bb[k + 1] + v;
      if (c < 0 || c > qq.steps) throw new ErrMalformed("relative quaternion component out of range");
      p[k + 1] = c;
    }
    if (r.pos - start > m.codes[t0].lens[0] + qq.bits) throw new ErrMalformed("relative quaternion longer than the absolute one");
    return storeQuat(n, qq.unpack(p));
  }
  /** the adaptive state of node n in this message (wire version 4): the running mean, whether the last quaternion was absolute, whether a value (a relative quaternion, a window's difference) was read */
  private slots = new Map<Node, { mean: number; abs: number; warm: number }>();
  private slot(n: Node, start: number): { mean: number; abs: number; warm: number } {
    let st = this.slots.get(n);
    if (st === undefined) { st = { mean: start, abs: 0, warm: 0 }; this.slots.set(n, st); }
    return st;
  }
  /** a signed difference in the Rice code with parameter k, unary limit u and an Exp-Golomb escape of order k + 1 */
  private riceEG(k: number, u: number): number {
    const r = this.r;
    let q = 0;
    while (q < u && r.bool()) q++;
    let m: number;
    if (q < u) m = q * POW2[k] + r.read(k);
    else {
      let ones = 0;
      while (r.bool()) if (++ones > 40) throw new ErrMalformed("Exp-Golomb code too long");
      const j = k + 1;
      const y = 2 ** (ones + j) + Number(r.readBig(ones + j));
      m = y - 2 ** j + u * 2 ** k;
      if (!Number.isSafeInteger(m)) throw new ErrMalformed("Exp-Golomb value too large");
    }
    if (m === 0) return 0;
    return r.bool() ? -m : m;
  }
  /** a relative quaternion (wire version 4, wire-format.md "Quaternions in deltas"): also called by the generated readDelta functions */
  quatDelta(n: QuatNode, b: any): any {
    const qq = qc(n);
    const r = this.r;
    const st = this.slot(n, 32);
    const start = r.pos;
    let pos = 0;
    while (pos < 4 && r.bool()) pos++;
    const mode = (st.abs ? QUAT_MODES_AFTER_ABS : QUAT_MODES)[pos];
    if (mode === 4) {
      st.abs = 1;
      return this.node(n);
    }
    const pb = qq.pack(loadQuat(n, b));
    const steps = qq.steps, nb = qq.n;
    const bb = quatRebase(qq, pb, mode);
    const e = [0, 0, 0];
    const p = [bb[0], 0, 0, 0];
    for (let k = 0; k < 3; k++) {
      const kk = k === 0 ? riceK(st.mean) : k === 1 ? riceK(16 * Math.min(Math.abs(e[0]), 2 ** 20))
        : riceK(16 * Math.min(Math.floor((Math.abs(e[0]) + Math.abs(e[1]) + 1) / 2), 2 ** 20));
      e[k] = this.riceEG(kk, k === 0 && !st.warm ? 3 : 5);
      const v = bb[k + 1] + e[k];
      if (v < 0 || v > steps) throw new ErrMalformed("relative quaternion component out of range");
      p[k + 1] = v;
    }
    if (r.pos - start > 3 + qq.bits) throw new ErrMalformed("relative quaternion longer than the absolute one");
    st.mean = meanAdd(st.mean, Math.floor((Math.abs(e[0]) + Math.abs(e[1]) + Math.abs(e[2]) + 1) / 3));
    st.abs = 0;
    st.warm = 1;
    return storeQuat(n, qq.unpack(p));
  }
  indexSet(n: number, count: number): number[] {
    const r = this.r;
    if (count < 0) {
      const c = readBitlen(r, 5);
      if (typeof c !== "number" || c > n) throw new ErrMalformed(`index set of ${c} in ${n}`);
      count = c;
    }
    if (count === n) return seqTo(n);
    if (count === 0) return [];
    const idx: number[] = [];
    if (!r.bool()) {
      if (n > r.remaining()) throw new ErrUnexpectedEnd();
      for (let i = 0; i < n; i++) {
        if (r.bool()) {
          if (idx.length === count) throw new ErrMalformed(`bitmask holds more than ${count} indexes`);
          idx.push(i);
        }
      }
      if (idx.length !== count) throw new ErrMalformed(`bitmask holds ${idx.length} indexes, not ${count}`);
      return idx;
    }
    const k = r.read(5);
    if (k >= 24) throw new ErrMalformed(`Rice parameter ${k}`);
    let prev = -1;
    for (let j = 0; j < count; j++) {
      let qn = 0;
      while (r.bool()) {
        if (++qn > n) throw new ErrMalformed(`index gap past ${n}`);
      }
      const i = prev + 1 + qn * POW2[k] + r.read(k);
      if (i >= n) throw new ErrMalformed(`index ${i} past ${n}`);
      idx.push(i);
      prev = i;
    }
    return idx;
  }
  sliceDelta(n: SliceNode, b: any[]): any[] {
    b = b ?? [];
    const l = this.readLen(n, 0);
    const common = Math.min(b.length, l);
    const em = emin(n);
    const added = l - common;
    if (added > 0 && em > 0 && added > Math.floor(this.r.remaining() / em)) throw new ErrUnexpectedEnd(`${added} new elements need more input than remains`);
    if (added > 0 && em === 0) this.r.chargeZero(added);
    const changed = this.indexSet(common, -1);
    if (l === 0) return [];
    const out = new Array(l);
    let j = 0;
    for (let i = 0; i < common; i++) {
      if (j < changed.length && changed[j] === i) {
        j++;
        try { out[i] = this.valueDelta(n.e, b[i]); } catch (e) { throw wrap(e, `[${i}]`); }
      } else out[i] = b[i];
    }
    for (let i = common; i < l; i++) {
      try { out[i] = this.node(n.e); } catch (e) { throw wrap(e, `[${i}]`); }
    }
    return out;
  }
  entityDelta(n: SliceNode, b: any[]): any[] {
    b = b ?? [];
    const l = this.readLen(n, 0);
    const removed = this.indexSet(b.length, -1);
    const surv = b.length - removed.length;
    const nAdded = l - surv;
    if (nAdded < 0) throw new ErrMalformed(`${l} entities after removing ${removed.length} of ${b.length}`);
    if (nAdded > 0 && nAdded > Math.floor(this.r.remaining() / Math.max(1, emin(n)))) throw new ErrUnexpectedEnd(`${nAdded} new entities need more input than remains`);
    const added = this.indexSet(l, nAdded);
    const changed = this.indexSet(surv, -1);
    if (l === 0) return [];
    const e = n.e;
    if (e.k !== "struct") throw new ErrMalformed("an entity set of " + e.k + " values");
    const t = e.t;
    if (removed.length === 0 && added.length === 0) {
      // the common tick, no entity gone or new: the baseline's entities in place (a copy of
      // the array at once), the changed ones' deltas in order, as the walk below would
      const out = b.slice(), id = n.id ?? -1;
      for (const j of changed) {
        try { out[j] = this.structDelta(t, b[j], id); } catch (e) { throw wrap(e, `[${j}]`); }
      }
      return out;
    }
    const out = new Array(l);
    let bi = 0, ai = 0, ri = 0, ci = 0, k = 0;
    for (let j = 0; j < l;) {
      if (ai < added.length && added[ai] === j) { ai++; j++; continue; }
      if (ri < removed.length && removed[ri] === bi) { ri++; bi++; continue; }
      if (bi >= b.length) throw new ErrMalformed("entity set survivors run past the baseline");
      if (ci < changed.length && changed[ci] === k) {
        ci++;
        try { out[j] = this.structDelta(t, b[bi], n.id ?? -1); } catch (e) { throw wrap(e, `[${j}]`); }
      } else out[j] = b[bi];
      j++; bi++; k++;
    }
    for (const j of added) {
      try { out[j] = this.node(n.e); } catch (e) { throw wrap(e, `[${j}]`); }
    }
    return out;
  }
  mapDelta(n: MapNode, b: Map<any, any>): Map<any, any> {
    b = b ?? new Map();
    const bk = sortedKeys(b);
    const removed = this.indexSet(bk.length, -1);
    const surv = bk.length - removed.length;
    const changed = this.indexSet(surv, -1);
    const m = new Map<any, any>();
    let k = 0, ci = 0, ri = 0;
    for (let i = 0; i < bk.length; i++) {
      if (ri < removed.length && removed[ri] === i) { ri++; continue; }
      if (ci < changed.length && changed[ci] === k) {
        ci++;
        try { m.set(bk[i], this.valueDelta(n.e, b.get(bk[i]))); } catch (e) { throw wrap(e, `[${bk[i]}]`); }
      } else m.set(bk[i], b.get(bk[i]));
      k++;
    }
    const cnt = readBitlen(this.r, 5);
    const em = Math.max(1, emin(n));
    if (typeof cnt !== "number" || (cnt > 0 && cnt > Math.floor(this.r.remaining() / em))) throw new ErrUnexpectedEnd(`${cnt} new entries need more input than remains`);
    const total = surv + cnt;
    if ((n.maxlen && total > n.maxlen) || (!n.maxlen && total > this.maxLen)) throw new ErrTooLong(`${total} entries`);
    this.entries(n, m, cnt);
    if (m.size !== total) throw new ErrMalformed("duplicate map key");
    return m;
  }
}
