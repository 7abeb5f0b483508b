// Interpolation for the C# clients, as Go's package interp: a Clock that
// fits the server's tick from packet arrivals (drift, jitter, an adaptive
// delay), and an Interpolator that draws an entity between the two states
// a ReplicaClient keeps around the render tick (q and fixed lerped,
// quaternions slerped, teleports held), walking the generated Shape. The
// same formulas as Go's (gen/interp_conformance_test.go).
using System;
using System.Collections;
using System.Collections.Generic;

namespace Bitwire
{
    /// <summary>Go's interp.Clock; times are nanoseconds, ticks uint32.</summary>
    public sealed class Clock
    {
        const double Forget = 0.995;
        public readonly double Rate;
        public double MinDelay = 2, MaxDelay = 6, Factor = 2;
        bool started; long t0; uint k0, newest;
        double w, sx, sy, sxx, sxy, jw, js;
        int n;
        double delay = 2;
        public Clock(double tickRate) { Rate = tickRate > 0 ? tickRate : 30; }

        // seconds since the first arrival, as Go's Duration.Seconds
        double Secs(long at) { long d = at - t0; return (double)(d / 1000000000L) + (double)(d % 1000000000L) / 1e9; }

        /// <summary>A packet of tick arrived at at (nanoseconds).</summary>
        public void Observe(uint tick, long at)
        {
            if (!started) { started = true; t0 = at; k0 = tick; newest = tick; }
            if ((int)(tick - newest) > 0) newest = tick;
            double x = Secs(at), y = (int)(tick - k0);
            if (n >= 2)
            {
                double r = y - FitAt(x);
                jw = Forget * jw + 1;
                js = Forget * js + r * r;
            }
            w = Forget * w + 1; sx = Forget * sx + x; sy = Forget * sy + y; sxx = Forget * sxx + x * x; sxy = Forget * sxy + x * y;
            n++;
            double target = Math.Min(Math.Max(MinDelay + Factor * Jitter, MinDelay), MaxDelay);
            if (target > delay) delay = target; else delay += (target - delay) * 0.02;
        }
        double Slope()
        {
            double d = w * sxx - sx * sx;
            if (n < 8 || d <= 1e-9 * w * w) return Rate;
            double s = (w * sxy - sx * sy) / d;
            return Math.Min(Math.Max(s, Rate * 0.9), Rate * 1.1);
        }
        double FitAt(double x) { return w == 0 ? 0 : sy / w + Slope() * (x - sx / w); }
        /// <summary>The server tick a packet arriving at now typically carries (fractional).</summary>
        public double Tick(long now) { return started ? k0 + FitAt(Secs(now)) : 0; }
        /// <summary>The tick the server is at now, given the round trip in nanoseconds: for stamping inputs.</summary>
        public double ServerTick(long now, long rttNs) { return Tick(now) + (rttNs / 1e9) / 2 * Slope(); }
        public double Drift { get { return Slope() / Rate - 1; } }
        public double Jitter { get { return jw == 0 ? 0 : Math.Sqrt(js / jw); } }
        public double Delay { get { return delay; } }
        public double RenderTick(long now) { return Tick(now) - delay; }
    }

    /// <summary>How Interpolator.Sample built a state, as Go's interp.Sample.</summary>
    public struct InterpSample { public uint From, To; public double Frac; public bool Held, Teleport; }

    /// <summary>Go's interp.Interpolator over a generated Shape and Copy.</summary>
    public sealed class Interpolator<T> where T : class, new()
    {
        readonly Shape shape;
        readonly Action<T, T> copy;
        public readonly double Threshold;
        public Func<T, T, bool> TeleportFn;
        readonly Dictionary<Shape, bool> lerps = new Dictionary<Shape, bool>();
        readonly T[] vals = new T[ReplicaClient<T>.BaselineDepth];
        readonly uint[] ticks = new uint[ReplicaClient<T>.BaselineDepth];

