// The tick window (Go's integrity.TickWindow) and the packet trailer
// (Go's integrity.Integrity Open), which the snapshot receiver and the
// replica client share.
using System;

namespace Bitwire
{
    /// <summary>Why TickWindow.Check refuses a tick.</summary>
    public enum TickRefusal
    {
        /// <summary>Not refused: the packet may be decoded.</summary>
        None,
        /// <summary>Not newer than the newest accepted tick.</summary>
        Stale,
        /// <summary>More than MaxAhead newer than the newest accepted tick.</summary>
        Future,
    }

    /// <summary>
    /// Which ticks (or sequence numbers) a receiver accepts, as Go's
    /// integrity.TickWindow: a tick newer than the newest accepted by at most
    /// MaxAhead. A run of RecoverAfter refused ticks that increase, each at
    /// most MaxAhead after the previous one, re-anchors the window: forward
    /// after a stall; backward (a rewind) only when rewinds are enabled, and
    /// only for ticks more than ReorderTicks behind. A re-anchoring with
    /// rewinds enabled remembers the stream it left, and a packet that
    /// continues that stream (newer than its newest tick by at most MaxAhead)
    /// takes the window back to it at once, so that a burst of forged
    /// far-away ticks costs the honest stream nothing.
    /// </summary>
    public sealed class TickWindow
    {
        /// <summary>How far a stale tick may lag the newest accepted and still be taken for reordering, never counting toward a backward run (Go's integrity.ReorderTicks).</summary>
        public const uint ReorderTicks = 32;
        /// <summary>The most a tick may be ahead of the newest accepted.</summary>
        public readonly uint MaxAhead;
        /// <summary>The refused packets of a run that re-anchor the window (never when 0).</summary>
        public readonly int RecoverAfter;
        /// <summary>Whether a backward run re-anchors the window (not with a MAC).</summary>
        public readonly bool Rewind;
        bool accepted; uint newest;
        int run; uint runTick; bool runBack; // the refused packets of the current run, its newest tick, whether of stale ticks
        bool hasLeft; uint left;             // the newest tick before the last re-anchoring
        /// <summary>A window of ticks up to maxAhead ahead, re-anchoring after recoverAfter refused packets of a run (never when 0), backward only when rewind is set.</summary>
        public TickWindow(uint maxAhead, int recoverAfter, bool rewind) { MaxAhead = maxAhead; RecoverAfter = recoverAfter; Rewind = rewind; }
        /// <summary>Whether a tick was accepted since creation or Reset.</summary>
        public bool Accepted { get { return accepted; } }
        /// <summary>The newest accepted tick (0 when none was).</summary>
        public uint Newest { get { return newest; } }
        /// <summary>
        /// Whether a packet of tick may be decoded: None, or why not. A refused
        /// tick counts toward a run, whose completing packet (and the next ones
        /// of the run) pass. Nothing else changes: call Accept once the packet
        /// was decoded whole.
        /// </summary>
        public TickRefusal Check(uint tick)
        {
            if (!accepted) return TickRefusal.None;
            if (hasLeft && tick > left && tick - left <= MaxAhead && (tick <= newest || tick - newest > MaxAhead)) return TickRefusal.None;
            TickRefusal why;
            if (tick <= newest) why = TickRefusal.Stale;
            else if (tick - newest > MaxAhead) why = TickRefusal.Future;
            else return TickRefusal.None;
            if (RecoverAfter <= 0) return why;
            bool back = tick <= newest;
            if (back && (!Rewind || newest - tick <= ReorderTicks)) return why;
            if (run > 0 && back == runBack && tick == runTick) { } // a duplicate: neither counts nor breaks the run
            else if (run > 0 && back == runBack && tick > runTick && tick - runTick <= MaxAhead) { run++; runTick = tick; }
            else { run = 1; runTick = tick; runBack = back; }
            return run >= RecoverAfter ? TickRefusal.None : why;
        }
        /// <summary>
        /// Records that the packet of tick was decoded and kept; true when tick
        /// is not newer than the previous newest (a rewind: the caller forgets
        /// what it holds of ticks from tick on).
        /// </summary>
        public bool Accept(uint tick)
        {
            bool rewound = accepted && tick <= newest;
            if (hasLeft && tick > left && tick - left <= MaxAhead) hasLeft = false; // back to the stream it left
            else if (Rewind && accepted && (tick <= newest || tick - newest > MaxAhead)) { left = newest; hasLeft = true; } // a run re-anchored the window
            accepted = true; newest = tick; run = 0;
            return rewound;
        }
        /// <summary>Forgets the newest tick and any run: the next tick is accepted, whatever it is.</summary>
        public void Reset() { accepted = false; newest = 0; run = 0; hasLeft = false; }
    }

    /// <summary>A packet's integrity trailer, as Go's integrity.Integrity: none (mode 0), CRC-32C (1) or HMAC-SHA256 truncated to 80 bits (2).</summary>
    public static class Trailer
    {
        /// <summary>The trailer's size in bytes in a mode.</summary>
        public static int Size(int mode) { return mode == 1 ? 4 : mode == 2 ? 10 : 0; }
        /// <summary>
        /// Checks the trailer of the first length bytes of packet and returns
        /// the length of the body before it, with the packet's ack token (the
        /// CRC-32C of the body, or bytes 10–13 of its MAC). A packet shorter
        /// than its trailer is ErrUnexpectedEnd with message short; a trailer
        /// that does not match, ErrIntegrity.
        /// </summary>
        public static int Open(int mode, System.Security.Cryptography.HMACSHA256 mac, byte[] packet, int length, string shortMsg, out uint token)
        {
            int body = length - Size(mode);
            if (body < 0) throw new ErrUnexpectedEnd(shortMsg);
            if (mode == 2)
            {
                byte[] tag = mac.ComputeHash(packet, 0, body);
                int diff = 0;
                for (int i = 0; i < 10; i++) diff |= tag[i] ^ packet[body + i];
                if (diff != 0) throw new ErrIntegrity("hmac-sha256-80 trailer does not match");
                token = (uint)(tag[10] | tag[11] << 8 | tag[12] << 16 | tag[13] << 24);
                return body;
            }
            token = Crc32c.Of(packet, 0, body);
            if (mode == 1)
            {
                uint tr = (uint)(packet[body] | packet[body + 1] << 8 | packet[body + 2] << 16 | packet[body + 3] << 24);
                if (tr != token) throw new ErrIntegrity("crc32c trailer does not match");
            }
            return body;
        }
    }
}
