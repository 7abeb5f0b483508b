// ---- the bit stream ----
// The LSB-first bit reader and writer every coding reads and writes
// (docs/wire-format.md, "Bit order"), and the allocation charge of inputs.

import { ErrTooLong, ErrUnexpectedEnd } from "./errors.js";
import { q } from "./plan.js";

export /* internal */ const P32 = 4294967296;
export /* internal */ const P53 = 9007199254740992;

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
