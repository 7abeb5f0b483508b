// Prediction from two baselines (docs/wire-format.md, "Prediction from two
// baselines"): the key a value tagged pred is predicted at, from its key
// in the newer baseline (k1) and in the older one (k0): k1 + (k1 - k0),
// clamped to the field's keys lo..hi, computed without overflow. A key
// outside lo..hi on either side (which no decoded value has) is not
// predicted, as in Go. The generated Predict methods call these.
namespace Bitwire
{
    public static class Prediction
    {
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
