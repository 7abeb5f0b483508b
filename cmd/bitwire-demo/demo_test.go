package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/snapshot"
)

// The end-to-end test: the demo's server and clients over UDP on loopback
// for 3 seconds with 10% loss (both ways: snapshots and acks). Every
// accepted snapshot must equal the server's state of its tick, and the
// deltas must cost at least 5× less than the naive encoding.
func TestDemoLossy(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 3 * time.Second
	cfg.Net.Loss = 0.10
	if raceEnabled || testing.Short() {
		// The race detector slows everything ~10×: a smaller world keeps
		// the run on schedule. Same code paths.
		cfg.Clients, cfg.Crates = 4, 120
	}
	start := time.Now()
	s, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ticks in %.1fs (run %.1fs): naive %.0f, full %.0f, delta %.1f kbit/s per client (%.1f× below naive); %d accepted, %d dropped, %d acks dropped, %d without baseline",
		s.Ticks, s.WallSeconds, time.Since(start).Seconds(), s.Encodings[0].KbpsPerClient, s.Encodings[1].KbpsPerClient,
		s.Encodings[2].KbpsPerClient, s.DeltaVsNaive, s.Clients.Accepted, s.Network.Dropped, s.Network.DroppedAcks, s.Clients.NoBaseline)
	if s.Ticks != 90 {
		t.Errorf("ran %d ticks, want 90", s.Ticks)
	}
	if s.Desyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("%d desyncs, %d decode errors", s.Desyncs, s.DecodeErrors)
	}
	if s.Clients.Unchecked != 0 {
		t.Errorf("%d accepted snapshots could not be checked", s.Clients.Unchecked)
	}
	if s.DeltaVsNaive < 5 {
		t.Errorf("delta is only %.2f× below naive, want ≥ 5×", s.DeltaVsNaive)
	}
	// The loss really happened, and the protocol rode over it.
	sent := s.Encodings[2].Packets
	if lost := float64(s.Network.Dropped) / float64(s.Network.In); lost < 0.06 || lost > 0.14 {
		t.Errorf("conditioner dropped %.3f of the snapshots, want about 0.10", lost)
	}
	if s.Network.DroppedAcks == 0 {
		t.Error("no ack was dropped")
	}
	if s.Clients.Accepted < sent*8/10 {
		t.Errorf("only %d of %d snapshots accepted", s.Clients.Accepted, sent)
	}
	if e := s.Encodings[2]; e.Delta < e.Packets*9/10 || e.Max > budget {
		t.Errorf("delta encoding: %d of %d packets were deltas, max %d bytes", e.Delta, e.Packets, e.Max)
	}
	if s.Encodings[0].OverBudget == 0 || s.Encodings[1].OverBudget != 0 {
		t.Errorf("over budget: naive %d, full %d", s.Encodings[0].OverBudget, s.Encodings[1].OverBudget)
	}
	if len(s.TopFields) == 0 || s.TopFields[0].Bits == 0 {
		t.Error("no per-field accounting")
	}
	if len(s.Series) != 3 {
		t.Errorf("%d seconds in the series, want 3", len(s.Series))
	}
	// The report renders.
	var b bytes.Buffer
	printReport(&b, &s)
	for _, want := range []string{"naive binary", "bitwire full", "bitwire delta", "desyncs: 0", "Crates[].Rot"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// A harsher network, briefly: latency, jitter, duplicates and reordering
// both ways. Late and duplicated snapshots are refused as stale, never
// accepted out of order, and nothing desyncs.
func TestDemoHarshNetwork(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = time.Second
	cfg.Clients, cfg.Crates = 4, 100
	cfg.Net = NetConfig{Loss: 0.05, Latency: 30 * time.Millisecond, Jitter: 20 * time.Millisecond, Dup: 0.05, Reorder: 0.05}
	s, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Desyncs != 0 || s.DecodeErrors != 0 || s.Clients.Unchecked != 0 {
		t.Errorf("%d desyncs, %d decode errors, %d unchecked", s.Desyncs, s.DecodeErrors, s.Clients.Unchecked)
	}
	if s.Network.Duplicated == 0 || s.Network.Reordered == 0 || s.Clients.Stale == 0 {
		t.Errorf("duplicated %d, reordered %d, stale %d: the conditioner did nothing?", s.Network.Duplicated, s.Network.Reordered, s.Clients.Stale)
	}
	if s.Clients.Accepted == 0 || s.DeltaVsNaive < 5 {
		t.Errorf("accepted %d, delta %.1f× below naive", s.Clients.Accepted, s.DeltaVsNaive)
	}
}

// run ends every goroutine it started.
func TestRunLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := DefaultConfig()
	cfg.Duration, cfg.Clients, cfg.Crates = 200*time.Millisecond, 3, 20
	if _, err := run(cfg); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after run, %d before", n, before)
	}
}

