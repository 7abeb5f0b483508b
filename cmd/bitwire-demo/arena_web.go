package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/transport"
)

// The arena's browser clients (-arena -web ADDR): a page (web/arena.ts)
// that is one more player of the arena, over WebTransport or WebRTC. It
// runs the TypeScript runtime's conn.ts and interp.ts as the Node client
// does: it sends its player's inputs (the last 3 in each packet), chats
// over the reliable channel, and draws every player at its clock's render
// tick. The arena keeps arenaWebSlots players for browsers; a slot's
// player stands still until a session takes it. Each page reports what it
// drew and its counts to /report, where the server compares the drawn
// positions with its own and answers with the session's figures
// (ArenaBrowser): the browser test judges those.

// arenaWebSlots is the number of arena players kept for browsers.
const arenaWebSlots = 4

// arenaWebBuffer is the input jitter buffer of a browser's player, ticks.
const arenaWebBuffer = 4

// Every browser session sends arenaWebUp chat lines (one every 5 ticks)
// and receives arenaWebDown (one every 10), so that a page knows when
// every message has arrived and its figures are final.
const (
	arenaWebUp   = 20
	arenaWebDown = 10
)

// ArenaBrowser is one browser session of the arena, as the server and
// the page's reports count it.
type ArenaBrowser struct {
	Session   uint32 `json:"session"`
	Transport string `json:"transport"`
	Player    uint32 `json:"player"` // its entity id
	// Counted by the server: the session's input queue, its packets, the
	// messages it delivered from the page (in order or not) and sent.
	Played, Recovered, Repeated, Late, Skipped int
	Packets, PacketsIn                         int64 // sent to the page, received from it
	UpDelivered, DownSent                      int
	UpInOrder                                  bool
	// From the page's last report.
	Pushed, UpSent, DownDelivered int
	DownInOrder                   bool
	Delay                         float64 // ticks
	// The players the page drew against the server's positions at the
	// render tick, units.
	Samples         int
	ErrMean, ErrMax float64
	errSum          float64
}

// arenaSlot is a player kept for a browser: free, or a session's.
type arenaSlot struct {
	taken bool
	live  bool // joined and not left
	srv   transport.Server
	peer  transport.PeerID
	sum   ArenaBrowser
	last  ArenaBrowser // sum as of the page's last report
}

type arenaWebEvent struct {
	srv transport.Server
	transport.Event
}

// arenaWeb serves the page and carries the browsers' datagrams. step,
// send and publish run on the arena's loop; the HTTP handlers and the
// transports' readers on their own goroutines.
type arenaWeb struct {
	first int // the arena's index of the first slot
	truth *arenaTruth
	rate  int
	loss  float64

	ln     net.Listener
	http   *http.Server
	wt     *transport.WebTransportServer
	rtc    *transport.WebRTCServer
	events chan arenaWebEvent
	wg     sync.WaitGroup
	cancel context.CancelFunc
	url    string

	mu      sync.Mutex
	slots   [arenaWebSlots]arenaSlot
	lastNum uint32
}

