// The smallest-three quaternion coding (docs/wire-format.md, "Quaternions"),
// in full and relative to a baseline, with and without a model; relative
// quaternions are written too (without a model), for a client's inputs.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>The smallest-three quaternion coding with N bits a component.</summary>
    public sealed class QuatCoder
    {
        const double InvSqrt2 = 0.70710678118654757; // math.Sqrt2 / 2
        const double Margin = 1e-6;
        static readonly int[][] Others = { new[] { 1, 2, 3 }, new[] { 0, 2, 3 }, new[] { 0, 1, 3 }, new[] { 0, 1, 2 } };
        // The components lie on a grid of 2^N - 2 steps over [-1/√2, +1/√2] anchored at zero: index
        // half = 2^(N-1) - 1 is exactly 0; index 2^N - 1 is above the grid (malformed).
        public readonly int N; public readonly int Steps; readonly int half; readonly double step;
        public QuatCoder(int n) { N = n; Steps = (1 << n) - 2; half = Steps / 2; step = 2 * InvSqrt2 / Steps; }
        double Val(int i) { return (double)(i - half) * step; }
        int Dist(int i) { return 2 * i > Steps ? 2 * i - Steps : Steps - 2 * i; }
        int Idx(double c)
        {
            double k = Math.Floor(c / step + 0.5) + half;
            return (int)Math.Min(Math.Max(k, 0), Steps);
        }
        bool Rebuild(int a, int b, int c, out double d)
        {
            double va = Val(a), vb = Val(b), vc = Val(c);
            double s = 1 - va * va - vb * vb - vc * vc;
            if (s < 0) { d = double.NaN; return false; }
            d = Math.Sqrt(s);
            // The largest |Val(i)| is Val's of the index farthest from half:
            // |i - half| * step, exact, and ordered as the integers are.
            int ma = a > half ? a - half : half - a, mb = b > half ? b - half : half - b, mc = c > half ? c - half : half - c;
            int m = ma > mb ? ma : mb;
            if (mc > m) m = mc;
            return d >= m * step + Margin;
        }
        // Clear reports whether the coded indexes p[1..3] leave the dropped component the largest.
        bool Clear(int[] p)
        {
            double a = Val(p[1]), b = Val(p[2]), c = Val(p[3]);
            double s = 1 - a * a - b * b - c * c;
            int dd = Math.Max(Dist(p[1]), Math.Max(Dist(p[2]), Dist(p[3])));
            double t = dd * (step / 2) + Margin;
            double tt = t * t;
            if (s > tt * (1 + 1e-9)) return true;
            if (s < tt * (1 - 1e-9)) return false;
            double d;
            return Rebuild(p[1], p[2], p[3], out d);
        }
        static double Comp(int i, double x, double y, double z, double w) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
        /// <summary>Packs (x, y, z, w) into p = [m, a, b, c] (allocating nothing).</summary>
        public void Pack(double x, double y, double z, double w, int[] p)
        {
            double norm2 = x * x + y * y + z * z + w * w;
            if (!(Math.Abs(norm2 - 1) <= 1e-3)) throw new ErrInvalidValue("quaternion not of unit length");
            int m = 0;
            for (int i = 1; i < 4; i++) if (Math.Abs(Comp(i, x, y, z, w)) > Math.Abs(Comp(m, x, y, z, w))) m = i;
            double scale = 1 / Math.Sqrt(norm2);
            if (Comp(m, x, y, z, w) < 0) scale = -scale;
            int[] o = Others[m];
            p[0] = m;
            for (int k = 0; k < 3; k++) p[k + 1] = Idx(Comp(o[k], x, y, z, w) * scale);
            for (int pass = 0; !Clear(p); pass++)
            {
                if (pass > 3 * Steps) throw new ErrInvalidValue("quaternion");
                int j = 1;
                for (int i = 2; i < 4; i++) if (Dist(p[i]) > Dist(p[j])) j = i;
                if (2 * p[j] > Steps) p[j]--; else p[j]++;
            }
        }
        /// <summary>Unpacks p = [m, a, b, c] into out (x, y, z, w).</summary>
        public void Unpack(int[] p, double[] o)
        {
            int ia = p[1], ib = p[2], ic = p[3];
            if (ia > Steps || ib > Steps || ic > Steps) throw new ErrMalformed("quaternion component index above the grid");
            // Rebuild, inline: the hot path of every decoded quaternion.
            int h = half;
            double st = step;
            double a = (double)(ia - h) * st, b = (double)(ib - h) * st, c = (double)(ic - h) * st;
            double s = 1 - a * a - b * b - c * c;
            if (s < 0) throw new ErrInvalidValue("quaternion radicand below zero");
            double d = Math.Sqrt(s);
            int ma = ia > h ? ia - h : h - ia, mb = ib > h ? ib - h : h - ib, mc = ic > h ? ic - h : h - ic;
            int mx = ma > mb ? ma : mb;
            if (mc > mx) mx = mc;
            if (!(d >= mx * st + Margin)) throw new ErrMalformed("quaternion: dropped component not the largest");
            switch (p[0])
            {
                case 0: o[0] = d; o[1] = a; o[2] = b; o[3] = c; break;
                case 1: o[0] = a; o[1] = d; o[2] = b; o[3] = c; break;
                case 2: o[0] = a; o[1] = b; o[2] = d; o[3] = c; break;
                default: o[0] = a; o[1] = b; o[2] = c; o[3] = d; break;
            }
        }
        public void Read(BitReader r, int[] p)
        {
            if (N <= 18)
            {
                // all 2 + 3N bits in one read, split by shifts
                ulong v = r.Read(2 + 3 * N);
                int mask = (1 << N) - 1;
                p[0] = (int)(v & 3); v >>= 2;
                p[1] = (int)v & mask; p[2] = (int)(v >> N) & mask; p[3] = (int)(v >> (2 * N)) & mask;
                return;
            }
            p[0] = (int)r.Read(2); p[1] = (int)r.Read(N); p[2] = (int)r.Read(N); p[3] = (int)r.Read(N);
        }
        public void Write(BitWriter w, int[] p) { w.Write((ulong)p[0], 2); w.Write((ulong)p[1], N); w.Write((ulong)p[2], N); w.Write((ulong)p[3], N); }
        static readonly int[] Order0 = { 0, 1, 4, 2, 3 }, Order1 = { 4, 0, 1, 2, 3 };
        /// <summary>Reads a quaternion's delta against the baseline base (x, y, z, w) into o (wire version 4,
        /// wire-format.md "Quaternions in deltas"); id names the quaternion node, whose state lives in d for one message.</summary>
        public void ReadDelta(Decoder d, int id, double bx, double by, double bz, double bw, double[] o, int[] scratch, int[] pb)
        {
            BitReader r = d.R;
            int s = d.Slot(id, 32);
            int start = r.Position;
            int pos = 0;
            while (pos < 4 && r.Bool()) pos++;
            int mode = d.AfterAbs[s] != 0 ? Order1[pos] : Order0[pos];
            if (mode == 4) { d.AfterAbs[s] = 1; Read(r, scratch); Unpack(scratch, o); return; }
            Pack(bx, by, bz, bw, pb);
            long[] all = d.L4;
            int mc = Rebase(pb, mode, all);
            int[] oc = Others[mc];
            long e0 = 0, e1 = 0, e2 = 0;
            scratch[0] = mc;
            for (int k = 0; k < 3; k++)
            {
                int kk = k == 0 ? Decoder.RiceK(d.Mean[s]) : k == 1 ? Decoder.RiceK(16u * (uint)Math.Min(Math.Abs(e0), 1L << 20))
                    : Decoder.RiceK(16u * (uint)Math.Min((Math.Abs(e0) + Math.Abs(e1) + 1) / 2, 1L << 20));
                long e = d.RiceEG(kk, k == 0 && d.Warm[s] == 0 ? 3 : 5);
                if (k == 0) e0 = e; else if (k == 1) e1 = e; else e2 = e;
                long v = (mode == 0 ? pb[k + 1] : all[oc[k]]) + e;
                if (v < 0 || v > Steps) throw new ErrMalformed("relative quaternion component out of range");
                scratch[k + 1] = (int)v;
            }
            if (r.Position - start > 3 + 2 + 3 * N) throw new ErrMalformed("relative quaternion longer than the absolute one");
            d.Mean[s] = Decoder.MeanAdd(d.Mean[s], (ulong)((Math.Abs(e0) + Math.Abs(e1) + Math.Abs(e2) + 1) / 3));
            d.AfterAbs[s] = 0;
            d.Warm[s] = 1;
            Unpack(scratch, o);
        }
        /// <summary>Writes the delta of the changed quaternion c (x, y, z, w) against the baseline b as Go's
        /// Codec.EncodeDelta does (wire version 4, wire-format.md "Quaternions in deltas"): the relative form
        /// (its mode, then three index differences in the Rice code with an Exp-Golomb escape) when it is no
        /// longer than the absolute one, else the absolute form, which a baseline that cannot be packed forces.
        /// id names the quaternion node, whose state lives in e for one message.</summary>
        public void WriteDelta(Encoder e, int id, double bx, double by, double bz, double bw, double cx, double cy, double cz, double cw)
        {
            int[] pc = e.P4, pb = e.P4b;
            Pack(cx, cy, cz, cw, pc);
            bool packed = true;
            try { Pack(bx, by, bz, bw, pb); }
            catch (ErrInvalidValue) { packed = false; }
            int s = e.Slot(id, 32);
            int[] order = e.AfterAbs[s] != 0 ? Order1 : Order0;
            if (packed && WriteRelative(e, s, order, pb, pc)) return;
            WriteMode(e, order, 4);
            Write(e.W, pc);
            e.AfterAbs[s] = 1;
        }
        /// <summary>Writes pc relative to pb with the state of slot s and reports true, or writes nothing and
        /// reports false when the relative form would be longer than the absolute one.</summary>
        bool WriteRelative(Encoder e, int s, int[] order, int[] pb, int[] pc)
        {
            long e0, e1, e2;
            int rank = Diffs(pb, pc, e.L4, out e0, out e1, out e2);
            ulong a0 = (ulong)Math.Abs(e0), a1 = (ulong)Math.Abs(e1), a2 = (ulong)Math.Abs(e2);
            int k0 = Decoder.RiceK(e.Mean[s]), u0 = e.Warm[s] != 0 ? 5 : 3;
            int k1 = Decoder.RiceK(16u * (uint)Math.Min(a0, 1UL << 20)), k2 = Decoder.RiceK(16u * (uint)Math.Min((a0 + a1 + 1) / 2, 1UL << 20));
            int size = ModeLen(order, rank) + Encoder.RiceEGLen(a0, k0, u0) + Encoder.RiceEGLen(a1, k1, 5) + Encoder.RiceEGLen(a2, k2, 5);
            if (size > 5 + 3 * N) return false;
            WriteMode(e, order, rank);
            e.RiceEG(e0, k0, u0);
            e.RiceEG(e1, k1, 5);
            e.RiceEG(e2, k2, 5);
            e.Mean[s] = Decoder.MeanAdd(e.Mean[s], (a0 + a1 + a2 + 1) / 3);
            e.AfterAbs[s] = 0;
            e.Warm[s] = 1;
            return true;
        }
        /// <summary>The mode (rank) of pc against pb, both packed, and its three index differences: rank 0 keeps
        /// the baseline's dropped component; another is the rank of pc's dropped component among pb's coded ones
        /// (Rebase's order), against pb re-expressed with it dropped (in all).</summary>
        int Diffs(int[] pb, int[] pc, long[] all, out long e0, out long e1, out long e2)
        {
            int mc = pc[0];
            if (mc == pb[0])
            {
                e0 = pc[1] - pb[1]; e1 = pc[2] - pb[2]; e2 = pc[3] - pb[3];
                return 0;
            }
            int[] ob = Others[pb[0]];
            int at = Array.IndexOf(ob, mc), dm = Dist(pb[at + 1]), rank = 1;
            for (int k = 0; k < 3; k++)
                if (k != at && (Dist(pb[k + 1]) > dm || (Dist(pb[k + 1]) == dm && k < at))) rank++;
            Rebase(pb, rank, all);
            int[] oc = Others[mc];
            e0 = pc[1] - all[oc[0]]; e1 = pc[2] - all[oc[1]]; e2 = pc[3] - all[oc[2]];
            return rank;
        }
        /// <summary>A mode's code (wire-format.md): at position i of order, i ones then a 0, the last four ones.</summary>
        static int ModeLen(int[] order, int mode) { int i = Array.IndexOf(order, mode); return i == 4 ? 4 : i + 1; }
        static void WriteMode(Encoder e, int[] order, int mode)
        {
            int i = Array.IndexOf(order, mode);
            e.Ones(i);
            if (i < 4) e.W.Bool(false);
        }
        /// <summary>The component dropped by a relative quaternion of the given rank against the packed baseline
        /// pb, and in all the baseline's four indexes re-expressed with it dropped (rank 1..3; for rank 0 all is
        /// filled but only pb's indexes are used): wire-format.md, "Quaternions in deltas".</summary>
        int Rebase(int[] pb, int rank, long[] all)
        {
            int mb = pb[0];
            int[] ob = Others[mb];
            long t = 2L * Steps * Steps;
            for (int k = 0; k < 3; k++) { all[ob[k]] = pb[k + 1]; long sx = 2L * pb[k + 1] - Steps; t -= sx * sx; }
            long root = t > 0 ? (long)Math.Sqrt(t) : 0;
            while (root * root > t) root--;
            while ((root + 1) * (root + 1) <= t) root++;
            all[mb] = Math.Min((root + Steps + 1) / 2, Steps);
            int mc = mb;
            if (rank > 0)
            {
                foreach (int c in ob)
                {
                    int r = 1;
                    foreach (int c2 in ob)
                        if (c2 != c && (Dist((int)all[c2]) > Dist((int)all[c]) || (Dist((int)all[c2]) == Dist((int)all[c]) && c2 < c))) r++;
                    if (r == rank) mc = c;
                }
                if (2 * all[mc] < Steps) for (int k = 0; k < 4; k++) all[k] = Steps - all[k];
            }
            return mc;
        }
        /// <summary>The magnitude class of a quaternion difference as a context of the next one: its bit length, at most 7.</summary>
        static int MagClass(long m) { return Math.Min(Codings.BitsRequired((ulong)m), 7); }
        /// <summary>Reads a quaternion's delta coded with a model's 17 tables t (the first table, D1[0..7],
        /// D2[0..7]; wire-format.md, "Models", "Quaternions") against the baseline (x, y, z, w) into o.</summary>
        public void ReadDeltaModel(Decoder d, Code[] t, double bx, double by, double bz, double bw, double[] o, int[] scratch, int[] pb)
        {
            int start = d.R.Position;
            ReadDeltaModelFrom(d, t, t[0].Read(d.R), start, bx, by, bz, bw, o, scratch, pb);
        }
        /// <summary>ReadDeltaModel after the first table's symbol first was read from bit start: for a struct whose
        /// changed bit that table holds ("unchanged", its last symbol, is ErrMalformed here).</summary>
        public void ReadDeltaModelFrom(Decoder d, Code[] t, int first, int start, double bx, double by, double bz, double bw, double[] o, int[] scratch, int[] pb)
        {
            BitReader r = d.R;
            if (first == 0) { Read(r, scratch); Unpack(scratch, o); return; }
            int slots = N <= 1 ? N + 1 : 2 * N; // the slots of magnitudes of up to N bits
            if (first > 4 * slots) throw new ErrMalformed("a folded struct's unchanged symbol where a quaternion's form belongs");
            int rank = (first - 1) / slots;
            ulong m0; bool neg0;
            d.TokenTail((first - 1) % slots, out m0, out neg0); // the first difference's slot is in the symbol
            Pack(bx, by, bz, bw, pb); // the baseline's: needed for a relative mode only
            long[] all = d.L4;
            int mc = Rebase(pb, rank, all);
            int[] oc = Others[mc];
            long e0 = 0, e1 = 0;
            scratch[0] = mc;
            for (int k = 0; k < 3; k++)
            {
                ulong m = m0; bool neg = neg0;
                if (k > 0 && !d.Token(k == 1 ? t[1 + MagClass(Math.Abs(e0))] : t[9 + MagClass((Math.Abs(e0) + Math.Abs(e1) + 1) / 2)], out m, out neg))
                {
                    m = r.Read(N);
                    neg = m != 0 && r.Bool();
                }
                long e = neg ? -(long)m : (long)m;
                if (k == 0) e0 = e; else if (k == 1) e1 = e;
                long v = (rank == 0 ? pb[k + 1] : all[oc[k]]) + e;
                if (v < 0 || v > Steps) throw new ErrMalformed("relative quaternion component out of range");
                scratch[k + 1] = (int)v;
            }
            if (r.Position - start > t[0].Len(0) + 2 + 3 * N) throw new ErrMalformed("relative quaternion longer than the absolute one");
            Unpack(scratch, o);
        }
    }
}