func TestConfigRejected(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Clients = 0 },
		func(c *Config) { c.Clients = 70 },
		func(c *Config) { c.Rate = 0 },
		func(c *Config) { c.Net.Loss = 1 },
		func(c *Config) { c.Net.Dup = -0.1 },
		func(c *Config) { c.Net.Reorder = math.NaN() },
		func(c *Config) { c.Net.Latency = -time.Second },
		func(c *Config) { c.Duration = 0 },
	} {
		cfg := DefaultConfig()
		mod(&cfg)
		if _, err := run(cfg); err == nil {
			t.Errorf("run accepted %+v", cfg)
		}
	}
}

// Same seed, same world; another seed, another world.
func TestWorldDeterministic(t *testing.T) {
	c := bitwire.MustFor[Shard]()
	trace := func(seed uint64) [][]byte {
		w := newWorld(seed, 30, 20, 300)
		sh := make([]Shard, 5)
		var out [][]byte
		for range 150 {
			w.step()
			w.fill(sh)
			for k := range sh {
				b, err := c.Marshal(&sh[k])
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, b)
			}
		}
		return out
	}
	a, b, other := trace(7), trace(7), trace(8)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("seed 7 gave two worlds (packet %d)", i)
		}
	}
	same := 0
	for i := range a {
		if bytes.Equal(a[i], other[i]) {
			same++
		}
	}
	if same == len(a) {
		t.Error("seeds 7 and 8 gave the same world")
	}
}

// The world has motion, rest and churn: crates fall asleep and wake,
// players die and respawn, crates are replaced; every state encodes.
func TestWorldIsLively(t *testing.T) {
	w := newWorld(1, 30, 20, 300)
	sh := make([]Shard, 5)
	c := bitwire.MustFor[Shard]()
	ids := map[uint32]bool{}
	crateIDs := map[uint32]bool{}
	minAwake, maxAwake := 300, 0
	for tick := range 30 * 20 {
		w.step()
		w.fill(sh)
		for k := range sh {
			for _, cr := range sh[k].Crates {
				crateIDs[cr.ID] = true
			}
		}
		for _, p := range sh[0].Players {
			ids[p.ID] = true
		}
		if tick%10 == 0 {
			for k := range sh {
				if _, err := c.Marshal(&sh[k]); err != nil {
					t.Fatalf("tick %d stream %d: %v", tick, k, err)
				}
			}
		}
		if tick > 30*5 {
			minAwake, maxAwake = min(minAwake, w.awake()), max(maxAwake, w.awake())
		}
	}
	if len(ids) <= 20 {
		t.Errorf("no player respawned in 20 s (%d ids)", len(ids))
	}
	if len(crateIDs) <= 300 {
		t.Errorf("no crate was replaced in 20 s")
	}
	if minAwake > 30 || maxAwake < 10 {
		t.Errorf("awake crates between %d and %d after 5 s: want most asleep, some moving", minAwake, maxAwake)
	}
}

