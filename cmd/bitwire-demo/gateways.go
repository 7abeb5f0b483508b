package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gateway"
	"github.com/bitwire/bitwire/replicate"
)

// -gateways N: one world served by N gateways through NATS (package
// gateway). The world (the same simulation and replicate.Server as the
// single-process run, which keep the truth) publishes each tick's changes
// with a gateway.Publisher on an in-process NATS server; each gateway
// rebuilds the world from the bus into its own replicate.Server and serves
// its share of the clients (client i on gateway i mod N) over UDP from a
// socket of its own, with the Peers the single-process server would have.
// The clients are the same as ever and check every state against the
// world's truth. The world and each gateway run on a goroutine locked to an
// OS thread, whose CPU time is each one's cost. docs/gateway.md says more.

// GatewaySummary is the outcome of a -gateways run: what -json prints.
type GatewaySummary struct {
	Gateways    int     `json:"gateways"`
	Clients     int     `json:"clients"`
	Ticks       int     `json:"ticks"`
	Entities    int     `json:"entities"` // at the end
	WallSeconds float64 `json:"wall_seconds"`
	// BusBytesPerTick is what the world published a tick of the changes
	// (every gateway receives them); FullBytes the full states it answered
	// in all (one to each gateway at its start).
	BusBytesPerTick  float64      `json:"bus_bytes_per_tick"`
	FullBytes        int64        `json:"bus_full_state_bytes"`
	ClientBytes      float64      `json:"client_bytes_per_tick"` // all clients' packets a tick
	WorldCPUPerTick  float64      `json:"world_cpu_ms_per_tick"` // simulating, quantizing, publishing
	Gateway          []GatewayRow `json:"per_gateway"`
	Desyncs          int          `json:"desyncs"`
	DecodeErrors     int          `json:"decode_errors"`
	ClientStats      clientStats  `json:"client_stats"`
	PublishErrors    int          `json:"publish_errors"`
	NATSSlowConsumer int64        `json:"nats_slow_consumers"`
}

// GatewayRow is one gateway's share.
type GatewayRow struct {
	Clients     int     `json:"clients"`
	Served      int     `json:"ticks_served"`
	BusBytes    float64 `json:"bus_bytes_per_tick"`    // received
	ClientBytes float64 `json:"client_bytes_per_tick"` // sent to its clients
	CPUPerTick  float64 `json:"cpu_ms_per_tick"`       // its goroutine's thread
	Syncs       int     `json:"full_states"`
	Gaps        int     `json:"gaps"`
}

// edge is one gateway: its Gateway, socket and Peers.
type edge struct {
	g      *gateway.Gateway[Entity]
	nc     *nats.Conn
	conn   *net.UDPConn
	peers  []*peer     // its clients'
	global []int       // by peer: the client's index
	local  map[int]int // client index → peer
	acks   chan ack
	served int
	bytes  int64
	cpu    time.Duration
	err    error
	done   chan struct{}
}

// ownTable is the clients' players by tick, from the world: what a real
// gateway would learn from its clients' sessions.
type ownTable struct {
	mu  sync.Mutex
	own map[uint32][]ownPlayer
}

func (o *ownTable) set(t uint32, own []ownPlayer) {
	o.mu.Lock()
	o.own[t] = own
	delete(o.own, t-min(t, 64)) // old ticks are never asked for again
	o.mu.Unlock()
}

func (o *ownTable) get(t uint32) []ownPlayer {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.own[t]
}

