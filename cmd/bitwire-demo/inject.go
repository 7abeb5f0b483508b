package main

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// Attacks on the demo's replication streams, and the integrity mode that
// meets them (flags -forge, -spoof, -integrity; docs/security.md,
// docs/demo.md).
//
// The forger sits on the path to each client: with probability Forge per
// replication datagram it injects one more, made from the genuine one. A
// fifth of them are the genuine packet with bits flipped and nothing else
// (corruption in transit); the rest are forgeries by an attacker who knows
// the format but not the MAC key: the sequence number or the tick moved
// ahead, bits of the body flipped, or a made-up full state of an entity
// the client holds, each sealed the way the mode does it (with the right
// CRC, or a MAC under a wrong key). The spoofer is off the path: with
// probability Spoof per client and tick it sends the server an ack from
// the client's address, with tokens it has to guess.

// InjectConfig is what the attackers do.
type InjectConfig struct {
	Forge     float64       // injected datagrams per genuine one, each client
	Spoof     float64       // spoofed acks per client and tick
	Integrity snapshot.Mode // the streams' integrity mode
}

// parseIntegrity reads the -integrity flag.
func parseIntegrity(s string) (snapshot.Mode, error) {
	switch s {
	case "none":
		return snapshot.ModeNone, nil
	case "crc":
		return snapshot.ModeChecksum, nil
	case "mac":
		return snapshot.ModeMAC, nil
	}
	return 0, fmt.Errorf("-integrity %q: want none, crc or mac", s)
}

// streamKey is the MAC secret of client's stream, standing in for the one
// a key exchange would give: derived from the seed and the client, 32
// bytes; nil unless the mode is ModeMAC.
func streamKey(cfg Config, client int) []byte {
	if cfg.Inject.Integrity != snapshot.ModeMAC {
		return nil
	}
	key := make([]byte, 32)
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(client)+0x6b6579))
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	return key
}

// clientOptions are the replicate.Client options of client: the stream's
// integrity and, without a MAC, an expiry three times the Peer's refresh,
// which drops entities a forgery made up (with a MAC none can be).
func clientOptions(cfg Config, client int) []replicate.Option {
	opts := []replicate.Option{replicate.WithIntegrity(cfg.Inject.Integrity, streamKey(cfg, client))}
	if cfg.Inject.Integrity != snapshot.ModeMAC {
		opts = append(opts, replicate.WithExpiry(3*cfg.refreshTicks()))
	}
	return opts
}

// injectStats counts the attacks on one client and how its stream fared.
// Each client's loop owns its own.
type injectStats struct {
	Forged        int `json:"forged"`         // forgeries injected
	Corrupted     int `json:"corrupted"`      // genuine packets with bits flipped, injected
	Accepted      int `json:"accepted"`       // of those, accepted by the Client
	Refused       int `json:"refused"`        // of those, refused
	Episodes      int `json:"episodes"`       // runs of wrong states of one entity
	Open          int `json:"open"`           // of which still wrong at the end
	OpenMaxAge    int `json:"open_max_age"`   // ticks since the oldest of those began
	RecoverySum   int `json:"recovery_ticks"` // ticks from an entity's first wrong state to its next right one, summed
	RecoveryMax   int `json:"recovery_max"`   // the longest, in ticks
	RefusedRunMax int `json:"refused_run"`    // the longest run of genuine packets refused
}

func (s injectStats) add(o injectStats) injectStats {
	s.Forged += o.Forged
	s.Corrupted += o.Corrupted
	s.Accepted += o.Accepted
	s.Refused += o.Refused
	s.Episodes += o.Episodes
	s.Open += o.Open
	s.OpenMaxAge = max(s.OpenMaxAge, o.OpenMaxAge)
	s.RecoverySum += o.RecoverySum
	s.RecoveryMax = max(s.RecoveryMax, o.RecoveryMax)
	s.RefusedRunMax = max(s.RefusedRunMax, o.RefusedRunMax)
	return s
}

// forger makes one client's injected datagrams.
type forger struct {
	rate  float64
	until uint32 // the last tick copied; 0: all
	rng   *rand.Rand
	codec *bitwire.Codec[Entity]
	seal  *snapshot.Integrity // the mode's, with a wrong key for a MAC
	mode  snapshot.Mode
	stats *injectStats
	w     bits.Writer
}

func newForger(cfg Config, client int, codec *bitwire.Codec[Entity], stats *injectStats) *forger {
	f := &forger{rate: cfg.Inject.Forge, until: cfg.forgeUntil, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(client)+0x666f7267)),
		codec: codec, mode: cfg.Inject.Integrity, stats: stats}
	var key []byte
	if f.mode == snapshot.ModeMAC {
		key = []byte("the forger's guess at the secret")
	}
	f.seal, _ = snapshot.NewIntegrity(f.mode, key)
	return f
}

