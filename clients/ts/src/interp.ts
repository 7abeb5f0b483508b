// Interpolation for the TypeScript clients, as Go's package interp: a
// Clock that fits the server's tick from packet arrivals (drift, jitter,
// an adaptive delay), and an Interpolator that draws an entity between the
// two states a ReplicaClient keeps around the render tick (q and fixed
// lerped, quaternions slerped, teleports held). The same formulas as Go's,
// held to Go's figures by gen/interp_conformance_test.go.
import * as bw from "./bitwire.js";

const FORGET = 0.995;

/** Go's interp.Clock; times are nanoseconds (a bigint or a number), ticks uint32 */
export class Clock {
  readonly rate: number;
  minDelay = 2; maxDelay = 6; factor = 2;
  private started = false;
  private t0 = 0n;
  private k0 = 0;
  private newest = 0;
  private w = 0; private sx = 0; private sy = 0; private sxx = 0; private sxy = 0;
  private jw = 0; private js = 0;
  private n = 0;
  delay = 2;
  constructor(tickRate: number) { this.rate = tickRate > 0 ? tickRate : 30; }
  setDelay(least: number, largest: number, jitters: number): void {
    if (least < 0 || largest < least || jitters < 0) return;
    this.minDelay = least; this.maxDelay = largest; this.factor = jitters;
    this.delay = Math.min(Math.max(this.delay, least), largest);
  }
  // seconds since the first arrival, as Go's Duration.Seconds
  private secs(at: bigint): number {
    const d = at - this.t0;
    const s = d / 1000000000n, ns = d % 1000000000n;
    return Number(s) + Number(ns) / 1e9;
  }
  /** a packet of tick arrived at at (nanoseconds) */
  observe(tick: number, at: bigint): void {
    if (!this.started) { this.started = true; this.t0 = at; this.k0 = tick; this.newest = tick; }
    if (((tick - this.newest) | 0) > 0) this.newest = tick;
    const x = this.secs(at);
    const y = (tick - this.k0) | 0;
    if (this.n >= 2) {
      const r = y - this.fitAt(x);
      this.jw = FORGET * this.jw + 1;
      this.js = FORGET * this.js + r * r;
    }
    this.w = FORGET * this.w + 1;
    this.sx = FORGET * this.sx + x;
    this.sy = FORGET * this.sy + y;
    this.sxx = FORGET * this.sxx + x * x;
    this.sxy = FORGET * this.sxy + x * y;
    this.n++;
    const target = Math.min(Math.max(this.minDelay + this.factor * this.jitter(), this.minDelay), this.maxDelay);
    if (target > this.delay) this.delay = target;
    else this.delay += (target - this.delay) * 0.02;
  }
  private slope(): number {
    const d = this.w * this.sxx - this.sx * this.sx;
    if (this.n < 8 || d <= 1e-9 * this.w * this.w) return this.rate;
    const s = (this.w * this.sxy - this.sx * this.sy) / d;
    return Math.min(Math.max(s, this.rate * 0.9), this.rate * 1.1);
  }
  private fitAt(x: number): number {
    if (this.w === 0) return 0;
    return this.sy / this.w + this.slope() * (x - this.sx / this.w);
  }
  /** the server tick a packet arriving at now typically carries (fractional) */
  tick(now: bigint): number { return this.started ? this.k0 + this.fitAt(this.secs(now)) : 0; }
  /** the tick the server is at now, given the round trip in nanoseconds: for stamping inputs */
  serverTick(now: bigint, rttNs: number): number { return this.tick(now) + (rttNs / 1e9) / 2 * this.slope(); }
  drift(): number { return this.slope() / this.rate - 1; }
  jitter(): number { return this.jw === 0 ? 0 : Math.sqrt(this.js / this.jw); }
  renderTick(now: bigint): number { return this.tick(now) - this.delay; }
}

/** how sample built a state, as Go's interp.Sample */
export interface Sample { from: number; to: number; frac: number; held: boolean; teleport: boolean; }

