// Package transport carries datagrams between a game server and its
// clients, over plain UDP and over the channels a browser can open:
// WebTransport datagrams, WebRTC data channels (unordered, no
// retransmits) and, where neither gets through, WebSocket (reliable and
// ordered, so a lost segment delays every later datagram).
//
// A Server is the server's side of one transport: it reports peers as they
// join and leave, hands over the datagrams each sends, and sends datagrams
// to any of them. A Conn is one client's side. Both move whole datagrams,
// never a stream of bytes, so the packets of package snapshot and package
// replicate run over any of them unchanged: what a UDP socket would send,
// Send sends.
//
// Every transport carries datagrams of up to MaxDatagram bytes. On the
// transports with a secure channel (WebTransport over TLS 1.3, WebRTC over
// DTLS, WebSocket over TLS when served as wss), the server can hand each
// client a secret as the session opens (Options.Hello): how a browser gets
// its per-client key for replicate's MAC mode. Plain UDP has no such
// channel: a connect token (IssueToken, UDPConfig.TokenSecret) lets a
// game's web backend hand the key out instead.
package transport

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// MaxDatagram is the largest datagram, in bytes, that every transport of
// this package carries in one piece: replicate's and snapshot's default
// packet budget. A larger one may be refused with ErrTooLarge.
const MaxDatagram = 1200

// MaxHello is the largest hello (Options.Hello), in bytes.
const MaxHello = 4096

// Errors. Each is tested with errors.Is; the transports wrap them with
// what they were doing.
var (
	// ErrClosed: the Server or Conn was closed, or the session ended.
	ErrClosed = errors.New("transport: closed")
	// ErrUnknownPeer: Send or Disconnect named a peer that is not (or no
	// longer) connected.
	ErrUnknownPeer = errors.New("transport: unknown peer")
	// ErrTooLarge: a datagram over what the transport carries, or a hello
	// over MaxHello.
	ErrTooLarge = errors.New("transport: datagram too large")
	// ErrHandshake: a session could not be opened (a refused or malformed
	// offer, token or hello).
	ErrHandshake = errors.New("transport: handshake failed")
)

// PeerID names one client of a Server for as long as it is connected. A
// Server never gives the same PeerID to two sessions.
type PeerID uint64

// EventKind says what an Event reports.
type EventKind uint8

const (
	// Joined: a peer opened a session; Event.Info says who. It comes before
	// any Datagram of that peer.
	Joined EventKind = iota + 1
	// Datagram: a peer sent Event.Data.
	Datagram
	// Left: a peer's session ended (it closed, timed out, or was
	// disconnected). No event of that peer follows.
	Left
)

// String names the kind: "joined", "datagram" or "left".
func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case Datagram:
		return "datagram"
	case Left:
		return "left"
	}
	return "unknown"
}

// Event is what Server.Receive returns.
type Event struct {
	Kind EventKind
	Peer PeerID
	Data []byte    // Datagram: the payload, the caller's to keep
	Info *PeerInfo // Joined: the peer
}

// PeerInfo describes a peer as it joins.
type PeerInfo struct {
	Transport string   // "udp", "webtransport", "webrtc" or "websocket"
	Addr      net.Addr // where its packets come from (for WebSocket, the HTTP peer)
	// Hello is what Options.Hello returned for this peer, already sent to
	// it over the secure channel; for UDP with connect tokens, the key the
	// token carried.
	Hello []byte
	// Client is the client id of the peer's connect token (UDP with
	// tokens only).
	Client uint64
}

// Server is the server's side of a transport: many peers. Its methods are
// safe for concurrent use; Receive is meant for one goroutine.
type Server interface {
	// Send sends one datagram to peer. It does not block on the network;
	// a datagram the transport cannot take now is dropped, as a full UDP
	// socket buffer would, and counted in Stats. ErrUnknownPeer when peer
	// is not connected, ErrTooLarge, ErrClosed.
	Send(peer PeerID, datagram []byte) error
	// Receive returns the next event, waiting for one until ctx ends
	// (ctx.Err()) or the server is closed (ErrClosed).
	Receive(ctx context.Context) (Event, error)
	// Disconnect ends peer's session; a Left event follows.
	Disconnect(peer PeerID) error
	// Stats counts what the server carried.
	Stats() Stats
	// Close ends every session and releases the transport's sockets.
	Close() error
}

