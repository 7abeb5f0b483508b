package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/snapshot"
)

// Attacks on the demo's streams, and the integrity mode that meets them
// (flags -forge, -spoof, -integrity; docs/security.md, docs/demo.md).
//
// The forger sits on the path to each client: with probability Forge per
// snapshot datagram it injects one more, made from the genuine one. A
// quarter of them are the genuine packet with bits flipped and nothing
// else (corruption in transit); the rest are forgeries by an attacker who
// knows the format but not the MAC key: a tick moved ahead, a baseline
// relabelled, or a state altered and re-encoded, each sealed the way the
// mode does it (with the right CRC, or a MAC under a wrong key). The
// spoofer is off the path: with probability Spoof per client, stream and
// tick it sends the server an ack from the client's address with a token
// it has to guess, asking for a full snapshot or not.

// InjectConfig is what the attackers do.
type InjectConfig struct {
	Forge     float64       // injected datagrams per genuine one, each client
	Spoof     float64       // spoofed acks per client, stream and tick
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

// streamOptions are the snapshot options of client's streams, on both
// sides. The MAC secret stands in for the one a key exchange would give:
// derived from the seed and the client, 32 bytes.
func streamOptions(cfg Config, client int) []snapshot.Option {
	switch cfg.Inject.Integrity {
	case snapshot.ModeChecksum:
		return []snapshot.Option{snapshot.WithChecksum()}
	case snapshot.ModeMAC:
		return []snapshot.Option{snapshot.WithMAC(streamKey(cfg, client))}
	}
	return nil
}

// streamKey is the MAC secret of client's streams.
func streamKey(cfg Config, client int) []byte {
	key := make([]byte, 32)
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(client)+0x6b6579))
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	return key
}

// injectStats counts the attacks on one client and how its streams fared.
// Each client's loop owns its own.
type injectStats struct {
	Forged        int `json:"forged"`         // forgeries injected
	Corrupted     int `json:"corrupted"`      // genuine packets with bits flipped, injected
	Accepted      int `json:"accepted"`       // of those, accepted by a Receiver
	Refused       int `json:"refused"`        // of those, refused
	FullRequests  int `json:"full_requests"`  // acks asking for a full snapshot
	Episodes      int `json:"episodes"`       // runs of wrong accepted states, per stream
	RecoverySum   int `json:"recovery_ticks"` // ticks from the first wrong state to the next right one, summed
	RecoveryMax   int `json:"recovery_max"`   // the longest, in ticks
	RefusedRunMax int `json:"refused_run"`    // the longest run of genuine packets refused, one stream
}

func (s injectStats) add(o injectStats) injectStats {
	s.Forged += o.Forged
	s.Corrupted += o.Corrupted
	s.Accepted += o.Accepted
	s.Refused += o.Refused
	s.FullRequests += o.FullRequests
	s.Episodes += o.Episodes
	s.RecoverySum += o.RecoverySum
	s.RecoveryMax = max(s.RecoveryMax, o.RecoveryMax)
	s.RefusedRunMax = max(s.RefusedRunMax, o.RefusedRunMax)
	return s
}

// forger makes one client's injected datagrams.
type forger struct {
	rate  float64
	rng   *rand.Rand
	codec *bitwire.Codec[Shard]
	seal  *snapshot.Integrity // the mode's, with a wrong key for a MAC
	mode  snapshot.Mode
	stats *injectStats
	w     bits.Writer
	view  Shard
}

func newForger(cfg Config, client int, codec *bitwire.Codec[Shard], stats *injectStats) *forger {
	f := &forger{rate: cfg.Inject.Forge, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(client)+0x666f7267)),
		codec: codec, mode: cfg.Inject.Integrity, stats: stats}
	var key []byte
	if f.mode == snapshot.ModeMAC {
		key = []byte("the forger's guess at the secret")
	}
	f.seal, _ = snapshot.NewIntegrity(f.mode, key)
	return f
}

