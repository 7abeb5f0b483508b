// ---- plans ----
// The plan nodes the generated code describes each type with (from the Go
// schema), the caches the walkers keep on them, and the size bounds that
// lengths read from input are checked against.

import { BitwireError } from "./errors.js";
import { Quantizer, QuatCoder, bitsRequired, bitsRequiredBig } from "./codings.js";
import { PlanModel } from "./model.js";
import { Decoder } from "./decode.js";
import { DeltaDecoder } from "./delta.js";

/**
 * What any node may carry, all optional: the options several codings share, the
 * caches the walkers keep, and (so that code walking any node can look without
 * narrowing first) the parameters each kind below makes required.
 */
export interface NodeBase {
  /** integers: held as bigint (64-bit types the coding does not bound within 2^53) */
  big?: boolean;
  /** integers: the Go type is signed */
  signed?: boolean;
  /** integers: the Go type's width in bits (8, 16, 32, 64) */
  size?: number;
  /** floats: the Go type is float32 */
  f32?: boolean;
  clamp?: boolean;
  /** q, range, bits, quat: coded against its prediction from two baselines in predicted deltas (runtime/predict.ts) */
  pred?: boolean;
  /** string, bytes, slice, map: the declared limit (0 or absent: none) */
  maxlen?: number;
  /** dmin/dmax: the window in steps; the plain fixed coding's width, the first difference's parameter and the later ones' unary limit (wire version 4) */
  dlo?: number; dhi?: number; dbits?: number; dk?: number; du?: number;
  /** the parameters of the kinds below */
  n?: number; min?: number | bigint; max?: number | bigint; steps?: number; step?: number; zero?: boolean; kmin?: number;
  prec?: number; names?: string[]; t?: StructPlan; composite?: boolean; count?: number; e?: Node; key?: Node; id?: number; emin?: number;
  /** runtime caches */
  _c?: number; _p?: boolean; _q?: Quantizer; _quat?: QuatCoder; _emin?: number; _w?: number; _mr?: [bigint, bigint];
}
export interface BoolNode extends NodeBase { k: "bool"; }
/** bits=N (n: N), varint (n: its group size G), bitlen (n: its prefix width W) */
export interface IntNode extends NodeBase { k: "bits" | "varint" | "bitlen"; n: number; size: number; }
/** range: its bounds, bigints where the node is big */
export interface RangeNode extends NodeBase { k: "range"; min: number | bigint; max: number | bigint; size: number; }
/** q: bounds, step count and grid spacing; a grid anchored at zero has index i at (kmin + i)·step clamped to [min, max] */
export interface QNode extends NodeBase { k: "q"; min: number; max: number; steps: number; step: number; zero?: boolean; kmin?: number; }
export interface FloatNode extends NodeBase { k: "float"; }
export interface FixedNode extends NodeBase { k: "fixed"; prec: number; }
export interface TextNode extends NodeBase { k: "string" | "bytes"; }
/** quat: n bits a component; names: the properties holding x, y, z, w on a struct (absent: a 4-element array) */
export interface QuatNode extends NodeBase { k: "quat"; n: number; names?: string[]; t?: StructPlan; }
export interface TimeNode extends NodeBase { k: "time"; }
/** struct: its plan; composite: a changed struct is sent in full */
export interface StructNode extends NodeBase { k: "struct"; t: StructPlan; composite?: boolean; }
export interface ArrayNode extends NodeBase { k: "array"; count: number; e: Node; }

/**
 * whether a changed array's delta goes element by element (wire-format.md, "Windows"): its
 * elements are scalars with a window, or arrays of them; any other changed array is sent in full
 */
export /* internal */ function byElem(n: ArrayNode): boolean {
  const e = n.e;
  return e.dlo !== undefined || (e.k === "array" && byElem(e));
}
/**
 * slice: its element; id: for a slice of structs, the index of the id field (an entity set in
 * deltas); emin: the fewest bits an element takes, from the schema (bounds lengths read from input)
 */
