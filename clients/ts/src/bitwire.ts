// The runtime of bitwire's generated TypeScript clients: the LSB-first bit
// stream, every value coding of docs/wire-format.md, and a plan walker that
// decodes, encodes, applies deltas to and quantizes messages described by a
// plan (the generated code holds one per type, built from the Go schema).
// ES2020, strict, no dependencies. Generated code imports this file; it is
// not generated itself.
//
// Numbers: integers of Go types of 32 bits or fewer are `number`; 64-bit
// integers are `bigint`, except where the coding bounds them within
// ±(2^53-1) (`range` with both bounds inside, `bits=N` with N <= 53), where
// they are `number` (node.big tells which). Floats are `number`; float32
// fields hold the float32 value (Math.fround), so they compare exactly with
// Go's. NaN payloads of raw floats are not kept (JavaScript has one NaN).

// ---- errors, named like Go's sentinels ----

/** Every error the runtime throws. path is the field path ("World.Crates[3].Pos.X"). */
export class BitwireError extends Error {
  path: string;
  detail: string;
  constructor(sentinel: string, detail: string, path = "") {
    super("");
    this.name = sentinel;
    this.detail = detail;
    this.path = path;
    this.message = this.render();
  }
  render(): string {
    return (this.path ? this.path + ": " : "") + "bitwire: " + this.detail;
  }
  /** prepend a path segment (a field name, or "[i]") as the error unwinds */
  within(seg: string): this {
    this.path = this.path === "" ? seg : seg + (this.path.startsWith("[") ? "" : ".") + this.path;
    this.message = this.render();
    return this;
  }
}
export class ErrUnexpectedEnd extends BitwireError { constructor(d = "unexpected end of input") { super("ErrUnexpectedEnd", d); } }
export class ErrOutOfRange extends BitwireError { constructor(d = "value out of range") { super("ErrOutOfRange", d); } }
export class ErrInvalidValue extends BitwireError { constructor(d = "invalid value") { super("ErrInvalidValue", d); } }
export class ErrTooLong extends BitwireError { constructor(d = "too long") { super("ErrTooLong", d); } }
export class ErrTrailingData extends BitwireError { constructor(d = "trailing data") { super("ErrTrailingData", d); } }
export class ErrMalformed extends BitwireError { constructor(d = "malformed input") { super("ErrMalformed", d); } }
export class ErrUnknownTag extends BitwireError { constructor(d = "unknown union tag") { super("ErrUnknownTag", d); } }
export class ErrBadMagic extends BitwireError { constructor(d = "bad magic") { super("ErrBadMagic", d); } }
export class ErrProtocolMismatch extends BitwireError { constructor(d = "protocol mismatch") { super("ErrProtocolMismatch", d); } }
export class ErrStaleTick extends BitwireError { constructor(d = "stale tick") { super("ErrStaleTick", d); } }
export class ErrNoBaseline extends BitwireError { constructor(d = "no baseline") { super("ErrNoBaseline", d); } }

// ---- the bit stream ----

const P32 = 4294967296;
const P53 = 9007199254740992;

/** reads an LSB-first bit stream; reading past the end throws ErrUnexpectedEnd */
export class BitReader {
  data: Uint8Array;
  pos = 0;
  end: number;
  /** the input's allocation budget taken so far (chargeZero) */
  spent = 0;
  constructor(data: Uint8Array) {
    this.data = data;
    this.end = data.length * 8;
  }
  reset(data: Uint8Array): void {
    this.data = data;
    this.pos = 0;
    this.end = data.length * 8;
    this.spent = 0;
  }
  remaining(): number { return this.end - this.pos; }
  /**
   * charges count elements that take no bits (struct{}, [0]T) to the input's
   * allocation budget, one byte each, as Go's decoder does: 64 bytes a byte of
   * input plus 4096, with Go's allocator rounding. Nothing else bounds how many
   * such elements a few bytes may ask for; over the budget is ErrTooLong.
   */
  chargeZero(count: number): void {
    if (count === 0) return;
    const need = count > 32768 ? count + 8192 : count + Math.floor(count / 8) + 16;
    const left = 64 * Math.ceil(this.end / 8) + 4096 - this.spent;
    if (need > left) throw new ErrTooLong(`${count} elements of no bits over the allocation budget (${left} left)`);
    this.spent += need;
  }
  /** n bits, 0 <= n <= 53, as a number */
  read(n: number): number {
    if (n === 0) return 0;
    const p = this.pos;
    if (n > this.end - p) throw new ErrUnexpectedEnd();
    const d = this.data;
    const i = p >>> 3, off = p & 7;
    this.pos = p + n;
    if (n + off <= 24) {
      // three bytes hold it (bytes past the end read as undefined, i.e. 0)
      return ((d[i] | (d[i + 1] << 8) | (d[i + 2] << 16)) >>> off) & ((1 << n) - 1);
    }
    let v = 0, got = 0, q = p, left = n;
    let scale = 1;
    while (left > 0) {
      const o = q & 7;
      const take = Math.min(8 - o, left);
      v += ((d[q >>> 3] >>> o) & ((1 << take) - 1)) * scale;
      scale *= 2 ** take;
      q += take; left -= take; got += take;
    }
    return v;
  }
  /** n bits, 0 <= n <= 64, as a bigint */
  readBig(n: number): bigint {
    if (n <= 32) return BigInt(this.read(n));
    if (n > this.end - this.pos) throw new ErrUnexpectedEnd();
    const lo = this.read(32);
    return (BigInt(this.read(n - 32)) << 32n) | BigInt(lo);
  }
  bool(): boolean { return this.read(1) === 1; }
  /** the next n bits (0 <= n <= 17) without reading them; bits past the end read as 0 */
  peek(n: number): number {
    const p = this.pos, d = this.data, i = p >>> 3;
    const v = ((d[i] | (d[i + 1] << 8) | (d[i + 2] << 16)) >>> (p & 7)) & ((1 << n) - 1);
    const left = this.end - p;
    return left >= n ? v : left > 0 ? v & ((1 << left) - 1) : 0;
  }
  /** moves past n bits; past the end is ErrUnexpectedEnd */
  skip(n: number): void {
    if (n > this.end - this.pos) throw new ErrUnexpectedEnd();
    this.pos += n;
  }
}

/** writes an LSB-first bit stream into a growing buffer */
export class BitWriter {
  buf: Uint8Array;
  pos = 0;
  constructor(size = 256) { this.buf = new Uint8Array(size); }
  reset(): void { this.buf.fill(0, 0, (this.pos + 7) >>> 3); this.pos = 0; }
  /** rewind to bit position p (earlier), clearing what follows */
  truncate(p: number): void {
    const from = (p + 7) >>> 3;
    this.buf.fill(0, from, (this.pos + 7) >>> 3);
    if (p & 7) this.buf[p >>> 3] &= (1 << (p & 7)) - 1;
    this.pos = p;
  }
  private grow(bits: number): void {
    const need = (this.pos + bits + 7) >>> 3;
    if (need > this.buf.length) {
      const nb = new Uint8Array(Math.max(need, this.buf.length * 2));
      nb.set(this.buf);
      this.buf = nb;
    }
  }
  /** the low n bits of v (a non-negative integer below 2^53), 0 <= n <= 53 */
  write(v: number, n: number): void {
    if (n === 0) return;
    this.grow(n);
    const b = this.buf;
    let p = this.pos;
    this.pos += n;
    if (n < 32) v = (v % (2 ** n)) >>> 0;
    else if (n < 53) v = v % (2 ** n);
    while (n > 0) {
      const off = p & 7;
      const take = Math.min(8 - off, n);
      const chunk = v < P32 ? (v & ((1 << take) - 1)) : (v % (1 << take));
      b[p >>> 3] |= chunk << off;
      v = v < P32 ? v >>> take : Math.floor(v / (1 << take));
      p += take;
      n -= take;
    }
  }
  /** the low n bits of v, 0 <= n <= 64 */
  writeBig(v: bigint, n: number): void {
    v = BigInt.asUintN(64, v);
    if (n <= 32) { this.write(Number(v & 0xffffffffn), n); return; }
    this.write(Number(v & 0xffffffffn), 32);
    this.write(Number(BigInt.asUintN(n - 32, v >> 32n)), n - 32);
  }
  bool(b: boolean): void { this.write(b ? 1 : 0, 1); }
  /** the bytes written, padded with zero bits (a view: valid until the next write) */
  bytes(): Uint8Array { return this.buf.subarray(0, (this.pos + 7) >>> 3); }
}

