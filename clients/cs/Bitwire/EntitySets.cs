// The delta of an entity set (docs/wire-format.md, "Entity sets"): the
// removed, added and changed entities as index sets, the survivors in
// baseline order, the changed ones by their struct delta without the id.
// One walk for every entity type: generated code passes the element's
// coder as a struct, whose calls the JIT binds directly.
using System;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>The coder of an entity type, as the entity-set walk calls it (generated per type).</summary>
    public interface IEntityCoder<T> where T : class
    {
        T New();
        void Decode(Decoder d, T into);
        void DecodeDelta(Decoder d, T baseline, T into, int skip);
        void Copy(T src, T dst);
    }

    public static class EntitySet
    {
        /// <summary>Applies an entity set's delta to baseline into into, reusing its storage, and returns it
        /// (a new list when into is null). maxLen is the slice's maxlen (0: the message's), minBits an entity's
        /// least size in bits, idField the index of the id field, which a changed entity's delta skips.</summary>
        public static List<T> DecodeDelta<T, C>(Decoder d, List<T> baseline, List<T> into, int maxLen, int minBits, int idField, C coder)
            where T : class where C : struct, IEntityCoder<T>
        {
            int bn = baseline == null ? 0 : baseline.Count;
            int l = d.Len(maxLen, 0);
            var rm = d.TakeList(); var ad = d.TakeList(); var ch = d.TakeList();
            try
            {
                d.IndexSet(bn, -1, rm);
                int surv = bn - rm.Count, na = l - surv;
                if (na < 0) throw new ErrMalformed(l + " entities after removing " + rm.Count + " of " + bn);
                if (na > 0 && na > d.R.Remaining / Math.Max(1, minBits)) throw new ErrUnexpectedEnd(na + " new entities need more input than remains");
                d.IndexSet(l, na, ad);
                d.IndexSet(surv, -1, ch);
                var a = into ?? new List<T>();
                if (a.Count > l) a.RemoveRange(l, a.Count - l);
                while (a.Count < l) a.Add(coder.New());
                // The next index of each set, int.MaxValue past its end: one compare
                // an element, not a call of List's Count and indexer (which mono does
                // not inline).
                int bi = 0, ai = 0, ri = 0, ci = 0, k = 0;
                int nAd = ad.Count, nRm = rm.Count, nCh = ch.Count;
                int nextAd = nAd > 0 ? ad[0] : int.MaxValue, nextRm = nRm > 0 ? rm[0] : int.MaxValue, nextCh = nCh > 0 ? ch[0] : int.MaxValue;
                for (int j = 0; j < l;)
                {
                    if (nextAd == j) { ai++; nextAd = ai < nAd ? ad[ai] : int.MaxValue; j++; continue; }
                    if (nextRm == bi) { ri++; nextRm = ri < nRm ? rm[ri] : int.MaxValue; bi++; continue; }
                    if (bi >= bn) throw new ErrMalformed("entity set survivors run past the baseline");
                    var e = a[j];
                    if (e == null) a[j] = e = coder.New();
                    if (nextCh == k)
                    {
                        ci++; nextCh = ci < nCh ? ch[ci] : int.MaxValue;
                        try { coder.DecodeDelta(d, baseline[bi], e, idField); }
                        catch (BitwireException x) { throw x.Within("[" + j + "]"); }
                    }
                    else coder.Copy(baseline[bi], e);
                    j++; bi++; k++;
                }
                foreach (int j in ad)
                {
                    var e = a[j];
                    if (e == null) a[j] = e = coder.New();
                    try { coder.Decode(d, e); }
                    catch (BitwireException x) { throw x.Within("[" + j + "]"); }
                }
                return a;
            }
            finally { d.GiveList(ch); d.GiveList(ad); d.GiveList(rm); }
        }
    }
}
