package gateway

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// Holder is an entity with pointees: the Publisher must keep each
// entity's previous state intact (pointees and all) as the baseline of
// the next delta.
type Holder struct {
	Body *Body
	Tags []byte `net:"maxlen=8"`
	Hp   uint8  `net:"range,min=0,max=100"`
}

type holderSetter interface {
	Set(uint32, *Holder) (bool, error)
	Remove(uint32) (bool, error)
}

// TestPointees: entities with pointers and slices, set twice in some
// ticks (the second Set a delta against the first), removed and created
// again under the same id: the gateway holds the world's states exactly.
func TestPointees(t *testing.T) {
	codec := bitwire.MustFor[Holder]()
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	pub, err := NewPublisher(connect(t, ns), codec, Config[Holder]{Subject: "ptr"})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := NewGateway(connect(t, ns), codec, Config[Holder]{Subject: "ptr"})
	if err != nil {
		t.Fatal(err)
	}
	waitRequests(t, pub, 1)
	ref, _ := replicate.NewServer(codec)
	rng := rand.New(rand.NewSource(7))
	random := func() Holder {
		h := Holder{Hp: uint8(rng.Intn(101)), Tags: make([]byte, rng.Intn(9))}
		rng.Read(h.Tags)
		if rng.Intn(3) > 0 {
			b := randomBody(rng)
			h.Body = &b
		}
		return h
	}
	// both makes a call on the reference Server and on the Publisher.
	both := func(f func(s holderSetter) error) {
		if err := f(ref); err != nil {
			t.Fatal(err)
		}
		if err := f(pub); err != nil {
			t.Fatal(err)
		}
	}
	for tick := uint32(1); tick <= 100; tick++ {
		ref.Advance(tick)
		pub.Advance(tick)
		for id := uint32(1); id <= 50; id++ {
			if tick > 1 && rng.Intn(4) > 0 {
				continue
			}
			for range 1 + rng.Intn(2) { // sometimes twice in the tick
				h := random()
				both(func(s holderSetter) error { _, err := s.Set(id, &h); return err })
				h.Tags = append(h.Tags[:0], 1, 2, 3) // the callers' storage is theirs again
				if h.Body != nil {
					h.Body.X = 99
				}
			}
			if rng.Intn(20) == 0 {
				both(func(s holderSetter) error { _, err := s.Remove(id); return err })
				if rng.Intn(2) == 0 {
					h := random()
					both(func(s holderSetter) error { _, err := s.Set(id, &h); return err })
				}
			}
		}
		pub.Publish()
		next(t, gw, tick)
		n := 0
		ref.Range(func(id uint32, want *Holder) bool {
			n++
			got, ok := gw.Server().Get(id)
			if !ok || !reflect.DeepEqual(*got, *want) {
				t.Fatalf("tick %d id %d: %+v, want %+v", tick, id, got, want)
			}
			return true
		})
		if gw.Server().Len() != n {
			t.Fatalf("tick %d: %d entities, want %d", tick, gw.Server().Len(), n)
		}
	}
}
