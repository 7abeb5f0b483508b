// Command bitwire-demo runs an authoritative game server and its clients in
// one process, over real UDP sockets on 127.0.0.1, and shows what bitwire
// saves: every client receives the world through package replicate (one
// stream per client, its entities by priority within a bandwidth budget,
// each a delta against the client's acknowledged state of it), checks every
// entity state it receives bit for bit against the server's state of that
// entity at that tick, and acknowledges the packets. At the end it compares the
// bandwidth with a naive encoding/binary baseline and with full snapshots,
// and lists the fields that cost the most bits.
//
//	go run ./cmd/bitwire-demo [-duration 10s] [-clients 16] [-rate 30] [-crates 300]
//	        [-budget 256] [-seed 1] [-loss 0.1] [-latency 50ms] [-jitter 10ms] [-dup 0.01]
//	        [-reorder 0.01] [-forge 0.01] [-spoof 0.01] [-integrity none|crc|mac]
//	        [-json] [-chart out.svg] [-gateways N]
//
// The exit status is 1 on any desync or decoding error, 2 when the run
// could not be carried out. docs/demo.md explains the output.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain is the command, with its exit status: 0, 1 on any desync or
// decoding error, 2 when the run could not be carried out.
func realMain(args []string, stdout, stderr io.Writer) int {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("bitwire-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "simulated time to run (ticks = duration × rate)")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "number of clients (one player each)")
	fs.IntVar(&cfg.Node, "node", cfg.Node, "number of Node clients beside the Go ones (TypeScript generated from the demo's types; needs node and `npm ci` in clients/ts)")
	fs.IntVar(&cfg.Bots, "bots", cfg.Bots, "number of server-side bot players")
	fs.IntVar(&cfg.Rate, "rate", cfg.Rate, "server ticks (snapshots) per second")
	fs.IntVar(&cfg.Crates, "crates", cfg.Crates, "number of rigid-body crates")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "world seed: same seed, same world")
	fs.IntVar(&cfg.BudgetKbps, "budget", cfg.BudgetKbps, "bandwidth budget per client, kbit/s")
	fs.Float64Var(&cfg.Net.Loss, "loss", 0, "fraction of packets dropped, each direction")
	fs.DurationVar(&cfg.Net.Latency, "latency", 0, "one-way delay, each direction")
	fs.DurationVar(&cfg.Net.Jitter, "jitter", 0, "delay varies uniformly by ± this much")
	fs.Float64Var(&cfg.Net.Dup, "dup", 0, "fraction of packets delivered twice")
	fs.Float64Var(&cfg.Net.Reorder, "reorder", 0, "fraction of packets held back 1–3 ticks")
	fs.Float64Var(&cfg.Inject.Forge, "forge", 0, "forged or corrupted replication datagrams injected per genuine one, each client")
	fs.Float64Var(&cfg.Inject.Spoof, "spoof", 0, "spoofed acks sent per client and tick")
	integrity := fs.String("integrity", "none", "packet integrity: `none`, crc (CRC32C trailer) or mac (HMAC-SHA256-80 under a per-client secret)")
	jsonOut := fs.Bool("json", false, "print a machine-readable summary (JSON) instead of the tables")
	chart := fs.String("chart", "", "write an SVG chart of kbit/s per second to `file`")
	record := fs.String("record", "", "train a model on this run's traffic (each entity's consecutive states) and write it to `file`")
	model := fs.String("model", "", "code every delta with the model in `file` (written by -record)")
	fs.StringVar(&cfg.Web, "web", "", "also serve a page at `addr` (e.g. :8080) where browsers watch the world live (WebTransport, WebRTC); -duration then defaults to 1h")
	fs.IntVar(&cfg.WebClients, "webclients", 0, "with -web: Go clients of the page's server, over WebTransport, WebRTC and WebSocket in turn")
	gateways := fs.Int("gateways", 0, "serve the world from `N` gateway processes through an in-process NATS server (gateways.go, docs/gateway.md)")
	arena := fs.Bool("arena", false, "run the arena instead (arena.go): clients send inputs and chat, the server moves players from the inputs, clients interpolate; with -duration, -clients, -node, -rate, -loss, -seed, and -web (browsers play too)")
	seedList := fs.String("seeds", "", "run once per seed in `list` (e.g. 2-5 or 2,3,7) instead of -seed, reporting each run; with -record, train one model on all of them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := webDefaults(fs, &cfg); err != nil {
		fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
		return 2
	}
	if *arena {
		// Interrupted, the arena ends after two quiet seconds, with its summary.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		sum, err := runArena(ArenaConfig{Duration: cfg.Duration, Clients: cfg.Clients, Node: cfg.Node, Rate: cfg.Rate, Loss: cfg.Net.Loss, Seed: int64(cfg.Seed),
			Web: cfg.Web, Ctx: ctx, Log: stderr})
		if err != nil {
			fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
			return 2
		}
		printArena(stdout, &sum, cfg.Rate)
		return 0
	}
	seeds := []uint64{cfg.Seed}
	if *seedList != "" {
		var err error
		if seeds, err = parseSeeds(*seedList); err != nil {
			fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
			return 2
		}
	}
	newRun, finish, err := setupModel(&cfg, *model, *record)
	if err != nil {
		fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
		return 2
	}
	if cfg.Inject.Integrity, err = parseIntegrity(*integrity); err != nil {
		fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bitwire-demo: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg.Ctx = ctx
	cfg.Log = stderr
	if f, ok := stdout.(*os.File); ok && !*jsonOut && isTerminal(f) {
		cfg.Progress = stdout
	}

	if *gateways > 0 {
		return gatewayMain(cfg, *gateways, *jsonOut, stdout, stderr)
	}
	status := 0
	for _, seed := range seeds {
		cfg.Seed = seed
		newRun()
		if st := runOnce(cfg, stdout, stderr, *jsonOut, *chart); st > status {
			status = st
		}
		if status == 2 {
			return 2
		}
	}
	if err := finish(); err != nil {
		fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
		return 2
	}
	return status
}

// runOnce runs the world once and reports it, with realMain's status.
func runOnce(cfg Config, stdout, stderr io.Writer, jsonOut bool, chart string) int {
	sum, err := run(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
		return 2
	}
	sum.Config.GoVersion = runtime.Version()
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(&sum); err != nil {
			fmt.Fprintf(stderr, "bitwire-demo: %v\n", err)
			return 2
		}
	} else {
		printReport(stdout, &sum)
	}
	if chart != "" {
		f, err := os.Create(chart)
		if err == nil {
			err = writeChart(f, &sum)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "bitwire-demo: chart: %v\n", err)
			return 2
		}
		if !jsonOut {
			fmt.Fprintf(stdout, "\nchart written to %s\n", chart)
		}
	}
	if sum.Desyncs > 0 || sum.DecodeErrors > 0 {
		fmt.Fprintf(stderr, "bitwire-demo: %d desyncs, %d decode errors\n", sum.Desyncs, sum.DecodeErrors)
		return 1
	}
	return 0
}

// isTerminal reports whether f is a character device (a terminal), without
// a dependency: then the progress line can be redrawn in place.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
