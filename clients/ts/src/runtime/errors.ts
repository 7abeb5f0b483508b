// The runtime of bitwire's generated TypeScript clients: the LSB-first bit
// stream, every value coding of docs/wire-format.md, and a plan walker that
// decodes, encodes, applies deltas to and quantizes messages described by a
// plan (the generated code holds one per type, built from the Go schema).
// ES2020, strict, no dependencies. Generated code imports this one file
// (bitwire.ts); it is bundled from the parts in runtime/, one a concern,
// by `go generate ./gen`.
//
// Numbers: integers of Go types of 32 bits or fewer are `number`; 64-bit
// integers are `bigint`, except where the coding bounds them within
// ±(2^53-1) (`range` with both bounds inside, `bits=N` with N <= 53), where
// they are `number` (node.big tells which). Floats are `number`; float32
// fields hold the float32 value (Math.fround), so they compare exactly with
// Go's. NaN payloads of raw floats are not kept (JavaScript has one NaN).

// ---- errors, named like Go's sentinels ----

import { trailing } from "./message.js";
/** Every error the runtime throws. path is the field path ("World.Crates[3].Pos.X"). */
export class BitwireError extends Error {
  path: string;
  detail: string;
  constructor(sentinel: string, detail: string, path = "") {
    super("");
    this.name = sentinel;
    this.detail = detail;
    this.path = path;
    this.message = this.render();
  }
  render(): string {
    return (this.path ? this.path + ": " : "") + "bitwire: " + this.detail;
  }
  /** prepend a path segment (a field name, or "[i]") as the error unwinds */
  within(seg: string): this {
    this.path = this.path === "" ? seg : seg + (this.path.startsWith("[") ? "" : ".") + this.path;
    this.message = this.render();
    return this;
  }
}
export class ErrUnexpectedEnd extends BitwireError { constructor(d = "unexpected end of input") { super("ErrUnexpectedEnd", d); } }
export class ErrOutOfRange extends BitwireError { constructor(d = "value out of range") { super("ErrOutOfRange", d); } }
export class ErrInvalidValue extends BitwireError { constructor(d = "invalid value") { super("ErrInvalidValue", d); } }
export class ErrTooLong extends BitwireError { constructor(d = "too long") { super("ErrTooLong", d); } }
export class ErrTrailingData extends BitwireError { constructor(d = "trailing data") { super("ErrTrailingData", d); } }
export class ErrMalformed extends BitwireError { constructor(d = "malformed input") { super("ErrMalformed", d); } }
export class ErrUnknownTag extends BitwireError { constructor(d = "unknown union tag") { super("ErrUnknownTag", d); } }
export class ErrBadMagic extends BitwireError { constructor(d = "bad magic") { super("ErrBadMagic", d); } }
export class ErrProtocolMismatch extends BitwireError { constructor(d = "protocol mismatch") { super("ErrProtocolMismatch", d); } }
export class ErrStaleTick extends BitwireError { constructor(d = "stale tick") { super("ErrStaleTick", d); } }
export class ErrNoBaseline extends BitwireError { constructor(d = "no baseline") { super("ErrNoBaseline", d); } }
