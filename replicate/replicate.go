// Package replicate sends a game world of any size to many clients, each
// with its own view: per-entity baselines, a priority accumulator per client
// and entity, a packet budget and an optional bandwidth budget per client,
// and interest (relevance) per client. It sits beside package snapshot,
// which sends one whole state per packet; replicate is for worlds that do
// not fit one datagram.
//
// The server holds the world as entities of one type E, keyed by a uint32
// id (Server.Set, Server.Remove). Each tick it quantizes every entity that
// was set once, for all clients, and keeps a per-entity change tick, so an
// entity that did not change costs each client one comparison. For each
// client (a Peer) it fills packets of at most the budget with the entities
// that matter most: every tick, each entity the client lacks the current
// state of has its accumulator raised by the application's priority, the
// highest are sent first, and sending resets them. Each entity goes as a
// delta against the newest state of it the client acknowledged (bitwire's
// Codec.EncodeDelta), or in full (Codec.Encode) when there is none.
// Removals, and entities that stop being relevant, are repeated in every
// packet until one carrying them is acknowledged.
//
// The client (Client) applies the packets it receives in sequence order,
// keeps the last few states of each entity as baselines, reports per entity
// the tick its state is from, and acknowledges what it accepted with an Ack
// (the newest sequence number and a mask of the 32 before it, with tokens
// derived from those packets), which the application carries back to
// Peer.Ack; Peer.Ack ignores what a token does not prove.
//
// On the open internet, give both sides an integrity mode
// (PeerConfig.Integrity, WithIntegrity): a CRC32C trailer refuses corrupted
// packets, an HMAC-SHA256-80 under a per-connection secret forged ones too
// (package integrity, which package snapshot uses too). Whatever gets through without one is
// replaced by the Peer's periodic full refresh (PeerConfig.Refresh).
// docs/replicate.md gives the design, docs/security.md the threats and
// bounds, docs/wire-format.md ("Replication packets") every bit.
//
// Servers, Peers and Clients are not safe for concurrent use, except that
// different Peers of one Server may encode concurrently once the tick's
// entities are set (see Server.Advance). The Codec they share is safe.
package replicate

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire/integrity"
)

// Defaults and limits.
const (
	// DefaultBudget is the largest packet, in bytes, unless PeerConfig.Budget
	// says otherwise.
	DefaultBudget = 1200
	// MinBudget is the smallest packet budget: a header and a little room,
	// besides the trailer of the Peer's integrity mode.
	MinBudget = headerBytes + 16
	// DefaultRefreshSeconds is how long, by default, a Peer lets a client
	// hold an entity since the last full state of it the client
	// acknowledged before sending it in full again (PeerConfig.Refresh):
	// the bound on how long a wrong state can last at a client.
	DefaultRefreshSeconds = 10
	// ExpiryRefreshes is the Client's default expiry in Refresh periods
	// of its Peer (WithExpiry, WithRefresh).
	ExpiryRefreshes = 3
	// BaselineDepth is the number of states of each entity a Client keeps
	// as baselines. A Peer sends an entity as a delta only against a state
	// the client acknowledged and has not since received BaselineDepth
	// newer states of, so the client always still holds it.
	BaselineDepth = 8
	// DefaultVersions is the number of states of each entity the Server
	// keeps to encode deltas against (WithVersions): an entity that changed
	// more often than that since the state a client acknowledged is sent in
	// full.
	DefaultVersions = 16
	// DefaultTickRate is the ticks per second a bandwidth budget is divided
	// by, unless WithTickRate says otherwise.
	DefaultTickRate = 30
	// DefaultMaxEntities bounds the entities a Client holds (WithMaxEntities).
	DefaultMaxEntities = 1 << 20
	// MaxAhead is the largest step of sequence numbers a Client accepts:
	// a single packet (corrupted, or forged) with a sequence number far
	// ahead would otherwise make every genuine packet stale.
	MaxAhead = 1024
	// RecoverAfter is the run of packets past MaxAhead, each at most
	// MaxAhead after the previous one, after which a Client accepts them
	// (a stream that really moved on, after a long stall).
	RecoverAfter = 8
	// ackWindow is the number of packets an Ack's mask covers besides the
	// newest.
	ackWindow = 32
	// recordRing is the number of packets a Peer remembers for their
	// acknowledgements: an ack of an older packet is ignored (its entities
	// are resent as if it had been lost).
	recordRing = 256
)

// The errors of this package, tested with errors.Is; they arrive wrapped
// with details. Body decoding errors are bitwire's (bitwire.ErrMalformed,
// bitwire.ErrUnexpectedEnd, ...).
var (
	// ErrBadMagic: not a replication packet (or an ack) of this version.
	ErrBadMagic = errors.New("replicate: bad magic number")
	// ErrProtocolMismatch: the packet's codec fingerprint differs.
	ErrProtocolMismatch = errors.New("replicate: protocol mismatch: codec fingerprint differs")
	// ErrStale: a packet whose sequence number is not newer than the newest
	// accepted (late, reordered or duplicated). Packets are applied in order
	// only, so that a late packet can never bring back a removed entity.
	ErrStale = errors.New("replicate: stale or duplicate packet")
	// ErrFuture: a packet whose sequence number is more than MaxAhead
	// past the newest accepted (corrupted or forged, or after a long
	// stall: then a run of RecoverAfter of them is accepted).
	ErrFuture = errors.New("replicate: sequence number too far ahead")
	// ErrNoBaseline: an entity is a delta against a state the client does
	// not hold. The whole packet is rejected and not acknowledged; the
	// server falls back to full states for it after at most BaselineDepth
	// sends.
	ErrNoBaseline = errors.New("replicate: entity baseline not held")
	// ErrTooManyEntities: a packet would make the client hold more entities
	// than its limit.
	ErrTooManyEntities = errors.New("replicate: too many entities")
	// ErrIntegrity: the packet's trailer does not match its bytes
	// (corrupted, or forged without the key). It is package integrity's
	// sentinel, as is snapshot.ErrIntegrity: the trailers are the same.
	ErrIntegrity = integrity.ErrIntegrity
	// ErrBadAck: Peer.Ack was given an ack, or a part of one, whose token
	// does not match the packets the Peer sent (spoofed, or the ack of a
	// forged packet the client accepted); that part changed nothing. It is
	// package integrity's sentinel, as is snapshot.ErrBadAck.
	ErrBadAck = integrity.ErrBadAck
	// ErrTickOrder: Advance with a tick not newer than the current one, or
	// Set or Remove after a Peer encoded the current tick.
	ErrTickOrder = errors.New("replicate: tick out of order")
)