// Conn is a client's side of a transport: one server. Its methods are safe
// for concurrent use; Receive is meant for one goroutine.
type Conn interface {
	// Send sends one datagram to the server (ErrTooLarge, ErrClosed).
	Send(datagram []byte) error
	// Receive returns the next datagram from the server, waiting until ctx
	// ends or the session does (ErrClosed).
	Receive(ctx context.Context) ([]byte, error)
	// Hello is what the server's Options.Hello sent as the session opened
	// (nil when none).
	Hello() []byte
	// Close ends the session.
	Close() error
}

// Stats counts a Server's traffic. Bytes are payload bytes, without the
// transport's own headers.
type Stats struct {
	Joined, Left           uint64
	DatagramsIn, BytesIn   uint64
	DatagramsOut, BytesOut uint64
	DroppedIn              uint64 // received while Receive's queue was full
	DroppedOut             uint64 // not taken by the transport (a full buffer, a closing session)
	Refused                uint64 // sessions refused: bad offers, origins, tokens
	StrayIn                uint64 // datagrams from no peer (UDP)
	// WireIn and WireOut are the bytes of the transport's own UDP socket
	// (UDP, WebTransport, WebRTC), framing and handshakes included, IP and
	// UDP headers not: against BytesIn and BytesOut, the transport's
	// overhead. Zero for WebSocket, which runs inside an HTTP server.
	WireIn, WireOut uint64
}

// Options configure every Server of this package.
type Options struct {
	// Hello, when set, is called as each peer joins, before its Joined
	// event; what it returns (at most MaxHello bytes) reaches the peer over
	// the session's secure channel before any datagram, and is the client's
	// Conn.Hello. An error refuses the session. Plain UDP has no secure
	// channel and never calls it (see UDPConfig.Tokens).
	Hello func(peer PeerID) ([]byte, error)
	// Queue is how many received datagrams wait for Receive before more are
	// dropped (Stats.DroppedIn); 0 means 4096.
	Queue int
	// MaxPeers bounds the peers connected at once; a session past it is
	// refused (Stats.Refused), and so is a UDP address's first datagram.
	// 0 means 1024.
	MaxPeers int
}

// link is one peer as its transport holds it.
type link interface {
	send(datagram []byte) error // non-blocking
	close()                     // ends the session; the transport then calls hub.leave
}

// hub is what every Server shares: the peers, the event queue, the counts.
type hub struct {
	name string
	opts Options

	mu      sync.Mutex
	peers   map[PeerID]link
	queue   []Event // FIFO; Joined and Left are never dropped
	queued  int     // Datagram events in queue
	notify  chan struct{}
	closed  bool
	done    chan struct{}
	lastID  atomic.Uint64
	stats   Stats
	statsMu sync.Mutex
	wireIn  atomic.Uint64 // the socket's bytes, where the transport has one
	wireOut atomic.Uint64
}

func newHub(name string, opts Options) *hub {
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.MaxPeers <= 0 {
		opts.MaxPeers = 1024
	}
	return &hub{name: name, opts: opts, peers: map[PeerID]link{}, notify: make(chan struct{}, 1), done: make(chan struct{})}
}

func (h *hub) count(f func(s *Stats)) {
	h.statsMu.Lock()
	f(&h.stats)
	h.statsMu.Unlock()
}

// Stats implements Server.
func (h *hub) Stats() Stats {
	h.statsMu.Lock()
	st := h.stats
	h.statsMu.Unlock()
	st.WireIn, st.WireOut = h.wireIn.Load(), h.wireOut.Load()
	return st
}

func (h *hub) wake() {
	select {
	case h.notify <- struct{}{}:
	default:
	}
}

// newID reserves the PeerID of a session about to open (Hello needs it).
func (h *hub) newID() PeerID { return PeerID(h.lastID.Add(1)) }

// hello calls Options.Hello for id.
func (h *hub) hello(id PeerID) ([]byte, error) {
	if h.opts.Hello == nil {
		return nil, nil
	}
	b, err := h.opts.Hello(id)
	if err != nil {
		return nil, errors.Join(ErrHandshake, err)
	}
	if len(b) > MaxHello {
		return nil, ErrTooLarge
	}
	return b, nil
}

// full reports whether MaxPeers peers are connected: a new session
// would be refused.
func (h *hub) full() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.peers) >= h.opts.MaxPeers
}

