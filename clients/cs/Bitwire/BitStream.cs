// The LSB-first bit stream of docs/wire-format.md ("Bits"): BitReader, which
// charges the allocation budget of a decode, and BitWriter.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>Reads an LSB-first bit stream; reading past the end throws ErrUnexpectedEnd.</summary>
    public sealed class BitReader
    {
        // The bits at pos, pos+1 … wait in acc (have of them, have <= 64),
        // loaded from the bytes before next: a read is a mask and a shift,
        // and a byte is loaded once, not once per field that touches it.
        byte[] data; int pos, end, next, have; long spent; ulong acc;
        public BitReader(byte[] data) { Reset(data, data.Length); }
        public void Reset(byte[] d, int length) { data = d; pos = 0; end = length * 8; spent = 0; next = 0; have = 0; acc = 0; }
        /// <summary>Charges count elements that take no bits (struct{}, [0]T) to the input's allocation
        /// budget, one byte each, as Go's decoder does: 64 bytes a byte of input plus 4096, with Go's
        /// allocator rounding. Nothing else bounds how many such elements a few bytes may ask for;
        /// over the budget is ErrTooLong.</summary>
        public void ChargeZero(int count)
        {
            if (count <= 0) return;
            long need = count > 32768 ? count + 8192L : count + count / 8 + 16L;
            long left = 64L * ((end + 7) / 8) + 4096 - spent;
            if (need > left) throw new ErrTooLong(count + " elements of no bits over the allocation budget (" + left + " left)");
            spent += need;
        }
        public int Remaining { get { return end - pos; } }
        public int Position { get { return pos; } }
        // Refill loads whole bytes until acc holds more than 56 bits or the
        // input ends: then any read of at most 56 bits that the input holds is in acc.
        void Refill()
        {
            int lim = end >> 3;
            while (have <= 56 && next < lim)
            {
                acc |= (ulong)data[next++] << have;
                have += 8;
            }
        }
        /// <summary>The next n bits (n at most 64), the first in the lowest bit.</summary>
        public ulong Read(int n)
        {
            if (n > end - pos) throw new ErrUnexpectedEnd();
            if (n > 56) return ReadWide(n);
            if (have < n) Refill();
            ulong v = acc & ((1UL << n) - 1);
            acc >>= n; have -= n; pos += n;
            return v;
        }
        ulong ReadWide(int n)
        {
            ulong lo = Read(32);
            return lo | Read(n - 32) << 32;
        }
        public bool Bool()
        {
            if (pos >= end) throw new ErrUnexpectedEnd();
            if (have == 0) Refill();
            bool b = (acc & 1) != 0;
            acc >>= 1; have--; pos++;
            return b;
        }
        /// <summary>The next n bits (n at most 56) without reading them; bits past the end read as 0.</summary>
        public ulong Peek(int n)
        {
            int k = Math.Min(n, end - pos);
            if (k <= 0) return 0;
            int p = pos, nx = next, h = have; ulong a = acc;
            ulong v = Read(k);
            pos = p; next = nx; have = h; acc = a;
            return v;
        }
        /// <summary>Skips n bits; past the end is ErrUnexpectedEnd.</summary>
        public void Skip(int n)
        {
            if (n < 0 || n > end - pos) throw new ErrUnexpectedEnd();
            if (n < have) { acc >>= n; have -= n; pos += n; return; }
            int p = pos + n;
            next = p >> 3; acc = 0; have = 0; pos = p;
            int off = p & 7;
            if (off != 0) { acc = (ulong)data[next++] >> off; have = 8 - off; }
        }
        /// <summary>Fewer than 8 bits remain and all are zero.</summary>
        public bool CheckPadding()
        {
            int rem = Remaining;
            if (rem >= 8) return false;
            return Read(rem) == 0;
        }
    }

    /// <summary>Writes an LSB-first bit stream into a growing buffer.</summary>
    public sealed class BitWriter
    {
        byte[] buf = new byte[256]; int pos;
        public int Length { get { return pos; } }
        public void Reset() { Array.Clear(buf, 0, (pos + 7) >> 3); pos = 0; }
        public void Truncate(int p)
        {
            int from = (p + 7) >> 3;
            Array.Clear(buf, from, ((pos + 7) >> 3) - from);
            if ((p & 7) != 0) buf[p >> 3] &= (byte)((1 << (p & 7)) - 1);
            pos = p;
        }
        public void Write(ulong v, int n)
        {
            if (n == 0) return;
            int need = (pos + n + 7) >> 3;
            if (need > buf.Length) Array.Resize(ref buf, Math.Max(need, buf.Length * 2));
            if (n < 64) v &= (1UL << n) - 1;
            while (n > 0)
            {
                int off = pos & 7;
                int take = Math.Min(8 - off, n);
                buf[pos >> 3] |= (byte)((v & ((1UL << take) - 1)) << off);
                v >>= take; pos += take; n -= take;
            }
        }
        public void Bool(bool b) { Write(b ? 1UL : 0UL, 1); }
        /// <summary>The bytes written, zero-padded, without a copy (valid until the next write or Reset): send these each tick to allocate nothing.</summary>
        public ArraySegment<byte> Segment { get { return new ArraySegment<byte>(buf, 0, (pos + 7) >> 3); } }
        /// <summary>A copy of the bytes written, zero-padded.</summary>
        public byte[] ToArray() { var o = new byte[(pos + 7) >> 3]; Array.Copy(buf, o, o.Length); return o; }
    }
}
