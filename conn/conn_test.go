package conn_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/conn"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

type Player struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
	Y float32 `net:"q,min=-100,max=100,prec=0.01"`
}

// Move is the input: what the player's controls say this tick.
type Move struct {
	DX   int8 `net:"range,min=-1,max=1"`
	DY   int8 `net:"range,min=-1,max=1"`
	Fire bool
	Aim  float32 `net:"q,min=0,max=6.2832,bits=8"`
}

type Chat struct {
	From uint8
	N    uint32
	Text string `net:",maxlen=80"`
}

type Hit struct {
	Target uint32
	Damage uint8
}

var (
	playerCodec = bitwire.MustFor[Player]()
	moveCodec   = bitwire.MustFor[Move]()
	msgUnion    = func() *bitwire.Union {
		u, err := bitwire.NewUnion(Chat{}, Hit{})
		if err != nil {
			panic(err)
		}
		return u
	}()
)

// net is one direction of a lossy link: each packet is lost with
// probability loss, duplicated with probability dup, and delivered after
// 1 to 1+spread ticks (so packets overtake each other).
type net struct {
	rng            *rand.Rand
	loss, dup      float64
	spread         int
	inFlight       []flying
	sent, received int
}

type flying struct {
	at  int
	pkt []byte
}

func (n *net) send(now int, pkt []byte) {
	n.sent++
	if n.rng.Float64() < n.loss {
		return
	}
	copies := 1
	if n.rng.Float64() < n.dup {
		copies = 2
	}
	for range copies {
		n.inFlight = append(n.inFlight, flying{at: now + 1 + n.rng.Intn(n.spread+1), pkt: slices.Clone(pkt)})
	}
}

func (n *net) deliver(now int, f func([]byte)) {
	keep := n.inFlight[:0]
	var due []flying
	for _, p := range n.inFlight {
		if p.at <= now {
			due = append(due, p)
		} else {
			keep = append(keep, p)
		}
	}
	n.inFlight = keep
	n.rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
	for _, p := range due {
		n.received++
		f(p.pkt)
	}
}

type session struct {
	t        *testing.T
	rng      *rand.Rand
	srv      *replicate.Server[Player]
	server   *conn.Server[Player, Move]
	client   *conn.Client[Player, Move]
	up, down *net
	tick     int
	// what was sent and received, each way
	sentUp, sentDown []uint32
	gotUp, gotDown   []uint32
	moves            map[uint32]Move // the inputs pushed, by tick
	played           int             // inputs played that were the ones pushed for their tick
}

func newSession(t *testing.T, seed int64, loss, dup float64, spread, redundancy int, mode snapshot.Mode) *session {
	rng := rand.New(rand.NewSource(seed))
	var key []byte
	if mode == snapshot.ModeMAC {
		key = []byte("0123456789abcdef0123456789abcdef")
	}
	srv, err := replicate.NewServer(playerCodec)
	require.NoError(t, err)
	const budget = 600
	peer, err := srv.NewPeer(replicate.PeerConfig[Player]{Budget: conn.StateBudget(budget, conn.DefaultShare, mode)})
	require.NoError(t, err)
	q, err := conn.NewInputQueue(moveCodec, 0)
	require.NoError(t, err)
	sch, err := conn.NewChannel(msgUnion, conn.ChannelConfig{})
	require.NoError(t, err)
	server, err := conn.NewServer(peer, q, sch, budget, mode, key)
	require.NoError(t, err)
	cst, err := replicate.NewClient(playerCodec)
	require.NoError(t, err)
	in, err := conn.NewInputSender(moveCodec, redundancy)
	require.NoError(t, err)
	cch, err := conn.NewChannel(msgUnion, conn.ChannelConfig{})
	require.NoError(t, err)
	client, err := conn.NewClient(cst, in, cch, mode, key)
	require.NoError(t, err)
	return &session{t: t, rng: rng, srv: srv, server: server, client: client,
		up: &net{rng: rng, loss: loss, dup: dup, spread: spread}, down: &net{rng: rng, loss: loss, dup: dup, spread: spread},
		moves: map[uint32]Move{}}
}

