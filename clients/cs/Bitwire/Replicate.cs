// The client side of package replicate: packet headers, acks and the
// ReplicaClient, which holds the entities a server replicates.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>The header of a replication packet (version 2).</summary>
    public struct ReplicaHeader { public uint Fingerprint, Seq, Tick; public int Mode; }

    /// <summary>
    /// A replication ack (Go's replicate.Ack): the newest packet accepted (0:
    /// none) and, in bit i of Mask, packet Seq-1-i, with their ack tokens; and
    /// the newest packet refused for a missing baseline since (0: none).
    /// </summary>
    public struct ReplicaAck
    {
        public const ushort Magic = 0xB2A7;
        public const int Size = 19, SizeMissing = 27;
        public uint Seq, Mask, Token, MaskToken, Missing, MissingToken;
        /// <summary>The encoded size: Size, or SizeMissing with a missing-baseline report.</summary>
        public int Length { get { return Missing != 0 ? SizeMissing : Size; } }
        static void U32(byte[] b, int at, uint v) { for (int i = 0; i < 4; i++) b[at + i] = (byte)(v >> (8 * i)); }
        /// <summary>Writes the Length bytes of Go's replicate.AppendAck: magic, flags, Seq, Mask, Token, MaskToken (and Missing, MissingToken), little-endian.</summary>
        public void WriteTo(byte[] b, int at)
        {
            b[at] = Magic & 0xFF; b[at + 1] = Magic >> 8;
            b[at + 2] = (byte)(Missing != 0 ? 1 : 0);
            U32(b, at + 3, Seq); U32(b, at + 7, Mask); U32(b, at + 11, Token); U32(b, at + 15, MaskToken);
            if (Missing != 0) { U32(b, at + 19, Missing); U32(b, at + 23, MissingToken); }
        }
    }

    /// <summary>
    /// The client side of one replicate.Peer (Go's replicate.Client, packet
    /// version 4): checks the header, the integrity mode and trailer, accepts
    /// packets in order within the bounded sequence window (a TickWindow,
    /// re-anchoring backward too without a MAC, as Go's), keeps the last BaselineDepth
    /// states of every entity it holds (with their ticks) as baselines,
    /// applies removals, full states and deltas against the right baseline
    /// with the generated code of the entity type, and says what to
    /// acknowledge (Ack, with the packets' tokens and the missing-baseline
    /// report). A packet that fails changes nothing, except that a body it
    /// cannot apply (any error after the window but ErrTooManyEntities) is
    /// reported in its acks. Entities that no packet mentions for the expiry
    /// are dropped (Removed lists them), as Go's.
    /// </summary>
    public sealed class ReplicaClient<T> where T : class
    {
        public const ushort Magic = 0xB47F;
        public const int HeaderBits = 114, BaselineDepth = 8, RecoverAfter = 8, AckWindow = 32;
        public const uint MaxAhead = 1024;
        /// <summary>As Go's replicate constants: a Peer's default Refresh in seconds, the default expiry in Refreshes, and a Server's default tick rate.</summary>
        public const int DefaultRefreshSeconds = 10, ExpiryRefreshes = 3, DefaultTickRate = 30;
        // each accepted packet's expiry looks at ExpirySweep slots; the default
        // expiry also at two for each entity the packet added, and one in
        // SweepRound of all (Go's expirySweep, sweepRound)
        const int ExpirySweep = 32, SweepRound = 256;
        // how far one packet moves the default expiry's stream clock (Go's maxClockStep)
        const uint MaxClockStep = 8;
        // an entity held: its kept states, oldest first from Head, their ticks,
        // and the stream clock when its newest state was kept
        sealed class Held { public uint Id; public readonly T[] Vals = new T[BaselineDepth]; public readonly uint[] Ticks = new uint[BaselineDepth]; public int N, Head; public uint Seen; }
        struct Staged { public uint Id; public int Slot; public T Val; public int Kind; public uint Base; }
        struct SeqToken { public uint Seq, Token; }
        readonly string root; readonly uint fp; readonly int max; readonly Func<T> make;
        readonly Message.DecodeFn<T> decode; readonly Message.DeltaFn<T> delta; readonly Limits lim;
        // a codec whose schema has pred values: Copy and Predict(older, p) of its generated coder (the
        // prediction prefix of wire-format.md, "Replication packets", Body); else null
        readonly Action<T, T> copy, predict;
        readonly int mode;
        readonly uint expiry; readonly bool auto; // the expiry in ticks (0: never); whether it is the default one, on the stream clock
        readonly System.Security.Cryptography.HMACSHA256 mac;
        // the entities held, in slots as Go's (the expiry sweeps them in slot order)
        readonly List<Held> slots = new List<Held>();
        readonly List<int> free = new List<int>();
        readonly Dictionary<uint, int> index = new Dictionary<uint, int>();
        int sweep;
        readonly List<uint> rem = new List<uint>();
        readonly List<Staged> dec = new List<Staged>();
        readonly List<T> pool = new List<T>();
        readonly BitReader r = new BitReader(new byte[0]);
        readonly SeqToken[] tokens = new SeqToken[AckWindow + 1];
        SeqToken missing;
        bool accepted; uint newest, mask, tick;
        // the sequence numbers accepted: Go's integrity.TickWindow, rewinding only without a MAC
        readonly TickWindow window;
        // the stream clock of the default expiry: each packet decoded whole
        // (accepted, or refused only as too many) advances it by its distance in
        // ticks from the previous such packet (clockTick), at most MaxClockStep
        uint clock, clockTick; bool clocked;
        bool expireAll; // the packet being applied fits the limit only once every expired entity is dropped
        /// <summary>The ids the last accepted packet set (ascending) and those it removed that were held.</summary>
        public readonly List<uint> Updated = new List<uint>(), Removed = new List<uint>();
        /// <summary>
        /// A client of entities of the generated type root (the generated
        /// Replica() calls it): integrity mode and MAC key as the Peer's, the
        /// most entities held, the expiry in ticks (Go's WithExpiry; 0: never),
        /// the Peer's Refresh in ticks (Go's WithRefresh: 0, the default
        /// DefaultRefreshSeconds at tickRate; negative, never) and the Server's
        /// tick rate (WithTickRate). Without an expiry the client expires by
        /// default as Go's: ExpiryRefreshes times the Peer's Refresh, counted on
        /// a clock of the ticks the stream covered (an outage ages nothing);
        /// never with a MAC or a Refresh of never. copy and predict are the
        /// generated coder's Copy and Predict, given for a type with pred
        /// values and only for one (its deltas start with a prediction prefix
        /// that a client without them would take for the delta's first bit);
        /// the generated Replica() passes them.
        /// </summary>
        public ReplicaClient(string root, ulong fingerprint, Func<T> make, Message.DecodeFn<T> decode, Message.DeltaFn<T> delta, Limits lim,
            int mode = 0, byte[] key = null, int maxEntities = 1 << 20, long? expiry = null, int refresh = 0, int tickRate = DefaultTickRate,
            Action<T, T> copy = null, Action<T, T> predict = null)
        {
            if (maxEntities < 1) throw new ArgumentException("max entities under 1");
            if (expiry < 0 || expiry > uint.MaxValue) throw new ArgumentException("negative expiry");
            if (tickRate < 1 || tickRate > 1000) throw new ArgumentException("tick rate outside 1..1000");
            // as Go's expiryTicks: nothing to expire when the Peer never refreshes, or nothing forged gets through
            auto = expiry == null;
            if (!auto) this.expiry = (uint)expiry.Value;
            else if (refresh < 0 || mode == 2) this.expiry = 0;
            else if (refresh == 0) this.expiry = (uint)(ExpiryRefreshes * DefaultRefreshSeconds * tickRate);
            else this.expiry = (uint)Math.Min((long)ExpiryRefreshes * refresh, 1L << 31);
            window = new TickWindow(MaxAhead, RecoverAfter, mode != 2);
            if (mode < 0 || mode > 2) throw new ArgumentException("integrity mode " + mode);
            if ((mode == 2) != (key != null) || (mode == 2 && key.Length < 16)) throw new ArgumentException("a MAC key of at least 16 bytes with mode 2, and none otherwise");
            if (mode == 2) mac = new System.Security.Cryptography.HMACSHA256((byte[])key.Clone());
            this.root = root; fp = SnapshotReceiver<T>.Fingerprint32(fingerprint); this.make = make; this.decode = decode; this.delta = delta; this.lim = lim;
            this.mode = mode; max = maxEntities;
            if ((copy == null) != (predict == null)) throw new ArgumentException("copy and predict go together");
            this.copy = copy; this.predict = predict;
        }
        public static ReplicaHeader ReadHeader(BitReader r)
        {
            if (r.Remaining < 16) throw new ErrUnexpectedEnd("replicate: header: unexpected end of input");
            ulong m = r.Read(16);
            if (m != Magic) throw new ErrBadMagic("replicate: bad magic number: 0x" + m.ToString("x"));
            if (r.Remaining < HeaderBits - 16) throw new ErrUnexpectedEnd("replicate: header: unexpected end of input");
            var h = new ReplicaHeader { Fingerprint = (uint)r.Read(32), Seq = (uint)r.Read(32), Tick = (uint)r.Read(32), Mode = (int)r.Read(2) };
            if (h.Mode > 2) throw new ErrMalformed("replicate: header: integrity mode " + h.Mode);
            if (h.Seq == 0) throw new ErrMalformed("replicate: header: sequence number 0");
            return h;
        }
        uint TokenOf(uint seq) { var t = tokens[seq % tokens.Length]; return t.Seq == seq ? t.Token : 0; }
        /// <summary>The acknowledgement of what was accepted so far (Seq 0 before any packet), with tokens and the missing-baseline report.</summary>
        public ReplicaAck Ack()
        {
            var a = new ReplicaAck { Missing = missing.Seq, MissingToken = missing.Token };
            if (!accepted) return a;
            a.Seq = newest; a.Mask = mask; a.Token = TokenOf(newest);
            for (int i = 0; i < AckWindow; i++) if ((mask & (1u << i)) != 0) a.MaskToken ^= TokenOf(newest - 1 - (uint)i);
            return a;
        }
        /// <summary>The tick of the newest accepted packet (0 before any).</summary>
        public uint Tick { get { return tick; } }
        /// <summary>The number of entities held.</summary>
        public int Count { get { return index.Count; } }
        /// <summary>The ids held, in no particular order.</summary>
        public IEnumerable<uint> Ids { get { return index.Keys; } }
        /// <summary>The state held of id and the tick it is from; the value belongs to the client until the next Decode.</summary>
        /// <summary>The states kept of id (up to BaselineDepth), oldest first, with their ticks, into vals and ticks (at least BaselineDepth long each): their count, 0 when id is not held (Go's Client.States). The states are read-only.</summary>
        public int States(uint id, T[] vals, uint[] ticks)
        {
            int slot;
            if (!index.TryGetValue(id, out slot)) return 0;
            Held e = slots[slot];
            for (int k = 0; k < e.N; k++) { int i = (e.Head + k) % BaselineDepth; vals[k] = e.Vals[i]; ticks[k] = e.Ticks[i]; }
            return e.N;
        }
        public bool TryGet(uint id, out T value, out uint fromTick)
        {
            int slot;
            if (!index.TryGetValue(id, out slot)) { value = null; fromTick = 0; return false; }
            Held e = slots[slot];
            int i = (e.Head + e.N - 1) % BaselineDepth;
            value = e.Vals[i]; fromTick = e.Ticks[i];
            return true;
        }
        void Check(uint seq)
        {
            TickRefusal why = window.Check(seq);
            if (why == TickRefusal.Stale) throw new ErrStale("replicate: stale or duplicate packet: packet " + seq + ", newest accepted " + newest);
            if (why == TickRefusal.Future) throw new ErrFuture("replicate: sequence number too far ahead: packet " + seq + ", newest accepted " + newest + " (at most " + MaxAhead + " ahead)");
        }
        /// <summary>The values of one list (packet version 3): unsigned Rice codes whose parameter follows the running
        /// mean of the values before them (each capped at the escape when it moves the mean); the escape, six 1 bits,
        /// is followed by the value as a bitlen of prefix width 5.</summary>
        struct Seq
        {
            uint mean;
            public ulong Read(BitReader r)
            {
                int k = Decoder.RiceK(mean);
                int q = 0;
                while (q < 6 && r.Bool()) q++;
                ulong m;
                if (q < 6) m = ((ulong)q << k) | r.Read(k);
                else
                {
                    m = Codings.ReadBitlen(r, 5);
                    if ((m >> k) < 6) throw new ErrMalformed("escaped Rice value that fits unescaped");
                }
                mean = Decoder.MeanAdd(mean, Math.Min(m, 6UL << k));
                return m;
            }
        }
        /// <summary>A list's count: a 0 bit for none, else a 1 bit and count - 1 as a bitlen of prefix width 5, at most the bits left.</summary>
        int ReadCount()
        {
            if (!r.Bool()) return 0;
            ulong n = Codings.ReadBitlen(r, 5);
            if (n >= (ulong)r.Remaining) throw new ErrUnexpectedEnd("replicate: a list of " + (n + 1) + " entries in " + r.Remaining + " bits");
            return (int)n + 1;
        }
        uint ReadID(ref Seq q, ref long prev)
        {
            ulong g = q.Read(r);
            if (g > uint.MaxValue || prev + 1 + (long)g > uint.MaxValue) throw new ErrMalformed("replicate: id gap past 2^32");
            prev += 1 + (long)g;
            return (uint)prev;
        }
        uint ReadBase(uint t)
        {
            ulong d = Codings.ReadBitlen(r, 5);
            if (d >= t) throw new ErrMalformed("baseline " + (d + 1) + " ticks before tick " + t);
            return t - (uint)d - 1;
        }
        T Scratch() { if (pool.Count == 0) return make(); T v = pool[pool.Count - 1]; pool.RemoveAt(pool.Count - 1); return v; }
        /// <summary>Applies one packet; on any error nothing changes and the packet must not be acknowledged (Ack says what to send).</summary>
        public void Decode(byte[] packet, int length)
        {
            r.Reset(packet, length);
            var h = ReadHeader(r);
            if (h.Fingerprint != fp) throw new ErrProtocolMismatch("replicate: protocol mismatch: packet 0x" + h.Fingerprint.ToString("x8") + ", client 0x" + fp.ToString("x8"));
            if (h.Mode != mode) throw new ErrProtocolMismatch("replicate: packet integrity " + h.Mode + ", client " + mode);
            uint token;
            int body = Trailer.Open(mode, mac, packet, length, "replicate: header: unexpected end of input", out token);
            if (body * 8 < HeaderBits) throw new ErrUnexpectedEnd("replicate: packet " + h.Seq + ": unexpected end of input");
            r.Reset(packet, body);
            ReadHeader(r);
            Check(h.Seq);
            rem.Clear();
            dec.Clear();
            try { Read(h); }
            catch (BitwireException e)
            {
                foreach (var s in dec) pool.Add(s.Val);
                dec.Clear();
                // a body it cannot apply, which passed the trailer (a baseline it
                // lacks, or one a forgery altered): the ack reports it
                if (!(e is ErrTooManyEntities)) missing = new SeqToken { Seq = h.Seq, Token = token };
                throw;
            }
            // commit: removals, then the entities
            Updated.Clear(); Removed.Clear();
            int heldBefore = index.Count;
            clock = ClockAt(h.Tick); clockTick = h.Tick; clocked = true;
            foreach (uint id in rem)
            {
                int slot;
                if (!index.TryGetValue(id, out slot)) continue;
                index.Remove(id);
                free.Add(slot);
                Removed.Add(id);
            }
            foreach (var s in dec)
            {
                Held e = slots[s.Slot >= 0 ? s.Slot : Alloc(s.Id)];
                // states of this tick or later are dropped first (never in the
                // sender's own stream); kept ticks therefore always increase
                while (e.N > 0 && e.Ticks[(e.Head + e.N - 1) % BaselineDepth] >= h.Tick) e.N--;
                int slot;
                if (e.N < BaselineDepth) { slot = (e.Head + e.N) % BaselineDepth; e.N++; }
                else { slot = e.Head; e.Head = (e.Head + 1) % BaselineDepth; }
                T old = e.Vals[slot];
                e.Vals[slot] = s.Val; e.Ticks[slot] = h.Tick;
                if (old != null) pool.Add(old);
                e.Seen = clock;
                Updated.Add(s.Id);
            }
            dec.Clear();
            if (!accepted || h.Seq <= newest) mask = 0;
            else
            {
                uint shift = h.Seq - newest;
                mask = shift > AckWindow ? 0 : shift == 32 ? 1u << 31 : (mask << (int)shift) | (1u << (int)(shift - 1));
            }
            accepted = true; newest = h.Seq; tick = h.Tick;
            tokens[h.Seq % tokens.Length] = new SeqToken { Seq = h.Seq, Token = token };
            if (h.Seq > missing.Seq) missing = new SeqToken();
            window.Accept(h.Seq);
            if (expiry != 0)
            {
                // the sweep keeps ahead of what packets add, and goes round a
                // large view in a bounded number of packets
                int n = ExpirySweep;
                if (auto) n += 2 * Math.Max(index.Count - heldBefore, 0) + slots.Count / SweepRound;
                if (expireAll) n = slots.Count;
                Expire(h.Tick, n);
            }
        }
        int Alloc(uint id)
        {
            int slot;
            if (free.Count > 0) { slot = free[free.Count - 1]; free.RemoveAt(free.Count - 1); }
            else { slot = slots.Count; slots.Add(new Held()); }
            var e = slots[slot];
            e.Id = id; e.N = 0; e.Head = 0;
            index[id] = slot;
            return slot;
        }
        // the stream clock once the packet of tick t is accepted
        uint ClockAt(uint t)
        {
            if (!clocked) return clock;
            return clock + Math.Min(Math.Max(t, clockTick) - Math.Min(t, clockTick), MaxClockStep);
        }
        // Stale says whether the expiry drops the entity of slot at the packet
        // of tick t, after which the stream clock reads c: the default expiry,
        // when the clock moved on by more than the expiry since its newest
        // state was kept; the expiry option, when its newest state is more than
        // the expiry away from t, either way.
        bool Stale(int slot, uint t, uint c)
        {
            var e = slots[slot];
            if (auto) return c - e.Seen > expiry;
            uint nt = e.Ticks[(e.Head + e.N - 1) % BaselineDepth];
            return Math.Max(nt, t) - Math.Min(nt, t) > expiry;
        }
        // Expired counts the entities held, and neither removed nor set by the
        // packet being read, that the expiry would drop at tick t: looked at
        // only for a packet that would otherwise be refused as too many.
        int Expired(uint t, uint c)
        {
            if (expiry == 0) return 0;
            int n = 0;
            foreach (int slot in index.Values) if (Stale(slot, t, c)) n++;
            foreach (var d in dec) if (d.Slot >= 0 && Stale(d.Slot, t, c)) n--;
            foreach (uint id in rem)
            {
                int slot;
                if (index.TryGetValue(id, out slot) && Stale(slot, t, c)) n--;
            }
            return n;
        }
        // Expire drops the entities, among the next n slots, that are stale at tick t.
        void Expire(uint t, int n)
        {
            for (int k = 0; k < n && slots.Count > 0; k++)
            {
                if (sweep >= slots.Count) sweep = 0;
                int slot = sweep++;
                var e = slots[slot];
                int at;
                if (!index.TryGetValue(e.Id, out at) || at != slot || e.N == 0) continue; // a free slot
                if (Stale(slot, t, clock))
                {
                    index.Remove(e.Id);
                    free.Add(slot);
                    Removed.Add(e.Id);
                }
            }
        }
        void Read(ReplicaHeader h)
        {
            int held = index.Count;
            long prev = -1;
            var q = new Seq();
            for (int n = ReadCount(); n > 0; n--)
            {
                uint id = ReadID(ref q, ref prev);
                rem.Add(id);
                if (index.ContainsKey(id)) held--;
            }
            uint common = 0;
            bool hasCommon = r.Bool();
            if (hasCommon) common = ReadBase(h.Tick);
            // the entities: ids, then the kinds of those that are not deltas
            // against the common baseline (0 common, 1 own, 2 full), then the bodies
            prev = -1;
            q = new Seq();
            int ri = 0;
            for (int n = ReadCount(); n > 0; n--)
            {
                uint id = ReadID(ref q, ref prev);
                while (ri < rem.Count && rem[ri] < id) ri++;
                bool removedHere = ri < rem.Count && rem[ri] == id;
                int slot = -1;
                if (!removedHere && !index.TryGetValue(id, out slot)) slot = -1;
                dec.Add(new Staged { Id = id, Slot = slot, Val = Scratch(), Kind = 0, Base = common });
            }
            var at = new Seq();
            var vals = new Seq();
            int last = -1;
            for (int n = ReadCount(); n > 0; n--)
            {
                ulong g = at.Read(r);
                if (g >= (ulong)(dec.Count - last - 1)) throw new ErrMalformed("a kind past the " + dec.Count + " entities");
                last += 1 + (int)g;
                var d = dec[last];
                ulong v = vals.Read(r);
                if (v == 0) d.Kind = 2;
                else if (v > h.Tick) throw new ErrMalformed("id " + d.Id + ": baseline " + v + " ticks before tick " + h.Tick);
                else if (hasCommon && h.Tick - (uint)v == common) throw new ErrMalformed("id " + d.Id + ": its own baseline is the common one");
                else { d.Kind = 1; d.Base = h.Tick - (uint)v; }
                dec[last] = d;
            }
            foreach (var d in dec)
            {
                Held e = d.Slot >= 0 ? slots[d.Slot] : null;
                if (d.Kind == 2)
                {
                    Message.DecodeFrom(root, r, d.Val, decode, lim);
                    if (e == null) held++;
                    continue;
                }
                if (d.Kind == 0 && !hasCommon) throw new ErrMalformed("id " + d.Id + ": a delta against the common baseline of a packet without one");
                int bi = -1;
                if (e != null) for (int i = 0; i < e.N; i++) { int j = (e.Head + i) % BaselineDepth; if (e.Ticks[j] == d.Base) { bi = j; break; } }
                if (bi < 0) throw new ErrNoBaseline("replicate: entity baseline not held: id " + d.Id + " against tick " + d.Base);
                T bv = e.Vals[bi];
                // a predicting codec's prediction prefix: whether the delta is predicted, and from which older state
                if (predict != null && r.Bool())
                {
                    uint o = ReadBase(d.Base);
                    int oi = -1;
                    for (int i = 0; i < e.N; i++) { int j = (e.Head + i) % BaselineDepth; if (e.Ticks[j] == o) { oi = j; break; } }
                    if (oi < 0) throw new ErrNoBaseline("replicate: entity baseline not held: id " + d.Id + " predicted from tick " + o);
                    T pv = make();
                    copy(bv, pv);
                    predict(e.Vals[oi], pv);
                    bv = pv;
                }
                Message.DecodeDeltaFrom(root, r, bv, d.Val, delta, lim);
            }
            if (!r.CheckPadding()) throw new ErrTrailingData(r.Remaining + " bits left");
            expireAll = false;
            if (held > max)
            {
                uint c = ClockAt(h.Tick);
                if (held - Expired(h.Tick, c) > max)
                {
                    // the stream goes on meanwhile: what a forgery made up ages
                    // even while every genuine packet is refused
                    clock = c; clockTick = h.Tick; clocked = true;
                    throw new ErrTooManyEntities("replicate: too many entities: " + held + ", limit " + max);
                }
                expireAll = true;
            }
        }
    }
}
