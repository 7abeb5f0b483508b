// Deltas coded with a trained model (docs/wire-format.md, "Models"): the
// canonical prefix codes of the model's tables (Code) and the tokens the
// Decoder reads with them.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>
    /// A canonical prefix code: one table of a trained model (wire-format.md, "Models", "Canonical
    /// codes"), given by each symbol's code length alone (0: no code). Codes are assigned in order of
    /// (length, symbol) and written most significant bit first. Symbol 0 is the escape (ESC). The
    /// generated code builds one per table from the lengths the generator found in the schema's model
    /// file, which it checked; lengths that are no prefix code (a length above 15, an over-subscribed
    /// code, fewer than two symbols, an ESC length outside 1..5 unless ESC is absent and every other
    /// symbol has a code) throw ErrModel. Read-only once built.
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
            // ESC is 1..5 bits, or absent from a table that codes every other symbol (a quaternion
            // difference table of a model file version 3; the generator has checked the kind).
            bool complete = lens[0] == 0 && lens.Length > 2 && Array.IndexOf(lens, (byte)0, 1) < 0;
            if ((lens[0] < 1 || lens[0] > EscMaxLen) && !complete) throw new ErrModel("ESC length " + lens[0]);
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

    public sealed partial class Decoder
    {
        /// <summary>A token of table c (wire-format.md, "Tokens"): false for ESC (nothing more read), else true
        /// with the magnitude and its sign. Symbol s codes magnitude slot s - 1: the magnitude itself below 4, else
        /// two slots a bit length (the slot's low bit is the bit below the leading one), the x = slot / 2 - 1 bits
        /// below the top two following; then a sign bit unless the magnitude is 0.</summary>
        public bool Token(Code c, out ulong m, out bool neg)
        {
            m = 0; neg = false;
            int sym = c.Read(R);
            if (sym == 0) return false;
            TokenTail(sym - 1, out m, out neg);
            return true;
        }
        /// <summary>What follows the symbol of a token of magnitude slot s: the magnitude's bits below its slot's
        /// top ones and a sign bit, none for slot 0.</summary>
        public void TokenTail(int s, out ulong m, out bool neg)
        {
            m = 0; neg = false;
            if (s == 0) return;
            if (s < 4) m = (ulong)s;
            else
            {
                int x = (s >> 1) - 1;
                m = (2UL | (ulong)(s & 1)) << x | R.Read(x);
            }
            neg = R.Bool();
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
    }
}
