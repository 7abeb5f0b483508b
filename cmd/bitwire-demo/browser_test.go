package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer the run logs to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// recap is a test that repeats its failures at its end, where the tail
// of a long -v log (all a CI report may show) has them.
type recap struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recap) note(format string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func (r *recap) Errorf(format string, args ...any) {
	r.TB.Helper()
	r.note(format, args)
	r.TB.Errorf(format, args...)
}

func (r *recap) Fatalf(format string, args ...any) {
	r.TB.Helper()
	r.note(format, args)
	r.report()
	r.TB.Fatalf(format, args...)
}

func (r *recap) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recap) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// report logs the failures so far, once.
func (r *recap) report() {
	r.mu.Lock()
	msgs := r.msgs
	r.msgs = nil
	r.mu.Unlock()
	if len(msgs) > 0 {
		r.TB.Logf("%d failures, again:\n%s", len(msgs), strings.Join(msgs, "\n"))
	}
}

// pageResult is what testdata/browser/check.mjs prints: the page's
// window.bitwire.
type pageResult struct {
	Transport string      `json:"transport"`
	Connected bool        `json:"connected"`
	Session   uint32      `json:"session"`
	Error     string      `json:"error"`
	Received  int64       `json:"received"`
	Accepted  int64       `json:"accepted"`
	Errors    int64       `json:"errors"`
	Bytes     int64       `json:"bytes"`
	Reported  int64       `json:"reported"`
	DecodeMs  float64     `json:"decodeMs"`
	DecodeMax float64     `json:"decodeMax"`
	DecodeAll []float64   `json:"decodeTimes"`
	Frames    int         `json:"frames"`
	Server    *WebSummary `json:"server"`
	Ms        int         `json:"ms"`
	Logs      []string    `json:"logs"`
	Window    []struct {
		At       int64       `json:"at"` // ms
		Server   *WebSummary `json:"server"`
		Received int64       `json:"received"`
		Bytes    int64       `json:"bytes"`
	} `json:"window"`
	Stale      int64 `json:"stale"`
	NoBaseline int64 `json:"noBaseline"`
}

