// The arena's page (-arena -web): a player of the arena in a browser, over
// WebTransport (or WebRTC; ?transport=NAME forces one). As the Node client
// (nodeclient/arena.ts) it runs the runtime's conn.ts (inputs with
// redundancy, the reliable channel, connection packets with a CRC32C
// trailer) and interp.ts (the server's clock, interpolation) on code
// generated from the arena's Go types (arena_gen.ts, written by the demo
// at start-up). The arrow keys or WASD steer its player; idle, it wanders
// towards random goals. It sends `up` numbered chat lines, checks the
// server's `down` lines arrive all and in order, and draws every player at
// its clock's render tick. Every quarter second it reports to /report the
// players it drew ("D id render x z", every tenth tick) and its counts
// ("S pushed sent delivered inorder delay"); the server answers with the
// session's figures. window.bitwire holds the page's counts and the
// server's answer, for the browser test (browser_test.go).
import * as bw from "./bitwire.js";
import * as conn from "./conn.js";
import * as interp from "./interp.js";
import { connect, DatagramConn, TransportKind } from "./browser.js";
import { Avatar, Control, Say } from "./arena_gen.js";

interface Config { webtransport: string; certHash: string; webrtc: string; rate: number; loss: number; players: number; up: number; down: number; speed: number; }
interface ServerCounts {
  session: number; Played: number; Recovered: number; Repeated: number; Late: number; Packets: number;
  UpDelivered: number; DownSent: number; UpInOrder: boolean; Samples: number; ErrMean: number; ErrMax: number;
}

const status = {
  transport: "", connected: false, session: 0, player: 0, error: "",
  received: 0, accepted: 0, errors: 0,
  pushed: 0, sent: 0, delivered: 0, inOrder: true, delay: 0, drawn: 0, frames: 0,
  done: false, // every message both ways arrived, and enough was drawn and reported
  server: null as ServerCounts | null,
};
(window as any).bitwire = status;

const $ = (id: string) => document.getElementById(id)!;
function fail(msg: string) {
  console.error(msg);
  if (!status.error) status.error = msg;
  $("error").textContent = msg;
}
function fromB64(s: string): Uint8Array { return Uint8Array.from(atob(s), (c) => c.charCodeAt(0)); }
// nanoseconds, as the clock wants them
const nowNs = () => BigInt(Math.round(performance.now() * 1e6));

let cfg: Config;
let dc: DatagramConn;
const events = new conn.ReplicaEvents<any>(Avatar.replica({ mode: 1 }));
const inputs = new conn.InputSender<any>(Control.plan, 3);
const channel = new conn.Channel(Say as any);
const client = new conn.ConnClient<any, any>(events, inputs, channel, 1);
const ip = new interp.Interpolator<any>(Avatar.plan);
let clock: interp.Clock;
let lines: string[] = [];
const chatLog: string[] = [];

function onPacket(d: Uint8Array) {
  status.received++;
  try {
    const info = client.receive(d);
    if (info) { clock.observe(info.tick, nowNs()); status.accepted++; }
  } catch (e) {
    // Late, duplicated or ahead of a lost baseline: the protocol's own
    // outcomes under loss. Anything else is an error.
    if (!(e instanceof bw.ErrStale || e instanceof bw.ErrNoBaseline || e instanceof bw.ErrFuture)) { status.errors++; fail("receive: " + (e as Error).message); }
  }
  for (let m = channel.receive(); m; m = channel.receive()) {
    const s = m[1];
    if (s.N !== status.delivered) status.inOrder = false;
    status.delivered = s.N + 1;
    chatLog.push(`server: ${s.Text} ${s.N}`);
  }
}

// ---- the player's inputs, one a tick ----

const keys = new Set<string>();
addEventListener("keydown", (e) => keys.add(e.key.toLowerCase()));
addEventListener("keyup", (e) => keys.delete(e.key.toLowerCase()));
let seed = 12345;
function rand(): number { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; }
let goal = [0, 0], pos = [0, 0], stamp = 0, tick = 0, t0 = 0;

function step() {
  tick++;
  const now = nowNs();
  const k = (a: string, b: string) => keys.has(a) || keys.has(b);
  let dx = (k("arrowright", "d") ? 1 : 0) - (k("arrowleft", "a") ? 1 : 0);
  let dz = (k("arrowdown", "s") ? 1 : 0) - (k("arrowup", "w") ? 1 : 0);
  if (dx === 0 && dz === 0) {
    if (Math.hypot(goal[0] - pos[0], goal[1] - pos[1]) < 1 || tick === 1) goal = [rand() * 160 - 80, rand() * 160 - 80];
    const sign = (v: number) => (v > 0.2 ? 1 : v < -0.2 ? -1 : 0);
    dx = sign(goal[0] - pos[0]); dz = sign(goal[1] - pos[1]);
  }
  pos = [Math.max(-99, Math.min(99, pos[0] + dx * cfg.speed)), Math.max(-99, Math.min(99, pos[1] + dz * cfg.speed))];
  // Stamped with the server's tick as the clock estimates it: the page
  // joins a running arena, so it waits for the server's first packet.
  if (stamp !== 0 || status.accepted > 0) {
    stamp = stamp === 0 ? Math.max(1, Math.floor(clock.serverTick(now, 0))) : stamp + 1;
    inputs.push(stamp, { DX: dx, DZ: dz });
    status.pushed++;
  }
  if (tick % 5 === 0 && status.sent < cfg.up) {
    channel.send(0, { From: status.player - 1, N: status.sent, Text: "gl hf " + status.sent });
    chatLog.push(`me: gl hf ${status.sent}`);
    status.sent++;
  }
  const pkt = client.append();
  if (rand() >= cfg.loss) dc.send(pkt); // the arena drops datagrams both ways
  if (tick % 10 === 0) {
    const render = clock.renderTick(now);
    for (let p = 1; p <= cfg.players; p++) {
      const s = ip.sample(events.client, p, render);
      if (s && !s.sample.held) { lines.push(`D ${p} ${render} ${s.value.X} ${s.value.Z}`); status.drawn++; }
    }
  }
  status.delay = clock.delay;
  setTimeout(step, Math.max(0, t0 + (tick + 1) * 1000 / cfg.rate - performance.now()));
}

