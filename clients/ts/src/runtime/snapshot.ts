// ---- snapshots (the client side of package snapshot) ----
// Snapshot headers, integrity trailers (CRC32C, HMAC-SHA256-80), acks and
// the receiver of a snapshot stream.

import { BitwireError, ErrBadMagic, ErrMalformed, ErrNoBaseline, ErrProtocolMismatch, ErrStaleTick, ErrUnexpectedEnd } from "./errors.js";
import { BitReader } from "./stream.js";
import { readBitlen } from "./codings.js";
import { StructPlan } from "./plan.js";
import { decode, decodeFrom, decodePredictedFrom, encode, trailing } from "./message.js";
import { predicts } from "./predict.js";
import { TickWindow } from "./tickwindow.js";

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

/**
 * checks the integrity trailer of a packet of mode (a CRC32C, or an
 * HMAC-SHA256-80 under key) and returns the body before it and the packet's
 * ack token, as Go's integrity.Guard.Open; short is the ErrUnexpectedEnd
 * text of a packet shorter than its trailer
 */
export /* internal */ function openTrailer(mode: number, key: Uint8Array, packet: Uint8Array, short: string): { body: Uint8Array; token: number } {
  const over = mode === MODE_CHECKSUM ? 4 : mode === MODE_MAC ? 10 : 0;
  const n = packet.length - over;
  if (n < 0) throw new ErrUnexpectedEnd(short);
  const body = packet.subarray(0, n);
  if (mode === MODE_MAC) {
    const mac = hmacSha256(key, body);
    let diff = 0;
    for (let i = 0; i < 10; i++) diff |= mac[i] ^ packet[n + i];
    if (diff !== 0) throw new ErrIntegrity("hmac-sha256-80 trailer does not match");
    return { body, token: (mac[10] | (mac[11] << 8) | (mac[12] << 16) | (mac[13] << 24)) >>> 0 };
  }
  const token = crc32c(body);
  if (mode === MODE_CHECKSUM) {
    const tr = (packet[n] | (packet[n + 1] << 8) | (packet[n + 2] << 16) | (packet[n + 3] << 24)) >>> 0;
    if (tr !== token) throw new ErrIntegrity("crc32c trailer does not match");
  }
  return { body, token };
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
 * packet's header and integrity trailer, the tick window (Go's
 * integrity.TickWindow, rewinding only without a MAC), keeps the last
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
  /** the ticks accepted */
  readonly window: TickWindow;
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
    // with a MAC every tick accepted is the sender's: no rewinds
    this.window = new TickWindow(this.maxAhead, this.recoverAfter, this.mode !== MODE_MAC);
  }
  /** the newest tick accepted, or undefined when none was since creation or reset */
  newestTick(): number | undefined { return this.window.newestTick(); }
  /** the ack the last decode asks to send, or null */
  ack(): SnapshotAck | null { return this.last; }
  /**
   * throws ErrStaleTick or ErrFutureTick when decode would refuse a packet
   * of tick for its tick, counting a refused one toward a recovery run as
   * decode does (a Reassembler holds fragments' ticks to the window so)
   */
  checkTick(tick: number): void {
    const why = this.window.check(tick);
    if (why === null) return;
    const newest = this.window.newestTick() as number;
    if (why === "stale") throw new ErrStaleTick(`tick ${tick}, newest accepted ${newest}`);
    throw new ErrFutureTick(`tick ${tick} is ${tick - newest} ticks past the newest accepted ${newest}`);
  }
  /** decodes packet: its snapshot and its tick */
  decode(packet: Uint8Array): { tick: number; value: T } {
    this.last = null;
    const h = readSnapshotHeader(new BitReader(packet));
    if (h.fingerprint !== this.fp) throw new ErrProtocolMismatch(`packet 0x${h.fingerprint.toString(16)}, receiver 0x${this.fp.toString(16)}`);
    if (h.mode !== this.mode) throw new ErrProtocolMismatch(`packet's integrity mode ${h.mode}, receiver's ${this.mode}`);
    const { body, token } = openTrailer(this.mode, this.key, packet, "snapshot header");
    this.checkTick(h.tick);
    const r = new BitReader(body);
    readSnapshotHeader(r);
    let v: T;
    if (h.delta) {
      const i = this.ticks.indexOf(h.baseline);
      if (i < 0) {
        this.last = { tick: h.tick, token, missingBaseline: true, stateMismatch: false };
        throw new ErrNoBaseline(`tick ${h.tick} is a delta against ${h.baseline}`);
      }
      // a codec that predicts: which older snapshot (wire-format.md, "Snapshot packets")
      let older: T | null = null;
      if (predicts(this.t) && r.bool()) {
        const d = readBitlen(r, 5) as number;
        if (d >= h.baseline) throw new ErrMalformed(`an older baseline ${d + 1} ticks before baseline ${h.baseline}`).within(this.t.name);
        const j = this.ticks.indexOf(h.baseline - d - 1);
        if (j < 0) {
          this.last = { tick: h.tick, token, missingBaseline: true, stateMismatch: false };
          throw new ErrNoBaseline(`tick ${h.tick} is a delta against ${h.baseline} predicted from ${h.baseline - d - 1}`);
        }
        older = this.vals[j];
      }
      v = decodePredictedFrom<T>(this.t, r, older, this.vals[i]);
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
    if (this.window.accept(h.tick)) while (this.ticks.length > 0 && this.ticks[this.ticks.length - 1] >= h.tick) { this.ticks.pop(); this.vals.pop(); }
    if (this.ticks.length > 0 && h.tick <= this.ticks[this.ticks.length - 1]) throw new ErrStaleTick(`tick ${h.tick}, history's newest is ${this.ticks[this.ticks.length - 1]}`);
    this.ticks.push(h.tick); this.vals.push(v);
    if (this.ticks.length > this.size) { this.ticks.shift(); this.vals.shift(); }
    this.last = { tick: h.tick, token, missingBaseline: false, stateMismatch: false };
    return { tick: h.tick, value: v };
  }
  /** forgets every snapshot received, as for a new connection: any tick is accepted next, but only a full snapshot until a baseline is held again */
  reset(): void { this.ticks = []; this.vals = []; this.window.reset(); this.last = null; }
}
