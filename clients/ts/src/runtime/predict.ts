// ---- prediction from two baselines ----
// The predicted baseline of a delta coded from two baselines (Go's
// Codec.MarshalPredicted; wire-format.md, "Prediction from two
// baselines"): base, with each value tagged pred replaced by
// base + (base - older) in keys, clamped to the field's keys; each
// quaternion by its last rotation step applied again.

import { loadQuat, storeQuat } from "./decode.js";
import { Node, QuatNode, StructPlan, q, qc } from "./plan.js";

/** whether node n is, or holds, a value tagged pred (cached on the node) */
function holdsPred(n: Node): boolean {
  if (n._p === undefined) settlePred(n);
  return n._p!;
}

/**
 * settlePred caches on n and on every node below it whether it holds a
 * value tagged pred. Types may hold each other, so whether a struct type
 * predicts is the least fixpoint over every type reachable from n: all
 * start false, and a type turns true once one of its fields holds a pred
 * value, until none changes.
 */
function settlePred(root: Node): void {
  const plans: StructPlan[] = [], nodes: Node[] = [];
  const found = new Set<StructPlan>();
  const walk = (n: Node): void => {
    nodes.push(n);
    switch (n.k) {
      case "struct":
        if (found.has(n.t)) return;
        found.add(n.t);
        plans.push(n.t);
        for (const f of n.t.fields) walk(f.node);
        return;
      case "array": case "slice": case "ptr": walk(n.e); return;
    }
  };
  walk(root);
  const predicting = new Set<StructPlan>();
  const holds = (n: Node): boolean => {
    switch (n.k) {
      case "struct": return predicting.has(n.t);
      case "array": case "slice": case "ptr": return holds(n.e);
      default: return !!n.pred;
    }
  };
  for (let changed = true; changed;) {
    changed = false;
    for (const t of plans) {
      if (!predicting.has(t) && t.fields.some((f) => holds(f.node))) {
        predicting.add(t);
        changed = true;
      }
    }
  }
  for (const n of nodes) n._p = holds(n);
}

/** whether a message of plan t has a value tagged pred: its predicted deltas differ from plain ones */
export function predicts(t: StructPlan): boolean { return t.fields.some((f) => holdsPred(f.node)); }

/** the predicted baseline of a struct: a new object; base and older are not changed */
export /* internal */ function predictStruct(t: StructPlan, base: any, older: any): any {
  const o = t.make();
  for (const f of t.fields) {
    const b = base[f.name];
    o[f.name] = holdsPred(f.node) ? predictNode(f.node, b, older[f.name]) : b;
  }
  return o;
}

function predictNode(n: Node, b: any, o: any): any {
  if (b === null || b === undefined || o === null || o === undefined) return b;
  switch (n.k) {
    case "struct": return predictStruct(n.t, b, o);
    case "ptr": return predictNode(n.e, b, o);
    case "array": case "slice": {
      const out = (b as any[]).slice();
      const os = o as any[];
      if (n.k === "array" || n.id === undefined) {
        for (let i = 0; i < Math.min(out.length, os.length); i++) out[i] = predictNode(n.e, out[i], os[i]);
        return out;
      }
      // an entity set: entities of the same id pair, in one pass as entity deltas walk them
      const t = (n.e as { t: StructPlan }).t;
      const id = t.fields[n.id];
      const key = (v: any) => BigInt.asUintN(64, BigInt(v[id.name]));
      for (let i = 0, j = 0; i < out.length && j < os.length;) {
        const a = key(out[i]), z = key(os[j]);
        if (a === z) { out[i] = predictStruct(t, out[i], os[j]); i++; j++; } else if (a < z) i++; else j++;
      }
      return out;
    }
  }
  return n.pred ? predictLeaf(n, b, o) : b;
}

/** the prediction of one pred scalar (q, range, bits); computed in bigint, so exactly */
function predictLeaf(n: Node, b: any, o: any): any {
  if (n.k === "quat") return predictQuat(n, b, o);
  let lo: bigint, hi: bigint, k1: bigint, k0: bigint;
  switch (n.k) {
    case "q": {
      const qq = q(n);
      try { k1 = BigInt(qq.index(b, false)); k0 = BigInt(qq.index(o, false)); } catch { return b; } // no key: not predicted, as in Go
      lo = 0n; hi = BigInt(qq.steps);
      break;
    }
    case "range": k1 = BigInt(b); k0 = BigInt(o); lo = BigInt(n.min); hi = BigInt(n.max); break;
    case "bits": {
      const w = BigInt(n.n);
      k1 = BigInt(b); k0 = BigInt(o);
      if (n.signed) { lo = -(1n << (w - 1n)); hi = (1n << (w - 1n)) - 1n; } else { lo = 0n; hi = (1n << w) - 1n; }
      break;
    }
    default: return b;
  }
  if (k1 < lo || k1 > hi || k0 < lo || k0 > hi) return b; // no decoded value is out of bounds; Go leaves such a value too
  let p = 2n * k1 - k0;
  if (p < lo) p = lo;
  if (p > hi) p = hi;
  if (n.k === "q") {
    const v = q(n).value(Number(p));
    return n.f32 ? Math.fround(v) : v;
  }
  return typeof b === "bigint" ? p : Number(p);
}

/**
 * the prediction of a pred quaternion: the rotation from older to base applied again, 2(r0·r1)r1 - r0
 * of their unpacked packings, packed; in doubles, each operation rounded alone as in Go
 */
function predictQuat(n: QuatNode, b: any, o: any): any {
  const c = qc(n);
  let p1: number[], p0: number[];
  try { p1 = c.pack(loadQuat(n, b)); p0 = c.pack(loadQuat(n, o)); } catch { return b; } // no packing: not predicted, as in Go
  const r0 = c.unpack(p0), r1 = c.unpack(p1);
  const t2 = 2 * (r0[0] * r1[0] + r0[1] * r1[1] + r0[2] * r1[2] + r0[3] * r1[3]);
  return storeQuat(n, c.unpack(c.pack([t2 * r1[0] - r0[0], t2 * r1[1] - r0[1], t2 * r1[2] - r0[2], t2 * r1[3] - r0[3]])));
}
