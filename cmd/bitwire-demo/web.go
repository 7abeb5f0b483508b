package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
	"github.com/bitwire/bitwire/transport"
)

// The demo in a browser (-web ADDR): an HTTP server on ADDR serves a page
// that watches the world live. The page connects over WebTransport (a UDP
// port of the same number as ADDR's, a self-signed certificate accepted by
// its hash), or WebRTC (signalling POSTed to /webrtc, ICE on one UDP port)
// where WebTransport is not available, or, asked for (?transport=websocket),
// WebSocket (/ws). Each browser session is one more replicate.Peer of the
// server, watching the world from a bot's player; its key (in -integrity
// mac) comes in the session's hello, over its TLS or DTLS. The page
// decodes with TypeScript generated from Entity's schema at start-up and
// reports every entity state it accepts, re-encoded in full, to /report,
// where the server checks it against its record (truth.go) as it checks
// the Go clients, and answers with the session's counts.

//go:embed web/index.html web/app.ts web/arena.html web/arena.ts
var webFiles embed.FS

// webGateway is the -web server: the page, the transports, the browser
// sessions. tick runs on the tick loop; the HTTP handlers and the
// transports' readers on their own goroutines.
type webGateway struct {
	cfg   Config
	codec *bitwire.Codec[Entity] // plain: what reports are checked with
	truth *truth
	logf  func(string, ...any)

	ln    net.Listener
	http  *http.Server
	wt    *transport.WebTransportServer
	rtc   *transport.WebRTCServer
	ws    *transport.WebSocketServer
	files map[string][]byte // the page's files by path
	url   string

	events chan webEvent
	wg     sync.WaitGroup
	cancel context.CancelFunc
	tick   atomic.Uint32

	mu       sync.Mutex
	pending  map[pendingKey][]byte // hellos sent, until the peer's Joined event
	sessions map[uint32]*webSession
	lastNum  uint32
	joined   int // sessions ever, for the choice of player
	closed   []WebSummary

	stopClients func() []WebClientSummary // -webclients
	clientSums  []WebClientSummary
}

type pendingKey struct {
	tr   string
	peer transport.PeerID
}

type webEvent struct {
	srv transport.Server
	tr  string
	transport.Event
}

// webSession is one browser's session.
type webSession struct {
	num    uint32 // the session number, in the hello: the page's reports name it
	tr     string
	srv    transport.Server
	peer   transport.PeerID
	p      *replicate.Peer[Entity]
	player int     // the world's player whose view the page has
	own    uint32  // its entity id, 0 while dead
	x, z   float32 // where it stands
	buf    []byte

	// Counted by the tick loop and the report handler, under the
	// gateway's mu.
	sum  WebSummary
	held map[uint32]uint32 // what the page reported it holds: id → tick
}

// WebSummary is what one browser session did, as the server counts it.
type WebSummary struct {
	Session     uint32  `json:"session"`
	Transport   string  `json:"transport"`
	Player      int     `json:"player"`
	Own         uint32  `json:"own"`  // the entity id of the watched player now
	Tick        uint32  `json:"tick"` // the server's tick now
	Packets     int64   `json:"packets"`
	Bytes       int64   `json:"bytes"` // replicate payload
	Acks        int64   `json:"acks"`
	BadAcks     int64   `json:"bad_acks"`
	Reports     int64   `json:"reports"` // entity states the page reported
	Checked     int64   `json:"checked"`
	Desyncs     int64   `json:"desyncs"`
	Unchecked   int64   `json:"unchecked"`
	BadReports  int64   `json:"bad_reports"`
	StaleMean   float64 `json:"stale_mean"` // ticks behind, over the entities near the player, at the last report
	StaleMax    uint32  `json:"stale_max"`
	WireIn      uint64  `json:"wire_in"` // the transport's socket, all sessions of that transport
	WireOut     uint64  `json:"wire_out"`
	TransportTx uint64  `json:"transport_out"` // payload bytes the transport sent, all its sessions
}