/** Go's interp.Interpolator over a generated plan */
export class Interpolator<T> {
  readonly t: bw.StructPlan;
  readonly threshold: number;
  readonly teleportFn?: (a: T, b: T) => boolean;
  private lerps = new Map<bw.Node | bw.StructPlan, boolean>();
  constructor(t: bw.StructPlan, threshold = 0, teleport?: (a: T, b: T) => boolean) {
    if (!(threshold >= 0)) throw new Error(`interp: teleport threshold ${threshold}`);
    this.t = t; this.threshold = threshold; this.teleportFn = teleport;
  }
  private markStruct(t: bw.StructPlan): boolean {
    const m = this.lerps.get(t);
    if (m !== undefined) return m;
    this.lerps.set(t, false);
    let v = false;
    for (const f of t.fields) v = this.mark(f.node) || v;
    this.lerps.set(t, v);
    return v;
  }
  private mark(n: bw.Node): boolean {
    switch (n.k) {
      case "q": case "fixed": case "quat": return true;
      case "struct": return this.markStruct(n.t as bw.StructPlan);
      case "array": case "slice": case "ptr": return this.mark(n.e as bw.Node);
    }
    return false;
  }
  /** the state a fraction t of the way from a to b (Go's Lerp); a and b are not changed */
  lerp(a: T, b: T, t: number): T {
    t = Math.min(Math.max(t, 0), 1);
    return this.struct(this.t, a, b, t);
  }
  private struct(p: bw.StructPlan, a: any, b: any, t: number): any {
    if (!this.markStruct(p)) return a;
    const o = Object.assign(p.make(), a);
    for (const f of p.fields) o[f.name] = this.node(f.node, a[f.name], b[f.name], t);
    return o;
  }
  private node(n: bw.Node, a: any, b: any, t: number): any {
    if (!this.mark(n)) return a;
    switch (n.k) {
      case "q": case "fixed": { const v = a + (b - a) * t; return n.f32 ? Math.fround(v) : v; }
      case "quat": return slerp(n, a, b, t);
      case "struct": return this.struct(n.t as bw.StructPlan, a, b, t);
      case "array": return (a as any[]).map((x, i) => this.node(n.e as bw.Node, x, b[i], t));
      case "slice": {
        const xa = a as any[], xb = b as any[];
        if (n.id !== undefined) {
          const idf = (((n.e as bw.Node).t) as bw.StructPlan).fields[n.id].name;
          const at = new Map<string, any>();
          for (const e of xb) at.set(String(e[idf]), e);
          return xa.map((e) => { const o = at.get(String(e[idf])); return o === undefined ? e : this.node(n.e as bw.Node, e, o, t); });
        }
        return xa.length === xb.length ? xa.map((x, i) => this.node(n.e as bw.Node, x, xb[i], t)) : xa;
      }
      case "ptr": return a === null || b === null ? a : this.node(n.e as bw.Node, a, b, t);
    }
    return a;
  }
  /** whether a to b is a teleport */
  teleport(a: T, b: T): boolean {
    if (this.teleportFn) return this.teleportFn(a, b);
    if (this.threshold === 0) return false;
    return this.jumpStruct(this.t, a, b);
  }
  private jumpStruct(p: bw.StructPlan, a: any, b: any): boolean {
    return this.markStruct(p) && p.fields.some((f) => this.jump(f.node, a[f.name], b[f.name]));
  }
  private jump(n: bw.Node, a: any, b: any): boolean {
    if (!this.mark(n)) return false;
    switch (n.k) {
      case "q": case "fixed": return Math.abs(b - a) > this.threshold;
      case "struct": return this.jumpStruct(n.t as bw.StructPlan, a, b);
      case "array": return (a as any[]).some((x, i) => this.jump(n.e as bw.Node, x, b[i]));
      case "slice": return n.id === undefined && a.length === b.length && (a as any[]).some((x, i) => this.jump(n.e as bw.Node, x, b[i]));
      case "ptr": return a !== null && b !== null && this.jump(n.e as bw.Node, a, b);
    }
    return false;
  }
  /** id's state at the render tick from the states rc keeps, or undefined when it holds none */
  sample(rc: bw.ReplicaClient<T>, id: number, render: number): { value: T; sample: Sample } | undefined {
    const st = rc.states(id);
    if (!st || st.ticks.length === 0) return undefined;
    let p = -1;
    while (p + 1 < st.ticks.length && st.ticks[p + 1] <= render) p++;
    if (p < 0) return { value: st.vals[0], sample: { from: st.ticks[0], to: st.ticks[0], frac: 0, held: true, teleport: false } };
    if (p === st.ticks.length - 1) return { value: st.vals[p], sample: { from: st.ticks[p], to: st.ticks[p], frac: 0, held: true, teleport: false } };
    const pt = st.ticks[p], nt = st.ticks[p + 1];
    const s: Sample = { from: pt, to: nt, frac: (render - pt) / (nt - pt), held: false, teleport: false };
    if (this.teleport(st.vals[p], st.vals[p + 1])) { s.teleport = true; return { value: st.vals[p], sample: s }; }
    return { value: this.lerp(st.vals[p], st.vals[p + 1], s.frac), sample: s };
  }
}

function slerp(n: bw.Node, a: any, b: any, t: number): any {
  const get = (v: any, i: number): number => (n.names ? v[n.names[i]] : v[i]);
  const p = [0, 1, 2, 3].map((i) => get(a, i)), q = [0, 1, 2, 3].map((i) => get(b, i));
  let dot = p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3];
  if (dot < 0) { dot = -dot; for (let i = 0; i < 4; i++) q[i] = -q[i]; }
  let wa = 1 - t, wb = t;
  if (dot < 0.9995) {
    const th = Math.acos(Math.min(dot, 1)), s = Math.sin(th);
    wa = Math.sin((1 - t) * th) / s; wb = Math.sin(t * th) / s;
  }
  const r = [0, 1, 2, 3].map((i) => wa * p[i] + wb * q[i]);
  const norm = Math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
  if (norm === 0) return a;
  const f = (x: number) => (n.f32 ? Math.fround(x / norm) : x / norm);
  if (n.names) { const o: any = { ...a }; n.names.forEach((k, i) => { o[k] = f(r[i]); }); return o; }
  return r.map(f);
}