// step runs one tick of both ends.
func (s *session) step(chatty bool) {
	t := s.t
	s.tick++
	tick := uint32(s.tick)
	// Client: receive, push this tick's input, maybe chat, send.
	s.down.deliver(s.tick, func(p []byte) {
		_, _, err := s.client.Receive(p)
		if err != nil {
			require.ErrorIs(t, err, replicate.ErrStale, "only stale states under reordering")
		}
	})
	for {
		m, ok := s.client.Messages.Receive()
		if !ok {
			break
		}
		s.gotDown = append(s.gotDown, msgN(m))
	}
	mv := Move{DX: int8(s.rng.Intn(3) - 1), DY: int8(s.rng.Intn(3) - 1), Fire: s.rng.Intn(4) == 0, Aim: float32(s.rng.Intn(6))}
	require.NoError(t, moveCodec.Quantize(&mv))
	s.moves[tick+5] = mv // stamped ahead of the server by the delay
	require.NoError(t, s.client.Inputs.Push(tick+5, &mv))
	if chatty && s.rng.Intn(3) == 0 {
		n := uint32(len(s.sentUp))
		if err := s.client.Messages.Send(&Chat{From: 1, N: n, Text: fmt.Sprint("hello ", n)}); err == nil {
			s.sentUp = append(s.sentUp, n)
		} else {
			require.ErrorIs(t, err, conn.ErrQueueFull)
		}
	}
	pkt, err := s.client.Append(nil)
	require.NoError(t, err)
	s.up.send(s.tick, pkt)

	// Server: receive, play one input, move, maybe send a message, send.
	require.NoError(t, s.srv.Advance(tick))
	s.up.deliver(s.tick, func(p []byte) {
		err := s.server.Receive(p)
		if err != nil {
			require.ErrorIs(t, err, replicate.ErrBadAck)
		}
	})
	for {
		m, ok := s.server.Messages.Receive()
		if !ok {
			break
		}
		s.gotUp = append(s.gotUp, msgN(m))
	}
	in, st, fresh := s.server.Inputs.Next()
	if fresh {
		require.Equal(t, s.moves[st], *in, "the input played for tick %d is the one pushed for it", st)
		s.played++
	}
	_, err = s.srv.Set(1, &Player{X: float32(s.tick%200 - 100)})
	require.NoError(t, err)
	if chatty && s.rng.Intn(3) == 0 {
		n := uint32(len(s.sentDown))
		if err := s.server.Messages.Send(&Hit{Target: n, Damage: uint8(n)}); err == nil {
			s.sentDown = append(s.sentDown, n)
		} else {
			require.ErrorIs(t, err, conn.ErrQueueFull)
		}
	}
	out, ok, err := s.server.Append(nil)
	require.NoError(t, err)
	if ok {
		require.LessOrEqual(t, len(out), 600)
		s.down.send(s.tick, out)
	}
}

func msgN(m any) uint32 {
	switch v := m.(type) {
	case *Chat:
		if v.Text != fmt.Sprint("hello ", v.N) {
			panic("message altered")
		}
		return v.N
	case *Hit:
		return v.Target
	}
	panic(fmt.Sprintf("%T", m))
}

// Reliable messages both ways over 10,000 ticks at 20% loss, 5%
// duplication and reordering (1 to 4 ticks of delay): every message is
// delivered exactly once, in order; and every input the game plays as
// fresh is the one the client pushed for that tick.
func TestReliableOrderedUnderLoss(t *testing.T) {
	ticks := 10000
	if testing.Short() {
		ticks = 3000
	}
	for _, mode := range []snapshot.Mode{snapshot.ModeNone, snapshot.ModeMAC} {
		s := newSession(t, 7, 0.2, 0.05, 3, 3, mode)
		for range ticks {
			s.step(true)
		}
		for range 200 { // quiet: let everything arrive
			s.step(false)
		}
		require.Equal(t, s.sentUp, s.gotUp, "client to server, %v", mode)
		require.Equal(t, s.sentDown, s.gotDown, "server to client, %v", mode)
		require.Greater(t, len(s.sentUp), ticks/4)
		require.Greater(t, len(s.sentDown), ticks/4)
		require.Equal(t, 0, s.client.Messages.Pending())
		require.Equal(t, 0, s.server.Messages.Pending())
		st := s.server.Inputs.Stats()
		require.Greater(t, st.Recovered, 0)
		require.Equal(t, s.played, st.Consumed)
		t.Logf("%v: %d messages up, %d down; inputs %+v; channel %+v", mode, len(s.sentUp), len(s.sentDown), st, s.server.Messages.Stats())
	}
}

