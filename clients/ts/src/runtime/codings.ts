// ---- integer helpers ----
// The leaf codings of docs/wire-format.md as functions of the bit stream:
// integers, bitlen, varint, the quantizer of q values and the
// smallest-three quaternion coder.

import { ErrInvalidValue, ErrMalformed, ErrOutOfRange } from "./errors.js";
import { BitReader, BitWriter, P32, P53 } from "./stream.js";

/** a magnitude: a number below 2^53, else a bigint */
export type Mag = number | bigint;

export function bitsRequired(x: number): number {
  if (x < P32) return 32 - Math.clz32(x);
  return 32 + bitsRequired(Math.floor(x / P32));
}
export function bitsRequiredBig(x: bigint): number { return x === 0n ? 0 : x.toString(2).length; }
export function highBit(v: Mag): number {
  if (typeof v === "bigint") return v <= 1n ? 0 : v.toString(2).length - 1;
  return v <= 1 ? 0 : bitsRequired(v) - 1;
}
export /* internal */ function magBig(v: Mag): bigint { return typeof v === "bigint" ? v : BigInt(v); }
export /* internal */ function normMag(v: bigint): Mag { return v < BigInt(P53) ? Number(v) : v; }
export /* internal */ function writeMag(w: BitWriter, v: Mag, n: number): void {
  if (typeof v === "bigint") w.writeBig(v, n); else if (n <= 53) w.write(v, n); else w.writeBig(BigInt(v), n);
}
export /* internal */ function readMag(r: BitReader, n: number): Mag { return n <= 53 ? r.read(n) : normMag(r.readBig(n)); }

export function zigzag(v: bigint): bigint { return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)); }
export function unzigzag(u: bigint): bigint { return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n)); }

/** Go's math.Round: halves away from zero */
export function roundHalfAway(x: number): number {
  const t = Math.trunc(x);
  if (Math.abs(x - t) >= 0.5) return t + Math.sign(x);
  return t;
}

// ---- adaptive bit length (bitlen) ----

/** POW2[i] is 2^i, 0 <= i <= 64: exact, and a load where 2 ** i would be a call to pow */
export /* internal */ const POW2: Float64Array = (() => { const t = new Float64Array(65); for (let i = 0; i <= 64; i++) t[i] = 2 ** i; return t; })();

function bitlenBody(p: number): number { return p === 0 ? 1 : p; }
export function bitlenBits(v: Mag, w: number): number { return w + bitlenBody(highBit(v)); }
export function writeBitlen(wr: BitWriter, v: Mag, w: number): void {
  const p = highBit(v);
  wr.write(p, w);
  writeMag(wr, v, bitlenBody(p));
}
export function readBitlen(r: BitReader, w: number): Mag {
  const p = r.read(w);
  const body = readMag(r, bitlenBody(p));
  if (p === 0) return body;
  if (p < 53) return (body as number) + POW2[p];
  return normMag(magBig(body) | (1n << BigInt(p)));
}

// ---- varint ----

export function writeVarint(w: BitWriter, v: bigint, g: number): void {
  if (g === 64) { w.writeBig(v, 64); w.write(0, 1); return; }
  const mask = (1n << BigInt(g)) - 1n;
  while (v > mask) {
    w.writeBig((v & mask) | (mask + 1n), g + 1);
    v >>= BigInt(g);
  }
  w.writeBig(v, g + 1);
}
export function readVarint(r: BitReader, g: number): bigint {
  if (g === 64) {
    const v = r.readBig(64);
    if (r.bool()) throw new ErrMalformed("varint: more than 64 bits");
    return v;
  }
  const maxGroups = Math.ceil(64 / g);
  let v = 0n;
  for (let k = 0; k < maxGroups; k++) {
    const group = r.readBig(g);
    const more = r.bool();
    const shift = k * g;
    if (shift + bitsRequiredBig(group) > 64) throw new ErrMalformed("varint: bits above bit 63");
    v |= group << BigInt(shift);
    if (!more) {
      if (group === 0n && k > 0) throw new ErrMalformed("varint: non-minimal");
      return v;
    }
  }
  throw new ErrMalformed("varint: too many groups");
}

// ---- quantizer ----

