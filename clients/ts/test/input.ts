// The input runner of the TypeScript clients: reads the input sequences
// gen's Go test writes (gen/input_delta_test.go) and pushes each into an
// InputSender behind a ConnClient (clients/ts/src/conn.ts): the client's
// packet (the newest inputs, the older ones as deltas written by the
// runtime's encodeDeltaTo) must be Go's, byte for byte. Prints
// "N passed, M failed".
import * as bw from "../src/bitwire.js";
import * as conn from "../src/conn.js";
import { readFileSync } from "fs";

interface Case { mode: number; key: string; red: number; ticks: number[]; inputs: string[]; want: string; }

function hex(b: Uint8Array): string { return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(""); }
function unhex(s: string): Uint8Array {
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16);
  return out;
}

async function main(path: string): Promise<void> {
  const g: any = await import(new URL("../src/gen.js", import.meta.url).href);
  const cases: Case[] = JSON.parse(readFileSync(path, "utf8"));
  let passed = 0, failed = 0;
  const fail = (what: string) => { failed++; if (failed < 15) console.log("FAIL " + what); };
  for (const [i, c] of cases.entries()) {
    let got: string;
    try {
      const key = unhex(c.key);
      const ev = new conn.ReplicaEvents<any>(g.TI.replica({ mode: c.mode, key: c.mode === bw.MODE_MAC ? key : undefined }));
      const ins = new conn.InputSender<any>(g.TI.plan, c.red);
      const cc = new conn.ConnClient(ev, ins, undefined, c.mode, key);
      c.ticks.forEach((tick, k) => ins.push(tick, g.TI.decode(unhex(c.inputs[k]))));
      got = hex(cc.append());
    } catch (e) { got = e instanceof bw.BitwireError ? `${e.name}: ${e.message}` : "other: " + String(e); }
    if (got === c.want) passed++; else fail(`case ${i} (${c.inputs.length} inputs, redundancy ${c.red}): want ${c.want}, got ${got}`);
  }
  console.log(`${passed} passed, ${failed} failed`);
}

main(process.argv[2]);