// forge returns a datagram to inject after the genuine one dgram, or nil.
func (f *forger) forge(dgram []byte) []byte {
	if f.rate == 0 || f.rng.Float64() >= f.rate || len(dgram) <= streamPrefix {
		return nil
	}
	pkt := dgram[streamPrefix:]
	h, err := snapshot.ParseHeader(pkt)
	if err != nil {
		return nil
	}
	overhead := f.mode.Overhead()
	var out []byte
	switch f.rng.IntN(4) {
	case 0: // corrupted in transit: flip 1 to 3 bits anywhere
		out = append([]byte(nil), pkt...)
		for range 1 + f.rng.IntN(3) {
			bit := f.rng.IntN(len(out) * 8)
			out[bit/8] ^= 1 << (bit % 8)
		}
		f.stats.Corrupted++
		return append([]byte{dgram[0]}, out...)
	case 1: // the tick (bytes 6..9) moved ahead; a delta's baseline,
		// coded as a distance back from it, moves along
		out = append([]byte(nil), pkt[:len(pkt)-overhead]...)
		binary.LittleEndian.PutUint32(out[6:], h.Tick+1+uint32(f.rng.IntN(400)))
	case 2: // bits of the body flipped, then sealed again
		out = append([]byte(nil), pkt[:len(pkt)-overhead]...)
		bit := 12*8 + f.rng.IntN(max(1, (len(out)-12)*8))
		if bit/8 < len(out) {
			out[bit/8] ^= 1 << (bit % 8)
		}
	default: // a full snapshot of a made-up state at the next tick
		out = f.fabricate(h)
	}
	if out == nil {
		return nil
	}
	out, _ = f.seal.Seal(out, 0)
	f.stats.Forged++
	return append([]byte{dgram[0]}, out...)
}

// fabricate writes a full snapshot packet, in the stream's format, of a
// plausible state: a single crate, or a single player with the match about
// to end.
func (f *forger) fabricate(h snapshot.Header) []byte {
	f.view = Shard{Crates: []Crate{{ID: uint32(f.rng.IntN(1000)), Rot: [4]float32{0, 0, 0, 1}}}}
	if f.rng.IntN(2) == 0 {
		f.view = Shard{Match: &Match{Clock: 1}, Players: []Player{{ID: 1, Health: 100}}}
	}
	// The header, as docs/wire-format.md gives it: magic, fingerprint,
	// tick, mode, hashed 0, delta 0, then the body.
	f.w.Reset(nil)
	f.w.WriteBits(snapshot.Magic, 16)
	f.w.WriteBits(uint64(h.Fingerprint), 32)
	f.w.WriteBits(uint64(h.Tick+1), 32)
	f.w.WriteBits(uint64(f.mode), 2)
	f.w.WriteBits(0, 2)
	if err := f.codec.Encode(&f.w, &f.view); err != nil {
		return nil
	}
	return append([]byte(nil), f.w.Bytes()...)
}

// streamWatch follows one stream of one client: how long a wrong state
// lasts, how long genuine packets are refused.
type streamWatch struct {
	wrongSince uint32 // the tick of the first wrong state of the episode; 0: none
	refusedRun int
}

// watch records the outcome of one datagram of stream k: forged says
// whether it was injected, err is Decode's error, equal whether an
// accepted state matched the server's.
func (c *client) watch(k int, forged bool, tick uint32, err error, equal bool) {
	st := &c.inj
	w := &c.watches[k]
	if forged {
		if err == nil {
			st.Accepted++
		} else {
			st.Refused++
		}
	} else if err != nil {
		w.refusedRun++
		st.RefusedRunMax = max(st.RefusedRunMax, w.refusedRun)
	} else {
		w.refusedRun = 0
	}
	if err != nil {
		return
	}
	switch {
	case !equal && w.wrongSince == 0:
		w.wrongSince = tick
		st.Episodes++
	case equal && w.wrongSince != 0:
		if tick > w.wrongSince {
			d := int(tick - w.wrongSince)
			st.RecoverySum += d
			st.RecoveryMax = max(st.RecoveryMax, d)
		}
		w.wrongSince = 0
	}
}

// spoof pushes the spoofer's acks of tick t into the server's ack queue,
// as if they had come from the clients' addresses.
func (s *server) spoof(t uint32) {
	if s.cfg.Inject.Spoof == 0 {
		return
	}
	for c := range s.peers {
		for k := range s.shards {
			if s.spoofRng.Float64() >= s.cfg.Inject.Spoof {
				continue
			}
			a := snapshot.Ack{Tick: t - 1 - uint32(s.spoofRng.IntN(int(min(t, 8)))), Token: s.spoofRng.Uint32(), MissingBaseline: s.spoofRng.IntN(2) == 0}
			s.spoofed++
			select {
			case s.acks <- ack{client: c, stream: k, ack: a}:
			default:
			}
		}
	}
}

// takeAck hands an ack to its Sender and counts what became of it.
func (s *server) takeAck(a ack) {
	err := s.peers[a.client].senders[a.stream].HandleAck(a.ack)
	switch {
	case errors.Is(err, snapshot.ErrBadAck):
		s.acksRefused++
	case err == nil:
		s.acksTaken++
	}
}
