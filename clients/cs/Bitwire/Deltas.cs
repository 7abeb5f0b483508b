// Decoding deltas (docs/wire-format.md, "Deltas"): the adaptive state of
// windowed and quaternion nodes (Rice codes against running means), index
// sets of changed, removed and added elements, and delta windows.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    public sealed partial class Decoder
    {
        // Wire version 2: the adaptive state of each windowed or quaternion node (by the id the generator gives
        // it) for one message, started at its first value; a stamp per slot marks the message it belongs to.
        public uint[] Mean = new uint[8];
        public byte[] AfterAbs = new byte[8];
        /// <summary>Per node in this message: 1 once a value (a relative quaternion, a window's difference) was read.</summary>
        public byte[] Warm = new byte[8];
        int[] stamp = new int[8];
        int msg = 1;
        public readonly long[] L4 = new long[4];
        public int Slot(int id, uint start)
        {
            if (id >= stamp.Length)
            {
                int n = Math.Max(2 * stamp.Length, id + 1);
                Array.Resize(ref stamp, n); Array.Resize(ref Mean, n); Array.Resize(ref AfterAbs, n); Array.Resize(ref Warm, n);
            }
            if (stamp[id] != msg) { stamp[id] = msg; Mean[id] = start; AfterAbs[id] = 0; Warm[id] = 0; }
            return id;
        }
        /// <summary>The Rice parameter of a running mean in 1/16ths of a step.</summary>
        public static int RiceK(uint m16) { return Math.Min(Codings.BitsRequired((ulong)m16 * 11 >> 8), 20); }
        /// <summary>A running mean (1/16ths) moved a quarter of the way toward magnitude m.</summary>
        public static uint MeanAdd(uint m16, ulong m)
        {
            uint x = (uint)Math.Min(m, 1UL << 20) << 4;
            return x >= m16 ? m16 + ((x - m16) >> 2) : m16 - ((m16 - x) >> 2);
        }
        /// <summary>A signed difference in the Rice code with parameter k, unary limit u and an Exp-Golomb escape of
        /// order k + 1 (wire-format.md, "Rice codes in deltas").</summary>
        public long RiceEG(int k, int u)
        {
            int q = 0;
            while (q < u && R.Bool()) q++;
            ulong m;
            if (q < u) m = ((ulong)q << k) | R.Read(k);
            else
            {
                int ones = 0;
                while (R.Bool()) if (++ones > 40) throw new ErrMalformed("Exp-Golomb code too long");
                int j = k + 1;
                ulong y = (1UL << (ones + j)) | R.Read(ones + j);
                m = y - (1UL << j) + ((ulong)u << k);
            }
            if (m == 0) return 0;
            return R.Bool() ? -(long)m : (long)m;
        }

        /// <summary>An index set: sorted indexes in 0..n-1 (count -1: read it). Returns how many, in list.</summary>
        public int IndexSet(int n, int count, List<int> list)
        {
            list.Clear();
            if (count < 0)
            {
                ulong c = Codings.ReadBitlen(R, 5);
                if (c > (ulong)n) throw new ErrMalformed("index set of " + c + " in " + n);
                count = (int)c;
            }
            if (count == n) { for (int i = 0; i < n; i++) list.Add(i); return n; }
            if (count == 0) return 0;
            if (!R.Bool())
            {
                if (n > R.Remaining) throw new ErrUnexpectedEnd();
                for (int i = 0; i < n; i++)
                {
                    if (R.Bool())
                    {
                        if (list.Count == count) throw new ErrMalformed("bitmask holds more than " + count + " indexes");
                        list.Add(i);
                    }
                }
                if (list.Count != count) throw new ErrMalformed("bitmask holds " + list.Count + " indexes, not " + count);
                return count;
            }
            int k = (int)R.Read(5);
            if (k >= 24) throw new ErrMalformed("Rice parameter " + k);
            long prev = -1;
            for (int j = 0; j < count; j++)
            {
                long q = 0;
                while (R.Bool()) { if (++q > n) throw new ErrMalformed("index gap past " + n); }
                long i = prev + 1 + (q << k) + (long)R.Read(k);
                if (i >= n) throw new ErrMalformed("index " + i + " past " + n);
                list.Add((int)i);
                prev = i;
            }
            return count;
        }
        /// <summary>A delta window of node id: whether the value is in it, and the difference in steps (wire version 4,
        /// wire-format.md "Deltas"): a message's first difference in a short form of k0 low bits or the plain fixed
        /// coding of width bits, later ones Rice-coded against the node's running mean, escaping after u ones to the
        /// plain fixed coding; k0 = 0: every difference in the plain fixed coding.</summary>
        public bool Window(int id, long lo, long hi, int width, int k0, int u, out long diff)
        {
            diff = 0;
            if (!R.Bool()) return false;
            int s = Slot(id, 0);
            bool warm = Warm[s] != 0;
            int k = warm ? Math.Min(RiceK(Mean[s]), Math.Max(0, width - 2)) : k0;
            int lim = warm ? u : 1;
            int q = 0;
            if (k0 > 0) while (q < lim && R.Bool()) q++;
            if (k0 > 0 && q < lim)
            {
                long m = ((long)q << k) | (long)R.Read(k);
                diff = m != 0 && R.Bool() ? -m : m;
            }
            else
            {
                diff = (long)R.Read(width) + lo;
                if (k0 > 0 && (Math.Abs(diff) >> k) < lim) throw new ErrMalformed("escaped window difference that fits the short form");
            }
            if (diff < lo || diff > hi) throw new ErrMalformed("window difference " + diff + " outside " + lo + ".." + hi);
            ulong mag = (ulong)Math.Abs(diff);
            Mean[s] = warm ? MeanAdd(Mean[s], mag) : (uint)Math.Min(mag, 1UL << 20) << 4;
            Warm[s] = 1;
            return true;
        }

        readonly Stack<List<int>> lists = new Stack<List<int>>();
        public List<int> TakeList() { return lists.Count > 0 ? lists.Pop() : new List<int>(); }
        public void GiveList(List<int> l) { lists.Push(l); }
    }
}