// A crate stream at its largest, with the costliest values (huge ids, all
// crates new or all changed), fits the packet budget, full or delta, with
// a state hash in every packet and the largest trailer.
func TestStreamSizing(t *testing.T) {
	crateBits := bitwire.MustFor[Crate]().MaxBits()
	for _, n := range []int{1, 75, 300, 1000, 5000} {
		for _, mode := range []snapshot.Mode{snapshot.ModeNone, snapshot.ModeMAC} {
			cfg := DefaultConfig()
			cfg.Inject.Integrity = mode
			k, per := streamsFor(n, budget-mode.Overhead(), crateBits)
			if k*per < n {
				t.Fatalf("%d crates: %d streams of %d", n, k, per)
			}
			worst := func(id0 uint32, shift float32) Shard {
				s := Shard{}
				for i := range per {
					s.Crates = append(s.Crates, Crate{
						ID:  id0 + uint32(i),
						Pos: CratePos{X: -127 + shift + float32(i)*0.37, Y: 61 - shift, Z: 127 - shift - float32(i)*0.41},
						Rot: [4]float32{0.5, -0.5, 0.5, 0.5},
					})
				}
				return s
			}
			base := worst(math.MaxUint32-1000, 0)
			moved := worst(math.MaxUint32-1000, 50)
			moved.Crates[0].Rot = [4]float32{0, 0, 0, 1}
			replaced := worst(math.MaxUint32-500, 50)
			opts := append([]snapshot.Option{snapshot.WithBudget(budget - streamPrefix), snapshot.WithStateHash(1)}, streamOptions(cfg, 0)...)
			snd, err := snapshot.NewSender(bitwire.MustFor[Shard](), opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range []*Shard{&base, &moved, &replaced} {
				pkt, err := snd.Encode(nil, uint32(i+1), st)
				if err != nil {
					t.Fatalf("%v: %d crates, %d a stream, packet %d: %v", mode, n, per, i, err)
				}
				if h, _ := snapshot.ParseHeader(pkt); i > 0 && !h.Delta {
					t.Fatalf("packet %d is not a delta", i)
				}
				snd.Ack(uint32(i + 1))
			}
		}
	}
	if got := stream0Bits(maxPlayers); (got+7)/8+snapshot.MinBudget-1+streamPrefix > budget {
		t.Errorf("%d players take %d bits", maxPlayers, got)
	}
}

func TestNaiveSizes(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{{naiveHeader{}, naiveHeaderSize}, {naiveMatch{}, naiveMatchSize}, {naivePlayer{}, naivePlayerSize}, {naiveCrate{}, naiveCrateSize}} {
		if got := binary.Size(c.v); got != c.want {
			t.Errorf("%T: %d bytes, want %d", c.v, got, c.want)
		}
	}
	w := newWorld(3, 30, 10, 40)
	sh := make([]Shard, 3)
	w.step()
	w.fill(sh)
	for k := range sh {
		if got, want := len(appendNaive(nil, k, 1, &sh[k])), naiveSize(&sh[k]); got != want {
			t.Errorf("stream %d: %d bytes, naiveSize says %d", k, got, want)
		}
	}
}

func TestConditioner(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newConditioner(NetConfig{Loss: 0.25, Dup: 0.1, Latency: 50 * time.Millisecond, Jitter: 10 * time.Millisecond}, 1)
	const n = 4000
	for i := range n {
		c.admit(now, inbound, []byte{byte(i)})
	}
	if _, ok := c.pop(now.Add(39 * time.Millisecond)); ok {
		t.Error("a packet came out before latency-jitter")
	}
	got := 0
	for {
		if _, ok := c.pop(now.Add(61 * time.Millisecond)); !ok {
			break
		}
		got++
	}
	if _, ok := c.next(); ok {
		t.Error("packets left after latency+jitter")
	}
	if f := float64(c.stats.Dropped) / n; math.Abs(f-0.25) > 0.03 {
		t.Errorf("dropped %.3f, want 0.25", f)
	}
	if got != n-c.stats.Dropped+c.stats.Duplicated {
		t.Errorf("delivered %d, want %d", got, n-c.stats.Dropped+c.stats.Duplicated)
	}

	// Reordering holds packets back one to three steps; order is kept
	// otherwise.
	c = newConditioner(NetConfig{Reorder: 0.2, ReorderStep: 10 * time.Millisecond}, 2)
	for i := range 100 {
		c.admit(now.Add(time.Duration(i)*time.Millisecond), inbound, []byte{byte(i)})
	}
	var order []int
	for {
		q, ok := c.pop(now.Add(time.Second))
		if !ok {
			break
		}
		order = append(order, int(q.data[0]))
	}
	inversions := 0
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			inversions++
		}
	}
	if len(order) != 100 || inversions == 0 || c.stats.Reordered == 0 {
		t.Errorf("%d delivered, %d inversions, %d reordered", len(order), inversions, c.stats.Reordered)
	}
}

