package gen_test

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// The replication corpus: Go's replicate.Server and Peer send a changing
// world of entities (adds, changes, removals) over a channel that loses,
// holds back (reorders), duplicates and damages packets, and loses acks;
// every packet that reaches the client is a case with what Go's
// replicate.Client made of it: the states it set (id, tick, canonical
// value), the ids it removed, the ids it holds, or the error, and the ack
// it would send, in bytes. The TypeScript ReplicaClient
// (clients/ts/src/bitwire.ts) gets the same packets in the same order and
// must agree on every one.

// replSentinel names a replicate.Client error the way the runtimes do.
func replSentinel(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{
		{replicate.ErrBadMagic, "ErrBadMagic"}, {replicate.ErrProtocolMismatch, "ErrProtocolMismatch"},
		{replicate.ErrStale, "ErrStale"}, {replicate.ErrFuture, "ErrFuture"},
		{replicate.ErrNoBaseline, "ErrNoBaseline"}, {replicate.ErrTooManyEntities, "ErrTooManyEntities"},
		{replicate.ErrIntegrity, "ErrIntegrity"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return sentinel(err)
}

// cfShell is an entity whose deltas are predicted from two baselines (as
// entities of replicate: every coding of pred but the entity set).
type cfShell struct {
	Tag uint16     `net:"bits=16"`
	X   float32    `net:"q,min=-500,max=500,prec=0.05,dmin=-5,dmax=5,pred"`
	Y   float64    `net:"q,min=-500,max=500,prec=0.05,pred"`
	Dir uint8      `net:"range,min=0,max=200,pred"`
	Hp  uint8      `net:"range,min=0,max=100"`
	Rot [4]float32 `net:"quat,pred"`
	Ori cfOri      `net:"quat,bits=11,pred"`
}

// replStream describes one stream of the corpus.
type replStream struct {
	entities int // ids 1..entities, some removed and re-added
	budget   int // bytes per packet
	bwidth   int // bytes per second (several packets a tick), 0: one a tick
	ticks    int
	outage   [2]int // packets [from, to) (counted from 0) are all lost
	maxEnts  int    // the client's WithMaxEntities, 0: default
	spoof    bool   // some lost packets are acknowledged anyway, with the right token (mode 0: anyone who sees the packet can compute it): the Peer then sends deltas the client cannot decode, and the client reports the missing baseline
	forge    bool   // mode 0: some packets are delivered again with a sequence number 300 ahead (a forgery the client cannot tell), which it accepts and then re-anchors backward from
	expiry   *int   // the client's WithExpiry; nil: the default expiry
	refresh  int    // the Peer's PeerConfig.Refresh, which the client is told (WithRefresh) when not 0
	tickRate int    // the Server's WithTickRate, which the client is told too; 0: 30, not told
	mode     int    // integrity mode: 0 none, 1 CRC32C, 2 HMAC-SHA256-80 (with a key of its own)
}

// clientOptions are the options of a stream's replicate.Client.
func (cfg replStream) clientOptions(key []byte) []replicate.Option {
	opts := []replicate.Option{replicate.WithIntegrity(snapshot.Mode(cfg.mode), key)}
	if cfg.maxEnts > 0 {
		opts = append(opts, replicate.WithMaxEntities(cfg.maxEnts))
	}
	if cfg.expiry != nil {
		opts = append(opts, replicate.WithExpiry(*cfg.expiry))
	}
	if cfg.refresh != 0 {
		opts = append(opts, replicate.WithRefresh(cfg.refresh))
	}
	if cfg.tickRate != 0 {
		opts = append(opts, replicate.WithTickRate(cfg.tickRate))
	}
	return opts
}

// serverTickRate is the Server's tick rate of a stream.
func (cfg replStream) serverTickRate() int {
	if cfg.tickRate != 0 {
		return cfg.tickRate
	}
	return 30
}

// replCorpus appends the cases of one stream of entities of type E.
func replCorpus[E any](t *testing.T, name string, st int, cfg replStream, r *rand.Rand, random func() E, next func(E) E, cases *[]cfCase) replicate.PeerStats {
	c := bitwire.MustFor[E]()
	s := c.Schema()
	srv, err := replicate.NewServer(c, replicate.WithTickRate(cfg.serverTickRate()))
	if err != nil {
		t.Fatal(err)
	}
	focus := uint32(1)
	var key []byte
	if cfg.mode == 2 {
		key = make([]byte, 16+st)
		r.Read(key)
	}
	peer, err := srv.NewPeer(replicate.PeerConfig[E]{
		Integrity: snapshot.Mode(cfg.mode), Key: key,
		Priority: func(id uint32, _ *E) float32 {
			d := float32(id) - float32(focus)
			return 1 / (1 + d*d/16)
		},
		Relevant: func(id uint32, _ *E) bool { return (id+focus)%11 != 0 }, // interest moves with focus
		Budget:   cfg.budget, Bandwidth: cfg.bwidth, Refresh: cfg.refresh,
	})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := replicate.NewClient(c, cfg.clientOptions(key)...)
	if err != nil {
		t.Fatal(err)
	}
	world := map[uint32]E{}
	var inflight [][]byte
	deliver := func(p []byte) {
		cs, err := replCase(t, s, cl, name, st, cfg, key, p)
		if err == nil && r.Intn(5) > 0 { // the ack may be lost
			peer.Ack(cl.Ack())
		}
		*cases = append(*cases, cs)
	}
	sent, damaged := 0, 0
	for tick := 1; tick <= cfg.ticks; tick++ {
		if err := srv.Advance(uint32(tick)); err != nil {
			t.Fatal(err)
		}
		focus = uint32(1 + (tick/5)%cfg.entities)
		for id := uint32(1); id <= uint32(cfg.entities); id++ {
			e, ok := world[id]
			switch x := r.Intn(100); {
			case !ok && x < 30, tick == 1:
				e = random()
			case ok && x < 3:
				delete(world, id)
				if _, err := srv.Remove(id); err != nil {
					t.Fatal(err)
				}
				continue
			case ok && x < 40:
				e = next(e)
			case !ok:
				continue
			}
			world[id] = e
			if _, err := srv.Set(id, &e); err != nil {
				t.Fatal(err)
			}
		}
		for {
			p, ok, err := peer.Encode(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			sent++
			if sent > cfg.outage[0] && sent <= cfg.outage[1] {
				continue
			}
			if cfg.forge && (sent == 30 || sent == 55) {
				// the packet again, 300 ahead: the client takes it and
				// refuses the genuine ones as stale until a run of them
				// re-anchors it backward
				q := append([]byte(nil), p...)
				binary.LittleEndian.PutUint32(q[6:], binary.LittleEndian.Uint32(q[6:])+300)
				deliver(q)
			}
			switch x := r.Intn(40); {
			case x < 6: // lost
				if h, err := replicate.ParseHeader(p); err == nil && cfg.spoof && x < 2 {
					if err := peer.Ack(replicate.Ack{Seq: h.Seq, Token: crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli))}); err != nil {
						t.Fatalf("a spoofed ack with the right token: %v", err)
					}
				}
			case x < 10: // held back: delivered after the next one
				inflight = append(inflight, p)
				continue
			case x < 12: // duplicated
				deliver(p)
				deliver(p)
			case x == 12 || x == 14:
				damaged++
				deliver(damageRepl(r, p, cfg.mode, damaged))
				deliver(p)
			default:
				deliver(p)
			}
			for _, q := range inflight {
				deliver(q)
			}
			inflight = inflight[:0]
		}
	}
	return peer.Stats()
}

// replCase is what Go's client makes of packet p of stream st: the states
// it set, the ids it removed and holds, or the error; and its ack.
func replCase[E any](t *testing.T, s *bitwire.Schema, cl *replicate.Client[E], name string, st int, cfg replStream, key, p []byte) (cfCase, error) {
	cs := cfCase{Kind: "repl", Msg: name, Stream: st, Packet: hex.EncodeToString(p), Max: cfg.maxEnts, Expiry: cfg.expiry,
		Refresh: cfg.refresh, TickRate: cfg.tickRate, Mode: cfg.mode, Key: hex.EncodeToString(key)}
	info, err := cl.Decode(p)
	if err != nil {
		cs.Err, cs.ErrMsg = replSentinel(err), err.Error()
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "seq %d tick %d removed %v set", info.Seq, info.Tick, info.Removed)
		for _, id := range info.Updated {
			e, tick, ok := cl.Get(id)
			if !ok {
				t.Fatalf("updated id %d not held", id)
			}
			fmt.Fprintf(&b, " %d@%d=%s", id, tick, canonOf(t, s, e))
		}
		var held []uint32
		cl.Range(func(id uint32, _ uint32, _ *E) bool { held = append(held, id); return true })
		slices.Sort(held)
		fmt.Fprintf(&b, " held %v", held)
		cs.Want = b.String()
	}
	cs.Ack = hex.EncodeToString(replicate.AppendAck(nil, cl.Ack()))
	return cs, err
}