// startWeb builds the page, opens the transports and serves the page on
// cfg.Web.
func startWeb(cfg Config, plain *bitwire.Codec[Entity], truth *truth, logf func(string, ...any)) (*webGateway, error) {
	g := &webGateway{
		cfg: cfg, codec: plain, truth: truth, logf: logf,
		events: make(chan webEvent, 4096), pending: map[pendingKey][]byte{}, sessions: map[uint32]*webSession{},
	}
	var err error
	g.files = map[string][]byte{}
	if !cfg.webNoPage {
		if g.files, err = buildWebClient(cfg.Model); err != nil {
			return nil, err
		}
	}
	if g.ln, err = net.Listen("tcp", cfg.Web); err != nil {
		return nil, fmt.Errorf("-web: %w", err)
	}
	addr := g.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	hello := func(tr string) func(transport.PeerID) ([]byte, error) {
		return func(p transport.PeerID) ([]byte, error) { return g.hello(tr, p) }
	}
	// WebTransport on the UDP port of the HTTP port's number.
	udpAddr := net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port))
	if g.wt, err = transport.ListenWebTransport(udpAddr, transport.WebTransportConfig{Options: transport.Options{Hello: hello("webtransport")}}); err != nil {
		g.ln.Close()
		return nil, fmt.Errorf("-web: WebTransport: %w", err)
	}
	if g.rtc, err = transport.ListenWebRTC(transport.WebRTCConfig{Options: transport.Options{Hello: hello("webrtc")}, UDPAddr: net.JoinHostPort(addr.IP.String(), "0")}); err != nil {
		g.wt.Close()
		g.ln.Close()
		return nil, fmt.Errorf("-web: WebRTC: %w", err)
	}
	g.ws = transport.NewWebSocketServer(transport.WebSocketConfig{Options: transport.Options{Hello: hello("websocket")}})

	mux := http.NewServeMux()
	serveFiles(mux, g.files, "")
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if g.files["/index.html"] == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(g.files["/index.html"])
	})
	mux.HandleFunc("GET /config.json", func(w http.ResponseWriter, r *http.Request) {
		// WebTransport at the address it listens on; listening on all
		// of them, at the host the page was loaded from (another
		// machine's browser reaches the server by its address, not
		// 127.0.0.1). The certificate is accepted by its hash, whatever
		// the name.
		wtHost := host
		if h, _, err := net.SplitHostPort(r.Host); err == nil && h != "" && addr.IP.IsUnspecified() {
			wtHost = h
		}
		wtURL := fmt.Sprintf("https://%s%s", net.JoinHostPort(wtHost, strconv.Itoa(g.wt.Addr().Port)), g.wt.Path())
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"webtransport": wtURL,
			"certHash":     base64.StdEncoding.EncodeToString(g.wt.CertificateHash()),
			"webrtc":       "/webrtc",
			"websocket":    "/ws",
			"mode":         int(cfg.Inject.Integrity),
			"expiry":       g.expiry(),
			"rate":         cfg.Rate,
		})
	})
	mux.Handle("POST /webrtc", g.rtc)
	mux.Handle("GET /ws", g.ws)
	mux.HandleFunc("POST /report", g.report)
	mux.HandleFunc("GET /stats", g.stats)
	g.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	g.url = fmt.Sprintf("http://%s/", net.JoinHostPort(host, strconv.Itoa(addr.Port)))

	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.wg.Go(func() { g.http.Serve(g.ln) })
	for tr, s := range map[string]transport.Server{"webtransport": g.wt, "webrtc": g.rtc, "websocket": g.ws} {
		g.wg.Go(func() { g.pump(ctx, tr, s) })
	}
	if cfg.WebClients > 0 {
		g.stopClients = g.startWebClients(cfg.WebClients)
	}
	return g, nil
}

// URL is the page's address.
func (g *webGateway) URL() string { return g.url }

// hello makes a session's hello: its number (uint32, little-endian) and,
// in -integrity mac, its key (32 random bytes), which becomes its Peer's.
func (g *webGateway) hello(tr string, p transport.PeerID) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastNum++
	h := binary.LittleEndian.AppendUint32(nil, g.lastNum)
	if g.cfg.Inject.Integrity == snapshot.ModeMAC {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		h = append(h, key...)
	}
	g.pending[pendingKey{tr, p}] = h
	return h, nil
}

