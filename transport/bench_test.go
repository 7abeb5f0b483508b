package transport_test

import (
	"context"
	"testing"
	"time"

	"github.com/bitwire/bitwire/transport"
)

// BenchmarkRoundTrip measures one round trip on loopback per transport: the
// client sends a 64-byte datagram, the server sends it back, the client
// receives it. ns/op is the round-trip time (wall clock, both sides in
// this process).
func BenchmarkRoundTrip(b *testing.B) {
	rs := rigs(b, transport.Options{})
	for _, r := range rs {
		b.Run(r.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := r.dial(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			stop := make(chan struct{})
			defer close(stop)
			echoed := make(chan struct{})
			go func() { // the server: echo every datagram
				defer close(echoed)
				for {
					e, err := r.srv.Receive(ctx)
					if err != nil {
						return
					}
					select {
					case <-stop:
						return
					default:
					}
					if e.Kind == transport.Datagram {
						r.srv.Send(e.Peer, e.Data)
					}
				}
			}()
			msg := make([]byte, 64)
			// A lost datagram (possible on every transport but WebSocket)
			// is sent again after 100 ms; on loopback none is lost.
			for b.Loop() {
				for {
					c.Send(msg)
					rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
					_, err := c.Receive(rctx)
					rcancel()
					if err == nil {
						break
					}
					if ctx.Err() != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			c.Close()
			cancel()
			<-echoed
		})
	}
}
