// ---- decoding ----
// The walker of full messages, reading: Decoder, and the value helpers
// (floats from bits, quaternion and fixed-point values) both walkers share.

import { BitwireError, ErrInvalidValue, ErrMalformed, ErrOutOfRange, ErrTooLong, ErrUnexpectedEnd } from "./errors.js";
import { BitReader } from "./stream.js";
import { Mag, QuatCoder, Quantizer, bitlenBits, bitsRequired, highBit, magBig, POW2, readBitlen, readMag, readVarint, roundHalfAway, unzigzag } from "./codings.js";
import { ArrayNode, C_BOOL, C_Q, C_STRUCT, FixedNode, IntNode, MAX_DEPTH, MAX_LEN, MapNode, Node, QNode, groupMember, QuatNode, SliceNode, StructNode, StructPlan, code, emin, groupable, isSigned, prefixWidth, q, qc, rangeWidth, wrap } from "./plan.js";
import { keyBefore } from "./encode.js";

/** decoder state of one message: the "any negative" flag */
export class Decoder {
  r: BitReader;
  neg = false; flagged = false; sawNeg = false; depth = 0;
  maxDepth = MAX_DEPTH; maxLen = MAX_LEN;
  constructor(r: BitReader, t?: StructPlan) {
    this.r = r;
    if (t?.limits) { this.maxDepth = t.limits.maxDepth; this.maxLen = t.limits.maxLen; }
  }
  begin(): void { this.neg = false; this.flagged = false; this.sawNeg = false; this.depth = 0; }
  signFlag(): void {
    if (!this.flagged) { this.neg = this.r.bool(); this.flagged = true; }
  }
  end(t: StructPlan): void {
    if (this.neg && !this.sawNeg) throw new ErrMalformed("sign flag set on a message without negative values").within(t.name);
  }
  readLen(n: Node, min: number): number {
    let l: number;
    if (n.maxlen) {
      l = this.r.read(bitsRequired(n.maxlen));
      if (l > n.maxlen) throw new ErrTooLong(`length ${l} over ${n.maxlen}`);
    } else {
      const v = readBitlen(this.r, 5);
      if (typeof v !== "number" || v > this.maxLen) throw new ErrTooLong(`length ${v} over ${this.maxLen}`);
      l = v;
    }
    if (min > 0 && l > Math.floor(this.r.remaining() / min)) throw new ErrUnexpectedEnd(`length ${l} against the input left`);
    return l;
  }
  /** one individually coded bitlen/fixed value: [negative, magnitude] */
  readInt(n: IntNode | FixedNode): [boolean, Mag] {
    let neg = false;
    if (isSigned(n)) {
      this.signFlag();
      if (this.neg) neg = this.r.bool();
    }
    return [neg, readBitlen(this.r, prefixWidth(n))];
  }
  /** turns a sign and magnitude into the field's value */
  signMag(n: IntNode | FixedNode, neg: boolean, mag: Mag): any {
    if (neg) {
      if (mag === 0) throw new ErrMalformed("negative zero");
      this.sawNeg = true;
    }
    if (n.k === "fixed") {
      if (typeof mag === "bigint") {
        if (neg ? mag > 2n ** 63n : mag > 2n ** 63n - 1n) throw new ErrOutOfRange("fixed-point step count");
        const ib = neg ? -mag : mag;
        if (!fixedExactBig(n, ib)) throw new ErrOutOfRange("fixed-point step count does not survive its float type");
        return fromFixed(n, Number(ib));
      }
      const i = neg ? -mag : mag;
      if (!fixedExact(n, i)) throw new ErrOutOfRange("fixed-point step count does not survive its float type");
      return fromFixed(n, i);
    }
    const size = n.size as number;
    if (typeof mag === "number" && size <= 32) {
      // the common case, in plain numbers: a magnitude below 2^53 of a narrow type
      if (n.signed) {
        const lim = POW2[size - 1];
        if (neg ? mag > lim : mag > lim - 1) throw new ErrOutOfRange(`magnitude ${mag} for ${size}-bit integer`);
        return neg ? -mag : mag;
      }
      if (neg) throw new ErrMalformed("sign on an unsigned value");
      if (mag >= POW2[size]) throw new ErrOutOfRange(`${mag} for ${size}-bit integer`);
      return mag;
    }
    if (n.signed) {
      const lim = 2n ** BigInt(size - 1);
      const m = magBig(mag);
      if (neg ? m > lim : m > lim - 1n) throw new ErrOutOfRange(`magnitude ${m} for ${size}-bit integer`);
      if (n.big) return neg ? -m : m;
      return neg ? -(mag as number) : (mag as number);
    }
    if (neg) throw new ErrMalformed("sign on an unsigned value");
    if (size < 64 && magBig(mag) >= 2n ** BigInt(size)) throw new ErrOutOfRange(`${mag} for ${size}-bit integer`);
    return n.big ? magBig(mag) : Number(mag);
  }

