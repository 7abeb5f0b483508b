// The conformance runner of the generated C# clients: reads the corpus that
// gen's Go test writes (one case a line, tab-separated) and checks that the
// generated code decodes every case to exactly the value Go's Quantize
// gives, re-encodes every full message to identical bytes, and reports the
// same error sentinel for damaged input. Prints "N passed, M failed".
using System;
using System.Collections;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Text;
using Bitwire;

public static class Conformance
{
    static string Hex(byte[] b) { var sb = new StringBuilder(); foreach (var x in b) sb.Append(x.ToString("x2")); return sb.ToString(); }
    static byte[] Unhex(string s) { var o = new byte[s.Length / 2]; for (int i = 0; i < o.Length; i++) o[i] = Convert.ToByte(s.Substring(2 * i, 2), 16); return o; }
    static string F(double v) { return "\"x" + ((ulong)BitConverter.DoubleToInt64Bits(v)).ToString("x16") + "\""; }

    /// <summary>The canonical form of a value, as gen's Go test writes it.</summary>
    public static void Canon(StringBuilder sb, object v)
    {
        if (v == null) { sb.Append("null"); return; }
        if (v is bool) { sb.Append((bool)v ? "true" : "false"); return; }
        if (v is float) { sb.Append(F((double)(float)v)); return; }
        if (v is double) { sb.Append(F((double)v)); return; }
        if (v is sbyte || v is short || v is int || v is long || v is byte || v is ushort || v is uint || v is ulong) { sb.Append('"').Append(Convert.ToString(v, System.Globalization.CultureInfo.InvariantCulture)).Append('"'); return; }
        if (v is string) { sb.Append('"').Append(Hex(Encoding.UTF8.GetBytes((string)v))).Append('"'); return; }
        if (v is byte[]) { sb.Append('"').Append(Hex((byte[])v)).Append('"'); return; }
        if (v is Bitwire.Time) { var t = (Bitwire.Time)v; sb.Append('"').Append(t.Sec).Append(':').Append(t.Nsec).Append('"'); return; }
        if (v is Quatf) { var q = (Quatf)v; sb.Append('[').Append(F(q.X)).Append(',').Append(F(q.Y)).Append(',').Append(F(q.Z)).Append(',').Append(F(q.W)).Append(']'); return; }
        if (v is Quatd) { var q = (Quatd)v; sb.Append('[').Append(F(q.X)).Append(',').Append(F(q.Y)).Append(',').Append(F(q.Z)).Append(',').Append(F(q.W)).Append(']'); return; }
        if (v is IDictionary)
        {
            var m = (IDictionary)v;
            var keys = new List<object>();
            foreach (var k in m.Keys) keys.Add(k);
            keys.Sort((a, b) => a is string ? Codings.Utf8Compare((string)a, (string)b) : ((IComparable)a).CompareTo(b));
            sb.Append('[');
            for (int i = 0; i < keys.Count; i++)
            {
                if (i > 0) sb.Append(',');
                sb.Append('['); Canon(sb, keys[i]); sb.Append(','); Canon(sb, m[keys[i]]); sb.Append(']');
            }
            sb.Append(']');
            return;
        }
        if (v is IList)
        {
            var l = (IList)v;
            sb.Append('[');
            for (int i = 0; i < l.Count; i++) { if (i > 0) sb.Append(','); Canon(sb, l[i]); }
            sb.Append(']');
            return;
        }
        var fs = v.GetType().GetFields(BindingFlags.Public | BindingFlags.Instance);
        Array.Sort(fs, (a, b) => a.MetadataToken.CompareTo(b.MetadataToken));
        sb.Append('[');
        for (int i = 0; i < fs.Length; i++) { if (i > 0) sb.Append(','); Canon(sb, fs[i].GetValue(v)); }
        sb.Append(']');
    }
    /// <summary>What a replica client made of a packet, as gen's Go test writes it: seq, tick, removals, the states set, the ids held.</summary>
    static void AppendReplica(StringBuilder sb, object rc)
    {
        var rt = rc.GetType();
        sb.Append("seq ").Append(((ReplicaAck)rt.GetMethod("Ack").Invoke(rc, null)).Seq).Append(" tick ").Append(rt.GetProperty("Tick").GetValue(rc)).Append(" removed [");
        sb.Append(string.Join(" ", (List<uint>)rt.GetField("Removed").GetValue(rc))).Append("] set");
        var tryGet = rt.GetMethod("TryGet");
        foreach (uint id in (List<uint>)rt.GetField("Updated").GetValue(rc))
        {
            var targs = new object[] { id, null, 0u };
            tryGet.Invoke(rc, targs);
            sb.Append(' ').Append(id).Append('@').Append(targs[2]).Append('=').Append(Canon(targs[1]));
        }
        var ids = new List<uint>((IEnumerable<uint>)rt.GetProperty("Ids").GetValue(rc));
        ids.Sort();
        sb.Append(" held [").Append(string.Join(" ", ids)).Append(']');
    }

