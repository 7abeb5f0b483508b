package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"os"
	"sync"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/conn"
	"github.com/bitwire/bitwire/interp"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// The arena (-arena): the rest of a game's connection end to end, over
// real UDP on loopback. Every client sends its player's inputs (the last
// 3 in each packet, package conn), and the server moves the players only
// from the inputs it plays; clients and server chat over the reliable
// channel (numbered messages, checked for order and completeness); every
// client interpolates every player at its clock's render tick (package
// interp) and measures how far that is from where the server had the
// player at that tick. Datagrams are dropped at random both ways.

// ArenaConfig is one arena run.
type ArenaConfig struct {
	Duration time.Duration
	Clients  int
	Rate     int
	Loss     float64
	Seed     int64
	// Node is the number of Node clients beside the Go ones
	// (nodeclient/arena.ts; needs node and `npm ci` in clients/ts).
	Node int
	// Web, when set, serves the arena's page there (arena_web.go): up to
	// arenaWebSlots browsers play beside the other clients.
	Web string
	// Ctx ends the run early: it ends as the Duration would, after two
	// quiet seconds, with every message in flight delivered. nil: none.
	Ctx context.Context
	// Log gets the page's address; nil: none.
	Log io.Writer
}

// ArenaAvatar is a player as the clients see it.
type ArenaAvatar struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
	Z float32 `net:"q,min=-100,max=100,prec=0.01"`
}

// ArenaControl is a player's input for one tick.
type ArenaControl struct {
	DX int8 `net:"range,min=-1,max=1"`
	DZ int8 `net:"range,min=-1,max=1"`
}

// ArenaSay is a chat line, numbered by its sender.
type ArenaSay struct {
	From uint8
	N    uint32
	Text string `net:",maxlen=32"`
}

// ArenaSummary is what an arena run measured.
type ArenaSummary struct {
	Ticks, Clients, Node int
	Loss                 float64
	// Inputs, summed over the server's queues.
	InputsPushed, InputsPlayed, InputsRecovered, InputsRepeated, InputsLate int
	// Messages sent and delivered, each way; InOrder is false when any
	// arrived out of order, twice or not at all.
	UpSent, UpDelivered, DownSent, DownDelivered int
	InOrder                                      bool
	// The clients' interpolation delay (ticks, mean of the last second) and
	// how far the drawn players were from the server's positions at the
	// render tick (units, mean and largest).
	Delay, ErrMean, ErrMax float64
	Samples                int
	NodeSamples            int // of them, drawn by the Node clients
	UpBytes, DownBytes     int64
	// The browser sessions (-web), each counted apart: a page's messages
	// and inputs are not in the sums above.
	Browsers []ArenaBrowser
}

const arenaSpeed = 0.25 // units a tick at full input

// arenaTruth is the server's position of every player at every tick.
type arenaTruth struct {
	mu  sync.Mutex
	pos map[uint32][][2]float32 // by player: index tick-1
}

func (t *arenaTruth) at(id uint32, tick float64) ([2]float32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pos[id]
	i := int(math.Floor(tick)) - 1
	if i < 0 || i+1 >= len(p) {
		return [2]float32{}, false
	}
	f := float32(tick - math.Floor(tick))
	return [2]float32{p[i][0] + (p[i+1][0]-p[i][0])*f, p[i][1] + (p[i+1][1]-p[i][1])*f}, true
}

