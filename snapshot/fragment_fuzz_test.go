package snapshot

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire"
)

// FuzzFragments: a Receiver holding all but the last fragment of a block
// takes the fuzzer's packet, then the last fragment. Nothing panics; a
// header ParseFragmentHeader accepts is consistent; the memory held for
// reassembly stays within the bound; a fragment that leaves the block
// incomplete asks for no ack, and a decoded block for one.
func FuzzFragments(f *testing.F) {
	c := bitwire.MustFor[bigState]()
	s, err := NewSender(c, WithBudget(300))
	if err != nil {
		f.Fatal(err)
	}
	frags, err := s.EncodeFragments(9, newBig(rand.New(rand.NewSource(6)), 200))
	if err != nil {
		f.Fatal(err)
	}
	frags = copyAll(frags)
	for _, p := range frags {
		f.Add(p)
	}
	f.Add(frags[0][:fragmentHeaderSize])
	f.Add([]byte{0x7e, 0xb4})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if h, err := ParseFragmentHeader(pkt); err == nil {
			if h.Index >= h.Count || h.Count > MaxFragments || (h.Count-1)*h.pieceSize() >= h.Length {
				t.Fatalf("an inconsistent header accepted: %+v", h)
			}
		}
		rc, err := NewReceiver(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.SetMaxBlock(4096); err != nil {
			t.Fatal(err)
		}
		var out bigState
		for _, p := range append(append(frags[:len(frags)-1:len(frags)-1], pkt), frags[len(frags)-1]) {
			_, err := rc.Decode(p, &out)
			_, ack := rc.Ack()
			if errors.Is(err, ErrIncomplete) && ack {
				t.Fatal("an ack for an incomplete block")
			}
			if err == nil && !ack {
				t.Fatal("no ack for a decoded block")
			}
			if cap(rc.frag.block) > 4096 {
				t.Fatalf("reassembly holds %d bytes, bound 4096", cap(rc.frag.block))
			}
		}
	})
}
