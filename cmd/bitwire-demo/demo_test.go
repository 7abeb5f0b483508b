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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
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
	t.Logf("%d ticks in %.1fs (run %.1fs): naive %.0f, full %.0f, delta %.1f kbit/s per client (%.1f× below naive); %d accepted, %d dropped, %d acks dropped, %d without baseline; staleness near p95 %d, far p95 %d",
		s.Ticks, s.WallSeconds, time.Since(start).Seconds(), s.Encodings[0].KbpsPerClient, s.Encodings[1].KbpsPerClient,
		s.Encodings[2].KbpsPerClient, s.DeltaVsNaive, s.Clients.Accepted, s.Network.Dropped, s.Network.DroppedAcks, s.Clients.NoBaseline,
		s.Staleness.Near.P95, s.Staleness.Far.P95)
	if s.Ticks != 90 {
		t.Errorf("ran %d ticks, want 90", s.Ticks)
	}
	if s.Desyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("%d desyncs, %d decode errors", s.Desyncs, s.DecodeErrors)
	}
	if s.Clients.Checked < s.Clients.Accepted {
		t.Errorf("only %d entity states checked for %d packets", s.Clients.Checked, s.Clients.Accepted)
	}
	if s.PerClient.OverBudget != 0 || s.PerClient.MaxSecondKbps > float64(cfg.BudgetKbps) {
		t.Errorf("over budget: %d client-seconds, at most %.1f kbit/s", s.PerClient.OverBudget, s.PerClient.MaxSecondKbps)
	}
	if len(s.PerClient.Each) != cfg.Clients {
		t.Errorf("%d clients' bandwidth listed, want %d", len(s.PerClient.Each), cfg.Clients)
	}
	for i, c := range s.PerClient.Each {
		if c.MaxSecond > float64(cfg.BudgetKbps) || c.Mean <= 0 {
			t.Errorf("client %d: %+v, budget %d kbit/s", i, c, cfg.BudgetKbps)
		}
	}
	if s.Staleness.Near.Samples == 0 || s.Staleness.Far.Samples == 0 {
		t.Errorf("no staleness samples: %+v", s.Staleness)
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
	if pc := s.PerClient; pc.DeltaEntities < 4*pc.FullEntities || s.Encodings[2].Max > budget {
		t.Errorf("delta encoding: %d delta and %d full entity states, max %d bytes", pc.DeltaEntities, pc.FullEntities, s.Encodings[2].Max)
	}
	for _, e := range s.Encodings {
		if e.OverBudget != 0 || e.Max > budget {
			t.Errorf("%s: %d packets over budget, max %d bytes", e.Name, e.OverBudget, e.Max)
		}
	}
	if s.Encodings[0].Packets <= s.Encodings[2].Packets {
		t.Errorf("the naive world takes %d datagrams, delta %d", s.Encodings[0].Packets, s.Encodings[2].Packets)
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
	for _, want := range []string{"naive binary", "bitwire full", "bitwire delta", "desyncs: 0", "Crate.Rot", "staleness", "near (≤20 m)"} {
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
	if s.Desyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("%d desyncs, %d decode errors", s.Desyncs, s.DecodeErrors)
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

// states runs a world for n ticks through a replicate.Server and returns,
// tick by tick, every entity's encoding in id order.
func states(t *testing.T, seed uint64, players, crates, n int, each func(tick int, srv *replicate.Server[Entity])) [][]byte {
	c := bitwire.MustFor[Entity]()
	srv, err := replicate.NewServer(c)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(seed, 30, players, crates)
	pb := newPublisher(srv, w)
	var out [][]byte
	for tick := 1; tick <= n; tick++ {
		if err := srv.Advance(uint32(tick)); err != nil {
			t.Fatal(err)
		}
		w.step()
		if err := pb.publish(w, func(uint32) {}, func(uint32) {}); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		var ids []uint32
		srv.Range(func(id uint32, _ *Entity) bool { ids = append(ids, id); return true })
		slices.Sort(ids)
		var b []byte
		for _, id := range ids {
			e, _ := srv.Get(id)
			b = binary.LittleEndian.AppendUint32(b, id)
			if b, err = c.Append(b, e); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, b)
		if each != nil {
			each(tick, srv)
		}
	}
	return out
}

// Same seed, same world; another seed, another world.
func TestWorldDeterministic(t *testing.T) {
	a, b, other := states(t, 7, 20, 300, 150, nil), states(t, 7, 20, 300, 150, nil), states(t, 8, 20, 300, 150, nil)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("seed 7 gave two worlds (tick %d)", i+1)
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
// players die and respawn, crates are replaced; the server's entities are
// the world's (one match, the living players, every crate).
func TestWorldIsLively(t *testing.T) {
	players, crates := map[uint32]bool{}, map[uint32]bool{}
	states(t, 1, 20, 300, 30*20, func(tick int, srv *replicate.Server[Entity]) {
		n := 0
		srv.Range(func(id uint32, e *Entity) bool {
			n++
			switch {
			case id == matchID:
				if e.Match == nil {
					t.Fatalf("entity 0 is not the match")
				}
			case isPlayerID(id):
				players[id] = true
				if e.Player == nil {
					t.Fatalf("player entity %d is %+v", id, e)
				}
			default:
				crates[id] = true
				if e.Crate == nil {
					t.Fatalf("crate entity %d is %+v", id, e)
				}
			}
			return true
		})
		if n < 1+300 || n > 1+20+300 {
			t.Fatalf("tick %d: %d entities", tick, n)
		}
	})
	if len(players) <= 20 {
		t.Errorf("no player respawned in 20 s (%d ids)", len(players))
	}
	if len(crates) <= 300 {
		t.Errorf("no crate was replaced in 20 s")
	}
	wd := newWorld(1, 30, 20, 300)
	minAwake, maxAwake := 300, 0
	for tick := range 30 * 20 {
		wd.step()
		if tick > 30*5 {
			minAwake, maxAwake = min(minAwake, wd.awake()), max(maxAwake, wd.awake())
		}
	}
	if minAwake > 30 || maxAwake < 10 {
		t.Errorf("awake crates between %d and %d after 5 s: want most asleep, some moving", minAwake, maxAwake)
	}
}

func TestNaiveSizes(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{{naiveMatch{}, naiveMatchSize}, {naivePlayer{}, naivePlayerSize}, {naiveCrate{}, naiveCrateSize}} {
		if got := binary.Size(c.v); got != c.want {
			t.Errorf("%T: %d bytes, want %d", c.v, got, c.want)
		}
	}
}

// Priorities: the own player first by far, then nearer before farther,
// players before crates at the same distance.
func TestPriority(t *testing.T) {
	own, x, z := uint32(playerEntityID(3)), float32(10), float32(-5)
	pr := priorityFunc(&own, &x, &z)
	near := &Entity{Crate: &Crate{Pos: CratePos{X: 12, Z: -5}}}
	far := &Entity{Crate: &Crate{Pos: CratePos{X: 110, Z: -5}}}
	nearPlayer := &Entity{Player: &Player{Pos: Pos{X: 12, Z: -5}}}
	me := &Entity{Player: &Player{Pos: Pos{X: 10, Z: -5}}}
	if !(pr(own, me) > 1000*pr(1, nearPlayer) && pr(1, nearPlayer) > pr(2, near) && pr(2, near) > 10*pr(3, far)) {
		t.Errorf("priorities: own %g, near player %g, near crate %g, far crate %g", pr(own, me), pr(1, nearPlayer), pr(2, near), pr(3, far))
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
	want := replicate.Ack{Seq: 0xDEADBEEF, Mask: 5}
	b := appendAck(nil, 513, want)
	a, ok := parseAck(b)
	if !ok || a != (ack{client: 513, ack: want}) {
		t.Errorf("parseAck(appendAck(...)) = %+v, %v", a, ok)
	}
	bad0 := append([]byte{'B'}, b[1:]...)
	for _, bad := range [][]byte{nil, b[:7], append(b, 0), bad0} {
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
	cfg.tamper = func(tick uint32, srv *replicate.Server[Entity]) {
		if tick == 5 {
			// The match's clock changes without the truth knowing: every
			// client is sent it (the match is near everyone) and catches it.
			e, _ := srv.Get(matchID)
			m := *e.Match
			m.Clock += 7
			if _, err := srv.Set(matchID, &Entity{Match: &m}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Each client catches the altered state when it receives it, and once
	// more at the final check if it still holds it.
	if s.Desyncs < cfg.Clients {
		t.Errorf("%d desyncs, want at least one per client (%d)", s.Desyncs, cfg.Clients)
	}
	if !strings.Contains(log.String(), "DESYNC: client 0 entity 0 tick 5") {
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

// Forged and corrupted datagrams and spoofed acks on the replication
// streams: with a MAC none gets through and nothing desyncs; with a CRC no
// corrupted one does; without a trailer, forgeries that get through leave
// wrong states that the Peers' full refresh (here every 20 ticks) replaces:
// once the forger stops, every wrong state is gone within the refresh and a
// round trip. Spoofed acks are refused in every mode.
func TestDemoAttacks(t *testing.T) {
	for _, mode := range []snapshot.Mode{snapshot.ModeMAC, snapshot.ModeChecksum, snapshot.ModeNone} {
		cfg := DefaultConfig()
		cfg.Duration, cfg.Clients, cfg.Crates = 2500*time.Millisecond, 3, 60
		cfg.Net.Loss = 0.05
		cfg.Inject = InjectConfig{Forge: 0.3, Spoof: 0.1, Integrity: mode}
		cfg.refresh, cfg.forgeUntil = 20, 35
		s, err := run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, in := s.Attacks, s.Attacks.Injected
		t.Logf("%v: %d forged, %d corrupted, %d accepted; %d desyncs, %d entities held wrong (%d open), recovery mean %.1f max %d ticks; %d spoofed acks, %d acks refused; %d refreshes",
			mode, in.Forged, in.Corrupted, in.Accepted, s.Desyncs, in.Episodes, in.Open, a.RecoveryMean, in.RecoveryMax, a.SpoofedAcks, a.AcksRefused, a.Refreshes)
		if in.Forged == 0 || in.Corrupted == 0 || a.SpoofedAcks == 0 {
			t.Errorf("the attackers did nothing: %+v", a)
		}
		if a.AcksRefused < a.SpoofedAcks || s.DecodeErrors != 0 {
			t.Errorf("%d of %d spoofed acks refused, %d decode errors", a.AcksRefused, a.SpoofedAcks, s.DecodeErrors)
		}
		switch mode {
		case snapshot.ModeMAC:
			if in.Accepted != 0 || s.Desyncs != 0 || in.Episodes != 0 {
				t.Errorf("MAC: %d injected datagrams accepted, %d desyncs", in.Accepted, s.Desyncs)
			}
		default:
			if in.Open != 0 {
				t.Errorf("%v: %d entities still wrong %d ticks after the forger stopped", mode, in.Open, s.Ticks-35)
			}
			// The refresh and a round trip (resends under 5% loss).
			if in.RecoveryMax > cfg.refresh+15 {
				t.Errorf("%v: a wrong state lasted %d ticks, refresh %d", mode, in.RecoveryMax, cfg.refresh)
			}
		}
		// With a MAC only the path's loss costs packets; without one, each
		// forged sequence number that gets through costs a run of
		// RecoverAfter stale ones.
		if mode == snapshot.ModeMAC && s.Clients.Accepted < s.Encodings[2].Packets*8/10 {
			t.Errorf("only %d of %d genuine packets accepted", s.Clients.Accepted, s.Encodings[2].Packets)
		}
	}
	var out, errb bytes.Buffer
	if code := realMain([]string{"-integrity", "rot13"}, &out, &errb); code != 2 {
		t.Errorf("-integrity rot13: exit %d, want 2", code)
	}
}
