// ---- encoding ----
// The walker of full messages, writing: Encoder, and the checks and map key
// order the encoder and the decoders share.

import { ErrInvalidValue, ErrMalformed, ErrOutOfRange, ErrTooLong } from "./errors.js";
import { BitWriter, P53 } from "./stream.js";
import { Mag, bitlenBits, bitsRequired, highBit, normMag, writeBitlen, writeMag, writeVarint, zigzag } from "./codings.js";
import { ArrayNode, FixedNode, IntNode, MAX_DEPTH, MAX_LEN, Node, SliceNode, StructPlan, groupMember, groupable, isSigned, prefixWidth, q, qc, rangeWidth, wrap } from "./plan.js";
import { UTF8E, f32Bits, f64Bits, fixedExact, fixedExactBig, loadQuat, toFixed } from "./decode.js";

/** thrown inside the encoder when a negative value meets a message written with the flag 0 */
export /* internal */ const NEED_SIGN = { needSign: true };

/** encoder state of one message */
export class Encoder {
  w: BitWriter;
  neg = false; flagged = false; depth = 0;
  maxDepth = MAX_DEPTH; maxLen = MAX_LEN;
  constructor(w: BitWriter, t?: StructPlan) {
    this.w = w;
    if (t?.limits) { this.maxDepth = t.limits.maxDepth; this.maxLen = t.limits.maxLen; }
  }
  begin(neg: boolean): void { this.neg = neg; this.flagged = false; this.depth = 0; }
  signFlag(): void {
    if (!this.flagged) { this.w.bool(this.neg); this.flagged = true; }
  }
  writeLen(l: number, maxlen: number | undefined): void {
    if (maxlen) {
      if (l > maxlen) throw new ErrTooLong(`length ${l} over ${maxlen}`);
      this.w.write(l, bitsRequired(maxlen));
      return;
    }
    if (l > this.maxLen) throw new ErrTooLong(`length ${l} over ${this.maxLen}`);
    writeBitlen(this.w, l, 5);
  }
  /** the sign and magnitude of a bitlen or fixed value */
  intValue(n: IntNode | FixedNode, v: any): [boolean, Mag] {
    if (n.k === "fixed") {
      const x = toFixed(n, v as number);
      const neg = x < 0;
      const a = Math.abs(x);
      if (a < P53) {
        if (!fixedExact(n, x)) throw new ErrOutOfRange("fixed-point step count does not survive its float type");
        return [neg, a];
      }
      if (!fixedExactBig(n, BigInt(x))) throw new ErrOutOfRange("fixed-point step count does not survive its float type");
      return [neg, BigInt(a)];
    }
    checkInt(n, v);
    if (typeof v === "bigint") return v < 0n ? [true, normMag(-v)] : [false, normMag(v)];
    return v < 0 ? [true, -v] : [false, v];
  }
  encInt(n: IntNode | FixedNode, v: any): void {
    const [neg, mag] = this.intValue(n, v);
    if (neg && !this.neg) throw NEED_SIGN;
    if (isSigned(n)) {
      this.signFlag();
      if (this.neg) this.w.bool(neg);
    }
    writeBitlen(this.w, mag, prefixWidth(n));
  }
  group(nodes: Node[], vals: any[], width: number, signed: boolean, seg: (j: number) => string): void {
    const count = nodes.length;
    if (count === 0) return;
    if (count === 1) {
      try { this.encInt(groupMember(nodes[0]), vals[0]); } catch (e) { throw wrap(e, seg(0)); }
      return;
    }
    if (signed) this.signFlag();
    let maxHigh = 0, indiv = 0;
    const sm: [boolean, Mag][] = [];
    for (let i = 0; i < count; i++) {
      let x: [boolean, Mag];
      try { x = this.intValue(groupMember(nodes[i]), vals[i]); } catch (e) { throw wrap(e, seg(i)); }
      if (x[0] && !this.neg) throw NEED_SIGN;
      sm.push(x);
      indiv += bitlenBits(x[1], prefixWidth(nodes[i]));
      maxHigh = Math.max(maxHigh, highBit(x[1]));
    }
    if (width + count * (maxHigh + 1) >= indiv) {
      this.w.bool(false);
      for (let i = 0; i < count; i++) {
        try { this.encInt(groupMember(nodes[i]), vals[i]); } catch (e) { throw wrap(e, seg(i)); }
      }
      return;
    }
    this.w.bool(true);
    this.w.write(maxHigh, width);
    for (let i = 0; i < count; i++) {
      if (this.neg && isSigned(nodes[i])) this.w.bool(sm[i][0]);
      writeMag(this.w, sm[i][1], maxHigh + 1);
    }
  }
  struct(t: StructPlan, o: any): void {
    if (++this.depth > this.maxDepth) throw new ErrMalformed("nesting deeper than " + this.maxDepth);
    if (o === null || typeof o !== "object") throw new ErrInvalidValue(`not a ${t.name}`);
    const fs = t.fields;
    for (let i = 0; i < fs.length; i++) {
      const f = fs[i];
      try {
        if (f.grp) {
          const g = f.grp;
          if (g.members[0] === i) this.group(g.members.map(j => fs[j].node), g.members.map(j => o[fs[j].name]), g.width, g.signed, (j) => fs[g.members[j]].name);
          continue;
        }
        this.node(f.node, o[f.name]);
      } catch (e) { throw f.grp ? e : wrap(e, f.name); }
    }
    this.depth--;
  }
  elems(n: ArrayNode | SliceNode, vs: any[]): void {
    const el = n.e;
    if (groupable(el)) {
      this.group(new Array(vs.length).fill(el), vs, prefixWidth(el), isSigned(el), (j) => `[${j}]`);
      return;
    }
    for (let i = 0; i < vs.length; i++) {
      try { this.node(el, vs[i]); } catch (e) { throw wrap(e, `[${i}]`); }
    }
  }
  node(n: Node, v: any): void {
    const w = this.w, kind = n.k;
    switch (n.k) {
      case "bool": w.bool(!!v); return;
      case "bits": {
        checkInt(n, v);
        const b = n.n as number;
        if (typeof v === "bigint") {
          if (n.signed ? BigInt.asIntN(b, v) !== v : BigInt.asUintN(b, v) !== v) throw new ErrOutOfRange(`${v} does not fit ${b} bits`);
          w.writeBig(v, b);
          return;
        }
        if (n.signed ? (v < -(2 ** (b - 1)) || v >= 2 ** (b - 1)) : v >= 2 ** b) throw new ErrOutOfRange(`${v} does not fit ${b} bits`);
        w.write(v < 0 ? v + 2 ** b : v, b);
        return;
      }
      case "range": {
        checkInt(n, v);
        const width = rangeWidth(n);
        if (typeof v === "bigint") {
          let x = v;
          const lo = n.min as bigint, hi = n.max as bigint;
          if (x < lo || x > hi) {
            if (!n.clamp) throw new ErrOutOfRange(`${v} outside ${lo}..${hi}`);
            x = x < lo ? lo : hi;
          }
          w.writeBig(x - lo, width);
          return;
        }
        let x = v as number;
        const lo = n.min as number, hi = n.max as number;
        if (x < lo || x > hi) {
          if (!n.clamp) throw new ErrOutOfRange(`${v} outside ${lo}..${hi}`);
          x = x < lo ? lo : hi;
        }
        if (width > 53) w.writeBig(BigInt(x) - BigInt(lo), width);
        else w.write(x - lo, width);
        return;
      }
      case "q": { const qq = q(n); w.write(qq.index(v, !!n.clamp), qq.bits); return; }
      case "float":
        if (n.f32) w.write(f32Bits(v), 32);
        else { const [lo, hi] = f64Bits(v); w.write(lo, 32); w.write(hi, 32); }
        return;
      case "fixed": case "bitlen": this.encInt(n, v); return;
      case "varint": {
        checkInt(n, v);
        const b = BigInt(v);
        writeVarint(w, n.signed ? zigzag(b) : b, n.n as number);
        return;
      }
      case "string": {
        const b = UTF8E.encode(v as string);
        this.writeLen(b.length, n.maxlen);
        for (const x of b) w.write(x, 8);
        return;
      }
      case "bytes": {
        const b = (v ?? new Uint8Array(0)) as Uint8Array;
        this.writeLen(b.length, n.maxlen);
        for (const x of b) w.write(x, 8);
        return;
      }
      case "quat": { const qq = qc(n); qq.write(w, qq.pack(loadQuat(n, v))); return; }
      case "time": {
        const t = v as Time;
        writeBitlen(w, normMag(zigzag(BigInt(t.sec))), 6);
        if (!(t.nsec >= 0 && t.nsec < 1e9)) throw new ErrOutOfRange(`${t.nsec} nanoseconds`);
        w.write(t.nsec, 30);
        return;
      }
      case "struct": this.struct(n.t as StructPlan, v); return;
      case "array": {
        const vs = v as any[];
        if (!Array.isArray(vs) || vs.length !== n.count) throw new ErrInvalidValue(`array of ${n.count} elements expected`);
        this.elems(n, vs);
        return;
      }
      case "slice": {
        const vs = (v ?? []) as any[];
        this.writeLen(vs.length, n.maxlen);
        this.elems(n, vs);
        return;
      }
      case "ptr":
        w.bool(v !== null && v !== undefined);
        if (v !== null && v !== undefined) this.node(n.e as Node, v);
        return;
      case "map": {
        const m = (v ?? new Map()) as Map<any, any>;
        this.writeLen(m.size, n.maxlen);
        for (const k of sortedKeys(m)) {
          this.node(n.key as Node, k);
          try { this.node(n.e as Node, m.get(k)); } catch (e) { throw wrap(e, `[${k}]`); }
        }
        return;
      }
    }
    throw new ErrInvalidValue("unknown coding " + kind);
  }
}

