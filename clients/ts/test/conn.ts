// The connection runner of the TypeScript clients: reads the streams gen's
// Go test writes (gen/conn_conformance_test.go) and replays each through a
// ConnClient (clients/ts/src/conn.ts): every server packet must give Go's
// error, events, messages and input ack, and every tick's client packet
// Go's bytes. Prints "N passed, M failed".
import * as bw from "../src/bitwire.js";
import * as conn from "../src/conn.js";
import { readFileSync } from "fs";

interface Result { packet: string; err: string; events: string[] | null; msgs: string[] | null; inputAck: number; }
interface Push { tick: number; dx: number; dy: number; fire: boolean; aim: number; pitch: number; seq: number; }
interface Tick { down: Result[] | null; sends: string[] | null; push: Push; up: string; }
interface Stream { mode: number; key: string; ticks: Tick[]; }

function hex(b: Uint8Array): string { return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(""); }
function unhex(s: string): Uint8Array {
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16);
  return out;
}
function msgText([v, m]: [number, any]): string { return v === 0 ? "chat:" + m.Text : `hit:${m.Target},${m.Damage}`; }

async function main(path: string): Promise<void> {
  const g: any = await import(new URL("../src/gen.js", import.meta.url).href);
  const streams: Stream[] = JSON.parse(readFileSync(path, "utf8"));
  let passed = 0, failed = 0;
  const fail = (what: string) => { failed++; if (failed < 15) console.log("FAIL " + what); };
  for (const [si, s] of streams.entries()) {
    const key = unhex(s.key);
    const rc = g.Ship.replica({ mode: s.mode, key: s.mode === bw.MODE_MAC ? key : undefined });
    const ev = new conn.ReplicaEvents<any>(rc);
    let events: string[] = [];
    ev.onRemove((id) => events.push(`remove ${id}`));
    ev.onAdd((id) => events.push(`add ${id}`));
    ev.onChange((id, _v, paths) => events.push(`change ${id} ${paths.join(" ")}`));
    const ch = new conn.Channel(g.Msgs, { share: 120, queue: 16 });
    const ins = new conn.InputSender<any>(g.Move.plan, 3);
    const c = new conn.ConnClient(ev, ins, ch, s.mode, key);
    for (const [ti, t] of s.ticks.entries()) {
      for (const d of t.down ?? []) {
        events = [];
        let err = "";
        try { c.receive(unhex(d.packet)); } catch (e) { err = e instanceof bw.BitwireError ? e.name : "other: " + String(e); }
        const msgs: string[] = [];
        for (let m = ch.receive(); m; m = ch.receive()) msgs.push(msgText(m));
        const ack = c.inputAck ?? -1;
        const want = JSON.stringify([d.err, d.events ?? [], d.msgs ?? [], d.inputAck]);
        const got = JSON.stringify([err, events, msgs, ack]);
        if (want === got) passed++; else fail(`stream ${si} tick ${ti + 1}: want ${want}, got ${got}`);
      }
      for (const text of t.sends ?? []) ch.send(0, { Text: text });
      const p = t.push;
      ins.push(p.tick, { DX: p.dx, DY: p.dy, Fire: p.fire, Aim: p.aim, Look: { Pitch: p.pitch }, Seq: p.seq });
      const up = hex(c.append());
      if (up === t.up) passed++; else fail(`stream ${si} tick ${ti + 1} client packet: want ${t.up}, got ${up}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
}

main(process.argv[2]);