// browserTools finds Chromium, node and the pinned driver
// (testdata/browser: `npm ci` there). The test runs only when
// BITWIRE_BROWSER is set: =required (as .ci/run sets) fails when a tool
// is missing, any other value skips, saying which.
func browserTools(t *testing.T) (chromium, node string) {
	t.Helper()
	mode := os.Getenv("BITWIRE_BROWSER")
	if mode == "" {
		t.Skip("the browser test runs with BITWIRE_BROWSER=1 (it needs chromium and `npm ci` in cmd/bitwire-demo/testdata/browser); .ci/run sets BITWIRE_BROWSER=required")
	}
	if testing.Short() && mode != "required" {
		t.Skip("-short: skipping the browser test")
	}
	missing := func(what string) {
		if mode == "required" {
			t.Fatalf("%s missing and BITWIRE_BROWSER=required", what)
		}
		t.Skipf("%s missing: skipping the browser test", what)
	}
	chromium = os.Getenv("BITWIRE_CHROMIUM")
	if chromium == "" {
		var err error
		if chromium, err = exec.LookPath("chromium"); err != nil {
			missing("chromium (apt-get install chromium)")
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	if _, err := os.Stat("testdata/browser/node_modules/playwright-core"); err != nil {
		missing("the driver (npm ci in cmd/bitwire-demo/testdata/browser)")
	}
	if _, err := os.Stat("../../clients/ts/node_modules/typescript"); err != nil {
		missing("the TypeScript compiler (npm ci in clients/ts)")
	}
	return chromium, node
}

// TestBrowser: the demo with -web, and headless Chromium opening its page
// once over WebTransport and once over WebRTC: each session connects over
// the transport asked for, accepts at least 150 packets with no decoding
// error, the server finds every state the page reported equal to its own
// (0 desyncs; the page's and the server's counts of reports equal at the
// page's last report, of packets within what was in flight), and the view is drawn (the
// screenshot has the watched player's and the crates' colours). In
// -integrity mac, so the keys come in the sessions' hellos. Then the
// arena with a browser player (testBrowserArena).
func TestBrowser(tt *testing.T) {
	chromium, node := browserTools(tt)
	t := &recap{TB: tt}
	defer t.report()
	cfg := DefaultConfig()
	cfg.Duration = 2 * time.Minute // ended by ctx once the pages are done
	cfg.Clients = 2
	cfg.Web = "127.0.0.1:0"
	cfg.Inject.Integrity = 2 // snapshot.ModeMAC
	var logw syncBuffer
	cfg.Log = &logw
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Ctx = ctx
	type outcome struct {
		sum Summary
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sum, err := run(cfg)
		done <- outcome{sum, err}
	}()
	urlRE := regexp.MustCompile(`watch the world in a browser at (\S+)`)
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == ""; {
		if m := urlRE.FindStringSubmatch(logw.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case o := <-done:
			t.Fatalf("the demo ended before serving the page: %v\n%s", o.err, logw.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page URL within 60s:\n%s", logw.String())
		}
	}

	dir := t.TempDir()
	if d := os.Getenv("BITWIRE_SCREENSHOTS"); d != "" {
		dir = d
	}
	const minPackets = 150
	pages := map[string]pageResult{}
	for _, tr := range []string{"webtransport", "webrtc"} {
		shot := filepath.Join(dir, "bitwire-demo-"+tr+".png")
		cmd := exec.Command(node, "check.mjs", "--url", url+"?transport="+tr, "--screenshot", shot,
			"--packets", "150", "--timeout", "20000", "--chromium", chromium)
		cmd.Dir = "testdata/browser"
		out, err := cmd.CombinedOutput()
		var res pageResult
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		found := false
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
				found = json.Unmarshal([]byte(line), &res) == nil
			}
		}
		if err != nil || !found {
			t.Fatalf("%s: the driver failed: %v\n%s", tr, err, out)
		}
		pages[tr] = res
		t.Logf("%s: screenshot %s", tr, shot)
		if res.Error != "" || res.Transport != tr || !res.Connected {
			t.Errorf("%s: page connected over %q (connected %v), error %q; console: %q", tr, res.Transport, res.Connected, res.Error, res.Logs)
			continue
		}
		if res.Accepted < minPackets || res.Errors != 0 {
			t.Errorf("%s: the page accepted %d packets (want at least %d), %d decoding errors", tr, res.Accepted, minPackets, res.Errors)
		}
		if s := res.Server; s == nil || s.Session != res.Session || s.Reports != res.Reported || s.Checked+s.Unchecked != res.Reported || s.Desyncs != 0 || s.BadReports != 0 {
			t.Errorf("%s: the server's counts %+v against the page's: %d states reported, session %d", tr, s, res.Reported, res.Session)
		} else if s.Checked == 0 || res.Received > s.Packets+int64(cfg.Rate) || res.Received < s.Packets*95/100 {
			// The server's count is from the page's last report; a
			// second of packets may have arrived since.
			t.Errorf("%s: the page received %d packets, the server had sent %d at its last report; %d states checked", tr, res.Received, s.Packets, s.Checked)
		}
		checkScreenshot(t, tr, shot)
		if w := res.Window; len(w) == 2 && w[0].Server != nil && w[1].Server != nil && w[1].At > w[0].At {
			// The overhead, over a window between two of the page's
			// reports (no handshake in it): the transport's socket
			// against the replicate payload, server to browser.
			a, b := w[0].Server, w[1].Server
			sec := float64(w[1].At-w[0].At) / 1000
			pay, wire := float64(b.TransportTx-a.TransportTx), float64(b.WireOut-a.WireOut)
			if pay > 0 {
				t.Logf("%s: over %.1f s: payload %.0f B/s, the transport's socket %.0f B/s out (%.1f%%, %.0f bytes a packet more) and %.0f B/s in (acks, %.0f a packet)",
					tr, sec, pay/sec, wire/sec, 100*(wire/pay-1), (wire-pay)/float64(b.Packets-a.Packets), float64(b.WireIn-a.WireIn)/sec, float64(b.WireIn-a.WireIn)/float64(b.Acks-a.Acks))
			}
		}
		if n := len(res.DecodeAll); n > 0 && res.Server != nil {
			d := slices.Sorted(slices.Values(res.DecodeAll))
			t.Logf("%s: connected and %d packets accepted in %d ms; decode a packet: median %.3f ms, 90th percentile %.3f, mean %.3f, max %.2f (performance.now()); %d states checked by the server, %d desyncs",
				tr, res.Accepted, res.Ms, d[n/2], d[n*9/10], res.DecodeMs/float64(res.Accepted), res.DecodeMax, res.Server.Checked, res.Server.Desyncs)
		}
	}
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not end within 30s of its context")
	}
	if o.err != nil {
		t.Fatalf("run: %v", o.err)
	}
	if o.sum.Desyncs != 0 || o.sum.DecodeErrors != 0 {
		t.Errorf("the run: %d desyncs, %d decoding errors", o.sum.Desyncs, o.sum.DecodeErrors)
	}
	byNum := map[uint32]WebSummary{}
	for _, ws := range o.sum.WebSessions {
		byNum[ws.Session] = ws
	}
	for tr, res := range pages {
		ws, ok := byNum[res.Session]
		if !ok || ws.Transport != tr {
			t.Errorf("%s: session %d missing from the run's summary (%+v)", tr, res.Session, o.sum.WebSessions)
			continue
		}
		// The page may report again after its result is taken, until
		// its browser closes: the run's count is at least the page's.
		if ws.Packets < res.Received || ws.Reports < res.Reported {
			t.Errorf("%s: the server sent %d packets and received %d reports; the page counted %d and %d", tr, ws.Packets, ws.Reports, res.Received, res.Reported)
		}
	}
	testBrowserArena(t, chromium, node, dir)
}

