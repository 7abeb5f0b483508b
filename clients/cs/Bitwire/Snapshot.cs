// The client side of package snapshot (packet version 2, every integrity
// mode): headers, acks, CRC-32C and the SnapshotReceiver.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>The header of a snapshot packet (version 2).</summary>
    public struct SnapshotHeader { public uint Fingerprint, Tick, Baseline; public int Mode; public bool Hashed, Delta; }

    /// <summary>What a receiver sends back for a packet: 9 bytes, flags, tick (u32 LE), token (u32 LE).</summary>
    public struct SnapshotAck
    {
        public uint Tick, Token; public bool MissingBaseline, StateMismatch;
        public void WriteTo(byte[] b, int at)
        {
            b[at] = (byte)((MissingBaseline ? 1 : 0) | (StateMismatch ? 2 : 0));
            for (int i = 0; i < 4; i++) { b[at + 1 + i] = (byte)(Tick >> (8 * i)); b[at + 5 + i] = (byte)(Token >> (8 * i)); }
        }
    }

    /// <summary>CRC-32C (Castagnoli), as Go's crc32.Checksum with the Castagnoli table.</summary>
    public static class Crc32c
    {
        static readonly uint[] table = Make();
        static uint[] Make()
        {
            var t = new uint[256];
            for (uint i = 0; i < 256; i++) { uint c = i; for (int k = 0; k < 8; k++) c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1; t[i] = c; }
            return t;
        }
        public static uint Of(byte[] b, int offset, int count)
        {
            uint c = 0xFFFFFFFFu;
            for (int i = offset; i < offset + count; i++) c = table[(c ^ b[i]) & 0xFF] ^ (c >> 8);
            return c ^ 0xFFFFFFFFu;
        }
    }

    /// <summary>
    /// The client side of a snapshot stream (packet version 2, integrity
    /// modes 0 none, 1 crc32c and 2 hmac-sha256-80): checks each packet's header, trailer and
    /// tick window (TickWindow), keeps the last Size accepted snapshots as baselines
    /// (storage reused: no allocation once warm, state hashes aside),
    /// decodes full snapshots and deltas against the right baseline, checks
    /// the state hash, and says what to acknowledge (Ack). A rejected packet
    /// changes nothing, except a state mismatch, which drops the baselines.
    /// </summary>
    public sealed class SnapshotReceiver<T> where T : class
    {
        public const ushort Magic = 0xB27E;
        readonly string root; readonly uint fp; readonly Func<T> make;
        readonly Message.DecodeFn<T> decode; readonly Message.DeltaFn<T> delta; readonly Action<T, T> copy; readonly Message.EncodeFn<T> encode;
        // a codec whose schema has pred values: Predict(older, p) of its generated coder, and
        // the predicted baseline it fills (wire-format.md, "Snapshot packets"); else null
        readonly Action<T, T> predict; T predicted;
        readonly int mode;
        readonly Limits lim;
        readonly System.Security.Cryptography.HMACSHA256 mac;
        internal readonly byte[] key; // a copy of the MAC key, for Reassembler.ForReceiver
        readonly T[] vals; readonly uint[] ticks; int first, n;
        T scratch;
        readonly BitReader r = new BitReader(new byte[0]);
        readonly BitWriter hw = new BitWriter();
        readonly TickWindow window; // the ticks accepted, rewinding only without a MAC
        SnapshotAck last; bool lastOK;
        public SnapshotReceiver(string root, ulong fingerprint, int size, int mode, uint maxAhead, int recoverAfter, Func<T> make,
            Message.DecodeFn<T> decode, Message.DeltaFn<T> delta, Action<T, T> copy, Message.EncodeFn<T> encode, Limits lim, byte[] key = null, Action<T, T> predict = null)
        {
            this.lim = lim;
            if (mode < 0 || mode > 2) throw new ArgumentException("integrity mode " + mode);
            if ((mode == 2) != (key != null) || (mode == 2 && key.Length < 16)) throw new ArgumentException("a MAC key of at least 16 bytes with mode 2, and none otherwise");
            if (mode == 2) { this.key = (byte[])key.Clone(); mac = new System.Security.Cryptography.HMACSHA256(this.key); }
            this.root = root; fp = Fingerprint32(fingerprint); this.make = make; this.decode = decode; this.delta = delta; this.copy = copy; this.encode = encode; this.predict = predict;
            this.mode = mode; window = new TickWindow(maxAhead, recoverAfter, mode != 2);
            vals = new T[size]; ticks = new uint[size]; scratch = make();
        }
        public static uint Fingerprint32(ulong f) { return (uint)f ^ (uint)(f >> 32); }
        /// <summary>The 32-bit fingerprint the sender's packets carry: Fingerprint32 of the codec's.</summary>
        public uint Fp { get { return fp; } }
        /// <summary>The integrity mode: 0 none, 1 crc32c, 2 hmac-sha256-80.</summary>
        public int Mode { get { return mode; } }
        public static SnapshotHeader ReadHeader(BitReader r)
        {
            if (r.Remaining < 16) throw new ErrUnexpectedEnd("snapshot header");
            var h = new SnapshotHeader();
            ulong m = r.Read(16);
            if (m != Magic) throw new ErrBadMagic("magic 0x" + m.ToString("x"));
            h.Fingerprint = (uint)r.Read(32);
            h.Tick = (uint)r.Read(32);
            h.Mode = (int)r.Read(2);
            if (h.Mode > 2) throw new ErrMalformed("integrity mode " + h.Mode);
            h.Hashed = r.Bool();
            h.Delta = r.Bool();
            if (h.Delta)
            {
                ulong d = Codings.ReadBitlen(r, 5);
                if (d >= h.Tick) throw new ErrMalformed("baseline " + (d + 1) + " ticks before tick " + h.Tick);
                h.Baseline = h.Tick - (uint)d - 1;
            }
            return h;
        }
        int Find(uint tick)
        {
            for (int k = 0; k < n; k++) { int i = (first + k) % vals.Length; if (ticks[i] == tick) return i; }
            return -1;
        }
        /// <summary>
        /// Throws ErrStaleTick or ErrFutureTick when Decode would refuse a
        /// packet of tick for its tick, counting a refused one toward a
        /// recovery run as Decode does (Reassembler.ForReceiver holds
        /// fragments' ticks to the window so).
        /// </summary>
        public void CheckTick(uint tick)
        {
            TickRefusal why = window.Check(tick);
            if (why == TickRefusal.Stale) throw new ErrStaleTick("tick " + tick + ", newest accepted " + window.Newest);
            if (why == TickRefusal.Future) throw new ErrFutureTick("tick " + tick + " is " + (tick - window.Newest) + " ticks past the newest accepted " + window.Newest);
        }
        /// <summary>The ack the last Decode asks to send, if any.</summary>
        public bool Ack(out SnapshotAck a) { a = last; return lastOK; }
        /// <summary>The newest accepted snapshot (owned by the receiver: read it, do not keep it).</summary>
        public T Latest { get; private set; }
        /// <summary>Decodes a packet; returns its tick. The snapshot is Latest; Ack says what to send back.</summary>
        public uint Decode(byte[] packet, int length)
        {
            lastOK = false;
            r.Reset(packet, length);
            var h = ReadHeader(r);
            if (h.Fingerprint != fp) throw new ErrProtocolMismatch("packet 0x" + h.Fingerprint.ToString("x8") + ", receiver 0x" + fp.ToString("x8"));
            if (h.Mode != mode) throw new ErrProtocolMismatch("packet's integrity mode " + h.Mode + ", receiver's " + mode);
            uint token;
            int body = Trailer.Open(mode, mac, packet, length, "snapshot header", out token);
            CheckTick(h.Tick);
            r.Reset(packet, body);
            ReadHeader(r);
            if (h.Delta)
            {
                int i = Find(h.Baseline);
                if (i < 0)
                {
                    last = new SnapshotAck { Tick = h.Tick, Token = token, MissingBaseline = true }; lastOK = true;
                    throw new ErrNoBaseline("tick " + h.Tick + " is a delta against " + h.Baseline);
                }
                T baseline = vals[i];
                if (predict != null && r.Bool())
                {
                    ulong d = Codings.ReadBitlen(r, 5);
                    if (d >= h.Baseline) throw new ErrMalformed("an older baseline " + (d + 1) + " ticks before baseline " + h.Baseline).Within(root);
                    int j = Find(h.Baseline - (uint)d - 1);
                    if (j < 0)
                    {
                        last = new SnapshotAck { Tick = h.Tick, Token = token, MissingBaseline = true }; lastOK = true;
                        throw new ErrNoBaseline("tick " + h.Tick + " is a delta against " + h.Baseline + " predicted from " + (h.Baseline - (uint)d - 1));
                    }
                    if (predicted == null) predicted = make();
                    copy(baseline, predicted);
                    predict(vals[j], predicted);
                    baseline = predicted;
                }
                Message.DecodeDeltaFrom(root, r, baseline, scratch, delta, lim);
            }
            else Message.DecodeFrom(root, r, scratch, decode, lim);
            uint sum = h.Hashed ? (uint)r.Read(32) : 0;
            if (!r.CheckPadding()) throw new ErrTrailingData(r.Remaining + " bits left").Within(root);
            if (h.Hashed)
            {
                hw.Reset();
                Message.EncodeTo(root, hw, scratch, encode, lim);
                var seg = hw.Segment;
                if (Crc32c.Of(seg.Array, seg.Offset, seg.Count) != sum)
                {
                    n = 0; first = 0;
                    last = new SnapshotAck { Tick = h.Tick, Token = token, StateMismatch = true }; lastOK = true;
                    throw new ErrStateMismatch("tick " + h.Tick);
                }
            }
            if (window.Accept(h.Tick)) while (n > 0 && ticks[(first + n - 1) % vals.Length] >= h.Tick) n--;
            if (n > 0 && h.Tick <= ticks[(first + n - 1) % vals.Length]) throw new ErrStaleTick("tick " + h.Tick + ", history's newest is " + ticks[(first + n - 1) % vals.Length]);
            int slot = n == vals.Length ? first : (first + n) % vals.Length;
            T old = vals[slot];
            vals[slot] = scratch;
            ticks[slot] = h.Tick;
            if (n == vals.Length) first = (first + 1) % vals.Length; else n++;
            Latest = scratch;
            scratch = old ?? make();
            last = new SnapshotAck { Tick = h.Tick, Token = token }; lastOK = true;
            return h.Tick;
        }
        /// <summary>Decodes a packet and copies its snapshot into into.</summary>
        public uint Decode(byte[] packet, int length, T into) { uint t = Decode(packet, length); copy(Latest, into); return t; }
        /// <summary>Forgets every snapshot received, as for a new connection: any tick is accepted next, but only a full snapshot until a baseline is held again.</summary>
        public void Reset() { n = 0; first = 0; window.Reset(); lastOK = false; }
    }
}
