// The connection runner of the C# clients: reads the sessions gen's Go
// test writes (gen/conn_conformance_test.go, TestConnCSharp: S stream, D
// server packet with Go's error, input ack, messages and events, M
// message sent, P input pushed, U Go's client packet) and replays them
// through a ConnClient with ReplicaEvents and an InputSender
// (clients/cs/Conn.cs). Prints "N passed, M failed".
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Bitwire;

public static class ConnRunner
{
    static string Hex(byte[] b) { var sb = new StringBuilder(); foreach (var x in b) sb.Append(x.ToString("x2")); return sb.ToString(); }
    static byte[] Unhex(string s) { var o = new byte[s.Length / 2]; for (int i = 0; i < o.Length; i++) o[i] = Convert.ToByte(s.Substring(2 * i, 2), 16); return o; }
    static string Text(object m)
    {
        var c = m as CC.ccChat;
        if (c != null) return "chat:" + c.Text;
        var h = (CC.ccHit)m;
        return "hit:" + h.Target + "," + h.Damage;
    }

    public static int Main(string[] args)
    {
        int passed = 0, failed = 0;
        ConnClient<CC.ccShip> c = null;
        Channel ch = null;
        var events = new List<string>();
        InputSender<CC.ccMove> ins = null;
        int line = 0;
        foreach (var l in File.ReadAllLines(args[0]))
        {
            line++;
            var f = l.Split('\t');
            string got = null, want = null;
            switch (f[0])
            {
                case "S":
                {
                    int mode = int.Parse(f[1]);
                    byte[] key = mode == 2 ? Unhex(f[2]) : null;
                    ch = new Channel(CC.Msgs.EncodeTo, r => { int v; return CC.Msgs.DecodeFrom(r, out v); }, CC.Msgs.EncodeCount, CC.Msgs.DecodeCount, 16, 0, 120);
                    c = new ConnClient<CC.ccShip>(CC.Ship.Replica(mode, key), ch, mode, key);
                    var ev = new ReplicaEvents<CC.ccShip>(c.State, CC.Ship.Shape);
                    ev.Removed += id => events.Add("remove " + id);
                    ev.Added += (id, v) => events.Add("add " + id);
                    ev.Changed += (id, v, paths) => events.Add("change " + id + " " + string.Join(" ", paths));
                    c.Events = ev;
                    ins = new InputSender<CC.ccMove>(CC.Move.EncodeTo, CC.Move.EncodeDeltaInput, CC.Move.Copy, 3);
                    c.Inputs = ins;
                    continue;
                }
                case "D":
                {
                    string err = "";
                    events.Clear();
                    try { c.Receive(Unhex(f[1])); } catch (BitwireException e) { err = e.Sentinel; }
                    var msgs = new List<string>();
                    object m;
                    while (ch.TryReceive(out m)) msgs.Add(Text(m));
                    got = err + " " + (c.HasInputAck ? (long)c.InputAck : -1) + " " + string.Join("|", msgs) + " " + string.Join(";", events);
                    want = f[2] + " " + f[3] + " " + (f.Length > 4 ? f[4] : "") + " " + (f.Length > 5 ? f[5] : "");
                    break;
                }
                case "M":
                    ch.Send(new CC.ccChat { Text = f[1] });
                    continue;
                case "P":
                    ins.Push(uint.Parse(f[1]), new CC.ccMove { DX = sbyte.Parse(f[2]), DY = sbyte.Parse(f[3]), Fire = f[4] == "true",
                        Aim = float.Parse(f[5], System.Globalization.CultureInfo.InvariantCulture), Look = new CC.ccLook { Pitch = float.Parse(f[6], System.Globalization.CultureInfo.InvariantCulture) }, Seq = ushort.Parse(f[7]) });
                    continue;
                case "U":
                    got = Hex(c.Append());
                    want = f[1];
                    break;
            }
            if (got == want) passed++;
            else { failed++; if (failed < 10) Console.WriteLine("FAIL line " + line + ": want " + want + ", got " + got); }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
