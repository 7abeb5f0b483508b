// The rest of a game's connection for the C# clients, as Go's package
// conn: client events, input commands, the reliable ordered message
// Channel of a union and the client's end of a connection (ConnClient:
// the server's packets in, the client's out). The formats are Go's, byte for byte (gen/conn_conformance_test.go).
// Events of a ReplicaClient (removed, added, changed with the paths of
// the changed fields) walk the generated Shape; input commands use the
// generated EncodeDeltaInput. Interpolation is in Interp.cs.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Bitwire
{
    public class ErrQueueFull : BitwireException { public ErrQueueFull(string d = "reliable message queue full") : base("ErrQueueFull", d) { } }
    public class ErrMessageTooLarge : BitwireException { public ErrMessageTooLarge(string d = "message larger than the channel's share of a packet") : base("ErrMessageTooLarge", d) { } }

    /// <summary>
    /// Go's conn.Channel, the same section bits: ordered, reliable messages of
    /// a generated union, resent every Resend packets until acknowledged,
    /// within Share bytes of a packet, delivered in order exactly once.
    /// </summary>
    public sealed class Channel
    {
        public delegate void EncodeFn(BitWriter w, object v);
        public delegate object DecodeFn(BitReader r);
        public delegate void EncodeCountFn(BitWriter w, int n);
        public delegate int DecodeCountFn(BitReader r);
        const int SeqW = 5, MaxPick = 64, CountMax = 11;
        sealed class Out { public byte[] Enc; public int N; public uint Sent; public bool Ever; }

        readonly EncodeFn encode; readonly DecodeFn decode; readonly EncodeCountFn encodeCount; readonly DecodeCountFn decodeCount;
        public readonly int Queue, Resend, Share;
        readonly List<Out> outq = new List<Out>();
        uint bas, next, acked;
        bool owe;
        readonly List<object> early = new List<object>();
        readonly Queue<object> inbox = new Queue<object>();

        /// <summary>A channel of the union whose generated EncodeTo, DecodeFrom, EncodeCount and DecodeCount are given; 0: Go's defaults (256, 4, 200).</summary>
        public Channel(EncodeFn encode, DecodeFn decode, EncodeCountFn encodeCount, DecodeCountFn decodeCount, int queue = 0, int resend = 0, int share = 0)
        {
            this.encode = encode; this.decode = decode; this.encodeCount = encodeCount; this.decodeCount = decodeCount;
            Queue = queue > 0 ? queue : 256; Resend = resend > 0 ? resend : 4; Share = share > 0 ? share : 200;
        }
        public int Pending { get { return outq.Count; } }

        /// <summary>Queues a message (a value of one of the union's variants): ErrQueueFull, ErrMessageTooLarge, or the codec's errors.</summary>
        public void Send(object v)
        {
            if (outq.Count >= Queue) throw new ErrQueueFull(outq.Count + " messages unacknowledged");
            var w = new BitWriter();
            encode(w, v);
            int n = w.Length;
            if (2 * (SeqW + 32) + CountMax + n > Share * 8) throw new ErrMessageTooLarge(n + " bits, share " + Share + " bytes");
            outq.Add(new Out { Enc = w.ToArray(), N = n });
        }

        /// <summary>The next message delivered in order, or false.</summary>
        public bool TryReceive(out object v)
        {
            if (inbox.Count == 0) { v = null; return false; }
            v = inbox.Dequeue();
            return true;
        }

        /// <summary>Whether a section is worth writing at packet count tick.</summary>
        public bool Due(uint tick)
        {
            if (owe || acked != next) return true;
            foreach (var m in outq) if (!m.Ever || tick - m.Sent >= (uint)Resend) return true;
            return false;
        }

        public void Write(BitWriter w, uint tick, int room)
        {
            int start = w.Length;
            Codings.WriteBitlen(w, next, SeqW);
            owe = false; acked = next;
            var chosen = new List<int>();
            int used = w.Length - start + CountMax;
            long prev = -1;
            for (int i = 0; i < outq.Count; i++)
            {
                var m = outq[i];
                if (m.Ever && tick - m.Sent < (uint)Resend) continue;
                uint seq = bas + (uint)i;
                int sb = prev < 0 ? Codings.BitlenBits(seq, SeqW) : Codings.BitlenBits((ulong)(seq - prev - 1), 3);
                if (used + sb + m.N > room) break;
                used += sb + m.N; prev = seq;
                chosen.Add(i);
                if (chosen.Count == MaxPick) break;
            }
            encodeCount(w, chosen.Count);
            prev = -1;
            foreach (int i in chosen)
            {
                long seq = bas + (uint)i;
                if (prev < 0) Codings.WriteBitlen(w, (ulong)seq, SeqW); else Codings.WriteBitlen(w, (ulong)(seq - prev - 1), 3);
                prev = seq;
            }
            foreach (int i in chosen)
            {
                var m = outq[i];
                for (int k = 0, left = m.N; left > 0; k++, left -= 8) { int b = Math.Min(8, left); w.Write((ulong)(m.Enc[k] & ((1 << b) - 1)), b); }
                m.Ever = true; m.Sent = tick;
            }
        }

        public void Read(BitReader r)
        {
            ulong ack = Codings.ReadBitlen(r, SeqW);
            int n = decodeCount(r);
            if (n > MaxPick) throw new ErrMalformed(n + " messages in one section");
            var seqs = new uint[n];
            long prev = -1;
            for (int i = 0; i < n; i++)
            {
                ulong v = Codings.ReadBitlen(r, i == 0 ? SeqW : 3);
                if (i > 0) v += (ulong)prev + 1;
                if (v > uint.MaxValue) throw new ErrMalformed("message seq past 2^32");
                seqs[i] = (uint)v; prev = (long)v;
            }
            var msgs = new object[n];
            for (int i = 0; i < n; i++) msgs[i] = decode(r);
            uint d = (uint)ack - bas;
            if ((int)d > 0 && d <= (uint)outq.Count) { outq.RemoveRange(0, (int)d); bas = (uint)ack; }
            owe = owe || n > 0;
            for (int i = 0; i < n; i++) Accept(seqs[i], msgs[i]);
        }

        void Accept(uint seq, object m)
        {
            int d = (int)(seq - next);
            if (d < 0 || d >= Queue || inbox.Count + d >= Queue) return;
            while (early.Count <= d) early.Add(null);
            if (early[d] != null) return;
            early[d] = m;
            int k = 0;
            while (k < early.Count && early[k] != null) { inbox.Enqueue(early[k]); k++; }
            if (k > 0) { next += (uint)k; early.RemoveRange(0, k); }
        }
    }


    /// <summary>The paths of what differs between two values of a message (Go's events paths: "Pos.X", "Units[id=7].Hp", "Cargo[\"ore\"]"), once each, in wire order.</summary>
    public static class Paths
    {
        public static List<string> Diff(Shape s, object a, object b)
        {
            var o = new List<string>();
            Node(s, a, b, "", o);
            return o;
        }

        static string Join(string p, string n) { return p.Length == 0 ? n : p + "." + n; }

        static void Node(Shape n, object a, object b, string path, List<string> o)
        {
            switch (n.Coding)
            {
                case "struct":
                    foreach (var f in n.Fields) Node(f.Node, f.Info.GetValue(a), f.Info.GetValue(b), Join(path, f.Name), o);
                    return;
                case "array":
                {
                    var x = (Array)a; var y = (Array)b;
                    for (int i = 0; i < x.Length; i++) Node(n.Elem, x.GetValue(i), y.GetValue(i), path + "[" + i + "]", o);
                    return;
                }
                case "slice":
                {
                    var x = (IList)a ?? new object[0]; var y = (IList)b ?? new object[0];
                    if (n.Id >= 0) { Entities(n, x, y, path, o); return; }
                    for (int i = 0; i < Math.Max(x.Count, y.Count); i++)
                    {
                        if (i >= x.Count || i >= y.Count) o.Add(path + "[" + i + "]");
                        else Node(n.Elem, x[i], y[i], path + "[" + i + "]", o);
                    }
                    return;
                }
                case "map":
                {
                    var x = (IDictionary)a; var y = (IDictionary)b;
                    var keys = new SortedDictionary<string, object>(StringComparer.Ordinal);
                    if (x != null) foreach (var k in x.Keys) keys[KeyText(k)] = k;
                    if (y != null) foreach (var k in y.Keys) keys[KeyText(k)] = k;
                    foreach (var kv in keys)
                    {
                        string p = path + "[" + kv.Key + "]";
                        bool inX = x != null && x.Contains(kv.Value), inY = y != null && y.Contains(kv.Value);
                        if (!inX || !inY) o.Add(p);
                        else Node(n.Elem, x[kv.Value], y[kv.Value], p, o);
                    }
                    return;
                }
                case "ptr":
                    if (a == null && b == null) return;
                    if (a == null || b == null) { o.Add(path); return; }
                    Node(n.Elem, a, b, path, o);
                    return;
            }
            if (!Same(a, b)) o.Add(path);
        }

        static void Entities(Shape n, IList a, IList b, string path, List<string> o)
        {
            var idf = n.Elem.Fields[n.Id];
            var inA = new Dictionary<string, int>();
            var inB = new HashSet<string>();
            for (int i = 0; i < a.Count; i++) inA[Id(idf, a[i])] = i;
            foreach (var e in b) inB.Add(Id(idf, e));
            foreach (var e in a) if (!inB.Contains(Id(idf, e))) o.Add(path + "[id=" + Id(idf, e) + "]");
            var seen = new HashSet<string>();
            foreach (var e in b)
            {
                string k = Id(idf, e);
                if (!seen.Add(k)) continue;
                string p = path + "[id=" + k + "]";
                int j;
                if (!inA.TryGetValue(k, out j)) { o.Add(p); continue; }
                for (int fi = 0; fi < n.Elem.Fields.Length; fi++)
                {
                    if (fi == n.Id) continue;
                    var f = n.Elem.Fields[fi];
                    Node(f.Node, f.Info.GetValue(a[j]), f.Info.GetValue(e), p + "." + f.Name, o);
                }
            }
        }

        static string Id(ShapeField f, object e) { return Convert.ToString(f.Info.GetValue(e), CultureInfo.InvariantCulture); }

        // A map key as Go's path prints it: strings by strconv.Quote, bools
        // as true and false, numbers in decimal.
        static string KeyText(object k)
        {
            var s = k as string;
            if (s != null) return Quote(s);
            if (k is bool) return (bool)k ? "true" : "false";
            return Convert.ToString(k, CultureInfo.InvariantCulture);
        }

        /// <summary>Go's strconv.Quote for the printable text keys hold: escapes of quotes, backslashes and control characters.</summary>
        public static string Quote(string s)
        {
            var b = new StringBuilder("\"");
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': b.Append("\\\""); break;
                    case '\\': b.Append("\\\\"); break;
                    case '\a': b.Append("\\a"); break;
                    case '\b': b.Append("\\b"); break;
                    case '\f': b.Append("\\f"); break;
                    case '\n': b.Append("\\n"); break;
                    case '\r': b.Append("\\r"); break;
                    case '\t': b.Append("\\t"); break;
                    case '\v': b.Append("\\v"); break;
                    default:
                        if (c < 0x20 || c == 0x7f) b.Append("\\x").Append(((int)c).ToString("x2"));
                        else b.Append(c);
                        break;
                }
            }
            return b.Append('"').ToString();
        }

        static bool Same(object a, object b)
        {
            if (a == null || b == null) return a == b;
            var x = a as Array;
            if (x != null)
            {
                var y = (Array)b;
                if (x.Length != y.Length) return false;
                for (int i = 0; i < x.Length; i++) if (!Same(x.GetValue(i), y.GetValue(i))) return false;
                return true;
            }
            return a.Equals(b);
        }
    }

    /// <summary>
    /// Events of a ReplicaClient, as Go's Client: Decode applies a packet,
    /// then calls the handlers: removals (by the packet, then by the
    /// expiry), additions, changes (with the paths that differ from the
    /// state held before), each by ascending id. A refused packet calls
    /// nothing. The handlers are C# events: detach with -=.
    /// </summary>
    public sealed class ReplicaEvents<T> where T : class
    {
        public readonly ReplicaClient<T> Client;
        readonly Shape shape;
        readonly T[] vals = new T[ReplicaClient<T>.BaselineDepth];
        readonly uint[] ticks = new uint[ReplicaClient<T>.BaselineDepth];
        public event Action<uint> Removed;
        public event Action<uint, T> Added;
        public event Action<uint, T, List<string>> Changed;
        /// <summary>Events of client, whose entity's generated Shape is shape.</summary>
        public ReplicaEvents(ReplicaClient<T> client, Shape shape) { Client = client; this.shape = shape; }

        public void Decode(byte[] packet, int length)
        {
            Client.Decode(packet, length);
            var removed = Removed; var added = Added; var changed = Changed;
            if (removed != null) foreach (var id in Client.Removed) removed(id);
            var changes = new List<KeyValuePair<uint, List<string>>>();
            foreach (var id in Client.Updated)
            {
                int n = Client.States(id, vals, ticks);
                if (n == 0) continue;
                if (n == 1) { if (added != null) added(id, vals[0]); continue; }
                if (changed == null) continue;
                var paths = Paths.Diff(shape, vals[n - 2], vals[n - 1]);
                if (paths.Count > 0) changes.Add(new KeyValuePair<uint, List<string>>(id, paths));
            }
            foreach (var c in changes)
            {
                T v; uint t;
                Client.TryGet(c.Key, out v, out t);
                changed(c.Key, v, c.Value);
            }
        }
    }


    /// <summary>What a ConnClient needs of an input sender (InputSender).</summary>
    public interface IInputSection
    {
        bool HasPending { get; }
        void Write(BitWriter w);
        void TakeAck(uint tick);
    }

    /// <summary>
    /// Go's conn.InputSender, the same section bits: the newest Redundancy
    /// inputs (3 by default) the server has not played, stamped with their
    /// ticks, the newest in full and each older one a delta against the next
    /// newer (the generated codec's EncodeDeltaInput).
    /// </summary>
    public sealed class InputSender<I> : IInputSection where I : class, new()
    {
        public delegate void EncodeFn(BitWriter w, I v);
        public delegate void DeltaFn(BitWriter w, I baseline, I cur);
        readonly EncodeFn encode; readonly DeltaFn delta; readonly Action<I, I> copy;
        public readonly int Redundancy;
        readonly List<KeyValuePair<uint, I>> ring = new List<KeyValuePair<uint, I>>();
        bool any, hasAck; uint last, acked;

        /// <summary>A sender of inputs whose generated EncodeTo, EncodeDeltaInput and Copy are given, carrying the newest redundancy inputs (1..16).</summary>
        public InputSender(EncodeFn encode, DeltaFn delta, Action<I, I> copy, int redundancy = 3)
        {
            if (redundancy < 1 || redundancy > 16) throw new ArgumentException("conn: redundancy " + redundancy + " outside 1..16");
            this.encode = encode; this.delta = delta; this.copy = copy; Redundancy = redundancy;
        }

        /// <summary>Adds the input for tick, after the last one pushed (ErrTickOrder otherwise); v is copied.</summary>
        public void Push(uint tick, I v)
        {
            if (any && (int)(tick - last) <= 0) throw new BitwireException("ErrTickOrder", "input for tick " + tick + " after tick " + last);
            encode(new BitWriter(), v); // a value the codec refuses fails now, not in a packet later
            var c = new I();
            copy(v, c);
            ring.Add(new KeyValuePair<uint, I>(tick, c));
            if (ring.Count > Redundancy) ring.RemoveAt(0);
            any = true; last = tick;
        }

        public void TakeAck(uint tick) { if (!hasAck || (int)(tick - acked) > 0) { acked = tick; hasAck = true; } }

        List<KeyValuePair<uint, I>> Pending()
        {
            var o = new List<KeyValuePair<uint, I>>();
            for (int k = ring.Count - 1; k >= 0; k--)
            {
                if (hasAck && (int)(ring[k].Key - acked) <= 0) break;
                o.Add(ring[k]);
            }
            return o;
        }

        public bool HasPending { get { return Pending().Count > 0; } }

        public void Write(BitWriter w)
        {
            var ins = Pending();
            Codings.WriteBitlen(w, (ulong)(ins.Count - 1), 3);
            w.Write(ins[0].Key, 32);
            for (int k = 1; k < ins.Count; k++)
            {
                uint gap = ins[k - 1].Key - ins[k].Key;
                w.Bool(gap == 1);
                if (gap != 1) Codings.WriteBitlen(w, gap - 2, 5);
            }
            encode(w, ins[0].Value);
            for (int k = 1; k < ins.Count; k++) delta(w, ins[k - 1].Value, ins[k].Value);
        }
    }

    /// <summary>
    /// Go's conn.Client: Receive applies a server connection packet (the
    /// input ack, the channel's section, the state through the ReplicaClient
    /// or its Events), Append writes the client's packet (the state's ack,
    /// the Inputs not played, the channel's section). Inputs, Messages and
    /// Events may be null.
    /// </summary>
    public sealed class ConnClient<T> where T : class
    {
        public const ushort Magic = 0xC17F;
        const int HeaderBits = 22;
        public readonly ReplicaClient<T> State;
        /// <summary>When set, the state is applied through it (its handlers called).</summary>
        public ReplicaEvents<T> Events;
        public readonly Channel Messages;
        /// <summary>When set, its inputs go in every packet until the server's queue played them.</summary>
        public IInputSection Inputs;
        readonly int mode;
        readonly System.Security.Cryptography.HMACSHA256 mac;
        uint packets;
        /// <summary>The newest input tick the server played, from its packets (HasInputAck: whether any said).</summary>
        public uint InputAck; public bool HasInputAck;

        public ConnClient(ReplicaClient<T> state, Channel messages, int mode, byte[] key = null)
        {
            State = state; Messages = messages; this.mode = mode;
            if (mode == 2) mac = new System.Security.Cryptography.HMACSHA256(key);
        }
        int Over { get { return mode == 1 ? 4 : mode == 2 ? 10 : 0; } }

        /// <summary>Applies a server packet; returns whether it carried a state (then State.Updated and State.Removed tell what it changed).</summary>
        public bool Receive(byte[] pkt)
        {
            var h = new BitReader(pkt);
            if (h.Remaining < HeaderBits) throw new ErrUnexpectedEnd("conn: header");
            ulong m = h.Read(16);
            if (m != Magic) throw new ErrBadMagic("conn: magic 0x" + m.ToString("x"));
            int pm = (int)h.Read(2);
            if (pm != mode) throw new ErrProtocolMismatch("conn: packet integrity " + pm + ", ours " + mode);
            if (!h.Bool()) throw new ErrMalformed("conn: a packet of the other direction");
            int n = pkt.Length - Over;
            if (n < 0) throw new ErrUnexpectedEnd("conn: trailer");
            if (mode == 1)
            {
                uint c = Crc32c.Of(pkt, 0, n);
                uint t = (uint)(pkt[n] | (pkt[n + 1] << 8) | (pkt[n + 2] << 16) | (pkt[n + 3] << 24));
                if (c != t) throw new ErrIntegrity("conn: crc32c trailer does not match");
            }
            else if (mode == 2)
            {
                var sum = mac.ComputeHash(pkt, 0, n);
                int diff = 0;
                for (int i = 0; i < 10; i++) diff |= sum[i] ^ pkt[n + i];
                if (diff != 0) throw new ErrIntegrity("conn: hmac-sha256-80 trailer does not match");
            }
            var body = new byte[n];
            Array.Copy(pkt, body, n);
            var r = new BitReader(body);
            r.Read(19);
            bool hasAck = r.Bool(), hasMsg = r.Bool(), hasState = r.Bool();
            uint inAck = 0;
            if (hasAck) inAck = (uint)r.Read(32);
            if (hasMsg)
            {
                if (Messages == null) throw new ErrMalformed("conn: messages without a channel");
                Messages.Read(r);
            }
            if (hasAck) { InputAck = inAck; HasInputAck = true; if (Inputs != null) Inputs.TakeAck(inAck); }
            if (!hasState)
            {
                int pad = r.Remaining;
                if (pad >= 8 || (pad > 0 && r.Read(pad) != 0)) throw new ErrTrailingData("conn: after the sections");
                return false;
            }
            int at = (r.Position + 7) >> 3;
            if (at > n) throw new ErrUnexpectedEnd("conn: state");
            var st = new byte[n - at];
            Array.Copy(body, at, st, 0, st.Length);
            if (Events != null) Events.Decode(st, st.Length); else State.Decode(st, st.Length);
            return true;
        }

        /// <summary>The client's packet of this tick: the state's ack, the inputs not played, and the channel's section when due.</summary>
        public byte[] Append()
        {
            packets++;
            var a = State.Ack();
            bool hasAck = a.Seq != 0 || a.Missing != 0;
            bool hasIn = Inputs != null && Inputs.HasPending;
            bool hasMsg = Messages != null && Messages.Due(packets);
            var w = new BitWriter();
            w.Write(Magic, 16); w.Write((ulong)mode, 2); w.Bool(false);
            w.Bool(hasAck); w.Bool(hasIn); w.Bool(hasMsg);
            if (hasAck)
            {
                w.Write(a.Seq, 32); w.Write(a.Mask, 32); w.Write(a.Token, 32); w.Write(a.MaskToken, 32);
                w.Bool(a.Missing != 0);
                if (a.Missing != 0) { w.Write(a.Missing, 32); w.Write(a.MissingToken, 32); }
            }
            if (hasIn) Inputs.Write(w);
            if (hasMsg) Messages.Write(w, packets, Messages.Share * 8);
            var body = w.ToArray();
            var o = new byte[body.Length + Over];
            Array.Copy(body, o, body.Length);
            if (mode == 1) { uint c = Crc32c.Of(body, 0, body.Length); for (int i = 0; i < 4; i++) o[body.Length + i] = (byte)(c >> (8 * i)); }
            else if (mode == 2) Array.Copy(mac.ComputeHash(body), 0, o, body.Length, 10);
            return o;
        }
    }
}
