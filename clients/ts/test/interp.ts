// The interpolation runner of the TypeScript clients: replays the ticks
// gen's Go test writes (gen/interp_conformance_test.go) through a replica
// client, a Clock and an Interpolator (clients/ts/src/interp.ts), and
// checks Go's clock figures and sampled states, each tick. Prints
// "N passed, M failed".
import * as bw from "../src/bitwire.js";
import * as interp from "../src/interp.js";
import { readFileSync } from "fs";

interface Smp { id: number; has: boolean; from?: number; to?: number; frac: number; held: boolean; teleport: boolean; value: any; }
interface Tick { packet: string; at: number; now: number; tick: number; drift: number; jitter: number; delay: number; render: number; samples: Smp[]; }

function unhex(s: string): Uint8Array {
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16);
  return out;
}
function near(a: number, b: number, tol: number): boolean { return Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b)); }
// deep comparison of a Go JSON value with a runtime value: numbers within tol, nil slices as empty
function same(want: any, got: any, tol: number): boolean {
  if (want === null && Array.isArray(got)) return got.length === 0;
  if (typeof want === "number") return typeof got === "number" && near(want, got, tol);
  if (Array.isArray(want)) return Array.isArray(got) && want.length === got.length && want.every((x, i) => same(x, got[i], tol));
  if (want !== null && typeof want === "object") return got !== null && typeof got === "object" && Object.keys(want).every((k) => same(want[k], got[k], tol));
  return want === got;
}

async function main(path: string): Promise<void> {
  const g: any = await import(new URL("../src/gen.js", import.meta.url).href);
  const ticks: Tick[] = JSON.parse(readFileSync(path, "utf8"));
  const rc = g.Mob.replica();
  const clock = new interp.Clock(30);
  const ip = new interp.Interpolator<any>(g.Mob.plan, 50);
  let passed = 0, failed = 0;
  const check = (ok: boolean, what: string) => { if (ok) passed++; else { failed++; if (failed < 15) console.log("FAIL " + what); } };
  for (const [i, t] of ticks.entries()) {
    if (t.packet) {
      const info = rc.decode(unhex(t.packet));
      clock.observe(info.tick, BigInt(t.at));
    }
    const now = BigInt(t.now);
    const got = [clock.tick(now), clock.drift(), clock.jitter(), clock.delay, clock.renderTick(now)];
    const want = [t.tick, t.drift, t.jitter, t.delay, t.render];
    check(got.every((x, k) => near(want[k], x, 1e-9)), `tick ${i + 1} clock: want ${want}, got ${got}`);
    for (const s of t.samples) {
      const r = ip.sample(rc, s.id, clock.renderTick(now));
      if (!s.has || !r) { check(!s.has && !r, `tick ${i + 1} id ${s.id}: held ${s.has}, got ${!!r}`); continue; }
      const smp = r.sample;
      const ok = smp.from === s.from && smp.to === s.to && near(s.frac, smp.frac, 1e-9) && smp.held === s.held && smp.teleport === s.teleport && same(s.value, r.value, 1e-6);
      check(ok, `tick ${i + 1} id ${s.id}: want ${JSON.stringify(s)}, got ${JSON.stringify({ ...smp, value: r.value })}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
}

main(process.argv[2]);
