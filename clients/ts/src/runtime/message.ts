// ---- whole messages ----
// The entry points the generated codecs call: decode, encode, deltas and
// quantize of whole messages, and tagged unions.

import { BitwireError, ErrTrailingData, ErrUnknownTag } from "./errors.js";
import { BitReader, BitWriter } from "./stream.js";
import { bitsRequired } from "./codings.js";
import { StructPlan, wrap } from "./plan.js";
import { Decoder } from "./decode.js";
import { Encoder, NEED_SIGN } from "./encode.js";
import { modelOf } from "./model.js";
import { DeltaDecoder } from "./delta.js";
import { DeltaEncoder } from "./deltaenc.js";
import { predictStruct, predicts } from "./predict.js";

export /* internal */ function checkPadding(r: BitReader): boolean {
  const rem = r.remaining();
  if (rem >= 8) return false;
  return r.read(rem) === 0;
}
export /* internal */ function trailing(r: BitReader, t: StructPlan): void {
  if (!checkPadding(r)) throw new ErrTrailingData(`${r.remaining()} bits left`).within(t.name);
}
function named(e: unknown, t: StructPlan): unknown { return wrap(e, t.name); }

/** decodes one message from a shared stream (no padding check) */
export function decodeFrom<T>(t: StructPlan, r: BitReader): T {
  const d = new Decoder(r, t);
  let v: T;
  try { v = d.struct(t); } catch (e) { throw named(e, t); }
  d.end(t);
  return v;
}
/** decodes one whole message (Go's Unmarshal): trailing bytes or non-zero padding are ErrTrailingData */
export function decode<T>(t: StructPlan, data: Uint8Array): T {
  const r = new BitReader(data);
  const v = decodeFrom<T>(t, r);
  trailing(r, t);
  return v;
}
/** decodes a delta against base from a shared stream (Go's DecodeDelta) */
export function decodeDeltaFrom<T>(t: StructPlan, r: BitReader, base: T): T {
  const d = new DeltaDecoder(r, t);
  let v: T;
  try {
    d.m = modelOf(t);
    v = d.structDelta(t, base, -1);
  } catch (e) { throw named(e, t); }
  d.end(t);
  return v;
}
/** applies a whole delta message to base (Go's UnmarshalDelta); base is not changed */
export function decodeDelta<T>(t: StructPlan, data: Uint8Array, base: T): T {
  const r = new BitReader(data);
  const v = decodeDeltaFrom<T>(t, r, base);
  trailing(r, t);
  return v;
}
/**
 * decodes a delta coded from two baselines, older and base, from a shared stream (Go's
 * DecodePredicted): the delta against their prediction (wire-format.md, "Prediction from two
 * baselines"); with older null, or no value tagged pred, decodeDeltaFrom against base
 */
export function decodePredictedFrom<T>(t: StructPlan, r: BitReader, older: T | null, base: T): T {
  return decodeDeltaFrom<T>(t, r, older !== null && predicts(t) ? predictStruct(t, base, older) : base);
}
/** applies a whole predicted delta message to base and older (Go's UnmarshalPredicted); neither is changed */
export function decodePredicted<T>(t: StructPlan, data: Uint8Array, older: T | null, base: T): T {
  const r = new BitReader(data);
  const v = decodePredictedFrom<T>(t, r, older, base);
  trailing(r, t);
  return v;
}
/** encodes one message onto a shared stream (Go's Encode) */
export function encodeTo<T>(t: StructPlan, w: BitWriter, v: T): void {
  const start = w.pos;
  const e = new Encoder(w, t);
  try {
    e.begin(false);
    try {
      e.struct(t, v);
    } catch (x) {
      if (x !== NEED_SIGN) throw x;
      w.truncate(start);
      e.begin(true);
      e.struct(t, v);
    }
  } catch (x) {
    w.truncate(start);
    throw named(x, t);
  }
}
/**
 * encodes the delta from base to cur onto a shared stream (Go's EncodeDelta): what a receiver
 * holding base needs to rebuild cur, bit for bit as Go writes it. A message with a trained
 * model is ErrUnsupportedType (its deltas are Go's only). On error w is left as it was.
 */
export function encodeDeltaTo<T>(t: StructPlan, w: BitWriter, base: T, cur: T): void {
  const start = w.pos;
  const e = new DeltaEncoder(w, t);
  try {
    if (t.model) throw new BitwireError("ErrUnsupportedType", "the deltas of a message with a model: not delta-coded by this runtime");
    e.begin(false);
    try {
      e.structDelta(t, base, cur, -1);
    } catch (x) {
      // a negative bitlen or fixed value written in full: the message again, with the sign flag set
      if (x !== NEED_SIGN) throw x;
      w.truncate(start);
      e.begin(true);
      e.structDelta(t, base, cur, -1);
    }
  } catch (x) {
    w.truncate(start);
    throw named(x, t);
  }
}
/** the delta from base to cur as a whole message (Go's MarshalDelta), padded to a byte */
export function encodeDelta<T>(t: StructPlan, base: T, cur: T): Uint8Array {
  const w = new BitWriter();
  encodeDeltaTo(t, w, base, cur);
  return w.bytes().slice();
}
/** encodes one whole message (Go's Marshal), padded to a byte */
export function encode<T>(t: StructPlan, v: T): Uint8Array {
  const w = new BitWriter();
  encodeTo(t, w, v);
  return w.bytes().slice();
}
/** what a receiver decodes for v: the server's quantization, for client-side prediction */
export function quantize<T>(t: StructPlan, v: T): T { return decode<T>(t, encode(t, v)); }

// ---- unions ----

/** a union of variant types: the variant's index in BitsRequired(n-1) bits, then the message */
export class Union {
  variants: StructPlan[];
  bits: number;
  constructor(variants: StructPlan[]) { this.variants = variants; this.bits = bitsRequired(variants.length - 1); }
  /** the variant index and the value of the next tagged message on r */
  decodeFrom(r: BitReader): [number, any] {
    const i = r.read(this.bits);
    if (i >= this.variants.length) throw new ErrUnknownTag(`union tag ${i} of ${this.variants.length} variants`);
    return [i, decodeFrom(this.variants[i], r)];
  }
  encodeTo(w: BitWriter, variant: number, v: any): void {
    if (!(variant >= 0 && variant < this.variants.length)) throw new ErrUnknownTag(`union tag ${variant}`);
    const start = w.pos;
    w.write(variant, this.bits);
    try { encodeTo(this.variants[variant], w, v); } catch (e) { w.truncate(start); throw e; }
  }
}
