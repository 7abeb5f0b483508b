// Snapshot fragments, as Go's snapshot package reassembles them
// (docs/wire-format.md, "Fragments"): a snapshot larger than the sender's
// budget arrives as a block cut into numbered fragments, each with its own
// trailer. A Reassembler collects one block at a time and hands it back
// whole, an ordinary snapshot packet for SnapshotReceiver.Decode, with Go's
// checks in Go's order; a block lost in part is superseded by a newer
// tick's. The design is clients/ts/src/fragment.ts's.
using System;

namespace Bitwire
{
    /// <summary>A fragment kept, the block not whole yet (Go's snapshot.ErrIncomplete): not a fault, nothing to acknowledge.</summary>
    public class ErrIncomplete : BitwireException { public ErrIncomplete(string d = "fragment kept, block incomplete") : base("ErrIncomplete", d) { } }

    /// <summary>The header of a fragment packet, as Go's snapshot.FragmentHeader.</summary>
    public struct FragmentHeader
    {
        /// <summary>Fingerprint32 of the sender's codec.</summary>
        public uint Fingerprint;
        /// <summary>The block's tick.</summary>
        public uint Tick;
        /// <summary>The integrity mode: 0 none, 1 crc32c, 2 hmac-sha256-80.</summary>
        public int Mode;
        /// <summary>The fragment's number, 0 .. Count-1.</summary>
        public int Index;
        /// <summary>How many fragments the block is cut into, 1 .. Reassembler.MaxFragments.</summary>
        public int Count;
        /// <summary>The block's size in bytes.</summary>
        public int Length;
        /// <summary>The payload of every fragment but the last: ⌈Length / Count⌉ bytes.</summary>
        public int PieceSize { get { return (Length + Count - 1) / Count; } }
    }

    /// <summary>The counters of a Reassembler, as Go's snapshot.ReassemblyStats.</summary>
    public struct ReassemblyStats
    {
        /// <summary>Fragment packets taken (a duplicate is not taken).</summary>
        public int Fragments;
        /// <summary>Fragments it already held.</summary>
        public int Duplicates;
        /// <summary>Blocks completed and handed back.</summary>
        public int Blocks;
        /// <summary>Blocks dropped incomplete for a newer block's fragment.</summary>
        public int Superseded;
    }

    /// <summary>
    /// Collects the fragments of one sender (its Fingerprint32, integrity
    /// mode and key) one block at a time, at most MaxBlock bytes, as Go's
    /// snapshot.Receiver does. Add returns the block's length once its
    /// last fragment arrives, the block itself in Block (an ordinary
    /// snapshot packet for the receiver's Decode), and throws
    /// ErrIncomplete before. A fragment refused, with any error, changes
    /// nothing of what it collected. Not safe for concurrent use.
    /// </summary>
    public sealed class Reassembler
    {
        /// <summary>The first 16 bits of a fragment packet: the bytes 7E B4.</summary>
        public const ushort Magic = 0xB47E;
        /// <summary>The most fragments a block is cut into.</summary>
        public const int MaxFragments = 256;
        /// <summary>The largest block collected unless told otherwise, in bytes (Go's DefaultMaxBlock).</summary>
        public const int DefaultMaxBlock = 256 << 10;
        /// <summary>The size of a fragment header in bytes.</summary>
        public const int HeaderSize = 16;

        readonly uint fp; readonly int mode; readonly int maxBlock;
        readonly System.Security.Cryptography.HMACSHA256 mac;
        readonly bool[] have = new bool[MaxFragments];
        readonly BitReader r = new BitReader(new byte[0]);
        byte[] block = new byte[0];
        FragmentHeader cur; bool active; int got;
        Action<uint> checkTick; // the receiver's tick window (ForReceiver's), or null
        ReassemblyStats stats;

