// Encoding deltas as Go's Codec.EncodeDelta does (docs/wire-format.md,
// "Deltas"), for what a client sends: the InputSender's older inputs. The
// mirror of Deltas.cs: delta windows and relative quaternions with their
// adaptive state, the Rice codes with an Exp-Golomb escape, and index sets
// of changed elements; the equality helpers that decide the changed bits
// are here too. Quaternions.cs writes a quaternion's delta, EntitySets.cs
// an entity set's.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    public sealed partial class Encoder
    {
        // The adaptive state of each windowed or quaternion node in this
        // message, as the Decoder keeps it (Deltas.cs), by the same node ids.
        internal uint[] Mean = new uint[8];
        internal byte[] AfterAbs = new byte[8];
        internal byte[] Warm = new byte[8];
        int[] stamp = new int[8];
        int msg = 1;
        /// <summary>The packed baseline of a quaternion delta, and its four indexes re-expressed.</summary>
        internal readonly int[] P4b = new int[4];
        internal readonly long[] L4 = new long[4];
        internal int Slot(int id, uint start)
        {
            if (id >= stamp.Length)
            {
                int n = Math.Max(2 * stamp.Length, id + 1);
                Array.Resize(ref stamp, n); Array.Resize(ref Mean, n); Array.Resize(ref AfterAbs, n); Array.Resize(ref Warm, n);
            }
            if (stamp[id] != msg) { stamp[id] = msg; Mean[id] = start; AfterAbs[id] = 0; Warm[id] = 0; }
            return id;
        }

        /// <summary>Writes a difference diff in lo..hi through the delta window of node id (what
        /// Decoder.Window reads): the in-window bit, then the short Rice form when the difference fits it,
        /// else the plain fixed coding of width bits. A value outside the window is the caller's: a 0 bit
        /// (WindowMiss) and the value in full.</summary>
        public void Window(int id, long lo, long hi, int width, int k0, int u, long diff)
        {
            W.Bool(true);
            int s = Slot(id, 0);
            bool isWarm = Warm[s] != 0;
            int k = isWarm ? Math.Min(Decoder.RiceK(Mean[s]), Math.Max(0, width - 2)) : k0;
            int lim = isWarm ? u : 1;
            ulong mag = (ulong)Math.Abs(diff);
            if (k0 > 0 && (mag >> k) < (ulong)lim)
            {
                int q = (int)(mag >> k);
                for (int i = 0; i < q; i++) W.Bool(true);
                W.Bool(false);
                W.Write(mag & ((1UL << k) - 1), k);
                if (mag != 0) W.Bool(diff < 0);
            }
            else
            {
                if (k0 > 0) for (int i = 0; i < lim; i++) W.Bool(true);
                W.Write((ulong)(diff - lo), width);
            }
            Mean[s] = isWarm ? Decoder.MeanAdd(Mean[s], mag) : (uint)Math.Min(mag, 1UL << 20) << 4;
            Warm[s] = 1;
        }
        /// <summary>The bit of a value outside its node's window: its full coding follows.</summary>
        public void WindowMiss() { W.Bool(false); }

        /// <summary>Writes n one bits.</summary>
        internal void Ones(int n)
        {
            for (; n >= 32; n -= 32) W.Write(0xFFFFFFFFUL, 32);
            W.Write((1UL << n) - 1, n);
        }
        /// <summary>The size of a difference of magnitude m, its sign included, in the Rice code with parameter k,
        /// unary limit u and an Exp-Golomb escape of order k + 1 (what Decoder.RiceEG reads).</summary>
        internal static int RiceEGLen(ulong m, int k, int u)
        {
            int sign = m != 0 ? 1 : 0;
            if ((m >> k) < (ulong)u) return (int)(m >> k) + 1 + k + sign;
            int j = k + 1;
            int l = Codings.BitsRequired(m - ((ulong)u << k) + (1UL << j));
            return u + 2 * l - j - 1 + sign;
        }
        /// <summary>Writes a signed difference v in that code: below the limit, q ones, a 0 and the k low bits;
        /// else u ones and the Exp-Golomb code of order k + 1 of m - u·2^k; then the sign of a nonzero v.</summary>
        internal void RiceEG(long v, int k, int u)
        {
            ulong m = (ulong)Math.Abs(v);
            if ((m >> k) < (ulong)u)
            {
                Ones((int)(m >> k));
                W.Bool(false);
                W.Write(m & ((1UL << k) - 1), k);
            }
            else
            {
                int j = k + 1;
                ulong y = m - ((ulong)u << k) + (1UL << j);
                int l = Codings.BitsRequired(y);
                Ones(u + l - 1 - j);
                W.Bool(false);
                W.Write(y & ((1UL << (l - 1)) - 1), l - 1);
            }
            if (m != 0) W.Bool(v < 0);
        }

        /// <summary>Writes an index set (what Decoder.IndexSet reads), as Go's fields.WriteIndexSet: the count
        /// (unless the reader knows it), then a bitmask of n bits when it is no longer than the Rice-coded gaps
        /// with the best parameter (the least on ties), else the parameter and the gaps.</summary>
        public void IndexSet(List<int> idx, int n, bool countKnown)
        {
            int c = idx.Count;
            if (!countKnown) Codings.WriteBitlen(W, (ulong)c, 5);
            if (c == 0 || c == n) return;
            int bestK = 0, best = int.MaxValue;
            bool mask = n <= 5 + c;
            if (!mask)
            {
                int kmax = Math.Min(Codings.BitsRequired((ulong)n), 23);
                for (int k = 0; k <= kmax; k++)
                {
                    int cost = 0, prev = -1;
                    foreach (int i in idx) { cost += ((i - prev - 1) >> k) + 1 + k; prev = i; }
                    if (cost < best) { best = cost; bestK = k; }
                }
                mask = n <= 5 + best;
            }
            if (mask)
            {
                W.Bool(false);
                int j = 0;
                for (int i = 0; i < n; i++)
                {
                    bool set = j < c && idx[j] == i;
                    if (set) j++;
                    W.Bool(set);
                }
                return;
            }
            W.Bool(true);
            W.Write((ulong)bestK, 5);
            int last = -1;
            foreach (int i in idx)
            {
                int g = i - last - 1;
                for (int q = g >> bestK; q > 0; q--) W.Bool(true);
                W.Bool(false);
                W.Write((ulong)g & ((1UL << bestK) - 1), bestK);
                last = i;
            }
        }

        readonly Stack<List<int>> lists = new Stack<List<int>>();
        public List<int> TakeList() { var l = lists.Count > 0 ? lists.Pop() : new List<int>(); l.Clear(); return l; }
        public void GiveList(List<int> l) { lists.Push(l); }
    }

    public static partial class Codings
    {
        /// <summary>Equal byte slices; null is the empty slice, as Go's nil and []byte{} code alike.</summary>
        public static bool SameBytes(byte[] a, byte[] b)
        {
            int n = a == null ? 0 : a.Length;
            if (n != (b == null ? 0 : b.Length)) return false;
            for (int i = 0; i < n; i++) if (a[i] != b[i]) return false;
            return true;
        }
        /// <summary>Equal lists (null is empty), elements by same.</summary>
        public static bool SameList<T>(List<T> a, List<T> b, Func<T, T, bool> same)
        {
            int n = a == null ? 0 : a.Count;
            if (n != (b == null ? 0 : b.Count)) return false;
            for (int i = 0; i < n; i++) if (!same(a[i], b[i])) return false;
            return true;
        }
        /// <summary>Equal maps (null is empty): the same keys, values by same.</summary>
        public static bool SameMap<K, V>(Dictionary<K, V> a, Dictionary<K, V> b, Func<V, V, bool> same)
        {
            int n = a == null ? 0 : a.Count;
            if (n != (b == null ? 0 : b.Count)) return false;
            if (n == 0) return true;
            foreach (var kv in a)
            {
                V v;
                if (!b.TryGetValue(kv.Key, out v) || !same(kv.Value, v)) return false;
            }
            return true;
        }
        /// <summary>Equal arrays, elements by same.</summary>
        public static bool SameArray<T>(T[] a, T[] b, Func<T, T, bool> same)
        {
            if (a == null || b == null || a.Length != b.Length) return a == b;
            for (int i = 0; i < a.Length; i++) if (!same(a[i], b[i])) return false;
            return true;
        }
    }
}