// startArenaWeb builds the page and serves it on addr; the slots are the
// arena's players first, first+1, ….
func startArenaWeb(addr string, first, players int, truth *arenaTruth, cfg ArenaConfig) (*arenaWeb, error) {
	files, err := buildArenaPage()
	if err != nil {
		return nil, err
	}
	g := &arenaWeb{first: first, truth: truth, rate: cfg.Rate, loss: cfg.Loss, events: make(chan arenaWebEvent, 4096)}
	if g.ln, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("-web: %w", err)
	}
	tcp := g.ln.Addr().(*net.TCPAddr)
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	hello := func(transport.PeerID) ([]byte, error) { return g.hello() }
	udp := net.JoinHostPort(tcp.IP.String(), strconv.Itoa(tcp.Port))
	if g.wt, err = transport.ListenWebTransport(udp, transport.WebTransportConfig{Options: transport.Options{Hello: hello}}); err != nil {
		g.ln.Close()
		return nil, fmt.Errorf("-web: WebTransport: %w", err)
	}
	if g.rtc, err = transport.ListenWebRTC(transport.WebRTCConfig{Options: transport.Options{Hello: hello}, UDPAddr: net.JoinHostPort(tcp.IP.String(), "0")}); err != nil {
		g.wt.Close()
		g.ln.Close()
		return nil, fmt.Errorf("-web: WebRTC: %w", err)
	}
	mux := http.NewServeMux()
	serveFiles(mux, files, "/index.html")
	mux.HandleFunc("GET /config.json", func(w http.ResponseWriter, r *http.Request) {
		wtHost := host
		if h, _, err := net.SplitHostPort(r.Host); err == nil && h != "" && tcp.IP.IsUnspecified() {
			wtHost = h
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"webtransport": fmt.Sprintf("https://%s%s", net.JoinHostPort(wtHost, strconv.Itoa(g.wt.Addr().Port)), g.wt.Path()),
			"certHash":     base64.StdEncoding.EncodeToString(g.wt.CertificateHash()),
			"webrtc":       "/webrtc",
			"rate":         cfg.Rate,
			"loss":         cfg.Loss,
			"players":      players,
			"up":           arenaWebUp,
			"down":         arenaWebDown,
			"speed":        arenaSpeed,
		})
	})
	mux.Handle("POST /webrtc", g.rtc)
	mux.HandleFunc("POST /report", g.report)
	g.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	g.url = fmt.Sprintf("http://%s/", net.JoinHostPort(host, strconv.Itoa(tcp.Port)))
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.wg.Go(func() { g.http.Serve(g.ln) })
	for _, s := range []transport.Server{g.wt, g.rtc} {
		g.wg.Go(func() {
			for {
				e, err := s.Receive(ctx)
				if err != nil {
					return
				}
				select {
				case g.events <- arenaWebEvent{s, e}:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	return g, nil
}

// hello takes a free slot for a session: its number and its slot's
// player, each a little-endian uint32. No slot left refuses the session.
func (g *arenaWeb) hello() ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.slots {
		if !g.slots[k].taken {
			g.lastNum++
			g.slots[k] = arenaSlot{taken: true, sum: ArenaBrowser{Session: g.lastNum, Player: uint32(g.first + k + 1), UpInOrder: true}}
			h := binary.LittleEndian.AppendUint32(nil, g.lastNum)
			return binary.LittleEndian.AppendUint32(h, uint32(g.first+k)), nil
		}
	}
	return nil, errors.New("arena: every browser slot is taken")
}

// step applies the transports' events on the arena's loop: joins and
// leaves, and each datagram handed to f with its slot.
func (g *arenaWeb) step(f func(slot int, pkt []byte)) {
	for {
		select {
		case e := <-g.events:
			g.mu.Lock()
			k := -1
			switch e.Kind {
			case transport.Joined:
				if e.Info != nil && len(e.Info.Hello) == 8 {
					k = int(binary.LittleEndian.Uint32(e.Info.Hello[4:])) - g.first
				}
				if k >= 0 && k < len(g.slots) {
					s := &g.slots[k]
					s.live, s.srv, s.peer = true, e.srv, e.Peer
					s.sum.Transport = e.Info.Transport
				}
				k = -1
			case transport.Left, transport.Datagram:
				for j := range g.slots {
					if s := &g.slots[j]; s.live && s.srv == e.srv && s.peer == e.Peer {
						k = j
					}
				}
				if k >= 0 && e.Kind == transport.Left {
					g.slots[k].live = false
					k = -1
				}
			}
			g.mu.Unlock()
			if k >= 0 {
				g.mu.Lock()
				g.slots[k].sum.PacketsIn++
				g.mu.Unlock()
				f(g.first+k, e.Data)
			}
		default:
			return
		}
	}
}

// live reports whether the arena's player i is a browser's now.
func (g *arenaWeb) live(i int) bool {
	k := i - g.first
	g.mu.Lock()
	defer g.mu.Unlock()
	return k >= 0 && k < len(g.slots) && g.slots[k].live
}

// send sends pkt to the browser of the arena's player i.
func (g *arenaWeb) send(i int, pkt []byte) {
	g.mu.Lock()
	s := g.slots[i-g.first]
	g.mu.Unlock()
	if s.live {
		_ = s.srv.Send(s.peer, pkt) // one the transport cannot take is lost, as on UDP
	}
}

// publish updates the server's side of player i's figures.
func (g *arenaWeb) publish(i int, f func(*ArenaBrowser)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(&g.slots[i-g.first].sum)
}

// report takes a page's report (?session=N): lines "D id render x z" (a
// player it drew) and "S pushed sent delivered inorder delay" (its counts),
// and answers with the session's figures.
func (g *arenaWeb) report(w http.ResponseWriter, r *http.Request) {
	num, err := strconv.ParseUint(r.URL.Query().Get("session"), 10, 32)
	k := -1
	g.mu.Lock()
	for j := range g.slots {
		if g.slots[j].taken && g.slots[j].sum.Session == uint32(num) {
			k = j
		}
	}
	g.mu.Unlock()
	if err != nil || k < 0 {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	var add ArenaBrowser
	var counts []string
	sc := bufio.NewScanner(http.MaxBytesReader(w, r.Body, 1<<20))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 5 && f[0] == "D":
			id, err1 := strconv.ParseUint(f[1], 10, 32)
			var v [3]float64
			var errs error
			for j := range v {
				var err error
				v[j], err = strconv.ParseFloat(f[2+j], 64)
				errs = errors.Join(errs, err)
			}
			if err1 != nil || errs != nil {
				http.Error(w, "bad report line "+strconv.Quote(sc.Text()), http.StatusBadRequest)
				return
			}
			if p, ok := g.truth.at(uint32(id), v[0]); ok {
				e := math.Hypot(v[1]-float64(p[0]), v[2]-float64(p[1]))
				add.errSum += e
				add.ErrMax = max(add.ErrMax, e)
				add.Samples++
			}
		case len(f) == 6 && f[0] == "S":
			counts = f
		case len(f) == 0:
		default:
			http.Error(w, "bad report line "+strconv.Quote(sc.Text()), http.StatusBadRequest)
			return
		}
	}
	if sc.Err() != nil {
		http.Error(w, "bad report", http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	s := &g.slots[k].sum
	s.errSum += add.errSum
	s.Samples += add.Samples
	s.ErrMax = max(s.ErrMax, add.ErrMax)
	if s.Samples > 0 {
		s.ErrMean = s.errSum / float64(s.Samples)
	}
	if counts != nil {
		s.Pushed, _ = strconv.Atoi(counts[1])
		s.UpSent, _ = strconv.Atoi(counts[2])
		s.DownDelivered, _ = strconv.Atoi(counts[3])
		s.DownInOrder = counts[4] == "true"
		s.Delay, _ = strconv.ParseFloat(counts[5], 64)
	}
	out := *s
	g.slots[k].last = out
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// sessions is every session's figures as of its page's last report (a
// page that closed is not at once known to be gone: the server's counts
// after its last report would count ticks without it), by slot.
func (g *arenaWeb) sessions() []ArenaBrowser {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []ArenaBrowser
	for _, s := range g.slots {
		if s.taken && s.last.Transport != "" {
			out = append(out, s.last)
		}
	}
	return out
}

func (g *arenaWeb) close() {
	g.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	g.http.Shutdown(ctx)
	g.http.Close()
	g.wt.Close()
	g.rtc.Close()
	g.wg.Wait()
}

// buildArenaPage compiles the page: arena_gen.ts generated from the
// arena's types, every file of the runtime (clients/ts/src), and
// web/arena.ts; it returns the page's files by path.
func buildArenaPage() (map[string][]byte, error) {
	chat, err := bitwire.NewUnion(ArenaSay{})
	if err != nil {
		return nil, err
	}
	var g bytes.Buffer
	if err := gen.TypeScript(&g, "./bitwire.js", gen.Named("Avatar", bitwire.MustFor[ArenaAvatar]().Schema()),
		gen.Named("Control", bitwire.MustFor[ArenaControl]().Schema()), gen.Named("Say", chat.Schema())); err != nil {
		return nil, err
	}
	page, err := webFiles.ReadFile("web/arena.ts")
	if err != nil {
		return nil, err
	}
	root, err := repoRoot()
	if err != nil {
		return nil, fmt.Errorf("-web: %w", err)
	}
	// Every runtime file, whatever the runtime's files are named.
	names, err := filepath.Glob(filepath.Join(root, "clients", "ts", "src", "*.ts"))
	if err != nil {
		return nil, err
	}
	var runtime []string
	for _, n := range names {
		runtime = append(runtime, filepath.Base(n))
	}
	dir, err := os.MkdirTemp("", "bitwire-arena-web")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if _, err := (tsBuild{
		flag:    "-arena -web",
		files:   map[string][]byte{"arena_gen.ts": g.Bytes(), "arena.ts": page},
		runtime: runtime,
		browser: true,
	}).compile(dir); err != nil {
		return nil, err
	}
	built, err := filepath.Glob(filepath.Join(dir, "build", "*.js"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, path := range built {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out["/"+filepath.Base(path)] = b
	}
	if out["/index.html"], err = webFiles.ReadFile("web/arena.html"); err != nil {
		return nil, err
	}
	return out, nil
}
