package transport_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/bitwire/bitwire/transport"
)

func TestTokenRoundTrip(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, transport.TokenSecretSize)
	key := []byte("0123456789abcdef0123456789abcdef")
	exp := time.Now().Add(time.Minute).Truncate(time.Second)
	tok, err := transport.IssueToken(secret, 42, key, exp)
	if err != nil {
		t.Fatal(err)
	}
	// magic 4, expiry 8, nonce 12; sealed: client 8, length 1, key 32; tag 16
	if len(tok) != 4+8+12+8+1+32+16 {
		t.Fatalf("token of %d bytes", len(tok))
	}
	if bytes.Contains(tok, key) {
		t.Fatal("the key is in the clear in the token")
	}
	got, err := transport.OpenToken(secret, tok, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.Client != 42 || !bytes.Equal(got.Key, key) || !got.Expires.Equal(exp) {
		t.Fatalf("opened %+v", got)
	}
	if _, err := transport.OpenToken(secret, tok, exp.Add(time.Second)); !errors.Is(err, transport.ErrTokenExpired) {
		t.Fatalf("after expiry: %v, want ErrTokenExpired", err)
	}
	other := bytes.Repeat([]byte{8}, transport.TokenSecretSize)
	if _, err := transport.OpenToken(other, tok, time.Now()); !errors.Is(err, transport.ErrBadToken) {
		t.Fatalf("another secret: %v, want ErrBadToken", err)
	}
	// Every bit flipped, anywhere (the expiry included: it is
	// authenticated), and every truncation is refused.
	for i := range len(tok) * 8 {
		bad := bytes.Clone(tok)
		bad[i/8] ^= 1 << (i % 8)
		if _, err := transport.OpenToken(secret, bad, time.Now()); !errors.Is(err, transport.ErrBadToken) && !errors.Is(err, transport.ErrTokenExpired) {
			t.Fatalf("bit %d flipped: %v", i, err)
		}
	}
	for n := range len(tok) {
		if _, err := transport.OpenToken(secret, tok[:n], time.Now()); !errors.Is(err, transport.ErrBadToken) {
			t.Fatalf("%d bytes: %v, want ErrBadToken", n, err)
		}
	}
	if _, err := transport.IssueToken(secret[:16], 1, key, exp); err == nil {
		t.Fatal("a 16-byte secret was accepted")
	}
	if _, err := transport.IssueToken(secret, 1, make([]byte, transport.MaxTokenKey+1), exp); err == nil {
		t.Fatal("an overlong key was accepted")
	}
}

// TestUDPTokens: a server that requires tokens ignores datagrams from
// addresses without one, admits a valid token (its key in the Joined
// event), and refuses the same token from a second address.
func TestUDPTokens(t *testing.T) {
	secret := bytes.Repeat([]byte{3}, transport.TokenSecretSize)
	u, err := transport.ListenUDP("127.0.0.1:0", transport.UDPConfig{TokenSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	stray, err := transport.DialUDP(ctx, u.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stray.Close()
	stray.Send([]byte("no token"))

	key := bytes.Repeat([]byte{9}, 32)
	tok, _ := transport.IssueToken(secret, 5, key, time.Now().Add(time.Minute))
	c, err := transport.DialUDP(ctx, u.Addr().String(), tok)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e := next(t, u)
	if e.Kind != transport.Joined || e.Info.Client != 5 || !bytes.Equal(e.Info.Hello, key) {
		t.Fatalf("event %v %+v", e.Kind, e.Info)
	}
	c.Send([]byte("after the token"))
	if e := next(t, u); e.Kind != transport.Datagram || string(e.Data) != "after the token" {
		t.Fatalf("event %v %q", e.Kind, e.Data)
	}

	// The token, replayed from another socket.
	thief, err := net.DialUDP("udp", nil, u.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer thief.Close()
	thief.Write(tok)
	deadline := time.Now().Add(2 * time.Second)
	for u.Stats().Refused == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	st := u.Stats()
	if st.StrayIn != 1 || st.Refused != 1 || st.Joined != 1 {
		t.Fatalf("stats %+v: want 1 stray datagram, 1 replay refused, 1 peer", st)
	}

	expired, _ := transport.IssueToken(secret, 6, key, time.Now().Add(-time.Second))
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if _, err := transport.DialUDP(short, u.Addr().String(), expired); !errors.Is(err, transport.ErrHandshake) {
		t.Fatalf("an expired token: %v, want ErrHandshake (no welcome)", err)
	}
}

func TestSelfSigned(t *testing.T) {
	s, err := transport.NewSelfSigned([]string{"localhost", "127.0.0.1"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	der := s.Certificate.Certificate[0]
	if sha256.Sum256(der) != s.Hash {
		t.Fatal("Hash is not the SHA-256 of the certificate")
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pub, ok := c.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Fatalf("key %T, want ECDSA P-256 (browsers accept no other by hash)", c.PublicKey)
	}
	if span := c.NotAfter.Sub(c.NotBefore); span > transport.MaxCertificateValidity {
		t.Fatalf("valid for %v", span)
	}
	if time.Now().Before(c.NotBefore) || time.Now().After(c.NotAfter) {
		t.Fatal("not valid now")
	}
	if len(c.DNSNames) != 1 || len(c.IPAddresses) != 1 {
		t.Fatalf("names %v, addresses %v", c.DNSNames, c.IPAddresses)
	}
	if _, err := transport.NewSelfSigned([]string{"localhost"}, 15*24*time.Hour); err == nil {
		t.Fatal("a 15-day certificate was made; browsers refuse it by hash")
	}
}
