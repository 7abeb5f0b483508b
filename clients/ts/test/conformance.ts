// The conformance runner of the generated TypeScript clients: reads a
// corpus written by gen's Go test (cases of full messages and deltas with
// the value Go's Quantize gives, in a canonical form) and checks that the
// generated code decodes every case to exactly that value and re-encodes
// every full message to identical bytes. Prints "N passed, M failed".
import * as bw from "../src/bitwire.js";
import { readFileSync } from "fs";

interface Case {
  kind?: string; msg: string; full: string; want: string; base?: number; delta?: string; older?: string;
  stream?: number; packet?: string; tick?: number; err?: string; errmsg?: string; mode?: number; ack?: string; key?: string; max?: number; expiry?: number; refresh?: number; tickrate?: number;
}

function hex(b: Uint8Array): string { return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(""); }
function unhex(s: string): Uint8Array {
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16);
  return out;
}
const F = new DataView(new ArrayBuffer(8));
function fbits(v: number): string { F.setFloat64(0, v, false); return "x" + hex(new Uint8Array(F.buffer)); }

/** the canonical form of a value, as gen's Go test writes it */
export function canon(n: bw.Node, v: any): any {
  switch (n.k) {
    case "bool": return v;
    case "bits": case "range": case "varint": case "bitlen": return String(v);
    case "q": case "float": case "fixed": return fbits(v);
    case "string": return hex(new TextEncoder().encode(v));
    case "bytes": return hex(v);
    case "quat": return (n.names ? n.names.map((k) => v[k]) : v).map(fbits);
    case "time": return `${v.sec}:${v.nsec}`;
    case "struct": return (n.t as bw.StructPlan).fields.map((f) => canon(f.node, v[f.name]));
    case "array": case "slice": return (v as any[]).map((x) => canon(n.e as bw.Node, x));
    case "ptr": return v === null ? null : canon(n.e as bw.Node, v);
    case "map": {
      const m = v as Map<any, any>;
      const ks = [...m.keys()];
      const ck = ks.map((k) => canon(n.key as bw.Node, k));
      const order = ks.map((_, i) => i).sort((a, b) => cmpKey(ks[a], ks[b]));
      return order.map((i) => [ck[i], canon(n.e as bw.Node, m.get(ks[i]))]);
    }
  }
  throw new Error("canon: " + (n as bw.NodeBase & { k: string }).k);
}
function cmpKey(a: any, b: any): number {
  if (typeof a === "string") {
    const x = new TextEncoder().encode(a), y = new TextEncoder().encode(b);
    for (let i = 0; i < x.length && i < y.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  }
  if (typeof a === "boolean") return (a ? 1 : 0) - (b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** where two strings first differ, with some context */
function differ(got: string, want: string): string {
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  const from = Math.max(0, i - 60);
  return `at ${i}: got …${got.slice(from, i + 60)}…, want …${want.slice(from, i + 60)}…`;
}

export async function run(modPath: string, corpusPath: string): Promise<void> {
  const mod: any = await import(modPath);
  const lines = readFileSync(corpusPath, "utf8").split("\n").filter((l) => l !== "");
  let passed = 0, failed = 0;
  const fulls: Map<string, any[]> = new Map();
  const report = (what: string) => { if (failed < 20) console.log("FAIL " + (what.length > 400 ? what.slice(0, 400) + "…" : what)); failed++; };
  const receivers: Map<number, bw.SnapshotReceiver<any>> = new Map();
  const replicas: Map<number, bw.ReplicaClient<any>> = new Map();
  for (const line of lines) {
    const c: Case = JSON.parse(line);
    const codec = mod[c.msg];
    if (c.kind === "union") {
      try {
        const data = unhex(c.full);
        const r = new bw.BitReader(data);
        const got: any[] = [];
        const w = new bw.BitWriter();
        while (r.remaining() >= 8 || (r.remaining() > 0 && r.data[r.data.length - 1] >>> (8 - r.remaining()) !== 0)) {
          const [i, v] = codec.decodeFrom(r);
          got.push([i, canon({ k: "struct", t: codec.union.variants[i] }, v)]);
          codec.encodeTo(w, i, v);
        }
        const gs = JSON.stringify(got);
        if (gs !== c.want) { report(`union ${c.full}: decoded ${gs}, want ${c.want}`); continue; }
        if (hex(w.bytes()) !== c.full) { report(`union re-encode ${hex(w.bytes())}, want ${c.full}`); continue; }
        passed++;
      } catch (e) { report(`union ${c.full}: ${(e as Error).name}: ${(e as Error).message}`); }
      continue;
    }
    if (c.kind === "golden" || c.kind === "golden-union") {
      try {
        const data = unhex(c.full ?? "");
        let again: string;
        if (c.kind === "golden") again = hex(codec.encode(codec.decode(data)));
        else {
          const r = new bw.BitReader(data);
          const w = new bw.BitWriter();
          while (r.remaining() >= 8 || (r.remaining() > 0 && r.data[r.data.length - 1] >>> (8 - r.remaining()) !== 0)) {
            const [i, v] = codec.decodeFrom(r);
            codec.encodeTo(w, i, v);
          }
          again = hex(w.bytes());
        }
        if (again !== c.full) { report(`golden ${c.msg}: re-encoded ${again}, want ${c.full}`); continue; }
        passed++;
      } catch (e) { report(`golden ${c.msg}: ${(e as Error).name}: ${(e as Error).message}`); }
      continue;
    }
    if (c.kind === "golden-delta") {
      // a golden delta (testdata/golden/codings.txt): its baseline in full, the delta,
      // and the full encoding of what it decodes to
      try {
        const v = codec.decodeDelta(unhex(c.delta ?? ""), codec.decode(unhex(c.full)));
        const again = hex(codec.encode(v));
        if (again !== c.want) { report(`golden delta ${c.msg}: decoded to ${again}, want ${c.want}`); continue; }
        passed++;
      } catch (e) { report(`golden delta ${c.msg}: ${(e as Error).name}: ${(e as Error).message}`); }
      continue;
    }
    if (c.kind === "golden-predicted") {
      // a golden delta coded from two baselines: the older one and the baseline in full,
      // the delta, and the full encoding of what it decodes to
      try {
        const v = codec.decodePredicted(unhex(c.delta ?? ""), codec.decode(unhex(c.older ?? "")), codec.decode(unhex(c.full)));
        const again = hex(codec.encode(v));
        if (again !== c.want) { report(`golden predicted ${c.msg}: decoded to ${again}, want ${c.want}`); continue; }
        passed++;
      } catch (e) { report(`golden predicted ${c.msg}: ${(e as Error).name}: ${(e as Error).message}`); }
      continue;
    }
    if (c.kind === "damaged") {
      let got: string;
      let msg = "";
      try {
        got = JSON.stringify(canon({ k: "struct", t: codec.plan }, codec.decode(unhex(c.full ?? ""))));
      } catch (e) {
        got = e instanceof bw.BitwireError ? e.name : "other: " + String(e);
        msg = String((e as Error).message);
      }
      const want = c.err ? c.err : c.want;
      if (got !== want) { report(`damaged ${c.msg}: ${differ(got, want)} [${msg}] [Go: ${c.errmsg ?? ""}] (input ${c.full})`); continue; }
      passed++;
      continue;
    }
    if (c.kind === "model-file") {
      // a model file loaded (Go's UnmarshalBinary) and bound to the message's layout (Go's WithModel)
      let got: string;
      try {
        const pm = codec.plan.model as bw.PlanModel;
        bw.bindModel(codec.plan, bw.Model.parse(unhex(c.full)), pm.layout);
        got = "ok";
      } catch (e) { got = e instanceof bw.BitwireError ? e.name : "other: " + String(e); }
      if (got !== (c.err ? c.err : c.want)) { report(`model file ${c.full}: ${got}, want ${c.err ?? c.want}`); continue; }
      passed++;
      continue;
    }
    if (c.kind === "model-swap") {
      // the message's model replaced by another file (key, base64): every delta must fail alike
      const pm = codec.plan.model as bw.PlanModel;
      codec.plan.model = { layout: pm.layout, hash: pm.hash, file: c.key as string };
      const got: string[] = [];
      for (let k = 0; k < 2; k++) {
        try {
          codec.decodeDelta(unhex(c.delta ?? ""), (fulls.get(c.msg) as any[])[c.base as number]);
          got.push("ok");
        } catch (e) { got.push(e instanceof bw.BitwireError ? `${e.name} (${e.message})` : "other: " + String(e)); }
      }
      codec.plan.model = pm;
      if (!got.every((g) => g.startsWith((c.err as string) + " "))) { report(`model swap: ${got.join(", ")}, want ${c.err}`); continue; }
      passed++;
      continue;
    }
    if (c.kind === "damaged-delta") {
      let got: string;
      let msg = "";
      try {
        const base = (fulls.get(c.msg) as any[])[c.base as number];
        got = JSON.stringify(canon({ k: "struct", t: codec.plan }, codec.decodeDelta(unhex(c.delta ?? ""), base)));
      } catch (e) {
        got = e instanceof bw.BitwireError ? e.name : "other: " + String(e);
        msg = String((e as Error).message);
      }
      const want = c.err ? c.err : c.want;
      if (got !== want) { report(`damaged delta ${c.msg}: ${differ(got, want)} [${msg}] [Go: ${c.errmsg ?? ""}] (delta ${c.delta})`); continue; }
      passed++;
      continue;
    }
    if (c.kind === "repl" || c.kind === "repl-golden" || c.kind === "repl-held") {
      // a replication stream: what the client set, removed and holds, or the error, and the ack in bytes
      let rc = replicas.get(c.stream as number);
      if (!rc) {
        rc = codec.replica({
          maxEntities: c.max || undefined, mode: c.mode ?? 0, key: c.key ? unhex(c.key) : undefined,
          expiry: c.expiry, refresh: c.refresh, tickRate: c.tickrate,
        }) as bw.ReplicaClient<any>;
        replicas.set(c.stream as number, rc);
      }
      if (c.kind === "repl-held") {
        // every entity the client holds at the end of its stream, with its tick and state
        let got = "held";
        for (const id of rc.ids().sort((a, b) => a - b)) {
          const e = rc.get(id) as { value: any; tick: number };
          got += ` ${id}@${e.tick}=` + JSON.stringify(canon({ k: "struct", t: codec.plan }, e.value));
        }
        if (got !== c.want) { report(`replication stream ${c.stream} at the end: ${differ(got, c.want)}`); continue; }
        passed++;
        continue;
      }
      let got: string;
      try {
        const info = rc.decode(unhex(c.packet as string));
        if (c.kind === "repl-golden") got = `updated [${info.updated.join(" ")}] removed [${info.removed.join(" ")}]`;
        else {
          got = `seq ${info.seq} tick ${info.tick} removed [${info.removed.join(" ")}] set`;
          for (const id of info.updated) {
            const e = rc.get(id) as { value: any; tick: number };
            got += ` ${id}@${e.tick}=` + JSON.stringify(canon({ k: "struct", t: codec.plan }, e.value));
          }
          got += ` held [${rc.ids().sort((a, b) => a - b).join(" ")}]`;
        }
      } catch (e) {
        got = e instanceof bw.BitwireError ? e.name : "other: " + String(e);
      }
      got += " ack " + hex(bw.encodeReplicaAck(rc.ack()));
      const want = (c.err ? c.err : c.want) + " ack " + (c.ack ?? "");
      if (got !== want) { report(`replication stream ${c.stream}: ${differ(got, want)} (packet ${c.packet})`); continue; }
      passed++;
      continue;
    }
    if (c.kind === "snap") {
      let rc = receivers.get(c.stream as number);
      if (!rc) {
        rc = codec.receiver({ mode: c.mode ?? 0, key: c.key ? unhex(c.key) : undefined }) as bw.SnapshotReceiver<any>;
        receivers.set(c.stream as number, rc);
      }
      let got: string;
      try {
        const { tick, value } = rc.decode(unhex(c.packet as string));
        got = `tick ${tick} ` + JSON.stringify(canon({ k: "struct", t: codec.plan }, value));
      } catch (e) {
        got = e instanceof bw.BitwireError ? e.name : "other: " + String(e);
      }
      const a = rc.ack();
      got += " ack " + (a ? hex(bw.encodeAck(a)) : "");
      const want = (c.err ? c.err : `tick ${c.tick} ${c.want}`) + " ack " + (c.ack ?? "");
      if (got !== want) { report(`snapshot stream ${c.stream}: ${differ(got, want)} (packet ${c.packet})`); continue; }
      passed++;
      continue;
    }
    const plan: bw.StructPlan = codec.plan;
    const root: bw.Node = { k: "struct", t: plan };
    if (!fulls.has(c.msg)) fulls.set(c.msg, []);
    const list = fulls.get(c.msg) as any[];
    try {
      if (c.delta === undefined) {
        c.full ??= ""; // an empty message: Go's JSON leaves the field out
        const v = codec.decode(unhex(c.full));
        list.push(v);
        const got = JSON.stringify(canon(root, v));
        if (got !== c.want) { report(`${c.msg} full ${c.full}: decoded ${differ(got, c.want)}`); continue; }
        const again = hex(codec.encode(v));
        if (again !== c.full) { report(`${c.msg} re-encode: ${again}, want ${c.full}`); continue; }
        const qv = JSON.stringify(canon(root, codec.quantize(v)));
        if (qv !== c.want) { report(`${c.msg} quantize: ${qv}`); continue; }
        passed++;
      } else {
        const base = list[c.base as number];
        const v = codec.decodeDelta(unhex(c.delta), base);
        const got = JSON.stringify(canon(root, v));
        if (got !== c.want) { report(`${c.msg} delta ${c.delta} on #${c.base}: decoded ${differ(got, c.want)}`); continue; }
        passed++;
      }
    } catch (e) {
      report(`${c.msg} ${c.delta ?? c.full}: ${(e as Error).name}: ${(e as Error).message}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  if (failed > 0) process.exitCode = 1;
}

const [, , modPath, corpusPath] = process.argv;
if (modPath && corpusPath) void run(modPath, corpusPath);
