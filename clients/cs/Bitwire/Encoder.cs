// The encoding state of one message that generated code drives: the "any
// negative" flag, bit-length integers, fixed point and shared-length
// groups. The deltas it writes (a client's inputs) are in DeltaEncoder.cs.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>Thrown inside an encoder when a negative value meets a message written with the flag 0.</summary>
    public sealed class NeedSign : Exception { public static readonly NeedSign It = new NeedSign(); }

    /// <summary>Encoding state of one message.</summary>
    public sealed partial class Encoder
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
        public void Begin(bool neg) { Neg = neg; Flagged = false; Depth = 0; msg++; }
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
}
