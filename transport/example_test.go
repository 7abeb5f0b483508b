package transport_test

import (
	"context"
	"fmt"
	"time"

	"github.com/bitwire/bitwire/transport"
)

// A server and a client over UDP on loopback: the client's first datagram
// makes it join; every transport's Server and Conn are used the same way.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv, err := transport.ListenUDP("127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c, err := transport.DialUDP(ctx, srv.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	c.Send([]byte("ack 1"))
	joined, _ := srv.Receive(ctx)
	fmt.Println(joined.Kind, "over", joined.Info.Transport)
	e, _ := srv.Receive(ctx)
	fmt.Println(e.Kind, string(e.Data))
	srv.Send(e.Peer, []byte("snapshot 2"))
	d, _ := c.Receive(ctx)
	fmt.Println(string(d))
	// Output:
	// joined over udp
	// datagram ack 1
	// snapshot 2
}

// A web backend issues a connect token; the game server, holding the same
// secret, opens it and learns the client's key.
func ExampleIssueToken() {
	secret := make([]byte, transport.TokenSecretSize) // shared by the backend and the game server; random in practice
	key := []byte("the client's 32-byte MAC key....")
	tok, _ := transport.IssueToken(secret, 1234, key, time.Now().Add(30*time.Second))
	// The backend sends tok and key to the client over HTTPS; the client
	// sends tok as its first datagram (DialUDP); the server opens it:
	t, err := transport.OpenToken(secret, tok, time.Now())
	fmt.Println(len(tok), t.Client, string(t.Key), err)
	// Output: 81 1234 the client's 32-byte MAC key.... <nil>
}
