// ---- models: trained code tables for deltas (wire-format.md, "Models") ----
// Prefix codes, model files (parsing, checksums) and binding a model to a
// message's plan.

import { BitwireError, ErrMalformed, ErrUnexpectedEnd } from "./errors.js";
import { BitReader } from "./stream.js";
import { bitsRequired, bitsRequiredBig } from "./codings.js";
import { Node, StructPlan, code, q } from "./plan.js";

/** a model file that is corrupt, of another version, or for another layout (Go's ErrModel) */
export class ErrModel extends BitwireError { constructor(d = "bad model") { super("ErrModel", d); } }

const CODE_MAX_LEN = 15, CODE_ESC_MAX_LEN = 5, CODE_LOOK_BITS = 10;
/** table kinds: struct masks, windowed scalars, modular scalars, quaternion first symbols and differences */
const TK_MASK = 1, TK_WINDOW = 2, TK_MODULAR = 3, TK_QUAT_FIRST = 4, TK_QUAT_DIFF = 5;
/** a quaternion's tables: its first table (the form and the first difference's slot), D1[class 0..7], D2[class 0..7] */
export /* internal */ const QUAT_TABLES = 17, QUAT_CLASSES = 8;

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

/** a model file (version 3 when it holds a quaternion's tables, else 2): the layout fingerprint it was trained for and one code per table */
export class Model {
  layout: bigint; hash: bigint; kinds: number[]; codes: Code[];
  private constructor(layout: bigint, hash: bigint, kinds: number[], codes: Code[]) {
    this.layout = layout; this.hash = hash; this.kinds = kinds; this.codes = codes;
  }
  /** reads a model file (Go's Model.UnmarshalBinary); every refusal of the format is ErrModel */
  static parse(b: Uint8Array): Model {
    if (b.length < 20 || b[0] !== 0x42 || b[1] !== 0x57 || b[2] !== 0x4d) throw new ErrModel("not a model file");
    const version = b[3];
    if (version !== 2 && version !== 3) throw new ErrModel(`model file version ${version}, want 2 or 3`);
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
      // A mask table with no codes at all is plain, and a quaternion difference table that codes
      // every slot may have no ESC; any other has an ESC of 1..5 bits.
      const esc = c.lens[0];
      const escFree = kind === TK_QUAT_DIFF && esc === 0 && c.lens.subarray(1).every((l) => l > 0);
      if ((esc < 1 || esc > CODE_ESC_MAX_LEN) && !(kind === TK_MASK && c.plain) && !escFree) throw new ErrModel(`table ${i}: ESC length ${esc}`);
      p += s;
      kinds.push(kind); codes.push(c);
    }
    if (p !== end) throw new ErrModel(`${end - p} bytes after the tables`);
    // version 3 iff a quaternion's tables are there: version 2's were others (retrain)
    const quat = kinds.some((k) => k === TK_QUAT_FIRST || k === TK_QUAT_DIFF);
    if (quat && version === 2) throw new ErrModel("model file version 2 with quaternion tables, which version 3 replaced: retrain");
    if (!quat && version === 3) throw new ErrModel("model file version 3 without quaternion tables: version 2, its only spelling");
    return new Model(layout, fnv1a64(b), kinds, codes);
  }
}

/** a model bound to a message's plans: its codes, each struct type's first mask table and each leaf's first table */
/**
 * a model bound to a message's plans: its codes, each struct type's first mask table, each leaf's first
 * table, and the struct types whose changed bit their quaternion's first table holds (folded)
 */
export interface ModelTables { codes: Code[]; plans: Map<StructPlan, number>; nodes: Map<Node, number>; folded: Set<StructPlan>; }

/** whether struct type p's changed bit may be folded into its quaternion's first table: one field, a quaternion */
function foldable(p: StructPlan): boolean { return p.fields.length === 1 && p.fields[0].node.k === "quat"; }

/** the keys kmin..kmin+rm of a q, range or bits scalar without a window (a modular table's), else null */
export /* internal */ function modularRange(n: Node): [bigint, bigint] | null {
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
export /* internal */ function modularHalf(rm: bigint): bigint { return (rm >> 1n) + (rm & 1n); }

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
  const walk = (n: Node | undefined, fold = false): void => {
    if (n === undefined) return;
    if (!nodes.has(n)) {
      let mr: [bigint, bigint] | null;
      if (n.k === "quat") {
        nodes.set(n, kinds.length);
        add(TK_QUAT_FIRST, 1 + 4 * tokenSlots(n.n as number) + (fold ? 1 : 0)); // a folded struct's "unchanged" last
        for (let i = 1; i < QUAT_TABLES; i++) add(TK_QUAT_DIFF, 1 + tokenSlots(n.n as number));
      } else if (n.dlo !== undefined && n.k !== "struct") {
        nodes.set(n, kinds.length);
        add(TK_WINDOW, 1 + tokenSlots(bitsRequired(Math.max(Math.abs(n.dlo), Math.abs(n.dhi as number)))));
      } else if ((mr = modularRange(n)) !== null) {
        nodes.set(n, kinds.length);
        add(TK_MODULAR, 1 + tokenSlots(bitsRequiredBig(modularHalf(mr[1]))));
      }
    }
    if (n.k === "array" || n.k === "slice" || n.k === "ptr" || n.k === "map") walk(n.e);
    if (n.k === "map") walk(n.key);
    if (n.k === "struct") walkPlan(n.t);
  };
  const walkPlan = (p: StructPlan): void => {
    if (plans.has(p)) return;
    plans.set(p, kinds.length);
    const nf = p.fields.length;
    for (let j = 0; j * 8 < nf; j++) add(TK_MASK, 1 + 2 ** Math.min(8, nf - 8 * j));
    for (const f of p.fields) walk(f.node, foldable(p));
  };
  walkPlan(t);
  if (m.codes.length !== kinds.length) throw new ErrModel(`${m.codes.length} tables, the layout has ${kinds.length}`);
  for (let i = 0; i < kinds.length; i++) {
    if (m.kinds[i] !== kinds[i] || m.codes[i].lens.length !== syms[i]) {
      throw new ErrModel(`table ${i}: kind ${m.kinds[i]} with ${m.codes[i].lens.length} symbols, the layout's is kind ${kinds[i]} with ${syms[i]}`);
    }
  }
  // folded: a foldable struct whose quaternion's first table codes "unchanged"; its mask table must be plain
  const folded = new Set<StructPlan>();
  for (const [p, t] of plans) {
    if (!foldable(p)) continue;
    const q = m.codes[nodes.get(p.fields[0].node) as number];
    if (q.lens[q.lens.length - 1] === 0) continue;
    if (!m.codes[t].plain) throw new ErrModel(`table ${t}: the mask table of a struct whose changed bit its quaternion's first table holds is not plain`);
    folded.add(p);
  }
  return { codes: m.codes, plans, nodes, folded };
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
export /* internal */ function modelOf(t: StructPlan): ModelTables | null {
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
