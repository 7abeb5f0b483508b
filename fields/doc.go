// Package fields holds bitwire's value codings: quantized floats, ranged and
// fixed-width integers, varints, adaptive bit-length integers, fixed-point
// decimals, smallest-three quaternions, raw floats, lengths, strings and
// bytes; and the codings of deltas: delta windows, relative quaternions
// (QuatDeltaState) and the Rice code with bounded escapes whose parameter
// adapts within one message (RiceMean).
//
// Each coding is usable on its own by hand-written code that drives a
// bits.Writer and a bits.Reader directly; the root package bitwire builds its
// struct plans from the same functions. For every coding the writer and the
// reader sit next to each other in the source, because the format lives only
// in the code: a one-bit mismatch between them turns the rest of a packet
// into garbage without any error.
//
// The exact bits of every coding are specified in docs/wire-format.md.
//
// Conventions shared by all codings:
//
//   - Writers validate first and write nothing when they return an error, so
//     a caller can give up on a value without truncating the stream.
//   - Readers treat input as hostile: they never panic, never loop without a
//     bound, and check every length against what the input can hold before
//     allocating. Reading past the end is bits.ErrUnexpectedEnd; other bad
//     input is one of the errors in this package.
//   - Where a coding could spell one value in two ways, readers reject every
//     spelling but the one the writer produces (ErrMalformed), so that
//     decoding and re-encoding any accepted input gives the same bits.
//   - No Write or Read allocates, apart from ReadString (which returns a new
//     string) and ReadBytes when dst is too small.
package fields