func TestAckRoundTrip(t *testing.T) {
	sa := snapshot.Ack{Tick: 0xDEADBEEF, Token: 0x1234, MissingBaseline: true}
	b := appendAck(nil, 513, 3, sa)
	a, ok := parseAck(b)
	if !ok || a != (ack{client: 513, stream: 3, ack: sa}) || len(b) != ackSize {
		t.Errorf("parseAck(appendAck(...)) = %+v, %v", a, ok)
	}
	reserved := append([]byte(nil), b...)
	reserved[4] |= 0x80
	for _, bad := range [][]byte{nil, b[:7], b[:ackSize-1], append(b, 0), append([]byte{'B'}, b[1:]...), reserved} {
		if _, ok := parseAck(bad); ok {
			t.Errorf("parseAck(%x) accepted", bad)
		}
	}
}

func TestPercentiles(t *testing.T) {
	v := make([]int, 100)
	for i := range v {
		v[i] = 100 - i
	}
	if p50, p95, mx := percentiles(v); p50 != 50 || p95 != 95 || mx != 100 {
		t.Errorf("percentiles = %d %d %d, want 50 95 100", p50, p95, mx)
	}
	if p50, p95, mx := percentiles(nil); p50|p95|mx != 0 {
		t.Error("percentiles of nothing")
	}
}

