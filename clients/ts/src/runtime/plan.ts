// ---- plans ----
// The plan nodes the generated code describes each type with (from the Go
// schema), the caches the walkers keep on them, and the size bounds that
// lengths read from input are checked against.

import { BitwireError } from "./errors.js";
import { Quantizer, QuatCoder, bitsRequired, bitsRequiredBig } from "./codings.js";
import { PlanModel } from "./model.js";

/** A leaf coding or container, as the generated code describes it (from the schema). */
export interface Node {
  /** bool bits range q float fixed varint bitlen string bytes quat time struct array slice ptr map */
  k: string;
  /** integers: held as bigint (64-bit types the coding does not bound within 2^53) */
  big?: boolean;
  /** integers: the Go type is signed */
  signed?: boolean;
  /** integers: the Go type's width in bits (8, 16, 32, 64) */
  size?: number;
  /** floats: the Go type is float32 */
  f32?: boolean;
  /** bits: width; varint: group size; bitlen: prefix width W; quat: bits a component */
  n?: number;
  /** range: bounds; q: bounds, step count and grid spacing */
  min?: number | bigint; max?: number | bigint; steps?: number; step?: number;
  /** q: the grid is anchored at zero (index i is (kmin + i)·step clamped to [min, max]) */
  zero?: boolean; kmin?: number;
  clamp?: boolean;
  /** fixed: the precision */
  prec?: number;
  /** string, bytes, slice, map: the declared limit (0 or absent: none) */
  maxlen?: number;
  /** array, slice, ptr: the element; map: the value */
  e?: Node;
  /** map: the key */
  key?: Node;
  /** array: the length */
  count?: number;
  /** struct: its plan */
  t?: StructPlan;
  /** slice of structs: the index of the id field (an entity set in deltas) */
  id?: number;
  /** quat on a struct: the properties holding x, y, z, w (absent: a 4-element array) */
  names?: string[];
  /** dmin/dmax: the window in steps; the plain fixed coding's width, the first difference's parameter and the later ones' unary limit (wire version 4) */
  dlo?: number; dhi?: number; dbits?: number; dk?: number; du?: number;
  /** composite: a changed struct is sent in full */
  composite?: boolean;
  /** slice, map: the fewest bits an element (entry) takes, from the schema; bounds lengths read from input */
  emin?: number;
  /** runtime caches */
  _c?: number; _q?: Quantizer; _quat?: QuatCoder; _emin?: number; _w?: number; _mr?: [bigint, bigint];
}
/** fields of one struct sharing a bitlen group name */
export interface Group { members: number[]; width: number; signed: boolean; }
export interface Field { name: string; node: Node; grp?: Group; }
export interface StructPlan {
  name: string; fields: Field[]; make: () => any;
  /** a message type's decoding limits, from its schema (absent: Go's defaults, 100 and 2^20) */
  limits?: { maxDepth: number; maxLen: number };
  /** a message type whose deltas use a trained model: the model (wire-format.md, "Models") */
  model?: PlanModel;
}

export /* internal */ const MAX_DEPTH = 100;
export /* internal */ const MAX_LEN = 1 << 20;

export /* internal */ const C_OTHER = 0, C_Q = 1, C_BOOL = 2, C_STRUCT = 3;
export /* internal */ function code(n: Node): number { return n._c = n.k === "q" ? C_Q : n.k === "bool" ? C_BOOL : n.k === "struct" ? C_STRUCT : C_OTHER; }
export /* internal */ function q(n: Node): Quantizer { return n._q ??= new Quantizer(n.min as number, n.max as number, n.steps as number, n.step, n.zero, n.kmin); }
export /* internal */ function qc(n: Node): QuatCoder { return n._quat ??= new QuatCoder(n.n as number); }
export /* internal */ function rangeWidth(n: Node): number {
  return n._w ??= n.big ? bitsRequiredBig(BigInt.asUintN(64, (n.max as bigint) - (n.min as bigint)))
    : bitsRequired((n.max as number) - (n.min as number));
}
export /* internal */ function isSigned(n: Node): boolean { return n.k === "fixed" || (n.k === "bitlen" && !!n.signed); }
export /* internal */ function groupable(n: Node): boolean { return n.k === "bitlen" || n.k === "fixed"; }
function lenBits(maxlen: number | undefined): number { return maxlen ? bitsRequired(maxlen) : 6; }

/** the fewest bits one value of n takes (a bound for lengths read from input) */
export function minBits(n: Node, seen: Set<StructPlan> = new Set()): number {
  if (n._emin !== undefined) return n._emin;
  let b = 0;
  switch (n.k) {
    case "bool": b = 1; break;
    case "bits": b = n.n as number; break;
    case "range": b = rangeWidth(n); break;
    case "q": b = q(n).bits; break;
    case "float": b = n.f32 ? 32 : 64; break;
    case "fixed": b = 7; break;
    case "varint": b = (n.n as number) + 1; break;
    case "bitlen": b = (n.n as number) + 1; break;
    case "string": case "bytes": case "slice": case "map": b = lenBits(n.maxlen); break;
    case "quat": b = 2 + 3 * (n.n as number); break;
    case "time": b = 37; break;
    case "ptr": b = 1; break;
    case "array": b = (n.count as number) * minBits(n.e as Node, seen); break;
    case "struct": {
      const t = n.t as StructPlan;
      if (seen.has(t)) return 0;
      seen.add(t);
      for (const f of t.fields) b += minBits(f.node, seen);
      seen.delete(t);
      break;
    }
  }
  n._emin = b;
  return b;
}

/** the fewest bits of one element of a slice (entry of a map): the schema's, else computed */
export /* internal */ function emin(n: Node): number {
  if (n.emin !== undefined) return n.emin;
  if (n.k === "map") return n.emin = minBits(n.key as Node) + minBits(n.e as Node);
  return n.emin = groupable(n.e as Node) ? 1 : minBits(n.e as Node);
}

export /* internal */ function wrap(e: unknown, seg: string): unknown {
  if (e instanceof BitwireError) e.within(seg);
  return e;
}
