// The runtime of bitwire's generated C# clients: the LSB-first bit stream,
// every value coding of docs/wire-format.md, the "any negative" flag and
// shared-length groups, index sets, the canonical prefix codes of trained
// models (deltas coded with a model), unions and the client side of package
// snapshot (packet version 2, every integrity mode). C# 7.3 (Unity 2021+, Debian's mono), no unsafe code, no
// dependencies. Generated code calls it with every parameter taken from the
// schema. It is not generated itself.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    // ---- errors, named like Go's sentinels ----

    /// <summary>Every error of the runtime. Path is the field path ("World.Crates[3].Pos.X").</summary>
    public class BitwireException : Exception
    {
        public readonly string Sentinel;
        public string Path = "";
        readonly string detail;
        public BitwireException(string sentinel, string detail) : base(detail) { Sentinel = sentinel; this.detail = detail; }
        public override string Message { get { return (Path.Length > 0 ? Path + ": " : "") + "bitwire: " + detail + " (" + Sentinel + ")"; } }
        /// <summary>Prepends a path segment (a field name or "[i]") as the error unwinds.</summary>
        public BitwireException Within(string seg)
        {
            Path = Path.Length == 0 ? seg : seg + (Path.StartsWith("[") ? "" : ".") + Path;
            return this;
        }
    }
    public class ErrUnexpectedEnd : BitwireException { public ErrUnexpectedEnd(string d = "unexpected end of input") : base("ErrUnexpectedEnd", d) { } }
    public class ErrOutOfRange : BitwireException { public ErrOutOfRange(string d = "value out of range") : base("ErrOutOfRange", d) { } }
    public class ErrInvalidValue : BitwireException { public ErrInvalidValue(string d = "invalid value") : base("ErrInvalidValue", d) { } }
    public class ErrTooLong : BitwireException { public ErrTooLong(string d = "too long") : base("ErrTooLong", d) { } }
    public class ErrTrailingData : BitwireException { public ErrTrailingData(string d = "trailing data") : base("ErrTrailingData", d) { } }
    public class ErrMalformed : BitwireException { public ErrMalformed(string d = "malformed input") : base("ErrMalformed", d) { } }
    public class ErrUnknownTag : BitwireException { public ErrUnknownTag(string d = "unknown union tag") : base("ErrUnknownTag", d) { } }
    public class ErrBadMagic : BitwireException { public ErrBadMagic(string d = "bad magic") : base("ErrBadMagic", d) { } }
    public class ErrProtocolMismatch : BitwireException { public ErrProtocolMismatch(string d = "protocol mismatch") : base("ErrProtocolMismatch", d) { } }
    public class ErrStaleTick : BitwireException { public ErrStaleTick(string d = "stale tick") : base("ErrStaleTick", d) { } }
    public class ErrNoBaseline : BitwireException { public ErrNoBaseline(string d = "no baseline") : base("ErrNoBaseline", d) { } }

    /// <summary>Code lengths that are no prefix code of a model's table (Go: a model file refused with ErrModel).</summary>
    public class ErrModel : BitwireException { public ErrModel(string d = "bad model") : base("ErrModel", d) { } }

    /// <summary>time.Time: Unix seconds and nanoseconds (UTC).</summary>
    public struct Time
    {
        public long Sec; public int Nsec;
        public Time(long sec, int nsec) { Sec = sec; Nsec = nsec; }
        /// <summary>Go's zero time, January 1 of year 1, UTC.</summary>
        public static readonly Time Zero = new Time(-62135596800L, 0);
    }

    /// <summary>A quaternion held in a struct of four float32 fields X, Y, Z, W.</summary>
    public struct Quatf { public float X, Y, Z, W; }
    /// <summary>A quaternion held in a struct of four float64 fields X, Y, Z, W.</summary>
    public struct Quatd { public double X, Y, Z, W; }

    // ---- the bit stream ----

    /// <summary>Reads an LSB-first bit stream; reading past the end throws ErrUnexpectedEnd.</summary>
    public sealed class BitReader
    {
        byte[] data; int pos, end; long spent;
        public BitReader(byte[] data) { Reset(data, data.Length); }
        public void Reset(byte[] d, int length) { data = d; pos = 0; end = length * 8; spent = 0; }
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
        public ulong Read(int n)
        {
            if (n == 0) return 0;
            if (n > end - pos) throw new ErrUnexpectedEnd();
            ulong v = 0; int got = 0; int p = pos;
            while (got < n)
            {
                int off = p & 7;
                int take = Math.Min(8 - off, n - got);
                ulong chunk = (ulong)((data[p >> 3] >> off) & ((1 << take) - 1));
                v |= chunk << got;
                got += take; p += take;
            }
            pos = p;
            return v;
        }
        public bool Bool() { return Read(1) == 1; }
        /// <summary>The next n bits (n at most 56) without reading them; bits past the end read as 0.</summary>
        public ulong Peek(int n)
        {
            int k = Math.Min(n, end - pos);
            if (k <= 0) return 0;
            int at = pos;
            ulong v = Read(k);
            pos = at;
            return v;
        }
        /// <summary>Skips n bits; past the end is ErrUnexpectedEnd.</summary>
        public void Skip(int n)
        {
            if (n > end - pos) throw new ErrUnexpectedEnd();
            pos += n;
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

    /// <summary>The codings, with parameters from the schema.</summary>
    public static class Codings
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
            if (i > 0 && i < Steps) return at + (k0 + i) * Step;
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
            return d >= Math.Max(Math.Abs(va), Math.Max(Math.Abs(vb), Math.Abs(vc))) + Margin;
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
            if (p[1] > Steps || p[2] > Steps || p[3] > Steps) throw new ErrMalformed("quaternion component index above the grid");
            double d;
            if (!Rebuild(p[1], p[2], p[3], out d))
            {
                if (double.IsNaN(d)) throw new ErrInvalidValue("quaternion radicand below zero");
                throw new ErrMalformed("quaternion: dropped component not the largest");
            }
            int k = 1;
            for (int i = 0; i < 4; i++) o[i] = i == p[0] ? d : Val(p[k++]);
        }
        public void Read(BitReader r, int[] p) { p[0] = (int)r.Read(2); p[1] = (int)r.Read(N); p[2] = (int)r.Read(N); p[3] = (int)r.Read(N); }
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
        /// <summary>Reads a quaternion's delta coded with a model's 21 tables t (the mode table, D0[0..3], D1[0..7],
        /// D2[0..7]; wire-format.md, "Models", "Quaternions") against the baseline (x, y, z, w) into o.</summary>
        public void ReadDeltaModel(Decoder d, Code[] t, double bx, double by, double bz, double bw, double[] o, int[] scratch, int[] pb)
        {
            BitReader r = d.R;
            int start = r.Position;
            int mode = t[0].Read(r);
            if (mode == 0) { Read(r, scratch); Unpack(scratch, o); return; }
            int rank = mode - 1;
            Pack(bx, by, bz, bw, pb); // the baseline's: needed for a relative mode only
            long[] all = d.L4;
            int mc = Rebase(pb, rank, all);
            int[] oc = Others[mc];
            long e0 = 0, e1 = 0;
            scratch[0] = mc;
            for (int k = 0; k < 3; k++)
            {
                Code c = k == 0 ? t[1 + rank] : k == 1 ? t[5 + MagClass(Math.Abs(e0))] : t[13 + MagClass((Math.Abs(e0) + Math.Abs(e1) + 1) / 2)];
                ulong m; bool neg;
                if (!d.Token(c, out m, out neg))
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

    /// <summary>
    /// A canonical prefix code: one table of a trained model (wire-format.md, "Models", "Canonical
    /// codes"), given by each symbol's code length alone (0: no code). Codes are assigned in order of
    /// (length, symbol) and written most significant bit first. Symbol 0 is the escape (ESC). The
    /// generated code builds one per table from the lengths the generator found in the schema's model
    /// file, which it checked; lengths that are no prefix code (a length above 15, an over-subscribed
    /// code, fewer than two symbols, an ESC length outside 1..5) throw ErrModel. Read-only once built.
    /// </summary>
    public sealed class Code
    {
        /// <summary>The longest code, and the longest ESC code.</summary>
        public const int MaxLen = 15, EscMaxLen = 5;
        const int LookBits = 10;
        readonly byte[] lens;
        readonly int[] first = new int[MaxLen + 1], count = new int[MaxLen + 1], index = new int[MaxLen + 1];
        readonly int[] sorted;
        // look maps the next lookBits bits (stream order) to (symbol + 1) << 4 | length; 0 for longer codes or none
        readonly int[] look; readonly int lookBits;
        public Code(byte[] lengths)
        {
            if (lengths == null || lengths.Length < 2 || lengths.Length > 65535) throw new ErrModel("a table of " + (lengths == null ? 0 : lengths.Length) + " symbols");
            lens = (byte[])lengths.Clone();
            long kraft = 0; int maxLen = 0;
            foreach (byte l in lens)
            {
                if (l > MaxLen) throw new ErrModel("code length " + l);
                if (l > 0) { kraft += 1L << (MaxLen - l); count[l]++; maxLen = Math.Max(maxLen, l); }
            }
            if (kraft > 1L << MaxLen) throw new ErrModel("over-subscribed code lengths");
            if (lens[0] < 1 || lens[0] > EscMaxLen) throw new ErrModel("ESC length " + lens[0]);
            int code = 0, n = 0;
            for (int l = 1; l <= MaxLen; l++) { first[l] = code; index[l] = n; code = (code + count[l]) << 1; n += count[l]; }
            sorted = new int[n];
            var next = (int[])first.Clone();
            var rev = new int[lens.Length];
            int j = 0;
            for (int l = 1; l <= MaxLen; l++)
                for (int s = 0; s < lens.Length; s++)
                    if (lens[s] == l)
                    {
                        sorted[j++] = s;
                        int c = next[l]++, r = 0;
                        for (int b = 0; b < l; b++) r |= ((c >> b) & 1) << (l - 1 - b);
                        rev[s] = r;
                    }
            lookBits = Math.Min(maxLen, LookBits);
            look = new int[1 << lookBits];
            for (int s = 0; s < lens.Length; s++)
            {
                int l = lens[s];
                if (l == 0 || l > lookBits) continue;
                for (int k = 0; k < 1 << (lookBits - l); k++) look[rev[s] | k << l] = (s + 1) << 4 | l;
            }
        }
        /// <summary>The number of symbols.</summary>
        public int Symbols { get { return lens.Length; } }
        /// <summary>The length of symbol s's code, 0 when it has none.</summary>
        public int Len(int s) { return s >= 0 && s < lens.Length ? lens[s] : 0; }
        /// <summary>Reads one symbol. Bits that begin no code are ErrMalformed; a code cut off by the end of the
        /// input is ErrUnexpectedEnd, and so are bits that begin no code when fewer than 15 remain (as Go's
        /// reader reports them).</summary>
        public int Read(BitReader r)
        {
            int p = (int)r.Peek(MaxLen);
            int e = look[p & ((1 << lookBits) - 1)];
            if (e != 0) { r.Skip(e & 15); return (e >> 4) - 1; }
            int code = 0;
            for (int l = 1; l <= MaxLen; l++)
            {
                code = code << 1 | ((p >> (l - 1)) & 1);
                int d = code - first[l];
                if (d >= 0 && d < count[l]) { r.Skip(l); return sorted[index[l] + d]; }
            }
            if (r.Remaining < MaxLen) throw new ErrUnexpectedEnd();
            throw new ErrMalformed("no code of the model's table begins here");
        }
    }

    /// <summary>Decoding state of one message: the "any negative" flag, depth, scratch space.</summary>
    public sealed class Decoder
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
        public ulong BitlenUnsigned(int w, int size) { bool n; ulong m; Int(false, w, out n, out m); return Unsigned(n, m, size); }
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

        // ---- deltas ----
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
        // ---- deltas coded with a model (wire-format.md, "Models") ----
        /// <summary>A token of table c (wire-format.md, "Tokens"): false for ESC (nothing more read), else true
        /// with the magnitude and its sign. Symbol s codes magnitude slot s - 1: the magnitude itself below 4, else
        /// two slots a bit length (the slot's low bit is the bit below the leading one), the x = slot / 2 - 1 bits
        /// below the top two following; then a sign bit unless the magnitude is 0.</summary>
        public bool Token(Code c, out ulong m, out bool neg)
        {
            m = 0; neg = false;
            int sym = c.Read(R);
            if (sym == 0) return false;
            int s = sym - 1;
            if (s == 0) return true;
            if (s < 4) m = (ulong)s;
            else
            {
                int x = (s >> 1) - 1;
                m = (2UL | (ulong)(s & 1)) << x | R.Read(x);
            }
            neg = R.Bool();
            return true;
        }
        /// <summary>The changed bits of a chunk of k fields: its symbol, or ESC and the k bits.</summary>
        public ulong Mask(Code c, int k)
        {
            int s = c.Read(R);
            return s == 0 ? R.Read(k) : (ulong)(s - 1);
        }
        /// <summary>A windowed scalar's token: false for ESC (the value in full follows), else true with the
        /// difference in steps, which must lie in lo..hi.</summary>
        public bool WindowToken(Code c, long lo, long hi, out long diff)
        {
            ulong m; bool neg;
            diff = 0;
            if (!Token(c, out m, out neg)) return false;
            if ((m >> 63) != 0) throw new ErrMalformed("window difference of " + m + " steps");
            diff = neg ? -(long)m : (long)m;
            if (diff < lo || diff > hi) throw new ErrMalformed("window difference " + diff + " outside " + lo + ".." + hi);
            return true;
        }
        /// <summary>The key of a modular scalar (wire-format.md, "Modular scalars") with keys kmin..kmin+rm (mod
        /// 2^64) from the baseline's key kb and a token's magnitude m and sign.</summary>
        public static ulong Modular(ulong kb, ulong kmin, ulong rm, ulong m, bool neg)
        {
            ulong ub = kb - kmin;
            if (ub > rm) throw new ErrOutOfRange("baseline: key " + (long)kb + " outside the field's range");
            ulong h = (rm >> 1) + (rm & 1);
            if (m == 0 || (!neg && m > h) || (neg && m > rm - h)) throw new ErrMalformed("modular difference " + (neg ? "-" : "") + m);
            ulong u;
            if (!neg) u = m > rm - ub ? m - (rm - ub) - 1 : ub + m;
            else u = m > ub ? rm - (m - ub) + 1 : ub - m;
            return u + kmin;
        }

        readonly Stack<List<int>> lists = new Stack<List<int>>();
        public List<int> TakeList() { return lists.Count > 0 ? lists.Pop() : new List<int>(); }
        public void GiveList(List<int> l) { lists.Push(l); }
    }

    /// <summary>Thrown inside an encoder when a negative value meets a message written with the flag 0.</summary>
    public sealed class NeedSign : Exception { public static readonly NeedSign It = new NeedSign(); }

    /// <summary>Encoding state of one message.</summary>
    public sealed class Encoder
    {
        public BitWriter W;
        public bool Neg, Flagged;
        public int Depth;
        public readonly int[] P4 = new int[4];
        public bool[] GNeg = new bool[16];
        public ulong[] GMag = new ulong[16];
        public bool[] GSigned = new bool[16];
        public int[] GWidth = new int[16];
        public Encoder(BitWriter w) { W = w; }
        public void Begin(bool neg) { Neg = neg; Flagged = false; Depth = 0; }
        public void SignFlag() { if (!Flagged) { W.Bool(Neg); Flagged = true; } }
        public int MaxDepth = Decoder.DefaultMaxDepth, MaxLen = Decoder.DefaultMaxLen;
        public void Enter() { if (++Depth > MaxDepth) throw new ErrMalformed("nesting deeper than " + MaxDepth); }
        public void Leave() { Depth--; }
        public void Int(bool signed, int w, bool neg, ulong mag)
        {
            if (neg && !Neg) throw NeedSign.It;
            if (signed) { SignFlag(); if (Neg) W.Bool(neg); }
            Codings.WriteBitlen(W, mag, w);
        }
        public void BitlenSigned(long v, int w) { Int(true, w, v < 0, v < 0 ? 0 - (ulong)v : (ulong)v); }
        public void BitlenUnsigned(ulong v, int w) { Int(false, w, false, v); }
        public static void FixedMag(double v, double prec, bool f32, out bool neg, out ulong mag)
        {
            if (double.IsNaN(v) || double.IsInfinity(v)) throw new ErrInvalidValue("not a finite number");
            double x = Codings.RoundHalfAway(v / prec);
            if (!(x > -9.2233720368547758e18 && x < 9.2233720368547758e18)) throw new ErrOutOfRange("fixed-point step count over 2^63");
            long i = (long)x;
            if (!Decoder.FixedExact(i, prec, f32)) throw new ErrOutOfRange("fixed-point step count does not survive its float type");
            neg = i < 0; mag = neg ? 0 - (ulong)i : (ulong)i;
        }
        public void Fixed(double v, double prec, bool f32) { bool n; ulong m; FixedMag(v, prec, f32, out n, out m); Int(true, 6, n, m); }
        public void Ensure(int count)
        {
            if (GMag.Length < count) { GMag = new ulong[count]; GNeg = new bool[count]; GSigned = new bool[count]; GWidth = new int[count]; }
        }
        /// <summary>Writes the group of count values in GNeg/GMag (GSigned/GWidth per member).</summary>
        public void Group(int count, int width, bool anySigned)
        {
            if (count == 0) return;
            if (count == 1) { Int(GSigned[0], GWidth[0], GNeg[0], GMag[0]); return; }
            if (anySigned) SignFlag();
            int maxHigh = 0; long indiv = 0;
            for (int i = 0; i < count; i++)
            {
                if (GNeg[i] && !Neg) throw NeedSign.It;
                indiv += Codings.BitlenBits(GMag[i], GWidth[i]);
                maxHigh = Math.Max(maxHigh, Codings.HighBit(GMag[i]));
            }
            if (width + (long)count * (maxHigh + 1) >= indiv)
            {
                W.Bool(false);
                for (int i = 0; i < count; i++) Int(GSigned[i], GWidth[i], GNeg[i], GMag[i]);
                return;
            }
            W.Bool(true);
            W.Write((ulong)maxHigh, width);
            for (int i = 0; i < count; i++)
            {
                if (Neg && GSigned[i]) W.Bool(GNeg[i]);
                W.Write(GMag[i], maxHigh + 1);
            }
        }
        public void SetSigned(int i, long v, int w) { GSigned[i] = true; GWidth[i] = w; GNeg[i] = v < 0; GMag[i] = v < 0 ? 0 - (ulong)v : (ulong)v; }
        public void SetUnsigned(int i, ulong v, int w) { GSigned[i] = false; GWidth[i] = w; GNeg[i] = false; GMag[i] = v; }
        public void SetFixed(int i, double v, double prec, bool f32) { GSigned[i] = true; GWidth[i] = 6; FixedMag(v, prec, f32, out GNeg[i], out GMag[i]); }
    }

    /// <summary>A message type's decoding (and encoding) limits, from its schema.</summary>
    public struct Limits
    {
        public int MaxDepth, MaxLen;
        public Limits(int maxDepth, int maxLen) { MaxDepth = maxDepth; MaxLen = maxLen; }
        public static readonly Limits Default = new Limits(Decoder.DefaultMaxDepth, Decoder.DefaultMaxLen);
    }

    /// <summary>Whole messages: root entry points that generated code wraps.</summary>
    public static class Message
    {
        public delegate void DecodeFn<T>(Decoder d, T into);
        public delegate void EncodeFn<T>(Encoder e, T v);
        public delegate void DeltaFn<T>(Decoder d, T baseline, T into);

        [ThreadStatic] static Decoder dec;
        [ThreadStatic] static BitReader rd;
        static Decoder D(BitReader r, Limits lim)
        {
            if (dec == null) dec = new Decoder(r);
            dec.Begin(r);
            dec.MaxDepth = lim.MaxDepth; dec.MaxLen = lim.MaxLen;
            return dec;
        }

        public static void DecodeFrom<T>(string root, BitReader r, T into, DecodeFn<T> fn, Limits lim)
        {
            var d = D(r, lim);
            try { fn(d, into); } catch (BitwireException e) { throw e.Within(root); }
            d.End(root);
        }
        public static void Decode<T>(string root, byte[] data, int length, T into, DecodeFn<T> fn, Limits lim)
        {
            if (rd == null) rd = new BitReader(data);
            var r = rd;
            r.Reset(data, length);
            DecodeFrom(root, r, into, fn, lim);
            if (!r.CheckPadding()) throw new ErrTrailingData(r.Remaining + " bits left").Within(root);
        }
        public static void DecodeDeltaFrom<T>(string root, BitReader r, T baseline, T into, DeltaFn<T> fn, Limits lim)
        {
            var d = D(r, lim);
            try { fn(d, baseline, into); } catch (BitwireException e) { throw e.Within(root); }
            d.End(root);
        }
        public static void DecodeDelta<T>(string root, byte[] data, int length, T baseline, T into, DeltaFn<T> fn, Limits lim)
        {
            if (rd == null) rd = new BitReader(data);
            var r = rd;
            r.Reset(data, length);
            DecodeDeltaFrom(root, r, baseline, into, fn, lim);
            if (!r.CheckPadding()) throw new ErrTrailingData(r.Remaining + " bits left").Within(root);
        }
        [ThreadStatic] static Encoder enc;
        public static void EncodeTo<T>(string root, BitWriter w, T v, EncodeFn<T> fn, Limits lim)
        {
            int start = w.Length;
            if (enc == null) enc = new Encoder(w);
            var e = enc;
            e.W = w;
            e.MaxDepth = lim.MaxDepth; e.MaxLen = lim.MaxLen;
            try
            {
                e.Begin(false);
                try { fn(e, v); }
                catch (NeedSign) { w.Truncate(start); e.Begin(true); fn(e, v); }
            }
            catch (BitwireException x) { w.Truncate(start); throw x.Within(root); }
        }
    }

    /// <summary>Union tags: the variant index in TagBits bits.</summary>
    public static class UnionTag
    {
        public static int Read(BitReader r, int bits, int variants)
        {
            int i = (int)r.Read(bits);
            if (i >= variants) throw new ErrUnknownTag("union tag " + i + " of " + variants + " variants");
            return i;
        }
    }

    public class ErrIntegrity : BitwireException { public ErrIntegrity(string d = "integrity trailer does not match") : base("ErrIntegrity", d) { } }
    public class ErrFutureTick : BitwireException { public ErrFutureTick(string d = "tick too far ahead") : base("ErrFutureTick", d) { } }
    public class ErrStateMismatch : BitwireException { public ErrStateMismatch(string d = "state hash mismatch") : base("ErrStateMismatch", d) { } }

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
    /// tick window, keeps the last Size accepted snapshots as baselines
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
        readonly int mode; readonly uint maxAhead; readonly int recoverAfter;
        readonly Limits lim;
        readonly System.Security.Cryptography.HMACSHA256 mac;
        readonly T[] vals; readonly uint[] ticks; int first, n;
        T scratch;
        readonly BitReader r = new BitReader(new byte[0]);
        readonly BitWriter hw = new BitWriter();
        bool accepted; uint newest;
        int run; uint runTick; bool runBack;
        SnapshotAck last; bool lastOK;
        public SnapshotReceiver(string root, ulong fingerprint, int size, int mode, uint maxAhead, int recoverAfter, Func<T> make,
            Message.DecodeFn<T> decode, Message.DeltaFn<T> delta, Action<T, T> copy, Message.EncodeFn<T> encode, Limits lim, byte[] key = null)
        {
            this.lim = lim;
            if (mode < 0 || mode > 2) throw new ArgumentException("integrity mode " + mode);
            if ((mode == 2) != (key != null) || (mode == 2 && key.Length < 16)) throw new ArgumentException("a MAC key of at least 16 bytes with mode 2, and none otherwise");
            if (mode == 2) mac = new System.Security.Cryptography.HMACSHA256((byte[])key.Clone());
            this.root = root; fp = Fingerprint32(fingerprint); this.make = make; this.decode = decode; this.delta = delta; this.copy = copy; this.encode = encode;
            this.mode = mode; this.maxAhead = maxAhead; this.recoverAfter = recoverAfter;
            vals = new T[size]; ticks = new uint[size]; scratch = make();
        }
        public static uint Fingerprint32(ulong f) { return (uint)f ^ (uint)(f >> 32); }
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
        void Check(uint tick)
        {
            if (!accepted) return;
            BitwireException err;
            if (tick <= newest) err = new ErrStaleTick("tick " + tick + ", newest accepted " + newest);
            else if (tick - newest > maxAhead) err = new ErrFutureTick("tick " + tick + " is " + (tick - newest) + " ticks past the newest accepted " + newest);
            else return;
            if (recoverAfter <= 0) throw err;
            bool back = tick <= newest;
            if (back && mode == 2) throw err; // only modes 0 and 1 rewind
            if (back && newest - tick <= 32) throw err; // reordering (ReorderTicks), never a rewind
            if (run > 0 && back == runBack && tick == runTick) { }
            else if (run > 0 && back == runBack && tick > runTick && tick - runTick <= maxAhead) { run++; runTick = tick; }
            else { run = 1; runTick = tick; runBack = back; }
            if (run >= recoverAfter) return;
            throw err;
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
            int body = length - (mode == 1 ? 4 : mode == 2 ? 10 : 0);
            if (body < 0) throw new ErrUnexpectedEnd("snapshot header");
            uint token;
            if (mode == 2)
            {
                byte[] tag = mac.ComputeHash(packet, 0, body);
                int diff = 0;
                for (int i = 0; i < 10; i++) diff |= tag[i] ^ packet[body + i];
                if (diff != 0) throw new ErrIntegrity("hmac-sha256-80 trailer does not match");
                token = (uint)(tag[10] | tag[11] << 8 | tag[12] << 16 | tag[13] << 24);
            }
            else
            {
                token = Crc32c.Of(packet, 0, body);
                if (mode == 1)
                {
                    uint tr = (uint)(packet[body] | packet[body + 1] << 8 | packet[body + 2] << 16 | packet[body + 3] << 24);
                    if (tr != token) throw new ErrIntegrity("crc32c trailer does not match");
                }
            }
            Check(h.Tick);
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
                Message.DecodeDeltaFrom(root, r, vals[i], scratch, delta, lim);
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
            bool rewound = accepted && h.Tick <= newest;
            accepted = true; newest = h.Tick; run = 0;
            if (rewound) while (n > 0 && ticks[(first + n - 1) % vals.Length] >= h.Tick) n--;
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
        public void Reset() { n = 0; first = 0; accepted = false; newest = 0; run = 0; lastOK = false; }
    }
    // ---- replication (the client side of package replicate) ----

    public class ErrStale : BitwireException { public ErrStale(string d = "stale or duplicate packet") : base("ErrStale", d) { } }
    public class ErrFuture : BitwireException { public ErrFuture(string d = "sequence number too far ahead") : base("ErrFuture", d) { } }
    public class ErrTooManyEntities : BitwireException { public ErrTooManyEntities(string d = "too many entities") : base("ErrTooManyEntities", d) { } }

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
    /// version 3): checks the header, the integrity mode and trailer, accepts
    /// packets in order within the bounded sequence window (re-anchoring
    /// backward too without a MAC, as Go's), keeps the last BaselineDepth
    /// states of every entity it holds (with their ticks) as baselines,
    /// applies removals, full states and deltas against the right baseline
    /// with the generated code of the entity type, and says what to
    /// acknowledge (Ack, with the packets' tokens and the missing-baseline
    /// report). A packet that fails changes nothing, except that a body it
    /// cannot apply (any error after the window but ErrTooManyEntities) is
    /// reported in its acks.
    /// </summary>
    public sealed class ReplicaClient<T> where T : class
    {
        public const ushort Magic = 0xB37F;
        public const int HeaderBits = 114, BaselineDepth = 8, RecoverAfter = 8, AckWindow = 32;
        public const uint MaxAhead = 1024;
        sealed class Held { public uint Id; public readonly T[] Vals = new T[BaselineDepth]; public readonly uint[] Ticks = new uint[BaselineDepth]; public int N, Head; }
        struct Staged { public uint Id; public int Slot; public T Val; public int Kind; public uint Base; }
        struct SeqToken { public uint Seq, Token; }
        readonly string root; readonly uint fp; readonly int max; readonly Func<T> make;
        readonly Message.DecodeFn<T> decode; readonly Message.DeltaFn<T> delta; readonly Limits lim;
        readonly int mode; readonly uint expiry;
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
        int run; uint runSeq; bool runBack;
        /// <summary>The ids the last accepted packet set (ascending) and those it removed that were held.</summary>
        public readonly List<uint> Updated = new List<uint>(), Removed = new List<uint>();
        public ReplicaClient(string root, ulong fingerprint, Func<T> make, Message.DecodeFn<T> decode, Message.DeltaFn<T> delta, Limits lim,
            int mode = 0, byte[] key = null, int maxEntities = 1 << 20, int expiry = 0)
        {
            if (maxEntities < 1) throw new ArgumentException("max entities under 1");
            if (expiry < 0) throw new ArgumentException("negative expiry");
            this.expiry = (uint)expiry;
            if (mode < 0 || mode > 2) throw new ArgumentException("integrity mode " + mode);
            if ((mode == 2) != (key != null) || (mode == 2 && key.Length < 16)) throw new ArgumentException("a MAC key of at least 16 bytes with mode 2, and none otherwise");
            if (mode == 2) mac = new System.Security.Cryptography.HMACSHA256((byte[])key.Clone());
            this.root = root; fp = SnapshotReceiver<T>.Fingerprint32(fingerprint); this.make = make; this.decode = decode; this.delta = delta; this.lim = lim;
            this.mode = mode; max = maxEntities;
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
            if (!accepted) return;
            BitwireException err;
            if (seq <= newest) err = new ErrStale("replicate: stale or duplicate packet: packet " + seq + ", newest accepted " + newest);
            else if (seq - newest > MaxAhead) err = new ErrFuture("replicate: sequence number too far ahead: packet " + seq + ", newest accepted " + newest + " (at most " + MaxAhead + " ahead)");
            else return;
            bool back = seq <= newest;
            if (back && mode == 2) throw err; // with a MAC no run re-anchors backward
            if (run > 0 && back == runBack && seq == runSeq) { }
            else if (run > 0 && back == runBack && seq > runSeq && seq - runSeq <= MaxAhead) { run++; runSeq = seq; }
            else { run = 1; runSeq = seq; runBack = back; }
            if (run >= RecoverAfter) return;
            throw err;
        }
        // Open checks the trailer: the body's length and the packet's ack token, as snapshot.Integrity's Open.
        int Open(byte[] packet, int length, out uint token)
        {
            int body = length - (mode == 1 ? 4 : mode == 2 ? 10 : 0);
            if (body < 0) throw new ErrUnexpectedEnd("replicate: header: unexpected end of input");
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
            int body = Open(packet, length, out token);
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
                Updated.Add(s.Id);
            }
            dec.Clear();
            if (!accepted || h.Seq <= newest) mask = 0;
            else
            {
                uint shift = h.Seq - newest;
                mask = shift > AckWindow ? 0 : shift == 32 ? 1u << 31 : (mask << (int)shift) | (1u << (int)(shift - 1));
            }
            accepted = true; newest = h.Seq; tick = h.Tick; run = 0;
            tokens[h.Seq % tokens.Length] = new SeqToken { Seq = h.Seq, Token = token };
            if (h.Seq > missing.Seq) missing = new SeqToken();
            if (expiry != 0) Expire(h.Tick);
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
        // WithExpiry: drops the entities, among the next 32 slots, whose newest
        // state is more than the expiry away from t, either way.
        void Expire(uint t)
        {
            for (int k = 0; k < 32 && slots.Count > 0; k++)
            {
                if (sweep >= slots.Count) sweep = 0;
                int slot = sweep++;
                var e = slots[slot];
                int at;
                if (!index.TryGetValue(e.Id, out at) || at != slot || e.N == 0) continue; // a free slot
                uint nt = e.Ticks[(e.Head + e.N - 1) % BaselineDepth];
                if (Math.Max(nt, t) - Math.Min(nt, t) > expiry)
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
                Message.DecodeDeltaFrom(root, r, e.Vals[bi], d.Val, delta, lim);
            }
            if (!r.CheckPadding()) throw new ErrTrailingData(r.Remaining + " bits left");
            if (held > max) throw new ErrTooManyEntities("replicate: too many entities: " + held + ", limit " + max);
        }
    }

    /// <summary>
    /// A message's fields and codings as its schema gives them (generated:
    /// the codec class's Shape), for the runtime's walks over values by
    /// reflection (Conn.cs: the paths of ReplicaEvents). Coding is the
    /// schema's; a struct has Fields in wire order; an array, slice or
    /// pointer its Elem, a map its Elem and Key; Id is an entity set's id
    /// field (an index in Elem.Fields), -1 otherwise.
    /// </summary>
    public sealed class Shape
    {
        public readonly string Coding;
        public ShapeField[] Fields;
        public readonly Shape Elem, Key;
        public readonly int Id;
        public Shape(string coding, Shape elem = null, Shape key = null, int id = -1) { Coding = coding; Elem = elem; Key = key; Id = id; }
    }

    /// <summary>One encoded field of a struct Shape: its name, its reflection handle and its coding.</summary>
    public sealed class ShapeField
    {
        public readonly string Name;
        public readonly System.Reflection.FieldInfo Info;
        public readonly Shape Node;
        public ShapeField(string name, System.Reflection.FieldInfo info, Shape node) { Name = name; Info = info; Node = node; }
    }
}
