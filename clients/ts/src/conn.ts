// The rest of a game's connection for the TypeScript clients, as Go's
// replicate events and package conn: events of a ReplicaClient (removed,
// added, changed with the paths of the changed fields), the reliable
// ordered message Channel of a union, and the client's end of a
// connection (ConnClient: the server's packets in, the client's out).
// docs/replicate.md and docs/clients.md describe them; the formats are
// Go's, byte for byte (gen/conn_conformance_test.go).
import * as bw from "./bitwire.js";

// ---- events ----

/** the paths of what differs from a to b (values of plan t as the runtime decodes them), once each, in wire order: Go's events paths */
export function diffPaths(t: bw.StructPlan, a: any, b: any): string[] {
  const out: string[] = [];
  diffStruct(t, a, b, "", out);
  return out;
}

function join(path: string, name: string): string { return path === "" ? name : path + "." + name; }

function diffStruct(t: bw.StructPlan, a: any, b: any, path: string, out: string[]): void {
  for (const f of t.fields) diffNode(f.node, a[f.name], b[f.name], join(path, f.name), out);
}

function diffNode(n: bw.Node, a: any, b: any, path: string, out: string[]): void {
  switch (n.k) {
    case "struct": diffStruct(n.t as bw.StructPlan, a, b, path, out); return;
    case "array": {
      for (let i = 0; i < (a as any[]).length; i++) diffNode(n.e as bw.Node, a[i], b[i], `${path}[${i}]`, out);
      return;
    }
    case "slice": {
      const xa = a as any[], xb = b as any[];
      if (n.id !== undefined) { diffEntities(n, xa, xb, path, out); return; }
      for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
        if (i >= xa.length || i >= xb.length) out.push(`${path}[${i}]`);
        else diffNode(n.e as bw.Node, xa[i], xb[i], `${path}[${i}]`, out);
      }
      return;
    }
    case "map": {
      const ma = a as Map<any, any>, mb = b as Map<any, any>;
      const keys = new Map<string, any>();
      for (const k of ma.keys()) keys.set(keyText(k), k);
      for (const k of mb.keys()) keys.set(keyText(k), k);
      for (const kt of [...keys.keys()].sort(cmpBytes)) {
        const k = keys.get(kt);
        const p = `${path}[${kt}]`;
        if (!ma.has(k) || !mb.has(k)) out.push(p);
        else diffNode(n.e as bw.Node, ma.get(k), mb.get(k), p, out);
      }
      return;
    }
    case "ptr": {
      if (a === null && b === null) return;
      if (a === null || b === null) { out.push(path); return; }
      diffNode(n.e as bw.Node, a, b, path, out);
      return;
    }
    default:
      if (!equalLeaf(a, b)) out.push(path);
  }
}

function diffEntities(n: bw.Node, a: any[], b: any[], path: string, out: string[]): void {
  const t = (n.e as bw.Node).t as bw.StructPlan;
  const idf = t.fields[n.id as number].name;
  const inA = new Map<string, number>(), inB = new Set<string>();
  a.forEach((e, i) => inA.set(String(e[idf]), i));
  for (const e of b) inB.add(String(e[idf]));
  for (const e of a) if (!inB.has(String(e[idf]))) out.push(`${path}[id=${e[idf]}]`);
  const seen = new Set<string>();
  for (const e of b) {
    const k = String(e[idf]);
    if (seen.has(k)) continue;
    seen.add(k);
    const p = `${path}[id=${e[idf]}]`;
    const j = inA.get(k);
    if (j === undefined) { out.push(p); continue; }
    t.fields.forEach((f, fi) => { if (fi !== n.id) diffNode(f.node, a[j][f.name], e[f.name], p + "." + f.name, out); });
  }
}

// A map key as Go's path prints it: strings quoted (strconv.Quote, the same
// as JSON for printable ASCII), numbers and bools as they are.
function keyText(k: any): string { return typeof k === "string" ? JSON.stringify(k) : String(k); }
function cmpBytes(x: string, y: string): number { return x < y ? -1 : x > y ? 1 : 0; }

function equalLeaf(a: any, b: any): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equalLeaf(x, b[i]));
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => equalLeaf(a[k], b[k]));
  }
  return false;
}

