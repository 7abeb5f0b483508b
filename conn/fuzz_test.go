package conn_test

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/bitwire/bitwire/snapshot"
)

// FuzzReceive feeds arbitrary bytes to both ends of a connection without
// a trailer (so that everything reaches the section readers): an error or
// an accepted packet, never a panic, a hang or an unbounded allocation.
// The seeds are the golden packets.
func FuzzReceive(f *testing.F) {
	b, err := os.ReadFile("testdata/golden/packets.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.LastIndex(line, ": "); i >= 0 && !strings.HasPrefix(line, "#") {
			if p, err := hex.DecodeString(line[i+2:]); err == nil {
				f.Add(p)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := newSession(t, 1, 0, 0, 0, 3, snapshot.ModeNone)
		_ = s.server.Receive(b)
		_, _, _ = s.client.Receive(b)
	})
}