// A full queue is ErrQueueFull; a message larger than the share is
// ErrMessageTooLarge; a type that is no variant is bitwire.ErrUnknownTag.
func TestChannelErrors(t *testing.T) {
	ch, err := conn.NewChannel(msgUnion, conn.ChannelConfig{Queue: 2, Share: 40})
	require.NoError(t, err)
	require.NoError(t, ch.Send(&Hit{Target: 1}))
	require.ErrorIs(t, ch.Send(&Chat{Text: string(make([]byte, 60))}), conn.ErrMessageTooLarge)
	require.NoError(t, ch.Send(Hit{Target: 2}))
	require.ErrorIs(t, ch.Send(&Hit{Target: 3}), conn.ErrQueueFull)
	ch2, err := conn.NewChannel(msgUnion, conn.ChannelConfig{})
	require.NoError(t, err)
	require.ErrorIs(t, ch2.Send(&Player{}), bitwire.ErrUnknownTag)
	require.Equal(t, 2, ch.Pending())
	_, err = conn.NewChannel(nil, conn.ChannelConfig{})
	require.Error(t, err)
}

// Inputs recovered by redundancy: at 5, 10 and 20% loss (no reordering),
// with the last 3 inputs in each packet nearly every input arrives in
// time; with 1 (no redundancy) the loss rate goes to the game. The
// figures are logged (go test ./conn -run TestInputRedundancy -v).
func TestInputRedundancy(t *testing.T) {
	for _, loss := range []float64{0.05, 0.10, 0.20} {
		var lost [2]int
		for k, red := range []int{1, 3} {
			s := newSession(t, 11, loss, 0, 0, red, snapshot.ModeNone)
			ticks := 3000
			for range ticks {
				s.step(false)
			}
			st := s.server.Inputs.Stats()
			lost[k] = st.Repeated
			t.Logf("loss %2.0f%%, redundancy %d: %d inputs played, %d recovered by redundancy, %d repeated for want of one, %d late; uplink %d bytes a packet",
				loss*100, red, st.Consumed, st.Recovered, st.Repeated, st.Late, s.upBytes())
			if red == 1 {
				require.Zero(t, st.Recovered)
				require.InDelta(t, loss*float64(ticks), float64(st.Repeated), loss*float64(ticks)*0.35)
			} else {
				require.Greater(t, st.Recovered, int(loss*float64(ticks)*0.6))
			}
		}
		// Three in a row lost is loss³ of the inputs.
		require.Less(t, lost[1], lost[0]/5+5, "loss %v", loss)
	}
}

func (s *session) upBytes() int {
	pkt, err := s.client.Append(nil)
	require.NoError(s.t, err)
	return len(pkt)
}

// A client whose ticks jump (a restart) is followed after a short run of
// packets: the queue anchors again and plays its inputs.
func TestInputQueueReanchors(t *testing.T) {
	q, err := conn.NewInputQueue(moveCodec, -1)
	require.NoError(t, err)
	in, err := conn.NewInputSender(moveCodec, 1)
	require.NoError(t, err)
	st, _ := replicate.NewClient(playerCodec)
	c, err := conn.NewClient(st, in, nil, snapshot.ModeNone, nil)
	require.NoError(t, err)
	srv, _ := replicate.NewServer(playerCodec)
	peer, _ := srv.NewPeer(replicate.PeerConfig[Player]{})
	s, err := conn.NewServer(peer, q, nil, 1200, snapshot.ModeNone, nil)
	require.NoError(t, err)
	tick := uint32(100)
	for k := range 40 {
		if k == 20 {
			tick = 5000 // the client restarted its clock
			in, _ = conn.NewInputSender(moveCodec, 1)
			c.Inputs = in
		}
		tick++
		require.NoError(t, in.Push(tick, &Move{DX: 1}))
		pkt, err := c.Append(nil)
		require.NoError(t, err)
		require.NoError(t, s.Receive(pkt))
		_, got, _ := q.Next()
		if k >= 30 {
			require.Equal(t, tick, got)
		}
	}
	require.Equal(t, 1, q.Stats().Reanchored)
}

