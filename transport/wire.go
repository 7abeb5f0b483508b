package transport

import (
	"net"
	"sync/atomic"
)

// countingConn counts the bytes a transport's UDP socket reads and
// writes: the transport's datagrams with all its own framing (QUIC,
// DTLS/SCTP, STUN), without the IP and UDP headers. Stats.WireIn and
// WireOut are its counts, so a transport's overhead is measured, not
// estimated.
type countingConn struct {
	net.PacketConn
	in, out *atomic.Uint64
}

func (h *hub) counting(c net.PacketConn) *countingConn {
	return &countingConn{PacketConn: c, in: &h.wireIn, out: &h.wireOut}
}

// ReadFrom counts the bytes read.
func (c *countingConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, a, err := c.PacketConn.ReadFrom(b)
	if n > 0 {
		c.in.Add(uint64(n))
	}
	return n, a, err
}

// WriteTo counts the bytes written.
func (c *countingConn) WriteTo(b []byte, a net.Addr) (int, error) {
	n, err := c.PacketConn.WriteTo(b, a)
	if n > 0 {
		c.out.Add(uint64(n))
	}
	return n, err
}

// SetReadBuffer passes the socket's buffer size through to the UDP
// socket, as quic-go sets it (and SetWriteBuffer below).
func (c *countingConn) SetReadBuffer(n int) error {
	if s, ok := c.PacketConn.(interface{ SetReadBuffer(int) error }); ok {
		return s.SetReadBuffer(n)
	}
	return nil
}

// SetWriteBuffer: as SetReadBuffer.
func (c *countingConn) SetWriteBuffer(n int) error {
	if s, ok := c.PacketConn.(interface{ SetWriteBuffer(int) error }); ok {
		return s.SetWriteBuffer(n)
	}
	return nil
}