// Option configures a Server or a Client.
type Option func(*config) error

type config struct {
	versions    int
	tickRate    int
	maxEntities int
	expiry      uint32
	expirySet   bool
	refresh     int
	integrity   integrity.Mode
	key         []byte
}

// WithIntegrity sets a Client's integrity mode (integrity.ModeNone unless
// set), which must be its Peer's (PeerConfig.Integrity): integrity.ModeChecksum
// (a CRC32C trailer) or integrity.ModeMAC with key, the connection's secret of
// at least integrity.MinKeySize bytes (copied). Without one, corrupted
// packets may decode silently into wrong states (most single bit flips
// reach the body decoder; docs/security.md, "Choosing a mode"). A Server ignores it: each
// Peer's mode and key are in its PeerConfig.
func WithIntegrity(mode integrity.Mode, key []byte) Option {
	return func(c *config) error {
		if _, err := integrity.New(mode, key); err != nil {
			return fmt.Errorf("replicate: %w", err)
		}
		c.integrity, c.key = mode, append([]byte(nil), key...)
		if key == nil {
			c.key = nil
		}
		return nil
	}
}

// WithVersions sets how many states of each entity the Server keeps as
// possible baselines (DefaultVersions unless set), 1..256. A Client ignores it.
func WithVersions(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 256 {
			return errors.New("replicate: versions outside 1..256")
		}
		c.versions = n
		return nil
	}
}

// WithTickRate sets the Server's ticks per second (DefaultTickRate unless
// set), 1..1000, by which a Peer's bandwidth budget (bytes per second) is
// divided and in which its default Refresh is counted. A Client takes it
// for its Server's, to count the default Refresh of its Peer, and from it
// its default expiry (see WithExpiry).
func WithTickRate(hz int) Option {
	return func(c *config) error {
		if hz < 1 || hz > 1000 {
			return errors.New("replicate: tick rate outside 1..1000")
		}
		c.tickRate = hz
		return nil
	}
}

// WithExpiry makes a Client drop an entity whose newest state is more than
// ticks away from the tick of the newest packet it accepted (reported in
// Info.Removed and to OnRemove), checking a few entities per packet, and
// all of them when a packet would otherwise take it past its
// WithMaxEntities. The Peer sends every entity a client holds in full
// again within its Refresh (plus the wait for room in its packets), so
// with ticks a few times the Peer's Refresh this drops only what the
// server never sent or no longer has: an entity a forged or corrupted
// packet made up, which nothing else would remove. 0: never.
//
// Unless set, the expiry is ExpiryRefreshes times the Peer's Refresh as
// WithRefresh and WithTickRate give it (30 s of ticks for the default
// PeerConfig), counted in the ticks the stream covered (an outage of the
// link ages nothing); it is off when that Refresh is never, and with
// integrity.ModeMAC, where no forged packet gets through. An expiry shorter than
// the longest a Peer may leave an idle entity unsent is unsafe: the Peer
// believes the client still holds what the expiry dropped, and sends it
// again only at its next refresh or change. A Server ignores it.
func WithExpiry(ticks int) Option {
	return func(c *config) error {
		if ticks < 0 {
			return errors.New("replicate: negative expiry")
		}
		c.expiry, c.expirySet = uint32(ticks), true
		return nil
	}
}

// WithRefresh tells a Client its Peer's PeerConfig.Refresh, as the Peer
// was given it (0: the default, DefaultRefreshSeconds at WithTickRate;
// negative: the Peer never refreshes), from which the Client's default
// expiry follows (see WithExpiry). A Server ignores it: each Peer's
// Refresh is in its PeerConfig.
func WithRefresh(ticks int) Option {
	return func(c *config) error {
		c.refresh = ticks
		return nil
	}
}

// expiryTicks is the Client's expiry: WithExpiry's, or ExpiryRefreshes of
// the Peer's Refresh.
func (c *config) expiryTicks() uint32 {
	switch {
	case c.expirySet:
		return c.expiry
	case c.refresh < 0 || c.integrity == integrity.ModeMAC:
		return 0 // nothing to expire: the Peer never refreshes, or nothing forged gets through
	case c.refresh == 0:
		return uint32(ExpiryRefreshes * DefaultRefreshSeconds * c.tickRate)
	}
	return uint32(min(int64(ExpiryRefreshes)*int64(c.refresh), 1<<31))
}

// WithMaxEntities bounds the entities a Client holds (DefaultMaxEntities
// unless set); a packet that would exceed it is ErrTooManyEntities. A
// Server ignores it.
func WithMaxEntities(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return errors.New("replicate: max entities under 1")
		}
		c.maxEntities = n
		return nil
	}
}

func newConfig(opts []Option) (config, error) {
	c := config{versions: DefaultVersions, tickRate: DefaultTickRate, maxEntities: DefaultMaxEntities}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}