    static string Canon(object v) { var sb = new StringBuilder(); Canon(sb, v); return sb.ToString(); }

    static string Differ(string got, string want)
    {
        int i = 0;
        while (i < got.Length && i < want.Length && got[i] == want[i]) i++;
        int from = Math.Max(0, i - 60);
        return "at " + i + ": got …" + got.Substring(from, Math.Min(120, got.Length - from)) + "…, want …" + want.Substring(from, Math.Min(120, want.Length - from)) + "…";
    }

    public static int Main(string[] args)
    {
        string ns = args[0];
        var asm = Assembly.GetExecutingAssembly();
        int passed = 0, failed = 0;
        var fulls = new Dictionary<string, List<object>>();
        var receivers = new Dictionary<string, object>();
        Action<string> report = what => { if (failed < 20) Console.WriteLine("FAIL " + (what.Length > 600 ? what.Substring(0, 600) + "…" : what)); failed++; };
        foreach (var line in File.ReadAllLines(args[1]))
        {
            if (line.Length == 0) continue;
            var c = line.Split('\t'); // kind, msg, data, want, base, stream, tick, ..., older
            string kind = c[0], msg = c[1], data = c[2], want = c[3];
            var codec = asm.GetType(ns + "." + msg);
            try
            {
                if (kind == "input")
                {
                    // an input delta (InputSender's older inputs): the baseline and the
                    // input in full; want is Go's Codec.EncodeDelta, its bit count and
                    // hex, or the error's sentinel
                    var bv = codec.GetMethod("Decode", new[] { typeof(byte[]) }).Invoke(null, new object[] { Unhex(data) });
                    var cv = codec.GetMethod("Decode", new[] { typeof(byte[]) }).Invoke(null, new object[] { Unhex(c[4]) });
                    var w = new BitWriter();
                    string got;
                    try
                    {
                        codec.GetMethod("EncodeDeltaInput").Invoke(null, new object[] { w, bv, cv });
                        got = w.Length + ":" + Hex(w.ToArray());
                    }
                    catch (TargetInvocationException x) when (x.InnerException is BitwireException)
                    {
                        got = ((BitwireException)x.InnerException).Sentinel;
                    }
                    if (got != want) { report("input " + msg + ": EncodeDeltaInput wrote " + got + ", want " + want); continue; }
                    passed++;
                    continue;
                }
                if (kind == "golden")
                {
                    var b = Unhex(data);
                    var o = codec.GetMethod("Decode", new[] { typeof(byte[]) }).Invoke(null, new object[] { b });
                    var again = Hex((byte[])codec.GetMethod("Encode").Invoke(null, new object[] { o }));
                    if (again != data) { report("golden " + msg + ": re-encoded " + again + ", want " + data); continue; }
                    passed++;
                    continue;
                }
                if (kind == "golden-delta")
                {
                    // a golden delta (testdata/golden/codings.txt): its baseline in full, the
                    // delta, and the full encoding of what it decodes to
                    var b = Unhex(data);
                    var baseline = codec.GetMethod("Decode", new[] { typeof(byte[]) }).Invoke(null, new object[] { b });
                    var d = Unhex(c[4]);
                    var rootType = baseline.GetType();
                    var o = Activator.CreateInstance(rootType);
                    codec.GetMethod("DecodeDelta", new[] { typeof(byte[]), typeof(int), rootType, rootType }).Invoke(null, new object[] { d, d.Length, baseline, o });
                    var again = Hex((byte[])codec.GetMethod("Encode").Invoke(null, new object[] { o }));
                    if (again != want) { report("golden delta " + msg + ": decoded to " + again + ", want " + want); continue; }
                    passed++;
                    continue;
                }
                if (kind == "golden-predicted")
                {
                    // a delta coded from two baselines: the baseline in full, the delta, the
                    // full encoding of what it decodes to, and the older baseline in full
                    var dec = codec.GetMethod("Decode", new[] { typeof(byte[]) });
                    var baseline = dec.Invoke(null, new object[] { Unhex(data) });
                    var older = dec.Invoke(null, new object[] { Unhex(c[13]) });
                    var d = Unhex(c[4]);
                    var rootType = baseline.GetType();
                    var o = Activator.CreateInstance(rootType);
                    codec.GetMethod("DecodePredicted", new[] { typeof(byte[]), typeof(int), rootType, rootType, rootType }).Invoke(null, new object[] { d, d.Length, older, baseline, o });
                    var again = Hex((byte[])codec.GetMethod("Encode").Invoke(null, new object[] { o }));
                    if (again != want) { report("golden predicted " + msg + ": decoded to " + again + ", want " + want); continue; }
                    passed++;
                    continue;
                }
                if (kind == "union" || kind == "golden-union")
                {
                    var r = new BitReader(Unhex(data));
                    var w = new BitWriter();
                    var sb = new StringBuilder("[");
                    var dec = codec.GetMethod("DecodeFrom");
                    var enc = codec.GetMethod("EncodeTo");
                    int n = 0;
                    while (r.Remaining >= 8 || (r.Remaining > 0 && !PaddingLeft(Unhex(data), r)))
                    {
                        var a = new object[] { r, 0 };
                        var v = dec.Invoke(null, a);
                        if (n++ > 0) sb.Append(',');
                        sb.Append('[').Append((int)a[1]).Append(',').Append(Canon(v)).Append(']');
                        enc.Invoke(null, new object[] { w, v });
                    }
                    sb.Append(']');
                    if (kind == "union" && sb.ToString() != want) { report("union " + data + ": " + Differ(sb.ToString(), want)); continue; }
                    if (Hex(w.ToArray()) != data) { report("union re-encode " + Hex(w.ToArray()) + ", want " + data); continue; }
                    passed++;
                    continue;
                }
                Type root = codec.GetMethod("Copy").GetParameters()[0].ParameterType;
                if (kind == "alloc" || kind == "alloc-delta")
                {
                    // decoding into a reused value allocates nothing once warm
                    var b = Unhex(data);
                    var o = Activator.CreateInstance(root);
                    long bytes;
                    if (kind == "alloc")
                    {
                        var m = codec.GetMethod("Decode", new[] { typeof(byte[]), typeof(int), root });
                        var del = Delegate.CreateDelegate(typeof(Action<,,>).MakeGenericType(typeof(byte[]), typeof(int), root), m);
                        bytes = Allocated(del, new object[] { b, b.Length, o });
                    }
                    else
                    {
                        var baseline = Activator.CreateInstance(root);
                        codec.GetMethod("Decode", new[] { typeof(byte[]), typeof(int), root }).Invoke(null, new object[] { b, b.Length, baseline });
                        var d = Unhex(c[4]);
                        var m = codec.GetMethod("DecodeDelta", new[] { typeof(byte[]), typeof(int), root, root });
                        var del = Delegate.CreateDelegate(typeof(Action<,,,>).MakeGenericType(typeof(byte[]), typeof(int), root, root), m);
                        bytes = Allocated(del, new object[] { d, d.Length, baseline, o });
                    }
                    if (bytes != 0) { report(kind + " " + msg + ": " + bytes + " bytes allocated by 5000 decodes into a reused value"); continue; }
                    passed++;
                    continue;
                }
                if (kind == "repl" || kind == "repl-golden" || kind == "repl-held")
                {
                    // a replication stream: what the client set, removed and holds, or the error, and the ack in bytes
                    object rc;
                    if (!receivers.TryGetValue("repl" + c[5], out rc))
                    {
                        // columns 10-12: the expiry ("": the default one), the Peer's refresh and the tick rate (0: not given)
                        int mx = int.Parse(c[4]);
                        long? expiry = null;
                        if (c.Length > 10 && c[10].Length > 0) expiry = long.Parse(c[10]);
                        int refresh = c.Length > 11 ? int.Parse(c[11]) : 0, rate = c.Length > 12 ? int.Parse(c[12]) : 0;
                        rc = codec.GetMethod("Replica").Invoke(null, new object[] { int.Parse(c[7]), c.Length > 9 && c[9].Length > 0 ? Unhex(c[9]) : null, mx > 0 ? mx : 1 << 20, expiry, refresh, rate > 0 ? rate : 30 });
                        receivers["repl" + c[5]] = rc;
                    }
                    var rt = rc.GetType();
                    if (kind == "repl-held")
                    {
                        // every entity the client holds at the end of its stream, with its tick and state
                        var held = new StringBuilder("held");
                        var ids = new List<uint>((IEnumerable<uint>)rt.GetProperty("Ids").GetValue(rc));
                        ids.Sort();
                        var tg = rt.GetMethod("TryGet");
                        foreach (uint id in ids)
                        {
                            var targs = new object[] { id, null, 0u };
                            tg.Invoke(rc, targs);
                            held.Append(' ').Append(id).Append('@').Append(targs[2]).Append('=').Append(Canon(targs[1]));
                        }
                        if (held.ToString() != want) { report("replication stream " + c[5] + " at the end: " + Differ(held.ToString(), want)); continue; }
                        passed++;
                        continue;
                    }
                    string got;
                    try
                    {
                        var p = Unhex(data);
                        rt.GetMethod("Decode", new[] { typeof(byte[]), typeof(int) }).Invoke(rc, new object[] { p, p.Length });
                        var sb = new StringBuilder();
                        if (kind == "repl-golden")
                            sb.Append("updated [").Append(string.Join(" ", (List<uint>)rt.GetField("Updated").GetValue(rc))).Append("] removed [").Append(string.Join(" ", (List<uint>)rt.GetField("Removed").GetValue(rc))).Append(']');
                        else AppendReplica(sb, rc);
                        got = sb.ToString();
                    }
                    catch (TargetInvocationException e) { got = e.InnerException is BitwireException ? ((BitwireException)e.InnerException).Sentinel : "other: " + e.InnerException; }
                    var ra = (ReplicaAck)rt.GetMethod("Ack").Invoke(rc, null);
                    var ab = new byte[ra.Length];
                    ra.WriteTo(ab, 0);
                    got += " ack " + Hex(ab);
                    string w2 = want + " ack " + (c.Length > 8 ? c[8] : "");
                    if (got != w2) { report("replication stream " + c[5] + " " + data + ": " + Differ(got, w2)); continue; }
                    passed++;
                    continue;
                }
                if (kind == "snap")
                {
                    object rc;
                    if (!receivers.TryGetValue(c[5], out rc)) { rc = codec.GetMethod("Receiver").Invoke(null, new object[] { 32, int.Parse(c[7]), 300u, 8, c.Length > 9 && c[9].Length > 0 ? Unhex(c[9]) : null }); receivers[c[5]] = rc; }
                    string got;
                    try
                    {
                        var p = Unhex(data);
                        var decm = rc.GetType().GetMethod("Decode", new[] { typeof(byte[]), typeof(int) });
                        uint tick = (uint)decm.Invoke(rc, new object[] { p, p.Length });
                        got = "tick " + tick + " " + Canon(rc.GetType().GetProperty("Latest").GetValue(rc));
                    }
                    catch (TargetInvocationException e) { got = e.InnerException is BitwireException ? ((BitwireException)e.InnerException).Sentinel : "other: " + e.InnerException; }
                    var ackArgs = new object[] { null };
                    string ackHex = "";
                    if ((bool)rc.GetType().GetMethod("Ack").Invoke(rc, ackArgs))
                    {
                        var ab = new byte[9];
                        ((SnapshotAck)ackArgs[0]).WriteTo(ab, 0);
                        ackHex = Hex(ab);
                    }
                    got += " ack " + ackHex;
                    string w2 = (want.StartsWith("Err") ? want : "tick " + c[6] + " " + want) + " ack " + (c.Length > 8 ? c[8] : "");
                    if (got != w2) { report("snapshot stream " + c[5] + " " + data + ": " + Differ(got, w2)); continue; }
                    passed++;
                    continue;
                }
                if (kind == "damaged")
                {
                    string got;
                    try
                    {
                        var o = Activator.CreateInstance(root);
                        var b = Unhex(data);
                        codec.GetMethod("Decode", new[] { typeof(byte[]), typeof(int), root }).Invoke(null, new object[] { b, b.Length, o });
                        got = Canon(o);
                    }
                    catch (TargetInvocationException e) { got = e.InnerException is BitwireException ? ((BitwireException)e.InnerException).Sentinel : "other: " + e.InnerException; }
                    if (got != want) { report("damaged " + msg + " " + data + ": " + Differ(got, want)); continue; }
                    passed++;
                    continue;
                }
                List<object> list;
                if (!fulls.TryGetValue(msg, out list)) fulls[msg] = list = new List<object>();
                if (kind == "damaged-delta")
                {
                    string got;
                    try
                    {
                        var b = Unhex(data);
                        var o = Activator.CreateInstance(root);
                        codec.GetMethod("DecodeDelta", new[] { typeof(byte[]), typeof(int), root, root }).Invoke(null, new object[] { b, b.Length, list[int.Parse(c[4])], o });
                        got = Canon(o);
                    }
                    catch (TargetInvocationException e) { got = e.InnerException is BitwireException ? ((BitwireException)e.InnerException).Sentinel : "other: " + e.InnerException; }
                    if (got != want) { report("damaged delta " + msg + " " + data + ": " + Differ(got, want)); continue; }
                    passed++;
                    continue;
                }
                if (kind == "full")
                {
                    var b = Unhex(data);
                    var o = Activator.CreateInstance(root);
                    codec.GetMethod("Decode", new[] { typeof(byte[]), typeof(int), root }).Invoke(null, new object[] { b, b.Length, o });
                    list.Add(o);
                    string got = Canon(o);
                    if (got != want) { report(msg + " full " + data + ": " + Differ(got, want)); continue; }
                    var again = (byte[])codec.GetMethod("Encode").Invoke(null, new object[] { o });
                    if (Hex(again) != data) { report(msg + " re-encode " + Hex(again) + ", want " + data); continue; }
                    var q = Activator.CreateInstance(root);
                    codec.GetMethod("Copy").Invoke(null, new object[] { o, q });
                    codec.GetMethod("Quantize").Invoke(null, new object[] { q });
                    if (Canon(q) != want) { report(msg + " quantize " + Differ(Canon(q), want)); continue; }
                    passed++;
                }
                else // delta
                {
                    var b = Unhex(data);
                    var baseline = list[int.Parse(c[4])];
                    var o = Activator.CreateInstance(root);
                    codec.GetMethod("DecodeDelta", new[] { typeof(byte[]), typeof(int), root, root }).Invoke(null, new object[] { b, b.Length, baseline, o });
                    string got = Canon(o);
                    if (got != want) { report(msg + " delta " + data + " on #" + c[4] + ": " + Differ(got, want)); continue; }
                    passed++;
                }
            }
            catch (TargetInvocationException e) { report(kind + " " + msg + " " + data + ": " + e.InnerException); }
            catch (Exception e) { report(kind + " " + msg + " " + data + ": " + e); }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed > 0 ? 1 : 0;
    }

    // Allocated returns the bytes allocated by 5000 calls of the typed
    // delegate del (after two warm-up calls). The delegate is invoked through
    // a typed wrapper built once, so that the measurement holds no
    // reflection allocations.
    static long Allocated(Delegate del, object[] args)
    {
        var call = Wrap(del, args);
        call(); call();
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 5000; i++) call();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }

    static Action Wrap(Delegate del, object[] args)
    {
        var m = typeof(Conformance).GetMethod(args.Length == 3 ? "Bind3" : "Bind4", BindingFlags.NonPublic | BindingFlags.Static);
        var types = new List<Type>();
        foreach (var a in args) types.Add(a.GetType());
        return (Action)m.MakeGenericMethod(types.ToArray()).Invoke(null, new object[] { del, args });
    }
    static Action Bind3<A, B, C>(Delegate del, object[] args) { var f = (Action<A, B, C>)del; A a = (A)args[0]; B b = (B)args[1]; C c = (C)args[2]; return () => f(a, b, c); }
    static Action Bind4<A, B, C, D>(Delegate del, object[] args) { var f = (Action<A, B, C, D>)del; A a = (A)args[0]; B b = (B)args[1]; C c = (C)args[2]; D d = (D)args[3]; return () => f(a, b, c, d); }

    // whether the bits left in r are only zero padding
    static bool PaddingLeft(byte[] data, BitReader r)
    {
        int rem = r.Remaining;
        int last = data[data.Length - 1];
        return (last >> (8 - rem)) == 0;
    }
}
