package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/bitwire/bitwire"
)

// Summary is the outcome of a run: what -json prints.
type Summary struct {
	Config         ConfigSummary     `json:"config"`
	Budget         int               `json:"budget_bytes"` // largest datagram
	Ticks          int               `json:"ticks"`
	WallSeconds    float64           `json:"wall_seconds"`
	LateTicks      int               `json:"late_ticks"`      // started more than a tick late
	SlippedSeconds float64           `json:"slipped_seconds"` // how far the schedule moved back for them
	TickCPU        TickTimes         `json:"tick_ms"`         // the server's work per tick, wall-clock
	CPUPerTick     float64           `json:"cpu_ms_per_tick"` // CPU time of the whole process (server, clients, checks) per tick
	AwakeCrates    float64           `json:"awake_crates_avg"`
	Entities       int               `json:"entities"` // at the end
	Encodings      []EncodingSummary `json:"encodings"`
	DeltaVsNaive   float64           `json:"delta_vs_naive"` // how many times smaller than naive
	DeltaVsFull    float64           `json:"delta_vs_full"`
	PerClient      PerClientSummary  `json:"per_client"`
	Staleness      StalenessSummary  `json:"staleness"`
	AcksTaken      int               `json:"acks_taken"`
	BadAcks        int               `json:"bad_acks"` // malformed or from an unknown address
	Clients        clientStats       `json:"clients"`  // summed over clients
	Network        condStats         `json:"network"`  // what the conditioners did, summed
	LoopbackLost   int               `json:"loopback_lost"`
	Desyncs        int               `json:"desyncs"`
	DecodeErrors   int               `json:"decode_errors"`
	BodyBits       int64             `json:"body_bits"`   // bits of the entity bodies sent (bitwire.Stats, top-level fields)
	LeafBits       int64             `json:"leaf_bits"`   // of which in leaf fields; the rest is structure
	TopFields      []FieldSummary    `json:"top_fields"`  // the costliest leaf fields
	PacketBits     int64             `json:"packet_bits"` // all datagrams sent, headers included
	// Split is where the bits of the datagrams went (replicate.PacketBits,
	// summed over the Peers), in kbit/s per client.
	Split       PacketSplit     `json:"packet_split_kbps"`
	Series      []SecondSummary `json:"series"`
	NodeClients []NodeSummary   `json:"node,omitempty"` // each Node client (-node)
	Attacks     AttackSummary   `json:"attacks"`

	// -web (web.go): the browsers' sessions, and the Go clients of the
	// page's server (-webclients, webclient.go).
	WebSessions []WebSummary       `json:"web_sessions,omitempty"`
	WebClients  []WebClientSummary `json:"web_clients,omitempty"`
}

// AttackSummary is what the forger and the spoofer did, and what the
// integrity mode, the Clients and the Peers made of it (inject.go).
type AttackSummary struct {
	Integrity      string      `json:"integrity"`
	TrailerBytes   int         `json:"trailer_bytes"` // per packet
	Injected       injectStats `json:"injected"`      // summed over clients
	SpoofedAcks    int         `json:"spoofed_acks"`  // sent by the spoofer
	AcksRefused    int         `json:"acks_refused"`  // by Peer.Ack: a part with a wrong token
	MissingReports int         `json:"missing_reports"`
	Refreshes      int         `json:"refreshes"`     // entities sent in full because their refresh was due
	RefreshTicks   int         `json:"refresh_ticks"` // the Peers' PeerConfig.Refresh
	RecoveryMean   float64     `json:"recovery_mean_ticks"`
	RecoveryMeanMs float64     `json:"recovery_mean_ms"`
	RecoveryMaxMs  float64     `json:"recovery_max_ms"`
}

// PacketSplit is replicate.PacketBits in kbit/s per client.
type PacketSplit struct {
	Header   float64 `json:"header"`
	Removals float64 `json:"removals"`
	IDs      float64 `json:"ids"`
	Kinds    float64 `json:"kinds"`
	Bodies   float64 `json:"bodies"`
	Padding  float64 `json:"padding"`
	Trailer  float64 `json:"trailer"`
}

