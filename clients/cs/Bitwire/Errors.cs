// The errors of bitwire's C# runtime, named like Go's sentinels: what a
// caller catches (BitwireException, with the field path) and tests by Code.
using System;

namespace Bitwire
{
    /// <summary>Every error of the runtime. Path is the field path ("World.Crates[3].Pos.X").</summary>
    public class BitwireException : Exception
    {
        public readonly string Sentinel;
        public string Path = "";
        readonly string detail;
        public BitwireException(string sentinel, string detail) : base(detail) { Sentinel = sentinel; this.detail = detail; }
        public override string Message { get { return (Path.Length > 0 ? Path + ": " : "") + "bitwire: " + detail + " (" + Sentinel + ")"; } }
        /// <summary>Prepends a path segment (a field name or "[i]") as the error unwinds.</summary>
        public BitwireException Within(string seg)
        {
            Path = Path.Length == 0 ? seg : seg + (Path.StartsWith("[") ? "" : ".") + Path;
            return this;
        }
    }
    public class ErrUnexpectedEnd : BitwireException { public ErrUnexpectedEnd(string d = "unexpected end of input") : base("ErrUnexpectedEnd", d) { } }
    public class ErrOutOfRange : BitwireException { public ErrOutOfRange(string d = "value out of range") : base("ErrOutOfRange", d) { } }
    public class ErrInvalidValue : BitwireException { public ErrInvalidValue(string d = "invalid value") : base("ErrInvalidValue", d) { } }
    public class ErrTooLong : BitwireException { public ErrTooLong(string d = "too long") : base("ErrTooLong", d) { } }
    public class ErrTrailingData : BitwireException { public ErrTrailingData(string d = "trailing data") : base("ErrTrailingData", d) { } }
    public class ErrMalformed : BitwireException { public ErrMalformed(string d = "malformed input") : base("ErrMalformed", d) { } }
    public class ErrUnknownTag : BitwireException { public ErrUnknownTag(string d = "unknown union tag") : base("ErrUnknownTag", d) { } }
    public class ErrBadMagic : BitwireException { public ErrBadMagic(string d = "bad magic") : base("ErrBadMagic", d) { } }
    public class ErrProtocolMismatch : BitwireException { public ErrProtocolMismatch(string d = "protocol mismatch") : base("ErrProtocolMismatch", d) { } }
    public class ErrStaleTick : BitwireException { public ErrStaleTick(string d = "stale tick") : base("ErrStaleTick", d) { } }
    public class ErrNoBaseline : BitwireException { public ErrNoBaseline(string d = "no baseline") : base("ErrNoBaseline", d) { } }

    /// <summary>Code lengths that are no prefix code of a model's table (Go: a model file refused with ErrModel).</summary>
    public class ErrModel : BitwireException { public ErrModel(string d = "bad model") : base("ErrModel", d) { } }

    // snapshot packets
    public class ErrIntegrity : BitwireException { public ErrIntegrity(string d = "integrity trailer does not match") : base("ErrIntegrity", d) { } }
    public class ErrFutureTick : BitwireException { public ErrFutureTick(string d = "tick too far ahead") : base("ErrFutureTick", d) { } }
    public class ErrStateMismatch : BitwireException { public ErrStateMismatch(string d = "state hash mismatch") : base("ErrStateMismatch", d) { } }

    // replication packets
    public class ErrStale : BitwireException { public ErrStale(string d = "stale or duplicate packet") : base("ErrStale", d) { } }
    public class ErrFuture : BitwireException { public ErrFuture(string d = "sequence number too far ahead") : base("ErrFuture", d) { } }
    public class ErrTooManyEntities : BitwireException { public ErrTooManyEntities(string d = "too many entities") : base("ErrTooManyEntities", d) { } }
}
