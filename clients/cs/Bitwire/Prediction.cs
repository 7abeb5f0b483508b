// Prediction from two baselines (docs/wire-format.md, "Prediction from two
// baselines"): the key a value tagged pred is predicted at, from its key
// in the newer baseline (k1) and in the older one (k0): k1 + (k1 - k0),
// clamped to the field's keys lo..hi, computed without overflow. A key
// outside lo..hi on either side (which no decoded value has) is not
// predicted, as in Go. A quaternion is predicted at the rotation from the
// older baseline to the newer applied again (Quat). The generated Predict
// methods call these.
using System;

namespace Bitwire
{
    public static class Prediction
    {
        [ThreadStatic] static int[] p0, p1;
        [ThreadStatic] static double[] r0, r1;

        /// <summary>The prediction of a quaternion from its value o in the older baseline and b in the newer:
        /// 2(r0·r1)r1 − r0 of their unpacked packings r0, r1, in doubles with each operation rounded alone, then
        /// packed and unpacked into r. False (r untouched) when either does not pack, which no decoded value
        /// is: the value is not predicted.</summary>
        public static bool Quat(QuatCoder c, double ox, double oy, double oz, double ow, double bx, double by, double bz, double bw, double[] r)
        {
            if (p0 == null) { p0 = new int[4]; p1 = new int[4]; r0 = new double[4]; r1 = new double[4]; }
            try { c.Pack(ox, oy, oz, ow, p0); c.Pack(bx, by, bz, bw, p1); }
            catch (ErrInvalidValue) { return false; }
            c.Unpack(p0, r0); c.Unpack(p1, r1);
            double t2 = 2 * ((double)((double)((double)(r0[0] * r1[0]) + (double)(r0[1] * r1[1])) + (double)(r0[2] * r1[2])) + (double)(r0[3] * r1[3]));
            c.Pack((double)(t2 * r1[0]) - r0[0], (double)(t2 * r1[1]) - r0[1], (double)(t2 * r1[2]) - r0[2], (double)(t2 * r1[3]) - r0[3], p0);
            c.Unpack(p0, r);
            return true;
        }

        public static long Signed(long k1, long k0, long lo, long hi)
        {
            if (k1 < lo || k1 > hi || k0 < lo || k0 > hi) return k1;
            if (k1 >= k0)
            {
                ulong d = (ulong)k1 - (ulong)k0, room = (ulong)hi - (ulong)k1;
                return d > room ? hi : (long)((ulong)k1 + d);
            }
            ulong dn = (ulong)k0 - (ulong)k1, roomDn = (ulong)k1 - (ulong)lo;
            return dn > roomDn ? lo : (long)((ulong)k1 - dn);
        }
        public static ulong Unsigned(ulong k1, ulong k0, ulong lo, ulong hi)
        {
            if (k1 < lo || k1 > hi || k0 < lo || k0 > hi) return k1;
            if (k1 >= k0) return k1 - k0 > hi - k1 ? hi : k1 + (k1 - k0);
            return k0 - k1 > k1 - lo ? lo : k1 - (k0 - k1);
        }
    }
}