// replLists writes the lists of a replication packet as docs/wire-format.md
// ("Lists") says, so that packets can be made that break their rules.
type replLists struct{ w bits.Writer }

func (l *replLists) count(n int) {
	l.w.WriteBool(n != 0)
	if n != 0 {
		fields.WriteBitlen(&l.w, uint64(n-1), 5)
	}
}

// values writes values of one list (one running mean).
func (l *replLists) values(m *fields.RiceMean, vs ...uint64) {
	for _, v := range vs {
		k := m.K()
		fields.WriteRiceBitlen(&l.w, v, k, 5)
		m.AddCapped(v, k)
	}
}

// replCrafted appends a stream of packets made by hand, each breaking one
// rule of the lists or kinds (docs/wire-format.md, "Lists"), then one that
// keeps them all; every packet goes to one fresh client.
func replCrafted(t *testing.T, st int, cases *[]cfCase) {
	c := bitwire.MustFor[cfPlayer]()
	cl, err := replicate.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	fp := c.Fingerprint()
	full := func(l *replLists) {
		if err := c.Encode(&l.w, &cfPlayer{Health: 7, Weapon: 3}); err != nil {
			t.Fatal(err)
		}
	}
	const tick = 9
	// one entity, id 5, after the removals and the common baseline
	entity := func(l *replLists, common int) {
		l.count(0)
		l.w.WriteBool(common >= 0)
		if common >= 0 {
			fields.WriteBitlen(&l.w, uint64(tick-common-1), 5)
		}
		l.count(1)
		l.values(new(fields.RiceMean), 5)
	}
	for i, body := range []func(l *replLists){
		func(l *replLists) { entity(l, -1); l.count(0); full(l) }, // a delta against a common baseline the packet lacks
		func(l *replLists) { // a kind past the entities
			entity(l, -1)
			l.count(1)
			var at, v fields.RiceMean
			l.values(&at, 1)
			l.values(&v, 0)
			full(l)
		},
		func(l *replLists) { // an own baseline that is the common one
			entity(l, 6)
			l.count(1)
			var at, v fields.RiceMean
			l.values(&at, 0)
			l.values(&v, 3)
			full(l)
		},
		func(l *replLists) { // an own baseline before tick 0
			entity(l, -1)
			l.count(1)
			var at, v fields.RiceMean
			l.values(&at, 0)
			l.values(&v, tick+1)
			full(l)
		},
		func(l *replLists) { // an id past 2^32 - 1
			l.count(2)
			l.values(new(fields.RiceMean), 1<<32-2, 5)
		},
		func(l *replLists) { l.count(1000) }, // a count over the bits left
		func(l *replLists) { // a gap escaped that the unary form spells
			l.count(1)
			l.w.WriteBits(1<<6-1, 6)
			fields.WriteBitlen(&l.w, 5, 5)
			l.w.WriteBool(false)
			l.count(0)
			l.count(0)
		},
		func(l *replLists) { // well formed: a full state of id 5
			entity(l, -1)
			l.count(1)
			var at, v fields.RiceMean
			l.values(&at, 0)
			l.values(&v, 0)
			full(l)
		},
	} {
		var l replLists
		l.w.WriteBits(replicate.Magic, 16)
		l.w.WriteBits(uint64(uint32(fp)^uint32(fp>>32)), 32)
		l.w.WriteBits(uint64(i+1), 32)
		l.w.WriteBits(tick, 32)
		l.w.WriteBits(0, 2)
		body(&l)
		cs, _ := replCase(t, c.Schema(), cl, "Player", st, replStream{}, nil, l.w.Bytes())
		*cases = append(*cases, cs)
	}
}