/**
 * the grid of a `q` field: parameters from the schema (min, max, steps, step, zero, kmin).
 * With zero set (min < 0 < max, wire version 2) the grid is anchored at zero: index i is
 * (kmin + i)·step clamped to [min, max], so 0 is exact; otherwise index i is min + i·step,
 * min for 0 and exactly max for steps.
 */
export class Quantizer {
  min: number; max: number; steps: number; bits: number; step: number; fine: boolean;
  zero: boolean; kmin: number; v0: number; vN: number; at: number;
  constructor(min: number, max: number, steps: number, step?: number, zero?: boolean, kmin?: number) {
    this.min = min; this.max = max; this.steps = steps;
    this.bits = bitsRequired(steps);
    this.step = step ?? (max - min) / steps;
    this.zero = !!zero; this.kmin = this.zero ? (kmin ?? Math.floor(min / this.step + 0.5)) : 0;
    const mag = Math.max(Math.abs(min), Math.abs(max));
    this.fine = steps + mag / this.step > 2 ** 44;
    // The ends are the clamped points; the interior points, at + (kmin + i)·step (min + i·step
    // from min, (kmin + i)·step anchored at zero), lie inside [min, max] and need no clamping.
    this.at = this.zero ? 0 : min;
    this.v0 = this.zero ? this.clampV(this.kmin * this.step) : min;
    this.vN = this.zero ? this.clampV((this.kmin + steps) * this.step) : max;
  }
  private clampV(x: number): number { return Math.min(Math.max(x, this.min), this.max); }
  value(i: number): number {
    if (i > 0 && i < this.steps) return this.at + (this.kmin + i) * this.step;
    return i === 0 ? this.v0 : this.vN;
  }
  index(v: number, clamp: boolean): number {
    if (v - v !== 0) throw new ErrInvalidValue("not a finite number");
    if (clamp) {
      if (v <= this.min) return 0;
      if (v >= this.max) return this.steps;
    } else if (v < this.min || v > this.max) {
      throw new ErrOutOfRange(`${v} outside [${this.min}, ${this.max}]`);
    }
    let i: number;
    if (this.zero) {
      const k = Math.floor(v / this.step + 0.5) - this.kmin;
      i = k > 0 ? Math.min(k, this.steps) : 0;
    } else {
      i = Math.trunc((v - this.min) / this.step + 0.5);
      if (i > this.steps) i = this.steps;
    }
    if (this.fine) i = this.nearest(v, i);
    return i;
  }
  private nearest(v: number, i: number): number {
    let e = Math.abs(this.value(i) - v);
    while (i > 0) {
      const d = Math.abs(this.value(i - 1) - v);
      if (d >= e) break;
      i--; e = d;
    }
    while (i < this.steps) {
      const d = Math.abs(this.value(i + 1) - v);
      if (d >= e) break;
      i++; e = d;
    }
    return i;
  }
}

// ---- smallest-three quaternions ----

const INV_SQRT2 = Math.SQRT2 / 2;
const QUAT_MARGIN = 1e-6;
export /* internal */ const QUAT_OTHERS = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];

/**
 * the smallest-three coding with n bits a component: the three components on a grid of
 * 2^n - 2 steps over [-1/√2, +1/√2] anchored at zero (index h = 2^(n-1) - 1 is exactly 0);
 * index 2^n - 1 is above the grid and malformed
 */
