// The demo's Node client: a player's connection written in TypeScript over
// Node's dgram, decoding the server's snapshot streams with code generated
// from the demo's own Go types (shard.ts, written by the demo at start-up
// with gen.TypeScript). For each stream it keeps a snapshot receiver, sends
// every ack the receiver asks for (the demo's ack datagram: 'A', the
// stream, the client as u16, the 9-byte snapshot ack), and
// reports each accepted snapshot on stdout re-encoded in full ("C stream
// tick hex"), which the demo checks against the server's state of that
// tick: the full encoding of a quantized state is unique, so equal bytes
// are an exact check. With --loss it drops that fraction of the snapshots
// and of the acks (seeded). It prints "PORT n" once bound and, when its
// standard input closes, "S" and its counts, then exits.
import * as dgram from "node:dgram";
import * as bw from "./bitwire.js";
import { ShardCodec } from "./shard.js";

function arg(name: string, def: number): number {
  const i = process.argv.indexOf("--" + name);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const serverPort = arg("server", 0);
const id = arg("id", 0);
const streams = arg("streams", 1);
const history = arg("history", 32);
const loss = arg("loss", 0);
const mode = arg("mode", 0); // the streams' integrity mode: 0 none, 1 crc32c, 2 hmac-sha256-80
const keyAt = process.argv.indexOf("--key");
const key = keyAt >= 0 ? Uint8Array.from(Buffer.from(process.argv[keyAt + 1], "hex")) : undefined;
const maxAhead = arg("maxahead", 300);
let seed = arg("seed", 1) >>> 0 || 1;

// xorshift32: a seeded, reproducible drop decision
function rand(): number {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}

const stats = { received: 0, dropped: 0, accepted: 0, stale: 0, noBaseline: 0, recovering: 0, errors: 0, acksSent: 0, acksDropped: 0, foreign: 0 };
const receivers = Array.from({ length: streams }, () => ShardCodec.receiver({ size: history, mode, maxAhead, key }));
const lines: string[] = [];
function hex(b: Uint8Array): string { return Buffer.from(b.buffer, b.byteOffset, b.length).toString("hex"); }

const sock = dgram.createSocket("udp4");
sock.on("message", (msg, rinfo) => {
  if (rinfo.port !== serverPort) return;
  stats.received++;
  if (loss > 0 && rand() < loss) { stats.dropped++; return; }
  if (msg.length < 1 || msg[0] >= streams) { stats.foreign++; return; }
  const k = msg[0];
  let tick = 0, value: unknown = null, ok = false;
  try {
    ({ tick, value } = receivers[k].decode(new Uint8Array(msg.buffer, msg.byteOffset + 1, msg.length - 1)));
    ok = true;
  } catch (e) {
    if (e instanceof bw.ErrStaleTick) stats.stale++;
    else if (e instanceof bw.ErrNoBaseline) stats.noBaseline++;
    else if (e instanceof bw.ErrFutureTick || e instanceof bw.ErrStateMismatch) stats.recovering++;
    else { stats.errors++; process.stderr.write(`node client ${id} stream ${k}: ${(e as Error).message}\n`); }
  }
  const a = receivers[k].ack();
  if (a) {
    const ack = Buffer.alloc(13);
    ack[0] = 0x41; ack[1] = k; ack.writeUInt16LE(id, 2);
    ack.set(bw.encodeAck(a), 4);
    stats.acksSent++;
    if (loss > 0 && rand() < loss) stats.acksDropped++;
    else sock.send(ack, serverPort, "127.0.0.1");
  }
  if (!ok) return;
  stats.accepted++;
  lines.push(`C ${k} ${tick} ${hex(ShardCodec.encode(value as any))}\n`);
  if (lines.length >= 8) process.stdout.write(lines.splice(0).join(""));
});
sock.bind(0, "127.0.0.1", () => { process.stdout.write(`PORT ${sock.address().port}\n`); });
process.stdin.on("end", () => {
  if (lines.length > 0) process.stdout.write(lines.splice(0).join(""));
  process.stdout.write(`S ${JSON.stringify(stats)}\n`, () => { sock.close(); process.exit(0); });
});
process.stdin.resume();
