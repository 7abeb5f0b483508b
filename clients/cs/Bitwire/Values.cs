// The runtime's value types that generated classes hold: Go's time.Time and
// the four-component quaternions.

namespace Bitwire
{
    /// <summary>time.Time: Unix seconds and nanoseconds (UTC).</summary>
    public struct Time
    {
        public long Sec; public int Nsec;
        public Time(long sec, int nsec) { Sec = sec; Nsec = nsec; }
        /// <summary>Go's zero time, January 1 of year 1, UTC.</summary>
        public static readonly Time Zero = new Time(-62135596800L, 0);
    }

    /// <summary>A quaternion held in a struct of four float32 fields X, Y, Z, W.</summary>
    public struct Quatf { public float X, Y, Z, W; }
    /// <summary>A quaternion held in a struct of four float64 fields X, Y, Z, W.</summary>
    public struct Quatd { public double X, Y, Z, W; }
}