// runGateways is the -gateways mode.
func runGateways(cfg Config, n int) (GatewaySummary, error) {
	if err := cfg.validate(); err != nil {
		return GatewaySummary{}, err
	}
	switch {
	case n < 1 || n > 64:
		return GatewaySummary{}, errors.New("-gateways must be within 1..64")
	case cfg.Node > 0 || cfg.Inject.Spoof > 0 || cfg.Model != nil || cfg.Record != nil:
		return GatewaySummary{}, errors.New("-gateways runs without -node, -spoof, -model and -record")
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
	plain := bitwire.MustFor[Entity]()
	period := time.Second / time.Duration(cfg.Rate)
	cfg.Net.ReorderStep = period
	truth := newTruth(plain)

	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		return GatewaySummary{}, err
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		return GatewaySummary{}, errors.New("nats server not ready")
	}
	var slow atomic.Int64
	connect := func() (*nats.Conn, error) {
		return nats.Connect(ns.ClientURL(), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrSlowConsumer) {
				slow.Add(1) // the gateway finds the gap and resyncs
			}
		}))
	}
	pubConn, err := connect()
	if err != nil {
		return GatewaySummary{}, err
	}
	defer pubConn.Close()
	bus := gateway.Config[Entity]{Subject: "demo"}
	pub, err := gateway.NewPublisher(pubConn, plain, bus)
	if err != nil {
		return GatewaySummary{}, err
	}
	world, err := newServer(cfg, nil, plain, truth, nil)
	if err != nil {
		return GatewaySummary{}, err
	}
	var mirrorErr error
	world.mirror = func(id uint32, v *Entity) {
		var err error
		if v == nil {
			_, err = pub.Remove(id)
		} else {
			_, err = pub.Set(id, v)
		}
		if err != nil && mirrorErr == nil {
			mirrorErr = err
		}
	}

	var conns []*net.UDPConn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	defer closeAll()
	owners := &ownTable{own: map[uint32][]ownPlayer{}}
	edges := make([]*edge, n)
	for k := range edges {
		nc, err := connect()
		if err != nil {
			return GatewaySummary{}, err
		}
		defer nc.Close()
		g, err := gateway.NewGateway(nc, plain, bus, replicate.WithTickRate(cfg.Rate))
		if err != nil {
			return GatewaySummary{}, err
		}
		conn, err := listen()
		if err != nil {
			return GatewaySummary{}, err
		}
		conns = append(conns, conn)
		edges[k] = &edge{g: g, nc: nc, conn: conn, local: map[int]int{}, acks: make(chan ack, 64*cfg.Clients), done: make(chan struct{})}
	}
	var desyncs atomic.Int64
	clients := make([]*client, cfg.Clients)
	for i := range clients {
		e := edges[i%n]
		conn, err := listen()
		if err != nil {
			return GatewaySummary{}, err
		}
		conns = append(conns, conn)
		pr := &peer{addr: conn.LocalAddr().(*net.UDPAddr), buf: make([]byte, 0, 2*budget)}
		pr.p, err = e.g.Server().NewPeer(replicate.PeerConfig[Entity]{
			Priority:      priorityFunc(&pr.own, &pr.x, &pr.z),
			PriorityEvery: priorityEvery,
			Budget:        budget,
			Bandwidth:     cfg.BudgetKbps * 1000 / 8,
			Refresh:       cfg.refreshTicks(),
			Integrity:     cfg.Inject.Integrity,
			Key:           streamKey(cfg, i),
		})
		if err != nil {
			return GatewaySummary{}, err
		}
		e.local[i] = len(e.peers)
		e.peers, e.global = append(e.peers, pr), append(e.global, i)
		cond := newConditioner(cfg.Net, cfg.Seed*1000003+uint64(i))
		if clients[i], err = newClient(cfg, i, conn, e.conn.LocalAddr().(*net.UDPAddr), plain, truth, cond, &desyncs, logf); err != nil {
			return GatewaySummary{}, err
		}
	}

	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { c.read(runCtx) })
		wg.Go(func() { c.loop(runCtx) })
	}
	for _, e := range edges {
		wg.Go(e.readAcks)
		go e.serve(runCtx, cfg.Rate, owners)
	}

	// The world's tick loop, paced like run's, on a thread of its own.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	total := max(1, int(cfg.Duration*time.Duration(cfg.Rate)/time.Second))
	ticks, slipped := 0, time.Duration(0)
	cpu0 := threadCPU()
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
			slipped += -d
		}
		if err := pub.Advance(uint32(t)); err != nil {
			return GatewaySummary{}, err
		}
		if err := world.tick(uint32(t)); err != nil {
			return GatewaySummary{}, err
		}
		if mirrorErr != nil {
			return GatewaySummary{}, mirrorErr
		}
		own := make([]ownPlayer, cfg.Clients)
		for i := range own {
			p := &world.world.players[i]
			own[i] = ownPlayer{x: float32(p.p.x), z: float32(p.p.z)}
			if p.alive {
				own[i].id = playerEntityID(p.id)
			}
		}
		truth.setOwn(uint32(t), own)
		owners.set(uint32(t), own)
		if err := pub.Publish(); err != nil {
			return GatewaySummary{}, err
		}
		ticks = t
		if cfg.Progress != nil && t%cfg.Rate == 0 {
			fmt.Fprintf(cfg.Progress, "\rtick %5d/%d  desyncs %d   ", t, total, desyncs.Load())
		}
	}
	worldCPU := threadCPU() - cpu0
	wall := time.Since(start)
	if cfg.Progress != nil {
		fmt.Fprintln(cfg.Progress)
	}
	time.Sleep(min(cfg.Net.Latency+cfg.Net.Jitter+3*period+100*time.Millisecond, 2*time.Second))
	cancel()
	for _, e := range edges {
		<-e.done
	}
	closeAll()
	wg.Wait()
	for _, c := range clients {
		c.finalCheck()
	}

	ps := pub.Stats()
	sum := GatewaySummary{Gateways: n, Clients: cfg.Clients, Ticks: ticks, Entities: world.srv.Len(), WallSeconds: wall.Seconds(),
		FullBytes: ps.Bytes - ps.TickBytes, PublishErrors: ps.Errors, NATSSlowConsumer: slow.Load()}
	if ticks > 0 {
		sum.BusBytesPerTick = float64(ps.TickBytes) / float64(ticks)
		sum.WorldCPUPerTick = float64(worldCPU.Microseconds()) / 1000 / float64(ticks)
	}
	var sent int64
	for _, e := range edges {
		if e.err != nil {
			return sum, e.err
		}
		gs := e.g.Stats()
		row := GatewayRow{Clients: len(e.peers), Served: e.served, Syncs: gs.Syncs, Gaps: gs.Gaps}
		if e.served > 0 {
			row.BusBytes = float64(gs.Bytes) / float64(e.served)
			row.ClientBytes = float64(e.bytes) / float64(e.served)
			row.CPUPerTick = float64(e.cpu.Microseconds()) / 1000 / float64(e.served)
		}
		sent += e.bytes
		sum.Gateway = append(sum.Gateway, row)
	}
	if ticks > 0 {
		sum.ClientBytes = float64(sent) / float64(ticks)
	}
	for _, c := range clients {
		sum.ClientStats = sum.ClientStats.add(c.stats)
	}
	sum.Desyncs = sum.ClientStats.Desyncs
	sum.DecodeErrors = sum.ClientStats.Errors
	return sum, nil
}

