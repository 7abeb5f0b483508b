/// <reference lib="dom" />
// Browser transports: the client side of the Go module
// github.com/bitwire/bitwire/transport, on the browser's own APIs
// (WebTransport, RTCPeerConnection, WebSocket) with no dependency. Each
// connect function resolves once the session is open and the server's
// hello (its Options.Hello: a per-client key, over the session's TLS or
// DTLS) has arrived; then send() sends one datagram and onDatagram gets
// each one received. The packets of a SnapshotReceiver or ReplicaClient go
// through unchanged.
//
// WebTransport and WebRTC carry datagrams as UDP does: a datagram is lost
// or arrives once, in any order. WebSocket is reliable and ordered: nothing
// is lost, but a lost TCP segment delays every later datagram.

/** The transports, in the order connect() tries them by default. */
export type TransportKind = "webtransport" | "webrtc" | "websocket";

/** One session with a server. */
export interface DatagramConn {
  readonly kind: TransportKind;
  /** What the server's hello carried (empty when none). */
  readonly hello: Uint8Array;
  /** Sends one datagram; one the transport cannot take now is dropped, as UDP would. */
  send(datagram: Uint8Array): void;
  /** Called with every datagram received. Set it at once: datagrams that arrive before it is set are queued (at most 1024). */
  onDatagram: ((datagram: Uint8Array) => void) | null;
  /** Called once when the session ends, with the reason. */
  onClose: ((reason: string) => void) | null;
  close(): void;
}

/** The largest hello a server sends (transport.MaxHello). */
export const MAX_HELLO = 4096;

/** The base of the three connections: the queue until onDatagram is set, and onClose once. */
abstract class BaseConn implements DatagramConn {
  abstract readonly kind: TransportKind;
  hello: Uint8Array = new Uint8Array(0);
  onClose: ((reason: string) => void) | null = null;
  private handler: ((d: Uint8Array) => void) | null = null;
  private early: Uint8Array[] = [];
  private ended = false;

  get onDatagram(): ((d: Uint8Array) => void) | null { return this.handler; }
  set onDatagram(f: ((d: Uint8Array) => void) | null) {
    this.handler = f;
    if (f) for (const d of this.early.splice(0)) f(d);
  }
  protected deliver(d: Uint8Array): void {
    if (this.handler) this.handler(d);
    else if (this.early.length < 1024) this.early.push(d);
  }
  protected ended_(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.onClose) this.onClose(reason);
  }
  abstract send(d: Uint8Array): void;
  abstract close(): void;
}

/** Rejects with an Error after ms milliseconds, unless p settles first. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}

class WebTransportConn extends BaseConn {
  readonly kind = "webtransport";
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  constructor(private wt: WebTransport) {
    super();
    this.writer = wt.datagrams.writable.getWriter();
  }
  async run(): Promise<void> {
    this.wt.closed.then(() => this.ended_("closed"), (e) => this.ended_(String(e)));
    const r = this.wt.datagrams.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await r.read();
        if (done) break;
        this.deliver(value as Uint8Array);
      }
    } catch (e) {
      this.ended_(String(e));
    }
    this.ended_("closed");
  }
  send(d: Uint8Array): void {
    // A datagram the session cannot send now is dropped by the browser.
    this.writer.write(d).catch(() => {});
  }
  close(): void { this.wt.close(); }
}

/** Reads a stream to its end, at most max bytes. */
async function readAll(s: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array> {
  const r = s.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { value, done } = await r.read();
    if (done) break;
    n += value.length;
    if (n > max) throw new Error("hello too large");
    parts.push(value);
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/**
 * Opens a WebTransport session at url (https://host:port/path). certHash,
 * when given, is the SHA-256 of a self-signed certificate (the server's
 * CertificateHash), which the browser accepts instead of a certificate
 * authority's (serverCertificateHashes: ECDSA P-256, valid at most 14 days).
 */
export async function connectWebTransport(url: string, certHash?: Uint8Array, timeoutMs = 5000): Promise<DatagramConn> {
  if (typeof WebTransport === "undefined") throw new Error("this browser has no WebTransport");
  const opts: WebTransportOptions = {};
  if (certHash) opts.serverCertificateHashes = [{ algorithm: "sha-256", value: certHash as BufferSource }];
  const wt = new WebTransport(url, opts);
  try {
    await within(wt.ready, timeoutMs, "WebTransport");
    const streams = wt.incomingUnidirectionalStreams.getReader();
    const first = await within(streams.read(), timeoutMs, "WebTransport hello");
    if (first.done) throw new Error("the session closed before its hello");
    const c = new WebTransportConn(wt);
    c.hello = await within(readAll(first.value as ReadableStream<Uint8Array>, MAX_HELLO), timeoutMs, "WebTransport hello");
    streams.releaseLock();
    c.run();
    return c;
  } catch (e) {
    try { wt.close(); } catch { /* already failed */ }
    throw e;
  }
}

class WebRTCConn extends BaseConn {
  readonly kind = "webrtc";
  constructor(private pc: RTCPeerConnection, private dc: RTCDataChannel) {
    super();
    dc.onmessage = (ev) => { if (ev.data instanceof ArrayBuffer) this.deliver(new Uint8Array(ev.data)); };
    dc.onclose = () => this.ended_("data channel closed");
    pc.onconnectionstatechange = () => {
      const s = pc.connectionState;
      if (s === "failed" || s === "closed" || s === "disconnected") this.ended_("connection " + s);
    };
  }
  send(d: Uint8Array): void {
    // Past 64 KiB waiting, the channel is not keeping up: drop, as UDP would.
    if (this.dc.readyState !== "open" || this.dc.bufferedAmount > 65536) return;
    this.dc.send(d as Uint8Array<ArrayBuffer>);
  }
  close(): void { this.pc.close(); this.ended_("closed"); }
}

/**
 * Opens a WebRTC session through the server's signalling URL: one POST of
 * the offer (with every ICE candidate), the answer in the response. The
 * datagrams ride a data channel "bitwire" that is unordered and never
 * retransmits; the hello arrives on a reliable channel "hello".
 */
export async function connectWebRTC(signalURL: string, timeoutMs = 5000): Promise<DatagramConn> {
  if (typeof RTCPeerConnection === "undefined") throw new Error("this browser has no RTCPeerConnection");
  const pc = new RTCPeerConnection();
  try {
    const dc = pc.createDataChannel("bitwire", { ordered: false, maxRetransmits: 0 });
    dc.binaryType = "arraybuffer";
    const hc = pc.createDataChannel("hello");
    hc.binaryType = "arraybuffer";
    const c = new WebRTCConn(pc, dc);
    const hello = new Promise<Uint8Array>((resolve, reject) => {
      hc.onmessage = (ev) => {
        const b = new Uint8Array(ev.data as ArrayBuffer);
        if (b.length < 1 || b[0] !== 0x48 || b.length > MAX_HELLO + 1) reject(new Error("bad hello"));
        else resolve(b.subarray(1));
      };
    });
    const open = new Promise<void>((resolve) => { dc.onopen = () => resolve(); });
    await pc.setLocalDescription(await pc.createOffer());
    await within(new Promise<void>((resolve) => {
      if (pc.iceGatheringState === "complete") return resolve();
      pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === "complete") resolve(); };
    }), timeoutMs, "ICE gathering");
    const rsp = await within(fetch(signalURL, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(pc.localDescription),
    }), timeoutMs, "WebRTC signalling");
    if (!rsp.ok) throw new Error(`WebRTC signalling: ${rsp.status} ${await rsp.text()}`);
    await pc.setRemoteDescription(await rsp.json());
    const [h] = await within(Promise.all([hello, open]), timeoutMs, "WebRTC session");
    c.hello = h;
    return c;
  } catch (e) {
    pc.close();
    throw e;
  }
}