export interface SliceNode extends NodeBase { k: "slice"; e: Node; id?: number; emin?: number; }
export interface PtrNode extends NodeBase { k: "ptr"; e: Node; }
/** map: key and value; emin: the fewest bits an entry takes */
export interface MapNode extends NodeBase { k: "map"; key: Node; e: Node; emin?: number; }
/** A leaf coding or container, as the generated code describes it (from the schema); k tells which. */
export type Node = BoolNode | IntNode | RangeNode | QNode | FloatNode | FixedNode | TextNode | QuatNode | TimeNode | StructNode | ArrayNode | SliceNode | PtrNode | MapNode;
/** the nodes of a coding named k */
export type NodeOf<K extends Node["k"]> = Extract<Node, { k: K }>;
/** fields of one struct sharing a bitlen group name */
export interface Group { members: number[]; width: number; signed: boolean; }
export interface Field { name: string; node: Node; grp?: Group; }
export interface StructPlan {
  name: string; fields: Field[]; make: () => any;
  /** a message type's decoding limits, from its schema (absent: Go's defaults, 100 and 2^20) */
  limits?: { maxDepth: number; maxLen: number };
  /** a message type whose deltas use a trained model: the model (wire-format.md, "Models") */
  model?: PlanModel;
  /**
   * the struct's full decoding, field by field, as Decoder.struct would walk it (which checks
   * the depth around it): written by the generator (for structs without bitlen groups) so
   * that each field is a named property store in a function of its own type rather than a
   * store by name shared by every type; a read function calls those of its struct fields by
   * name (where V8 can inline them), checking the depth as Decoder.struct would
   */
  read?: (d: Decoder) => any;
  /**
   * the struct's delta without a model, field by field, as DeltaDecoder.structDelta would walk it
   * (skip: an entity's id field, which has no changed bit): written by the generator, for the
   * same reason as read
   */
  readDelta?: (d: DeltaDecoder, b: any, skip: number) => any;
}

export /* internal */ const MAX_DEPTH = 100;
export /* internal */ const MAX_LEN = 1 << 20;

export /* internal */ const C_OTHER = 0, C_Q = 1, C_BOOL = 2, C_STRUCT = 3;
export /* internal */ function code(n: Node): number { return n._c = n.k === "q" ? C_Q : n.k === "bool" ? C_BOOL : n.k === "struct" ? C_STRUCT : C_OTHER; }
export /* internal */ function q(n: QNode): Quantizer { return n._q ??= new Quantizer(n.min, n.max, n.steps, n.step, n.zero, n.kmin); }
export /* internal */ function qc(n: QuatNode): QuatCoder { return n._quat ??= new QuatCoder(n.n); }
/** the quantizer of a q node, built once: what the generated read functions hold for Decoder.qValue */
export function quantizer(n: Node): Quantizer { return q(n as QNode); }
/** the coder of a quaternion node, built once: what the generated read functions hold for Decoder.quatValue */
export function quatCoder(n: Node): QuatCoder { return qc(n as QuatNode); }
export /* internal */ function rangeWidth(n: RangeNode): number {
  return n._w ??= typeof n.max === "bigint" || typeof n.min === "bigint" ? bitsRequiredBig(BigInt.asUintN(64, BigInt(n.max) - BigInt(n.min)))
    : bitsRequired(n.max - n.min);
}
export /* internal */ function isSigned(n: Node): boolean { return n.k === "fixed" || (n.k === "bitlen" && !!n.signed); }
export /* internal */ function groupable(n: Node): n is IntNode | FixedNode { return n.k === "bitlen" || n.k === "fixed"; }
/** a member of a bitlen group, as the schema promises (a bitlen or fixed value) */
export /* internal */ function groupMember(n: Node): IntNode | FixedNode {
  if (groupable(n)) return n;
  throw new BitwireError("ErrMalformed", `a ${n.k} value in a bitlen group`);
}
/** the prefix width W of a bitlen value, 6 for a fixed one's step count (the codings a group shares a length of) */
export /* internal */ function prefixWidth(n: Node): number {
  if (n.k === "fixed") return 6;
  if (n.k === "bitlen") return n.n;
  throw new BitwireError("ErrMalformed", `a ${n.k} value has no bit length prefix`);
}
function lenBits(maxlen: number | undefined): number { return maxlen ? bitsRequired(maxlen) : 6; }

/** the fewest bits one value of n takes (a bound for lengths read from input) */
export function minBits(n: Node, seen: Set<StructPlan> = new Set()): number {
  if (n._emin !== undefined) return n._emin;
  let b = 0;
  switch (n.k) {
    case "bool": b = 1; break;
    case "bits": b = n.n; break;
    case "range": b = rangeWidth(n); break;
    case "q": b = q(n).bits; break;
    case "float": b = n.f32 ? 32 : 64; break;
    case "fixed": b = 7; break;
    case "varint": b = n.n + 1; break;
    case "bitlen": b = n.n + 1; break;
    case "string": case "bytes": case "slice": case "map": b = lenBits(n.maxlen); break;
    case "quat": b = 2 + 3 * n.n; break;
    case "time": b = 37; break;
    case "ptr": b = 1; break;
    case "array": b = n.count * minBits(n.e, seen); break;
    case "struct": {
      const t = n.t;
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
export /* internal */ function emin(n: SliceNode | MapNode): number {
  if (n.emin !== undefined) return n.emin;
  if (n.k === "map") return n.emin = minBits(n.key) + minBits(n.e);
  return n.emin = groupable(n.e) ? 1 : minBits(n.e);
}

export /* internal */ function wrap(e: unknown, seg: string): unknown {
  if (e instanceof BitwireError) e.within(seg);
  return e;
}
