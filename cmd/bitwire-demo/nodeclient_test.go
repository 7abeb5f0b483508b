package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/internal/toolchain"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// nodeTools skips a test when node or the pinned TypeScript compiler is
// missing, unless BITWIRE_CLIENTS=required (as .ci/run sets), where it
// fails.
func nodeTools(t *testing.T) {
	t.Helper()
	toolchain.SkipIfAsked(t)
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
// every entity state they accept is checked against the server's state, none
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
		if nc.Checked == 0 || nc.Accepted < s.Ticks/2 {
			t.Errorf("node client %d: %d states checked, %d packets accepted of %d ticks", nc.ID, nc.Checked, nc.Accepted, s.Ticks)
		}
		if nc.Dropped == 0 || nc.AcksDropped == 0 {
			t.Errorf("node client %d: no loss applied", nc.ID)
		}
	}
	if s.Desyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("%d desyncs, %d decode errors", s.Desyncs, s.DecodeErrors)
	}
	if s.Attacks.AcksRefused != 0 {
		t.Errorf("%d acks refused by the Peers: a client's ack tokens are wrong", s.Attacks.AcksRefused)
	}
	if s.PerClient.DeltaEntities < s.PerClient.FullEntities {
		t.Errorf("%d entity deltas against %d in full: the Node clients' acks do not arrive", s.PerClient.DeltaEntities, s.PerClient.FullEntities)
	}
}

// A state that differs from the truth is caught by the Node clients too,
// here on a stream with HMAC trailers.
func TestNodeClientsCatchDesync(t *testing.T) {
	nodeTools(t)
	cfg := DefaultConfig()
	cfg.Duration, cfg.Clients, cfg.Node, cfg.Crates = 500*time.Millisecond, 1, 1, 30
	cfg.Inject.Integrity = snapshot.ModeMAC // the Node client checks HMAC trailers too
	var log bytes.Buffer
	cfg.Log = &log
	cfg.tamper = func(tick uint32, srv *replicate.Server[Entity]) {
		if tick == 5 { // as in TestDesyncIsCaught
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
	if len(s.NodeClients) != 1 || s.NodeClients[0].Desyncs < 1 {
		t.Errorf("node clients: %+v, want a desync", s.NodeClients)
	}
	if !strings.Contains(log.String(), "DESYNC: node client 1 entity 0 tick 5") {
		t.Errorf("log:\n%s", log.String())
	}
}

// With a model (-model), the Node clients are generated with it and decode
// its deltas: a model trained on other seeds' runs, then a run of seed 1
// with 10% loss, every state checked against the server's.
func TestNodeClientsWithModel(t *testing.T) {
	nodeTools(t)
	file := filepath.Join(t.TempDir(), "demo.bwm")
	var out, errb bytes.Buffer
	if code := realMain([]string{"-duration", "1s", "-clients", "2", "-crates", "100", "-seeds", "2-3", "-record", file}, &out, &errb); code != 0 {
		t.Fatalf("-record: exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m bitwire.Model
	if err := m.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Duration, cfg.Clients, cfg.Node, cfg.Crates, cfg.Seed = 2*time.Second, 1, 1, 150, 1
	cfg.Net.Loss = 0.10
	cfg.Model = &m
	s, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.NodeClients) != 1 {
		t.Fatalf("%d Node clients in the summary", len(s.NodeClients))
	}
	nc := s.NodeClients[0]
	t.Logf("node client: %+v", nc)
	if nc.Desyncs != 0 || nc.Errors != 0 || nc.Checked == 0 || nc.Accepted < s.Ticks/2 {
		t.Errorf("node client: %d desyncs, %d errors, %d states checked, %d packets accepted of %d ticks", nc.Desyncs, nc.Errors, nc.Checked, nc.Accepted, s.Ticks)
	}
	if s.Desyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("%d desyncs, %d decode errors", s.Desyncs, s.DecodeErrors)
	}
	if s.PerClient.DeltaEntities < s.PerClient.FullEntities {
		t.Errorf("%d entity deltas against %d in full: the Node client's acks do not arrive", s.PerClient.DeltaEntities, s.PerClient.FullEntities)
	}
}