  /**
   * one struct deeper: past maxDepth is ErrMalformed. struct's check, which generated read
   * functions make themselves around a nested struct's read function that they call by name
   * (then leaving with depth--)
   */
  enter(): void {
    if (++this.depth > this.maxDepth) throw new ErrMalformed("nesting deeper than " + this.maxDepth);
  }

  struct(t: StructPlan, into?: any): any {
    this.enter();
    if (into === undefined && t.read !== undefined) {
      const v = t.read(this);
      this.depth--;
      return v;
    }
    const o = into ?? t.make();
    const fs = t.fields;
    let i = 0;
    // one try for the whole struct: the failing field is fs[i]
    try {
      for (; i < fs.length; i++) {
        const f = fs[i];
        if (f.grp) {
          if (f.grp.members[0] === i) this.group(fs.map(x => x.node), f.grp.members, f.grp.width, f.grp.signed, (j, v) => { o[fs[j].name] = v; }, (j) => fs[j].name);
          continue;
        }
        o[f.name] = this.node(f.node);
      }
    } catch (e) { throw fs[i].grp ? e : wrap(e, fs[i].name); }
    this.depth--;
    return o;
  }

  /** the error of field i of t, as struct reports it: for the generated read functions */
  fieldError(e: unknown, t: StructPlan, i: number): unknown { return wrap(e, t.fields[i].name); }

  /**
   * a q value in full with the quantizer of its node (quantizer(n); f32: a float32 field): node's
   * reading of it, which the generated read functions call with a quantizer they hold, so that
   * no node is looked at
   */
  qValue(qq: Quantizer, f32: boolean): number {
    const i = this.r.read(qq.bits);
    if (i > qq.steps) throw new ErrOutOfRange(`quantization index ${i} over ${qq.steps}`);
    const v = qq.value(i);
    return f32 ? Math.fround(v) : v;
  }

  /** an unsigned bitlen integer in full: node's reading of it, also called by the generated read functions */
  bitlenValue(n: IntNode): any { return this.signMag(n, false, readBitlen(this.r, n.n)); }

  /** a quaternion in full with the coder of its node n (quatCoder(n)): node's reading of it, also called by the generated read functions */
  quatValue(n: QuatNode, c: QuatCoder): any { return storeQuat(n, c.readUnpacked(this.r)); }

  /** a bitlen group: members are indexes into nodes */
  group(nodes: Node[], members: number[], width: number, signed: boolean, set: (j: number, v: any) => void, seg: (j: number) => string): void {
    const count = members.length;
    if (count === 0) return;
    if (count === 1) {
      const n = groupMember(nodes[members[0]]);
      try { const [neg, mag] = this.readInt(n); set(members[0], this.signMag(n, neg, mag)); } catch (e) { throw wrap(e, seg(members[0])); }
      return;
    }
    if (signed) this.signFlag();
    const shared = this.r.bool();
    let maxHigh = 0, indiv = 0;
    if (!shared) {
      for (const j of members) {
        const n = groupMember(nodes[j]);
        try {
          const [neg, mag] = this.readInt(n);
          set(j, this.signMag(n, neg, mag));
          indiv += bitlenBits(mag, prefixWidth(n));
          maxHigh = Math.max(maxHigh, highBit(mag));
        } catch (e) { throw wrap(e, seg(j)); }
      }
      if (width + count * (maxHigh + 1) < indiv) throw new ErrMalformed("group coded one by one where a shared length is shorter");
      return;
    }
    const h = this.r.read(width);
    for (const j of members) {
      const n = groupMember(nodes[j]);
      try {
        let neg = false;
        if (this.neg && isSigned(n)) neg = this.r.bool();
        const mag = readMag(this.r, h + 1);
        set(j, this.signMag(n, neg, mag));
        indiv += bitlenBits(mag, prefixWidth(n));
        maxHigh = Math.max(maxHigh, highBit(mag));
      } catch (e) { throw wrap(e, seg(j)); }
    }
    if (maxHigh !== h || width + count * (maxHigh + 1) >= indiv) throw new ErrMalformed("shared-length group that is not the shortest coding");
  }

