package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/internal/entropy"
	"github.com/bitwire/bitwire/replicate"
)

// TestFullMessageEntropy measures, on the demo's default run, what share of
// the bytes sent full entity states (Codec.Encode) are, and what an entropy
// stage would save on them: the order-0 entropy of each field's keys and a
// static per-field code trained on the full states of another seed's run
// (docs/decisions.md, "Full messages and the entropy stage"). It runs the
// demo twice for its default 10 s, so it is skipped unless
// BITWIRE_MEASURE is set:
//
//	BITWIRE_MEASURE=1 go test -run FullMessageEntropy -v ./cmd/bitwire-demo
func TestFullMessageEntropy(t *testing.T) {
	if os.Getenv("BITWIRE_MEASURE") == "" {
		t.Skip("a measurement of two 10 s demo runs: set BITWIRE_MEASURE=1")
	}
	train := demoTraffic(t, 2)
	test := demoTraffic(t, 1)
	for _, tr := range []*traffic{train, test} {
		secs := float64(tr.ticks) / float64(tr.rate)
		perClient := func(b int64) float64 { return float64(b) / 1000 / secs / float64(tr.clients) }
		t.Logf("seed %d: %d ticks, %d clients; %d packets, %.1f kbit/s per client in packets; "+
			"entity states: %d full (%.1f%% of them), %d deltas; bits: full states %.1f kbit/s per client (%.1f%% of the packet bits, %.1f bits each), "+
			"deltas %.1f kbit/s per client (%.1f%%, %.1f bits each), ids and kinds %.1f%%, headers and the rest %.1f%%",
			tr.seed, tr.ticks, tr.clients, tr.packets, perClient(tr.packetBits),
			len(tr.fulls), 100*float64(len(tr.fulls))/float64(len(tr.fulls)+tr.deltas), tr.deltas,
			perClient(tr.fullBits), 100*float64(tr.fullBits)/float64(tr.packetBits), float64(tr.fullBits)/float64(len(tr.fulls)),
			perClient(tr.deltaBits), 100*float64(tr.deltaBits)/float64(tr.packetBits), float64(tr.deltaBits)/float64(tr.deltas),
			100*float64(tr.entryBits)/float64(tr.packetBits),
			100*float64(tr.packetBits-tr.fullBits-tr.deltaBits-tr.entryBits)/float64(tr.packetBits))
	}
	// Most full states are the initial states of the world, sent to every
	// client: the model is trained on seed 2's distinct states (trained on
	// the repeats, it would learn seed 2's crates by heart), and the
	// entropy is also given for seed 1's distinct states.
	trainSet, testSet := fullSet(t, train, true), fullSet(t, test, false)
	distinct := fullSet(t, test, true)
	n := len(testSet.Msgs)
	today := testSet.Bits()
	ent := testSet.Entropy()
	st := entropy.Train(trainSet).Bits(testSet)
	if e, b := distinct.Entropy(), distinct.Bits(); e > float64(b) {
		t.Errorf("entropy %.0f of the distinct states above their %d bits", e, b)
	}
	if ent > float64(today) {
		t.Errorf("entropy %.0f above today's %d bits", ent, today)
	}
	if today != test.fullBits {
		t.Errorf("the layout read %d bits of full states, the packets held %d", today, test.fullBits)
	}
	var b strings.Builder
	entropy.PrintFields(&b, entropy.Fields(trainSet, testSet), n)
	secs := float64(test.ticks) / float64(test.rate)
	saved := float64(today - st)
	t.Logf("full states of seed 1, per message (static code trained on seed 2's distinct states):\n%s", b.String())
	b.Reset()
	entropy.PrintFields(&b, entropy.Fields(trainSet, distinct), len(distinct.Msgs))
	t.Logf("seed 1's %d distinct full states, per message:\n%s", len(distinct.Msgs), b.String())
	t.Logf("data set | messages | today bits/msg | order-0 entropy | adaptive in message | static, trained on another seed\n%s\n"+
		"static code: %.1f bits saved per full state, %.2f kbit/s per client, %.2f%% of the packet bits",
		entropy.Row("demo full states", n, today, ent, today, st)+"\n"+
			entropy.Row("demo full states, distinct", len(distinct.Msgs), distinct.Bits(), distinct.Entropy(), distinct.Bits(), entropy.Train(trainSet).Bits(distinct)),
		saved/float64(n), saved/1000/secs/float64(test.clients), 100*saved/float64(test.packetBits))
	// Beside full states: the entries' id gaps in the packets (bit-length
	// code today), in an adaptive Rice code within each packet.
	all := func(string) bool { return true }
	gt, ga := test.gaps.Bits(), test.gaps.Adaptive(all, 16)
	t.Logf("packet entries' id gaps: %d gaps, %.2f bits each today, %.2f adaptive Rice (%.2f%% of the packet bits saved)",
		len(test.fulls)+test.deltas, float64(gt)/float64(len(test.fulls)+test.deltas), float64(ga)/float64(len(test.fulls)+test.deltas), 100*float64(gt-ga)/float64(test.packetBits))
}

// traffic is what the server of one demo run sent.
type traffic struct {
	seed                 uint64
	ticks, rate, clients int
	packets              int
	packetBits           int64    // whole packets
	fullBits, deltaBits  int64    // entity states in full, as deltas
	entryBits            int64    // entries' announcing bits, id gaps and kinds
	fulls                []Entity // the full states sent
	deltas               int
	gaps                 entropy.Set // per packet, its entries' id gaps
}