        /// <summary>
        /// A Reassembler for a sender of fingerprint fp32 (Fingerprint32 of
        /// its codec's fingerprint), integrity mode 0, 1 or 2 (with a MAC key
        /// of at least 16 bytes, none otherwise), collecting blocks of at
        /// most maxBlock bytes (0: DefaultMaxBlock; Go's SetMaxBlock).
        /// </summary>
        public Reassembler(uint fp32, int mode = 0, byte[] key = null, int maxBlock = DefaultMaxBlock)
        {
            if (mode < 0 || mode > 2) throw new ArgumentException("integrity mode " + mode);
            if ((mode == 2) != (key != null) || (mode == 2 && key.Length < 16)) throw new ArgumentException("a MAC key of at least 16 bytes with mode 2, and none otherwise");
            if (maxBlock < 0 || maxBlock >= 1 << 24) throw new ArgumentException("maxBlock " + maxBlock + ": want 0.." + ((1 << 24) - 1));
            if (mode == 2) mac = new System.Security.Cryptography.HMACSHA256((byte[])key.Clone());
            fp = fp32; this.mode = mode; this.maxBlock = maxBlock == 0 ? DefaultMaxBlock : maxBlock;
        }

        /// <summary>
        /// A Reassembler of the fragments of rc's sender: rc's fingerprint,
        /// mode and key, with every fragment's tick held to rc's tick window
        /// as Go's Receiver holds it (a forged tick far ahead is refused
        /// instead of becoming the block collected). One made by the
        /// constructor checks ticks only when the block is decoded.
        /// </summary>
        public static Reassembler ForReceiver<T>(SnapshotReceiver<T> rc, int maxBlock = DefaultMaxBlock) where T : class
        {
            var f = new Reassembler(rc.Fp, rc.Mode, rc.key, maxBlock);
            f.checkTick = rc.CheckTick;
            return f;
        }

        /// <summary>The largest block collected, in bytes.</summary>
        public int MaxBlock { get { return maxBlock; } }
        /// <summary>The counters of fragments, duplicates, blocks and blocks superseded.</summary>
        public ReassemblyStats Stats { get { return stats; } }
        /// <summary>The last block completed, in its first Add-returned bytes (the array may be longer); owned by the Reassembler, valid until the next Add.</summary>
        public byte[] Block { get { return block; } }

        /// <summary>
        /// Drops the block being collected, keeping Stats and MaxBlock: call it
        /// with the receiver's Reset (a new connection, whose ticks may start
        /// below that block's), as Go's Receiver.Reset does.
        /// </summary>
        public void Reset() { active = false; }

        /// <summary>Whether the packet's first length bytes start with the fragment magic.</summary>
        public static bool IsFragment(byte[] packet, int length) { return length >= 2 && (packet[0] | packet[1] << 8) == Magic; }

        static uint U32(byte[] p, int i) { return (uint)(p[i] | p[i + 1] << 8 | p[i + 2] << 16 | p[i + 3] << 24); }

        /// <summary>
        /// Decodes the header of a fragment packet, as Go's
        /// ParseFragmentHeader: ErrBadMagic for another magic,
        /// ErrUnexpectedEnd for fewer than 16 bytes, ErrMalformed for
        /// integrity mode 3, a reserved bit set, an index not below the count
        /// or a length the count cannot cut into non-empty pieces. It checks
        /// neither the fingerprint nor the trailer.
        /// </summary>
        public static FragmentHeader ParseHeader(byte[] packet, int length)
        {
            if (length >= 2 && !IsFragment(packet, length)) throw new ErrBadMagic("fragment: magic 0x" + (packet[0] | packet[1] << 8).ToString("x4") + ", want 0x" + Magic.ToString("x4"));
            if (length < HeaderSize) throw new ErrUnexpectedEnd("fragment header");
            var h = new FragmentHeader
            {
                Fingerprint = U32(packet, 2), Tick = U32(packet, 6), Mode = packet[10] & 3,
                Index = packet[11], Count = packet[12] + 1, Length = packet[13] | packet[14] << 8 | packet[15] << 16,
            };
            if (h.Mode > 2) throw new ErrMalformed("fragment header: integrity mode " + h.Mode);
            if (packet[10] >> 2 != 0) throw new ErrMalformed("fragment header: reserved bits 0x" + (packet[10] >> 2).ToString("x"));
            if (h.Index >= h.Count) throw new ErrMalformed("fragment header: fragment " + h.Index + " of " + h.Count);
            if (h.Length < h.Count || (h.Count - 1) * h.PieceSize >= h.Length) throw new ErrMalformed("fragment header: " + h.Length + " bytes do not make " + h.Count + " fragments");
            return h;
        }