/** a detach function, as the on* methods return */
export type Detach = () => void;

/**
 * ReplicaEvents wraps a ReplicaClient: decode applies a packet and then
 * calls the handlers, as Go's Client does: removals (by the packet, then by
 * the expiry), additions, changes (with the paths that differ from the
 * state held before), each by ascending id. A refused packet calls nothing.
 */
export class ReplicaEvents<T> {
  readonly client: bw.ReplicaClient<T>;
  private onAdds: ((id: number, v: T) => void)[] = [];
  private onRemoves: ((id: number) => void)[] = [];
  private onChanges: ((id: number, v: T, paths: string[]) => void)[] = [];
  constructor(client: bw.ReplicaClient<T>) { this.client = client; }
  onAdd(f: (id: number, v: T) => void): Detach { return attach(this.onAdds, f); }
  onRemove(f: (id: number) => void): Detach { return attach(this.onRemoves, f); }
  onChange(f: (id: number, v: T, paths: string[]) => void): Detach { return attach(this.onChanges, f); }
  /** applies packet (ReplicaClient.decode) and calls the handlers */
  decode(packet: Uint8Array): bw.ReplicaInfo {
    const info = this.client.decode(packet);
    const adds = this.onAdds.slice(), removes = this.onRemoves.slice(), changes = this.onChanges.slice();
    for (const id of info.removed) for (const f of removes) f(id);
    const changed: [number, T, string[]][] = [];
    for (const id of info.updated) {
      const st = this.client.states(id);
      if (!st) continue;
      const v = st.vals[st.vals.length - 1];
      if (st.vals.length === 1) { for (const f of adds) f(id, v); continue; }
      if (changes.length === 0) continue;
      const paths = diffPaths(this.client.t, st.vals[st.vals.length - 2], v);
      if (paths.length > 0) changed.push([id, v, paths]);
    }
    for (const [id, v, paths] of changed) for (const f of changes) f(id, v, paths);
    return info;
  }
}

function attach<F>(list: F[], f: F): Detach {
  list.push(f);
  return () => { const i = list.indexOf(f); if (i >= 0) list.splice(i, 1); };
}

// ---- reliable ordered messages ----

/** Go's conn.ErrQueueFull, ErrMessageTooLarge, ErrBadMagic */
export class ErrQueueFull extends bw.BitwireError { constructor(d = "reliable message queue full") { super("ErrQueueFull", d); } }
export class ErrMessageTooLarge extends bw.BitwireError { constructor(d = "message larger than the channel's share of a packet") { super("ErrMessageTooLarge", d); } }

/** a generated union (its encodeTo, decodeFrom and the count framing) */
export interface UnionCodec {
  encodeTo(w: bw.BitWriter, variant: number, v: any): void;
  decodeFrom(r: bw.BitReader): [number, any];
  encodeCount(w: bw.BitWriter, n: number): void;
  decodeCount(r: bw.BitReader): number;
}

export interface ChannelConfig { queue?: number; resend?: number; share?: number; }

const SEQ_W = 5, MAX_PICK = 64, COUNT_MAX = 11;

/**
 * Channel: Go's conn.Channel, the same section bits: ordered, reliable
 * messages of a union, resent every `resend` packets until acknowledged,
 * within `share` bytes of a packet; delivered in order exactly once.
 */
