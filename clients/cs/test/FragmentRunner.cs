// The fragment runner of the C# client: reads the sessions gen's Go test
// writes (gen/fragment_cs_test.go, TestFragmentsCSharp: S session, P
// datagram with Go's outcome, X a reset, R Go's ReassemblyStats) and replays them
// through a Reassembler feeding a SnapshotReceiver, as an application
// would (clients/cs/Bitwire/Fragments.cs). Prints "N passed, M failed".
using System;
using System.IO;
using System.Text;
using Bitwire;

public static class FragmentRunner
{
    static string Hex(byte[] b, int n) { var sb = new StringBuilder(); for (int i = 0; i < n; i++) sb.Append(b[i].ToString("x2")); return sb.ToString(); }
    static byte[] Unhex(string s) { var o = new byte[s.Length / 2]; for (int i = 0; i < o.Length; i++) o[i] = Convert.ToByte(s.Substring(2 * i, 2), 16); return o; }

    interface ISession { string Take(byte[] p); string Stats(); void Reset(); }

    sealed class Session<T> : ISession where T : class
    {
        readonly SnapshotReceiver<T> rc; readonly Reassembler frags; readonly Func<T, byte[]> encode; readonly bool blocks;
        public Session(SnapshotReceiver<T> rc, int maxBlock, Func<T, byte[]> encode, bool blocks)
        {
            this.rc = rc; frags = Reassembler.ForReceiver(rc, maxBlock); this.encode = encode; this.blocks = blocks;
        }
        // What the client makes of a datagram: the reassembler's verdict (no
        // ack), or the receiver's on the packet or the block, and its ack.
        public string Take(byte[] p)
        {
            byte[] pkt = p; int n = p.Length; string pre = "";
            if (Reassembler.IsFragment(p, p.Length))
            {
                try { n = frags.Add(p, p.Length); }
                catch (BitwireException e) { return e.Sentinel + " ack "; }
                pkt = frags.Block;
                if (blocks) pre = "block " + Hex(pkt, n) + " ";
            }
            string got;
            try
            {
                uint tick = rc.Decode(pkt, n);
                var b = encode(rc.Latest);
                got = "tick " + tick + " " + Hex(b, b.Length);
            }
            catch (BitwireException e) { got = e.Sentinel; }
            SnapshotAck a;
            string ack = "";
            if (rc.Ack(out a)) { var ab = new byte[9]; a.WriteTo(ab, 0); ack = Hex(ab, 9); }
            return pre + got + " ack " + ack;
        }
        public void Reset() { rc.Reset(); frags.Reset(); }
        public string Stats()
        {
            var s = frags.Stats;
            return s.Fragments + " " + s.Duplicates + " " + s.Blocks + " " + s.Superseded;
        }
    }

    public static int Main(string[] args)
    {
        int passed = 0, failed = 0, line = 0;
        ISession s = null;
        foreach (var l in File.ReadAllLines(args[0]))
        {
            line++;
            var f = l.Split('\t');
            string got, want;
            switch (f[0])
            {
                case "S":
                {
                    int mode = int.Parse(f[2]), max = int.Parse(f[4]);
                    byte[] key = mode == 2 ? Unhex(f[3]) : null;
                    bool blocks = f[5] == "true";
                    int history = int.Parse(f[6]);
                    if (f[1] == "Golden") s = new Session<FR.csfGolden>(FR.Golden.Receiver(history, mode, 300, 8, key), max, FR.Golden.Encode, blocks);
                    else s = new Session<FR.csfState>(FR.State.Receiver(history, mode, 300, 8, key), max, FR.State.Encode, blocks);
                    continue;
                }
                case "P": got = s.Take(Unhex(f[1])); want = f[2]; break;
                case "R": got = s.Stats(); want = f[1]; break;
                case "X": s.Reset(); continue;
                default: Console.WriteLine("line " + line + ": " + l); return 2;
            }
            if (got == want) { passed++; continue; }
            if (failed < 20) Console.WriteLine("FAIL line " + line + ": C# " + Short(got) + ", Go " + Short(want));
            failed++;
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }

    static string Short(string s) { return s.Length > 160 ? s.Substring(0, 160) + "…" : s; }
}
