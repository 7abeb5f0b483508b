package integrity_test

import (
	"errors"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/integrity"
)

var key = []byte("0123456789abcdef-connection-key")

func guard(t *testing.T, m integrity.Mode, k []byte) *integrity.Guard {
	t.Helper()
	g, err := integrity.New(m, k)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Each mode's trailer has its size, opens what it sealed with the same
// token, and refuses every single-bit flip (CRC, MAC), a short packet
// (bits.ErrUnexpectedEnd) and, for the MAC, another key.
func TestGuardSealOpen(t *testing.T) {
	for _, m := range []integrity.Mode{integrity.ModeNone, integrity.ModeChecksum, integrity.ModeMAC} {
		var k []byte
		if m == integrity.ModeMAC {
			k = key
		}
		g := guard(t, m, k)
		msg := []byte("a packet body of some length")
		packet, token := g.Seal(append([]byte{7}, msg...), 1)
		if len(packet) != 1+len(msg)+m.Overhead() || g.Overhead() != m.Overhead() {
			t.Fatalf("%v: %d bytes sealed, overhead %d", m, len(packet), g.Overhead())
		}
		body, got, err := g.Open(packet[1:])
		if err != nil || string(body) != string(msg) || got != token {
			t.Fatalf("%v: open: %q %x %v, want %q %x", m, body, got, err, msg, token)
		}
		if m == integrity.ModeMAC && token == integrity.Checksum(msg) {
			t.Errorf("the MAC's token is the CRC: a reader of the packets could compute it")
		}
		if m != integrity.ModeMAC && token != integrity.Checksum(msg) {
			t.Errorf("%v: token %x, want the CRC32C %x", m, token, integrity.Checksum(msg))
		}
		if m != integrity.ModeNone {
			for bit := range 8 * (len(packet) - 1) {
				bad := append([]byte(nil), packet[1:]...)
				bad[bit/8] ^= 1 << (bit % 8)
				if _, _, err := g.Open(bad); !errors.Is(err, integrity.ErrIntegrity) {
					t.Fatalf("%v: bit %d flipped: %v, want ErrIntegrity", m, bit, err)
				}
			}
			if _, _, err := g.Open(packet[1:m.Overhead()]); !errors.Is(err, bits.ErrUnexpectedEnd) {
				t.Errorf("%v: a packet shorter than its trailer: %v", m, err)
			}
		}
	}
	other := guard(t, integrity.ModeMAC, []byte("another key, long enough"))
	packet, _ := guard(t, integrity.ModeMAC, key).Seal([]byte("body"), 0)
	if _, _, err := other.Open(packet); !errors.Is(err, integrity.ErrIntegrity) {
		t.Errorf("another key: %v, want ErrIntegrity", err)
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	for _, c := range []struct {
		m integrity.Mode
		k []byte
	}{
		{integrity.ModeNone, key},
		{integrity.ModeChecksum, key},
		{integrity.ModeMAC, nil},
		{integrity.ModeMAC, key[:integrity.MinKeySize-1]},
		{3, nil},
	} {
		if _, err := integrity.New(c.m, c.k); err == nil {
			t.Errorf("New(%v, %d bytes of key) accepted", c.m, len(c.k))
		}
	}
	if s := integrity.Mode(3).String(); s != "Mode(3)" {
		t.Errorf("Mode(3) is %q", s)
	}
}