// runArena runs the arena and returns its summary.
func runArena(cfg ArenaConfig) (ArenaSummary, error) {
	if cfg.Clients < 1 || cfg.Clients > 200 || cfg.Node < 0 || cfg.Node > 64 || cfg.Rate < 1 || cfg.Duration <= 0 || cfg.Loss < 0 || cfg.Loss >= 1 {
		return ArenaSummary{}, errors.New("arena: clients 1..200, node 0..64, rate and duration positive, loss in [0, 1)")
	}
	avatars, controls := bitwire.MustFor[ArenaAvatar](), bitwire.MustFor[ArenaControl]()
	chat, err := bitwire.NewUnion(ArenaSay{})
	if err != nil {
		return ArenaSummary{}, err
	}
	lo := net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	sconn, err := net.ListenUDP("udp", &lo)
	if err != nil {
		return ArenaSummary{}, err
	}
	defer sconn.Close()
	const budget = 1200
	world, _ := replicate.NewServer(avatars, replicate.WithTickRate(cfg.Rate))
	type remote struct {
		addr   *net.UDPAddr
		end    *conn.Server[ArenaAvatar, ArenaControl]
		queue  *conn.InputQueue[ArenaControl]
		ch     *conn.Channel
		x, z   float32
		nextUp uint32 // the next chat number expected from the client
		sent   uint32 // chat lines sent to it
	}
	type local struct {
		sock  *net.UDPConn
		end   *conn.Client[ArenaAvatar, ArenaControl]
		in    *conn.InputSender[ArenaControl]
		ch    *conn.Channel
		clock *interp.Clock
		ip    *interp.Interpolator[ArenaAvatar]
		rng   *rand.Rand
		goal  [2]float32
		pos   [2]float32
		stamp uint32
		sent  uint32 // chat lines sent
		next  uint32 // the next chat number expected from the server
	}
	var sum ArenaSummary
	sum.Clients, sum.Node, sum.Loss, sum.InOrder = cfg.Clients, cfg.Node, cfg.Loss, true
	players := cfg.Clients + cfg.Node
	if cfg.Web != "" {
		players += arenaWebSlots
	}
	truth := &arenaTruth{pos: map[uint32][][2]float32{}}
	rs := make([]*remote, players)
	ls := make([]*local, cfg.Clients)
	byAddr := map[string]int{}
	for i := range players {
		peer, err := world.NewPeer(replicate.PeerConfig[ArenaAvatar]{Budget: conn.StateBudget(budget, conn.DefaultShare, snapshot.ModeChecksum), Integrity: snapshot.ModeChecksum})
		if err != nil {
			return sum, err
		}
		q, _ := conn.NewInputQueue(controls, inputBuffer(cfg, i))
		sch, _ := conn.NewChannel(chat, conn.ChannelConfig{})
		end, err := conn.NewServer(peer, q, sch, budget, snapshot.ModeChecksum, nil)
		if err != nil {
			return sum, err
		}
		if i >= cfg.Clients {
			rs[i] = &remote{end: end, queue: q, ch: sch}
			continue
		}
		sock, err := net.ListenUDP("udp", &lo)
		if err != nil {
			return sum, err
		}
		defer sock.Close()
		view, _ := replicate.NewClient(avatars, replicate.WithIntegrity(snapshot.ModeChecksum, nil))
		in, _ := conn.NewInputSender(controls, 3)
		cch, _ := conn.NewChannel(chat, conn.ChannelConfig{})
		cend, err := conn.NewClient(view, in, cch, snapshot.ModeChecksum, nil)
		if err != nil {
			return sum, err
		}
		ip, err := interp.New(avatars, interp.Config[ArenaAvatar]{})
		if err != nil {
			return sum, err
		}
		rng := rand.New(rand.NewSource(cfg.Seed*1000 + int64(i)))
		addr := sock.LocalAddr().(*net.UDPAddr)
		rs[i] = &remote{addr: addr, end: end, queue: q, ch: sch}
		ls[i] = &local{sock: sock, end: cend, in: in, ch: cch, clock: interp.NewClock(float64(cfg.Rate)), ip: ip, rng: rng}
		byAddr[addr.String()] = i
	}
	var nodes []*arenaNode
	if cfg.Node > 0 {
		dir, err := os.MkdirTemp("", "bitwire-arena-node-")
		if err != nil {
			return sum, err
		}
		defer os.RemoveAll(dir)
		node, script, err := buildArenaNode(dir)
		if err != nil {
			return sum, err
		}
		defer func() {
			for _, n := range nodes {
				if n.cmd.ProcessState == nil {
					_ = n.cmd.Process.Kill()
					_ = n.cmd.Wait()
				}
			}
		}()
		for k := range cfg.Node {
			i := cfg.Clients + k
			n, err := startArenaNode(node, script, i, sconn.LocalAddr().(*net.UDPAddr), cfg, players)
			if err != nil {
				return sum, err
			}
			nodes = append(nodes, n)
			rs[i].addr = n.addr
			byAddr[n.addr.String()] = i
		}
	}
	var web *arenaWeb
	if cfg.Web != "" {
		if web, err = startArenaWeb(cfg.Web, cfg.Clients+cfg.Node, players, truth, cfg); err != nil {
			return sum, err
		}
		defer web.close()
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "arena: browsers play at %s\n", web.url)
		}
	}
	// browser reports whether the arena's player i is a browser slot.
	browser := func(i int) bool { return web != nil && i >= cfg.Clients+cfg.Node }
	var done <-chan struct{}
	if cfg.Ctx != nil {
		done = cfg.Ctx.Done()
	}
	drop := rand.New(rand.NewSource(cfg.Seed))
	lost := func() bool { return drop.Float64() < cfg.Loss }
	buf := make([]byte, 2048)
	// drain reads what arrived at sock within the deadline.
	drain := func(sock *net.UDPConn, f func(pkt []byte, from *net.UDPAddr)) {
		for {
			_ = sock.SetReadDeadline(time.Now().Add(200 * time.Microsecond))
			n, from, err := sock.ReadFromUDP(buf)
			if err != nil {
				return
			}
			f(buf[:n], from)
		}
	}
	ticks := int(cfg.Duration.Seconds() * float64(cfg.Rate))
	sum.Ticks = ticks
	period := time.Second / time.Duration(cfg.Rate)
	start := time.Now()
	var delays []float64
	var errSum float64
	for tick := 1; tick <= ticks; tick++ {
		time.Sleep(time.Until(start.Add(time.Duration(tick) * period)))
		select {
		case <-done:
			// The end is two quiet seconds away, as at the Duration's end.
			done = nil
			if tick < ticks-2*cfg.Rate {
				ticks = tick + 2*cfg.Rate
				sum.Ticks = ticks
			}
		default:
		}
		if tick == ticks-2*cfg.Rate {
			for _, n := range nodes {
				_, _ = io.WriteString(n.stdin, "Q\n") // quiet: what they sent arrives before the end
			}
		}
		// The clients: receive, push the tick's input, chat, send.
		for i, c := range ls {
			drain(c.sock, func(pkt []byte, _ *net.UDPAddr) {
				info, has, err := c.end.Receive(pkt)
				if err == nil && has {
					c.clock.Observe(info.Tick, time.Now())
				}
			})
			for m, ok := c.ch.Receive(); ok; m, ok = c.ch.Receive() {
				s := m.(*ArenaSay)
				if s.N != c.next {
					sum.InOrder = false
				}
				c.next = s.N + 1
				sum.DownDelivered++
			}
			// Steer towards a goal; a new goal when there.
			if d := math.Hypot(float64(c.goal[0]-c.pos[0]), float64(c.goal[1]-c.pos[1])); d < 1 || tick == 1 {
				c.goal = [2]float32{float32(c.rng.Float64()*160 - 80), float32(c.rng.Float64()*160 - 80)}
			}
			ctl := ArenaControl{DX: sign(c.goal[0] - c.pos[0]), DZ: sign(c.goal[1] - c.pos[1])}
			c.pos[0] += float32(ctl.DX) * arenaSpeed
			c.pos[1] += float32(ctl.DZ) * arenaSpeed
			if c.stamp == 0 {
				c.stamp = uint32(max(1, int(c.clock.ServerTick(time.Now(), 0))))
			} else {
				c.stamp++
			}
			_ = c.in.Push(c.stamp, &ctl)
			if tick%15 == i%15 && tick <= ticks-cfg.Rate { // the last second is quiet: what is in flight arrives
				if c.ch.Send(&ArenaSay{From: uint8(i), N: c.sent, Text: fmt.Sprint("gg ", c.sent)}) == nil {
					c.sent++
					sum.UpSent++
				}
			}
			pkt, err := c.end.Append(nil)
			if err != nil {
				return sum, err
			}
			sum.UpBytes += int64(len(pkt))
			if !lost() {
				_, _ = c.sock.WriteToUDP(pkt, sconn.LocalAddr().(*net.UDPAddr))
			}
			// Draw every player at the render tick.
			render := c.clock.RenderTick(time.Now())
			for id := uint32(1); id <= uint32(players); id++ {
				var a ArenaAvatar
				s, ok := c.ip.Sample(c.end.State, id, render, &a)
				if !ok || s.Held {
					continue
				}
				if p, ok := truth.at(id, render); ok {
					e := math.Hypot(float64(a.X-p[0]), float64(a.Z-p[1]))
					errSum += e
					sum.ErrMax = math.Max(sum.ErrMax, e)
					sum.Samples++
				}
			}
			if tick > ticks-cfg.Rate {
				delays = append(delays, c.clock.Delay())
			}
		}
		// The server: receive, play one input a player, move, chat, send.
		if err := world.Advance(uint32(tick)); err != nil {
			return sum, err
		}
		drain(sconn, func(pkt []byte, from *net.UDPAddr) {
			if i, ok := byAddr[from.String()]; ok {
				_ = rs[i].end.Receive(pkt)
			}
		})
		if web != nil {
			web.step(func(i int, pkt []byte) { _ = rs[i].end.Receive(pkt) })
		}
		truth.mu.Lock()
		for i, r := range rs {
			up, inOrder := 0, true
			for m, ok := r.ch.Receive(); ok; m, ok = r.ch.Receive() {
				s := m.(*ArenaSay)
				inOrder = inOrder && s.N == r.nextUp && int(s.From) == i
				r.nextUp = s.N + 1
				up++
			}
			if !browser(i) {
				sum.UpDelivered += up
				sum.InOrder = sum.InOrder && inOrder
			}
			// A browser's player stands still until a page takes it.
			in := &ArenaControl{}
			if !browser(i) || web.live(i) {
				in, _, _ = r.queue.Next()
			}
			r.x = float32(math.Max(-99, math.Min(99, float64(r.x+float32(in.DX)*arenaSpeed))))
			r.z = float32(math.Max(-99, math.Min(99, float64(r.z+float32(in.DZ)*arenaSpeed))))
			if _, err := world.Set(uint32(i+1), &ArenaAvatar{X: r.x, Z: r.z}); err != nil {
				truth.mu.Unlock()
				return sum, err
			}
			q, _ := world.Get(uint32(i + 1))
			truth.pos[uint32(i+1)] = append(truth.pos[uint32(i+1)], [2]float32{q.X, q.Z})
			if browser(i) {
				if web.live(i) && tick%10 == 0 && r.sent < arenaWebDown && r.ch.Send(&ArenaSay{From: 255, N: r.sent, Text: "tick"}) == nil {
					r.sent++
				}
				st := r.queue.Stats()
				web.publish(i, func(b *ArenaBrowser) {
					b.Played, b.Recovered, b.Repeated, b.Late, b.Skipped = st.Consumed, st.Recovered, st.Repeated, st.Late, st.Skipped
					b.UpDelivered += up
					b.UpInOrder = b.UpInOrder && inOrder
					b.DownSent = int(r.sent)
				})
			} else if tick%20 == 0 && tick <= ticks-cfg.Rate && r.ch.Send(&ArenaSay{From: 255, N: r.sent, Text: "tick"}) == nil {
				r.sent++
				sum.DownSent++
			}
		}
		truth.mu.Unlock()
		for i, r := range rs {
			if browser(i) && !web.live(i) {
				continue
			}
			pkt, ok, err := r.end.Append(nil)
			if err != nil {
				return sum, err
			}
			switch {
			case !ok:
			case browser(i):
				web.publish(i, func(b *ArenaBrowser) { b.Packets++ })
				if !lost() {
					web.send(i, pkt)
				}
			default:
				sum.DownBytes += int64(len(pkt))
				if !lost() {
					_, _ = sconn.WriteToUDP(pkt, r.addr)
				}
			}
		}
	}
	if web != nil {
		sum.Browsers = web.sessions()
	}
	for i, r := range rs {
		if browser(i) {
			continue
		}
		st := r.queue.Stats()
		sum.InputsPlayed += st.Consumed
		sum.InputsRecovered += st.Recovered
		sum.InputsRepeated += st.Repeated
		sum.InputsLate += st.Late
	}
	for _, c := range ls {
		sum.InputsPushed += c.in.Stats().Pushed
	}
	for _, n := range nodes {
		if err := n.finish(truth, &sum, &errSum); err != nil {
			return sum, err
		}
	}
	if sum.Samples > 0 {
		sum.ErrMean = errSum / float64(sum.Samples)
	}
	for _, d := range delays {
		sum.Delay += d / float64(len(delays))
	}
	return sum, nil
}

