package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestGateways: -gateways 3 serves every client from one of three
// gateways fed through NATS, with 10% loss, and no client ever holds a
// state the world did not have at the tick it is told; the bus carries a
// tick's changes once per gateway, whatever the number of clients.
func TestGateways(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 2 * time.Second
	cfg.Net.Loss = 0.10
	cfg.Clients = 9
	if raceEnabled || testing.Short() {
		cfg.Clients, cfg.Crates = 6, 120
	}
	s, err := runGateways(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ticks != 60 || len(s.Gateway) != 3 {
		t.Fatalf("%d ticks, %d gateways", s.Ticks, len(s.Gateway))
	}
	if s.Desyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("%d desyncs, %d decode errors", s.Desyncs, s.DecodeErrors)
	}
	if s.ClientStats.Checked < s.ClientStats.Accepted || s.ClientStats.Accepted < cfg.Clients*s.Ticks/2 {
		t.Errorf("%d packets accepted, %d states checked", s.ClientStats.Accepted, s.ClientStats.Checked)
	}
	for k, r := range s.Gateway {
		if r.Clients != cfg.Clients/3 || r.Served < s.Ticks-3 || r.Syncs != 1 || r.Gaps != 0 || r.ClientBytes <= 0 {
			t.Errorf("gateway %d: %+v", k, r)
		}
	}
	if s.BusBytesPerTick <= 0 || s.FullBytes <= 0 {
		t.Errorf("bus: %.0f bytes a tick, %d of full states", s.BusBytesPerTick, s.FullBytes)
	}
	var out bytes.Buffer
	if st := gatewayMain(cfg, 0, true, &out, &out); st != 2 {
		t.Errorf("-gateways 0: status %d", st)
	}
	out.Reset()
	printGatewayReport(&out, &s)
	if !bytes.Contains(out.Bytes(), []byte("bytes/tick")) {
		t.Errorf("report:\n%s", out.String())
	}
	if _, err := json.Marshal(&s); err != nil {
		t.Error(err)
	}
	t.Logf("bus %.0f B/tick to each gateway, clients %.0f B/tick; world %.3f ms CPU/tick; gateways %+v", s.BusBytesPerTick, s.ClientBytes, s.WorldCPUPerTick, s.Gateway)
}