// damageRepl returns a copy of p with one kind of damage (the kinds in
// turn); bits are flipped
// only in packets with a trailer (modes 1 and 2), which catches them:
// without one a flipped bit in a body may decode to another valid state, or
// to a string the clients cannot hold.
func damageRepl(r *rand.Rand, p []byte, mode, kind int) []byte {
	q := append([]byte(nil), p...)
	n := 5
	if mode > 0 {
		n = 6
	}
	switch kind % n {
	case 5:
		q[r.Intn(len(q))] ^= 1 << r.Intn(8)
	case 0:
		q[0] ^= 1 // magic
	case 1:
		q[3] ^= 0x10 // fingerprint
	case 2:
		q = q[:r.Intn(len(q))] // cut short
	case 3:
		q = append(q, 0) // a byte too many
	case 4:
		q[6], q[7], q[8], q[9] = 0, 0, 0, 0 // sequence number 0 (a trailer refuses it first)
	}
	return q
}

func replCases(t *testing.T) []cfCase {
	r := rand.New(rand.NewSource(12))
	var cases []cfCase
	player := func() cfPlayer {
		var p cfPlayer
		p.Pos.X, p.Pos.Z, p.Pos.Y = float32(r.Float64()*1024-512), float32(r.Float64()*1024-512), float32(r.Float64()*128-16)
		p.Yaw, p.Health, p.Weapon = float32(r.Float64()*360), r.Intn(201), r.Intn(16)
		return p
	}
	movePlayer := func(p cfPlayer) cfPlayer {
		p.Pos.X = max(-512, min(512, p.Pos.X+float32(r.Float64()*4-2)))
		p.Yaw = float32(r.Float64() * 360)
		if r.Intn(4) == 0 {
			p.Health = r.Intn(201)
		}
		p.Firing = !p.Firing
		return p
	}
	all := func(v cfAll) cfAll { return mutate(r, v) }
	// many small entities, several packets a tick within a bandwidth budget
	replCorpus(t, "Player", 1, replStream{entities: 120, budget: 300, bwidth: 30 * 700, ticks: 60, mode: 1, expiry: intp(6)}, r, player, movePlayer, &cases)
	// one packet a tick, most entities wait their turn
	replCorpus(t, "Player", 2, replStream{entities: 80, budget: 200, ticks: 80, spoof: true, forge: true}, r, player, movePlayer, &cases)
	// every coding, as entities
	replCorpus(t, "All", 3, replStream{entities: 12, budget: 4000, bwidth: 30 * 8000, ticks: 50, mode: 2}, r, func() cfAll { return randAll(r) }, all, &cases)
	// a long outage: more than MaxAhead packets lost, then the stream re-anchors (ErrFuture, then a run)
	replCorpus(t, "Player", 4, replStream{entities: 20, budget: 60, ticks: 1200, outage: [2]int{30, 1090}}, r, player, movePlayer, &cases)
	// a client that holds at most 30 entities
	replCorpus(t, "Player", 5, replStream{entities: 40, budget: 1200, ticks: 30, maxEnts: 30, mode: 2}, r, player, movePlayer, &cases)
	// forged packets ahead without spoofed acks (stream 2 has both, and
	// its spoofed acks may leave every packet let through after a forgery
	// without a baseline): the client re-anchors backward
	replCorpus(t, "Player", 6, replStream{entities: 20, budget: 300, ticks: 80, forge: true}, r, player, movePlayer, &cases)
	// packets made by hand that break the rules of the lists
	replCrafted(t, 7, &cases)
	// entities whose deltas are predicted from two baselines: flyers at
	// constant velocities and spins
	shell := func() cfShell {
		f := newFlyers(r).v.Bodies[0]
		o := newFlyers(r).v.Ori
		return cfShell{Tag: uint16(r.Intn(40)), X: f.X, Y: f.Y, Dir: f.Dir, Hp: f.Hp, Rot: f.Rot, Ori: o}
	}
	moveShell := func(f cfShell) cfShell {
		f.X = float32(min(500, max(-500, float64(f.X)+float64(int(f.Tag)%9-4)*0.05)))
		f.Y = min(500, max(-500, f.Y+0.1))
		f.Dir = uint8((int(f.Dir) + 1) % 201)
		f.Rot = f32q(turn(spinOf(f.Tag), f64q(f.Rot)))
		o := turn(spinOf(f.Tag+1), [4]float64{f.Ori.X, f.Ori.Y, f.Ori.Z, f.Ori.W})
		f.Ori = cfOri{o[0], o[1], o[2], o[3]}
		return f
	}
	if st := replCorpus(t, "Shell", 8, replStream{entities: 30, budget: 1200, ticks: 120, mode: 1}, r, shell, moveShell, &cases); st.Delta < 200 || st.Predicted < st.Delta/4 {
		t.Errorf("the predicting stream sent %d deltas, %d of them predicted", st.Delta, st.Predicted)
	} else {
		t.Logf("the predicting stream sent %d deltas, %d of them predicted", st.Delta, st.Predicted)
	}
	kinds := map[string]int{}
	for _, c := range cases {
		k := "accepted"
		if c.Err != "" {
			k = c.Err
		}
		kinds[k]++
	}
	// the corpus must also hold a backward re-anchoring (after a forged
	// packet ahead) and acks with a missing-baseline report
	newest := map[int]uint32{}
	for _, c := range cases {
		var seq uint32
		if c.Err != "" || c.Kind != "repl" {
			continue
		}
		fmt.Sscanf(c.Want, "seq %d", &seq)
		if n, ok := newest[c.Stream]; ok && seq <= n {
			kinds["re-anchored backward"]++
		}
		newest[c.Stream] = seq
	}
	for _, c := range cases {
		if len(c.Ack) == 2*replicate.AckSizeMissing {
			kinds["acks with a missing-baseline report"]++
		}
	}
	t.Logf("replication corpus: %d packets delivered: %v", len(cases), kinds)
	for _, k := range []string{"accepted", "ErrStale", "ErrFuture", "ErrNoBaseline", "ErrTooManyEntities", "ErrBadMagic", "ErrProtocolMismatch", "ErrUnexpectedEnd", "ErrTrailingData", "ErrMalformed", "ErrIntegrity", "re-anchored backward", "acks with a missing-baseline report"} {
		if kinds[k] == 0 {
			t.Errorf("the corpus has no case of %s", k)
		}
	}
	return cases
}