// forge returns a datagram to inject after the genuine one pkt, or nil.
// held picks an entity the client holds, for a made-up state of it.
func (f *forger) forge(pkt []byte, held func() (uint32, *Entity, bool)) []byte {
	if f.rate == 0 || f.rng.Float64() >= f.rate {
		return nil
	}
	h, err := replicate.ParseHeader(pkt)
	if err != nil || (f.until != 0 && h.Tick > f.until) {
		return nil
	}
	overhead := f.mode.Overhead()
	var out []byte
	switch f.rng.IntN(5) {
	case 0: // corrupted in transit: flip 1 to 3 bits anywhere
		out = append([]byte(nil), pkt...)
		for range 1 + f.rng.IntN(3) {
			bit := f.rng.IntN(len(out) * 8)
			out[bit/8] ^= 1 << (bit % 8)
		}
		f.stats.Corrupted++
		return out
	case 1: // the sequence number (bytes 6..9) moved ahead
		out = append([]byte(nil), pkt[:len(pkt)-overhead]...)
		putUint32(out[6:], h.Seq+1+uint32(f.rng.IntN(400)))
	case 2: // the tick (bytes 10..13) moved ahead: every baseline moves along
		out = append([]byte(nil), pkt[:len(pkt)-overhead]...)
		putUint32(out[10:], h.Tick+1+uint32(f.rng.IntN(400)))
	case 3: // bits of the body flipped, then sealed again
		out = append([]byte(nil), pkt[:len(pkt)-overhead]...)
		bit := 15*8 + f.rng.IntN(max(1, (len(out)-15)*8))
		if bit/8 < len(out) {
			out[bit/8] ^= 1 << (bit % 8)
		}
	default: // a made-up full state of an entity the client holds
		out = f.fabricate(h, held)
	}
	if out == nil {
		return nil
	}
	out, _ = f.seal.Seal(out, 0)
	f.stats.Forged++
	return out
}

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// fabricate writes a replication packet, as docs/wire-format.md gives it,
// of the next sequence number and the same tick, carrying one entity the
// client holds in full with a plausible wrong state.
func (f *forger) fabricate(h replicate.Header, held func() (uint32, *Entity, bool)) []byte {
	id, cur, ok := held()
	if !ok {
		return nil
	}
	e := *cur
	switch {
	case e.Match != nil:
		m := *e.Match
		m.Clock = 1
		e.Match = &m
	case e.Player != nil:
		p := *e.Player
		p.Health = 1
		e.Player = &p
	case e.Crate != nil:
		c := *e.Crate
		c.Pos.Y = 30
		e.Crate = &c
	}
	f.w.Reset(nil)
	f.w.WriteBits(replicate.Magic, 16)
	f.w.WriteBits(uint64(h.Fingerprint), 32)
	f.w.WriteBits(uint64(h.Seq+1), 32)
	f.w.WriteBits(uint64(h.Tick), 32)
	f.w.WriteBits(uint64(f.mode), 2)
	f.w.WriteBool(false) // no removals
	f.w.WriteBool(false) // no common baseline
	f.w.WriteBool(true)  // one entity
	fields.WriteBitlen(&f.w, uint64(id), 5)
	f.w.WriteBits(0, 2) // in full
	if err := f.codec.Encode(&f.w, &e); err != nil {
		return nil
	}
	f.w.WriteBool(false)
	return append([]byte(nil), f.w.Bytes()...)
}

// watch records the outcome of one datagram: forged says whether it was
// injected, err is Decode's error.
func (c *client) watch(forged bool, err error) {
	st := &c.inj
	switch {
	case forged && err == nil:
		st.Accepted++
	case forged:
		st.Refused++
	case err != nil:
		c.refusedRun++
		st.RefusedRunMax = max(st.RefusedRunMax, c.refusedRun)
	default:
		c.refusedRun = 0
	}
}

// judge records whether the state of id the client holds from tick is
// right: an entity's wrong states, from the first to the next right one,
// are one episode.
func (c *client) judge(id, tick uint32, right bool) {
	since, wrong := c.wrongSince[id]
	switch {
	case !right && !wrong:
		if c.wrongSince == nil {
			c.wrongSince = map[uint32]uint32{}
		}
		c.wrongSince[id] = tick
		c.inj.Episodes++
	case right && wrong:
		if tick > since {
			d := int(tick - since)
			c.inj.RecoverySum += d
			c.inj.RecoveryMax = max(c.inj.RecoveryMax, d)
		}
		delete(c.wrongSince, id)
	}
}

// spoof pushes the spoofer's acks of this tick into the server's ack
// queue, as if they had come from the clients' addresses: a recent
// sequence number, a random mask, guessed tokens, and now and then a
// missing-baseline report.
func (s *server) spoof() {
	if s.cfg.Inject.Spoof == 0 {
		return
	}
	for c, pr := range s.peers {
		if s.spoofRng.Float64() >= s.cfg.Inject.Spoof {
			continue
		}
		seq := uint32(pr.p.Stats().Packets)
		if seq == 0 {
			continue
		}
		a := replicate.Ack{Seq: seq - uint32(s.spoofRng.IntN(int(min(seq, 8)))), Mask: s.spoofRng.Uint32(),
			Token: s.spoofRng.Uint32(), MaskToken: s.spoofRng.Uint32()}
		if s.spoofRng.IntN(4) == 0 {
			a.Missing, a.MissingToken = seq, s.spoofRng.Uint32()
		}
		s.spoofed++
		select {
		case s.acks <- ack{client: c, ack: a}:
		default:
		}
	}
}

// takeAck hands an ack to its Peer and counts what became of it: an ack
// of which any part is refused counts as refused.
func (s *server) takeAck(a ack) {
	err := s.peers[a.client].p.Ack(a.ack)
	switch {
	case errors.Is(err, replicate.ErrBadAck):
		s.acksRefused++
	case err == nil:
		s.acksTaken++
	}
}