// The chart is well-formed XML with the three lines and a legend.
func TestChart(t *testing.T) {
	s := Summary{Config: ConfigSummary{Clients: 2, Crates: 10, Rate: 30}, DeltaVsNaive: 20, DeltaVsFull: 7,
		Encodings: []EncodingSummary{{KbpsPerClient: 2500}, {KbpsPerClient: 800}, {KbpsPerClient: 100}}}
	for i := range 10 {
		s.Series = append(s.Series, SecondSummary{Second: i + 1, Naive: 2500, Full: 800, Delta: 50 + 30*float64(i%3)})
	}
	var b bytes.Buffer
	if err := writeChart(&b, &s); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	lines, texts := 0, []string{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "polyline" {
				lines++
			}
		case xml.CharData:
			texts = append(texts, string(e))
		}
	}
	all := strings.Join(texts, "|")
	if lines != 3 {
		t.Errorf("%d polylines, want 3", lines)
	}
	for _, want := range []string{"naive binary", "bitwire full", "bitwire delta", "kbit/s per client (log scale)", "time (simulated seconds)"} {
		if !strings.Contains(all, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

// The check can fail: a state altered after the server kept it as the
// truth is caught by every client that accepts it, and only that tick.
func TestDesyncIsCaught(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration, cfg.Clients, cfg.Crates = 500*time.Millisecond, 3, 30
	var log bytes.Buffer
	cfg.Log = &log
	cfg.tamper = func(tick uint32, shards []Shard) {
		if tick == 5 {
			shards[1].Crates[0].Pos.X += 0.5
		}
	}
	s, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Desyncs != cfg.Clients {
		t.Errorf("%d desyncs, want one per client (%d)", s.Desyncs, cfg.Clients)
	}
	if !strings.Contains(log.String(), "DESYNC: client 0 stream 1 tick 5") {
		t.Errorf("log:\n%s", log.String())
	}
}

// The command: flags, -json on stdout, -chart, the exit status.
func TestCommand(t *testing.T) {
	chart := t.TempDir() + "/c.svg"
	var out, errb bytes.Buffer
	code := realMain([]string{"-duration", "300ms", "-clients", "2", "-crates", "20", "-loss", "0.05", "-json", "-chart", chart}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	var s Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("-json output: %v\n%s", err, out.String())
	}
	if s.Ticks != 9 || s.Config.Clients != 2 || s.Config.Loss != 0.05 || len(s.Encodings) != 3 {
		t.Errorf("summary: %+v", s)
	}
	svg, err := os.ReadFile(chart)
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("chart: %v", err)
	}

	out.Reset()
	if code := realMain([]string{"-duration", "200ms", "-clients", "2", "-crates", "10"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "bitwire delta") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
	if code := realMain([]string{"-clients", "0"}, &out, &errb); code != 2 {
		t.Errorf("-clients 0: exit %d, want 2", code)
	}
	if code := realMain([]string{"-nosuchflag"}, &out, &errb); code != 2 {
		t.Errorf("-nosuchflag: exit %d, want 2", code)
	}
}

// Forged and corrupted datagrams and spoofed acks: with a MAC none gets
// through and nothing desyncs; without one, forgeries that get through are
// wrong for a tick or so each, and spoofed acks are refused either way.
func TestDemoAttacks(t *testing.T) {
	for _, mode := range []snapshot.Mode{snapshot.ModeMAC, snapshot.ModeNone} {
		cfg := DefaultConfig()
		cfg.Duration, cfg.Clients, cfg.Crates = time.Second, 3, 60
		cfg.Net.Loss = 0.05
		cfg.Inject = InjectConfig{Forge: 0.1, Spoof: 0.1, Integrity: mode}
		s, err := run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, in := s.Attacks, s.Attacks.Injected
		t.Logf("%v: %d forged, %d corrupted, %d accepted; %d desyncs in %d episodes, recovery mean %.1f max %d ticks; %d spoofed acks, %d refused",
			mode, in.Forged, in.Corrupted, in.Accepted, s.Desyncs, in.Episodes, a.RecoveryMean, in.RecoveryMax, a.SpoofedAcks, a.AcksRefused)
		if in.Forged == 0 || in.Corrupted == 0 || a.SpoofedAcks == 0 {
			t.Errorf("the attackers did nothing: %+v", a)
		}
		if a.AcksRefused < a.SpoofedAcks || s.DecodeErrors != 0 {
			t.Errorf("%d of %d spoofed acks refused, %d decode errors", a.AcksRefused, a.SpoofedAcks, s.DecodeErrors)
		}
		if mode == snapshot.ModeMAC && (in.Accepted != 0 || s.Desyncs != 0 || in.Episodes != 0) {
			t.Errorf("MAC: %d injected datagrams accepted, %d desyncs", in.Accepted, s.Desyncs)
		}
		if mode == snapshot.ModeNone && in.RecoveryMax > snapshot.DefaultRecoverAfter+snapshot.DefaultHashEvery+4 {
			t.Errorf("a wrong state lasted %d ticks", in.RecoveryMax)
		}
		if s.Clients.Accepted < s.Encodings[2].Packets*8/10 {
			t.Errorf("only %d of %d genuine snapshots accepted", s.Clients.Accepted, s.Encodings[2].Packets)
		}
	}
	var out, errb bytes.Buffer
	if code := realMain([]string{"-integrity", "rot13"}, &out, &errb); code != 2 {
		t.Errorf("-integrity rot13: exit %d, want 2", code)
	}
}