class WebSocketConn extends BaseConn {
  readonly kind = "websocket";
  constructor(private ws: WebSocket) { super(); }
  send(d: Uint8Array): void { if (this.ws.readyState === WebSocket.OPEN) this.ws.send(d as Uint8Array<ArrayBuffer>); }
  close(): void { this.ws.close(); }
  start(): void {
    this.ws.onmessage = (ev) => { if (ev.data instanceof ArrayBuffer) this.deliver(new Uint8Array(ev.data)); };
    this.ws.onclose = (ev) => this.ended_(`closed (${ev.code})`);
  }
}

/**
 * Opens a WebSocket (ws:// or wss://): the fallback where no datagram
 * transport gets through. Reliable and ordered: see the file's comment.
 */
export async function connectWebSocket(url: string, timeoutMs = 5000): Promise<DatagramConn> {
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  const c = new WebSocketConn(ws);
  try {
    c.hello = await within(new Promise<Uint8Array>((resolve, reject) => {
      ws.onmessage = (ev) => {
        if (ev.data instanceof ArrayBuffer && ev.data.byteLength <= MAX_HELLO) resolve(new Uint8Array(ev.data));
        else reject(new Error("bad hello"));
      };
      ws.onerror = () => reject(new Error("WebSocket failed"));
      ws.onclose = (ev) => reject(new Error(`WebSocket closed (${ev.code})`));
    }), timeoutMs, "WebSocket");
  } catch (e) {
    ws.close();
    throw e;
  }
  c.start();
  return c;
}

/** Where a server offers each transport; a missing one is not tried. */
export interface Endpoints {
  webtransport?: { url: string; certHash?: Uint8Array };
  webrtc?: { signalURL: string };
  websocket?: { url: string };
}

/**
 * Connects by the first transport of order that opens (by default
 * WebTransport, then WebRTC, then WebSocket). It rejects with every
 * transport's error when none does.
 */
export async function connect(ep: Endpoints, order: TransportKind[] = ["webtransport", "webrtc", "websocket"], timeoutMs = 5000): Promise<DatagramConn> {
  const errors: string[] = [];
  for (const kind of order) {
    try {
      if (kind === "webtransport" && ep.webtransport) return await connectWebTransport(ep.webtransport.url, ep.webtransport.certHash, timeoutMs);
      if (kind === "webrtc" && ep.webrtc) return await connectWebRTC(ep.webrtc.signalURL, timeoutMs);
      if (kind === "websocket" && ep.websocket) return await connectWebSocket(ep.websocket.url, timeoutMs);
    } catch (e) {
      errors.push(`${kind}: ${(e as Error).message}`);
    }
  }
  throw new Error("no transport connected: " + (errors.join("; ") || "none offered"));
}
