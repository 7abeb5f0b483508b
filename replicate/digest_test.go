package replicate_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/integrity"
	"github.com/bitwire/bitwire/internal/golden"
	"github.com/bitwire/bitwire/replicate"
)

// varThing is an entity whose full size varies (a list of up to 12
// items), so that packets end on candidates that do not fit, and entries
// costed at an estimate overflow the exact size.
type varThing struct {
	X     float32  `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Z     float32  `net:"q,min=-256,max=256,prec=0.01,dmin=-2,dmax=2"`
	Items []uint16 `net:"maxlen=12"`
}

// digestCase is one busy session of a Server and several Peers.
type digestCase struct {
	name      string
	entities  int
	peers     int
	ticks     int
	churn     bool // entities removed and created again every tick
	cfg       func(i int, pos *[2]float32) replicate.PeerConfig[varThing]
	decodeAll bool // every peer has a real Client (with reordering), so that missing-baseline reports happen
}

// TestGoldenSessionDigest freezes the packets of long, busy sessions in
// many configurations (priorities with and without ties, none, relevance,
// bandwidth with several packets a tick, small budgets, churn, refresh,
// PriorityEvery, integrity trailers, loss, late and reordered acks) as a
// digest of every packet's bytes and the Peers' counters: any change of
// which entities a packet carries, in which order or coding, fails it.
// The format itself is frozen by TestGoldenPackets; this test guards the
// choices the format leaves to the Peer, against changes meant only to
// make them faster. `go test ./replicate -run Golden -update` rewrites it,
// for an intended change.
func TestGoldenSessionDigest(t *testing.T) {
	dist := func(pos *[2]float32) func(uint32, *varThing) float32 {
		return func(_ uint32, e *varThing) float32 {
			dx, dz := e.X-pos[0], e.Z-pos[1]
			return 1 / (1 + (dx*dx+dz*dz)*(1.0/1024))
		}
	}
	cases := []digestCase{
		{name: "distance", entities: 1500, peers: 3, ticks: 150, cfg: func(i int, pos *[2]float32) replicate.PeerConfig[varThing] {
			return replicate.PeerConfig[varThing]{Priority: dist(pos)}
		}},
		{name: "ties", entities: 800, peers: 2, ticks: 150, cfg: func(i int, pos *[2]float32) replicate.PeerConfig[varThing] {
			return replicate.PeerConfig[varThing]{Priority: func(id uint32, e *varThing) float32 { return float32(id%5) * 0.5 }, Budget: 400}
		}},
		{name: "nil-priority", entities: 600, peers: 2, ticks: 120, cfg: func(i int, pos *[2]float32) replicate.PeerConfig[varThing] {
			return replicate.PeerConfig[varThing]{Budget: 300}
		}},
		{name: "relevance-churn", entities: 900, peers: 3, ticks: 150, churn: true, cfg: func(i int, pos *[2]float32) replicate.PeerConfig[varThing] {
			return replicate.PeerConfig[varThing]{Priority: dist(pos), Relevant: func(id uint32, e *varThing) bool {
				dx, dz := e.X-pos[0], e.Z-pos[1]
				return dx*dx+dz*dz < 150*150
			}, Refresh: 40}
		}},
		{name: "bandwidth", entities: 1200, peers: 2, ticks: 120, churn: true, cfg: func(i int, pos *[2]float32) replicate.PeerConfig[varThing] {
			return replicate.PeerConfig[varThing]{Priority: dist(pos), Budget: 500, Bandwidth: 40000, PriorityEvery: 4, Integrity: integrity.ModeChecksum}
		}},
		{name: "decoding", entities: 700, peers: 2, ticks: 200, churn: true, decodeAll: true, cfg: func(i int, pos *[2]float32) replicate.PeerConfig[varThing] {
			return replicate.PeerConfig[varThing]{Priority: dist(pos), Budget: 600, Refresh: 25, PriorityEvery: 3}
		}},
	}
	var b strings.Builder
	b.WriteString("# bitwire golden replication sessions: per case, the packets, their bytes, and a SHA-256\n")
	b.WriteString("# of every packet and of the Peers' counters (replicate/digest_test.go).\n")
	for _, dc := range cases {
		fmt.Fprintf(&b, "%s\n", digestSession(t, dc))
	}
	path := filepath.Join("testdata", "golden", "sessions.txt")
	golden.Check(t, path, b.String(), *updateGolden, "the packets a Peer chooses", "go test ./replicate -run Golden -update")
}

func digestSession(t *testing.T, dc digestCase) string {
	rng := rand.New(rand.NewSource(int64(len(dc.name))))
	c := bitwire.MustFor[varThing]()
	srv, err := replicate.NewServer(c)
	require.NoError(t, err)
	type client struct {
		peer   *replicate.Peer[varThing]
		cl     *replicate.Client[varThing]
		pos    [2]float32
		held   [][]byte // packets held back, delivered out of order
		acks   []pendingAck
		newest uint32
		mask   uint32
		guard  *integrity.Guard
		tokens map[uint32]uint32 // seq → ack token, of the packets that arrived
	}
	cs := make([]*client, dc.peers)
	for i := range cs {
		c := &client{pos: [2]float32{float32(rng.Float64()*300 - 150), float32(rng.Float64()*300 - 150)}}
		c.peer, err = srv.NewPeer(dc.cfg(i, &c.pos))
		require.NoError(t, err)
		mode := dc.cfg(i, &c.pos).Integrity
		c.guard, err = integrity.New(mode, nil)
		require.NoError(t, err)
		c.tokens = map[uint32]uint32{}
		if i == 0 || dc.decodeAll {
			c.cl, err = replicate.NewClient(bitwire.MustFor[varThing](), replicate.WithIntegrity(mode, nil))
			require.NoError(t, err)
		}
		cs[i] = c
	}
	random := func() varThing {
		v := varThing{X: float32(rng.Float64()*400 - 200), Z: float32(rng.Float64()*400 - 200)}
		for range rng.Intn(13) {
			v.Items = append(v.Items, uint16(rng.Intn(1<<16)))
		}
		return v
	}
	ents := map[uint32]*varThing{}
	nextID := uint32(1)
	h := sha256.New()
	packets, bytes := 0, 0
	for tick := uint32(1); tick <= uint32(dc.ticks); tick++ {
		require.NoError(t, srv.Advance(tick))
		if tick == 1 {
			for range dc.entities {
				v := random()
				ents[nextID] = &v
				_, err := srv.Set(nextID, &v)
				require.NoError(t, err)
				nextID += 1 + uint32(rng.Intn(3))
			}
		}
		for k := 0; k < dc.entities/10; k++ {
			id := 1 + uint32(rng.Intn(int(nextID)))
			v, ok := ents[id]
			if !ok {
				continue
			}
			v.X += float32(rng.Float64() - 0.5)
			v.Z += float32(rng.Float64() - 0.5)
			if rng.Intn(4) == 0 {
				*v = random()
			}
			_, err := srv.Set(id, v)
			require.NoError(t, err)
		}
		if dc.churn {
			for k := 0; k < 1+dc.entities/100; k++ {
				id := 1 + uint32(rng.Intn(int(nextID)))
				if _, ok := ents[id]; ok {
					_, err := srv.Remove(id)
					require.NoError(t, err)
					delete(ents, id)
				} else {
					v := random()
					ents[id] = &v
					_, err := srv.Set(id, &v)
					require.NoError(t, err)
				}
			}
		}
		for _, c := range cs {
			c.pos[0] += float32(rng.Float64()*4 - 2)
			c.pos[1] += float32(rng.Float64()*4 - 2)
			keep := c.acks[:0]
			for _, a := range c.acks {
				if a.at <= tick {
					_ = c.peer.Ack(a.ack)
				} else {
					keep = append(keep, a)
				}
			}
			c.acks = keep
			for {
				pkt, ok, err := c.peer.Encode(nil)
				require.NoError(t, err)
				if !ok {
					break
				}
				packets++
				bytes += len(pkt)
				h.Write(pkt)
				if rng.Intn(20) == 0 {
					continue // lost
				}
				var a replicate.Ack
				if c.cl != nil {
					c.held = append(c.held, pkt)
					if rng.Intn(3) != 0 || len(c.held) > 2 {
						// Deliver the held packets, newest first at times.
						if rng.Intn(2) == 0 {
							for i, j := 0, len(c.held)-1; i < j; i, j = i+1, j-1 {
								c.held[i], c.held[j] = c.held[j], c.held[i]
							}
						}
						for _, p := range c.held {
							_, _ = c.cl.Decode(p)
						}
						c.held = c.held[:0]
					}
					a = c.cl.Ack()
				} else {
					hd, err := replicate.ParseHeader(pkt)
					require.NoError(t, err)
					if d := hd.Seq - c.newest; c.newest == 0 || d > 32 {
						c.mask = 0
					} else {
						c.mask = c.mask<<d | 1<<(d-1)
					}
					c.newest = hd.Seq
					_, c.tokens[hd.Seq], err = c.guard.Open(pkt)
					require.NoError(t, err)
					a = replicate.Ack{Seq: c.newest, Mask: c.mask, Token: c.tokens[hd.Seq]}
					for i := uint32(0); i < 32; i++ {
						if c.mask&(1<<i) != 0 {
							a.MaskToken ^= c.tokens[hd.Seq-1-i]
						}
					}
				}
				if rng.Intn(20) == 0 {
					continue // the ack is lost
				}
				c.acks = append(c.acks, pendingAck{at: tick + 1 + uint32(rng.Intn(5)), ack: a})
			}
		}
	}
	for _, c := range cs {
		fmt.Fprintf(h, "%+v\n", c.peer.Stats())
	}
	return fmt.Sprintf("%s: %d packets, %d bytes, sha256 %s", dc.name, packets, bytes, hex.EncodeToString(h.Sum(nil)))
}
