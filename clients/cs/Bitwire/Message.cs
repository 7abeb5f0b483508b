// Whole messages: the entry points that generated codec classes wrap
// (limits, trailing data, the sign flag's second pass), and union tags.
using System;
using System.Collections.Generic;

namespace Bitwire
{
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
}