// pump hands one transport's events to the tick loop. Joins and leaves
// wait for room; a datagram (an ack) that finds none is dropped, like a
// lost one.
func (g *webGateway) pump(ctx context.Context, tr string, s transport.Server) {
	for {
		e, err := s.Receive(ctx)
		if err != nil {
			return
		}
		ev := webEvent{srv: s, tr: tr, Event: e}
		if e.Kind == transport.Datagram {
			select {
			case g.events <- ev:
			default:
			}
			continue
		}
		select {
		case g.events <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// onTick runs on the tick loop once the Go clients' packets of tick t are
// sent: the sessions that joined and left, their acks, and their packets.
func (g *webGateway) onTick(s *server, t uint32) error {
	g.tick.Store(t)
	if w := uint32(truthWindow * s.cfg.Rate); t > w && t%uint32(s.cfg.Rate) == 0 {
		g.truth.prune(t - w)
	}
	for drained := false; !drained; {
		select {
		case e := <-g.events:
			if err := g.handle(s, e); err != nil {
				return err
			}
		default:
			drained = true
		}
	}
	g.mu.Lock()
	sessions := make([]*webSession, 0, len(g.sessions))
	for _, ws := range g.sessions {
		p := &s.world.players[ws.player]
		ws.own, ws.x, ws.z = 0, float32(p.p.x), float32(p.p.z)
		if p.alive {
			ws.own = playerEntityID(p.id)
		}
		sessions = append(sessions, ws)
	}
	g.mu.Unlock()
	for _, ws := range sessions {
		for {
			pkt, ok, err := ws.p.Encode(ws.buf[:0])
			if err != nil {
				return fmt.Errorf("web session %d: %w", ws.num, err)
			}
			if !ok {
				break
			}
			ws.buf = pkt[:0]
			if err := ws.srv.Send(ws.peer, pkt); err != nil && !errors.Is(err, transport.ErrUnknownPeer) {
				return fmt.Errorf("web session %d: %w", ws.num, err)
			}
			g.mu.Lock()
			ws.sum.Packets++
			ws.sum.Bytes += int64(len(pkt))
			g.mu.Unlock()
		}
	}
	return nil
}

// handle applies one transport event on the tick loop.
func (g *webGateway) handle(s *server, e webEvent) error {
	key := pendingKey{e.tr, e.Peer}
	switch e.Kind {
	case transport.Joined:
		g.mu.Lock()
		hello := g.pending[key]
		delete(g.pending, key)
		g.joined++
		// The page watches a bot (a player no client drives), or any
		// player when there are no bots.
		nc := s.cfg.Clients + s.cfg.Node
		player := (g.joined - 1) % len(s.world.players)
		if s.cfg.Bots > 0 {
			player = nc + (g.joined-1)%s.cfg.Bots
		}
		g.mu.Unlock()
		if len(hello) < 4 {
			return e.srv.Disconnect(e.Peer)
		}
		ws := &webSession{num: binary.LittleEndian.Uint32(hello), tr: e.tr, srv: e.srv, peer: e.Peer, player: player,
			buf: make([]byte, 0, 2*budget), held: map[uint32]uint32{}}
		var mkey []byte
		if len(hello) > 4 {
			mkey = hello[4:]
		}
		p, err := s.srv.NewPeer(replicate.PeerConfig[Entity]{
			Priority:      priorityFunc(&ws.own, &ws.x, &ws.z),
			PriorityEvery: priorityEvery,
			Budget:        budget,
			Bandwidth:     s.cfg.BudgetKbps * 1000 / 8,
			Refresh:       s.cfg.refreshTicks(),
			Integrity:     s.cfg.Inject.Integrity,
			Key:           mkey,
		})
		if err != nil {
			return err
		}
		ws.p = p
		ws.sum = WebSummary{Session: ws.num, Transport: e.tr, Player: player}
		g.mu.Lock()
		g.sessions[ws.num] = ws
		g.mu.Unlock()
		g.logf("web: session %d joined over %s (watching player %d)", ws.num, e.tr, player)
	case transport.Left:
		g.mu.Lock()
		delete(g.pending, key)
		var gone *webSession
		for n, ws := range g.sessions {
			if ws.srv == e.srv && ws.peer == e.Peer {
				gone = ws
				delete(g.sessions, n)
				g.closed = append(g.closed, g.summaryLocked(ws))
			}
		}
		g.mu.Unlock()
		if gone != nil {
			s.srv.RemovePeer(gone.p)
			g.logf("web: session %d left", gone.num)
		}
	case transport.Datagram:
		g.mu.Lock()
		var ws *webSession
		for _, w := range g.sessions {
			if w.srv == e.srv && w.peer == e.Peer {
				ws = w
			}
		}
		g.mu.Unlock()
		if ws == nil {
			return nil
		}
		a, err := replicate.ParseAck(e.Data)
		if err == nil {
			err = ws.p.Ack(a)
		}
		g.mu.Lock()
		if err != nil {
			ws.sum.BadAcks++
		} else {
			ws.sum.Acks++
		}
		g.mu.Unlock()
	}
	return nil
}

// maxReport bounds a report's body.
const maxReport = 4 << 20

// report checks a page's report: lines "C id tick hex" (an entity state it
// accepted, encoded in full) and "R id" (one it dropped), of session
// ?session=N. It answers with the session's counts (WebSummary).
func (g *webGateway) report(w http.ResponseWriter, r *http.Request) {
	num, err := strconv.ParseUint(r.URL.Query().Get("session"), 10, 32)
	g.mu.Lock()
	ws := g.sessions[uint32(num)]
	g.mu.Unlock()
	if err != nil || ws == nil {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	sc := bufio.NewScanner(http.MaxBytesReader(w, r.Body, maxReport))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	var checked, desyncs, unchecked, bad, reports int64
	held := map[uint32]uint32{}
	var removed []uint32
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "C":
			reports++
			id, err1 := strconv.ParseUint(f[1], 10, 32)
			tick, err2 := strconv.ParseUint(f[2], 10, 32)
			b, err3 := hex.DecodeString(f[3])
			var got Entity
			var err4 error
			if err1 == nil && err2 == nil && err3 == nil {
				err4 = g.codec.Unmarshal(b, &got)
			}
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
				bad++
				continue
			}
			held[uint32(id)] = uint32(tick)
			equal, found := g.truth.check(uint32(id), uint32(tick), &got)
			switch {
			case !found:
				unchecked++
			case !equal:
				desyncs++
				g.logf("DESYNC: web session %d entity %d tick %d: the page's state differs from the server's", ws.num, id, tick)
			default:
				checked++
			}
		case len(f) == 2 && f[0] == "R":
			if id, err := strconv.ParseUint(f[1], 10, 32); err == nil {
				removed = append(removed, uint32(id))
			} else {
				bad++
			}
		case len(f) == 0:
		default:
			bad++
		}
	}
	if sc.Err() != nil {
		http.Error(w, "bad report", http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	for id, tick := range held {
		ws.held[id] = tick
	}
	for _, id := range removed {
		delete(ws.held, id)
	}
	ws.sum.Reports += reports
	ws.sum.Checked += checked
	ws.sum.Desyncs += desyncs
	ws.sum.Unchecked += unchecked
	ws.sum.BadReports += bad
	heldCopy := make(map[uint32]uint32, len(ws.held))
	for id, t := range ws.held {
		heldCopy[id] = t
	}
	x, z := ws.x, ws.z
	g.mu.Unlock()
	mean, most := g.truth.behind(g.tick.Load(), heldCopy, x, z)
	g.mu.Lock()
	ws.sum.StaleMean, ws.sum.StaleMax = mean, most
	sum := g.summaryLocked(ws)
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(sum)
}

// summaryLocked is ws's summary now; g.mu is held.
func (g *webGateway) summaryLocked(ws *webSession) WebSummary {
	s := ws.sum
	s.Own, s.Tick = ws.own, g.tick.Load()
	st := ws.srv.Stats()
	s.WireIn, s.WireOut, s.TransportTx = st.WireIn, st.WireOut, st.BytesOut
	return s
}

// stats answers with every session's summary, open ones first (by
// number), then those that ended.
func (g *webGateway) stats(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(g.summaries())
}

func (g *webGateway) summaries() []WebSummary {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []WebSummary
	for _, ws := range g.sessions {
		out = append(out, g.summaryLocked(ws))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return append(out, g.closed...)
}

// close stops the page's server and the transports.
func (g *webGateway) close() {
	g.finishClients()
	g.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	g.http.Shutdown(ctx)
	g.http.Close()
	g.wt.Close()
	g.rtc.Close()
	g.ws.Close()
	g.wg.Wait()
}

// behind is how many ticks behind the server's state at tick the states
// a page holds are (held: id → the tick of the state it holds), over the
// entities within nearRadius of (x, z): the mean and the most. An entity
// the page lacks counts from the tick it appeared.
func (t *truth) behind(tick uint32, held map[uint32]uint32, x, z float32) (mean float64, most uint32) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var sum, n uint64
	for id, h := range t.hist {
		i := index(h, tick)
		if i < 0 || h[i].gone || dist2(&h[i].val, x, z) > nearRadius*nearRadius {
			continue
		}
		var b uint32
		if ct, ok := held[id]; ok {
			if j := index(h, ct); j >= 0 && j < i {
				b = tick - h[j+1].tick
			}
		} else {
			k := i
			for k > 0 && !h[k-1].gone {
				k--
			}
			b = tick - h[k].tick
		}
		sum += uint64(b)
		n++
		most = max(most, b)
	}
	if n == 0 {
		return 0, 0
	}
	return float64(sum) / float64(n), most
}

// buildWebClient builds the page: entity.ts generated from Entity's schema
// (with the model m, as the server's codec), the runtime bitwire.ts and
// its browser transports browser.ts (clients/ts/src), and app.ts,
// compiled by the TypeScript compiler `npm ci` installs in clients/ts. It
// returns the page's files by path.
func buildWebClient(m *bitwire.Model) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "bitwire-demo-web")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var entity bytes.Buffer
	if err := gen.TypeScript(&entity, "./bitwire.js", gen.Named("EntityCodec", bitwire.MustFor[Entity]().WithModel(m).Schema())); err != nil {
		return nil, err
	}
	app, err := webFiles.ReadFile("web/app.ts")
	if err != nil {
		return nil, err
	}
	if _, err := (tsBuild{
		flag:    "-web",
		files:   map[string][]byte{"entity.ts": entity.Bytes(), "app.ts": app},
		runtime: []string{"bitwire.ts", "browser.ts"},
		browser: true,
	}).compile(dir); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, name := range []string{"entity", "bitwire", "browser", "app"} {
		b, err := os.ReadFile(filepath.Join(dir, "build", name+".js"))
		if err != nil {
			return nil, err
		}
		out["/"+name+".js"] = b
	}
	if out["/index.html"], err = webFiles.ReadFile("web/index.html"); err != nil {
		return nil, err
	}
	return out, nil
}

// finishClients ends the -webclients, once, keeping what they saw.
func (g *webGateway) finishClients() {
	if g.stopClients != nil {
		g.clientSums = g.stopClients()
		g.stopClients = nil
	}
}

// addWebSessions adds the browsers' sessions and the -webclients to the
// run's summary: their desyncs and errors are the run's. It ends the
// -webclients first.
func addWebSessions(s *Summary, g *webGateway) {
	if g == nil {
		return
	}
	g.finishClients()
	s.WebSessions = g.summaries()
	for _, ws := range s.WebSessions {
		s.Desyncs += int(ws.Desyncs)
	}
	s.WebClients = g.clientSums
	for _, c := range s.WebClients {
		s.Desyncs += c.Desyncs
		s.DecodeErrors += c.Errors
	}
}

// webDefaults: with -web and no -duration, the run lasts an hour, long
// enough to watch (the Go clients run beside the page as ever);
// -webclients needs -web.
func webDefaults(fs *flag.FlagSet, cfg *Config) error {
	if cfg.Web == "" {
		if cfg.WebClients != 0 {
			return errors.New("-webclients needs -web")
		}
		return nil
	}
	if cfg.WebClients < 0 || cfg.WebClients > 64 {
		return errors.New("-webclients must be within 0..64")
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "duration" })
	if !set {
		cfg.Duration = time.Hour
	}
	return nil
}

// truthWindow is how much of the truth a -web run keeps: an hour of
// every state would not fit in memory. A state held longer than this
// behind the server's is checked against the entry in force at the
// window's start.
const truthWindow = 60 // seconds

// prune forgets the truth before tick from: each entity keeps the entry
// in force at from and those after it; an entity removed before from is
// forgotten.
func (t *truth) prune(from uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, h := range t.hist {
		i := index(h, from)
		switch {
		case i < 0:
		case h[i].gone && i == len(h)-1:
			delete(t.hist, id)
		case i > 0:
			t.hist[id] = append(h[:0:0], h[i:]...)
		}
	}
	for tick := range t.own {
		if tick < from {
			delete(t.own, tick)
		}
	}
}

// serveFiles serves the page's compiled files, each at its path (index, if
// not empty, also at the root), uncached: the demo rebuilds them each run.
func serveFiles(mux *http.ServeMux, files map[string][]byte, index string) {
	for path, b := range files {
		ctype := "text/javascript; charset=utf-8"
		if strings.HasSuffix(path, ".html") {
			ctype = "text/html; charset=utf-8"
		}
		if path == index {
			path = "/{$}"
		}
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Cache-Control", "no-store")
			w.Write(b)
		})
	}
}
