// Timing loops of the generated TypeScript decoders on the bench workloads
// (run by bench/cmd/clientbench, which writes the inputs and generates
// gen.ts). Prints one JSON object: median CPU ns per decode of each workload.
import { readFileSync } from "fs";
import { WorldCodec, SnapshotCodec } from "./gen.js";

const dir = process.argv[2];
const hex = (name: string) => Uint8Array.from(Buffer.from(readFileSync(`${dir}/${name}.hex`, "utf8").trim(), "hex"));
const world = hex("world901"), delta = hex("world901-delta"), snap = hex("snapshot64");
const base = WorldCodec.decode(hex("world901-base"));

// cpu is the CPU time this process has used, in ns (user and system, every
// thread: the JIT and the garbage collector count).
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) * 1000; };

// time warms f up (batches doubled until one takes 200 ms of CPU), then
// returns the median CPU time per call over 9 batches of that size.
function time(f: () => unknown): number {
  const runs: number[] = [];
  let n = 1;
  for (;;) {
    const t0 = cpu();
    for (let i = 0; i < n; i++) f();
    if (cpu() - t0 > 200e6) break;
    n *= 2;
  }
  for (let k = 0; k < 9; k++) {
    const t0 = cpu();
    for (let i = 0; i < n; i++) f();
    runs.push((cpu() - t0) / n);
  }
  runs.sort((a, b) => a - b);
  return runs[4];
}

const out = {
  "world901": time(() => WorldCodec.decode(world)),
  "world901-delta": time(() => WorldCodec.decodeDelta(delta, base)),
  "snapshot64": time(() => SnapshotCodec.decode(snap)),
};
console.log(JSON.stringify(out));
