package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bitwire/bitwire"
)

// Summary is the outcome of a run: what -json prints.
type Summary struct {
	Config          ConfigSummary     `json:"config"`
	Streams         int               `json:"streams"`           // snapshot streams per client: 1 + CrateStreams
	CrateStreams    int               `json:"crate_streams"`     // crate shards
	CratesPerStream int               `json:"crates_per_stream"` // at most
	Budget          int               `json:"budget_bytes"`      // largest datagram
	Ticks           int               `json:"ticks"`
	WallSeconds     float64           `json:"wall_seconds"`
	LateTicks       int               `json:"late_ticks"`      // started more than a tick late
	SlippedSeconds  float64           `json:"slipped_seconds"` // how far the schedule moved back for them
	AwakeCrates     float64           `json:"awake_crates_avg"`
	Encodings       []EncodingSummary `json:"encodings"`
	DeltaVsNaive    float64           `json:"delta_vs_naive"` // how many times smaller than naive
	DeltaVsFull     float64           `json:"delta_vs_full"`
	Fallbacks       int               `json:"over_budget_fallbacks"` // deltas over budget, sent in full
	AcksTaken       int               `json:"acks_taken"`
	BadAcks         int               `json:"bad_acks"`         // malformed or from an unknown address
	BaselineAge     float64           `json:"baseline_age_avg"` // ticks between a delta and its baseline
	Clients         clientStats       `json:"clients"`          // summed over the Go clients
	NodeClients     []NodeSummary     `json:"node"`             // each Node client (-node)
	Network         condStats         `json:"network"`          // what the conditioners did, summed
	LoopbackLost    int               `json:"loopback_lost"`
	Desyncs         int               `json:"desyncs"`
	DecodeErrors    int               `json:"decode_errors"`
	BodyBits        int64             `json:"body_bits"`   // bits of the delta packets' bodies (bitwire.Stats, top-level fields)
	LeafBits        int64             `json:"leaf_bits"`   // of which in leaf fields; the rest is structure
	TopFields       []FieldSummary    `json:"top_fields"`  // the costliest leaf fields
	PacketBits      int64             `json:"packet_bits"` // all delta datagrams, headers and stream bytes included
	Series          []SecondSummary   `json:"series"`
	Attacks         AttackSummary     `json:"attacks"`
}

// AttackSummary is what the forger and the spoofer did, and what the
// integrity mode and the receivers made of it (inject.go).
type AttackSummary struct {
	Integrity      string      `json:"integrity"`
	TrailerBytes   int         `json:"trailer_bytes"` // per packet
	Injected       injectStats `json:"injected"`      // summed over clients
	SpoofedAcks    int         `json:"spoofed_acks"`  // sent by the spoofer
	AcksRefused    int         `json:"acks_refused"`  // by Sender.HandleAck: wrong token
	RecoveryMean   float64     `json:"recovery_mean_ticks"`
	RecoveryMeanMs float64     `json:"recovery_mean_ms"`
	RecoveryMaxMs  float64     `json:"recovery_max_ms"`
}

// ConfigSummary is the configuration in JSON-friendly units.
type ConfigSummary struct {
	Duration  string  `json:"duration"`
	Clients   int     `json:"clients"`
	Node      int     `json:"node_clients"`
	Bots      int     `json:"bots"`
	Rate      int     `json:"rate"`
	Crates    int     `json:"crates"`
	Seed      uint64  `json:"seed"`
	Loss      float64 `json:"loss"`
	Latency   string  `json:"latency"`
	Jitter    string  `json:"jitter"`
	Dup       float64 `json:"dup"`
	Reorder   float64 `json:"reorder"`
	Forge     float64 `json:"forge"`
	Spoof     float64 `json:"spoof"`
	GoVersion string  `json:"go_version,omitempty"`
}

// EncodingSummary is one row of the table.
type EncodingSummary struct {
	Name          string  `json:"name"`
	KbpsPerClient float64 `json:"kbps_per_client"` // kbit/s (1000 bits) of payload per client per simulated second
	BytesPerTick  float64 `json:"bytes_per_tick"`  // per client, all streams
	Packets       int     `json:"packets"`         // all clients
	Full          int     `json:"full_packets"`
	Delta         int     `json:"delta_packets"`
	P50           int     `json:"p50_bytes"`
	P95           int     `json:"p95_bytes"`
	Max           int     `json:"max_bytes"`
	OverBudget    int     `json:"over_budget"` // packets (all clients) larger than Budget
}