// TickTimes is the server's wall-clock time per tick (stepping the world,
// publishing it, encoding and sending every client's packets).
type TickTimes struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// PerClientSummary is what each client received, against its budget.
type PerClientSummary struct {
	BudgetKbps     int     `json:"budget_kbps"`
	MeanKbps       float64 `json:"mean_kbps"`        // over clients and the run
	MaxSecondKbps  float64 `json:"max_second_kbps"`  // the most any client got in one simulated second
	OverBudget     int     `json:"over_budget"`      // client-seconds above the budget (never, by construction)
	FullEntities   int     `json:"full_entities"`    // entity states sent in full, all clients
	DeltaEntities  int     `json:"delta_entities"`   // as deltas
	RemovalEntries int     `json:"removal_entries"`  // removal entries sent (repeated until acknowledged)
	PacketsPerTick float64 `json:"packets_per_tick"` // per client
	// Each client's mean kbit/s and the most it got in one simulated
	// second, by client.
	Each []ClientKbps `json:"each"`
}

// ClientKbps is one client's bandwidth.
type ClientKbps struct {
	Mean      float64 `json:"mean_kbps"`
	MaxSecond float64 `json:"max_second_kbps"`
}

// StalenessSummary: how many ticks behind the server each entity is at a
// client, sampled once a second per client; near is within 20 m of the
// client's player (and the player itself), far the rest.
type StalenessSummary struct {
	Near Quantiles `json:"near"`
	Far  Quantiles `json:"far"`
}

// Quantiles of a staleness sample, in ticks.
type Quantiles struct {
	Samples int     `json:"samples"`
	Current float64 `json:"current"` // fraction 0 ticks behind
	P50     int     `json:"p50"`
	P95     int     `json:"p95"`
	Max     int     `json:"max"`
}

// ConfigSummary is the configuration in JSON-friendly units.
type ConfigSummary struct {
	Duration   string  `json:"duration"`
	BudgetKbps int     `json:"budget_kbps"`
	Clients    int     `json:"clients"`
	Node       int     `json:"node_clients"`
	Bots       int     `json:"bots"`
	Rate       int     `json:"rate"`
	Crates     int     `json:"crates"`
	Seed       uint64  `json:"seed"`
	Loss       float64 `json:"loss"`
	Latency    string  `json:"latency"`
	Jitter     string  `json:"jitter"`
	Dup        float64 `json:"dup"`
	Reorder    float64 `json:"reorder"`
	Forge      float64 `json:"forge"`
	Spoof      float64 `json:"spoof"`
	GoVersion  string  `json:"go_version,omitempty"`
}

