// The input runner of the C# clients: reads the input sequences gen's Go
// test writes (gen/input_delta_test.go, TestCSharpInputSequences: one line
// a sequence of mode, key, redundancy, the ticks, the inputs in full and
// Go's client packet, tab-separated) and pushes each into an InputSender
// behind a ConnClient (clients/cs/Conn.cs): the client's packet (the
// newest inputs, the older ones as deltas written by the generated
// EncodeDeltaInput) must be Go's, byte for byte. Prints "N passed, M
// failed".
using System;
using System.IO;
using System.Text;
using Bitwire;

public static class InputRunner
{
    static string Hex(byte[] b) { var sb = new StringBuilder(); foreach (var x in b) sb.Append(x.ToString("x2")); return sb.ToString(); }
    static byte[] Unhex(string s) { var o = new byte[s.Length / 2]; for (int i = 0; i < o.Length; i++) o[i] = Convert.ToByte(s.Substring(2 * i, 2), 16); return o; }

    public static int Main(string[] args)
    {
        int passed = 0, failed = 0, line = 0;
        foreach (var l in File.ReadAllLines(args[0]))
        {
            line++;
            var f = l.Split('\t');
            string got;
            try
            {
                int mode = int.Parse(f[0]);
                byte[] key = mode == 2 ? Unhex(f[1]) : null;
                var c = new ConnClient<CI.tiInput>(CI.TI.Replica(mode, key), null, mode, key);
                var ins = new InputSender<CI.tiInput>(CI.TI.EncodeTo, CI.TI.EncodeDeltaInput, CI.TI.Copy, int.Parse(f[2]));
                c.Inputs = ins;
                var ticks = f[3].Split(',');
                var inputs = f[4].Split(',');
                for (int k = 0; k < ticks.Length; k++) ins.Push(uint.Parse(ticks[k]), CI.TI.Decode(Unhex(inputs[k])));
                got = Hex(c.Append());
            }
            catch (BitwireException e) { got = e.Sentinel + ": " + e.Message; }
            if (got == f[5]) passed++;
            else { failed++; if (failed < 10) Console.WriteLine("FAIL line " + line + ": want " + f[5] + ", got " + got); }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return 0;
    }
}
