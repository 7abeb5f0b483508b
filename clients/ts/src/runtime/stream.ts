// ---- the bit stream ----
// The LSB-first bit reader and writer every coding reads and writes
// (docs/wire-format.md, "Bit order"), and the allocation charge of inputs.

import { ErrTooLong, ErrUnexpectedEnd } from "./errors.js";
import { q } from "./plan.js";

export /* internal */ const P32 = 4294967296;
export /* internal */ const P53 = 9007199254740992;

/**
 * reads an LSB-first bit stream; reading past the end throws ErrUnexpectedEnd.
 *
 * The next bits are cached in a word (up to 32 bits, low bit first), so that most reads are a
 * compare, a shift and a mask; a read the word does not hold takes the rest from the next four
 * bytes, which become the word. pos is the position read to: setting it loads the word anew.
 */
export class BitReader {
  data: Uint8Array;
  end: number;
  /** the input's allocation budget taken so far (chargeZero) */
  spent = 0;
  private at = 0;
  /** the next avail bits of the input from at, low bit first (an int32: avail may be 32) */
  private word = 0;
  /** how many bits word holds: at + avail is a whole byte, at most end, unless at is past the end */
  private avail = 0;
  constructor(data: Uint8Array) {
    this.data = data;
    this.end = data.length * 8;
    this.load(0);
  }
  reset(data: Uint8Array): void {
    this.data = data;
    this.end = data.length * 8;
    this.spent = 0;
    this.load(0);
  }
  /** the bit position: how many bits have been read (or skipped) */
  get pos(): number { return this.at; }
  set pos(p: number) { this.load(p); }
  remaining(): number { return this.end - this.at; }
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
    const a = this.avail;
    if (n < a) { // the word holds them (so n < 32)
      const w = this.word;
      this.word = (w >>> n) | 0;
      this.avail = a - n;
      this.at += n;
      return w & ((1 << n) - 1);
    }
    return this.refill(n);
  }
  /** read when the word holds fewer than n bits */
  private refill(n: number): number {
    if (n === 0) return 0;
    const p = this.at, a = this.avail;
    if (n > this.end - p) throw new ErrUnexpectedEnd();
    const d = this.data, j = (p + a) >>> 3; // the next byte after the word's bits
    if (n < 32 && j + 3 < d.length) {
      // the word's a bits, then n - a from the next four bytes, whose other bits become the word
      const next = d[j] | (d[j + 1] << 8) | (d[j + 2] << 16) | (d[j + 3] << 24);
      const rest = n - a;
      const v = (this.word & ((1 << a) - 1)) | ((next & ((1 << rest) - 1)) << a);
      this.word = (next >>> rest) | 0;
      this.avail = 32 - rest;
      this.at = p + n;
      return v;
    }
    // wider than a word, or near the end of the input: byte by byte
    let v = 0, scale = 1;
    for (let q = p, left = n; left > 0;) {
      const o = q & 7;
      const take = Math.min(8 - o, left);
      v += ((d[q >>> 3] >>> o) & ((1 << take) - 1)) * scale;
      scale *= 2 ** take;
      q += take; left -= take;
    }
    this.load(p + n);
    return v;
  }
  /** moves to bit p and loads the word from there: the four bytes from p's, fewer at the end of the input */
  private load(p: number): void {
    const d = this.data, i = p >>> 3, off = p & 7;
    this.at = p;
    if (i + 3 < d.length) {
      this.word = ((d[i] | (d[i + 1] << 8) | (d[i + 2] << 16) | (d[i + 3] << 24)) >>> off) | 0;
      this.avail = 32 - off;
      return;
    }
    let w = 0, k = 0;
    for (; i + k < d.length; k++) w |= d[i + k] << (8 * k);
    this.word = (w >>> off) | 0;
    this.avail = Math.max(0, 8 * k - off);
  }
  /** n bits, 0 <= n <= 64, as a bigint */
  readBig(n: number): bigint {
    if (n <= 32) return BigInt(this.read(n));
    if (n > this.end - this.at) throw new ErrUnexpectedEnd();
    const lo = this.read(32);
    return (BigInt(this.read(n - 32)) << 32n) | BigInt(lo);
  }
  bool(): boolean { return this.read(1) === 1; }
  /** the next n bits (0 <= n <= 17) without reading them; bits past the end read as 0 */
  peek(n: number): number {
    if (n <= this.avail) return this.word & ((1 << n) - 1);
    const p = this.at, d = this.data, i = p >>> 3;
    const v = ((d[i] | (d[i + 1] << 8) | (d[i + 2] << 16)) >>> (p & 7)) & ((1 << n) - 1);
    const left = this.end - p;
    return left >= n ? v : left > 0 ? v & ((1 << left) - 1) : 0;
  }
  /** moves past n bits; past the end is ErrUnexpectedEnd */
  skip(n: number): void {
    if (n > this.end - this.at) throw new ErrUnexpectedEnd();
    if (n < this.avail) {
      this.word = (this.word >>> n) | 0;
      this.avail -= n;
      this.at += n;
    } else this.load(this.at + n);
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