// ---- integer helpers ----

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
function magBig(v: Mag): bigint { return typeof v === "bigint" ? v : BigInt(v); }
function normMag(v: bigint): Mag { return v < BigInt(P53) ? Number(v) : v; }
function writeMag(w: BitWriter, v: Mag, n: number): void {
  if (typeof v === "bigint") w.writeBig(v, n); else if (n <= 53) w.write(v, n); else w.writeBig(BigInt(v), n);
}
function readMag(r: BitReader, n: number): Mag { return n <= 53 ? r.read(n) : normMag(r.readBig(n)); }

export function zigzag(v: bigint): bigint { return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)); }
export function unzigzag(u: bigint): bigint { return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n)); }

/** Go's math.Round: halves away from zero */
export function roundHalfAway(x: number): number {
  const t = Math.trunc(x);
  if (Math.abs(x - t) >= 0.5) return t + Math.sign(x);
  return t;
}

// ---- adaptive bit length (bitlen) ----

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
  if (p < 53) return (body as number) + 2 ** p;
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
const QUAT_OTHERS = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];

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
  write(w: BitWriter, p: number[]): void { w.write(p[0], 2); w.write(p[1], this.n); w.write(p[2], this.n); w.write(p[3], this.n); }
}

// ---- plans ----

/** A leaf coding or container, as the generated code describes it (from the schema). */
export interface Node {
  /** bool bits range q float fixed varint bitlen string bytes quat time struct array slice ptr map */
  k: string;
  /** integers: held as bigint (64-bit types the coding does not bound within 2^53) */
  big?: boolean;
  /** integers: the Go type is signed */
  signed?: boolean;
  /** integers: the Go type's width in bits (8, 16, 32, 64) */
  size?: number;
  /** floats: the Go type is float32 */
  f32?: boolean;
  /** bits: width; varint: group size; bitlen: prefix width W; quat: bits a component */
  n?: number;
  /** range: bounds; q: bounds, step count and grid spacing */
  min?: number | bigint; max?: number | bigint; steps?: number; step?: number;
  /** q: the grid is anchored at zero (index i is (kmin + i)·step clamped to [min, max]) */
  zero?: boolean; kmin?: number;
  clamp?: boolean;
  /** fixed: the precision */
  prec?: number;
  /** string, bytes, slice, map: the declared limit (0 or absent: none) */
  maxlen?: number;
  /** array, slice, ptr: the element; map: the value */
  e?: Node;
  /** map: the key */
  key?: Node;
  /** array: the length */
  count?: number;
  /** struct: its plan */
  t?: StructPlan;
  /** slice of structs: the index of the id field (an entity set in deltas) */
  id?: number;
  /** quat on a struct: the properties holding x, y, z, w (absent: a 4-element array) */
  names?: string[];
  /** dmin/dmax: the window in steps; the plain fixed coding's width, the first difference's parameter and the later ones' unary limit (wire version 4) */
  dlo?: number; dhi?: number; dbits?: number; dk?: number; du?: number;
  /** composite: a changed struct is sent in full */
  composite?: boolean;
  /** slice, map: the fewest bits an element (entry) takes, from the schema; bounds lengths read from input */
  emin?: number;
  /** runtime caches */
  _c?: number; _q?: Quantizer; _quat?: QuatCoder; _emin?: number; _w?: number; _mr?: [bigint, bigint];
}
/** fields of one struct sharing a bitlen group name */
export interface Group { members: number[]; width: number; signed: boolean; }
export interface Field { name: string; node: Node; grp?: Group; }
export interface StructPlan {
  name: string; fields: Field[]; make: () => any;
  /** a message type's decoding limits, from its schema (absent: Go's defaults, 100 and 2^20) */
  limits?: { maxDepth: number; maxLen: number };
  /** a message type whose deltas use a trained model: the model (wire-format.md, "Models") */
  model?: PlanModel;
}

const MAX_DEPTH = 100;
const MAX_LEN = 1 << 20;

const C_OTHER = 0, C_Q = 1, C_BOOL = 2, C_STRUCT = 3;
function code(n: Node): number { return n._c = n.k === "q" ? C_Q : n.k === "bool" ? C_BOOL : n.k === "struct" ? C_STRUCT : C_OTHER; }
function q(n: Node): Quantizer { return n._q ??= new Quantizer(n.min as number, n.max as number, n.steps as number, n.step, n.zero, n.kmin); }
function qc(n: Node): QuatCoder { return n._quat ??= new QuatCoder(n.n as number); }
function rangeWidth(n: Node): number {
  return n._w ??= n.big ? bitsRequiredBig(BigInt.asUintN(64, (n.max as bigint) - (n.min as bigint)))
    : bitsRequired((n.max as number) - (n.min as number));
}
function isSigned(n: Node): boolean { return n.k === "fixed" || (n.k === "bitlen" && !!n.signed); }
function groupable(n: Node): boolean { return n.k === "bitlen" || n.k === "fixed"; }
function lenBits(maxlen: number | undefined): number { return maxlen ? bitsRequired(maxlen) : 6; }

/** the fewest bits one value of n takes (a bound for lengths read from input) */
export function minBits(n: Node, seen: Set<StructPlan> = new Set()): number {
  if (n._emin !== undefined) return n._emin;
  let b = 0;
  switch (n.k) {
    case "bool": b = 1; break;
    case "bits": b = n.n as number; break;
    case "range": b = rangeWidth(n); break;
    case "q": b = q(n).bits; break;
    case "float": b = n.f32 ? 32 : 64; break;
    case "fixed": b = 7; break;
    case "varint": b = (n.n as number) + 1; break;
    case "bitlen": b = (n.n as number) + 1; break;
    case "string": case "bytes": case "slice": case "map": b = lenBits(n.maxlen); break;
    case "quat": b = 2 + 3 * (n.n as number); break;
    case "time": b = 37; break;
    case "ptr": b = 1; break;
    case "array": b = (n.count as number) * minBits(n.e as Node, seen); break;
    case "struct": {
      const t = n.t as StructPlan;
      if (seen.has(t)) return 0;
      seen.add(t);
      for (const f of t.fields) b += minBits(f.node, seen);
      seen.delete(t);
      break;
    }
  }
  n._emin = b;
  return b;
}

/** the fewest bits of one element of a slice (entry of a map): the schema's, else computed */
function emin(n: Node): number {
  if (n.emin !== undefined) return n.emin;
  if (n.k === "map") return n.emin = minBits(n.key as Node) + minBits(n.e as Node);
  return n.emin = groupable(n.e as Node) ? 1 : minBits(n.e as Node);
}

function wrap(e: unknown, seg: string): unknown {
  if (e instanceof BitwireError) e.within(seg);
  return e;
}