// ---- reports ----

// Reports go one at a time, in order: a flush waits for the one before it.
let flushing: Promise<void> = Promise.resolve();
function flush(): Promise<void> {
  flushing = flushing.then(report);
  return flushing;
}
async function report(): Promise<void> {
  if (!status.session) return;
  const body = lines.splice(0);
  body.push(`S ${status.pushed} ${status.sent} ${status.delivered} ${status.inOrder} ${status.delay}`);
  try {
    const rsp = await fetch(`/report?session=${status.session}`, { method: "POST", body: body.join("\n") });
    if (!rsp.ok) { fail(`report: ${rsp.status} ${await rsp.text()}`); return; }
    const sv: ServerCounts = await rsp.json();
    status.server = sv;
    status.done = status.sent >= cfg.up && status.delivered >= cfg.down && sv.UpDelivered >= status.sent && sv.Samples >= 50;
  } catch (e) {
    fail("report: " + (e as Error).message);
  }
}
(window as any).bitwireFlush = flush;

async function start() {
  cfg = await (await fetch("/config.json")).json();
  clock = new interp.Clock(cfg.rate);
  const want = new URLSearchParams(location.search).get("transport") as TransportKind | null;
  dc = await connect({
    webtransport: { url: cfg.webtransport, certHash: cfg.certHash ? fromB64(cfg.certHash) : undefined },
    webrtc: { signalURL: cfg.webrtc },
  }, want ? [want] : ["webtransport", "webrtc"]);
  // The hello: the session's number and the player's index, little-endian uint32s.
  const h = dc.hello;
  if (h.length !== 8) throw new Error(`hello of ${h.length} bytes, want 8`);
  const dv = new DataView(h.buffer, h.byteOffset, h.length);
  status.session = dv.getUint32(0, true);
  status.player = dv.getUint32(4, true) + 1;
  seed = status.session * 7919;
  dc.onDatagram = onPacket;
  dc.onClose = (r) => { status.connected = false; fail("session ended: " + r); };
  status.transport = dc.kind;
  status.connected = true;
  $("transport").textContent = `${dc.kind} · player ${status.player}`;
  t0 = performance.now();
  step();
  setInterval(flush, 250);
  requestAnimationFrame(draw);
}

// ---- drawing: every player at the render tick ----

const view = $("view") as HTMLCanvasElement;
const ctx = view.getContext("2d")!;

function draw() {
  status.frames++;
  const W = view.width, H = view.height, s = W / 200;
  ctx.fillStyle = "#0e1116";
  ctx.fillRect(0, 0, W, H);
  ctx.strokeStyle = "#1f2630";
  ctx.lineWidth = 1;
  for (let g = -100; g <= 100; g += 10) {
    ctx.beginPath(); ctx.moveTo((g + 100) * s, 0); ctx.lineTo((g + 100) * s, H); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(0, (g + 100) * s); ctx.lineTo(W, (g + 100) * s); ctx.stroke();
  }
  const render = clock.renderTick(nowNs());
  for (let p = 1; p <= cfg.players; p++) {
    const v = ip.sample(events.client, p, render);
    if (!v) continue;
    const mine = p === status.player;
    ctx.fillStyle = mine ? "#5fe37a" : "#57a7ff";
    ctx.beginPath();
    ctx.arc((v.value.X + 100) * s, (v.value.Z + 100) * s, mine ? 8 : 6, 0, 2 * Math.PI);
    ctx.fill();
  }
  ctx.fillStyle = "#c9d1d9";
  ctx.font = "14px monospace";
  ctx.fillText(`render tick ${render.toFixed(1)} · delay ${clock.delay.toFixed(2)} ticks · jitter ${clock.jitter().toFixed(2)}`, 10, 20);
  $("chat").textContent = chatLog.slice(-40).join("\n");
  const sv = status.server;
  $("counts").textContent =
    `session ${status.session} · received ${status.received} packets, accepted ${status.accepted}, errors ${status.errors}\n` +
    `inputs: ${status.pushed} pushed · server: played ${sv?.Played ?? 0}, recovered by redundancy ${sv?.Recovered ?? 0}, repeated ${sv?.Repeated ?? 0}, late ${sv?.Late ?? 0}\n` +
    `messages: sent ${status.sent} (server got ${sv?.UpDelivered ?? 0}${sv && !sv.UpInOrder ? ", NOT in order" : ""}) · received ${status.delivered} of ${sv?.DownSent ?? 0}${status.inOrder ? "" : ", NOT in order"}\n` +
    `interpolation: drawn ${(sv?.ErrMean ?? 0).toFixed(3)} units from the server's position on average, ${(sv?.ErrMax ?? 0).toFixed(3)} at most (${sv?.Samples ?? 0} samples)`;
  requestAnimationFrame(draw);
}

start().catch((e) => fail("connect: " + (e as Error).message));
