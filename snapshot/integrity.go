package snapshot

import "github.com/bitwire/bitwire/integrity"

// The integrity modes, trailers and the tick window live in package
// integrity, which package replicate uses too; these names keep the
// snapshot API (WithChecksum, WithMAC, Receiver, the package examples)
// reading as one package.

// Mode is integrity.Mode: the protection of a stream's packets.
type Mode = integrity.Mode

// The integrity modes (see integrity.Mode; docs/security.md weighs them).
const (
	// ModeNone is integrity.ModeNone: no trailer.
	ModeNone = integrity.ModeNone
	// ModeChecksum is integrity.ModeChecksum: a CRC32C trailer.
	ModeChecksum = integrity.ModeChecksum
	// ModeMAC is integrity.ModeMAC: a truncated HMAC-SHA256 trailer.
	ModeMAC = integrity.ModeMAC
)

// Trailer sizes and the shortest MAC key (see package integrity).
const (
	// ChecksumSize is integrity.ChecksumSize, the CRC32C trailer's bytes.
	ChecksumSize = integrity.ChecksumSize
	// MACSize is integrity.MACSize, the MAC trailer's bytes.
	MACSize = integrity.MACSize
	// MinKeySize is integrity.MinKeySize, the shortest secret WithMAC
	// accepts.
	MinKeySize = integrity.MinKeySize
)

// Integrity is integrity.Guard: it seals packets with a mode's trailer,
// opens them, and yields their ack tokens.
type Integrity = integrity.Guard

// NewIntegrity is integrity.New.
func NewIntegrity(mode Mode, key []byte) (*Integrity, error) { return integrity.New(mode, key) }

// TickWindow is integrity.TickWindow, the Receiver's acceptance rule.
type TickWindow = integrity.TickWindow

// NewTickWindow is integrity.NewTickWindow.
func NewTickWindow(maxAhead uint32, recoverAfter int, rewind bool) *TickWindow {
	return integrity.NewTickWindow(maxAhead, recoverAfter, rewind)
}
