package integrity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"

	"github.com/bitwire/bitwire/bits"
)

// Mode is the integrity protection of a stream's packets, chosen by the
// peers' options (snapshot.WithChecksum and snapshot.WithMAC,
// replicate.WithIntegrity and PeerConfig.Integrity) and carried in every
// packet's header, so that peers configured differently refuse each
// other's packets (ErrProtocolMismatch of snapshot and replicate) instead
// of misreading them.
type Mode uint8

// The integrity modes. docs/security.md weighs them.
const (
	// ModeNone: no trailer. Corruption that UDP's checksum misses, and any
	// forged packet, may decode into a wrong state (which the ack tokens
	// and the state hash then keep from lasting): about a quarter of
	// single bit flips of snapshot packets do (26.5% measured,
	// docs/security.md, "Choosing a mode").
	ModeNone Mode = 0
	// ModeChecksum: a CRC32C (Castagnoli) of the packet in a 4-byte
	// trailer. It catches corruption (every error of up to 3 bits, every
	// burst of up to 32 bits, any other with a chance of 1 in 2^32 to be
	// missed), not forgery: anyone can compute it.
	ModeChecksum Mode = 1
	// ModeMAC: an HMAC-SHA256 of the packet under a per-connection secret
	// the application supplies, truncated to MACSize bytes in the trailer.
	// Without the secret a packet cannot be forged nor altered, and acks
	// cannot be forged even by someone who reads the packets.
	ModeMAC Mode = 2
)

// Trailer sizes, in bytes.
const (
	// ChecksumSize is the trailer of ModeChecksum: a CRC32C.
	ChecksumSize = 4
	// MACSize is the trailer of ModeMAC: the first 10 bytes (80 bits) of
	// an HMAC-SHA256, the shortest truncation RFC 2104 recommends and the
	// default tag of SRTP (RFC 3711), which protects real-time media the
	// same way. A forger guesses a tag with a chance of 1 in 2^80 per
	// packet, and a guess needs a packet sent: no offline attack helps.
	MACSize = 10
	// MinKeySize is the shortest secret New accepts (128 bits).
	MinKeySize = 16
)

// String names the mode as the report of the demo and the errors do:
// none, crc32c, hmac-sha256-80.
func (m Mode) String() string {
	switch m {
	case ModeNone:
		return "none"
	case ModeChecksum:
		return "crc32c"
	case ModeMAC:
		return "hmac-sha256-80"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Overhead returns the size of the mode's trailer in bytes.
func (m Mode) Overhead() int {
	switch m {
	case ModeChecksum:
		return ChecksumSize
	case ModeMAC:
		return MACSize
	}
	return 0
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Guard seals packets with the trailer of one Mode and opens them: the
// framing of every sender and receiver of packages snapshot, replicate and
// conn, exported so that other packet streams can share it. Sealing and opening also
// yield the packet's ack token: 32 bits that only a peer holding the whole
// packet (and, in ModeMAC, the secret) can compute, which a receiver
// echoes in its Ack so that the sender can tell a true acknowledgement
// from a spoofed one.
//
// A Guard is not safe for concurrent use (it keeps the MAC's state); give
// each sender and receiver its own.
type Guard struct {
	mode Mode
	mac  hash.Hash
	sum  [sha256.Size]byte
}

// New returns the framing of mode. ModeMAC needs key, a secret of
// at least MinKeySize bytes shared by the two peers of one connection
// (the library does no key exchange: derive it, for example, from the
// session key of the handshake that set up the connection); the other
// modes take a nil key. The key is copied.
func New(mode Mode, key []byte) (*Guard, error) {
	g := &Guard{mode: mode}
	switch mode {
	case ModeNone, ModeChecksum:
		if key != nil {
			return nil, fmt.Errorf("integrity: mode %v takes no key", mode)
		}
	case ModeMAC:
		if len(key) < MinKeySize {
			return nil, fmt.Errorf("integrity: MAC key of %d bytes, want at least %d", len(key), MinKeySize)
		}
		g.mac = hmac.New(sha256.New, append([]byte(nil), key...))
	default:
		return nil, fmt.Errorf("integrity: unknown mode %d", mode)
	}
	return g, nil
}

// Mode returns the integrity mode.
func (g *Guard) Mode() Mode { return g.mode }

// Overhead returns the size of the trailer Seal appends, in bytes.
func (g *Guard) Overhead() int { return g.mode.Overhead() }

// digest computes the trailer of p into g.sum (the first Overhead bytes)
// and returns p's ack token. Without a MAC both are the CRC32C of p; with
// one, the token is the 4 bytes of the HMAC after the transmitted tag, so
// that even a reader of the packets cannot compute it.
func (g *Guard) digest(p []byte) uint32 {
	if g.mode != ModeMAC {
		c := crc32.Checksum(p, castagnoli)
		binary.LittleEndian.PutUint32(g.sum[:], c)
		return c
	}
	g.mac.Reset()
	g.mac.Write(p)
	g.mac.Sum(g.sum[:0])
	return binary.LittleEndian.Uint32(g.sum[MACSize:])
}

// Seal appends the trailer of packet[start:] to packet and returns the
// extended slice and the packet's ack token. It allocates nothing when
// packet has room for the trailer.
func (g *Guard) Seal(packet []byte, start int) ([]byte, uint32) {
	token := g.digest(packet[start:])
	return append(packet, g.sum[:g.Overhead()]...), token
}

// Open checks the trailer of packet and returns the packet without it and
// the packet's ack token. A packet shorter than the trailer is
// bits.ErrUnexpectedEnd (bitwire.ErrUnexpectedEnd); a trailer that does not match is ErrIntegrity.
// The comparison of MACs takes a time independent of where they differ.
func (g *Guard) Open(packet []byte) ([]byte, uint32, error) {
	n := len(packet) - g.Overhead()
	if n < 0 {
		return nil, 0, fmt.Errorf("integrity: %d bytes, shorter than the %v trailer: %w", len(packet), g.mode, bits.ErrUnexpectedEnd)
	}
	body := packet[:n]
	token := g.digest(body)
	if g.mode == ModeNone {
		return body, token, nil
	}
	if !hmac.Equal(g.sum[:g.Overhead()], packet[n:]) {
		return nil, 0, fmt.Errorf("%w: %v trailer does not match", ErrIntegrity, g.mode)
	}
	return body, token, nil
}

// Checksum returns the CRC32C (Castagnoli) of p: the trailer of
// ModeChecksum and the ack token without a MAC, also the state hash of
// package snapshot.
func Checksum(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }
