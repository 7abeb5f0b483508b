// The union count framing runner of the generated C# clients: reads the
// cases gen's Go test writes (gen/union_count_test.go: one a line, kind,
// hex, count, error sentinel) and checks that the generated union's
// DecodeCount and DecodeFrom read each packet as Go did (the count, or
// the first error) and that EncodeCount writes the same bytes, or refuses
// the same counts. Prints "N passed, M failed".
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Bitwire;

public static class UnionCountRunner
{
    static string Hex(byte[] b, int n) { var sb = new StringBuilder(); for (int i = 0; i < n; i++) sb.Append(b[i].ToString("x2")); return sb.ToString(); }
    static byte[] Unhex(string s) { var o = new byte[s.Length / 2]; for (int i = 0; i < o.Length; i++) o[i] = Convert.ToByte(s.Substring(2 * i, 2), 16); return o; }

    public static int Main(string[] args)
    {
        int passed = 0, failed = 0;
        foreach (var line in File.ReadAllLines(args[0]))
        {
            if (line.Length == 0) continue;
            var f = line.Split('\t');
            string kind = f[0], hx = f[1], err = f.Length > 3 ? f[3] : "";
            long n = long.Parse(f[2]);
            string got = "";
            try
            {
                if (kind == "decode")
                {
                    var b = Unhex(hx);
                    var r = new BitReader(b);
                    int count = UC.Msgs.DecodeCount(r);
                    var msgs = new List<object>();
                    for (int i = 0; i < count; i++) { int v; msgs.Add(UC.Msgs.DecodeFrom(r, out v)); }
                    var w = new BitWriter();
                    UC.Msgs.EncodeCount(w, count);
                    foreach (var m in msgs) UC.Msgs.EncodeTo(w, m);
                    var again = w.ToArray();
                    if (count != n || again.Length > b.Length || Hex(again, again.Length) != Hex(b, again.Length)) got = "count " + count + " bytes " + Hex(again, again.Length);
                }
                else
                {
                    var w = new BitWriter();
                    UC.Msgs.EncodeCount(w, (int)n);
                    var o = w.ToArray();
                    if (Hex(o, o.Length) != hx) got = "bytes " + Hex(o, o.Length);
                }
            }
            catch (BitwireException e) { got = e.Sentinel; }
            if (got == err) passed++;
            else { failed++; if (failed < 10) Console.WriteLine("FAIL " + kind + " " + hx + " " + n + ": want " + (err == "" ? "ok" : err) + ", got " + got); }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
