// Package gateway serves one world from several processes through NATS:
// the world process simulates and publishes what changed each tick (a
// Publisher), and each gateway process rebuilds the world's entities from
// that stream into a replicate.Server of its own and runs the replicate
// Peers of its own clients (a Gateway). A client cannot tell which process
// serves it: a gateway's Server holds the same quantized states, changed at
// the same ticks, set in the same order, as the world's would, so its
// Peers write the same packets for the same acks and losses.
//
// The bus carries, per tick and per cell (a region of the world, or one
// cell for all of it), the entities that changed as deltas against their
// previous state (bitwire's Codec.EncodeDelta), the new ones in full, and
// the removals, on the subject Subject.cell.N. Every cell publishes every
// tick, and each message names the tick of the cell's previous one, so a
// gateway finds a lost message at the next one. On start, and after a gap,
// a gateway asks for the full state of its cells (Subject.sync) and takes
// the stream up again from there; its clients wait meanwhile, and are
// never sent a state the world did not have at the tick they are told.
// docs/gateway.md has the design, the message format and the figures.
//
// A Publisher is used by the world's goroutine only, a Gateway by the
// goroutine that serves its clients (Next, then the Peers' Encode and
// Ack, which may run concurrently as replicate allows).
package gateway

import (
	"errors"
	"fmt"
	"time"
)

// Errors, tested with errors.Is.
var (
	// ErrBadMessage: a bus message that is not one of this format and
	// version, or does not decode. A gateway counts it and resyncs.
	ErrBadMessage = errors.New("gateway: malformed bus message")
	// ErrProtocolMismatch: a bus message from a world whose codec has
	// another layout (fingerprint) than the gateway's.
	ErrProtocolMismatch = errors.New("gateway: protocol mismatch: codec fingerprint differs")
	// ErrTickOrder: a Publisher's Advance with a tick not newer than the
	// last, or before the last tick was published; Set or Remove before
	// Advance.
	ErrTickOrder = errors.New("gateway: tick out of order")
	// ErrCell: a cell function returned a cell outside 0..Cells-1, or a
	// Config names such a cell.
	ErrCell = errors.New("gateway: cell out of range")
	// ErrClosed: the gateway's NATS connection is closed.
	ErrClosed = errors.New("gateway: connection closed")
)

// Defaults.
const (
	// DefaultSubject is the subjects' prefix unless Config.Subject says
	// otherwise.
	DefaultSubject = "bitwire.world"
	// DefaultMaxMessage bounds a bus message's bytes (a cell's message of
	// a tick is split into parts of at most this size): well under NATS's
	// default limit of 1 MiB.
	DefaultMaxMessage = 64 << 10
	// DefaultPending is the most bus messages a gateway holds unread;
	// beyond it NATS drops them, and the gateway resyncs.
	DefaultPending = 1024
	// DefaultRetry is how long a gateway waits for a full state before
	// asking again.
	DefaultRetry = 500 * time.Millisecond
)

// Config is what a Publisher and its Gateways agree on (Subject, Cells),
// and what each decides for itself.
type Config[E any] struct {
	// Subject is the prefix of the subjects: Subject.cell.N for cell N's
	// stream, Subject.sync for requests of full states. DefaultSubject
	// when empty.
	Subject string
	// Cells is the number of cells the world is split into, 1 when 0.
	Cells int
	// Cell (Publisher) returns the cell of an entity's quantized state,
	// in 0..Cells-1. nil: cell 0.
	Cell func(id uint32, e *E) int
	// MaxMessage (Publisher) bounds a message's bytes: DefaultMaxMessage
	// when 0, at least 1024.
	MaxMessage int
	// Take (Gateway) lists the cells the gateway rebuilds; nil: all.
	Take []int
	// Pending (Gateway) is the most messages held unread before NATS drops
	// them (and the gateway resyncs): DefaultPending when 0.
	Pending int
	// Retry (Gateway) is how long to wait for a full state before asking
	// again: DefaultRetry when 0.
	Retry time.Duration
}

func (c *Config[E]) fill() error {
	if c.Subject == "" {
		c.Subject = DefaultSubject
	}
	if c.Cells == 0 {
		c.Cells = 1
	}
	if c.Cells < 0 || c.Cells > 1<<16 {
		return fmt.Errorf("%w: %d cells, outside 1..65536", ErrCell, c.Cells)
	}
	if c.MaxMessage == 0 {
		c.MaxMessage = DefaultMaxMessage
	}
	if c.MaxMessage < 1024 {
		return fmt.Errorf("gateway: MaxMessage %d, under 1024", c.MaxMessage)
	}
	if c.Pending == 0 {
		c.Pending = DefaultPending
	}
	if c.Pending < 1 {
		return fmt.Errorf("gateway: Pending %d, under 1", c.Pending)
	}
	if c.Retry == 0 {
		c.Retry = DefaultRetry
	}
	for _, k := range c.Take {
		if k < 0 || k >= c.Cells {
			return fmt.Errorf("%w: Take names cell %d of %d", ErrCell, k, c.Cells)
		}
	}
	return nil
}

func cellSubject(prefix string, cell int) string { return fmt.Sprintf("%s.cell.%d", prefix, cell) }

func syncSubject(prefix string) string { return prefix + ".sync" }