/** time.Time: Unix seconds and nanoseconds (decoded times are UTC, as in Go) */
export interface Time { sec: bigint; nsec: number; }

function checkInt(n: Node, v: any): void {
  const size = n.size as number;
  if (typeof v === "bigint") {
    if (n.signed ? BigInt.asIntN(size, v) !== v : BigInt.asUintN(size, v) !== v) throw new ErrOutOfRange(`${v} for a ${size}-bit integer`);
    return;
  }
  if (typeof v !== "number" || !Number.isInteger(v)) throw new ErrInvalidValue(`${v} is not an integer`);
  if (size <= 53 && (n.signed ? (v < -(2 ** (size - 1)) || v >= 2 ** (size - 1)) : (v < 0 || v >= 2 ** size))) {
    throw new ErrOutOfRange(`${v} for a ${size}-bit integer`);
  }
  if (!n.signed && v < 0) throw new ErrOutOfRange(`${v} for an unsigned integer`);
}

function utf8Less(a: string, b: string): number {
  const x = UTF8E.encode(a), y = UTF8E.encode(b);
  for (let i = 0; i < x.length && i < y.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}
/** whether map key a orders strictly before b: numbers by value, strings by bytes, false before true */
export /* internal */ function keyBefore(a: any, b: any): boolean {
  if (typeof a === "string") return utf8Less(a, b) < 0;
  if (typeof a === "boolean") return !a && b;
  return a < b;
}
export /* internal */ function sortedKeys(m: Map<any, any>): any[] {
  const ks = [...m.keys()];
  if (ks.length === 0) return ks;
  if (typeof ks[0] === "string") return ks.sort(utf8Less);
  if (typeof ks[0] === "boolean") return ks.sort((a, b) => (a ? 1 : 0) - (b ? 1 : 0));
  return ks.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