export class Channel {
  private u: UnionCodec;
  readonly queue: number; readonly resend: number; readonly share: number;
  private out: { enc: Uint8Array; n: number; sent: number; ever: boolean }[] = [];
  private base = 0;
  private next = 0;
  private early: ([number, any] | undefined)[] = [];
  private inbox: [number, any][] = [];
  private owe = false;
  private acked = 0;
  constructor(u: UnionCodec, cfg: ChannelConfig = {}) {
    this.u = u;
    this.queue = cfg.queue || 256; this.resend = cfg.resend || 4; this.share = cfg.share || 200;
  }
  get pending(): number { return this.out.length; }
  /** queues a message of the union's variant; ErrQueueFull, ErrMessageTooLarge, or the codec's errors */
  send(variant: number, v: any): void {
    if (this.out.length >= this.queue) throw new ErrQueueFull(`${this.out.length} messages unacknowledged`);
    const w = new bw.BitWriter();
    this.u.encodeTo(w, variant, v);
    const n = w.pos;
    if (2 * (SEQ_W + 32) + COUNT_MAX + n > this.share * 8) throw new ErrMessageTooLarge(`${n} bits, share ${this.share} bytes`);
    this.out.push({ enc: w.bytes().slice(), n, sent: 0, ever: false });
  }
  /** the next message delivered in order, as [variant, value], or undefined */
  receive(): [number, any] | undefined { return this.inbox.shift(); }
  /** a section is worth writing at packet count tick */
  due(tick: number): boolean {
    if (this.owe || this.acked !== this.next) return true;
    return this.out.some((m) => !m.ever || ((tick - m.sent) >>> 0) >= this.resend);
  }
  write(w: bw.BitWriter, tick: number, room: number): void {
    const start = w.pos;
    bw.writeBitlen(w, this.next, SEQ_W);
    this.owe = false; this.acked = this.next;
    const chosen: number[] = [];
    let used = w.pos - start + COUNT_MAX, prev = -1;
    for (let i = 0; i < this.out.length; i++) {
      const m = this.out[i];
      if (m.ever && ((tick - m.sent) >>> 0) < this.resend) continue;
      const seq = (this.base + i) >>> 0;
      const sb = prev < 0 ? bw.bitlenBits(seq, SEQ_W) : bw.bitlenBits(seq - prev - 1, 3);
      if (used + sb + m.n > room) break;
      used += sb + m.n; prev = seq;
      chosen.push(i);
      if (chosen.length === MAX_PICK) break;
    }
    this.u.encodeCount(w, chosen.length);
    prev = -1;
    for (const i of chosen) {
      const seq = this.base + i;
      if (prev < 0) bw.writeBitlen(w, seq, SEQ_W); else bw.writeBitlen(w, seq - prev - 1, 3);
      prev = seq;
    }
    for (const i of chosen) {
      const m = this.out[i];
      for (let k = 0, left = m.n; left > 0; k++, left -= 8) w.write(m.enc[k] & ((1 << Math.min(8, left)) - 1), Math.min(8, left));
      m.ever = true; m.sent = tick;
    }
  }
  read(r: bw.BitReader): void {
    const ack = bw.readBitlen(r, SEQ_W) as number;
    const n = this.u.decodeCount(r);
    if (n > MAX_PICK) throw new bw.ErrMalformed(`${n} messages in one section`);
    const seqs: number[] = [];
    let prev = -1;
    for (let i = 0; i < n; i++) {
      let v = bw.readBitlen(r, i === 0 ? SEQ_W : 3) as number;
      if (typeof v !== "number") throw new bw.ErrMalformed("message seq past 2^32");
      if (i > 0) v += prev + 1;
      if (v > 0xffffffff) throw new bw.ErrMalformed("message seq past 2^32");
      seqs.push(v); prev = v;
    }
    const msgs: [number, any][] = [];
    for (let i = 0; i < n; i++) msgs.push(this.u.decodeFrom(r));
    const d = (ack - this.base) >>> 0;
    if (d !== 0 && d <= this.out.length && (d | 0) > 0) { this.out.splice(0, d); this.base = ack; }
    this.owe = this.owe || n > 0;
    for (let i = 0; i < n; i++) this.accept(seqs[i], msgs[i]);
  }
  private accept(seq: number, m: [number, any]): void {
    const d = (seq - this.next) | 0;
    if (d < 0 || d >= this.queue || this.inbox.length + d >= this.queue) return;
    while (this.early.length <= d) this.early.push(undefined);
    if (this.early[d] !== undefined) return;
    this.early[d] = m;
    let k = 0;
    while (k < this.early.length && this.early[k] !== undefined) { this.inbox.push(this.early[k] as [number, any]); k++; }
    if (k > 0) { this.next = (this.next + k) >>> 0; this.early.splice(0, k); }
  }
}

// ---- input commands ----

/**
 * Refuses (ErrUnsupportedType) an input type whose deltas the runtime does
 * not write: a message with a trained model. Every coding of a plain input
 * is delta-coded as Go's Codec.EncodeDelta writes it (the runtime's
 * encodeDeltaTo); InputSender checks this when it is made.
 */