// arenaPage is what check.mjs --arena prints: the arena page's
// window.bitwire.
type arenaPage struct {
	Transport string        `json:"transport"`
	Connected bool          `json:"connected"`
	Session   uint32        `json:"session"`
	Player    uint32        `json:"player"`
	Error     string        `json:"error"`
	Received  int64         `json:"received"`
	Accepted  int64         `json:"accepted"`
	Errors    int64         `json:"errors"`
	Pushed    int           `json:"pushed"`
	Sent      int           `json:"sent"`
	Delivered int           `json:"delivered"`
	InOrder   bool          `json:"inOrder"`
	Delay     float64       `json:"delay"`
	Drawn     int           `json:"drawn"`
	Done      bool          `json:"done"`
	Server    *ArenaBrowser `json:"server"`
	Ms        int           `json:"ms"`
	Logs      []string      `json:"logs"`
}

// The arena (-arena -web) with a browser player: headless Chromium opens
// its page once over WebTransport and once over WebRTC, at 10% loss each
// way. Each page's player is moved by the inputs it sends (the server
// plays most of them, lost ones from the redundant copies),
// its 20 chat lines reach the server all and in order and the server's
// 10 reach it likewise, and what it draws at its clock's render tick is
// where the server had the players. The run's summary has both sessions,
// with the figures the pages last reported.
func testBrowserArena(t testing.TB, chromium, node, dir string) {
	var logw syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		sum ArenaSummary
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sum, err := runArena(ArenaConfig{Duration: 2 * time.Minute, Clients: 2, Rate: 30, Loss: 0.1, Seed: 3, Web: "127.0.0.1:0", Ctx: ctx, Log: &logw})
		done <- outcome{sum, err}
	}()
	urlRE := regexp.MustCompile(`browsers play at (\S+)`)
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == ""; {
		if m := urlRE.FindStringSubmatch(logw.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case o := <-done:
			t.Fatalf("arena: the run ended before serving the page: %v\n%s", o.err, logw.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("arena: no page URL within 60s:\n%s", logw.String())
		}
	}
	pages := map[string]arenaPage{}
	for _, tr := range []string{"webtransport", "webrtc"} {
		shot := filepath.Join(dir, "bitwire-arena-"+tr+".png")
		cmd := exec.Command(node, "check.mjs", "--arena", "--url", url+"?transport="+tr, "--screenshot", shot,
			"--timeout", "30000", "--chromium", chromium)
		cmd.Dir = "testdata/browser"
		out, err := cmd.CombinedOutput()
		var res arenaPage
		found := false
		for line := range strings.Lines(string(out)) {
			if j, ok := strings.CutPrefix(strings.TrimSpace(line), "RESULT "); ok {
				found = json.Unmarshal([]byte(j), &res) == nil
			}
		}
		if err != nil || !found {
			t.Fatalf("arena %s: the driver failed: %v\n%s", tr, err, out)
		}
		pages[tr] = res
		sv := res.Server
		if res.Error != "" || res.Transport != tr || !res.Connected || !res.Done || sv == nil {
			t.Errorf("arena %s: page over %q (connected %v, done %v), error %q, server %+v; console: %q", tr, res.Transport, res.Connected, res.Done, res.Error, sv, res.Logs)
			continue
		}
		t.Logf("arena %s: %d ms; inputs %d pushed, %d played, %d recovered by redundancy, %d repeated, %d late, %d skipped; %d packets up received of %d; messages %d/%d up, %d/%d down; delay %.2f ticks; drawn %.4f units off on average, %.3f at most (%d samples)",
			tr, res.Ms, res.Pushed, sv.Played, sv.Recovered, sv.Repeated, sv.Late, sv.Skipped, sv.PacketsIn, res.Pushed, sv.UpDelivered, res.Sent, res.Delivered, sv.DownSent, res.Delay, sv.ErrMean, sv.ErrMax, sv.Samples)
		if res.Errors != 0 || res.Accepted < 100 {
			t.Errorf("arena %s: %d packets accepted (want 100), %d errors", tr, res.Accepted, res.Errors)
		}
		// The page's inputs moved its player, none twice, lost ones
		// recovered from the redundant copies. How many miss their tick
		// depends on the machine, not on the code: the server's loop
		// and the page's timers both stall when it is busy, by more
		// than the 4-tick buffer (on this shared one, 0 to 112 ticks of
		// 177 repeated, in runs minutes apart), so the bound is loose.
		if sv.Played > res.Pushed || sv.Played < res.Pushed/4 || sv.Recovered == 0 || sv.Recovered > sv.Played {
			t.Errorf("arena %s: %d inputs pushed, %d played, %d of them recovered, %d ticks repeated", tr, res.Pushed, sv.Played, sv.Recovered, sv.Repeated)
		}
		if res.Sent != arenaWebUp || sv.UpDelivered != res.Sent || !sv.UpInOrder || sv.DownSent != arenaWebDown || res.Delivered != sv.DownSent || !res.InOrder {
			t.Errorf("arena %s: messages up %d sent, %d delivered (in order %v); down %d sent, %d delivered (in order %v)",
				tr, res.Sent, sv.UpDelivered, sv.UpInOrder, sv.DownSent, res.Delivered, res.InOrder)
		}
		// The delay starts at its least, 2 ticks, and grows with the
		// jitter the clock measures; 6 is its most.
		if res.Delay <= 2 || res.Delay > 6 || math.Abs(sv.Delay-res.Delay) > 0.5 {
			t.Errorf("arena %s: interpolation delay %v ticks (the server has %v)", tr, res.Delay, sv.Delay)
		}
		if sv.Samples < 50 || sv.ErrMean > 0.1 || sv.ErrMax > 2 {
			t.Errorf("arena %s: drawn %v units from the server's positions on average, %v at most, over %d samples", tr, sv.ErrMean, sv.ErrMax, sv.Samples)
		}
		if px := countColours(t, shot, [3]uint32{0x5f, 0xe3, 0x7a}, [3]uint32{0x57, 0xa7, 0xff}); px[0] < 20 || px[1] < 20 {
			t.Errorf("arena %s: the screenshot shows %d pixels of the page's player and %d of the others", tr, px[0], px[1])
		}
	}
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("arena: the run did not end within 30s of its context")
	}
	if o.err != nil {
		t.Fatalf("arena: %v", o.err)
	}
	s := o.sum
	if !s.InOrder || s.UpSent != s.UpDelivered || s.DownSent != s.DownDelivered {
		t.Errorf("arena: the Go clients' messages: %d of %d up, %d of %d down, in order %v", s.UpDelivered, s.UpSent, s.DownDelivered, s.DownSent, s.InOrder)
	}
	var b strings.Builder
	printArena(&b, &s, 30)
	t.Logf("arena summary:\n%s", b.String())
	if len(s.Browsers) != len(pages) {
		t.Fatalf("arena: %d browser sessions in the summary, want %d", len(s.Browsers), len(pages))
	}
	for _, sb := range s.Browsers {
		// The page runs on until the browser closes: the summary's last
		// report may be newer than the one the driver read.
		res := pages[sb.Transport]
		if res.Server == nil || sb.Session != res.Session || sb.Pushed < res.Server.Pushed || sb.UpSent != res.Sent || sb.DownDelivered != res.Delivered {
			t.Errorf("arena %s: the summary has %+v, the page reported %+v", sb.Transport, sb, res)
		}
	}
	if strings.Count(b.String(), "all, in order") != 1+len(pages) {
		t.Errorf("arena: the summary says not all messages arrived in order:\n%s", b.String())
	}
}

