package conn

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

type tChat struct {
	Text string `net:",maxlen=80"`
}

// The section never takes more bits than its room, whatever the count
// of messages chosen costs.
func TestSectionWithinRoom(t *testing.T) {
	u, err := bitwire.NewUnion(tChat{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(5))
	for _, share := range []int{12, 20, 60, 200} {
		c, err := NewChannel(u, ChannelConfig{Share: share, Queue: 64, Resend: 1})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 3000 {
			n := rng.Intn(3)
			if rng.Intn(8) == 0 {
				n = rng.Intn(81)
			}
			_ = c.Send(&tChat{Text: strings.Repeat("z", n)})
			var w bits.Writer
			room := rng.Intn(share*8) + 1
			c.write(&w, uint32(k+1), room)
			if w.Len() > max(room, 2*(seqWidth+32)+countMax) {
				t.Fatalf("share %d: a section of %d bits in a room of %d", share, w.Len(), room)
			}
		}
	}
}
