// The union count framing runner of the generated TypeScript clients:
// reads the cases gen's Go test writes (gen/union_count_test.go: one a
// line, kind, hex, count, error sentinel) and checks that the generated
// union's decodeCount and decodeFrom read each packet as Go did (the
// count, or the first error) and that encodeCount writes the same bytes,
// or refuses the same counts. Prints "N passed, M failed".
import * as bw from "../src/bitwire.js";
import { readFileSync } from "fs";

function hex(b: Uint8Array): string { return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(""); }
function unhex(s: string): Uint8Array {
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16);
  return out;
}
function sentinel(e: unknown): string { return e instanceof bw.BitwireError ? e.name : "other: " + String(e); }

async function main(modPath: string, path: string): Promise<void> {
  const Msgs: any = (await import(modPath)).UCMsgs;
  let passed = 0, failed = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line) continue;
    const [kind, hx, ns, err] = line.split("\t");
    const n = Number(ns);
    let got = "";
    if (kind === "decode") {
      const b = unhex(hx);
      try {
        const r = new bw.BitReader(b);
        const count = Msgs.decodeCount(r);
        const msgs: [number, any][] = [];
        for (let i = 0; i < count; i++) msgs.push(Msgs.decodeFrom(r));
        const w = new bw.BitWriter();
        Msgs.encodeCount(w, count);
        for (const [v, m] of msgs) Msgs.encodeTo(w, v, m);
        const again = hex(w.bytes());
        got = count === n && again === hex(b.slice(0, again.length / 2)) ? "" : `count ${count} bytes ${again}`;
      } catch (e) { got = sentinel(e); }
    } else {
      try {
        const w = new bw.BitWriter();
        Msgs.encodeCount(w, n);
        got = hex(w.bytes()) === hx ? "" : "bytes " + hex(w.bytes());
      } catch (e) { got = sentinel(e); }
    }
    if (got === (err ?? "")) passed++;
    else { failed++; if (failed < 10) console.log(`FAIL ${kind} ${hx} ${n}: want ${err || "ok"}, got ${got}`); }
  }
  console.log(`${passed} passed, ${failed} failed`);
}

const [, , corpus] = process.argv;
main(new URL("../src/gen.js", import.meta.url).href, corpus);