// countColours counts the pixels of the PNG at path near each colour.
func countColours(t testing.TB, path string, colours ...[3]uint32) []int {
	t.Helper()
	n := make([]int, len(colours))
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return n
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return n
	}
	d := func(a, b uint32) uint32 {
		if a > b {
			return a - b
		}
		return b - a
	}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			for k, c := range colours {
				if d(r>>8, c[0])+d(g>>8, c[1])+d(b>>8, c[2]) < 24 {
					n[k]++
				}
			}
		}
	}
	return n
}

// checkScreenshot: the view must show players (the watched one green,
// others blue) and crates (grey asleep, orange awake), not only the
// background and the grid.
func checkScreenshot(t testing.TB, tr, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("%s: %v", tr, err)
		return
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s: screenshot: %v", tr, err)
		return
	}
	near := func(r, g, b uint32, c [3]uint32) bool {
		d := func(a, b uint32) uint32 {
			if a > b {
				return a - b
			}
			return b - a
		}
		return d(r>>8, c[0])+d(g>>8, c[1])+d(b>>8, c[2]) < 24
	}
	var own, players, crates, other int
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			switch {
			case near(r, g, b, [3]uint32{0x5f, 0xe3, 0x7a}):
				own++
			case near(r, g, b, [3]uint32{0x57, 0xa7, 0xff}):
				players++
			case near(r, g, b, [3]uint32{0x4a, 0x52, 0x60}), near(r, g, b, [3]uint32{0xe0, 0x9a, 0x3e}):
				crates++
			case !near(r, g, b, [3]uint32{0x0e, 0x11, 0x16}):
				other++
			}
		}
	}
	// The watched player may be respawning at that moment: then other
	// players must show.
	if own+players < 20 || crates < 20 {
		t.Errorf("%s: the screenshot shows %d pixels of the watched player, %d of others, %d of crates (%d else): the view is blank", tr, own, players, crates, other)
	}
}