  elems(n: ArrayNode | SliceNode, count: number): any[] {
    const el = n.e;
    const out: any[] = new Array(count);
    if (groupable(el)) {
      this.group(new Array(count).fill(el), seqTo(count), prefixWidth(el), isSigned(el), (j, v) => { out[j] = v; }, (j) => `[${j}]`);
      return out;
    }
    if (el.k === "struct") { // the common case: struct elements, read as node reads them, without its dispatch
      const t = el.t;
      for (let i = 0; i < count; i++) {
        try { out[i] = this.struct(t); } catch (e) { throw wrap(e, `[${i}]`); }
      }
      return out;
    }
    for (let i = 0; i < count; i++) {
      try { out[i] = this.node(el); } catch (e) { throw wrap(e, `[${i}]`); }
    }
    return out;
  }

  /** one value in full (nested values are always new: decoded values may share parts with baselines) */
  node(n: Node): any {
    const r = this.r, kind = n.k;
    // the commonest leaves first, without the general switch
    const c = n._c ?? code(n);
    // (the casts: the cached code _c tells the node's kind, as k would)
    if (c === C_Q) return this.qValue(n._q ?? q(n as QNode), n.f32 === true);
    if (c === C_BOOL) return r.read(1) === 1;
    if (c === C_STRUCT) return this.struct((n as StructNode).t);
    switch (n.k) {
      case "bool": return r.bool();
      case "bits": {
        const w = n.n as number;
        if (!n.big) {
          const v = r.read(w);
          return n.signed && w > 0 && v >= POW2[w - 1] ? v - POW2[w] : v;
        }
        const v = r.readBig(w);
        return n.signed ? BigInt.asIntN(w, v) : v;
      }
      case "range": {
        const w = rangeWidth(n);
        if (!n.big && w > 53) {
          // bounds within ±(2^53-1) but more than 2^53 values: the offset in a bigint
          const off = r.readBig(w);
          if (off > BigInt(n.max as number) - BigInt(n.min as number)) throw new ErrOutOfRange(`offset ${off} over the range`);
          return Number(BigInt(n.min as number) + off);
        }
        if (!n.big) {
          const off = r.read(w);
          if (off > (n.max as number) - (n.min as number)) throw new ErrOutOfRange(`offset ${off} over the range`);
          return (n.min as number) + off;
        }
        const off = r.readBig(w);
        const span = BigInt.asUintN(64, (n.max as bigint) - (n.min as bigint));
        if (off > span) throw new ErrOutOfRange(`offset ${off} over the range`);
        const v = (n.min as bigint) + off;
        return n.signed ? BigInt.asIntN(64, v) : BigInt.asUintN(64, v);
      }
      case "q": return this.qValue(q(n), n.f32 === true);
      case "float": return n.f32 ? f32FromBits(r.read(32)) : f64FromBits(r.read(32), r.read(32));
      case "bitlen":
        if (!n.signed) return this.bitlenValue(n); // no sign, no pair
      // fall through
      case "fixed": { const [neg, mag] = this.readInt(n); return this.signMag(n, neg, mag); }
      case "varint": {
        const u = readVarint(r, n.n);
        const size = n.size;
        if (n.signed) {
          const v = unzigzag(u);
          if (size < 64 && BigInt.asIntN(size, v) !== v) throw new ErrOutOfRange(`${v} for ${size}-bit integer`);
          return n.big ? v : Number(v);
        }
        if (size < 64 && u >= 2n ** BigInt(size)) throw new ErrOutOfRange(`${u} for ${size}-bit integer`);
        return n.big ? u : Number(u);
      }
      case "string": {
        const l = this.readLen(n, 8);
        return UTF8.decode(readBytes(r, l));
      }
      case "bytes": {
        const l = this.readLen(n, 8);
        return readBytes(r, l);
      }
      case "quat": return this.quatValue(n, qc(n));
      case "time": {
        const z = readBitlen(r, 6);
        const ns = r.read(30);
        if (ns >= 1e9) throw new ErrOutOfRange(`${ns} nanoseconds`);
        return { sec: unzigzag(magBig(z)), nsec: ns };
      }
      case "struct": return this.struct(n.t);
      case "array": return this.elems(n, n.count);
      case "slice": {
        const em = emin(n);
        const l = this.readLen(n, em);
        if (em === 0) this.r.chargeZero(l);
        return l === 0 ? [] : this.elems(n, l);
      }
      case "ptr": return r.bool() ? this.node(n.e) : null;
      case "map": {
        const l = this.readLen(n, emin(n));
        const m = new Map<any, any>();
        this.entries(n, m, l);
        if (m.size !== l) throw new ErrMalformed("duplicate map key");
        return m;
      }
    }
    throw new ErrMalformed("unknown coding " + kind);
  }
  /**
   * count entries into m. The keys must come in strictly ascending order and must not be in
   * m already: an out-of-order or repeated key is ErrMalformed as soon as it is read.
   */
  entries(n: MapNode, m: Map<any, any>, count: number): void {
    const check = m.size > 0;
    let prev: any;
    for (let i = 0; i < count; i++) {
      let k: any;
      try {
        const kn = n.key;
        if (kn.k === "string") {
          try { k = UTF8_STRICT.decode(readBytes(this.r, this.readLen(kn, 8))); } catch (e) {
            if (e instanceof BitwireError) throw e;
            throw new ErrInvalidValue("map key not valid UTF-8");
          }
        } else k = this.node(kn);
        if (typeof k === "number" && Number.isNaN(k)) throw new ErrInvalidValue("NaN map key");
        if (i > 0 && !keyBefore(prev, k)) throw new ErrMalformed(`map key ${k} after ${prev}: keys must be in ascending order, each once`);
        if (check && m.has(k)) throw new ErrMalformed(`duplicate map key ${k}`);
      } catch (e) { throw wrap(e, `{#${i}}`); }
      prev = k;
      try { m.set(k, this.node(n.e)); } catch (e) { throw wrap(e, `[${k}]`); }
    }
  }
}