// readAcks runs until the gateway's socket is closed, passing its
// clients' acks to its loop.
func (e *edge) readAcks() {
	buf := make([]byte, 64)
	for {
		n, from, err := e.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		a, ok := parseAck(buf[:n])
		if !ok {
			continue
		}
		if i, mine := e.local[a.client]; !mine || !sameAddr(from, e.peers[i].addr) {
			continue
		}
		select {
		case e.acks <- a:
		default:
		}
	}
}

// serve is the gateway's loop, on a thread of its own: each tick the bus
// completes, it takes its clients' acks, updates where their players are,
// and sends each its packets, as the single-process server's tick does.
func (e *edge) serve(ctx context.Context, rate int, owners *ownTable) {
	defer close(e.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	defer func() { e.cpu = threadCPU() - cpu0 }()
	for {
		t, err := e.g.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				e.err = fmt.Errorf("gateway: %w", err)
			}
			return
		}
		for drained := false; !drained; {
			select {
			case a := <-e.acks:
				_ = e.peers[e.local[a.client]].p.Ack(a.ack) // a refused part changes nothing
			default:
				drained = true
			}
		}
		own := owners.get(t)
		for i, pr := range e.peers {
			pr.own, pr.x, pr.z = 0, 0, 0
			if c := e.global[i]; c < len(own) {
				pr.own, pr.x, pr.z = own[c].id, own[c].x, own[c].z
			}
			pr.send(e.conn, int(t-1)/rate)
			if pr.err != nil {
				e.err = fmt.Errorf("gateway client %d: %w", e.global[i], pr.err)
				return
			}
			for _, size := range pr.sent {
				e.bytes += int64(size)
			}
		}
		e.served++
	}
}

// printGatewayReport prints a -gateways run's summary.
func printGatewayReport(w io.Writer, s *GatewaySummary) {
	fmt.Fprintf(w, "one world, %d gateways over NATS (in-process), %d clients, %d ticks in %.1fs, %d entities\n\n",
		s.Gateways, s.Clients, s.Ticks, s.WallSeconds, s.Entities)
	fmt.Fprintf(w, "bus (world → each gateway)   %10.0f bytes/tick  (full states answered: %d bytes)\n", s.BusBytesPerTick, s.FullBytes)
	fmt.Fprintf(w, "gateways → clients           %10.0f bytes/tick  (%.0f per client)\n", s.ClientBytes, s.ClientBytes/float64(max(s.Clients, 1)))
	fmt.Fprintf(w, "world CPU                    %10.3f ms/tick\n\n", s.WorldCPUPerTick)
	fmt.Fprintf(w, "gateway  clients  ticks  bus B/tick  clients B/tick  CPU ms/tick  full states  gaps\n")
	for k, r := range s.Gateway {
		fmt.Fprintf(w, "%7d  %7d  %5d  %10.0f  %14.0f  %11.3f  %11d  %4d\n", k, r.Clients, r.Served, r.BusBytes, r.ClientBytes, r.CPUPerTick, r.Syncs, r.Gaps)
	}
	fmt.Fprintf(w, "\nclients: %d packets accepted, %d states checked, %d desyncs, %d decode errors; publish errors %d, NATS slow consumers %d\n",
		s.ClientStats.Accepted, s.ClientStats.Checked, s.Desyncs, s.DecodeErrors, s.PublishErrors, s.NATSSlowConsumer)
}

// gatewayMain runs the -gateways mode and reports it, with realMain's
// status.
func gatewayMain(cfg Config, n int, jsonOut bool, stdout, stderr io.Writer) int {
	sum, err := runGateways(cfg, n)
	if err != nil {
		fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
		return 2
	}
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(&sum); err != nil {
			fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
			return 2
		}
	} else {
		printGatewayReport(stdout, &sum)
	}
	if sum.Desyncs > 0 || sum.DecodeErrors > 0 {
		fmt.Fprintf(stderr, "bitwire-demo: %d desyncs, %d decode errors\n", sum.Desyncs, sum.DecodeErrors)
		return 1
	}
	return 0
}
