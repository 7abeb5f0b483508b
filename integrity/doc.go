// Package integrity is the packet protection that package snapshot and
// package replicate share as siblings: the integrity modes and their
// trailers (Guard: none, a CRC32C or a truncated HMAC-SHA256), the ack
// tokens that sealing and opening yield, and the acceptance rule of a
// stream's ticks or sequence numbers (TickWindow).
//
// It knows nothing of what a packet carries: a packet is bytes to seal or
// open, a tick is a uint32. It depends only on the standard library and
// package bits (whose ErrUnexpectedEnd a packet shorter than its trailer
// returns), so that any packet stream built on bitwire can use it.
//
// docs/security.md weighs the modes and states what the TickWindow bounds
// against forged packets when there is no MAC.
package integrity

import "errors"

// The errors of this package, tested with errors.Is; they arrive wrapped
// with details. Package snapshot exports the same values under the same
// names.
var (
	// ErrIntegrity: a packet's checksum or MAC trailer does not match its
	// contents: corrupted, forged, or sealed with another secret.
	ErrIntegrity = errors.New("integrity: check failed")
	// ErrStaleTick: a tick not newer than the newest a TickWindow accepted
	// (a late or duplicated packet).
	ErrStaleTick = errors.New("integrity: stale or duplicate tick")
	// ErrFutureTick: a tick more than the window's MaxAhead past the newest
	// it accepted.
	ErrFutureTick = errors.New("integrity: tick too far ahead")
	// ErrBadAck: an acknowledgement whose ack token does not match a packet
	// sent (a spoofed ack, or the ack of a forged or corrupted packet);
	// the sender ignores it.
	ErrBadAck = errors.New("integrity: ack does not match a packet sent")
)
