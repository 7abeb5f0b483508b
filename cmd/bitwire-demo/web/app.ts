// The demo's page (-web): a browser session watching the world. It opens
// a session over WebTransport (or WebRTC, or, asked for, WebSocket; the
// URL parameter ?transport=NAME forces one), decodes the server's
// replicate stream with the TypeScript generated from the demo's Entity
// (entity.ts, written by the demo at start-up), acknowledges every packet,
// draws the world around the watched player, and reports every entity
// state it accepts, encoded in full, to /report, where the server checks
// it against its own record and answers with its counts (the desyncs
// among them). window.bitwire holds the page's counts, for the browser
// test (browser_test.go).
import * as bw from "./bitwire.js";
import { connect, DatagramConn, TransportKind } from "./browser.js";
import { Entity, EntityCodec } from "./entity.js";

interface Config { webtransport: string; certHash: string; webrtc: string; websocket: string; mode: number; expiry: number; rate: number; }
interface ServerCounts { session: number; own: number; tick: number; packets: number; bytes: number; reports: number; checked: number; desyncs: number; unchecked: number; stale_mean: number; stale_max: number; }

const status = {
  transport: "", connected: false, session: 0, error: "" as string,
  received: 0, accepted: 0, stale: 0, noBaseline: 0, recovering: 0, errors: 0, bytes: 0,
  reported: 0, decodeMs: 0, decodeMax: 0, frames: 0,
  decodeTimes: [] as number[], // ms, the first 5000 packets accepted
  server: null as ServerCounts | null,
};
(window as any).bitwire = status;

const $ = (id: string) => document.getElementById(id)!;
// fail shows an error; status.error keeps the first (what went wrong
// first), the console every one.
function fail(msg: string) {
  console.error(msg);
  if (!status.error) status.error = msg;
  $("error").textContent = msg;
}

function fromB64(s: string): Uint8Array { return Uint8Array.from(atob(s), (c) => c.charCodeAt(0)); }
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
function hex(b: Uint8Array): string { let s = ""; for (const x of b) s += HEX[x]; return s; }

// ---- the session ----

let conn: DatagramConn;
let client: bw.ReplicaClient<Entity>;
let lines: string[] = [];
const sizes: number[] = [];        // the last packets' sizes, bytes
const perSecond: number[] = [];    // bits received, by second
const staleness: number[] = [];    // the server's mean ticks behind, by report
let secondBits = 0;

function onPacket(d: Uint8Array) {
  status.received++;
  status.bytes += d.length;
  secondBits += d.length * 8;
  sizes.push(d.length);
  if (sizes.length > 300) sizes.shift();
  let info: bw.ReplicaInfo | null = null;
  const t0 = performance.now();
  try {
    info = client.decode(d);
  } catch (e) {
    if (e instanceof bw.ErrStale) status.stale++;
    else if (e instanceof bw.ErrNoBaseline) status.noBaseline++;
    else if (e instanceof bw.ErrFuture) status.recovering++;
    else { status.errors++; fail("decode: " + (e as Error).message); }
  }
  const dt = performance.now() - t0;
  const ra = client.ack();
  if (info || ra.missing !== 0) conn.send(bw.encodeReplicaAck(ra));
  if (!info) return;
  status.accepted++;
  status.decodeMs += dt;
  status.decodeMax = Math.max(status.decodeMax, dt);
  if (status.decodeTimes.length < 5000) status.decodeTimes.push(dt);
  for (const id of info.updated) {
    const e = client.get(id)!;
    lines.push(`C ${id} ${e.tick} ${hex(EntityCodec.encode(e.value))}`);
  }
  for (const id of info.removed) lines.push(`R ${id}`);
}

// Reports go one at a time, in order: a flush waits for the one before
// it. The count of states reported and the server's reply to them change
// together, once the reply is read, so that a reader never sees one
// without the other.
let flushing: Promise<void> = Promise.resolve();
function flush(): Promise<void> {
  flushing = flushing.then(report);
  return flushing;
}
async function report(): Promise<void> {
  if (!status.session) return; // not connected: nothing to report
  const body = lines.splice(0);
  const n = body.filter((l) => l[0] === "C").length;
  try {
    const rsp = await fetch(`/report?session=${status.session}`, { method: "POST", body: body.join("\n") });
    if (!rsp.ok) { fail(`report: ${rsp.status} ${await rsp.text()}`); return; }
    const sv: ServerCounts = await rsp.json();
    status.reported += n;
    status.server = sv;
    staleness.push(sv.stale_mean);
    if (staleness.length > 120) staleness.shift();
  } catch (e) {
    fail("report: " + (e as Error).message);
  }
}
// The browser test flushes before comparing counts.
(window as any).bitwireFlush = flush;

async function start() {
  const cfg: Config = await (await fetch("/config.json")).json();
  const want = new URLSearchParams(location.search).get("transport") as TransportKind | null;
  const order: TransportKind[] = want ? [want] : ["webtransport", "webrtc", "websocket"];
  const ws = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + cfg.websocket;
  conn = await connect({
    webtransport: { url: cfg.webtransport, certHash: cfg.certHash ? fromB64(cfg.certHash) : undefined },
    webrtc: { signalURL: cfg.webrtc },
    websocket: { url: ws },
  }, order);
  // The hello: the session's number, then its MAC key in -integrity mac.
  const h = conn.hello;
  if (h.length < 4) throw new Error("short hello");
  status.session = new DataView(h.buffer, h.byteOffset, h.length).getUint32(0, true);
  const key = h.length > 4 ? h.slice(4) : undefined;
  client = EntityCodec.replica({ mode: cfg.mode, key, expiry: cfg.expiry });
  conn.onDatagram = onPacket;
  conn.onClose = (r) => { status.connected = false; fail("session ended: " + r); };
  status.transport = conn.kind;
  status.connected = true;
  $("transport").textContent = conn.kind + (key ? " · MAC key from the hello" : "");
  // The first ack tells the server nothing yet, but a WebSocket or a
  // WebRTC session is then known both ways at once.
  conn.send(bw.encodeReplicaAck(client.ack()));
  setInterval(flush, 250);
  setInterval(() => { perSecond.push(secondBits); secondBits = 0; if (perSecond.length > 60) perSecond.shift(); }, 1000);
  requestAnimationFrame(draw);
}

