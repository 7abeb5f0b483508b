// The interpolation runner of the C# clients: replays the stream gen's Go
// test writes (gen/interp_conformance_test.go, TestInterpCSharp: T a tick
// with its packet, arrival, frame time and Go's clock figures; S Go's
// sample of one entity, its state as numbers) through a ReplicaClient, a
// Clock and an Interpolator (clients/cs/Interp.cs). Prints "N passed, M
// failed".
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using Bitwire;

public static class InterpRunner
{
    static byte[] Unhex(string s) { var o = new byte[s.Length / 2]; for (int i = 0; i < o.Length; i++) o[i] = Convert.ToByte(s.Substring(2 * i, 2), 16); return o; }
    static double D(string s) { return double.Parse(s, CultureInfo.InvariantCulture); }
    static bool Near(double a, double b, double tol) { return Math.Abs(a - b) <= tol * Math.Max(1, Math.Max(Math.Abs(a), Math.Abs(b))); }

    static List<double> Flat(IC.icMob m)
    {
        var f = new List<double> { m.Pos.X, m.Pos.Y, m.Rot[0], m.Rot[1], m.Rot[2], m.Rot[3], m.Speed, m.Hp, m.Parts.Count };
        foreach (var p in m.Parts) { f.Add(p.ID); f.Add(p.Off); }
        if (m.Aim != null) { f.Add(1); f.Add(m.Aim.X); f.Add(m.Aim.Y); } else f.Add(0);
        return f;
    }

    public static int Main(string[] args)
    {
        var rc = IC.Mob.Replica();
        var clock = new Clock(30);
        var ip = new Interpolator<IC.icMob>(IC.Mob.Shape, IC.Mob.Copy, 50);
        int passed = 0, failed = 0, line = 0;
        long now = 0;
        foreach (var l in File.ReadAllLines(args[0]))
        {
            line++;
            var f = l.Split('\t');
            bool ok; string what;
            if (f[0] == "T")
            {
                if (f[1] != "-") { var b = Unhex(f[1]); rc.Decode(b, b.Length); clock.Observe(rc.Tick, long.Parse(f[2])); }
                now = long.Parse(f[3]);
                var got = new[] { clock.Tick(now), clock.Drift, clock.Jitter, clock.Delay, clock.RenderTick(now) };
                ok = true;
                for (int i = 0; i < 5; i++) ok &= Near(D(f[4 + i]), got[i], 1e-9);
                what = "clock " + string.Join(" ", got);
            }
            else
            {
                IC.icMob v; InterpSample s;
                bool has = ip.Sample(rc, uint.Parse(f[1]), clock.RenderTick(now), out v, out s);
                if (f[2] == "false" || !has) { ok = (f[2] == "false") == !has; what = "held " + has; }
                else
                {
                    var want = f[8].Split(',');
                    var gotv = Flat(v);
                    ok = s.From == uint.Parse(f[3]) && s.To == uint.Parse(f[4]) && Near(D(f[5]), s.Frac, 1e-9) && (f[6] == "true") == s.Held && (f[7] == "true") == s.Teleport && want.Length == gotv.Count;
                    for (int i = 0; ok && i < want.Length; i++) ok &= Near(D(want[i]), gotv[i], 1e-6);
                    what = s.From + " " + s.To + " " + s.Frac + " " + s.Held + " " + s.Teleport + " " + string.Join(",", gotv);
                }
            }
            if (ok) passed++;
            else { failed++; if (failed < 10) Console.WriteLine("FAIL line " + line + ": want " + l + ", got " + what); }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
