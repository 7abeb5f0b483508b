package replicate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// fuzzSession is a short session whose first packets prepare the client of
// every fuzz input, and whose later packets seed the corpus.
func fuzzSession(tb testing.TB) (prefix, seeds [][]byte) {
	srv, err := replicate.NewServer(bodyCodec)
	if err != nil {
		tb.Fatal(err)
	}
	peer, _ := srv.NewPeer(replicate.PeerConfig[Body]{Budget: 400})
	cl, _ := replicate.NewClient(bodyCodec)
	p := &pair{srv: srv, peer: peer, cl: cl, rng: newRand(9)}
	for tick := uint32(1); tick <= 12; tick++ {
		srv.Advance(tick)
		for id := uint32(1); id <= 20; id++ {
			if tick == 1 || p.rng.Intn(3) == 0 {
				b := randomBody(p.rng)
				srv.Set(id*3, &b)
			}
		}
		if tick == 8 {
			srv.Remove(9)
		}
		pkt, ok, err := peer.Encode(nil)
		if err != nil {
			tb.Fatal(err)
		}
		if !ok {
			continue
		}
		if tick <= 6 {
			prefix = append(prefix, pkt)
			if _, err := cl.Decode(pkt); err != nil {
				tb.Fatal(err)
			}
			peer.Ack(cl.Ack())
		} else {
			seeds = append(seeds, pkt)
		}
	}
	return prefix, seeds
}

// view renders everything a client holds, for comparisons.
func view[E any](cl *replicate.Client[E]) string {
	var ids []uint32
	cl.Range(func(id, tick uint32, e *E) bool { ids = append(ids, id); return true })
	slices.Sort(ids)
	a := cl.Ack()
	a.Missing, a.MissingToken = 0, 0 // a refused packet may be reported: that is all it changes
	s := fmt.Sprint(a)
	for _, id := range ids {
		e, tick, _ := cl.Get(id)
		s += fmt.Sprintf("|%d@%d:%v", id, tick, *e)
	}
	return s
}

// FuzzClientDecode feeds arbitrary packets to a client that holds a world:
// no panic, no hang, and an error leaves its view exactly as it was.
func FuzzClientDecode(f *testing.F) {
	prefix, seeds := fuzzSession(f)
	fuzzDecode(f, bodyCodec, prefix, seeds)
}

// FuzzClientDecodePredicted is FuzzClientDecode for a codec with pred
// values, whose deltas carry the prediction prefix (an older baseline's
// distance) before their bodies.
func FuzzClientDecodePredicted(f *testing.F) {
	c := bitwire.MustFor[Shell]()
	srv, err := replicate.NewServer(c)
	if err != nil {
		f.Fatal(err)
	}
	peer, _ := srv.NewPeer(replicate.PeerConfig[Shell]{})
	cl, _ := replicate.NewClient(c)
	var prefix, seeds [][]byte
	for tick := uint32(1); tick <= 12; tick++ {
		srv.Advance(tick)
		for id := uint32(1); id <= 6; id++ {
			v := shellAt(id, tick)
			srv.Set(id, &v)
		}
		pkt, ok, err := peer.Encode(nil)
		if err != nil || !ok {
			f.Fatal(ok, err)
		}
		if tick > 6 {
			seeds = append(seeds, pkt)
			continue
		}
		prefix = append(prefix, pkt)
		if _, err := cl.Decode(pkt); err != nil {
			f.Fatal(err)
		}
		peer.Ack(cl.Ack())
	}
	if peer.Stats().Predicted == 0 {
		f.Fatal("the session predicted no delta")
	}
	fuzzDecode(f, c, prefix, seeds)
}

// fuzzDecode runs a client of codec c that decoded prefix on arbitrary
// packets, seeded from seeds and damaged copies of them: no panic, no
// hang, and an error leaves its view exactly as it was.
func fuzzDecode[E any](f *testing.F, c *bitwire.Codec[E], prefix, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
		f.Add(s[:len(s)/2])
		flipped := slices.Clone(s)
		flipped[len(flipped)*2/3] ^= 0x21
		f.Add(flipped)
		f.Add(append(slices.Clone(s), 0))
	}
	f.Add([]byte{})
	f.Add(replicate.AppendAck(nil, replicate.Ack{Seq: 3}))
	f.Fuzz(func(t *testing.T, data []byte) {
		cl, _ := replicate.NewClient(c, replicate.WithMaxEntities(64))
		for _, p := range prefix {
			if _, err := cl.Decode(p); err != nil {
				t.Fatal(err)
			}
		}
		before := view(cl)
		if _, err := cl.Decode(data); err != nil {
			if after := view(cl); after != before {
				t.Fatalf("a rejected packet changed the view: %v", err)
			}
			return
		}
		if cl.Len() > 64 {
			t.Fatalf("holds %d entities, limit 64", cl.Len())
		}
		// An accepted packet is never accepted twice.
		if _, err := cl.Decode(data); err == nil {
			t.Fatal("the same packet was accepted twice")
		}
	})
}

func FuzzParseAck(f *testing.F) {
	f.Add(replicate.AppendAck(nil, replicate.Ack{Seq: 7, Mask: 5}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := replicate.ParseAck(data)
		if err != nil {
			return
		}
		if got := replicate.AppendAck(nil, a); string(got) != string(data) {
			t.Fatalf("ack %x parsed as %+v, written back as %x", data, a, got)
		}
	})
}
