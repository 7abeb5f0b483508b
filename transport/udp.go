package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// UDPConfig configures a UDP server.
type UDPConfig struct {
	Options
	// Timeout is how long a peer may send nothing before it has left;
	// 0 means 10 s.
	Timeout time.Duration
	// TokenSecret, when set, makes the server require a connect token
	// (IssueToken, under this secret) as a new address's first datagram:
	// datagrams from an address that has not presented a valid, unexpired
	// token are dropped (Stats.StrayIn). The token carries the client's key,
	// which the Joined event's Info.Hello holds. Without it, any address
	// that sends a datagram joins.
	TokenSecret []byte
}

// UDPServer is a Server over one UDP socket: a peer is an address.
type UDPServer struct {
	*hub
	conn    *net.UDPConn
	cfg     UDPConfig
	mu      sync.Mutex
	byAddr  map[netip.AddrPort]*udpPeer
	nonces  map[[nonceSize]byte]tokenUse // tokens in use, until they expire
	wg      sync.WaitGroup
	stopped chan struct{}
}

type tokenUse struct {
	addr    netip.AddrPort
	expires time.Time
}

type udpPeer struct {
	s        *UDPServer
	id       PeerID
	addr     netip.AddrPort
	lastSeen atomic.Int64 // unix nanoseconds
}

func (p *udpPeer) send(b []byte) error {
	if len(b) > 65507 {
		return ErrTooLarge
	}
	n, err := p.s.conn.WriteToUDPAddrPort(b, p.addr)
	p.s.wireOut.Add(uint64(n))
	return err
}

func (p *udpPeer) close() {
	p.s.mu.Lock()
	if p.s.byAddr[p.addr] == p {
		delete(p.s.byAddr, p.addr)
	}
	p.s.mu.Unlock()
}

// ListenUDP returns a UDP server listening on addr ("127.0.0.1:0" picks a
// port).
func ListenUDP(addr string, cfg UDPConfig) (*UDPServer, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, err
	}
	_ = conn.SetReadBuffer(4 << 20)
	_ = conn.SetWriteBuffer(4 << 20)
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.TokenSecret != nil && len(cfg.TokenSecret) != TokenSecretSize {
		conn.Close()
		return nil, fmt.Errorf("transport: a token secret is %d bytes, not %d", TokenSecretSize, len(cfg.TokenSecret))
	}
	s := &UDPServer{hub: newHub("udp", cfg.Options), conn: conn, cfg: cfg, byAddr: map[netip.AddrPort]*udpPeer{},
		nonces: map[[nonceSize]byte]tokenUse{}, stopped: make(chan struct{})}
	s.wg.Go(s.read)
	s.wg.Go(s.reap)
	return s, nil
}

// Addr is the address the server listens on.
func (s *UDPServer) Addr() *net.UDPAddr { return s.conn.LocalAddr().(*net.UDPAddr) }

func (s *UDPServer) read() {
	buf := make([]byte, 65536)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		s.wireIn.Add(uint64(max(n, 0)))
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		s.mu.Lock()
		p := s.byAddr[from]
		s.mu.Unlock()
		if p != nil {
			p.lastSeen.Store(time.Now().UnixNano())
			s.deliver(p.id, bytes.Clone(buf[:n]))
			continue
		}
		s.admit(from, buf[:n])
	}
}

// admit handles a datagram from an address that is no peer: it joins, or,
// with tokens, it joins when the datagram is a valid token.
func (s *UDPServer) admit(from netip.AddrPort, b []byte) {
	info := PeerInfo{Transport: "udp", Addr: net.UDPAddrFromAddrPort(from)}
	var welcome []byte
	if s.cfg.TokenSecret != nil {
		tok, err := OpenToken(s.cfg.TokenSecret, b, time.Now())
		if err != nil {
			s.count(func(st *Stats) { st.StrayIn++ })
			return
		}
		s.mu.Lock()
		now := time.Now()
		for n, u := range s.nonces {
			if now.After(u.expires) {
				delete(s.nonces, n)
			}
		}
		if u, ok := s.nonces[tok.nonce]; ok && u.addr != from {
			s.mu.Unlock()
			s.count(func(st *Stats) { st.Refused++ }) // a replayed token
			return
		}
		s.nonces[tok.nonce] = tokenUse{addr: from, expires: tok.Expires}
		s.mu.Unlock()
		info.Hello, info.Client = tok.Key, tok.Client
		welcome = welcomeFor(b)
	}
	if s.full() {
		s.count(func(st *Stats) { st.Refused++ })
		return
	}
	p := &udpPeer{s: s, id: s.newID(), addr: from}
	p.lastSeen.Store(time.Now().UnixNano())
	s.mu.Lock()
	s.byAddr[from] = p
	s.mu.Unlock()
	if !s.join(p.id, p, info) {
		p.close()
		return
	}
	if welcome != nil {
		_ = p.send(welcome)
		return
	}
	s.deliver(p.id, bytes.Clone(b))
}

