//go:build ignore

// Not built until the Node clients move onto replicate streams (issue 11 on issue 12).

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire/snapshot"
)

// nodeTools skips a test when node or the pinned TypeScript compiler is
// missing, unless BITWIRE_CLIENTS=required (as .ci/run sets), where it
// fails.
func nodeTools(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("..", "..", "clients", "ts", "node_modules", "typescript", "bin", "tsc"))
	}
	if err != nil {
		if os.Getenv("BITWIRE_CLIENTS") == "required" {
			t.Fatalf("node or clients/ts/node_modules missing and BITWIRE_CLIENTS=required: %v", err)
		}
		t.Skipf("node or the TypeScript compiler missing (run `npm ci` in clients/ts): %v", err)
	}
}

// Node clients play beside a Go client over UDP with 10% loss both ways:
// every snapshot they accept is checked against the server's state, none
// differs, and their acks keep deltas flowing.
func TestNodeClients(t *testing.T) {
	nodeTools(t)
	cfg := DefaultConfig()
	cfg.Duration, cfg.Clients, cfg.Node, cfg.Crates = 2*time.Second, 1, 2, 150
	cfg.Net.Loss = 0.10
	s, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.NodeClients) != 2 {
		t.Fatalf("%d Node clients in the summary", len(s.NodeClients))
	}
	for _, nc := range s.NodeClients {
		t.Logf("node client %d: %+v", nc.ID, nc)
		if nc.Desyncs != 0 || nc.Errors != 0 {
			t.Errorf("node client %d: %d desyncs, %d errors", nc.ID, nc.Desyncs, nc.Errors)
		}
		if nc.Checked < s.Ticks*s.Streams/2 || nc.Checked != nc.Accepted {
			t.Errorf("node client %d: %d checked of %d accepted, %d ticks × %d streams", nc.ID, nc.Checked, nc.Accepted, s.Ticks, s.Streams)
		}
		if nc.Dropped == 0 || nc.AcksDropped == 0 {
			t.Errorf("node client %d: no loss applied", nc.ID)
		}
	}
	if s.Desyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("%d desyncs, %d decode errors", s.Desyncs, s.DecodeErrors)
	}
	if s.Encodings[2].Delta < s.Encodings[2].Packets/2 {
		t.Errorf("only %d of %d packets were deltas: the Node clients' acks do not arrive", s.Encodings[2].Delta, s.Encodings[2].Packets)
	}
}

// A state that differs from the truth is caught by the Node clients too
// (here with HMAC trailers: the server's tampering is not an attack on the
// wire, so the MAC holds and the check must catch it).
func TestNodeClientsCatchDesync(t *testing.T) {
	nodeTools(t)
	cfg := DefaultConfig()
	cfg.Duration, cfg.Clients, cfg.Node, cfg.Crates = 500*time.Millisecond, 1, 1, 30
	cfg.Inject.Integrity = snapshot.ModeMAC
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
	if len(s.NodeClients) != 1 || s.NodeClients[0].Desyncs != 1 {
		t.Errorf("node clients: %+v, want one desync", s.NodeClients)
	}
	if !strings.Contains(log.String(), "DESYNC: node client 1 stream 1 tick 5") {
		t.Errorf("log:\n%s", log.String())
	}
}
