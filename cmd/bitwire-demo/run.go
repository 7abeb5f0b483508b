package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Config is one run of the demo.
type Config struct {
	Duration time.Duration // simulated time: Duration×Rate ticks, paced in real time
	Clients  int
	Node     int // Node clients beside the Go ones (nodeclient.go)
	Bots     int
	Rate     int // ticks a second
	Crates   int
	Seed     uint64
	// BudgetKbps is each client's bandwidth budget, in kbit/s (1000 bits)
	// of payload.
	BudgetKbps int
	Net        NetConfig    // the conditioner of every client (ReorderStep is set by run)
	Inject     InjectConfig // forged packets, spoofed acks, and the integrity mode (inject.go)
	// Web, when set, is the address of the page's HTTP server (-web,
	// web.go): browsers watch the world as more clients. WebClients Go
	// clients connect to it (-webclients, webclient.go).
	Web        string
	WebClients int
	webNoPage  bool // tests: the transports without the page (no TypeScript build)

	Ctx      context.Context // ends the run early (its results are still reported); nil: none
	Progress io.Writer       // the live progress line; nil: none
	Log      io.Writer       // desyncs and errors as they happen; nil: none

	// Model, when set, is the model every peer's deltas use (-model).
	Model *bitwire.Model
	// Record, when set, is called with every entity the server publishes
	// (-record, model.go).
	Record func(id uint32, v *Entity)

	// tamper, in tests, alters the states of a tick after the server kept
	// them as the truth and before it sends them: a desync to catch.
	tamper func(tick uint32, srv *replicate.Server[Entity])
	// refresh, in tests, is the Peers' PeerConfig.Refresh in ticks (0: the
	// default), and forgeUntil the last tick whose packets the forger
	// copies (0: all).
	refresh    int
	forgeUntil uint32
	// sent, in tests, is called with every replication packet the server
	// sends, from the Peers' goroutines (the packet is valid during the
	// call only).
	sent func(pkt []byte)
}

// refreshTicks is the Peers' refresh, in ticks.
func (cfg *Config) refreshTicks() int {
	if cfg.refresh > 0 {
		return cfg.refresh
	}
	return replicate.DefaultRefreshSeconds * cfg.Rate
}

// DefaultConfig is the configuration of `go run ./cmd/bitwire-demo`.
func DefaultConfig() Config {
	return Config{Duration: 10 * time.Second, Clients: 16, Bots: 4, Rate: 30, Crates: 300, Seed: 1, BudgetKbps: 256}
}

func (cfg *Config) validate() error {
	switch {
	case cfg.Duration <= 0:
		return errors.New("-duration must be positive")
	case cfg.Clients < 1:
		return errors.New("-clients must be at least 1")
	case cfg.Bots < 0:
		return errors.New("-bots must not be negative")
	case cfg.Node < 0:
		return errors.New("-node must not be negative")
	case cfg.Clients+cfg.Node+cfg.Bots > maxPlayers:
		return fmt.Errorf("-clients plus -node plus -bots is at most %d", maxPlayers)
	case cfg.Rate < 1 || cfg.Rate > 1000:
		return errors.New("-rate must be within 1..1000")
	case cfg.Crates < 0 || cfg.Crates > 100000:
		return errors.New("-crates must be within 0..100000")
	case cfg.BudgetKbps < 16 || cfg.BudgetKbps > 100000:
		return errors.New("-budget must be within 16..100000 kbit/s")
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"-loss", cfg.Net.Loss}, {"-dup", cfg.Net.Dup}, {"-reorder", cfg.Net.Reorder}, {"-forge", cfg.Inject.Forge}, {"-spoof", cfg.Inject.Spoof}} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%s must be a fraction within 0..1", p.name)
		}
	}
	if cfg.Net.Loss >= 1 {
		return errors.New("-loss must be under 1")
	}
	if cfg.Net.Latency < 0 || cfg.Net.Jitter < 0 || cfg.Net.Latency > 5*time.Second || cfg.Net.Jitter > 5*time.Second {
		return errors.New("-latency and -jitter must be within 0..5s")
	}
	return nil
}

// loopback is the only address the demo binds.
var loopback = net.IPv4(127, 0, 0, 1)

func listen() (*net.UDPConn, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: loopback, Port: 0})
	if err != nil {
		return nil, err
	}
	_ = c.SetReadBuffer(4 << 20)
	_ = c.SetWriteBuffer(4 << 20)
	return c, nil
}