// ---- drawing ----

const view = $("view") as HTMLCanvasElement;
const ctx = view.getContext("2d")!;
const VIEW_HALF = 80; // metres from the watched player to the edge

function draw() {
  status.frames++;
  const W = view.width, H = view.height;
  ctx.fillStyle = "#0e1116";
  ctx.fillRect(0, 0, W, H);
  const own = status.server?.own ?? 0;
  const me = own ? client.get(own)?.value.Player : undefined;
  const cx = me ? me.Pos.X : 0, cz = me ? me.Pos.Z : 0;
  const s = Math.min(W, H) / (2 * VIEW_HALF);
  const px = (x: number) => W / 2 + (x - cx) * s;
  const pz = (z: number) => H / 2 + (z - cz) * s;
  // the arena's walls, and a 10 m grid
  ctx.strokeStyle = "#1f2630";
  ctx.lineWidth = 1;
  for (let g = -120; g <= 120; g += 10) {
    ctx.beginPath(); ctx.moveTo(px(g), pz(-120)); ctx.lineTo(px(g), pz(120)); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(px(-120), pz(g)); ctx.lineTo(px(120), pz(g)); ctx.stroke();
  }
  ctx.strokeStyle = "#5b6675";
  ctx.lineWidth = 2;
  ctx.strokeRect(px(-120), pz(-120), 240 * s, 240 * s);
  let players = 0, crates = 0;
  for (const id of client.ids()) {
    const e = client.get(id)!.value;
    if (e.Crate) {
      crates++;
      const c = e.Crate;
      ctx.fillStyle = c.Asleep ? "#4a5260" : "#e09a3e";
      const half = Math.max(2, 0.5 * s);
      ctx.fillRect(px(c.Pos.X) - half, pz(c.Pos.Z) - half, 2 * half, 2 * half);
    } else if (e.Player) {
      players++;
      const p = e.Player;
      const mine = id === own;
      ctx.fillStyle = mine ? "#5fe37a" : p.Health > 0 ? "#57a7ff" : "#884444";
      ctx.beginPath();
      ctx.arc(px(p.Pos.X), pz(p.Pos.Z), mine ? 7 : 5, 0, 2 * Math.PI);
      ctx.fill();
      const yaw = (p.Yaw * Math.PI) / 180;
      ctx.strokeStyle = ctx.fillStyle;
      ctx.beginPath();
      ctx.moveTo(px(p.Pos.X), pz(p.Pos.Z));
      ctx.lineTo(px(p.Pos.X) + Math.sin(yaw) * 14, pz(p.Pos.Z) + Math.cos(yaw) * 14);
      ctx.stroke();
    }
  }
  const m = client.get(0)?.value.Match;
  ctx.fillStyle = "#c9d1d9";
  ctx.font = "14px monospace";
  ctx.fillText(`${players} players · ${crates} crates held` + (m ? ` · clock ${m.Clock}s · score ${m.Score[0]}:${m.Score[1]}` : ""), 10, 20);
  if (!me) ctx.fillText("the watched player is respawning", 10, 40);

  chart("bps", perSecond.map((b) => b / 1000), "kbit/s");
  chart("sizes", sizes, "bytes");
  chart("stale", staleness, "ticks");
  const sv = status.server;
  $("counts").textContent =
    `session ${status.session} · received ${status.received} packets (${(status.bytes / 1024).toFixed(1)} KiB) · accepted ${status.accepted}` +
    ` · stale ${status.stale} · no baseline ${status.noBaseline} · errors ${status.errors}\n` +
    `decode ${(status.accepted ? status.decodeMs / status.accepted : 0).toFixed(3)} ms/packet (max ${status.decodeMax.toFixed(2)})` +
    ` · reported ${status.reported} states · server: sent ${sv?.packets ?? 0} packets, checked ${sv?.checked ?? 0}, ` +
    `DESYNCS ${sv?.desyncs ?? 0}, unchecked ${sv?.unchecked ?? 0}`;
  $("desyncs").textContent = String(sv?.desyncs ?? 0);
  requestAnimationFrame(draw);
}

// chart draws vals as a line on the canvas of id, with the latest value.
function chart(id: string, vals: number[], unit: string) {
  const c = $(id) as HTMLCanvasElement;
  const g = c.getContext("2d")!;
  const W = c.width, H = c.height;
  g.fillStyle = "#0e1116";
  g.fillRect(0, 0, W, H);
  const top = Math.max(1e-9, ...vals) * 1.1;
  g.strokeStyle = "#57a7ff";
  g.lineWidth = 1.5;
  g.beginPath();
  vals.forEach((v, i) => {
    const x = vals.length > 1 ? (i / (vals.length - 1)) * W : 0, y = H - (v / top) * (H - 16);
    if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
  });
  g.stroke();
  g.fillStyle = "#c9d1d9";
  g.font = "12px monospace";
  const last = vals.length ? vals[vals.length - 1] : 0;
  g.fillText(`${last.toFixed(1)} ${unit} (max ${(top / 1.1).toFixed(1)})`, 6, 13);
}

start().catch((e) => fail("connect: " + (e as Error).message));
