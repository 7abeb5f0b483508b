// Package bitwire serializes the state of real-time multiplayer games into
// as few bits as possible, fast.
//
// Describe the state with plain Go structs and net struct tags:
//
//	type Player struct {
//		X, Y   float32 `net:"q,min=-512,max=512,prec=0.01"` // 17 bits each
//		Health int     `net:"range,min=0,max=200"`          // 8 bits
//		Alive  bool                                         // 1 bit
//	}
//
// A value travels this pipeline:
//
//	net tag ──tags.go──▶ spec ──compile.go──▶ plan (one node a field, cached per type by For)
//	plan ──ops.go, flat.go──▶ package fields (one coding a file) ──▶ package bits (LSB-first stream)
//	plan + baseline ──delta.go, deltaflat.go, entity.go, maps.go──▶ changed bits, then codings
//	plan ──schema.go──▶ Schema (JSON) ──▶ Fingerprint, Layout, package gen (TypeScript, C#)
//	Schema + recorded pairs ──model_train.go──▶ Model (prefix codes) ──model_delta.go──▶ deltas
//
// For compiles a type once: every tag mistake is reported there, never at
// encode time. Marshal, Append, Unmarshal, Encode and Decode then walk the
// plan over the value's memory through offsets, with no reflection, and
// allocate nothing when the caller reuses its buffers. MarshalDelta and
// UnmarshalDelta code a value against a baseline the receiver holds; an
// unchanged field costs one bit. Unions (NewUnion) tell message types apart
// by a tag. The codings live in package fields and the bit stream in package
// bits, both usable by hand-written code; packets, baselines and
// acknowledgements live above this package, in packages snapshot and
// replicate. The exact bits of every coding are in docs/wire-format.md.
package bitwire
