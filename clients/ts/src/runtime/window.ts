// ---- deltas ----
// The scalar windows of deltas (dmin/dmax): a value in the units of its
// window, back, and the running mean of the adaptive Rice parameter.

import { ErrMalformed, ErrOutOfRange } from "./errors.js";
import { bitsRequired } from "./codings.js";
import { Node, q } from "./plan.js";
import { fromFixed, toFixed } from "./decode.js";

/** the value a scalar with dmin/dmax is coded as, in the units of its window */
export /* internal */ function scalarKey(n: Node, v: any): number | bigint {
  switch (n.k) {
    case "q": return q(n).index(v, !!n.clamp);
    case "fixed": return toFixed(n, v);
    case "range":
      if (n.clamp) {
        if (v < (n.min as any)) return n.min as any;
        if (v > (n.max as any)) return n.max as any;
      }
      return v;
  }
  return v;
}
export /* internal */ function storeKey(n: Node, k: number | bigint): any {
  switch (n.k) {
    case "q": {
      const qq = q(n);
      if (typeof k !== "number" || k < 0 || k > qq.steps) throw new ErrOutOfRange(`quantization index ${k} over ${qq.steps}`);
      const v = qq.value(k);
      return n.f32 ? Math.fround(v) : v;
    }
    case "range":
      if (k < (n.min as any) || k > (n.max as any)) throw new ErrOutOfRange(`${k} outside ${n.min}..${n.max}`);
      return k;
    case "bits": {
      const b = n.n as number;
      if (typeof k === "bigint") {
        if (n.signed ? BigInt.asIntN(b, k) !== k : BigInt.asUintN(b, k) !== k) throw new ErrOutOfRange(`${k} does not fit ${b} bits`);
        return k;
      }
      if (n.signed ? (k < -(2 ** (b - 1)) || k >= 2 ** (b - 1)) : (k < 0 || k >= 2 ** b)) throw new ErrOutOfRange(`${k} does not fit ${b} bits`);
      return k;
    }
    case "fixed": return fromFixed(n, Number(k));
  }
  throw new ErrMalformed("window on coding " + n.k);
}
export /* internal */ function wrapAdd(n: Node, kb: number | bigint, d: number | bigint): number | bigint {
  if (typeof kb === "bigint") {
    const s = kb + BigInt(d);
    return n.signed ? BigInt.asIntN(64, s) : BigInt.asUintN(64, s);
  }
  return kb + Number(d);
}

/** the Rice parameter of a running mean in 1/16ths of a step */
export /* internal */ function riceK(m16: number): number { return Math.min(bitsRequired(Math.floor(m16 * 11 / 256)), 20); }

/** a running mean (1/16ths) moved a quarter of the way toward magnitude m */
export /* internal */ function meanAdd(m16: number, m: number): number {
  const x = Math.min(m, 2 ** 20) * 16;
  return x >= m16 ? m16 + Math.floor((x - m16) / 4) : m16 - Math.floor((m16 - x) / 4);
}