// demoTraffic runs the demo's default configuration with seed and reads
// every packet the server sent, entry by entry: full states are decoded,
// deltas decoded against the state the server sent of the entity at the
// baseline's tick.
func demoTraffic(t *testing.T, seed uint64) *traffic {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Seed = seed
	var mu sync.Mutex
	var pkts [][]byte
	cfg.sent = func(p []byte) {
		mu.Lock()
		pkts = append(pkts, bytes.Clone(p))
		mu.Unlock()
	}
	sum, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Desyncs != 0 || sum.DecodeErrors != 0 {
		t.Fatalf("seed %d: %d desyncs, %d decode errors", seed, sum.Desyncs, sum.DecodeErrors)
	}
	tr := &traffic{seed: seed, ticks: sum.Ticks, rate: cfg.Rate, clients: cfg.Clients, packets: len(pkts)}
	c := bitwire.MustFor[Entity]()
	sent := map[uint64]*Entity{} // id<<32 | tick → the state sent
	for _, pkt := range pkts {
		if err := tr.read(c, pkt, sent); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	return tr
}

// read reads one replication packet (docs/wire-format.md, "Replication
// packets"; integrity mode none).
func (tr *traffic) read(c *bitwire.Codec[Entity], pkt []byte, sent map[uint64]*Entity) error {
	h, err := replicate.ParseHeader(pkt)
	if err != nil {
		return err
	}
	const headerBits = 16 + 32 + 32 + 32 + 2
	tr.packetBits += int64(len(pkt)) * 8
	r := bits.NewReader(pkt)
	_ = r.Skip(headerBits)
	readID := func(prev *int64) (uint32, bool, error) {
		more, err := r.ReadBool()
		if err != nil || !more {
			return 0, false, err
		}
		g, err := fields.ReadBitlen(r, 5)
		*prev += 1 + int64(g)
		return uint32(*prev), true, err
	}
	prev := int64(-1)
	for {
		_, more, err := readID(&prev)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	var common uint32
	hasCommon, err := r.ReadBool()
	if err != nil {
		return err
	}
	if hasCommon {
		d, err := fields.ReadBitlen(r, 5)
		if err != nil {
			return err
		}
		common = h.Tick - uint32(d) - 1
	}
	prev = -1
	var gaps entropy.Message
	defer func() { tr.gaps.Msgs = append(tr.gaps.Msgs, gaps) }()
	for {
		at := r.Pos()
		before := prev
		id, more, err := readID(&prev)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		g := uint64(int64(id) - before - 1)
		n := fields.BitlenBits(g, 5)
		gaps = append(gaps, entropy.Value{Field: "id gap", Key: g, Bits: n, Width: n})
		delta, err := r.ReadBool()
		if err != nil {
			return err
		}
		base := common
		if !delta {
			if delta, err = r.ReadBool(); err != nil {
				return err
			}
			if delta {
				d, err := fields.ReadBitlen(r, 5)
				if err != nil {
					return err
				}
				base = h.Tick - uint32(d) - 1
			}
		}
		tr.entryBits += int64(r.Pos() - at)
		at = r.Pos()
		v := new(Entity)
		if delta {
			b := sent[uint64(id)<<32|uint64(base)]
			if b == nil {
				return fmt.Errorf("tick %d: id %d: no state sent at baseline tick %d", h.Tick, id, base)
			}
			if err := c.DecodeDelta(r, b, v); err != nil {
				return err
			}
			tr.deltaBits += int64(r.Pos() - at)
			tr.deltas++
		} else {
			if err := c.Decode(r, v); err != nil {
				return err
			}
			tr.fullBits += int64(r.Pos() - at)
			tr.fulls = append(tr.fulls, *v)
		}
		sent[uint64(id)<<32|uint64(h.Tick)] = v
	}
	if !r.CheckPadding() {
		return fmt.Errorf("tick %d: %d bits left", h.Tick, r.Remaining())
	}
	return nil
}

// fullSet returns the full states of tr, each a message of values; only
// the first of equal states when distinct is set.
func fullSet(t *testing.T, tr *traffic, distinct bool) *entropy.Set {
	t.Helper()
	c := bitwire.MustFor[Entity]()
	s := &entropy.Set{}
	seen := map[string]bool{}
	for i := range tr.fulls {
		var w bits.Writer
		if err := c.Encode(&w, &tr.fulls[i]); err != nil {
			t.Fatal(err)
		}
		if k := string(w.Bytes()); distinct && seen[k] {
			continue
		} else {
			seen[k] = true
		}
		p := entropy.NewReader(w.Bytes())
		if p.Fixed("Match?", 1) == 1 {
			p.Fixed("Match.Clock", 12)
			p.Fixed("Match.Score[]", 10)
			p.Fixed("Match.Score[]", 10)
		}
		if p.Fixed("Player?", 1) == 1 {
			p.Fixed("Player.Pos.X", 15)
			p.Fixed("Player.Pos.Y", 13)
			p.Fixed("Player.Pos.Z", 15)
			p.Fixed("Player.Yaw", 10)
			p.Fixed("Player.Pitch", 9)
			p.Fixed("Player.Health", 7)
			p.Fixed("Player.Weapon", 3)
			p.Fixed("Player.Flags", 4)
		}
		if p.Fixed("Crate?", 1) == 1 {
			p.Fixed("Crate.Pos.X", 15)
			p.Fixed("Crate.Pos.Y", 13)
			p.Fixed("Crate.Pos.Z", 15)
			p.Quat("Crate.Rot", 9)
			p.Fixed("Crate.Asleep", 1)
		}
		m, err := p.Message()
		if err != nil {
			t.Fatal(err)
		}
		s.Msgs = append(s.Msgs, m)
	}
	return s
}