        /// <summary>An interpolator of the message whose generated Shape and Copy are given; a q or fixed value moving by more than threshold is a teleport (0: none).</summary>
        public Interpolator(Shape shape, Action<T, T> copy, double threshold = 0)
        {
            if (!(threshold >= 0)) throw new ArgumentException("interp: teleport threshold " + threshold);
            this.shape = shape; this.copy = copy; Threshold = threshold;
        }

        bool Mark(Shape n)
        {
            bool v;
            if (lerps.TryGetValue(n, out v)) return v;
            lerps[n] = false;
            switch (n.Coding)
            {
                case "q": case "fixed": case "quat": v = true; break;
                case "struct": foreach (var f in n.Fields) v = Mark(f.Node) || v; break;
                case "array": case "slice": case "ptr": v = Mark(n.Elem); break;
            }
            lerps[n] = v;
            return v;
        }

        /// <summary>A new state a fraction t (0..1) of the way from a to b (Go's Lerp); a and b are not changed.</summary>
        public T Lerp(T a, T b, double t)
        {
            t = Math.Min(Math.Max(t, 0), 1);
            var d = new T();
            copy(a, d);
            Walk(shape, d, a, b, t);
            return d;
        }

        // Walk writes into d (a deep copy of a) and returns the new value of a
        // value type.
        object Walk(Shape n, object d, object a, object b, double t)
        {
            if (!Mark(n)) return d;
            switch (n.Coding)
            {
                case "q": case "fixed":
                    if (a is float) { double x = (float)a, y = (float)b; return (float)(x + (y - x) * t); }
                    { double x = (double)a, y = (double)b; return x + (y - x) * t; }
                case "quat": return Slerp(a, b, t);
                case "struct":
                    foreach (var f in n.Fields)
                    {
                        if (!Mark(f.Node)) continue;
                        object nv = Walk(f.Node, f.Info.GetValue(d), f.Info.GetValue(a), f.Info.GetValue(b), t);
                        f.Info.SetValue(d, nv);
                    }
                    return d;
                case "array":
                {
                    var da = (Array)d; var xa = (Array)a; var xb = (Array)b;
                    for (int i = 0; i < xa.Length; i++) da.SetValue(Walk(n.Elem, da.GetValue(i), xa.GetValue(i), xb.GetValue(i), t), i);
                    return d;
                }
                case "slice":
                {
                    var dl = (IList)d; var xa = (IList)a; var xb = (IList)b;
                    if (dl == null || xa == null || xb == null) return d;
                    if (n.Id >= 0)
                    {
                        var idf = n.Elem.Fields[n.Id];
                        var at = new Dictionary<string, object>();
                        foreach (var e in xb) at[Convert.ToString(idf.Info.GetValue(e), System.Globalization.CultureInfo.InvariantCulture)] = e;
                        for (int i = 0; i < xa.Count; i++)
                        {
                            object o;
                            if (at.TryGetValue(Convert.ToString(idf.Info.GetValue(xa[i]), System.Globalization.CultureInfo.InvariantCulture), out o)) dl[i] = Walk(n.Elem, dl[i], xa[i], o, t);
                        }
                        return d;
                    }
                    if (xa.Count == xb.Count) for (int i = 0; i < xa.Count; i++) dl[i] = Walk(n.Elem, dl[i], xa[i], xb[i], t);
                    return d;
                }
                case "ptr":
                    if (a == null || b == null || d == null) return d;
                    return Walk(n.Elem, d, a, b, t);
            }
            return d;
        }

        static double Comp(object q, int i)
        {
            if (q is Quatf) { var v = (Quatf)q; return i == 0 ? v.X : i == 1 ? v.Y : i == 2 ? v.Z : v.W; }
            if (q is Quatd) { var v = (Quatd)q; return i == 0 ? v.X : i == 1 ? v.Y : i == 2 ? v.Z : v.W; }
            return Convert.ToDouble(((Array)q).GetValue(i));
        }

