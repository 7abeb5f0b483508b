// Snapshot fragments for the TypeScript clients, as Go's snapshot
// package reassembles them (docs/wire-format.md, "Fragments"): a
// snapshot larger than the sender's budget arrives as a block cut into
// numbered fragments, each with its own trailer. A Reassembler collects
// one block at a time and returns it whole, an ordinary snapshot packet
// for SnapshotReceiver.decode, with Go's checks in Go's order; a block
// lost in part is superseded by a newer tick's.
import * as bw from "./bitwire.js";

/** the first 16 bits of a fragment packet: the bytes 7E B4 */
export const FRAGMENT_MAGIC = 0xb47e;
/** the most fragments of a block */
export const MAX_FRAGMENTS = 256;
/** the largest block a Reassembler collects unless told otherwise, bytes */
export const DEFAULT_MAX_BLOCK = 256 << 10;
const HEADER = 16;

/** a fragment kept, the block not whole yet: not a fault, nothing to ack */
export class ErrIncomplete extends bw.BitwireError { constructor(d = "fragment kept, block incomplete") { super("ErrIncomplete", d); } }

/** the header of a fragment packet, as Go's snapshot.FragmentHeader */
export interface FragmentHeader { fingerprint: number; tick: number; mode: number; index: number; count: number; length: number; }

/** whether p starts with the fragment magic */
export function isFragment(p: Uint8Array): boolean { return p.length >= 2 && (p[0] | (p[1] << 8)) === FRAGMENT_MAGIC; }

const u32 = (p: Uint8Array, i: number) => (p[i] | (p[i + 1] << 8) | (p[i + 2] << 16) | (p[i + 3] << 24)) >>> 0;

/** decodes a fragment header, as Go's ParseFragmentHeader (magic, length, consistency; not the fingerprint nor the trailer) */
export function parseFragmentHeader(p: Uint8Array): FragmentHeader {
  if (p.length >= 2 && !isFragment(p)) throw new bw.ErrBadMagic(`fragment: magic 0x${(p[0] | (p[1] << 8)).toString(16)}`);
  if (p.length < HEADER) throw new bw.ErrUnexpectedEnd("fragment header");
  const h: FragmentHeader = { fingerprint: u32(p, 2), tick: u32(p, 6), mode: p[10] & 3, index: p[11], count: p[12] + 1, length: p[13] | (p[14] << 8) | (p[15] << 16) };
  const size = Math.ceil(h.length / h.count);
  if (h.mode > bw.MODE_MAC) throw new bw.ErrMalformed(`fragment header: integrity mode ${h.mode}`);
  if ((p[10] >> 2) !== 0) throw new bw.ErrMalformed(`fragment header: reserved bits 0x${(p[10] >> 2).toString(16)}`);
  if (h.index >= h.count) throw new bw.ErrMalformed(`fragment header: fragment ${h.index} of ${h.count}`);
  if (h.length < h.count || (h.count - 1) * size >= h.length) throw new bw.ErrMalformed(`fragment header: ${h.length} bytes do not make ${h.count} fragments`);
  return h;
}

/** counts of a Reassembler, as Go's ReassemblyStats */
export interface ReassemblyStats { fragments: number; duplicates: number; blocks: number; superseded: number; }

/**
 * Reassembler: collects the fragments of a SnapshotReceiver's sender (its
 * fp, mode and key) one block at a time, at most maxBlock bytes. add
 * returns the whole block once its last fragment arrives, and throws
 * ErrIncomplete before. One made by forReceiver holds every fragment's
 * tick to that receiver's tick window, as Go's Receiver does (a forged
 * tick far ahead is refused instead of becoming the block collected); one
 * made by the constructor checks ticks only when the block is decoded.
 */