// ---- decoding ----

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
  readInt(n: Node): [boolean, Mag] {
    let neg = false;
    if (isSigned(n)) {
      this.signFlag();
      if (this.neg) neg = this.r.bool();
    }
    return [neg, readBitlen(this.r, n.k === "fixed" ? 6 : n.n as number)];
  }
  /** turns a sign and magnitude into the field's value */
  signMag(n: Node, neg: boolean, mag: Mag): any {
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
        const lim = 2 ** (size - 1);
        if (neg ? mag > lim : mag > lim - 1) throw new ErrOutOfRange(`magnitude ${mag} for ${size}-bit integer`);
        return neg ? -mag : mag;
      }
      if (neg) throw new ErrMalformed("sign on an unsigned value");
      if (mag >= 2 ** size) throw new ErrOutOfRange(`${mag} for ${size}-bit integer`);
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

  struct(t: StructPlan, into?: any): any {
    if (++this.depth > this.maxDepth) throw new ErrMalformed("nesting deeper than " + this.maxDepth);
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

  /** a bitlen group: members are indexes into nodes */
  group(nodes: Node[], members: number[], width: number, signed: boolean, set: (j: number, v: any) => void, seg: (j: number) => string): void {
    const count = members.length;
    if (count === 0) return;
    if (count === 1) {
      const n = nodes[members[0]];
      try { const [neg, mag] = this.readInt(n); set(members[0], this.signMag(n, neg, mag)); } catch (e) { throw wrap(e, seg(members[0])); }
      return;
    }
    if (signed) this.signFlag();
    const shared = this.r.bool();
    let maxHigh = 0, indiv = 0;
    if (!shared) {
      for (const j of members) {
        const n = nodes[j];
        try {
          const [neg, mag] = this.readInt(n);
          set(j, this.signMag(n, neg, mag));
          indiv += bitlenBits(mag, n.k === "fixed" ? 6 : n.n as number);
          maxHigh = Math.max(maxHigh, highBit(mag));
        } catch (e) { throw wrap(e, seg(j)); }
      }
      if (width + count * (maxHigh + 1) < indiv) throw new ErrMalformed("group coded one by one where a shared length is shorter");
      return;
    }
    const h = this.r.read(width);
    for (const j of members) {
      const n = nodes[j];
      try {
        let neg = false;
        if (this.neg && isSigned(n)) neg = this.r.bool();
        const mag = readMag(this.r, h + 1);
        set(j, this.signMag(n, neg, mag));
        indiv += bitlenBits(mag, n.k === "fixed" ? 6 : n.n as number);
        maxHigh = Math.max(maxHigh, highBit(mag));
      } catch (e) { throw wrap(e, seg(j)); }
    }
    if (maxHigh !== h || width + count * (maxHigh + 1) >= indiv) throw new ErrMalformed("shared-length group that is not the shortest coding");
  }

  elems(n: Node, count: number): any[] {
    const el = n.e as Node;
    const out: any[] = new Array(count);
    if (groupable(el)) {
      this.group(new Array(count).fill(el), seqTo(count), el.k === "fixed" ? 6 : el.n as number, isSigned(el), (j, v) => { out[j] = v; }, (j) => `[${j}]`);
      return out;
    }
    for (let i = 0; i < count; i++) {
      try { out[i] = this.node(el); } catch (e) { throw wrap(e, `[${i}]`); }
    }
    return out;
  }

  /** one value in full (nested values are always new: decoded values may share parts with baselines) */
  node(n: Node): any {
    const r = this.r;
    // the commonest leaves first, without the general switch
    const c = n._c ?? code(n);
    if (c === C_Q) {
      const qq = n._q ?? q(n);
      const i = r.read(qq.bits);
      if (i > qq.steps) throw new ErrOutOfRange(`quantization index ${i} over ${qq.steps}`);
      const v = qq.value(i);
      return n.f32 ? Math.fround(v) : v;
    }
    if (c === C_BOOL) return r.read(1) === 1;
    if (c === C_STRUCT) return this.struct(n.t as StructPlan);
    switch (n.k) {
      case "bool": return r.bool();
      case "bits": {
        const w = n.n as number;
        if (!n.big) {
          const v = r.read(w);
          return n.signed && w > 0 && v >= 2 ** (w - 1) ? v - 2 ** w : v;
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
      case "q": {
        const qq = q(n);
        const i = r.read(qq.bits);
        if (i > qq.steps) throw new ErrOutOfRange(`quantization index ${i} over ${qq.steps}`);
        const v = qq.value(i);
        return n.f32 ? Math.fround(v) : v;
      }
      case "float": return n.f32 ? f32FromBits(r.read(32)) : f64FromBits(r.read(32), r.read(32));
      case "fixed": case "bitlen": { const [neg, mag] = this.readInt(n); return this.signMag(n, neg, mag); }
      case "varint": {
        const u = readVarint(r, n.n as number);
        const size = n.size as number;
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
      case "quat": {
        const qq = qc(n);
        return storeQuat(n, qq.unpack(qq.read(r)));
      }
      case "time": {
        const z = readBitlen(r, 6);
        const ns = r.read(30);
        if (ns >= 1e9) throw new ErrOutOfRange(`${ns} nanoseconds`);
        return { sec: unzigzag(magBig(z)), nsec: ns };
      }
      case "struct": return this.struct(n.t as StructPlan);
      case "array": return this.elems(n, n.count as number);
      case "slice": {
        const em = emin(n);
        const l = this.readLen(n, em);
        if (em === 0) this.r.chargeZero(l);
        return l === 0 ? [] : this.elems(n, l);
      }
      case "ptr": return r.bool() ? this.node(n.e as Node) : null;
      case "map": {
        const l = this.readLen(n, emin(n));
        const m = new Map<any, any>();
        this.entries(n, m, l);
        if (m.size !== l) throw new ErrMalformed("duplicate map key");
        return m;
      }
    }
    throw new ErrMalformed("unknown coding " + n.k);
  }
  /**
   * count entries into m. The keys must come in strictly ascending order and must not be in
   * m already: an out-of-order or repeated key is ErrMalformed as soon as it is read.
   */
  entries(n: Node, m: Map<any, any>, count: number): void {
    const check = m.size > 0;
    let prev: any;
    for (let i = 0; i < count; i++) {
      let k: any;
      try {
        const kn = n.key as Node;
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
      try { m.set(k, this.node(n.e as Node)); } catch (e) { throw wrap(e, `[${k}]`); }
    }
  }
}

const UTF8 = new TextDecoder();
/** decodes map keys: one that is not valid UTF-8 is refused, as in Go (a replaced key would order and collide differently) */
const UTF8_STRICT = new TextDecoder("utf-8", { fatal: true });
const UTF8E = new TextEncoder();
function readBytes(r: BitReader, l: number): Uint8Array {
  if (8 * l > r.remaining()) throw new ErrUnexpectedEnd();
  const out = new Uint8Array(l);
  for (let i = 0; i < l; i++) out[i] = r.read(8);
  return out;
}
const F = new DataView(new ArrayBuffer(8));
function f32FromBits(u: number): number { F.setUint32(0, u, true); return F.getFloat32(0, true); }
function f64FromBits(lo: number, hi: number): number { F.setUint32(0, lo, true); F.setUint32(4, hi, true); return F.getFloat64(0, true); }
function f32Bits(v: number): number { F.setFloat32(0, v, true); return F.getUint32(0, true); }
function f64Bits(v: number): [number, number] { F.setFloat64(0, v, true); return [F.getUint32(0, true), F.getUint32(4, true)]; }

function storeQuat(n: Node, v: number[]): any {
  const f = n.f32 ? Math.fround : (x: number) => x;
  if (!n.names) return [f(v[0]), f(v[1]), f(v[2]), f(v[3])];
  const o: any = n.t ? n.t.make() : {};
  for (let i = 0; i < 4; i++) o[n.names[i]] = f(v[i]);
  return o;
}
function loadQuat(n: Node, v: any): number[] {
  if (!n.names) return [v[0], v[1], v[2], v[3]];
  return [v[n.names[0]], v[n.names[1]], v[n.names[2]], v[n.names[3]]];
}

function fromFixed(n: Node, i: number): number {
  const v = i * (n.prec as number);
  return n.f32 ? Math.fround(v) : v;
}
/** a step count (below 2^53) that survives the trip through the field's float type;
 * below 2^22 (float32) or 2^50 steps every count does while i·prec stays finite and normal */
function fixedExact(n: Node, i: number): boolean {
  const p = n.prec as number;
  const lim = n.f32 ? 2 ** 22 : 2 ** 50;
  if (i > -lim && i < lim && p >= (n.f32 ? 2 ** -126 : 2 ** -1022) && p < (n.f32 ? 1e30 : 1e290)) return true;
  const back = roundHalfAway(fromFixed(n, i) / (n.prec as number));
  return back > -(2 ** 63) && back < 2 ** 63 && back === i;
}
/** fixedExact for a step count beyond 2^53 */
function fixedExactBig(n: Node, i: bigint): boolean {
  const back = roundHalfAway(fromFixed(n, Number(i)) / (n.prec as number));
  return back > -(2 ** 63) && back < 2 ** 63 && BigInt(back) === i;
}
function seqTo(n: number): number[] { const a = new Array(n); for (let i = 0; i < n; i++) a[i] = i; return a; }
function toFixed(n: Node, v: number): number {
  if (v - v !== 0) throw new ErrInvalidValue("not a finite number");
  const x = roundHalfAway(v / (n.prec as number));
  if (!(x > -(2 ** 63) && x < 2 ** 63)) throw new ErrOutOfRange("fixed-point step count over 2^63");
  return x;
}

// ---- encoding ----

/** thrown inside the encoder when a negative value meets a message written with the flag 0 */
const NEED_SIGN = { needSign: true };

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
  intValue(n: Node, v: any): [boolean, Mag] {
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
  encInt(n: Node, v: any): void {
    const [neg, mag] = this.intValue(n, v);
    if (neg && !this.neg) throw NEED_SIGN;
    if (isSigned(n)) {
      this.signFlag();
      if (this.neg) this.w.bool(neg);
    }
    writeBitlen(this.w, mag, n.k === "fixed" ? 6 : n.n as number);
  }
  group(nodes: Node[], vals: any[], width: number, signed: boolean, seg: (j: number) => string): void {
    const count = nodes.length;
    if (count === 0) return;
    if (count === 1) {
      try { this.encInt(nodes[0], vals[0]); } catch (e) { throw wrap(e, seg(0)); }
      return;
    }
    if (signed) this.signFlag();
    let maxHigh = 0, indiv = 0;
    const sm: [boolean, Mag][] = [];
    for (let i = 0; i < count; i++) {
      let x: [boolean, Mag];
      try { x = this.intValue(nodes[i], vals[i]); } catch (e) { throw wrap(e, seg(i)); }
      if (x[0] && !this.neg) throw NEED_SIGN;
      sm.push(x);
      indiv += bitlenBits(x[1], nodes[i].k === "fixed" ? 6 : nodes[i].n as number);
      maxHigh = Math.max(maxHigh, highBit(x[1]));
    }
    if (width + count * (maxHigh + 1) >= indiv) {
      this.w.bool(false);
      for (let i = 0; i < count; i++) {
        try { this.encInt(nodes[i], vals[i]); } catch (e) { throw wrap(e, seg(i)); }
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
  elems(n: Node, vs: any[]): void {
    const el = n.e as Node;
    if (groupable(el)) {
      this.group(new Array(vs.length).fill(el), vs, el.k === "fixed" ? 6 : el.n as number, isSigned(el), (j) => `[${j}]`);
      return;
    }
    for (let i = 0; i < vs.length; i++) {
      try { this.node(el, vs[i]); } catch (e) { throw wrap(e, `[${i}]`); }
    }
  }
  node(n: Node, v: any): void {
    const w = this.w;
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
    throw new ErrInvalidValue("unknown coding " + n.k);
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
function keyBefore(a: any, b: any): boolean {
  if (typeof a === "string") return utf8Less(a, b) < 0;
  if (typeof a === "boolean") return !a && b;
  return a < b;
}
function sortedKeys(m: Map<any, any>): any[] {
  const ks = [...m.keys()];
  if (ks.length === 0) return ks;
  if (typeof ks[0] === "string") return ks.sort(utf8Less);
  if (typeof ks[0] === "boolean") return ks.sort((a, b) => (a ? 1 : 0) - (b ? 1 : 0));
  return ks.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

// ---- deltas ----

/** the value a scalar with dmin/dmax is coded as, in the units of its window */
function scalarKey(n: Node, v: any): number | bigint {
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
function storeKey(n: Node, k: number | bigint): any {
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
function wrapAdd(n: Node, kb: number | bigint, d: number | bigint): number | bigint {
  if (typeof kb === "bigint") {
    const s = kb + BigInt(d);
    return n.signed ? BigInt.asIntN(64, s) : BigInt.asUintN(64, s);
  }
  return kb + Number(d);
}

/** the Rice parameter of a running mean in 1/16ths of a step */
function riceK(m16: number): number { return Math.min(bitsRequired(Math.floor(m16 * 11 / 256)), 20); }

/** a running mean (1/16ths) moved a quarter of the way toward magnitude m */
function meanAdd(m16: number, m: number): number {
  const x = Math.min(m, 2 ** 20) * 16;
  return x >= m16 ? m16 + Math.floor((x - m16) / 4) : m16 - Math.floor((m16 - x) / 4);
}

// ---- models: trained code tables for deltas (wire-format.md, "Models") ----

/** a model file that is corrupt, of another version, or for another layout (Go's ErrModel) */
export class ErrModel extends BitwireError { constructor(d = "bad model") { super("ErrModel", d); } }

const CODE_MAX_LEN = 15, CODE_ESC_MAX_LEN = 5, CODE_LOOK_BITS = 10;
/** table kinds: struct masks, windowed scalars, modular scalars, quaternion modes and differences */
const TK_MASK = 1, TK_WINDOW = 2, TK_MODULAR = 3, TK_QUAT_MODE = 4, TK_QUAT_DIFF = 5;
/** a quaternion's tables: its mode, D0[rank 0..3], D1[class 0..7], D2[class 0..7] */
const QUAT_TABLES = 21, QUAT_CLASSES = 8;

/**
 * a canonical prefix code over symbols 0..n-1 given by each symbol's code length (0: none):
 * codes assigned in order of (length, symbol), written most significant bit first
 */
export class Code {
  lens: Uint8Array;
  /** by length: the first code, the number of symbols, the number of shorter symbols */
  first = new Int32Array(CODE_MAX_LEN + 1); count = new Int32Array(CODE_MAX_LEN + 1); index = new Int32Array(CODE_MAX_LEN + 1);
  /** the coded symbols sorted by (length, symbol) */
  sorted: Uint16Array;
  /** the next lookBits stream bits -> (symbol + 1) << 4 | length, 0 for a longer code or none */
  look: Uint32Array;
  lookMask: number;
  /** every length 0: a plain mask table, whose chunks are their k changed bits with no symbol */
  plain: boolean;
  /** lengths over 15, or over-subscribing the code space, are ErrModel */
  constructor(lens: Uint8Array) {
    this.lens = lens.slice();
    let kraft = 0, maxLen = 0, n = 0;
    for (const l of lens) {
      if (l > CODE_MAX_LEN) throw new ErrModel(`code length ${l} over ${CODE_MAX_LEN}`);
      if (l > 0) { kraft += 2 ** (CODE_MAX_LEN - l); this.count[l]++; maxLen = Math.max(maxLen, l); n++; }
    }
    this.plain = n === 0;
    if (kraft > 2 ** CODE_MAX_LEN) throw new ErrModel("code lengths over-subscribe the code space");
    let code = 0, idx = 0;
    for (let l = 1; l <= CODE_MAX_LEN; l++) {
      this.first[l] = code; this.index[l] = idx;
      code = (code + this.count[l]) * 2;
      idx += this.count[l];
    }
    this.sorted = new Uint16Array(n);
    const lookBits = Math.min(maxLen, CODE_LOOK_BITS);
    this.look = new Uint32Array(1 << lookBits);
    this.lookMask = (1 << lookBits) - 1;
    const next = this.first.slice();
    let k = 0;
    for (let l = 1; l <= CODE_MAX_LEN; l++) {
      for (let s = 0; s < lens.length; s++) {
        if (lens[s] !== l) continue;
        this.sorted[k++] = s;
        const c = next[l]++;
        if (l > lookBits) continue;
        let rev = 0; // the code in stream order: its top bit first
        for (let b = 0; b < l; b++) rev |= ((c >>> (l - 1 - b)) & 1) << b;
        for (let j = 0; j < 1 << (lookBits - l); j++) this.look[rev | (j << l)] = ((s + 1) << 4) | l;
      }
    }
  }
  /** one symbol: bits that begin no code (15 read) are ErrMalformed, a code cut off by the end ErrUnexpectedEnd */
  read(r: BitReader): number {
    const p = r.peek(CODE_MAX_LEN);
    const e = this.look[p & this.lookMask];
    if (e !== 0) { r.skip(e & 15); return (e >>> 4) - 1; }
    let code = 0;
    for (let l = 1; l <= CODE_MAX_LEN; l++) {
      code = code * 2 + ((p >>> (l - 1)) & 1);
      const d = code - this.first[l];
      if (d >= 0 && d < this.count[l]) { r.skip(l); return this.sorted[this.index[l] + d]; }
    }
    if (r.remaining() < CODE_MAX_LEN) throw new ErrUnexpectedEnd("prefix code cut off");
    throw new ErrMalformed("bits that begin no code of the model's table");
  }
}

const CRC32 = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();
/** CRC-32 (IEEE), as Go's crc32.ChecksumIEEE and zlib's */
export function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC32[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
/** FNV-1a 64 of b */
export function fnv1a64(b: Uint8Array): bigint {
  // in 16-bit limbs: h = (h ^ byte) * 0x100000001b3 mod 2^64
  let h0 = 0x2325, h1 = 0x8422, h2 = 0x9ce4, h3 = 0xcbf2;
  for (let i = 0; i < b.length; i++) {
    h0 ^= b[i];
    // prime = 2^40 + 0x1b3: h * 0x1b3 + (h << 40)
    let t0 = h0 * 0x1b3, t1 = h1 * 0x1b3, t2 = h2 * 0x1b3 + (h0 << 8), t3 = h3 * 0x1b3 + (h1 << 8);
    t1 += t0 >>> 16; h0 = t0 & 0xffff;
    t2 += t1 >>> 16; h1 = t1 & 0xffff;
    t3 += t2 >>> 16; h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  return (BigInt(h3) << 48n) | (BigInt(h2) << 32n) | (BigInt(h1) << 16n) | BigInt(h0);
}
/** standard base64 (with padding) to bytes */
export function fromBase64(s: string): Uint8Array {
  const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  s = s.replace(/=+$/, "");
  const out = new Uint8Array(Math.floor(s.length * 3 / 4));
  let acc = 0, bits = 0, j = 0;
  for (let i = 0; i < s.length; i++) {
    const v = A.indexOf(s[i]);
    if (v < 0) throw new ErrModel("model file: not base64");
    acc = ((acc << 6) | v) & 0xffffff; bits += 6;
    if (bits >= 8) { bits -= 8; out[j++] = (acc >>> bits) & 0xff; }
  }
  return out;
}

/** a model file (version 2): the layout fingerprint it was trained for and one code per table */
export class Model {
  layout: bigint; hash: bigint; kinds: number[]; codes: Code[];
  private constructor(layout: bigint, hash: bigint, kinds: number[], codes: Code[]) {
    this.layout = layout; this.hash = hash; this.kinds = kinds; this.codes = codes;
  }
  /** reads a model file (Go's Model.UnmarshalBinary); every refusal of the format is ErrModel */
  static parse(b: Uint8Array): Model {
    if (b.length < 20 || b[0] !== 0x42 || b[1] !== 0x57 || b[2] !== 0x4d) throw new ErrModel("not a model file");
    if (b[3] !== 2) throw new ErrModel(`model file version ${b[3]}, want 2`);
    const end = b.length - 4;
    const be32 = (i: number) => ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
    if (crc32(b.subarray(0, end)) !== be32(end)) throw new ErrModel("checksum mismatch");
    const layout = (BigInt(be32(4)) << 32n) | BigInt(be32(8));
    const nt = be32(12);
    let p = 16;
    if (nt * 3 > end - p) throw new ErrModel(`${nt} tables in ${b.length} bytes`);
    const kinds: number[] = [], codes: Code[] = [];
    for (let i = 0; i < nt; i++) {
      if (end - p < 3) throw new ErrModel(`table ${i} cut off`);
      const kind = b[p], s = (b[p + 1] << 8) | b[p + 2];
      p += 3;
      if (kind < TK_MASK || kind > TK_QUAT_DIFF) throw new ErrModel(`table ${i}: kind ${kind}`);
      if (s < 2 || s > end - p) throw new ErrModel(`table ${i}: ${s} symbols`);
      let c: Code;
      try { c = new Code(b.subarray(p, p + s)); } catch (e) { throw e instanceof ErrModel ? new ErrModel(`table ${i}: ${e.detail}`) : e; }
      const esc = c.lens[0]; // a mask table with no codes at all is plain; any other has an ESC of 1..5 bits
      if ((esc < 1 || esc > CODE_ESC_MAX_LEN) && !(kind === TK_MASK && c.plain)) throw new ErrModel(`table ${i}: ESC length ${esc}`);
      p += s;
      kinds.push(kind); codes.push(c);
    }
    if (p !== end) throw new ErrModel(`${end - p} bytes after the tables`);
    return new Model(layout, fnv1a64(b), kinds, codes);
  }
}

/** a model bound to a message's plans: its codes, each struct type's first mask table and each leaf's first table */
export interface ModelTables { codes: Code[]; plans: Map<StructPlan, number>; nodes: Map<Node, number>; }

/** the keys kmin..kmin+rm of a q, range or bits scalar without a window (a modular table's), else null */
function modularRange(n: Node): [bigint, bigint] | null {
  if (n.dlo !== undefined) return null;
  switch (n.k) {
    case "q": return [0n, BigInt(n.steps as number)];
    case "range": return [BigInt(n.min as any), BigInt.asUintN(64, BigInt(n.max as any) - BigInt(n.min as any))];
    case "bits": {
      const w = n.n as number;
      const rm = (1n << BigInt(w)) - 1n;
      return [n.signed && w > 0 ? -(1n << BigInt(w - 1)) : 0n, rm];
    }
  }
  return null;
}
/** the number of magnitude slots of magnitudes of at most b bits (wire-format.md, "Tokens") */
function tokenSlots(b: number): number { return b <= 1 ? b + 1 : 2 * b; }
/** h = floor(R/2) of R = rm + 1 keys */
function modularHalf(rm: bigint): bigint { return (rm >> 1n) + (rm & 1n); }

/**
 * binds m to the message whose root plan is t and whose layout fingerprint is layout: the
 * tables numbered by the walk of wire-format.md ("Tables and their numbering") must be m's,
 * kind by kind and size by size, else ErrModel
 */
export function bindModel(t: StructPlan, m: Model, layout: bigint): ModelTables {
  if (m.layout !== layout) throw new ErrModel(`trained for layout ${m.layout.toString(16).padStart(16, "0")}, not ${layout.toString(16).padStart(16, "0")}`);
  const kinds: number[] = [], syms: number[] = [];
  const plans = new Map<StructPlan, number>(), nodes = new Map<Node, number>();
  const add = (k: number, s: number) => { kinds.push(k); syms.push(s); };
  const walk = (n: Node | undefined): void => {
    if (n === undefined) return;
    if (!nodes.has(n)) {
      let mr: [bigint, bigint] | null;
      if (n.k === "quat") {
        nodes.set(n, kinds.length);
        add(TK_QUAT_MODE, 5);
        for (let i = 1; i < QUAT_TABLES; i++) add(TK_QUAT_DIFF, 1 + tokenSlots(n.n as number));
      } else if (n.dlo !== undefined && n.k !== "struct") {
        nodes.set(n, kinds.length);
        add(TK_WINDOW, 1 + tokenSlots(bitsRequired(Math.max(Math.abs(n.dlo), Math.abs(n.dhi as number)))));
      } else if ((mr = modularRange(n)) !== null) {
        nodes.set(n, kinds.length);
        add(TK_MODULAR, 1 + tokenSlots(bitsRequiredBig(modularHalf(mr[1]))));
      }
    }
    walk(n.e);
    walk(n.key);
    if (n.k === "struct") walkPlan(n.t as StructPlan);
  };
  const walkPlan = (p: StructPlan): void => {
    if (plans.has(p)) return;
    plans.set(p, kinds.length);
    const nf = p.fields.length;
    for (let j = 0; j * 8 < nf; j++) add(TK_MASK, 1 + 2 ** Math.min(8, nf - 8 * j));
    for (const f of p.fields) walk(f.node);
  };
  walkPlan(t);
  if (m.codes.length !== kinds.length) throw new ErrModel(`${m.codes.length} tables, the layout has ${kinds.length}`);
  for (let i = 0; i < kinds.length; i++) {
    if (m.kinds[i] !== kinds[i] || m.codes[i].lens.length !== syms[i]) {
      throw new ErrModel(`table ${i}: kind ${m.kinds[i]} with ${m.codes[i].lens.length} symbols, the layout's is kind ${kinds[i]} with ${syms[i]}`);
    }
  }
  return { codes: m.codes, plans, nodes };
}

/** the model a message's deltas use, as generated code declares it on the root plan (from the schema's "model") */
export interface PlanModel {
  /** the layout fingerprint (the codec's without the model) and the model's hash */
  layout: bigint; hash: bigint;
  /** the model file, base64 */
  file: string;
  /** bound on first use, or the reason it was refused */
  tables?: ModelTables; err?: string;
}
/** the tables of t's model, bound on first use; a model that is refused is ErrModel on every delta */
function modelOf(t: StructPlan): ModelTables | null {
  const pm = t.model;
  if (pm === undefined) return null;
  if (pm.tables) return pm.tables;
  if (pm.err === undefined) {
    try {
      const m = Model.parse(fromBase64(pm.file));
      if (m.hash !== pm.hash) throw new ErrModel(`the model file hashes to ${m.hash.toString(16).padStart(16, "0")}, not ${pm.hash.toString(16).padStart(16, "0")}`);
      pm.tables = bindModel(t, m, pm.layout);
      return pm.tables;
    } catch (e) {
      if (!(e instanceof BitwireError)) throw e;
      pm.err = e.detail;
    }
  }
  throw new ErrModel(pm.err);
}

/**
 * the baseline (packed: [m, a, b, c]) of a relative quaternion of the given rank (0..3), as
 * [m_C, b_0, b_1, b_2]: rank 0 keeps its dropped component m_B and its indexes; rank r > 0
 * drops the baseline's component of rank r instead, re-expressing it in integers
 * (wire-format.md, "Quaternions in deltas")
 */
function quatRebase(qq: QuatCoder, pb: number[], rank: number): number[] {
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

/** the state of a delta decode: Decoder plus the delta walk */
export class DeltaDecoder extends Decoder {
  /** the message's model, or null: without one, the codes that adapt within the message */
  m: ModelTables | null = null;
  /** a struct's delta against baseline b; skip is the id field of an entity (no changed bit) */
  structDelta(t: StructPlan, b: any, skip: number): any {
    if (++this.depth > this.maxDepth) throw new ErrMalformed("nesting deeper than " + this.maxDepth);
    if (this.m !== null) {
      const v = this.structDeltaModel(t, b, skip, this.m);
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
    const r = this.r;
    const sym = c.read(r);
    if (sym === 0) return false;
    const s = sym - 1;
    this.tm = 0; this.tneg = false;
    if (s === 0) return true;
    if (s < 4) this.tm = s;
    else {
      const x = (s >> 1) - 1;
      this.tm = x <= 50 ? (2 + (s & 1)) * 2 ** x + r.read(x) : (BigInt(2 + (s & 1)) << BigInt(x)) | r.readBig(x);
    }
    this.tneg = r.bool();
    return true;
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
  /** a changed quaternion with a model: the mode (ESC: absolute), then three differences by context */
  private quatDeltaModel(n: Node, b: any, m: ModelTables): any {
    const r = this.r;
    const t0 = m.nodes.get(n) as number;
    const start = r.pos;
    const mode = m.codes[t0].read(r);
    if (mode === 0) return this.node(n);
    const qq = qc(n);
    let pb: number[];
    try { pb = qq.pack(loadQuat(n, b)); } catch (e) { if (e instanceof BitwireError) e.detail = "baseline: " + e.detail; throw e; }
    const rank = mode - 1;
    const bb = quatRebase(qq, pb, rank);
    const e = [0, 0, 0];
    const p = [bb[0], 0, 0, 0];
    for (let k = 0; k < 3; k++) {
      const tab = k === 0 ? rank : k === 1 ? 4 + Math.min(bitsRequired(Math.abs(e[0])), QUAT_CLASSES - 1)
        : 4 + QUAT_CLASSES + Math.min(bitsRequired(Math.floor((Math.abs(e[0]) + Math.abs(e[1]) + 1) / 2)), QUAT_CLASSES - 1);
      let v: number;
      if (this.token(m.codes[t0 + 1 + tab])) v = this.tneg ? -(this.tm as number) : this.tm as number;
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
    if (q < u) m = q * 2 ** k + r.read(k);
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
  /** a relative quaternion (wire version 4, wire-format.md "Quaternions in deltas") */
  quatDelta(n: Node, b: any): any {
    const qq = qc(n);
    const r = this.r;
    const st = this.slot(n, 32);
    const start = r.pos;
    let pos = 0;
    while (pos < 4 && r.bool()) pos++;
    const mode = (st.abs ? [4, 0, 1, 2, 3] : [0, 1, 4, 2, 3])[pos];
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
      const i = prev + 1 + qn * 2 ** k + r.read(k);
      if (i >= n) throw new ErrMalformed(`index ${i} past ${n}`);
      idx.push(i);
      prev = i;
    }
    return idx;
  }
  sliceDelta(n: Node, b: any[]): any[] {
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
        try { out[i] = this.valueDelta(n.e as Node, b[i]); } catch (e) { throw wrap(e, `[${i}]`); }
      } else out[i] = b[i];
    }
    for (let i = common; i < l; i++) {
      try { out[i] = this.node(n.e as Node); } catch (e) { throw wrap(e, `[${i}]`); }
    }
    return out;
  }
  entityDelta(n: Node, b: any[]): any[] {
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
    const out = new Array(l);
    const t = (n.e as Node).t as StructPlan;
    let bi = 0, ai = 0, ri = 0, ci = 0, k = 0;
    for (let j = 0; j < l;) {
      if (ai < added.length && added[ai] === j) { ai++; j++; continue; }
      if (ri < removed.length && removed[ri] === bi) { ri++; bi++; continue; }
      if (bi >= b.length) throw new ErrMalformed("entity set survivors run past the baseline");
      if (ci < changed.length && changed[ci] === k) {
        ci++;
        try { out[j] = this.structDelta(t, b[bi], n.id as number); } catch (e) { throw wrap(e, `[${j}]`); }
      } else out[j] = b[bi];
      j++; bi++; k++;
    }
    for (const j of added) {
      try { out[j] = this.node(n.e as Node); } catch (e) { throw wrap(e, `[${j}]`); }
    }
    return out;
  }
  mapDelta(n: Node, b: Map<any, any>): Map<any, any> {
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
        try { m.set(bk[i], this.valueDelta(n.e as Node, b.get(bk[i]))); } catch (e) { throw wrap(e, `[${bk[i]}]`); }
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

// ---- whole messages ----

function checkPadding(r: BitReader): boolean {
  const rem = r.remaining();
  if (rem >= 8) return false;
  return r.read(rem) === 0;
}
function trailing(r: BitReader, t: StructPlan): void {
  if (!checkPadding(r)) throw new ErrTrailingData(`${r.remaining()} bits left`).within(t.name);
}
function named(e: unknown, t: StructPlan): unknown { return wrap(e, t.name); }

/** decodes one message from a shared stream (no padding check) */
export function decodeFrom<T>(t: StructPlan, r: BitReader): T {
  const d = new Decoder(r, t);
  let v: T;
  try { v = d.struct(t); } catch (e) { throw named(e, t); }
  d.end(t);
  return v;
}
/** decodes one whole message (Go's Unmarshal): trailing bytes or non-zero padding are ErrTrailingData */
export function decode<T>(t: StructPlan, data: Uint8Array): T {
  const r = new BitReader(data);
  const v = decodeFrom<T>(t, r);
  trailing(r, t);
  return v;
}
/** decodes a delta against base from a shared stream (Go's DecodeDelta) */
export function decodeDeltaFrom<T>(t: StructPlan, r: BitReader, base: T): T {
  const d = new DeltaDecoder(r, t);
  let v: T;
  try {
    d.m = modelOf(t);
    v = d.structDelta(t, base, -1);
  } catch (e) { throw named(e, t); }
  d.end(t);
  return v;
}
/** applies a whole delta message to base (Go's UnmarshalDelta); base is not changed */
export function decodeDelta<T>(t: StructPlan, data: Uint8Array, base: T): T {
  const r = new BitReader(data);
  const v = decodeDeltaFrom<T>(t, r, base);
  trailing(r, t);
  return v;
}
/** encodes one message onto a shared stream (Go's Encode) */
export function encodeTo<T>(t: StructPlan, w: BitWriter, v: T): void {
  const start = w.pos;
  const e = new Encoder(w, t);
  try {
    e.begin(false);
    try {
      e.struct(t, v);
    } catch (x) {
      if (x !== NEED_SIGN) throw x;
      w.truncate(start);
      e.begin(true);
      e.struct(t, v);
    }
  } catch (x) {
    w.truncate(start);
    throw named(x, t);
  }
}
/** encodes one whole message (Go's Marshal), padded to a byte */
export function encode<T>(t: StructPlan, v: T): Uint8Array {
  const w = new BitWriter();
  encodeTo(t, w, v);
  return w.bytes().slice();
}
/** what a receiver decodes for v: the server's quantization, for client-side prediction */
export function quantize<T>(t: StructPlan, v: T): T { return decode<T>(t, encode(t, v)); }

// ---- unions ----

/** a union of variant types: the variant's index in BitsRequired(n-1) bits, then the message */
export class Union {
  variants: StructPlan[];
  bits: number;
  constructor(variants: StructPlan[]) { this.variants = variants; this.bits = bitsRequired(variants.length - 1); }
  /** the variant index and the value of the next tagged message on r */
  decodeFrom(r: BitReader): [number, any] {
    const i = r.read(this.bits);
    if (i >= this.variants.length) throw new ErrUnknownTag(`union tag ${i} of ${this.variants.length} variants`);
    return [i, decodeFrom(this.variants[i], r)];
  }
  encodeTo(w: BitWriter, variant: number, v: any): void {
    if (!(variant >= 0 && variant < this.variants.length)) throw new ErrUnknownTag(`union tag ${variant}`);
    const start = w.pos;
    w.write(variant, this.bits);
    try { encodeTo(this.variants[variant], w, v); } catch (e) { w.truncate(start); throw e; }
  }
}

// ---- snapshots (the client side of package snapshot) ----

export class ErrIntegrity extends BitwireError { constructor(d = "integrity trailer does not match") { super("ErrIntegrity", d); } }
export class ErrFutureTick extends BitwireError { constructor(d = "tick too far ahead") { super("ErrFutureTick", d); } }
export class ErrStateMismatch extends BitwireError { constructor(d = "state hash mismatch") { super("ErrStateMismatch", d); } }

/** the magic of snapshot packet version 2 (the packet starts with 7E B2) */
export const SNAPSHOT_MAGIC = 0xb27e;
/** integrity modes: no trailer, a CRC32C trailer, an HMAC-SHA256-80 trailer */
export const MODE_NONE = 0, MODE_CHECKSUM = 1, MODE_MAC = 2;

/** the header of a snapshot packet */
export interface SnapshotHeader { fingerprint: number; tick: number; mode: number; hashed: boolean; delta: boolean; baseline: number; }

/** reads a snapshot packet header; errors as Go's snapshot.readHeader */
export function readSnapshotHeader(r: BitReader): SnapshotHeader {
  if (r.remaining() < 16) throw new ErrUnexpectedEnd("snapshot header");
  const m = r.read(16);
  if (m !== SNAPSHOT_MAGIC) throw new ErrBadMagic(`magic 0x${m.toString(16)}`);
  const fingerprint = r.read(32);
  const tick = r.read(32);
  const mode = r.read(2);
  if (mode > MODE_MAC) throw new ErrMalformed(`integrity mode ${mode}`);
  const hashed = r.bool();
  const delta = r.bool();
  let baseline = 0;
  if (delta) {
    const d = readBitlen(r, 5) as number;
    if (d >= tick) throw new ErrMalformed(`baseline ${d + 1} ticks before tick ${tick}`);
    baseline = tick - d - 1;
  }
  return { fingerprint, tick, mode, hashed, delta, baseline };
}

/** folds a 64-bit fingerprint to the 32 bits of the packet header */
export function fingerprint32(fp: bigint): number { return Number((fp ^ (fp >> 32n)) & 0xffffffffn); }

const CRC32C = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();
/** CRC-32C (Castagnoli), as Go's crc32.Checksum with the Castagnoli table */
export function crc32c(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC32C[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const SHA_K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 (FIPS 180-4) of b */
export function sha256(b: Uint8Array): Uint8Array {
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const n = b.length;
  const total = Math.ceil((n + 9) / 64) * 64;
  const m = new Uint8Array(total);
  m.set(b);
  m[n] = 0x80;
  const dv = new DataView(m.buffer);
  dv.setUint32(total - 8, Math.floor(n / 0x20000000), false);
  dv.setUint32(total - 4, (n * 8) >>> 0, false);
  const w = new Uint32Array(64);
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + 4 * i, false);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15], y = w[i - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + SHA_K[i] + w[i]) >>> 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const mj = (a & bb) ^ (a & c) ^ (bb & c);
      const t2 = (S0 + mj) >>> 0;
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = bb; bb = a; a = (t1 + t2) >>> 0;
    }
    h[0] = (h[0] + a) >>> 0; h[1] = (h[1] + bb) >>> 0; h[2] = (h[2] + c) >>> 0; h[3] = (h[3] + d) >>> 0;
    h[4] = (h[4] + e) >>> 0; h[5] = (h[5] + f) >>> 0; h[6] = (h[6] + g) >>> 0; h[7] = (h[7] + hh) >>> 0;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(4 * i, h[i], false);
  return out;
}

/** HMAC-SHA256 (RFC 2104) of msg under key */
export function hmacSha256(key: Uint8Array, msg: Uint8Array): Uint8Array {
  const k = new Uint8Array(64);
  k.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + msg.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) { inner[i] = k[i] ^ 0x36; outer[i] = k[i] ^ 0x5c; }
  inner.set(msg, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

/** what a receiver sends back for a packet: the tick, its token, and whether a full snapshot is needed */
export interface SnapshotAck { tick: number; token: number; missingBaseline: boolean; stateMismatch: boolean; }

/** the 9 bytes of an ack: flags, tick (u32 LE), token (u32 LE) */
export function encodeAck(a: SnapshotAck): Uint8Array {
  const b = new Uint8Array(9);
  b[0] = (a.missingBaseline ? 1 : 0) | (a.stateMismatch ? 2 : 0);
  const dv = new DataView(b.buffer);
  dv.setUint32(1, a.tick >>> 0, true);
  dv.setUint32(5, a.token >>> 0, true);
  return b;
}

/** options of a snapshot receiver, as Go's snapshot options */
export interface ReceiverOptions { size?: number; mode?: number; maxAhead?: number; recoverAfter?: number; key?: Uint8Array; }

/**
 * The client side of a snapshot stream (packet version 2): checks each
 * packet's header and integrity trailer, the tick window, keeps the last
 * `size` accepted snapshots as baselines, decodes full snapshots and deltas
 * against the right baseline, checks the state hash, and says what to
 * acknowledge (ack()). A rejected packet changes nothing, except a state
 * mismatch, which drops the baselines.
 */
export class SnapshotReceiver<T> {
  t: StructPlan;
  fp: number;
  size: number; mode: number; maxAhead: number; recoverAfter: number; key: Uint8Array;
  ticks: number[] = [];
  vals: T[] = [];
  accepted = false;
  newest = 0;
  private run = 0; private runTick = 0; private runBack = false;
  private last: SnapshotAck | null = null;
  constructor(t: StructPlan, fingerprint: bigint, opts: ReceiverOptions = {}) {
    this.t = t; this.fp = fingerprint32(fingerprint);
    this.size = opts.size ?? 32; this.mode = opts.mode ?? MODE_NONE;
    this.maxAhead = opts.maxAhead ?? 300; this.recoverAfter = opts.recoverAfter ?? 8;
    this.key = opts.key ?? new Uint8Array(0);
    if (this.mode < MODE_NONE || this.mode > MODE_MAC) throw new Error(`bitwire: integrity mode ${this.mode}`);
    if ((this.mode === MODE_MAC) !== (this.key.length > 0) || (this.mode === MODE_MAC && this.key.length < 16)) {
      throw new Error("bitwire: a MAC key of at least 16 bytes with mode 2, and none otherwise");
    }
  }
  /** the ack the last decode asks to send, or null */
  ack(): SnapshotAck | null { return this.last; }
  private check(tick: number): void {
    if (!this.accepted) return;
    let err: BitwireError;
    if (tick <= this.newest) err = new ErrStaleTick(`tick ${tick}, newest accepted ${this.newest}`);
    else if (tick - this.newest > this.maxAhead) err = new ErrFutureTick(`tick ${tick} is ${tick - this.newest} ticks past the newest accepted ${this.newest}`);
    else return;
    if (this.recoverAfter <= 0) throw err;
    const back = tick <= this.newest;
    if (back && this.mode === MODE_MAC) throw err; // only modes 0 and 1 rewind
    if (back && this.newest - tick <= 32) throw err; // reordering (ReorderTicks), never a rewind
    if (this.run > 0 && back === this.runBack && tick === this.runTick) {
      // the same packet again
    } else if (this.run > 0 && back === this.runBack && tick > this.runTick && tick - this.runTick <= this.maxAhead) {
      this.run++; this.runTick = tick;
    } else {
      this.run = 1; this.runTick = tick; this.runBack = back;
    }
    if (this.run >= this.recoverAfter) return;
    throw err;
  }
  /** decodes packet: its snapshot and its tick */
  decode(packet: Uint8Array): { tick: number; value: T } {
    this.last = null;
    const h = readSnapshotHeader(new BitReader(packet));
    if (h.fingerprint !== this.fp) throw new ErrProtocolMismatch(`packet 0x${h.fingerprint.toString(16)}, receiver 0x${this.fp.toString(16)}`);
    if (h.mode !== this.mode) throw new ErrProtocolMismatch(`packet's integrity mode ${h.mode}, receiver's ${this.mode}`);
    const over = this.mode === MODE_CHECKSUM ? 4 : this.mode === MODE_MAC ? 10 : 0;
    const n = packet.length - over;
    if (n < 0) throw new ErrUnexpectedEnd("snapshot header");
    const body = packet.subarray(0, n);
    let token: number;
    if (this.mode === MODE_MAC) {
      const mac = hmacSha256(this.key, body);
      let diff = 0;
      for (let i = 0; i < 10; i++) diff |= mac[i] ^ packet[n + i];
      if (diff !== 0) throw new ErrIntegrity("hmac-sha256-80 trailer does not match");
      token = (mac[10] | (mac[11] << 8) | (mac[12] << 16) | (mac[13] << 24)) >>> 0;
    } else {
      token = crc32c(body);
      if (this.mode === MODE_CHECKSUM) {
        const tr = (packet[n] | (packet[n + 1] << 8) | (packet[n + 2] << 16) | (packet[n + 3] << 24)) >>> 0;
        if (tr !== token) throw new ErrIntegrity("crc32c trailer does not match");
      }
    }
    this.check(h.tick);
    const r = new BitReader(body);
    readSnapshotHeader(r);
    let v: T;
    if (h.delta) {
      const i = this.ticks.indexOf(h.baseline);
      if (i < 0) {
        this.last = { tick: h.tick, token, missingBaseline: true, stateMismatch: false };
        throw new ErrNoBaseline(`tick ${h.tick} is a delta against ${h.baseline}`);
      }
      v = decodeDeltaFrom<T>(this.t, r, this.vals[i]);
    } else {
      v = decodeFrom<T>(this.t, r);
    }
    const sum = h.hashed ? r.read(32) : 0;
    trailing(r, this.t);
    if (h.hashed && crc32c(encode(this.t, v)) !== sum) {
      this.ticks = []; this.vals = [];
      this.last = { tick: h.tick, token, missingBaseline: false, stateMismatch: true };
      throw new ErrStateMismatch(`tick ${h.tick}`);
    }
    const rewound = this.accepted && h.tick <= this.newest;
    this.accepted = true; this.newest = h.tick; this.run = 0;
    if (rewound) while (this.ticks.length > 0 && this.ticks[this.ticks.length - 1] >= h.tick) { this.ticks.pop(); this.vals.pop(); }
    if (this.ticks.length > 0 && h.tick <= this.ticks[this.ticks.length - 1]) throw new ErrStaleTick(`tick ${h.tick}, history's newest is ${this.ticks[this.ticks.length - 1]}`);
    this.ticks.push(h.tick); this.vals.push(v);
    if (this.ticks.length > this.size) { this.ticks.shift(); this.vals.shift(); }
    this.last = { tick: h.tick, token, missingBaseline: false, stateMismatch: false };
    return { tick: h.tick, value: v };
  }
  reset(): void { this.ticks = []; this.vals = []; this.accepted = false; this.newest = 0; this.run = 0; this.last = null; }
}

// ---- replication (the client side of package replicate) ----

export class ErrStale extends BitwireError { constructor(d = "stale or duplicate packet") { super("ErrStale", d); } }
export class ErrFuture extends BitwireError { constructor(d = "sequence number too far ahead") { super("ErrFuture", d); } }
export class ErrTooManyEntities extends BitwireError { constructor(d = "too many entities") { super("ErrTooManyEntities", d); } }

/** the magic of replication packets, version 3 (they start with 7F B3), and of their acks (A7 B2) */
export const REPLICATE_MAGIC = 0xb37f, REPLICATE_ACK_MAGIC = 0xb2a7;
/** as Go's replicate constants */
export const BASELINE_DEPTH = 8, REPLICATE_MAX_AHEAD = 1024, REPLICATE_RECOVER_AFTER = 8, REPLICATE_ACK_WINDOW = 32;
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
 * never)
 */
export interface ReplicaOptions { mode?: number; key?: Uint8Array; maxEntities?: number; expiry?: number; }

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
 * version 3): checks the header, the integrity mode and trailer, accepts
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
  expiry: number;
  // the entities held, in slots as Go's (the expiry sweeps them in slot
  // order): each with its kept states, oldest first, and their ticks
  private slots: { id: number; ticks: number[]; vals: T[] }[] = [];
  private free: number[] = [];
  private index: Map<number, number> = new Map();
  private sweep = 0;
  accepted = false;
  newest = 0;
  mask = 0;
  tick = 0;
  private tokens: { seq: number; token: number }[] = Array.from({ length: REPLICATE_ACK_WINDOW + 1 }, () => ({ seq: 0, token: 0 }));
  private missing = { seq: 0, token: 0 };
  private run = 0; private runSeq = 0; private runBack = false;
  constructor(t: StructPlan, fingerprint: bigint, opts: ReplicaOptions = {}) {
    this.t = t; this.fp = fingerprint32(fingerprint);
    this.max = opts.maxEntities ?? (1 << 20);
    this.mode = opts.mode ?? MODE_NONE;
    this.key = opts.key ?? new Uint8Array(0);
    this.expiry = opts.expiry ?? 0;
    if (this.expiry < 0) throw new Error("replicate: negative expiry");
    if (this.max < 1) throw new Error("replicate: max entities under 1");
    if (this.mode < MODE_NONE || this.mode > MODE_MAC) throw new Error(`replicate: integrity mode ${this.mode}`);
    if ((this.mode === MODE_MAC) !== (this.key.length > 0) || (this.mode === MODE_MAC && this.key.length < 16)) {
      throw new Error("replicate: a MAC key of at least 16 bytes with mode 2, and none otherwise");
    }
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
  // the sequence window: package snapshot's TickWindow, rewinding only without a MAC
  private check(seq: number): void {
    if (!this.accepted) return;
    let err: BitwireError;
    if (seq <= this.newest) err = new ErrStale(`replicate: stale or duplicate packet: packet ${seq}, newest accepted ${this.newest}`);
    else if (seq - this.newest > REPLICATE_MAX_AHEAD) err = new ErrFuture(`replicate: sequence number too far ahead: packet ${seq}, newest accepted ${this.newest} (at most ${REPLICATE_MAX_AHEAD} ahead)`);
    else return;
    const back = seq <= this.newest;
    if (back && this.mode === MODE_MAC) throw err;
    if (this.run > 0 && back === this.runBack && seq === this.runSeq) {
      // a duplicate: neither counts nor breaks the run
    } else if (this.run > 0 && back === this.runBack && seq > this.runSeq && seq - this.runSeq <= REPLICATE_MAX_AHEAD) {
      this.run++; this.runSeq = seq;
    } else {
      this.run = 1; this.runSeq = seq; this.runBack = back;
    }
    if (this.run >= REPLICATE_RECOVER_AFTER) return;
    throw err;
  }
  // the trailer: the body before it and the packet's ack token, as snapshot.Integrity's Open
  private open(packet: Uint8Array): { body: Uint8Array; token: number } {
    const over = this.mode === MODE_CHECKSUM ? 4 : this.mode === MODE_MAC ? 10 : 0;
    const n = packet.length - over;
    if (n < 0) throw new ErrUnexpectedEnd("replicate: header: unexpected end of input");
    const body = packet.subarray(0, n);
    if (this.mode === MODE_MAC) {
      const mac = hmacSha256(this.key, body);
      let diff = 0;
      for (let i = 0; i < 10; i++) diff |= mac[i] ^ packet[n + i];
      if (diff !== 0) throw new ErrIntegrity("hmac-sha256-80 trailer does not match");
      return { body, token: (mac[10] | (mac[11] << 8) | (mac[12] << 16) | (mac[13] << 24)) >>> 0 };
    }
    const token = crc32c(body);
    if (this.mode === MODE_CHECKSUM) {
      const tr = (packet[n] | (packet[n + 1] << 8) | (packet[n + 2] << 16) | (packet[n + 3] << 24)) >>> 0;
      if (tr !== token) throw new ErrIntegrity("crc32c trailer does not match");
    }
    return { body, token };
  }
  /** applies one packet and returns what it changed; on any error nothing changes and the packet must not be acknowledged */
  decode(packet: Uint8Array): ReplicaInfo {
    const h = readReplicaHeader(new BitReader(packet));
    if (h.fingerprint !== this.fp) throw new ErrProtocolMismatch(`replicate: protocol mismatch: packet 0x${h.fingerprint.toString(16)}, client 0x${this.fp.toString(16)}`);
    if (h.mode !== this.mode) throw new ErrProtocolMismatch(`replicate: packet integrity ${h.mode}, client ${this.mode}`);
    const { body, token } = this.open(packet);
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
          v = decodeDeltaFrom<T>(this.t, r, ent.vals[i]);
        }
        dec.push({ id, slot, v });
      }
      if (!checkPadding(r)) throw new ErrTrailingData(`${r.remaining()} bits left`);
      if (held > this.max) throw new ErrTooManyEntities(`replicate: too many entities: ${held}, limit ${this.max}`);
    } catch (e) {
      // a body it cannot apply, which passed the trailer (a baseline it
      // lacks, or one a forgery altered): the ack reports it
      if (!(e instanceof ErrTooManyEntities)) this.missing = { seq: h.seq, token };
      if (e instanceof BitwireError) e.message = `replicate: packet ${h.seq} (tick ${h.tick}): ` + e.message;
      throw e;
    }
    // commit: removals, then the entities
    const removed: number[] = [], updated: number[] = [];
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
      updated.push(id);
    }
    if (!this.accepted || h.seq <= this.newest) this.mask = 0;
    else {
      const shift = h.seq - this.newest;
      this.mask = shift > REPLICATE_ACK_WINDOW ? 0 : shift === 32 ? (2 ** 31) >>> 0 : ((this.mask << shift) | (1 << (shift - 1))) >>> 0;
    }
    this.accepted = true; this.newest = h.seq; this.tick = h.tick; this.run = 0;
    this.tokens[h.seq % this.tokens.length] = { seq: h.seq, token };
    if (h.seq > this.missing.seq) this.missing = { seq: 0, token: 0 };
    if (this.expiry !== 0) this.expire(h.tick, removed);
    return { seq: h.seq, tick: h.tick, updated, removed };
  }
  private alloc(id: number): number {
    let slot = this.free.pop();
    if (slot === undefined) { slot = this.slots.length; this.slots.push({ id, ticks: [], vals: [] }); }
    this.slots[slot] = { id, ticks: [], vals: [] };
    this.index.set(id, slot);
    return slot;
  }
  // WithExpiry: drops the entities, among the next 32 slots, whose newest
  // state is more than the expiry away from tick, either way
  private expire(tick: number, removed: number[]): void {
    for (let k = 0; k < 32 && this.slots.length > 0; k++) {
      if (this.sweep >= this.slots.length) this.sweep = 0;
      const slot = this.sweep++;
      const e = this.slots[slot];
      if (this.index.get(e.id) !== slot || e.ticks.length === 0) continue; // a free slot
      if (Math.abs(e.ticks[e.ticks.length - 1] - tick) > this.expiry) {
        this.index.delete(e.id);
        this.free.push(slot);
        removed.push(e.id);
      }
    }
  }
}
