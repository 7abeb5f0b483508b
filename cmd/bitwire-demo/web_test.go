package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
	"github.com/bitwire/bitwire/transport"
)

// webConfig is a short -web run with Go clients of the page's server over
// each transport, in -integrity mac, without the page's TypeScript.
func webConfig(webClients int) Config {
	cfg := DefaultConfig()
	cfg.Duration = 3 * time.Second
	cfg.Clients = 1
	cfg.Crates = 100
	cfg.Web = "127.0.0.1:0"
	cfg.WebClients = webClients
	cfg.webNoPage = true
	cfg.Inject.Integrity = snapshot.ModeMAC
	return cfg
}

// TestWebGoClients: the demo's stream reaches Go clients over WebTransport,
// WebRTC and WebSocket unchanged: each accepts packets under its key from
// the hello, and every state it accepts is the server's at its tick.
func TestWebGoClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 3-second run")
	}
	sum, err := run(webConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.WebClients) != 3 || len(sum.WebSessions) != 3 {
		t.Fatalf("%d web clients, %d sessions; want 3 of each", len(sum.WebClients), len(sum.WebSessions))
	}
	sessions := map[uint32]WebSummary{}
	for _, s := range sum.WebSessions {
		sessions[s.Session] = s
	}
	for i, c := range sum.WebClients {
		if c.Transport != webClientTransports[i] {
			t.Errorf("client %d over %s, want %s", i, c.Transport, webClientTransports[i])
		}
		s := sessions[c.Session]
		// 3 s at 30 Hz: 90 ticks; a client joins at the first tick after
		// its session opened.
		if c.DialError != "" || c.Errors != 0 || c.Desyncs != 0 || c.Accepted < 45 || c.Checked == 0 || s.Transport != c.Transport {
			t.Errorf("%s: %+v; the server's session %+v", c.Transport, c, s)
		}
		if s.Packets < int64(c.Received) || s.Acks == 0 || s.BadAcks != 0 {
			t.Errorf("%s: the server sent %d packets and took %d acks (%d bad); the client received %d", c.Transport, s.Packets, s.Acks, s.BadAcks, c.Received)
		}
		t.Logf("%s: %d packets accepted, %d states checked, %d desyncs", c.Transport, c.Accepted, c.Checked, c.Desyncs)
	}
	if sum.Desyncs != 0 || sum.DecodeErrors != 0 {
		t.Errorf("run: %d desyncs, %d decode errors", sum.Desyncs, sum.DecodeErrors)
	}
}

// TestWebGoClientsCatchTampering: a state changed after the server kept
// its record is a desync for the clients over every transport: the check
// can fail.
func TestWebGoClientsCatchTampering(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 3-second run")
	}
	cfg := webConfig(3)
	cfg.tamper = func(tick uint32, srv *replicate.Server[Entity]) {
		if tick == 40 {
			e, _ := srv.Get(matchID)
			m := *e.Match
			m.Clock += 7
			srv.Set(matchID, &Entity{Match: &m})
		}
	}
	sum, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.WebClients {
		if c.Desyncs == 0 {
			t.Errorf("%s: no desync caught: %+v", c.Transport, c)
		}
	}
}

// TestWebReports: the page's report handler checks what a page says it
// holds: a true state is checked, an altered one is a desync, a line that
// is not a report is counted as bad, and an unknown session is refused.
func TestWebReports(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a run of the demo")
	}
	cfg := webConfig(0)
	cfg.Duration = 30 * time.Second
	var logw syncBuffer
	cfg.Log = &logw
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Ctx = ctx
	done := make(chan error, 1)
	go func() { _, err := run(cfg); done <- err }()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := regexp.MustCompile(`browser at (\S+)`).FindStringSubmatch(logw.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatal("no URL")
		}
	}
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	conn, err := transport.DialWebSocket(dctx, "ws"+strings.TrimPrefix(base, "http")+"ws")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	session := binary.LittleEndian.Uint32(conn.Hello())
	if len(conn.Hello()) != 4+32 {
		t.Fatalf("hello of %d bytes, want the session and a 32-byte key", len(conn.Hello()))
	}
	// The first packet brings the match (id 0) in full: decode it as a
	// page would.
	rc, _ := replicate.NewClient(bitwire.MustFor[Entity](), replicate.WithIntegrity(snapshot.ModeMAC, conn.Hello()[4:]))
	var match *Entity
	var tick uint32
	for match == nil {
		pkt, err := conn.Receive(dctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rc.Decode(pkt); err != nil {
			t.Fatal(err)
		}
		match, tick, _ = rc.Get(matchID)
	}
	codec := bitwire.MustFor[Entity]()
	good, _ := codec.Marshal(match)
	m := *match.Match
	m.Score[1]++
	bad, _ := codec.Marshal(&Entity{Match: &m})
	body := fmt.Sprintf("C 0 %d %s\nC 0 %d %s\nnot a report\nR 12\n", tick, hex.EncodeToString(good), tick, hex.EncodeToString(bad))
	rsp, err := http.Post(fmt.Sprintf("%sreport?session=%d", base, session), "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var got WebSummary
	err = json.NewDecoder(rsp.Body).Decode(&got)
	rsp.Body.Close()
	if err != nil || got.Reports != 2 || got.Checked != 1 || got.Desyncs != 1 || got.BadReports != 1 {
		t.Fatalf("report answered %+v (%v): want 2 reports, 1 checked, 1 desync, 1 bad line", got, err)
	}
	rsp, err = http.Post(base+"report?session=999", "text/plain", bytes.NewReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	rsp.Body.Close()
	if rsp.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown session: status %d, want 404", rsp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestTruthPrune: a -web run forgets the record before the window, keeping
// each entity's entry in force at its start, so that a state held from
// inside the window still checks, and an entity removed before it is gone.
func TestTruthPrune(t *testing.T) {
	tr := newTruth(bitwire.MustFor[Entity]())
	at := func(clock uint16) *Entity { return &Entity{Match: &Match{Clock: clock}} }
	tr.record(1, 1, at(1))
	tr.record(1, 5, at(5))
	tr.record(1, 10, at(10))
	tr.record(2, 1, at(1))
	tr.remove(2, 3)
	tr.record(3, 8, at(8))
	tr.setOwn(4, nil)
	tr.setOwn(7, nil)
	tr.prune(6)
	for _, c := range []struct {
		id, tick     uint32
		clock        uint16
		equal, found bool
	}{
		{1, 6, 5, true, true},   // the entry in force at 6 is kept
		{1, 9, 5, true, true},   // and holds until 10
		{1, 10, 10, true, true}, // a later one
		{1, 9, 4, false, true},  // a wrong state is still wrong
		{1, 4, 1, false, false}, // before the window: forgotten
		{2, 6, 1, false, false}, // removed before the window
		{3, 8, 8, true, true},   // appeared after it
	} {
		equal, found := tr.check(c.id, c.tick, at(c.clock))
		if equal != c.equal || found != c.found {
			t.Errorf("check(%d, %d, clock %d) = %v, %v; want %v, %v", c.id, c.tick, c.clock, equal, found, c.equal, c.found)
		}
	}
	if _, ok := tr.hist[2]; ok {
		t.Error("an entity removed before the window is still recorded")
	}
	if len(tr.hist[1]) != 2 {
		t.Errorf("entity 1 keeps %d entries, want 2", len(tr.hist[1]))
	}
	_, old := tr.own[4]
	_, kept := tr.own[7]
	if old || !kept {
		t.Errorf("the players' positions of tick 4 kept: %v, of tick 7: %v", old, kept)
	}
}