func sign(v float32) int8 {
	switch {
	case v > 0.2:
		return 1
	case v < -0.2:
		return -1
	}
	return 0
}

// printArena writes the arena's summary.
func printArena(w io.Writer, s *ArenaSummary, rate int) {
	fmt.Fprintf(w, "arena: %d Go and %d Node clients, %d ticks at %d Hz, %.0f%% of datagrams lost each way (UDP on loopback)\n", s.Clients, s.Node, s.Ticks, rate, s.Loss*100)
	fmt.Fprintf(w, "inputs:   %d pushed, %d played on their tick, %d of them recovered by redundancy, %d ticks repeated the last input (lost or late), %d arrived late\n",
		s.InputsPushed, s.InputsPlayed, s.InputsRecovered, s.InputsRepeated, s.InputsLate)
	order := "all, in order"
	if !s.InOrder || s.UpDelivered != s.UpSent || s.DownDelivered != s.DownSent {
		order = "NOT all in order"
	}
	fmt.Fprintf(w, "messages: %d of %d delivered client to server, %d of %d server to clients: %s\n", s.UpDelivered, s.UpSent, s.DownDelivered, s.DownSent, order)
	fmt.Fprintf(w, "interpolation: delay %.2f ticks (%.0f ms, Go clients), drawn %.3f units from the server's position on average, %.3f at most (%d samples, %d by Node clients)\n",
		s.Delay, s.Delay*1000/float64(rate), s.ErrMean, s.ErrMax, s.Samples, s.NodeSamples)
	fmt.Fprintf(w, "bytes:    %.1f a Go client packet, %.1f a server packet on average\n", float64(s.UpBytes)/float64(max(1, s.Ticks*s.Clients)), float64(s.DownBytes)/float64(max(1, s.Ticks*(s.Clients+s.Node))))
	for _, b := range s.Browsers {
		order := "all, in order"
		if !b.UpInOrder || !b.DownInOrder || b.UpDelivered != b.UpSent || b.DownDelivered != b.DownSent {
			order = "NOT all in order"
		}
		fmt.Fprintf(w, "browser:  session %d over %s (player %d): inputs %d pushed, %d played, %d recovered by redundancy, %d repeated, %d late, %d skipped; messages %d of %d up, %d of %d down: %s; delay %.2f ticks, drawn %.3f units off on average, %.3f at most (%d samples)\n",
			b.Session, b.Transport, b.Player, b.Pushed, b.Played, b.Recovered, b.Repeated, b.Late, b.Skipped, b.UpDelivered, b.UpSent, b.DownDelivered, b.DownSent, order, b.Delay, b.ErrMean, b.ErrMax, b.Samples)
	}
}

// inputBuffer is player i's input jitter buffer, in ticks: the default,
// or for a browser's more, as a page's timers and its transport's
// delivery jitter more than a process's (at 2 ticks, a page's inputs
// mostly arrive after their tick when their packet is lost).
func inputBuffer(cfg ArenaConfig, i int) int {
	if cfg.Web != "" && i >= cfg.Clients+cfg.Node {
		return arenaWebBuffer
	}
	return 0
}
