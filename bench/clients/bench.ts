// Timing loops of the generated TypeScript decoders on the bench workloads
// (run by bench/cmd/clientbench, which writes the inputs and generates
// gen.ts). Prints one JSON object: median ns per decode of each workload.
import { readFileSync } from "fs";
import { WorldCodec, SnapshotCodec } from "./gen.js";

const dir = process.argv[2];
const hex = (name: string) => Uint8Array.from(Buffer.from(readFileSync(`${dir}/${name}.hex`, "utf8").trim(), "hex"));
const world = hex("world901"), delta = hex("world901-delta"), snap = hex("snapshot64");
const base = WorldCodec.decode(hex("world901-base"));

function time(f: () => unknown): number {
  const runs: number[] = [];
  let n = 1;
  // grow the batch to about 20 ms, then take the median of 15 batches
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f();
    const dt = Number(process.hrtime.bigint() - t0);
    if (dt > 20e6) break;
    n *= 2;
  }
  for (let k = 0; k < 15; k++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f();
    runs.push(Number(process.hrtime.bigint() - t0) / n);
  }
  runs.sort((a, b) => a - b);
  return runs[7];
}

const out = {
  "world901": time(() => WorldCodec.decode(world)),
  "world901-delta": time(() => WorldCodec.decodeDelta(delta, base)),
  "snapshot64": time(() => SnapshotCodec.decode(snap)),
};
console.log(JSON.stringify(out));