export class QuatCoder {
  n: number; steps: number; half: number; step: number; bits: number;
  constructor(n: number) {
    this.n = n;
    this.steps = 2 ** n - 2;
    this.half = this.steps / 2;
    this.step = 2 * INV_SQRT2 / this.steps;
    this.bits = 2 + 3 * n;
  }
  private value(i: number): number { return (i - this.half) * this.step; }
  private dist(i: number): number { return 2 * i > this.steps ? 2 * i - this.steps : this.steps - 2 * i; }
  private index(c: number): number {
    const k = Math.floor(c / this.step + 0.5) + this.half;
    return Math.min(Math.max(k, 0), this.steps);
  }
  private rebuild(a: number, b: number, c: number): [number, boolean] {
    const va = this.value(a), vb = this.value(b), vc = this.value(c);
    const s = 1 - va * va - vb * vb - vc * vc;
    if (s < 0) return [NaN, false];
    const d = Math.sqrt(s);
    return [d, d >= Math.max(Math.abs(va), Math.abs(vb), Math.abs(vc)) + QUAT_MARGIN];
  }
  private clear(idx: number[]): boolean {
    const a = this.value(idx[0]), b = this.value(idx[1]), c = this.value(idx[2]);
    const s = 1 - a * a - b * b - c * c;
    const d = Math.max(this.dist(idx[0]), this.dist(idx[1]), this.dist(idx[2]));
    const t = d * (this.step / 2) + QUAT_MARGIN;
    const tt = t * t;
    if (s > tt * (1 + 1e-9)) return true;
    if (s < tt * (1 - 1e-9)) return false;
    return this.rebuild(idx[0], idx[1], idx[2])[1];
  }
  /** packs (x, y, z, w) into [m, a, b, c]: the dropped component and the three grid indices */
  pack(v: number[]): number[] {
    const norm2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    if (!(Math.abs(norm2 - 1) <= 1e-3)) throw new ErrInvalidValue("quaternion not of unit length");
    let m = 0;
    for (let i = 1; i < 4; i++) if (Math.abs(v[i]) > Math.abs(v[m])) m = i;
    let scale = 1 / Math.sqrt(norm2);
    if (v[m] < 0) scale = -scale;
    const o = QUAT_OTHERS[m];
    const idx = [this.index(v[o[0]] * scale), this.index(v[o[1]] * scale), this.index(v[o[2]] * scale)];
    for (let pass = 0; !this.clear(idx); pass++) {
      if (pass > 3 * this.steps) throw new ErrInvalidValue("quaternion");
      let j = 0;
      for (let i = 1; i < 3; i++) if (this.dist(idx[i]) > this.dist(idx[j])) j = i;
      if (2 * idx[j] > this.steps) idx[j]--; else idx[j]++;
    }
    return [m, idx[0], idx[1], idx[2]];
  }
  unpack(p: number[]): number[] {
    const [m, a, b, c] = p;
    if (a > this.steps || b > this.steps || c > this.steps) throw new ErrMalformed("quaternion component index above the grid");
    const [d, ok] = this.rebuild(a, b, c);
    if (!ok) {
      if (Number.isNaN(d)) throw new ErrInvalidValue("quaternion radicand below zero");
      throw new ErrMalformed("quaternion: dropped component not the largest");
    }
    const out = [0, 0, 0, 0];
    const vals = [this.value(a), this.value(b), this.value(c)];
    let k = 0;
    for (let i = 0; i < 4; i++) out[i] = i === m ? d : vals[k++];
    return out;
  }
  read(r: BitReader): number[] { return [r.read(2), r.read(this.n), r.read(this.n), r.read(this.n)]; }
  /** unpack(read(r)), with the same checks in the same order, without the arrays between (the decoders' hot path) */
  readUnpacked(r: BitReader): number[] {
    const n = this.n;
    let m: number, a: number, b: number, c: number;
    if (n <= 14) {
      // two reads rather than four: m and a, then b and c (each at most 31 bits, the reader's word)
      const ma = r.read(2 + n), bc = r.read(2 * n), mask = (1 << n) - 1;
      m = ma & 3; a = ma >>> 2; b = bc & mask; c = bc >>> n;
    } else {
      m = r.read(2); a = r.read(n); b = r.read(n); c = r.read(n);
    }
    const steps = this.steps;
    if (a > steps || b > steps || c > steps) throw new ErrMalformed("quaternion component index above the grid");
    const va = this.value(a), vb = this.value(b), vc = this.value(c);
    const s = 1 - va * va - vb * vb - vc * vc;
    if (s < 0) throw new ErrInvalidValue("quaternion radicand below zero");
    const d = Math.sqrt(s);
    if (!(d >= Math.max(Math.abs(va), Math.abs(vb), Math.abs(vc)) + QUAT_MARGIN)) throw new ErrMalformed("quaternion: dropped component not the largest");
    switch (m) {
      case 0: return [d, va, vb, vc];
      case 1: return [va, d, vb, vc];
      case 2: return [va, vb, d, vc];
    }
    return [va, vb, vc, d];
  }
  write(w: BitWriter, p: number[]): void { w.write(p[0], 2); w.write(p[1], this.n); w.write(p[2], this.n); w.write(p[3], this.n); }
}
