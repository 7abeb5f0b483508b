package gateway

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/bitwire/bitwire/replicate"
)

// peerConfigs are three clients: one with a bandwidth budget, one with
// interest (a radius), one with small packets; each prefers what is near
// its own point.
func peerConfigs() []replicate.PeerConfig[Body] {
	near := func(x, z float32) func(uint32, *Body) float32 {
		return func(_ uint32, b *Body) float32 {
			dx, dz := b.X-x, b.Z-z
			return 1 / (1 + dx*dx + dz*dz)
		}
	}
	return []replicate.PeerConfig[Body]{
		{Priority: near(0, 0), Bandwidth: 12000},
		{Priority: near(100, -50), Relevant: func(_ uint32, b *Body) bool {
			dx, dz := b.X-100, b.Z+50
			return dx*dx+dz*dz < 120*120
		}},
		{Priority: near(-150, 150), Budget: 300, PriorityEvery: 3},
	}
}

// lossy is a client's deterministic network: packets lost, acks lost, and
// acks arriving ackDelay ticks late.
type lossy struct {
	rng      *rand.Rand
	client   *replicate.Client[Body]
	inFlight [][]replicate.Ack // by tick modulo ackDelay+1
}

const ackDelay = 2

// TestByteIdentity: a client served by a gateway through NATS receives the
// same bytes, packet for packet, as one served by a single process's
// replicate.Server given the same world, acks and losses.
func TestByteIdentity(t *testing.T) {
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	pub, err := NewPublisher(connect(t, ns), bodyCodec, Config[Body]{Subject: "id"})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := NewGateway(connect(t, ns), bodyCodec, Config[Body]{Subject: "id"})
	if err != nil {
		t.Fatal(err)
	}
	waitRequests(t, pub, 1)
	ref, err := replicate.NewServer(bodyCodec)
	if err != nil {
		t.Fatal(err)
	}

	w := newWorld(1, 400)
	w.churn = 3
	var refPeers, gwPeers []*replicate.Peer[Body]
	var nets []*lossy
	packets, bytesSent := 0, 0
	for tick := uint32(1); tick <= 300; tick++ {
		ops := w.step(tick == 1)
		play(t, ref, tick, ops)
		play(t, pub, tick, ops)
		if err := pub.Publish(); err != nil {
			t.Fatal(err)
		}
		next(t, gw, tick)
		if !gw.Synced() {
			t.Fatalf("tick %d served, not synced", tick)
		}
		if tick == 1 || tick == 40 { // clients join at the start and later
			for i, pc := range peerConfigs() {
				rp, err := ref.NewPeer(pc)
				if err != nil {
					t.Fatal(err)
				}
				gp, err := gw.Server().NewPeer(pc)
				if err != nil {
					t.Fatal(err)
				}
				cl, _ := replicate.NewClient(bodyCodec)
				refPeers, gwPeers = append(refPeers, rp), append(gwPeers, gp)
				nets = append(nets, &lossy{rng: rand.New(rand.NewSource(int64(100*tick) + int64(i))), client: cl, inFlight: make([][]replicate.Ack, ackDelay+1)})
			}
		}
		for i := range refPeers {
			n := nets[i]
			slot := int(tick) % (ackDelay + 1)
			for _, a := range n.inFlight[slot] {
				refPeers[i].Ack(a)
				gwPeers[i].Ack(a)
			}
			n.inFlight[slot] = n.inFlight[slot][:0]
			for {
				want, ok1, err1 := refPeers[i].Encode(nil)
				got, ok2, err2 := gwPeers[i].Encode(nil)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if ok1 != ok2 || !bytes.Equal(want, got) {
					t.Fatalf("tick %d client %d packet: gateway sent %d bytes (%v), a single server %d (%v)", tick, i, len(got), ok2, len(want), ok1)
				}
				if !ok1 {
					break
				}
				packets++
				bytesSent += len(got)
				if n.rng.Float64() < 0.1 {
					continue // lost
				}
				if _, err := n.client.Decode(got); err != nil {
					continue
				}
				if n.rng.Float64() < 0.1 {
					continue // its ack lost
				}
				due := (int(tick) + ackDelay) % (ackDelay + 1)
				n.inFlight[due] = append(n.inFlight[due], n.client.Ack())
			}
		}
	}
	sameWorld(t, ref, gw.Server(), nil)
	if packets < 1000 {
		t.Fatalf("only %d packets compared", packets)
	}
	// The clients hold the world (they lag it, within their budgets).
	for i, n := range nets {
		held := 0
		n.client.Range(func(id, tick uint32, e *Body) bool {
			held++
			return true
		})
		if held == 0 {
			t.Errorf("client %d holds nothing", i)
		}
	}
	t.Logf("%d packets, %d bytes, identical; gateway stats %+v; publisher %+v", packets, bytesSent, gw.Stats(), pub.Stats())
}