// EncodingSummary is one row of the table.
type EncodingSummary struct {
	Name          string  `json:"name"`
	KbpsPerClient float64 `json:"kbps_per_client"` // kbit/s (1000 bits) of payload per client per simulated second
	BytesPerTick  float64 `json:"bytes_per_tick"`  // per client, all streams
	Packets       int     `json:"packets"`         // all clients
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

func summarize(cfg Config, srv *server, clients []*client, stats *bitwire.Stats, ticks int, wall time.Duration, late int, tickTimes []float64) Summary {
	s := Summary{
		Config: ConfigSummary{
			Duration: cfg.Duration.String(), BudgetKbps: cfg.BudgetKbps, Clients: cfg.Clients, Node: cfg.Node, Bots: cfg.Bots, Rate: cfg.Rate,
			Crates: cfg.Crates, Seed: cfg.Seed, Loss: cfg.Net.Loss, Latency: cfg.Net.Latency.String(),
			Jitter: cfg.Net.Jitter.String(), Dup: cfg.Net.Dup, Reorder: cfg.Net.Reorder,
			Forge: cfg.Inject.Forge, Spoof: cfg.Inject.Spoof,
		},
		Budget:      budget,
		Ticks:       ticks,
		WallSeconds: wall.Seconds(),
		LateTicks:   late,
		AcksTaken:   srv.acksTaken,
		BadAcks:     srv.badAcks,
		Entities:    srv.srv.Len(),
	}
	s.TickCPU.P50, s.TickCPU.P95, s.TickCPU.Max = percentilesF(tickTimes)
	if ticks > 0 {
		s.AwakeCrates = float64(srv.awakeSum) / float64(ticks)
	}
	n := float64(len(srv.peers)) // Go and Node clients
	seconds := float64(ticks) / float64(cfg.Rate)
	row := func(name string, a *encodingAcct) EncodingSummary {
		e := EncodingSummary{Name: name, Packets: a.packets, OverBudget: a.overBudget}
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
	if d := s.Encodings[2].KbpsPerClient; d > 0 {
		s.DeltaVsNaive = s.Encodings[0].KbpsPerClient / d
		s.DeltaVsFull = s.Encodings[1].KbpsPerClient / d
	}
	pc := &s.PerClient
	pc.BudgetKbps = cfg.BudgetKbps
	pc.MeanKbps = s.Encodings[2].KbpsPerClient
	for _, p := range srv.peers {
		var ck ClientKbps
		var total int64
		for sec, b := range p.perSecond {
			total += b
			inSec := min(cfg.Rate, ticks-sec*cfg.Rate)
			if inSec < cfg.Rate {
				continue // a partial last second
			}
			k := float64(b) * 8 / 1000
			ck.MaxSecond = max(ck.MaxSecond, k)
			pc.MaxSecondKbps = max(pc.MaxSecondKbps, k)
			if k > float64(cfg.BudgetKbps) {
				pc.OverBudget++
			}
		}
		if seconds > 0 {
			ck.Mean = float64(total) * 8 / 1000 / seconds
		}
		pc.Each = append(pc.Each, ck)
		st := p.p.Stats()
		pc.FullEntities += st.Full
		pc.DeltaEntities += st.Delta
		pc.RemovalEntries += st.Removals
		s.Attacks.MissingReports += st.Missing
		s.Attacks.Refreshes += st.Refresh
		if seconds > 0 {
			k := func(bits int64) float64 { return float64(bits) / 1000 / n / seconds }
			b, sp := st.Bits, &s.Split
			sp.Header += k(b.Header)
			sp.Removals += k(b.Removals)
			sp.IDs += k(b.IDs)
			sp.Kinds += k(b.Kinds)
			sp.Bodies += k(b.Bodies)
			sp.Padding += k(b.Padding)
			sp.Trailer += k(b.Trailer)
		}
	}
	if ticks > 0 {
		pc.PacketsPerTick = float64(s.Encodings[2].Packets) / n / float64(ticks)
	}
	var near, far []uint32
	for _, c := range clients {
		s.Clients = s.Clients.add(c.stats)
		s.Network = s.Network.add(c.cond.stats)
		near = append(near, c.near...)
		far = append(far, c.far...)
	}
	s.Staleness.Near, s.Staleness.Far = quantiles(near), quantiles(far)
	s.LoopbackLost = s.Encodings[2].Packets - s.Clients.Received
	s.Desyncs, s.DecodeErrors = s.Clients.Desyncs, s.Clients.Errors
	for _, c := range clients {
		s.Attacks.Injected = s.Attacks.Injected.add(c.inj)
	}
	at := &s.Attacks
	at.Integrity, at.TrailerBytes = cfg.Inject.Integrity.String(), cfg.Inject.Integrity.Overhead()
	at.SpoofedAcks, at.AcksRefused = srv.spoofed, srv.acksRefused
	at.RefreshTicks = cfg.refreshTicks()
	if e := at.Injected.Episodes - at.Injected.Open; e > 0 {
		tick := 1000 / float64(cfg.Rate)
		at.RecoveryMean = float64(at.Injected.RecoverySum) / float64(e)
		at.RecoveryMeanMs, at.RecoveryMaxMs = at.RecoveryMean*tick, float64(at.Injected.RecoveryMax)*tick
	}

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

func quantiles(v []uint32) Quantiles {
	q := Quantiles{Samples: len(v)}
	if len(v) == 0 {
		return q
	}
	iv := make([]int, len(v))
	cur := 0
	for i, x := range v {
		iv[i] = int(x)
		if x == 0 {
			cur++
		}
	}
	q.Current = float64(cur) / float64(len(v))
	q.P50, q.P95, q.Max = percentiles(iv)
	return q
}

func percentilesF(v []float64) (p50, p95, mx float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(p*float64(len(s))+0.9999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return rank(0.50), rank(0.95), s[len(s)-1]
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
	fmt.Fprintf(w, "bitwire-demo: %d clients + %d bots, %d crates, %d Hz, %s (%d ticks in %.1fs wall), seed %d\n",
		c.Clients, c.Bots, c.Crates, c.Rate, c.Duration, s.Ticks, s.WallSeconds, c.Seed)
	fmt.Fprintf(w, "network (each direction): loss %g, latency %s, jitter %s, dup %g, reorder %g\n",
		c.Loss, c.Latency, c.Jitter, c.Dup, c.Reorder)
	fmt.Fprintf(w, "world: %d entities (the match, the players, the crates; %.0f crates awake on average), one replicate stream per client,\n",
		s.Entities, s.AwakeCrates)
	fmt.Fprintf(w, "       budget %d kbit/s and %d-byte packets per client; server tick %.1f ms p50, %.1f ms p95, %.1f ms max (%.1f ms a tick at %d Hz)\n",
		c.BudgetKbps, s.Budget, s.TickCPU.P50, s.TickCPU.P95, s.TickCPU.Max, 1000/float64(c.Rate), c.Rate)
	fmt.Fprintf(w, "       CPU time of the whole process (server, %d clients and their checks): %.1f ms a tick; %d cores\n", c.Clients, s.CPUPerTick, runtime.NumCPU())
	if s.SlippedSeconds >= 0.05 {
		ticks := "ticks"
		if s.LateTicks == 1 {
			ticks = "tick"
		}
		fmt.Fprintf(w, "note: %d %s started more than a tick late (the machine could not keep up) and the schedule slipped %.1fs; bandwidth is per simulated second\n",
			s.LateTicks, ticks, s.SlippedSeconds)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-14s %10s %10s %9s   %-22s %s\n", "encoding", "kbit/s", "bytes", "packets", "bytes/packet", "over")
	fmt.Fprintf(w, "%-14s %10s %10s %9s   %6s %6s %8s %s\n", "", "per client", "per tick", "", "p50", "p95", "max", fmt.Sprintf("%d B", s.Budget))
	for _, e := range s.Encodings {
		fmt.Fprintf(w, "%-14s %10.1f %10.0f %9d   %6d %6d %8d %d\n",
			e.Name, e.KbpsPerClient, e.BytesPerTick, e.Packets, e.P50, e.P95, e.Max, e.OverBudget)
	}
	pc := s.PerClient
	fmt.Fprintf(w, "\ndelta is %.1f× smaller than naive and %.1f× smaller than full; %.0f%% of the entity states sent were deltas\n",
		s.DeltaVsNaive, s.DeltaVsFull, 100*float64(pc.DeltaEntities)/float64(max(pc.DeltaEntities+pc.FullEntities, 1)))
	fmt.Fprintf(w, "per client: %.1f kbit/s on average, at most %.1f in one second (budget %d: %d seconds over), %.2f packets a tick\n",
		pc.MeanKbps, pc.MaxSecondKbps, pc.BudgetKbps, pc.OverBudget, pc.PacketsPerTick)
	if len(pc.Each) > 0 {
		means := make([]float64, len(pc.Each))
		for i, e := range pc.Each {
			means[i] = e.Mean
		}
		lo, hi := slices.Min(means), slices.Max(means)
		fmt.Fprintf(w, "            each client's mean: %.1f to %.1f kbit/s (-json lists every client)\n", lo, hi)
	}
	st := s.Staleness
	fmt.Fprintf(w, "staleness (ticks behind the server, sampled once a second per client):\n")
	for _, q := range []struct {
		name string
		q    Quantiles
	}{{"near (≤20 m)", st.Near}, {"far", st.Far}} {
		fmt.Fprintf(w, "  %-13s p50 %d, p95 %d, max %d; %.1f%% current (%d samples)\n", q.name, q.q.P50, q.q.P95, q.q.Max, 100*q.q.Current, q.q.Samples)
	}

	for _, nc := range s.NodeClients {
		fmt.Fprintf(w, "node client %d: %d received, %d dropped, %d accepted, %d states checked (%d unchecked), %d stale, %d without baseline, %d recovering; %d acks sent, %d dropped; desyncs: %d, errors: %d\n",
			nc.ID, nc.Received, nc.Dropped, nc.Accepted, nc.Checked, nc.Unchecked, nc.Stale, nc.NoBaseline, nc.Recovering, nc.AcksSent, nc.AcksDropped, nc.Desyncs, nc.Errors)
	}
	cl, nw := s.Clients, s.Network
	fmt.Fprintf(w, "clients: %d datagrams received (%d lost on loopback), %d dropped, %d duplicated, %d held back by the conditioner\n",
		cl.Received, s.LoopbackLost, nw.Dropped, nw.Duplicated, nw.Reordered)
	fmt.Fprintf(w, "         %d accepted, %d stale, %d without baseline; %d entity states checked; acks: %d sent, %d dropped, %d reached the server\n",
		cl.Accepted, cl.Stale, cl.NoBaseline, cl.Checked, cl.AcksSent, nw.DroppedAcks, s.AcksTaken)
	status := "OK"
	if s.Desyncs > 0 || s.DecodeErrors > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(w, "         desyncs: %d, decode errors: %d, removed entities seen held at samples: %d  %s\n", s.Desyncs, s.DecodeErrors, cl.Lingering, status)
	printAttacks(w, s)

	if len(s.TopFields) > 0 && s.BodyBits > 0 {
		fmt.Fprintf(w, "\nfields that cost the most bits (entity bodies sent, all clients; bitwire.Stats):\n")
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
		fmt.Fprintf(w, "structure: changed bits of structs, presence bits of the kind pointers. The table counts every body encoded,\n")
		fmt.Fprintf(w, "including those a packet then had no room for.\n")
		if sp := s.Split; sp.Header > 0 {
			all := sp.Header + sp.Removals + sp.IDs + sp.Kinds + sp.Bodies + sp.Padding + sp.Trailer
			fmt.Fprintf(w, "packets sent, kbit/s per client (replicate.PacketBits): bodies %.2f (%.1f%%), headers %.2f, ids %.2f, kinds and baselines %.2f,\n",
				sp.Bodies, 100*sp.Bodies/all, sp.Header, sp.IDs, sp.Kinds)
			fmt.Fprintf(w, "                                                        removals %.2f, padding %.2f, trailers %.2f\n", sp.Removals, sp.Padding, sp.Trailer)
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
		fmt.Fprintf(w, " (%.1f%% of the median datagram)", 100*float64(a.TrailerBytes)/float64(d))
	}
	fmt.Fprintln(w)
	if s.Config.Forge > 0 {
		fmt.Fprintf(w, "forger:  %d forged and %d corrupted datagrams injected; %d accepted, %d refused\n",
			in.Forged, in.Corrupted, in.Accepted, in.Refused)
		fmt.Fprintf(w, "         %d entities held wrong, %d back to the server's state after %.1f ticks (%.0f ms) on average, %d ticks (%.0f ms) at most;\n",
			in.Episodes, in.Episodes-in.Open, a.RecoveryMean, a.RecoveryMeanMs, in.RecoveryMax, a.RecoveryMaxMs)
		fmt.Fprintf(w, "         %d still wrong at the end, the oldest for %d ticks (the refresh bound: %d ticks and a round trip)\n", in.Open, in.OpenMaxAge, a.RefreshTicks)
		fmt.Fprintf(w, "         longest run of genuine packets refused: %d (%d while re-anchoring); %d missing-baseline reports taken; %d entities refreshed in full\n",
			in.RefusedRunMax, s.Clients.Recovering, a.MissingReports, a.Refreshes)
	}
	if s.Config.Spoof > 0 {
		fmt.Fprintf(w, "spoofer: %d acks with guessed tokens sent; %d acks (or parts) refused by the Peers (wrong token)\n", a.SpoofedAcks, a.AcksRefused)
	}
}

// addNodeClients adds the Node clients' counts to the summary: their
// desyncs and errors count with the Go clients', and the packets they
// received are not lost on the loopback.
func addNodeClients(s *Summary, ncs []*nodeClient) {
	for _, nc := range ncs {
		s.NodeClients = append(s.NodeClients, nc.sum)
		s.Desyncs += nc.sum.Desyncs
		s.DecodeErrors += nc.sum.Errors
		s.LoopbackLost -= nc.sum.Received
	}
}
