// The arena's Node client (-arena -node N): a player's connection in
// TypeScript over Node's dgram, with the runtime's connection code
// (conn.ts: events, inputs, the reliable channel, connection packets with
// a CRC32C trailer) and interpolation (interp.ts), on code generated from
// the arena's Go types (arena_gen.ts, written by the demo). It steers its
// player towards random goals and sends the controls as inputs, chats
// every half second until its standard input says "Q" (the end is near),
// checks the server's numbered lines arrive in order, and draws every
// player at its clock's render tick. It prints "PORT n" once bound;
// "D id render x z" for every tenth tick's drawn players, which the demo
// compares with the server's positions; and, when its standard input
// closes, "S pushed sent delivered inorder delay", then exits.
import * as dgram from "node:dgram";
import * as conn from "./conn.js";
import * as interp from "./interp.js";
import { Avatar, Control, Say } from "./arena_gen.js";

function arg(name: string, def: number): number {
  const i = process.argv.indexOf("--" + name);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const serverPort = arg("server", 0), id = arg("id", 0), rate = arg("rate", 30);
const loss = arg("loss", 0), players = arg("players", 1);
let seed = arg("seed", 1) * 7919 + id;
function rand(): number { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; }

const events = new conn.ReplicaEvents<any>(Avatar.replica({ mode: 1 }));
const inputs = new conn.InputSender<any>(Control.plan, 3);
const channel = new conn.Channel(Say as any);
const client = new conn.ConnClient<any, any>(events, inputs, channel, 1);
const clock = new interp.Clock(rate);
const ip = new interp.Interpolator<any>(Avatar.plan);
const sock = dgram.createSocket("udp4");
let pushed = 0, sent = 0, delivered = 0, next = 0, inOrder = true, stamp = 0, tick = 0, quiet = false, ended = false;
process.stdin.on("data", (d) => { if (d.toString().includes("Q")) quiet = true; });
process.stdin.on("end", () => {
  ended = true;
  console.log(`S ${pushed} ${sent} ${delivered} ${inOrder} ${clock.delay}`);
  sock.close();
});
let goal = [0, 0], pos = [0, 0];

sock.on("message", (m) => {
  try {
    const info = client.receive(new Uint8Array(m));
    if (info) clock.observe(info.tick, process.hrtime.bigint());
  } catch (_) { /* a stale or damaged packet: counted by nothing here */ }
  for (let s = channel.receive(); s; s = channel.receive()) {
    if (s[1].N !== next) inOrder = false;
    next = s[1].N + 1;
    delivered++;
  }
});

function step(): void {
  if (ended) return;
  tick++;
  const now = process.hrtime.bigint();
  if (Math.hypot(goal[0] - pos[0], goal[1] - pos[1]) < 1 || tick === 1) goal = [rand() * 160 - 80, rand() * 160 - 80];
  const sign = (v: number) => (v > 0.2 ? 1 : v < -0.2 ? -1 : 0);
  const ctl = { DX: sign(goal[0] - pos[0]), DZ: sign(goal[1] - pos[1]) };
  pos = [pos[0] + ctl.DX * 0.25, pos[1] + ctl.DZ * 0.25];
  stamp = stamp === 0 ? Math.max(1, Math.floor(clock.serverTick(now, 0))) : stamp + 1;
  inputs.push(stamp, ctl);
  pushed++;
  if (tick % 15 === id % 15 && !quiet) {
    channel.send(0, { From: id, N: sent, Text: "gg " + sent });
    sent++;
  }
  const pkt = client.append();
  if (rand() >= loss) sock.send(pkt, serverPort, "127.0.0.1");
  if (tick % 10 === 0) {
    const render = clock.renderTick(now);
    for (let p = 1; p <= players; p++) {
      const s = ip.sample(events.client, p, render);
      if (s && !s.sample.held) console.log(`D ${p} ${render} ${s.value.X} ${s.value.Z}`);
    }
  }
  setTimeout(step, Math.max(0, Number(start + BigInt(tick + 1) * BigInt(Math.round(1e9 / rate)) - process.hrtime.bigint()) / 1e6));
}

let start = 0n;
sock.bind(0, "127.0.0.1", () => {
  console.log(`PORT ${sock.address().port}`);
  start = process.hrtime.bigint();
  step();
});