// Garbage and mutated packets without a trailer are errors or accepted,
// never a panic.
func TestReceiveGarbage(t *testing.T) {
	s := newSession(t, 5, 0, 0, 0, 3, snapshot.ModeNone)
	pkts := exchange(t, s)
	rng := rand.New(rand.NewSource(9))
	for range 20000 {
		p := slices.Clone(pkts[rng.Intn(len(pkts))].b)
		for range 1 + rng.Intn(4) {
			switch rng.Intn(3) {
			case 0:
				p[rng.Intn(len(p))] ^= byte(1 << rng.Intn(8))
			case 1:
				p = p[:rng.Intn(len(p)+1)]
			case 2:
				if len(p) > 3 {
					p[3+rng.Intn(len(p)-3)] = byte(rng.Intn(256))
				}
			}
			if len(p) == 0 {
				break
			}
		}
		_ = s.server.Receive(p)
		_, _, _ = s.client.Receive(p)
	}
}

// A channel's section never takes more than its share: messages of every
// size up to the largest a share holds, many queued, in packets of a
// client that sends nothing else.
func TestChannelShareBound(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, share := range []int{20, 60, 200} {
		ch, err := conn.NewChannel(msgUnion, conn.ChannelConfig{Share: share, Queue: 64, Resend: 1})
		require.NoError(t, err)
		st, _ := replicate.NewClient(playerCodec)
		c, err := conn.NewClient[Player, Move](st, nil, ch, snapshot.ModeNone, nil)
		require.NoError(t, err)
		sent := 0
		for range 2000 {
			n := rng.Intn(3) // mostly small: many in a section, and a count of several bits
			if rng.Intn(4) == 0 {
				n = rng.Intn(81)
			}
			err := ch.Send(&Chat{Text: strings.Repeat("z", n)})
			if err == nil {
				sent++
			} else if !errors.Is(err, conn.ErrQueueFull) {
				require.ErrorIs(t, err, conn.ErrMessageTooLarge)
			}
			pkt, err := c.Append(nil)
			require.NoError(t, err)
			require.LessOrEqual(t, len(pkt), (22+share*8+7)/8, "share %d", share)
		}
		require.Greater(t, sent, 10)
	}
}

// An input for a tick a window or more ahead of the one played next has no
// slot to wait in: it is dropped, and counted, never lost silently.
func TestInputQueueCountsFarAhead(t *testing.T) {
	q, err := conn.NewInputQueue(moveCodec, -1)
	require.NoError(t, err)
	in, err := conn.NewInputSender(moveCodec, 1)
	require.NoError(t, err)
	st, _ := replicate.NewClient(playerCodec)
	c, err := conn.NewClient(st, in, nil, snapshot.ModeNone, nil)
	require.NoError(t, err)
	srv, _ := replicate.NewServer(playerCodec)
	peer, _ := srv.NewPeer(replicate.PeerConfig[Player]{})
	s, err := conn.NewServer(peer, q, nil, 1200, snapshot.ModeNone, nil)
	require.NoError(t, err)
	send := func(tick uint32) {
		require.NoError(t, in.Push(tick, &Move{DX: 1}))
		pkt, err := c.Append(nil)
		require.NoError(t, err)
		require.NoError(t, s.Receive(pkt))
	}
	send(100) // anchors the queue: tick 100 is played next
	require.Zero(t, q.Stats().Ahead)
	send(163) // 63 ahead: the last slot of the window
	require.Zero(t, q.Stats().Ahead)
	send(164) // 64 ahead: no slot
	require.Equal(t, 1, q.Stats().Ahead)
	require.Equal(t, 2, q.Stats().Received)
}