export class Reassembler {
  readonly fp: number; readonly mode: number; readonly key: Uint8Array; readonly maxBlock: number;
  private h: FragmentHeader | null = null;
  private block = new Uint8Array(0);
  private have = new Uint8Array(MAX_FRAGMENTS);
  private got = 0;
  // the receiver whose tick window holds fragments' ticks (forReceiver's)
  private rc: bw.SnapshotReceiver<unknown> | null = null;
  stats: ReassemblyStats = { fragments: 0, duplicates: 0, blocks: 0, superseded: 0 };
  /** fp32 is Fingerprint32 of the codec's fingerprint (a SnapshotReceiver's fp); maxBlock 0 is DEFAULT_MAX_BLOCK, as Go's SetMaxBlock(0) */
  constructor(fp32: number, mode = bw.MODE_NONE, key: Uint8Array = new Uint8Array(0), maxBlock = DEFAULT_MAX_BLOCK) {
    if (!(Number.isInteger(maxBlock) && maxBlock >= 0 && maxBlock < 1 << 24)) throw new Error(`fragment: maxBlock ${maxBlock}`);
    this.fp = fp32 >>> 0; this.mode = mode; this.key = key; this.maxBlock = maxBlock || DEFAULT_MAX_BLOCK;
  }
  /** a Reassembler for what rc decodes */
  static forReceiver(rc: bw.SnapshotReceiver<unknown>, maxBlock = DEFAULT_MAX_BLOCK): Reassembler {
    const f = new Reassembler(rc.fp, rc.mode, rc.key, maxBlock);
    f.rc = rc;
    return f;
  }
  /** takes one fragment packet; returns the block (a snapshot packet) when it is whole */
  add(p: Uint8Array): Uint8Array {
    const h = parseFragmentHeader(p);
    if (h.fingerprint !== this.fp) throw new bw.ErrProtocolMismatch(`fragment 0x${h.fingerprint.toString(16)}, receiver 0x${this.fp.toString(16)}`);
    if (h.mode !== this.mode) throw new bw.ErrProtocolMismatch(`fragment's integrity mode ${h.mode}, receiver's ${this.mode}`);
    const over = this.mode === bw.MODE_CHECKSUM ? 4 : this.mode === bw.MODE_MAC ? 10 : 0;
    const n = p.length - over;
    const body = p.subarray(0, n);
    if (this.mode === bw.MODE_CHECKSUM) {
      if (bw.crc32c(body) !== u32(p, n)) throw new bw.ErrIntegrity("fragment: crc32c trailer does not match");
    } else if (this.mode === bw.MODE_MAC) {
      const mac = bw.hmacSha256(this.key, body);
      let diff = 0;
      for (let i = 0; i < 10; i++) diff |= mac[i] ^ p[n + i];
      if (diff !== 0) throw new bw.ErrIntegrity("fragment: hmac-sha256-80 trailer does not match");
    }
    if (h.length > this.maxBlock) throw new bw.ErrTooLong(`fragment: a block of ${h.length} bytes, at most ${this.maxBlock}`);
    const size = Math.ceil(h.length / h.count), from = h.index * size, to = Math.min(h.length, from + size);
    if (n < HEADER || n - HEADER !== to - from) throw new bw.ErrMalformed(`fragment ${h.index} of ${h.count} at tick ${h.tick}: ${n - HEADER} payload bytes, want ${to - from}`);
    // the fragment's tick is held to the receiver's window as a packet's is
    // (counting toward its runs): a forged tick far ahead does not become
    // the block collected
    if (this.rc) this.rc.checkTick(h.tick);
    const cur = this.h;
    if (cur) {
      if (h.tick < cur.tick && cur.tick - h.tick <= bw.REORDER_TICKS) throw new bw.ErrStaleTick(`fragment of tick ${h.tick}, collecting tick ${cur.tick}`);
      if (h.tick === cur.tick && (h.count !== cur.count || h.length !== cur.length)) throw new bw.ErrMalformed(`fragment at tick ${h.tick}: ${h.count} fragments of ${h.length} bytes, the block's are ${cur.count} of ${cur.length}`);
      // a newer tick, or a block more than REORDER_TICKS ahead of a fragment
      // the window takes (not the stream's), is superseded
      if (h.tick !== cur.tick) { this.stats.superseded++; this.h = null; }
    }
    if (!this.h) {
      this.h = h; this.got = 0; this.have.fill(0);
      if (this.block.length < h.length) this.block = new Uint8Array(h.length);
    }
    if (this.have[h.index]) { this.stats.duplicates++; throw new ErrIncomplete(`fragment ${h.index} of ${h.count} at tick ${h.tick} again`); }
    this.have[h.index] = 1;
    this.block.set(p.subarray(HEADER, n), from);
    this.got++;
    this.stats.fragments++;
    if (this.got < h.count) throw new ErrIncomplete(`${this.got} of ${h.count} fragments at tick ${h.tick}`);
    this.h = null;
    this.stats.blocks++;
    const block = this.block.slice(0, h.length);
    // The block is a snapshot packet of the fragments' tick: its header
    // reads whole (Go's ParseHeader), whatever follows.
    let ok = false;
    try { ok = bw.readSnapshotHeader(new bw.BitReader(block)).tick === h.tick; } catch (e) { if (!(e instanceof bw.BitwireError)) throw e; }
    if (!ok) throw new bw.ErrMalformed(`block of tick ${h.tick}: not a snapshot packet of that tick`);
    return block;
  }
}
