// The delta of an entity set (docs/wire-format.md, "Entity sets"): the
// removed, added and changed entities as index sets, the survivors in
// baseline order, the changed ones by their struct delta without the id.
// One walk for every entity type, each way (a client's inputs are written
// as Go's Codec.EncodeDelta writes them): generated code passes the
// element's coder as a struct, whose calls the JIT binds directly.
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

    /// <summary>What writing an entity set's delta needs of its entity type (generated per type).</summary>
    public interface IEntityInputCoder<T> where T : class
    {
        /// <summary>The entity's id as Go compares ids: its integer as an unsigned 64-bit one.</summary>
        ulong Id(T v);
        /// <summary>Whether two entities code alike (the changed bits' equality).</summary>
        bool Same(T a, T b);
        /// <summary>Writes a new entity in full.</summary>
        void Encode(Encoder e, T v);
        /// <summary>A changed entity's delta without the field skip (its id).</summary>
        void EncodeDelta(Encoder e, T baseline, T cur, int skip);
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

        /// <summary>Writes the delta of the entity set cur against baseline (changed), as Go's Codec.EncodeDelta
        /// does: the length; the removed entities (baseline indexes), where new ones go (indexes in cur, the count
        /// left out) and which survivors changed (survivor ordinals); each changed survivor's delta without its
        /// id; then each new entity in full. Entities are matched in one pass that takes ids to ascend, as Go's:
        /// one out of order goes as removed and new. maxLen is the slice's maxlen (0: the message's), idField the
        /// index of the id field.</summary>
        public static void EncodeDelta<T, C>(Encoder e, List<T> baseline, List<T> cur, int maxLen, int idField, C coder)
            where T : class where C : struct, IEntityInputCoder<T>
        {
            int bn = baseline == null ? 0 : baseline.Count, cn = cur == null ? 0 : cur.Count;
            Codings.Len(e, cn, maxLen);
            var rm = e.TakeList(); var ad = e.TakeList(); var ch = e.TakeList(); var pairs = e.TakeList();
            try
            {
                int surv = Match(baseline, bn, cur, cn, coder, rm, ad, ch, pairs);
                e.IndexSet(rm, bn, false);
                e.IndexSet(ad, cn, true);
                e.IndexSet(ch, surv, false);
                for (int k = 0; k < pairs.Count; k += 2)
                {
                    int j = pairs[k + 1];
                    try { coder.EncodeDelta(e, baseline[pairs[k]], cur[j], idField); }
                    catch (BitwireException x) { throw x.Within("[" + j + "]"); }
                }
                foreach (int j in ad)
                {
                    try { coder.Encode(e, cur[j]); }
                    catch (BitwireException x) { throw x.Within("[" + j + "]"); }
                }
            }
            finally { e.GiveList(pairs); e.GiveList(ch); e.GiveList(ad); e.GiveList(rm); }
        }

        /// <summary>Matches the first bn entities of b with the first cn of c by id: fills the removed (rm), the
        /// added (ad), the changed survivors' ordinals (ch) and their index pairs (pairs: baseline, new) and
        /// returns the number of survivors.</summary>
        static int Match<T, C>(List<T> b, int bn, List<T> c, int cn, C coder, List<int> rm, List<int> ad, List<int> ch, List<int> pairs)
            where T : class where C : struct, IEntityInputCoder<T>
        {
            int i = 0, j = 0, surv = 0;
            while (i < bn && j < cn)
            {
                ulong ib = Id(b, i, coder), ic = Id(c, j, coder);
                if (ib < ic) { rm.Add(i++); continue; }
                if (ib > ic) { ad.Add(j++); continue; }
                if (!coder.Same(b[i], c[j])) { ch.Add(surv); pairs.Add(i); pairs.Add(j); }
                surv++; i++; j++;
            }
            while (i < bn) rm.Add(i++);
            while (j < cn) ad.Add(j++);
            return surv;
        }

        static ulong Id<T, C>(List<T> l, int i, C coder) where T : class where C : struct, IEntityInputCoder<T>
        {
            T v = l[i];
            if (v == null) throw new ErrInvalidValue("null entity").Within("[" + i + "]");
            return coder.Id(v);
        }
    }
}