        static object Slerp(object a, object b, double t)
        {
            var p = new double[4]; var q = new double[4];
            double dot = 0;
            for (int i = 0; i < 4; i++) { p[i] = Comp(a, i); q[i] = Comp(b, i); dot += p[i] * q[i]; }
            if (dot < 0) { dot = -dot; for (int i = 0; i < 4; i++) q[i] = -q[i]; }
            double wa = 1 - t, wb = t;
            if (dot < 0.9995)
            {
                double th = Math.Acos(Math.Min(dot, 1)), s = Math.Sin(th);
                wa = Math.Sin((1 - t) * th) / s; wb = Math.Sin(t * th) / s;
            }
            var r = new double[4];
            double norm = 0;
            for (int i = 0; i < 4; i++) { r[i] = wa * p[i] + wb * q[i]; norm += r[i] * r[i]; }
            norm = Math.Sqrt(norm);
            if (norm == 0) return a;
            for (int i = 0; i < 4; i++) r[i] /= norm;
            if (a is Quatf) return new Quatf { X = (float)r[0], Y = (float)r[1], Z = (float)r[2], W = (float)r[3] };
            if (a is Quatd) return new Quatd { X = r[0], Y = r[1], Z = r[2], W = r[3] };
            if (a is float[]) return new float[] { (float)r[0], (float)r[1], (float)r[2], (float)r[3] };
            return r;
        }

        /// <summary>Whether a to b is a teleport.</summary>
        public bool Teleport(T a, T b)
        {
            if (TeleportFn != null) return TeleportFn(a, b);
            return Threshold != 0 && Jump(shape, a, b);
        }

        bool Jump(Shape n, object a, object b)
        {
            if (!Mark(n)) return false;
            switch (n.Coding)
            {
                case "q": case "fixed": return Math.Abs(Convert.ToDouble(b) - Convert.ToDouble(a)) > Threshold;
                case "struct":
                    foreach (var f in n.Fields) if (Jump(f.Node, f.Info.GetValue(a), f.Info.GetValue(b))) return true;
                    return false;
                case "array":
                {
                    var x = (Array)a; var y = (Array)b;
                    for (int i = 0; i < x.Length; i++) if (Jump(n.Elem, x.GetValue(i), y.GetValue(i))) return true;
                    return false;
                }
                case "slice":
                {
                    var x = (IList)a; var y = (IList)b;
                    if (n.Id >= 0 || x == null || y == null || x.Count != y.Count) return false;
                    for (int i = 0; i < x.Count; i++) if (Jump(n.Elem, x[i], y[i])) return true;
                    return false;
                }
                case "ptr": return a != null && b != null && Jump(n.Elem, a, b);
            }
            return false;
        }

        /// <summary>id's state at the render tick from the states rc keeps (a new value, or a kept state when held: read-only); false when rc holds none.</summary>
        public bool Sample(ReplicaClient<T> rc, uint id, double render, out T value, out InterpSample s)
        {
            s = new InterpSample();
            value = null;
            int cnt = rc.States(id, vals, ticks);
            if (cnt == 0) return false;
            int p = -1;
            while (p + 1 < cnt && ticks[p + 1] <= render) p++;
            if (p < 0) { value = vals[0]; s.From = s.To = ticks[0]; s.Held = true; return true; }
            if (p == cnt - 1) { value = vals[p]; s.From = s.To = ticks[p]; s.Held = true; return true; }
            s.From = ticks[p]; s.To = ticks[p + 1]; s.Frac = (render - ticks[p]) / (double)(ticks[p + 1] - ticks[p]);
            if (Teleport(vals[p], vals[p + 1])) { s.Teleport = true; value = vals[p]; return true; }
            value = Lerp(vals[p], vals[p + 1], s.Frac);
            return true;
        }
    }
}