// FieldSummary is one field path of the per-field accounting.
type FieldSummary struct {
	Path          string  `json:"path"`
	Bits          int64   `json:"bits"`
	Share         float64 `json:"share"` // of all leaf bits
	KbpsPerClient float64 `json:"kbps_per_client"`
	Count         int64   `json:"count"`
	Changed       float64 `json:"changed"` // fraction of Count that wrote a value
}

// SecondSummary is one point of the chart: kbit/s per client during one
// simulated second.
type SecondSummary struct {
	Second int     `json:"second"`
	Naive  float64 `json:"naive_kbps"`
	Full   float64 `json:"full_kbps"`
	Delta  float64 `json:"delta_kbps"`
}

func summarize(cfg Config, srv *server, clients []*client, stats *bitwire.Stats, ticks int, wall time.Duration, late int) Summary {
	s := Summary{
		Config: ConfigSummary{
			Duration: cfg.Duration.String(), Clients: cfg.Clients, Node: cfg.Node, Bots: cfg.Bots, Rate: cfg.Rate,
			Crates: cfg.Crates, Seed: cfg.Seed, Loss: cfg.Net.Loss, Latency: cfg.Net.Latency.String(),
			Jitter: cfg.Net.Jitter.String(), Dup: cfg.Net.Dup, Reorder: cfg.Net.Reorder,
			Forge: cfg.Inject.Forge, Spoof: cfg.Inject.Spoof,
		},
		Budget:      budget,
		Ticks:       ticks,
		WallSeconds: wall.Seconds(),
		LateTicks:   late,
		Fallbacks:   srv.fallbacks,
		AcksTaken:   srv.acksTaken,
		BadAcks:     srv.badAcks,
	}
	if ticks > 0 {
		s.AwakeCrates = float64(srv.awakeSum) / float64(ticks)
	}
	n := float64(len(srv.peers)) // Go and Node clients
	seconds := float64(ticks) / float64(cfg.Rate)
	row := func(name string, a *encodingAcct) EncodingSummary {
		e := EncodingSummary{Name: name, Full: a.full, Delta: a.delta, Packets: a.full + a.delta, OverBudget: a.overBudget}
		if ticks > 0 {
			e.BytesPerTick = float64(a.bytes) / n / float64(ticks)
			e.KbpsPerClient = float64(a.bytes) * 8 / 1000 / n / seconds
		}
		e.P50, e.P95, e.Max = percentiles(a.sizes)
		return e
	}
	s.Encodings = []EncodingSummary{
		row("naive binary", &srv.naive),
		row("bitwire full", &srv.fullAcct),
		row("bitwire delta", &srv.deltaAcct),
	}
	if d := s.Encodings[2].Delta; d > 0 {
		s.BaselineAge = float64(srv.baselineAge) / float64(d)
	}
	if d := s.Encodings[2].KbpsPerClient; d > 0 {
		s.DeltaVsNaive = s.Encodings[0].KbpsPerClient / d
		s.DeltaVsFull = s.Encodings[1].KbpsPerClient / d
	}
	for _, c := range clients {
		s.Clients = s.Clients.add(c.stats)
		s.Network = s.Network.add(c.cond.stats)
		s.Attacks.Injected = s.Attacks.Injected.add(c.inj)
	}
	at := &s.Attacks
	at.Integrity, at.TrailerBytes = cfg.Inject.Integrity.String(), cfg.Inject.Integrity.Overhead()
	at.SpoofedAcks, at.AcksRefused = srv.spoofed, srv.acksRefused
	if e := at.Injected.Episodes; e > 0 {
		tick := 1000 / float64(cfg.Rate)
		at.RecoveryMean = float64(at.Injected.RecoverySum) / float64(e)
		at.RecoveryMeanMs, at.RecoveryMaxMs = at.RecoveryMean*tick, float64(at.Injected.RecoveryMax)*tick
	}
	s.LoopbackLost = s.Encodings[2].Packets - s.Clients.Received
	s.Desyncs, s.DecodeErrors = s.Clients.Desyncs, s.Clients.Errors

	fields := stats.Fields()
	for _, f := range fields {
		if f.Leaf {
			s.LeafBits += f.Bits
		}
		if !strings.ContainsAny(f.Path, ".[") { // a top-level field
			s.BodyBits += f.Bits
		}
	}
	s.PacketBits = srv.deltaAcct.bytes * 8
	for _, f := range fields {
		if !f.Leaf || f.Count == 0 || len(s.TopFields) == 10 {
			continue
		}
		fs := FieldSummary{Path: f.Path, Bits: f.Bits, Count: f.Count, Changed: float64(f.Changed) / float64(f.Count)}
		if s.BodyBits > 0 {
			fs.Share = float64(f.Bits) / float64(s.BodyBits)
		}
		if seconds > 0 {
			fs.KbpsPerClient = float64(f.Bits) / 1000 / n / seconds
		}
		s.TopFields = append(s.TopFields, fs)
	}
	secs := max(len(srv.naive.perSecond), len(srv.fullAcct.perSecond), len(srv.deltaAcct.perSecond))
	for i := 0; i < secs; i++ {
		// The last second may be partial: scale by the ticks it holds.
		inSec := min(cfg.Rate, ticks-i*cfg.Rate)
		k := 8.0 / 1000 / n * float64(cfg.Rate) / float64(inSec)
		at := func(v []int64) float64 {
			if i < len(v) {
				return float64(v[i]) * k
			}
			return 0
		}
		s.Series = append(s.Series, SecondSummary{Second: i + 1, Naive: at(srv.naive.perSecond), Full: at(srv.fullAcct.perSecond), Delta: at(srv.deltaAcct.perSecond)})
	}
	return s
}

