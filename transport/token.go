package transport

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Connect tokens: how a plain UDP client gets its key.
//
// UDP has no secure channel, so a key cannot be handed out over it. The
// game's web backend, which the player already reaches over HTTPS (it
// logged them in), issues a token under a secret it shares with the game
// server: the client's id, its key and an expiry, sealed with AES-256-GCM.
// It gives the client the token and the key (over HTTPS); the client sends
// the token as its first datagram; the server opens it, learns the key,
// and from then on the stream's MAC (replicate's ModeMAC) authenticates
// every packet both ways. The token itself travels in the clear: someone
// who reads it learns nothing of the key, and cannot use it from another
// address while the genuine client holds it (the server keeps each token
// bound to the first address that presented it until it expires).

// TokenSecretSize is the size of the secret a web backend and a game
// server share, in bytes (an AES-256 key).
const TokenSecretSize = 32

// MaxTokenKey is the longest key a token carries, in bytes.
const MaxTokenKey = 64

const (
	tokenMagic   = "BWT1"
	nonceSize    = 12
	tokenHeader  = len(tokenMagic) + 8 + nonceSize // magic, expiry, nonce: authenticated, in the clear
	welcomeMagic = "bitwire welcome\x00"
)

var (
	// ErrBadToken: a connect token that is malformed, or not sealed under
	// the server's secret.
	ErrBadToken = errors.New("transport: bad connect token")
	// ErrTokenExpired: a connect token past its expiry.
	ErrTokenExpired = errors.New("transport: connect token expired")
)

// Token is what a connect token carries.
type Token struct {
	Client  uint64    // the game's id of the client
	Key     []byte    // the client's key: replicate's per-client MAC key
	Expires time.Time // to the second
	nonce   [nonceSize]byte
}

func tokenAEAD(secret []byte) (cipher.AEAD, error) {
	if len(secret) != TokenSecretSize {
		return nil, fmt.Errorf("transport: a token secret is %d bytes, not %d", TokenSecretSize, len(secret))
	}
	b, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// IssueToken seals a connect token for client, carrying key (at most
// MaxTokenKey bytes), valid until expires, under secret (TokenSecretSize
// bytes). A web backend calls it; the game server opens the token with
// OpenToken (UDPConfig.TokenSecret).
func IssueToken(secret []byte, client uint64, key []byte, expires time.Time) ([]byte, error) {
	aead, err := tokenAEAD(secret)
	if err != nil {
		return nil, err
	}
	if len(key) > MaxTokenKey {
		return nil, fmt.Errorf("transport: a token key is at most %d bytes, not %d", MaxTokenKey, len(key))
	}
	tok := make([]byte, tokenHeader, tokenHeader+9+len(key)+aead.Overhead())
	copy(tok, tokenMagic)
	binary.LittleEndian.PutUint64(tok[4:], uint64(expires.Unix()))
	if _, err := rand.Read(tok[12:tokenHeader]); err != nil {
		return nil, err
	}
	plain := binary.LittleEndian.AppendUint64(nil, client)
	plain = append(plain, byte(len(key)))
	plain = append(plain, key...)
	return aead.Seal(tok, tok[12:tokenHeader], plain, tok[:tokenHeader]), nil
}

// OpenToken checks a connect token sealed under secret and returns what it
// carries: ErrBadToken when it is malformed or sealed under another secret,
// ErrTokenExpired when now is past its expiry.
func OpenToken(secret, token []byte, now time.Time) (Token, error) {
	aead, err := tokenAEAD(secret)
	if err != nil {
		return Token{}, err
	}
	if len(token) < tokenHeader+9+aead.Overhead() || len(token) > tokenHeader+9+MaxTokenKey+aead.Overhead() || string(token[:4]) != tokenMagic {
		return Token{}, ErrBadToken
	}
	plain, err := aead.Open(nil, token[12:tokenHeader], token[tokenHeader:], token[:tokenHeader])
	if err != nil || len(plain) < 9 || int(plain[8]) != len(plain)-9 {
		return Token{}, ErrBadToken
	}
	t := Token{
		Client:  binary.LittleEndian.Uint64(plain),
		Key:     plain[9:],
		Expires: time.Unix(int64(binary.LittleEndian.Uint64(token[4:])), 0),
	}
	copy(t.nonce[:], token[12:tokenHeader])
	if now.After(t.Expires) {
		return Token{}, ErrTokenExpired
	}
	return t, nil
}

// welcomeFor is the datagram a UDP server answers a token with: a fixed
// text and the token's nonce, which the client knows too.
func welcomeFor(token []byte) []byte {
	w := []byte(welcomeMagic)
	if len(token) >= tokenHeader {
		w = append(w, token[12:tokenHeader]...)
	}
	return w
}