// reap ends the sessions of peers that sent nothing for Timeout.
func (s *UDPServer) reap() {
	t := time.NewTicker(s.cfg.Timeout / 4)
	defer t.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case now := <-t.C:
			var idle []*udpPeer
			s.mu.Lock()
			for _, p := range s.byAddr {
				if now.Sub(time.Unix(0, p.lastSeen.Load())) > s.cfg.Timeout {
					idle = append(idle, p)
				}
			}
			s.mu.Unlock()
			for _, p := range idle {
				p.close()
				s.leave(p.id)
			}
		}
	}
}

// Close implements Server.
func (s *UDPServer) Close() error {
	if !s.shut() {
		return nil
	}
	close(s.stopped)
	err := s.conn.Close()
	s.wg.Wait()
	return err
}

// UDPConn is a client's UDP socket, connected to one server.
type UDPConn struct {
	conn *net.UDPConn
	in   *inbox
	wg   sync.WaitGroup
}

// DialUDP opens a UDP socket to the server at addr. With a connect token
// (IssueToken) it sends the token, again every 100 ms, until the server
// welcomes it or ctx ends; without one (nil) it returns at once, and the
// server sees the client as its first datagram arrives.
func DialUDP(ctx context.Context, addr string, token []byte) (*UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, err
	}
	_ = conn.SetReadBuffer(4 << 20)
	c := &UDPConn{conn: conn, in: newInbox()}
	if token != nil {
		if err := c.handshake(ctx, token); err != nil {
			conn.Close()
			return nil, err
		}
	}
	c.wg.Go(c.read)
	return c, nil
}

// handshake sends token until the server's welcome arrives. A datagram
// other than the welcome (one that overtook it) is kept for Receive.
func (c *UDPConn) handshake(ctx context.Context, token []byte) error {
	welcome := welcomeFor(token)
	buf := make([]byte, 65536)
	for {
		if _, err := c.conn.Write(token); err != nil {
			return err
		}
		deadline := time.Now().Add(100 * time.Millisecond)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		_ = c.conn.SetReadDeadline(deadline)
		n, err := c.conn.Read(buf)
		if err == nil {
			_ = c.conn.SetReadDeadline(time.Time{})
			if !bytes.Equal(buf[:n], welcome) {
				c.in.put(bytes.Clone(buf[:n]))
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: no welcome from the server: %v", ErrHandshake, ctx.Err())
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			// Nothing listens there yet (ICMP port unreachable): try again.
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}
}

func (c *UDPConn) read() {
	buf := make([]byte, 65536)
	for {
		n, err := c.conn.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				c.in.close()
				return
			}
			continue // ICMP errors of a connected socket
		}
		c.in.put(bytes.Clone(buf[:n]))
	}
}

// Send implements Conn.
func (c *UDPConn) Send(b []byte) error {
	if len(b) > 65507 {
		return ErrTooLarge
	}
	if _, err := c.conn.Write(b); err != nil {
		if errors.Is(err, net.ErrClosed) {
			return ErrClosed
		}
		// A refused datagram (nothing listening yet) is a lost one.
	}
	return nil
}

// Receive implements Conn.
func (c *UDPConn) Receive(ctx context.Context) ([]byte, error) { return c.in.get(ctx) }

// Hello implements Conn: a UDP client has none (its key comes with its
// connect token, from the game's web backend).
func (c *UDPConn) Hello() []byte { return nil }

// LocalAddr is the client's own address.
func (c *UDPConn) LocalAddr() *net.UDPAddr { return c.conn.LocalAddr().(*net.UDPAddr) }

// Close implements Conn.
func (c *UDPConn) Close() error {
	err := c.conn.Close()
	c.wg.Wait()
	return err
}