const UTF8 = new TextDecoder();
/** decodes map keys: one that is not valid UTF-8 is refused, as in Go (a replaced key would order and collide differently) */
const UTF8_STRICT = new TextDecoder("utf-8", { fatal: true });
export /* internal */ const UTF8E = new TextEncoder();
function readBytes(r: BitReader, l: number): Uint8Array {
  if (8 * l > r.remaining()) throw new ErrUnexpectedEnd();
  const out = new Uint8Array(l);
  for (let i = 0; i < l; i++) out[i] = r.read(8);
  return out;
}
const F = new DataView(new ArrayBuffer(8));
function f32FromBits(u: number): number { F.setUint32(0, u, true); return F.getFloat32(0, true); }
function f64FromBits(lo: number, hi: number): number { F.setUint32(0, lo, true); F.setUint32(4, hi, true); return F.getFloat64(0, true); }
export /* internal */ function f32Bits(v: number): number { F.setFloat32(0, v, true); return F.getUint32(0, true); }
export /* internal */ function f64Bits(v: number): [number, number] { F.setFloat64(0, v, true); return [F.getUint32(0, true), F.getUint32(4, true)]; }

/** the value of a quaternion node from its components v (a fresh array, which an array value becomes) */
export /* internal */ function storeQuat(n: QuatNode, v: number[]): any {
  if (!n.names) {
    if (n.f32) for (let i = 0; i < 4; i++) v[i] = Math.fround(v[i]);
    return v;
  }
  const f = n.f32 ? Math.fround : (x: number) => x;
  const o: any = n.t ? n.t.make() : {};
  for (let i = 0; i < 4; i++) o[n.names[i]] = f(v[i]);
  return o;
}
export /* internal */ function loadQuat(n: QuatNode, v: any): number[] {
  if (!n.names) return [v[0], v[1], v[2], v[3]];
  return [v[n.names[0]], v[n.names[1]], v[n.names[2]], v[n.names[3]]];
}

export /* internal */ function fromFixed(n: FixedNode, i: number): number {
  const v = i * n.prec;
  return n.f32 ? Math.fround(v) : v;
}
/** a step count (below 2^53) that survives the trip through the field's float type;
 * below 2^22 (float32) or 2^50 steps every count does while i·prec stays finite and normal */
export /* internal */ function fixedExact(n: FixedNode, i: number): boolean {
  const p = n.prec;
  const lim = n.f32 ? 2 ** 22 : 2 ** 50;
  if (i > -lim && i < lim && p >= (n.f32 ? 2 ** -126 : 2 ** -1022) && p < (n.f32 ? 1e30 : 1e290)) return true;
  const back = roundHalfAway(fromFixed(n, i) / p);
  return back > -(2 ** 63) && back < 2 ** 63 && back === i;
}
/** fixedExact for a step count beyond 2^53 */
export /* internal */ function fixedExactBig(n: FixedNode, i: bigint): boolean {
  const back = roundHalfAway(fromFixed(n, Number(i)) / n.prec);
  return back > -(2 ** 63) && back < 2 ** 63 && BigInt(back) === i;
}
export /* internal */ function seqTo(n: number): number[] { const a = new Array(n); for (let i = 0; i < n; i++) a[i] = i; return a; }
export /* internal */ function toFixed(n: FixedNode, v: number): number {
  if (v - v !== 0) throw new ErrInvalidValue("not a finite number");
  const x = roundHalfAway(v / n.prec);
  if (!(x > -(2 ** 63) && x < 2 ** 63)) throw new ErrOutOfRange("fixed-point step count over 2^63");
  return x;
}