// join adds a peer under id and queues its Joined event; false when the
// hub is closed or full (the caller then closes l).
func (h *hub) join(id PeerID, l link, info PeerInfo) bool {
	h.mu.Lock()
	if h.closed || len(h.peers) >= h.opts.MaxPeers {
		full := !h.closed
		h.mu.Unlock()
		if full {
			h.count(func(s *Stats) { s.Refused++ })
		}
		return false
	}
	h.peers[id] = l
	h.queue = append(h.queue, Event{Kind: Joined, Peer: id, Info: &info})
	h.mu.Unlock()
	h.count(func(s *Stats) { s.Joined++ })
	h.wake()
	return true
}

// deliver queues a datagram of peer id; data is the hub's from now on.
func (h *hub) deliver(id PeerID, data []byte) {
	h.mu.Lock()
	if _, ok := h.peers[id]; !ok || h.closed {
		h.mu.Unlock()
		return
	}
	if h.queued >= h.opts.Queue {
		h.mu.Unlock()
		h.count(func(s *Stats) { s.DroppedIn++ })
		return
	}
	h.queue = append(h.queue, Event{Kind: Datagram, Peer: id, Data: data})
	h.queued++
	h.mu.Unlock()
	h.count(func(s *Stats) { s.DatagramsIn++; s.BytesIn += uint64(len(data)) })
	h.wake()
}

// leave removes peer id, once, and queues its Left event.
func (h *hub) leave(id PeerID) {
	h.mu.Lock()
	if _, ok := h.peers[id]; !ok {
		h.mu.Unlock()
		return
	}
	delete(h.peers, id)
	if !h.closed {
		h.queue = append(h.queue, Event{Kind: Left, Peer: id})
	}
	h.mu.Unlock()
	h.count(func(s *Stats) { s.Left++ })
	h.wake()
}

func (h *hub) peer(id PeerID) (link, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	l, ok := h.peers[id]
	if !ok {
		return nil, ErrUnknownPeer
	}
	return l, nil
}

// Send implements Server.
func (h *hub) Send(id PeerID, datagram []byte) error {
	l, err := h.peer(id)
	if err != nil {
		return err
	}
	if err := l.send(datagram); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return err
		}
		h.count(func(s *Stats) { s.DroppedOut++ })
		return nil
	}
	h.count(func(s *Stats) { s.DatagramsOut++; s.BytesOut += uint64(len(datagram)) })
	return nil
}

// Disconnect implements Server.
func (h *hub) Disconnect(id PeerID) error {
	l, err := h.peer(id)
	if err != nil {
		return err
	}
	l.close()
	h.leave(id)
	return nil
}

// Receive implements Server.
func (h *hub) Receive(ctx context.Context) (Event, error) {
	for {
		h.mu.Lock()
		if len(h.queue) > 0 {
			e := h.queue[0]
			h.queue[0] = Event{}
			h.queue = h.queue[1:]
			if e.Kind == Datagram {
				h.queued--
			}
			h.mu.Unlock()
			return e, nil
		}
		closed := h.closed
		h.mu.Unlock()
		if closed {
			return Event{}, ErrClosed
		}
		select {
		case <-h.notify:
		case <-h.done:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// shut closes the hub and every peer's link; the transport then releases
// its sockets. It reports whether this call closed it.
func (h *hub) shut() bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.closed = true
	peers := h.peers
	h.peers = map[PeerID]link{}
	h.queue = nil
	h.mu.Unlock()
	close(h.done)
	for _, l := range peers {
		l.close()
	}
	return true
}

// inbox is a Conn's queue of received datagrams: bounded, the oldest kept
// (as a socket buffer does), the rest counted as dropped.
type inbox struct {
	ch     chan []byte
	done   chan struct{}
	once   sync.Once
	closed atomic.Bool
}

func newInbox() *inbox { return &inbox{ch: make(chan []byte, 1024), done: make(chan struct{})} }

func (b *inbox) put(d []byte) {
	select {
	case b.ch <- d:
	default: // full: dropped like a datagram on a full socket buffer
	}
}

func (b *inbox) close() { b.once.Do(func() { b.closed.Store(true); close(b.done) }) }

func (b *inbox) get(ctx context.Context) ([]byte, error) {
	select {
	case d := <-b.ch:
		return d, nil
	default:
	}
	select {
	case d := <-b.ch:
		return d, nil
	case <-b.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
