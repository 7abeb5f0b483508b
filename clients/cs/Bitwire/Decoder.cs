// The decoding state of one message that generated code drives: the "any
// negative" flag, depth and lengths under the schema's limits, bit-length
// integers, fixed point and shared-length groups. Its deltas are in
// Deltas.cs, its model tokens in Models.cs.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>Decoding state of one message: the "any negative" flag, depth, scratch space.</summary>
    public sealed partial class Decoder
    {
        public const int DefaultMaxDepth = 100;
        public const int DefaultMaxLen = 1 << 20;
        /// <summary>The message's limits, from its schema (Go's defaults unless set).</summary>
        public int MaxDepth = DefaultMaxDepth, MaxLen = DefaultMaxLen;
        public BitReader R;
        public bool Neg, Flagged, SawNeg;
        public int Depth;
        public readonly double[] Q4 = new double[4];
        public readonly int[] P4 = new int[4], P4b = new int[4];
        public bool[] GNeg = new bool[16];
        public ulong[] GMag = new ulong[16];
        public Decoder(BitReader r) { R = r; }
        public void Begin(BitReader r) { R = r; Neg = Flagged = SawNeg = false; Depth = 0; msg++; }
        public void SignFlag() { if (!Flagged) { Neg = R.Bool(); Flagged = true; } }
        public void End(string root)
        {
            if (Neg && !SawNeg) throw new ErrMalformed("sign flag set on a message without negative values").Within(root);
        }
        public void Enter() { if (++Depth > MaxDepth) throw new ErrMalformed("nesting deeper than " + MaxDepth); }
        public void Leave() { Depth--; }
        public int Len(int maxlen, int emin)
        {
            int l;
            if (maxlen > 0)
            {
                ulong x = R.Read(Codings.BitsRequired((ulong)maxlen));
                if (x > (ulong)maxlen) throw new ErrTooLong("length " + x + " over " + maxlen);
                l = (int)x;
            }
            else
            {
                ulong x = Codings.ReadBitlen(R, 5);
                if (x > (ulong)MaxLen) throw new ErrTooLong("length " + x);
                l = (int)x;
            }
            if (emin > 0 && l > R.Remaining / emin) throw new ErrUnexpectedEnd("length " + l + " against the input left");
            return l;
        }
        // ---- adaptive integers: sign and magnitude ----
        public void Int(bool signed, int w, out bool neg, out ulong mag)
        {
            neg = false;
            if (signed) { SignFlag(); if (Neg) neg = R.Bool(); }
            mag = Codings.ReadBitlen(R, w);
            if (neg) { if (mag == 0) throw new ErrMalformed("negative zero"); SawNeg = true; }
        }
        public long Signed(bool neg, ulong mag, int size)
        {
            ulong lim = 1UL << (size - 1);
            if (neg ? mag > lim : mag > lim - 1) throw new ErrOutOfRange("magnitude " + mag + " for a " + size + "-bit integer");
            return neg ? (long)(0 - mag) : (long)mag;
        }
        public ulong Unsigned(bool neg, ulong mag, int size)
        {
            if (neg) throw new ErrMalformed("sign on an unsigned value");
            if (size < 64 && mag >= 1UL << size) throw new ErrOutOfRange(mag + " for a " + size + "-bit integer");
            return mag;
        }
        public long BitlenSigned(int w, int size) { bool n; ulong m; Int(true, w, out n, out m); return Signed(n, m, size); }
        public ulong BitlenUnsigned(int w, int size)
        {
            ulong m = Codings.ReadBitlen(R, w); // Int(false, …): no sign to read
            if (size < 64 && m >= 1UL << size) throw new ErrOutOfRange(m + " for a " + size + "-bit integer");
            return m;
        }
        public double Fixed(double prec, bool f32)
        {
            bool n; ulong m; Int(true, 6, out n, out m);
            return FixedValue(n, m, prec, f32);
        }
        public static double FixedValue(bool neg, ulong mag, double prec, bool f32)
        {
            if (neg ? mag > 1UL << 63 : mag > (1UL << 63) - 1) throw new ErrOutOfRange("fixed-point step count");
            long i = neg ? (long)(0 - mag) : (long)mag;
            if (!FixedExact(i, prec, f32)) throw new ErrOutOfRange("fixed-point step count does not survive its float type");
            return FromFixed(i, prec, f32);
        }
        public static double FromFixed(long i, double prec, bool f32) { double v = i * prec; return f32 ? (double)(float)v : v; }
        public static bool FixedExact(long i, double prec, bool f32)
        {
            // below 2^22 (float32) or 2^50 steps every count survives while i·prec stays finite and normal
            long lim = f32 ? 1L << 22 : 1L << 50;
            if (i > -lim && i < lim && prec >= (f32 ? 1.1754943508222875e-38 : 2.2250738585072014e-308) && prec < (f32 ? 1e30 : 1e290)) return true;
            double back = Codings.RoundHalfAway(FromFixed(i, prec, f32) / prec);
            return back > -9.2233720368547758e18 && back < 9.2233720368547758e18 && (long)back == i;
        }
        /// <summary>
        /// A shared-length group of count values: per member its signedness,
        /// prefix width and type (sizes: the integer width in bits, 0 for a
        /// fixed-point value of precs/f32s). Each value is checked against its
        /// type as it is read, as Go does. Results in GNeg/GMag.
        /// </summary>
        public void Group(int count, int width, bool anySigned, bool[] signed, int[] widths, int[] sizes, double[] precs, bool[] f32s)
        {
            gSizes = sizes; gPrecs = precs; gF32s = f32s;
            if (GMag.Length < count) { GMag = new ulong[count]; GNeg = new bool[count]; }
            if (count == 0) return;
            if (count == 1) { Int(signed[0], widths[0], out GNeg[0], out GMag[0]); return; }
            if (anySigned) SignFlag();
            bool shared = R.Bool();
            int maxHigh = 0; long indiv = 0;
            if (!shared)
            {
                for (int i = 0; i < count; i++)
                {
                    try { Int(signed[i], widths[i], out GNeg[i], out GMag[i]); Check(i, signed[i]); }
                    catch (BitwireException e) { throw e.Within("[" + i + "]"); }
                    indiv += Codings.BitlenBits(GMag[i], widths[i]);
                    maxHigh = Math.Max(maxHigh, Codings.HighBit(GMag[i]));
                }
                if (width + (long)count * (maxHigh + 1) < indiv) throw new ErrMalformed("group coded one by one where a shared length is shorter");
                return;
            }
            int h = (int)R.Read(width);
            for (int i = 0; i < count; i++)
            {
                bool neg = false;
                if (Neg && signed[i]) neg = R.Bool();
                ulong mag = R.Read(h + 1);
                if (neg) { if (mag == 0) throw new ErrMalformed("negative zero"); SawNeg = true; }
                GNeg[i] = neg; GMag[i] = mag;
                Check(i, signed[i]);
                indiv += Codings.BitlenBits(mag, widths[i]);
                maxHigh = Math.Max(maxHigh, Codings.HighBit(mag));
            }
            if (maxHigh != h || width + (long)count * (maxHigh + 1) >= indiv) throw new ErrMalformed("shared-length group that is not the shortest coding");
        }
        int[] gSizes; double[] gPrecs; bool[] gF32s;
        void Check(int i, bool signed)
        {
            int size = gSizes[i];
            if (size == 0) FixedValue(GNeg[i], GMag[i], gPrecs[i], gF32s[i]);
            else if (signed) Signed(GNeg[i], GMag[i], size);
            else Unsigned(GNeg[i], GMag[i], size);
        }
        /// <summary>A group of count elements of one coding (size 0: fixed-point with prec).</summary>
        public void Group(int count, int width, bool signed, int size, double prec, bool f32)
        {
            if (sArr.Length < count)
            {
                int c = Math.Max(count, 2 * sArr.Length);
                sArr = new bool[c]; wArr = new int[c]; zArr = new int[c]; pArr = new double[c]; fArr = new bool[c];
            }
            for (int i = 0; i < count; i++) { sArr[i] = signed; wArr[i] = width; zArr[i] = size; pArr[i] = prec; fArr[i] = f32; }
            Group(count, width, signed, sArr, wArr, zArr, pArr, fArr);
        }
        bool[] sArr = new bool[16], fArr = new bool[16]; int[] wArr = new int[16], zArr = new int[16]; double[] pArr = new double[16];

    }
}
