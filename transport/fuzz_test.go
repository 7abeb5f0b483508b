package transport_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/bitwire/bitwire/transport"
)

// FuzzOpenToken: any bytes given to OpenToken give a token or ErrBadToken
// (or ErrTokenExpired), never a panic; a token it opens carries a key of at
// most MaxTokenKey bytes.
func FuzzOpenToken(f *testing.F) {
	secret := bytes.Repeat([]byte{1}, transport.TokenSecretSize)
	tok, _ := transport.IssueToken(secret, 9, []byte("0123456789abcdef0123456789abcdef"), time.Unix(2e9, 0))
	f.Add(tok)
	f.Add([]byte("BWT1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := transport.OpenToken(secret, b, time.Unix(1e9, 0))
		switch {
		case err == nil:
			if len(got.Key) > transport.MaxTokenKey {
				t.Fatalf("a key of %d bytes", len(got.Key))
			}
		case !errors.Is(err, transport.ErrBadToken) && !errors.Is(err, transport.ErrTokenExpired):
			t.Fatalf("error %v", err)
		}
	})
}