export function checkInputPlan(t: bw.StructPlan): void {
  if (t.model) throw new bw.BitwireError("ErrUnsupportedType", `${t.name}: inputs with a model (not delta-coded by this runtime)`);
}

/**
 * InputSender: Go's conn.InputSender, the same section bits: the newest
 * `redundancy` inputs (3 by default) the server has not played, stamped
 * with their ticks, the newest in full and each older one a delta against
 * the next newer.
 */
export class InputSender<I> {
  readonly t: bw.StructPlan;
  readonly redundancy: number;
  private ring: { tick: number; v: I }[] = [];
  private last = -1;
  private acked = -1;
  constructor(t: bw.StructPlan, redundancy = 3) {
    if (!(Number.isInteger(redundancy) && redundancy >= 1 && redundancy <= 16)) throw new Error(`conn: redundancy ${redundancy} outside 1..16`);
    checkInputPlan(t);
    this.t = t; this.redundancy = redundancy;
  }
  /** adds the input for tick, after the last one pushed (ErrTickOrder otherwise) */
  push(tick: number, v: I): void {
    if (this.last >= 0 && ((tick - this.last) | 0) <= 0) throw new bw.BitwireError("ErrTickOrder", `input for tick ${tick} after tick ${this.last}`);
    bw.encode(this.t, v); // refuses a value the codec cannot encode now, not in a packet later
    this.ring.push({ tick: tick >>> 0, v });
    if (this.ring.length > this.redundancy) this.ring.shift();
    this.last = tick >>> 0;
  }
  /** the server played every input up to tick */
  takeAck(tick: number): void { if (this.acked < 0 || ((tick - this.acked) | 0) > 0) this.acked = tick; }
  /** the inputs to send, newest first */
  pending(): { tick: number; v: I }[] {
    const out: { tick: number; v: I }[] = [];
    for (let k = this.ring.length - 1; k >= 0; k--) {
      const e = this.ring[k];
      if (this.acked >= 0 && ((e.tick - this.acked) | 0) <= 0) break;
      out.push(e);
    }
    return out;
  }
  write(w: bw.BitWriter): void {
    const ins = this.pending();
    bw.writeBitlen(w, ins.length - 1, 3);
    w.write(ins[0].tick, 32);
    for (let k = 1; k < ins.length; k++) {
      const gap = (ins[k - 1].tick - ins[k].tick) >>> 0;
      w.bool(gap === 1);
      if (gap !== 1) bw.writeBitlen(w, gap - 2, 5);
    }
    bw.encodeTo(this.t, w, ins[0].v);
    for (let k = 1; k < ins.length; k++) bw.encodeDeltaTo(this.t, w, ins[k - 1].v, ins[k].v);
  }
}

// ---- the client's end of a connection ----

/** the magic of a connection packet (bytes 7F C1) */
export const CONN_MAGIC = 0xc17f;
const CONN_HEADER_BITS = 22;

/**
 * ConnClient: Go's conn.Client: receive applies a server packet (the input
 * ack, the channel's section, the state through the ReplicaEvents), append
 * writes the client's packet (the state's ack, the inputs, the channel's
 * section). inputs and messages may be undefined.
 */
