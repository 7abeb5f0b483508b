// The value codings of docs/wire-format.md with their parameters taken from
// the schema: integers, varints, bit lengths, floats, strings and bytes
// (Codings), and the quantization grid of a q field (Quantizer).
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>The codings, with parameters from the schema.</summary>
    public static partial class Codings
    {
        public static int BitsRequired(ulong x) { int n = 0; while (x != 0) { n++; x >>= 1; } return n; }
        public static int HighBit(ulong v) { return v <= 1 ? 0 : BitsRequired(v) - 1; }
        static int Body(int p) { return p == 0 ? 1 : p; }
        public static int BitlenBits(ulong v, int w) { return w + Body(HighBit(v)); }
        public static void WriteBitlen(BitWriter wr, ulong v, int w) { int p = HighBit(v); wr.Write((ulong)p, w); wr.Write(v, Body(p)); }
        public static ulong ReadBitlen(BitReader r, int w)
        {
            int p = (int)r.Read(w);
            ulong v = r.Read(Body(p));
            if (p > 0) v |= 1UL << p;
            return v;
        }
        public static ulong Zigzag(long v) { return (ulong)(v << 1) ^ (ulong)(v >> 63); }
        public static long Unzigzag(ulong u) { return (long)(u >> 1) ^ -(long)(u & 1); }
        public static void WriteVarint(BitWriter w, ulong v, int g)
        {
            if (g == 64) { w.Write(v, 64); w.Write(0, 1); return; }
            ulong mask = (1UL << g) - 1;
            while (v > mask) { w.Write((v & mask) | (mask + 1), g + 1); v >>= g; }
            w.Write(v, g + 1);
        }
        public static ulong ReadVarint(BitReader r, int g)
        {
            if (g == 64)
            {
                ulong x = r.Read(64);
                if (r.Bool()) throw new ErrMalformed("varint: more than 64 bits");
                return x;
            }
            int maxGroups = (64 + g - 1) / g;
            ulong mask = (1UL << g) - 1, v = 0;
            for (int k = 0; k < maxGroups; k++)
            {
                ulong u = r.Read(g + 1);
                ulong grp = u & mask;
                int shift = k * g;
                if (shift + BitsRequired(grp) > 64) throw new ErrMalformed("varint: bits above bit 63");
                v |= grp << shift;
                if ((u >> g) == 0)
                {
                    if (grp == 0 && k > 0) throw new ErrMalformed("varint: non-minimal");
                    return v;
                }
            }
            throw new ErrMalformed("varint: too many groups");
        }
        /// <summary>Go's math.Round: halves away from zero.</summary>
        public static double RoundHalfAway(double x)
        {
            double t = Math.Truncate(x);
            if (Math.Abs(x - t) >= 0.5) return t + Math.Sign(x);
            return t;
        }
        public static void Len(Encoder e, int l, int maxlen)
        {
            if (maxlen > 0)
            {
                if (l > maxlen) throw new ErrTooLong("length " + l + " over " + maxlen);
                e.W.Write((ulong)l, BitsRequired((ulong)maxlen));
                return;
            }
            if (l > e.MaxLen) throw new ErrTooLong("length " + l);
            WriteBitlen(e.W, (ulong)l, 5);
        }
        public static T[] Fill<T>(T[] a, Func<T> make) { for (int i = 0; i < a.Length; i++) a[i] = make(); return a; }
        public static byte[] Utf8(string s) { return System.Text.Encoding.UTF8.GetBytes(s ?? ""); }
        /// <summary>A length and then the bytes of a string or byte slice.</summary>
        public static void WriteBytes(Encoder e, byte[] b, int maxlen)
        {
            int l = b == null ? 0 : b.Length;
            Len(e, l, maxlen);
            for (int i = 0; i < l; i++) e.W.Write(b[i], 8);
        }
        public static byte[] ReadBytes(BitReader r, int l, byte[] reuse)
        {
            if (8L * l > r.Remaining) throw new ErrUnexpectedEnd();
            byte[] b = reuse != null && reuse.Length == l ? reuse : new byte[l];
            for (int i = 0; i < l; i++) b[i] = (byte)r.Read(8);
            return b;
        }
        public static string ReadString(BitReader r, int l)
        {
            if (l == 0) return "";
            return System.Text.Encoding.UTF8.GetString(ReadBytes(r, l, null));
        }
        static readonly System.Text.UTF8Encoding StrictUTF8 = new System.Text.UTF8Encoding(false, true);
        /// <summary>A map key: one that is not valid UTF-8 is refused, as in Go (a replaced key would order and collide differently).</summary>
        public static string ReadKeyString(BitReader r, int l)
        {
            if (l == 0) return "";
            try { return StrictUTF8.GetString(ReadBytes(r, l, null)); }
            catch (System.ArgumentException) { throw new ErrInvalidValue("map key not valid UTF-8"); }
        }
        public static byte[] CopyBytes(byte[] src, byte[] dst)
        {
            if (src == null) return null;
            if (dst == null || dst.Length != src.Length) dst = new byte[src.Length];
            Array.Copy(src, dst, src.Length);
            return dst;
        }
        /// <summary>Sign-extends the low n bits of v.</summary>
        public static long SignExt(ulong v, int n) { return n == 0 ? 0 : n == 64 ? (long)v : ((long)(v << (64 - n))) >> (64 - n); }
        public static bool FitsSigned(long v, int n) { return n >= 64 || (v >= -(1L << (n - 1)) && v < (1L << (n - 1))); }
        public static bool FitsUnsigned(ulong v, int n) { return n >= 64 || v < 1UL << n; }
        [System.Runtime.InteropServices.StructLayout(System.Runtime.InteropServices.LayoutKind.Explicit)]
        struct F32Union { [System.Runtime.InteropServices.FieldOffset(0)] public float F; [System.Runtime.InteropServices.FieldOffset(0)] public uint U; }
        public static float F32(ulong u) { var x = new F32Union(); x.U = (uint)u; return x.F; }
        public static ulong F32Bits(float f) { var x = new F32Union(); x.F = f; return x.U; }
        /// <summary>Orders map keys as Go does: strings by their UTF-8 bytes.</summary>
        public static int Utf8Compare(string a, string b)
        {
            byte[] x = Utf8(a), y = Utf8(b);
            for (int i = 0; i < x.Length && i < y.Length; i++) if (x[i] != y[i]) return x[i] - y[i];
            return x.Length - y.Length;
        }
    }

    /// <summary>The grid of a q field: with Zero set (Min &lt; 0 &lt; Max, wire version 2) anchored at
    /// zero, index i being (KMin + i)·Step clamped to [Min, Max] so that 0 is exact; otherwise index i
    /// is Min + i·Step, Min for 0 and exactly Max for Steps.</summary>
    public sealed class Quantizer
    {
        public readonly double Min, Max, Step; public readonly ulong Steps; public readonly int Bits; readonly bool fine;
        public readonly bool Zero; public readonly long KMin; readonly double v0, vN, at, k0;
        /// <summary>The grid of a q field from min to max, with the schema's step.</summary>
        public Quantizer(double min, double max, ulong steps, double step) : this(min, max, steps, step, false, 0) { }
        /// <summary>The grid of a q field, with the schema's step, zero and kmin.</summary>
        public Quantizer(double min, double max, ulong steps, double step, bool zero, long kmin)
        {
            Min = min; Max = max; Steps = steps; Bits = Codings.BitsRequired(steps);
            Step = step; Zero = zero; KMin = zero ? kmin : 0;
            double mag = Math.Max(Math.Abs(min), Math.Abs(max));
            fine = steps + mag / Step > 17592186044416.0; // 2^44
            // The ends are the clamped points; the interior points, at + (kmin + i)·step (min + i·step
            // from min, (kmin + i)·step anchored at zero), lie inside [min, max] and need no clamping.
            at = zero ? 0 : min; k0 = KMin;
            v0 = zero ? Clamp((double)KMin * Step) : min;
            vN = zero ? Clamp(((double)KMin + (double)steps) * Step) : max;
        }
        double Clamp(double x) { return Math.Min(Math.Max(x, Min), Max); }
        public double Value(ulong i)
        {
            // i < Steps < 2^63: through long, the exact and cheaper conversion
            if (i > 0 && i < Steps) return at + (k0 + (double)(long)i) * Step;
            return i == 0 ? v0 : vN;
        }
        public ulong Index(double v, bool clamp)
        {
            if (double.IsNaN(v) || double.IsInfinity(v)) throw new ErrInvalidValue("not a finite number");
            if (clamp) { if (v <= Min) return 0; if (v >= Max) return Steps; }
            else if (v < Min || v > Max) throw new ErrOutOfRange(v + " outside [" + Min + ", " + Max + "]");
            ulong i;
            if (Zero)
            {
                double k = Math.Floor(v / Step + 0.5) - KMin;
                i = k > 0 ? Math.Min((ulong)k, Steps) : 0;
            }
            else
            {
                i = (ulong)(long)((v - Min) / Step + 0.5);
                if (i > Steps) i = Steps;
            }
            if (fine) i = Nearest(v, i);
            return i;
        }
        ulong Nearest(double v, ulong i)
        {
            double e = Math.Abs(Value(i) - v);
            while (i > 0) { double d = Math.Abs(Value(i - 1) - v); if (d >= e) break; i--; e = d; }
            while (i < Steps) { double d = Math.Abs(Value(i + 1) - v); if (d >= e) break; i++; e = d; }
            return i;
        }
        public double Read(BitReader r)
        {
            ulong i = r.Read(Bits);
            if (i - 1 < Steps - 1) return at + (k0 + (double)(long)i) * Step; // Value, inline: 0 < i < Steps
            if (i > Steps) throw new ErrOutOfRange("quantization index " + i + " over " + Steps);
            return Value(i);
        }
        public void Write(BitWriter w, double v, bool clamp) { w.Write(Index(v, clamp), Bits); }
        /// <summary>The value of index kb + d, checked against the grid (a delta window).</summary>
        public double Add(ulong kb, long d)
        {
            ulong k = kb + (ulong)d;
            if (k > Steps) throw new ErrOutOfRange("quantization index over " + Steps);
            return Value(k);
        }
    }
}
