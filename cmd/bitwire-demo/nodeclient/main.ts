// The demo's Node client: a player's connection written in TypeScript over
// Node's dgram, decoding the server's replicate stream with code generated
// from the demo's own Go type (entity.ts, written by the demo at start-up
// with gen.TypeScript) and the runtime's ReplicaClient, in the stream's
// integrity mode (--mode, --key) and with the Go clients' expiry
// (--expiry). It acknowledges every packet it accepts, and one whose body
// it could not apply (the ack reports it), in the demo's ack datagram: 'A',
// the client as u16, the replicate ack with its tokens (19 bytes, 27 with a
// missing-baseline report). It reports each entity state a packet set on
// stdout, re-encoded in full ("C id tick hex"), which the demo checks
// against the server's state of that entity at that tick: the full
// encoding of a quantized state is unique, so equal bytes are an exact
// check. With --loss it drops that fraction of the packets and of the acks
// (seeded). It prints "PORT n" once bound and, when its standard input
// closes, "S" and its counts, then exits.
import * as dgram from "node:dgram";
import * as bw from "./bitwire.js";
import { EntityCodec } from "./entity.js";

function arg(name: string, def: number): number {
  const i = process.argv.indexOf("--" + name);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const serverPort = arg("server", 0);
const id = arg("id", 0);
const loss = arg("loss", 0);
const mode = arg("mode", 0); // the stream's integrity mode: 0 none, 1 crc32c, 2 hmac-sha256-80
const keyAt = process.argv.indexOf("--key");
const key = keyAt >= 0 ? Uint8Array.from(Buffer.from(process.argv[keyAt + 1], "hex")) : undefined;
const expiry = arg("expiry", 0); // as the Go clients' WithExpiry
let seed = arg("seed", 1) >>> 0 || 1;

// xorshift32: a seeded, reproducible drop decision
function rand(): number {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}

const stats = { received: 0, dropped: 0, accepted: 0, stale: 0, noBaseline: 0, recovering: 0, errors: 0, acksSent: 0, acksDropped: 0 };
const client = EntityCodec.replica({ mode, key, expiry });
const lines: string[] = [];
function hex(b: Uint8Array): string { return Buffer.from(b.buffer, b.byteOffset, b.length).toString("hex"); }

const sock = dgram.createSocket("udp4");
sock.on("message", (msg, rinfo) => {
  if (rinfo.port !== serverPort) return;
  stats.received++;
  if (loss > 0 && rand() < loss) { stats.dropped++; return; }
  let info: bw.ReplicaInfo | null = null;
  try {
    info = client.decode(new Uint8Array(msg.buffer, msg.byteOffset, msg.length));
  } catch (e) {
    if (e instanceof bw.ErrStale) stats.stale++;
    else if (e instanceof bw.ErrNoBaseline) stats.noBaseline++;
    else if (e instanceof bw.ErrFuture) stats.recovering++;
    else { stats.errors++; process.stderr.write(`node client ${id}: ${(e as Error).message}\n`); }
  }
  // acknowledge an accepted packet, and one whose body could not be applied (the ack reports it)
  const ra = client.ack();
  if (info || ra.missing !== 0) {
    const a = bw.encodeReplicaAck(ra);
    const ack = Buffer.alloc(3 + a.length);
    ack[0] = 0x41; ack.writeUInt16LE(id, 1);
    ack.set(a, 3);
    stats.acksSent++;
    if (loss > 0 && rand() < loss) stats.acksDropped++;
    else sock.send(ack, serverPort, "127.0.0.1");
  }
  if (!info) return;
  stats.accepted++;
  for (const eid of info.updated) {
    const e = client.get(eid) as { value: any; tick: number };
    lines.push(`C ${eid} ${e.tick} ${hex(EntityCodec.encode(e.value))}\n`);
  }
  if (lines.length >= 64) process.stdout.write(lines.splice(0).join(""));
});
sock.bind(0, "127.0.0.1", () => { process.stdout.write(`PORT ${sock.address().port}\n`); });
process.stdin.on("end", () => {
  if (lines.length > 0) process.stdout.write(lines.splice(0).join(""));
  process.stdout.write(`S ${JSON.stringify(stats)}\n`, () => { sock.close(); process.exit(0); });
});
process.stdin.resume();