// addNodeClients adds the Node clients' outcomes to the summary: their
// desyncs and errors count like the Go clients'.
func addNodeClients(s *Summary, ncs []*nodeClient) {
	for _, nc := range ncs {
		s.NodeClients = append(s.NodeClients, nc.sum)
		s.Desyncs += nc.sum.Desyncs
		s.DecodeErrors += nc.sum.Errors
		s.LoopbackLost -= nc.sum.Received
	}
}

// percentiles returns the nearest-rank p50 and p95 and the maximum.
func percentiles(v []int) (p50, p95, mx int) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := func(p float64) int {
		i := int(p*float64(len(s))+0.9999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return rank(0.50), rank(0.95), s[len(s)-1]
}

// printReport writes the human-readable report.
func printReport(w io.Writer, s *Summary) {
	c := s.Config
	nodes := ""
	if c.Node > 0 {
		nodes = fmt.Sprintf(" + %d Node clients", c.Node)
	}
	fmt.Fprintf(w, "bitwire-demo: %d clients%s + %d bots, %d crates, %d Hz, %s (%d ticks in %.1fs wall), seed %d\n",
		c.Clients, nodes, c.Bots, c.Crates, c.Rate, c.Duration, s.Ticks, s.WallSeconds, c.Seed)
	fmt.Fprintf(w, "network (each direction): loss %g, latency %s, jitter %s, dup %g, reorder %g\n",
		c.Loss, c.Latency, c.Jitter, c.Dup, c.Reorder)
	fmt.Fprintf(w, "world: %d snapshot streams per client (players + %d crate shards of at most %d crates); %.0f crates awake on average\n",
		s.Streams, s.CrateStreams, s.CratesPerStream, s.AwakeCrates)
	if s.SlippedSeconds >= 0.05 {
		ticks := "ticks"
		if s.LateTicks == 1 {
			ticks = "tick"
		}
		fmt.Fprintf(w, "note: %d %s started more than a tick late (a busy machine) and the schedule slipped %.1fs; bandwidth is per simulated second\n",
			s.LateTicks, ticks, s.SlippedSeconds)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-14s %10s %10s %9s %8s %8s   %-22s %s\n", "encoding", "kbit/s", "bytes", "packets", "full", "delta", "bytes/packet", "over")
	fmt.Fprintf(w, "%-14s %10s %10s %9s %8s %8s   %6s %6s %8s %s\n", "", "per client", "per tick", "", "", "", "p50", "p95", "max", fmt.Sprintf("%d B", s.Budget))
	for _, e := range s.Encodings {
		fmt.Fprintf(w, "%-14s %10.1f %10.0f %9d %8d %8d   %6d %6d %8d %d\n",
			e.Name, e.KbpsPerClient, e.BytesPerTick, e.Packets, e.Full, e.Delta, e.P50, e.P95, e.Max, e.OverBudget)
	}
	fmt.Fprintf(w, "\ndelta is %.1f× smaller than naive and %.1f× smaller than full; deltas are against a baseline %.2f ticks old on average",
		s.DeltaVsNaive, s.DeltaVsFull, s.BaselineAge)
	if s.Fallbacks > 0 {
		fmt.Fprintf(w, "; %d deltas over budget were sent in full", s.Fallbacks)
	}
	fmt.Fprintln(w)

	for _, nc := range s.NodeClients {
		fmt.Fprintf(w, "node client %d: %d received, %d dropped, %d accepted (%d checked, %d unchecked), %d stale, %d without baseline, %d recovering; %d acks sent, %d dropped; desyncs: %d, errors: %d\n",
			nc.ID, nc.Received, nc.Dropped, nc.Accepted, nc.Checked, nc.Unchecked, nc.Stale, nc.NoBaseline, nc.Recovering, nc.AcksSent, nc.AcksDropped, nc.Desyncs, nc.Errors)
	}
	cl, nw := s.Clients, s.Network
	fmt.Fprintf(w, "clients: %d datagrams received (%d lost on loopback), %d dropped, %d duplicated, %d held back by the conditioner\n",
		cl.Received, s.LoopbackLost, nw.Dropped, nw.Duplicated, nw.Reordered)
	fmt.Fprintf(w, "         %d accepted and checked, %d stale, %d without baseline, %d unchecked; acks: %d sent, %d dropped, %d reached the server\n",
		cl.Accepted, cl.Stale, cl.NoBaseline, cl.Unchecked, cl.AcksSent, nw.DroppedAcks, s.AcksTaken)
	status := "OK"
	if s.Desyncs > 0 || s.DecodeErrors > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(w, "         desyncs: %d, decode errors: %d  %s\n", s.Desyncs, s.DecodeErrors, status)
	printAttacks(w, s)

	if len(s.TopFields) > 0 && s.BodyBits > 0 {
		fmt.Fprintf(w, "\nfields that cost the most bits (bodies of the delta packets sent, all clients; bitwire.Stats):\n")
		fmt.Fprintf(w, "%-26s %12s %7s %14s %10s %8s\n", "field", "bits", "share", "kbit/s/client", "count", "changed")
		var top int64
		for _, f := range s.TopFields {
			top += f.Bits
			fmt.Fprintf(w, "%-26s %12d %6.1f%% %14.2f %10d %7.1f%%\n", f.Path, f.Bits, 100*f.Share, f.KbpsPerClient, f.Count, 100*f.Changed)
		}
		seconds := float64(s.Ticks) / float64(c.Rate)
		other := func(name string, bits int64) {
			fmt.Fprintf(w, "%-26s %12d %6.1f%% %14.2f\n", name, bits, 100*float64(bits)/float64(s.BodyBits), float64(bits)/1000/float64(c.Clients)/seconds)
		}
		other("(other leaf fields)", s.LeafBits-top)
		other("(structure)", s.BodyBits-s.LeafBits)
		other("all bodies", s.BodyBits)
		if s.PacketBits > 0 {
			fmt.Fprintf(w, "structure: changed bits of structs, slice lengths, entity-set index sets, presence bits.\n")
			fmt.Fprintf(w, "bodies are %.1f%% of the delta bytes sent; snapshot headers, stream bytes and padding the other %.1f%%\n",
				100*float64(s.BodyBits)/float64(s.PacketBits), 100-100*float64(s.BodyBits)/float64(s.PacketBits))
		}
	}
}

// printAttacks writes the integrity mode and what the attacks did, when
// there is anything to say.
func printAttacks(w io.Writer, s *Summary) {
	a, in := &s.Attacks, &s.Attacks.Injected
	if s.Config.Forge == 0 && s.Config.Spoof == 0 && a.TrailerBytes == 0 {
		return
	}
	fmt.Fprintf(w, "integrity: %s, %d trailer bytes a packet", a.Integrity, a.TrailerBytes)
	if d := s.Encodings[2].P50; d > 0 && a.TrailerBytes > 0 {
		fmt.Fprintf(w, " (%.1f%% of the median delta datagram)", 100*float64(a.TrailerBytes)/float64(d))
	}
	fmt.Fprintln(w)
	if s.Config.Forge > 0 {
		fmt.Fprintf(w, "forger:  %d forged and %d corrupted datagrams injected; %d accepted, %d refused\n",
			in.Forged, in.Corrupted, in.Accepted, in.Refused)
		fmt.Fprintf(w, "         %d wrong-state episodes, back in sync after %.1f ticks (%.0f ms) on average, %d ticks (%.0f ms) at most;\n",
			in.Episodes, a.RecoveryMean, a.RecoveryMeanMs, in.RecoveryMax, a.RecoveryMaxMs)
		fmt.Fprintf(w, "         longest run of genuine packets refused on a stream: %d; %d refused while recovering; %d acks asked for a full snapshot\n",
			in.RefusedRunMax, s.Clients.Recovering, in.FullRequests)
	}
	if s.Config.Spoof > 0 {
		fmt.Fprintf(w, "spoofer: %d acks with guessed tokens sent; %d acks refused by the senders (wrong token)\n", a.SpoofedAcks, a.AcksRefused)
	}
}