export class ConnClient<T, I = unknown> {
  readonly state: ReplicaEvents<T>;
  readonly inputs?: InputSender<I>;
  readonly messages?: Channel;
  readonly mode: number;
  private key: Uint8Array;
  private packets = 0;
  /** the newest input tick the server played, from its packets (undefined before any) */
  inputAck?: number;
  constructor(state: ReplicaEvents<T>, inputs: InputSender<I> | undefined, messages: Channel | undefined, mode: number, key: Uint8Array = new Uint8Array(0)) {
    this.state = state; this.inputs = inputs; this.messages = messages; this.mode = mode; this.key = key;
  }
  private seal(body: Uint8Array): Uint8Array {
    if (this.mode === bw.MODE_NONE) return body;
    const out = new Uint8Array(body.length + (this.mode === bw.MODE_CHECKSUM ? 4 : 10));
    out.set(body);
    if (this.mode === bw.MODE_CHECKSUM) {
      const c = bw.crc32c(body);
      for (let i = 0; i < 4; i++) out[body.length + i] = (c >>> (8 * i)) & 0xff;
    } else out.set(bw.hmacSha256(this.key, body).subarray(0, 10), body.length);
    return out;
  }
  private open(pkt: Uint8Array): Uint8Array {
    const over = this.mode === bw.MODE_CHECKSUM ? 4 : this.mode === bw.MODE_MAC ? 10 : 0;
    const n = pkt.length - over;
    if (n < 0) throw new bw.ErrUnexpectedEnd("conn: trailer");
    const body = pkt.subarray(0, n);
    if (this.mode === bw.MODE_CHECKSUM) {
      const c = bw.crc32c(body);
      const t = (pkt[n] | (pkt[n + 1] << 8) | (pkt[n + 2] << 16) | (pkt[n + 3] << 24)) >>> 0;
      if (c !== t) throw new bw.ErrIntegrity("conn: crc32c trailer does not match");
    } else if (this.mode === bw.MODE_MAC) {
      const mac = bw.hmacSha256(this.key, body);
      let diff = 0;
      for (let i = 0; i < 10; i++) diff |= mac[i] ^ pkt[n + i];
      if (diff !== 0) throw new bw.ErrIntegrity("conn: hmac-sha256-80 trailer does not match");
    }
    return body;
  }
  /** applies a server packet; returns the state's info, or undefined for a packet without state */
  receive(pkt: Uint8Array): bw.ReplicaInfo | undefined {
    const h = new bw.BitReader(pkt);
    if (h.remaining() < CONN_HEADER_BITS) throw new bw.ErrUnexpectedEnd("conn: header");
    const m = h.read(16);
    if (m !== CONN_MAGIC) throw new bw.ErrBadMagic(`conn: magic 0x${m.toString(16)}`);
    const mode = h.read(2);
    if (mode !== this.mode) throw new bw.ErrProtocolMismatch(`conn: packet integrity ${mode}, ours ${this.mode}`);
    if (!h.bool()) throw new bw.ErrMalformed("conn: a packet of the other direction");
    const body = this.open(pkt);
    const r = new bw.BitReader(body);
    r.read(19);
    const hasAck = r.bool(), hasMsg = r.bool(), hasState = r.bool();
    let inAck = 0;
    if (hasAck) inAck = r.read(32);
    if (hasMsg) {
      if (!this.messages) throw new bw.ErrMalformed("conn: messages without a channel");
      this.messages.read(r);
    }
    if (hasAck) { this.inputAck = inAck; this.inputs?.takeAck(inAck); }
    if (!hasState) {
      const pad = r.remaining();
      if (pad >= 8 || (pad > 0 && r.read(pad) !== 0)) throw new bw.ErrTrailingData("conn: after the sections");
      return undefined;
    }
    const at = (r.pos + 7) >>> 3;
    if (at > body.length) throw new bw.ErrUnexpectedEnd("conn: state");
    return this.state.decode(body.slice(at));
  }
  /** the client's packet of this tick: the state's ack, the inputs not played, and the channel's section when due */
  append(): Uint8Array {
    this.packets = (this.packets + 1) >>> 0;
    const a = this.state.client.ack();
    const hasAck = a.seq !== 0 || a.missing !== 0;
    const hasIn = this.inputs !== undefined && this.inputs.pending().length > 0;
    const hasMsg = this.messages !== undefined && this.messages.due(this.packets);
    const w = new bw.BitWriter();
    w.write(CONN_MAGIC, 16); w.write(this.mode, 2); w.bool(false);
    w.bool(hasAck); w.bool(hasIn); w.bool(hasMsg);
    if (hasAck) {
      w.write(a.seq, 32); w.write(a.mask, 32); w.write(a.token, 32); w.write(a.maskToken, 32);
      w.bool(a.missing !== 0);
      if (a.missing !== 0) { w.write(a.missing, 32); w.write(a.missingToken, 32); }
    }
    if (hasIn) (this.inputs as InputSender<I>).write(w);
    if (hasMsg) (this.messages as Channel).write(w, this.packets, (this.messages as Channel).share * 8);
    return this.seal(w.bytes().slice());
  }
}
