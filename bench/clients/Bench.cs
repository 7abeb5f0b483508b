// Timing loops of the generated C# decoders on the bench workloads (run by
// bench/cmd/clientbench). Decodes into reused values, as a game client
// does each tick. Prints one JSON object: median CPU ns per decode.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using Bench;

public static class ClientBench
{
    static byte[] Hex(string dir, string name)
    {
        string s = File.ReadAllText(Path.Combine(dir, name + ".hex")).Trim();
        var b = new byte[s.Length / 2];
        for (int i = 0; i < b.Length; i++) b[i] = Convert.ToByte(s.Substring(2 * i, 2), 16);
        return b;
    }

    // CPU is the CPU time this process has used, in ns (every thread: the
    // JIT and the garbage collector count; Linux counts it in 10 ms ticks,
    // hence batches of 200 ms).
    static double CPU()
    {
        var p = Process.GetCurrentProcess();
        p.Refresh();
        return p.TotalProcessorTime.TotalMilliseconds * 1e6;
    }

    // Time warms f up (batches doubled until one takes 200 ms of CPU), then
    // returns the median CPU time per call over 9 batches of that size.
    static double Time(Action f)
    {
        long n = 1;
        for (;;)
        {
            double t0 = CPU();
            for (long i = 0; i < n; i++) f();
            if (CPU() - t0 > 200e6) break;
            n *= 2;
        }
        var runs = new List<double>();
        for (int k = 0; k < 9; k++)
        {
            double t0 = CPU();
            for (long i = 0; i < n; i++) f();
            runs.Add((CPU() - t0) / n);
        }
        runs.Sort();
        return runs[4];
    }

    public static void Main(string[] args)
    {
        string dir = args[0];
        byte[] world = Hex(dir, "world901"), delta = Hex(dir, "world901-delta"), snap = Hex(dir, "snapshot64");
        var baseline = WorldCodec.Decode(Hex(dir, "world901-base"));
        var w = new World();
        var w2 = new World();
        var s = new Snapshot();
        long before = GC.GetTotalMemory(false);
        double tw = Time(() => WorldCodec.Decode(world, world.Length, w));
        double td = Time(() => WorldCodec.DecodeDelta(delta, delta.Length, baseline, w2));
        double ts = Time(() => SnapshotCodec.Decode(snap, snap.Length, s));
        Console.WriteLine("{\"world901\": " + tw.ToString("R") + ", \"world901-delta\": " + td.ToString("R") + ", \"snapshot64\": " + ts.ToString("R") +
            ", \"gc\": " + GC.CollectionCount(0) + "}");
    }
}