// run runs the demo: a server and cfg.Clients clients over UDP on
// 127.0.0.1, for cfg.Duration. It returns the summary of the run and an
// error when the run could not be carried out (sockets, a packet that
// cannot be encoded, a shutdown that does not end). Desyncs are not errors:
// they are in the summary.
func run(cfg Config) (Summary, error) {
	if err := cfg.validate(); err != nil {
		return Summary{}, err
	}
	ctx := cfg.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(logw, "\n"+format+"\n", args...)
	}

	plain := bitwire.MustFor[Entity]().WithModel(cfg.Model)
	if err := plain.ModelErr(); err != nil {
		return Summary{}, err
	}
	stats := bitwire.NewStats()
	codec := plain.WithStats(stats) // the server's codec: every entity sent is accounted
	period := time.Second / time.Duration(cfg.Rate)
	cfg.Net.ReorderStep = period
	truth := newTruth(plain)

	// Sockets, all on 127.0.0.1.
	var conns []*net.UDPConn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	srvConn, err := listen()
	if err != nil {
		return Summary{}, err
	}
	conns = append(conns, srvConn)
	clientAddrs := make([]*net.UDPAddr, cfg.Clients)
	clientConns := make([]*net.UDPConn, cfg.Clients)
	for i := range clientConns {
		c, err := listen()
		if err != nil {
			closeAll()
			return Summary{}, err
		}
		conns = append(conns, c)
		clientConns[i], clientAddrs[i] = c, c.LocalAddr().(*net.UDPAddr)
	}
	var desyncs atomic.Int64
	srvAddr := srvConn.LocalAddr().(*net.UDPAddr)
	// The Node clients (-node): peers cfg.Clients on, after the Go ones.
	var fleet nodeFleet
	if cfg.Node > 0 {
		dir, err := os.MkdirTemp("", "bitwire-demo-node")
		if err != nil {
			closeAll()
			return Summary{}, err
		}
		fleet.dir = dir
		node, script, err := buildNodeClient(dir, cfg.Model)
		if err != nil {
			fleet.stopAll()
			closeAll()
			return Summary{}, err
		}
		for i := 0; i < cfg.Node; i++ {
			id := cfg.Clients + i
			nc, err := startNodeClient(node, script, id, srvAddr, cfg, cfg.Seed*1000003+uint64(id), truth, &desyncs, logf)
			if err != nil {
				fleet.stopAll()
				closeAll()
				return Summary{}, err
			}
			fleet.clients = append(fleet.clients, nc)
			clientAddrs = append(clientAddrs, nc.addr)
		}
	}
	srv, err := newServer(cfg, srvConn, codec, truth, clientAddrs)
	if err != nil {
		fleet.stopAll()
		closeAll()
		return Summary{}, err
	}
	if cfg.Web != "" {
		if srv.web, err = startWeb(cfg, plain, truth, logf); err != nil {
			fleet.stopAll()
			closeAll()
			return Summary{}, err
		}
		defer srv.web.close()
		fmt.Fprintf(logw, "bitwire-demo: watch the world in a browser at %s\n", srv.web.URL())
	}
	clients := make([]*client, cfg.Clients)
	for i := range clients {
		cond := newConditioner(cfg.Net, cfg.Seed*1000003+uint64(i))
		if clients[i], err = newClient(cfg, i, clientConns[i], srvAddr, plain, truth, cond, &desyncs, logf); err != nil {
			closeAll()
			return Summary{}, err
		}
	}

	runCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(srv.readAcks)
	for _, c := range clients {
		wg.Go(func() { c.read(runCtx) })
		wg.Go(func() { c.loop(runCtx) })
	}
	// shutdown ends every goroutine: the loops with the context, the
	// readers by closing their sockets. Bounded: 3 s, then an error.
	shutdown := func() error {
		cancel()
		closeAll()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-time.After(3 * time.Second):
			return errors.New("shutdown: goroutines still running after 3s")
		}
	}

	// The tick loop, paced on the wall clock: tick t is due at
	// start+(t-1)×period. A tick more than a period late (a busy machine)
	// moves the schedule back instead of being caught up in a burst, as a
	// game server would: the run then takes longer than cfg.Duration, but
	// packets keep their spacing. Ticks are never skipped, so the world and
	// the bandwidth figures (per simulated second) do not depend on the
	// machine's speed.
	total := max(1, int(cfg.Duration*time.Duration(cfg.Rate)/time.Second))
	var (
		late      int
		slipped   time.Duration
		recent    = make([]int64, cfg.Rate+1) // delta bytes sent, by tick, for the progress line
		lastPrint time.Time
		ticks     int
		tickTimes []float64 // ms of server work per tick
	)
	cpuStart := cpuTime()
	start := time.Now()
loop:
	for t := 1; t <= total; t++ {
		due := start.Add(time.Duration(t-1)*period + slipped)
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				break loop
			}
		} else if -d > period {
			late++
			slipped += -d
		}
		if ctx.Err() != nil {
			break
		}
		tickStart := time.Now()
		if err := srv.tick(uint32(t)); err != nil {
			fleet.stopAll()
			shutdown()
			return Summary{}, err
		}
		tickTimes = append(tickTimes, float64(time.Since(tickStart).Microseconds())/1000)
		ticks = t
		recent[t%len(recent)] = srv.deltaAcct.bytes
		if cfg.Progress != nil && (time.Since(lastPrint) >= 200*time.Millisecond || t == total) {
			lastPrint = time.Now()
			back := min(t, cfg.Rate)
			bytes := srv.deltaAcct.bytes - recent[(t-back)%len(recent)]
			kbps := float64(bytes) * 8 / 1000 / float64(cfg.Clients+cfg.Node) * float64(cfg.Rate) / float64(max(back, 1))
			fmt.Fprintf(cfg.Progress, "\rtick %5d/%d  %5.1fs  %8.1f kbit/s per client  desyncs %d   ",
				t, total, time.Since(start).Seconds(), kbps, desyncs.Load())
		}
	}
	if cfg.Progress != nil {
		fmt.Fprintln(cfg.Progress)
	}
	wall := time.Since(start)
	cpu := cpuTime() - cpuStart
	// Let packets still in the conditioners' delay lines arrive and be
	// checked (bounded), then stop everything.
	drain := min(cfg.Net.Latency+cfg.Net.Jitter+3*period+50*time.Millisecond, 2*time.Second)
	time.Sleep(drain)
	fleet.stopAll()
	if err := shutdown(); err != nil {
		return Summary{}, err
	}
	for _, c := range clients {
		c.finalCheck()
	}

	sum := summarize(cfg, srv, clients, stats, ticks, wall, late, tickTimes)
	addNodeClients(&sum, fleet.clients)
	addWebSessions(&sum, srv.web)
	sum.SlippedSeconds = slipped.Seconds()
	if ticks > 0 {
		sum.CPUPerTick = float64(cpu.Microseconds()) / 1000 / float64(ticks)
	}
	return sum, nil
}

// cpuTime is the CPU time the process has used so far (user and system,
// every thread): what the run costs, whatever else the machine is doing.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