        /// <summary>
        /// Takes one fragment packet (its first length bytes). The checks, in
        /// Go's order: the header (ParseHeader's errors); the fingerprint and
        /// mode (ErrProtocolMismatch); the trailer (ErrIntegrity); the block's
        /// size against MaxBlock (ErrTooLong, before any memory is taken); the
        /// payload's size (ErrMalformed); with ForReceiver, the receiver's
        /// tick window (ErrStaleTick, ErrFutureTick; the fragment counts
        /// toward a recovery run); a tick older than the block being collected
        /// by at most ReorderTicks (ErrStaleTick), or the same tick with
        /// another count or length (ErrMalformed). Then a newer tick, or one
        /// more than ReorderTicks older, drops the block being collected
        /// (Stats.Superseded) for the new one. A fragment held
        /// already, or one that leaves the block incomplete, is
        /// ErrIncomplete; the last one returns the block's length, the block
        /// in Block, which must start with a snapshot header of the same tick
        /// (else ErrMalformed).
        /// </summary>
        public int Add(byte[] packet, int length)
        {
            var h = ParseHeader(packet, length);
            if (h.Fingerprint != fp) throw new ErrProtocolMismatch("fragment 0x" + h.Fingerprint.ToString("x8") + ", receiver 0x" + fp.ToString("x8"));
            if (h.Mode != mode) throw new ErrProtocolMismatch("fragment's integrity mode " + h.Mode + ", receiver's " + mode);
            uint token;
            int n = Trailer.Open(mode, mac, packet, length, "fragment header", out token); // at least 6: the header is 16 bytes
            if (h.Length > maxBlock) throw new ErrTooLong("fragment: a block of " + h.Length + " bytes, at most " + maxBlock);
            int from = h.Index * h.PieceSize, to = Math.Min(h.Length, from + h.PieceSize);
            if (n < HeaderSize || n - HeaderSize != to - from) throw new ErrMalformed("fragment " + h.Index + " of " + h.Count + " at tick " + h.Tick + ": " + (n - HeaderSize) + " payload bytes, want " + (to - from));
            // the fragment's tick is held to the receiver's window as a packet's
            // is (counting toward its runs)
            if (checkTick != null) checkTick(h.Tick);
            if (active)
            {
                if (h.Tick < cur.Tick && cur.Tick - h.Tick <= TickWindow.ReorderTicks) throw new ErrStaleTick("fragment of tick " + h.Tick + ", collecting tick " + cur.Tick);
                if (h.Tick == cur.Tick && (h.Count != cur.Count || h.Length != cur.Length))
                    throw new ErrMalformed("fragment at tick " + h.Tick + ": " + h.Count + " fragments of " + h.Length + " bytes, the block's are " + cur.Count + " of " + cur.Length);
                // a newer tick, or a block more than ReorderTicks ahead of a
                // fragment the window takes (not the stream's), is superseded
                if (h.Tick != cur.Tick) { stats.Superseded++; active = false; }
            }
            if (!active)
            {
                active = true; cur = h; got = 0;
                Array.Clear(have, 0, have.Length);
                if (block.Length < h.Length) block = new byte[h.Length];
            }
            if (have[h.Index]) { stats.Duplicates++; throw new ErrIncomplete("fragment " + h.Index + " of " + h.Count + " at tick " + h.Tick + " again"); }
            have[h.Index] = true;
            Buffer.BlockCopy(packet, HeaderSize, block, from, to - from);
            got++;
            stats.Fragments++;
            if (got < h.Count) throw new ErrIncomplete(got + " of " + h.Count + " fragments at tick " + h.Tick);
            active = false;
            stats.Blocks++;
            // The block is a packet of its own, of the fragments' tick: its
            // header reads whole (Go's ParseHeader), whatever follows.
            bool ok;
            try { r.Reset(block, h.Length); ok = SnapshotReceiver<object>.ReadHeader(r).Tick == h.Tick; }
            catch (BitwireException) { ok = false; }
            if (!ok) throw new ErrMalformed("block of tick " + h.Tick + ": not a snapshot packet of that tick");
            return h.Length;
        }
    }
}