// TestTypeScriptReplicate feeds the replication corpus to the TypeScript
// runtime's ReplicaClient, decoding entities with code generated from their
// schemas.
func TestTypeScriptReplicate(t *testing.T) {
	node, tsc := clientTools(t)
	cases := replCases(t)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", corpusMessages(t)...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

// TestCSharpReplicate feeds the replication corpus to the C# runtime's
// ReplicaClient, through the generated Replica().
func TestCSharpReplicate(t *testing.T) {
	mcs, mono := csTools(t)
	cases := replCases(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", corpusMessages(t)...); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)
}

// goldenReplCases are the golden replication sessions of
// replicate/testdata/golden/packets.txt, once per integrity mode, for a
// client generated from the golden schema file alone: each packet must set
// and remove the ids the file lists, and the client's ack after it must be
// the file's, byte for byte.
func goldenReplCases(t *testing.T) ([]gen.Message, []cfCase) {
	b, err := os.ReadFile("../replicate/testdata/golden/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s bitwire.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	f, err := os.ReadFile("../replicate/testdata/golden/packets.txt")
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	var cases []cfCase
	var c *cfCase
	stream, mode := 100, 0
	for _, l := range strings.Split(string(f), "\n") {
		k, v, _ := strings.Cut(l, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(l, "## integrity "):
			stream++
			mode = map[string]int{"none": 0, "crc32c": 1, "hmac-sha256-80": 2}[strings.TrimPrefix(l, "## integrity ")]
		case strings.HasPrefix(l, "[tick "):
			cases = append(cases, cfCase{Kind: "repl-golden", Msg: "GoldenThing", Stream: stream, Mode: mode})
			c = &cases[len(cases)-1]
			if mode == 2 {
				c.Key = hex.EncodeToString(key)
			}
		case c == nil:
		case k == "updated":
			c.Want = "updated " + v + c.Want
		case k == "removed":
			c.Want += " removed " + v
		case k == "hex":
			c.Packet = v
		case k == "ack":
			c.Ack = v
		}
	}
	if len(cases) != 12 || stream != 103 {
		t.Fatalf("%d golden replication packets in %d sessions, want 12 in 3", len(cases), stream-100)
	}
	for _, c := range cases {
		if c.Packet == "" || c.Ack == "" || !strings.HasPrefix(c.Want, "updated [") || !strings.Contains(c.Want, " removed [") {
			t.Fatalf("incomplete golden case %+v", c)
		}
	}
	return []gen.Message{gen.Named("GoldenThing", &s)}, cases
}

func TestGoldenReplicateTypeScript(t *testing.T) {
	node, tsc := clientTools(t)
	msgs, cases := goldenReplCases(t)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", msgs...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

func TestGoldenReplicateCSharp(t *testing.T) {
	mcs, mono := csTools(t)
	msgs, cases := goldenReplCases(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", msgs...); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)
}
