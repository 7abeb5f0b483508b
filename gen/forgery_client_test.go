package gen_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// The forgery corpus: the same packet sequence, an honest stream with
// forgeries of an off-path forger mixed in, goes through Go's receivers
// and the generated clients' (TestTypeScriptForgery, TestCSharpForgery),
// which must give the same verdict on every packet (the tick and value
// accepted, or the same error, and the same ack) and hold the same
// entities at the end. The forger, who never reads the traffic but knows
// the format (and, for a replication stream, one sequence number and tick
// of it), sends bursts of RecoverAfter increasing far-away ticks or
// sequence numbers (each completes a run of the tick window), bursts of
// old ones (more than ReorderTicks behind: a backward run), and packets of
// made-up entity ids, which only the expiry removes; with a CRC it
// computes the trailer, with a MAC it cannot. The honest stream is
// reordered within ReorderTicks, loses and duplicates packets, and stalls
// for longer than MaxAhead, after which the window must re-anchor forward;
// a straggler from before the stall arrives after that. A Go receiver's
// bound on such a forger is then the clients' too.

func intp(n int) *int { return &n }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// reseal returns p, a replication or snapshot packet of integrity mode
// mode whose header was rewritten, with the trailer a forger can give it:
// a CRC32C recomputed (mode 1), the old trailer (mode 2, whose MAC it
// cannot compute).
func reseal(p []byte, mode int) []byte {
	if mode == 1 {
		n := len(p) - 4
		binary.LittleEndian.PutUint32(p[n:], crc32.Checksum(p[:n], castagnoli))
	}
	return p
}

// forgeRepl describes one replication stream of the forgery corpus, in
// ticks of the Server (one packet a tick).
type forgeRepl struct {
	cfg      replStream // the integrity mode, the client's options, the Peer's Refresh
	ticks    int
	stall    [2]int // the packets of ticks [from, to) are lost
	far      [2]int // in ticks [from, to), a burst of far-away sequence numbers after every 8th genuine packet
	old      [2]int // in ticks [from, to), a burst of old sequence numbers after every 16th
	ids      [2]int // in ticks [from, to), each genuine packet followed by one of idsPer made-up ids
	idsPer   int
	idleFrom int // from this tick on, entities change rarely
}

// madeUp is the first id the forger makes up.
const madeUp = 1 << 20

// forgedIDs is a packet of mode mode with n made-up entities, ids from
// first on, in full, under sequence number seq and tick: what a forger
// who saw one genuine packet writes. With a MAC its trailer is wrong.
func forgedIDs(t *testing.T, r *rand.Rand, mode int, first uint32, n int, seq, tick uint32) []byte {
	c := bitwire.MustFor[cfPlayer]()
	srv, err := replicate.NewServer(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Advance(1); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		p := forgePlayer(r)
		if _, err := srv.Set(first+uint32(k), &p); err != nil {
			t.Fatal(err)
		}
	}
	cfg := replicate.PeerConfig[cfPlayer]{Budget: 4000, Integrity: snapshot.Mode(mode)}
	if mode == 2 {
		cfg.Key = make([]byte, 16) // not the stream's
	}
	peer, err := srv.NewPeer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := peer.Encode(nil)
	if err != nil || !ok {
		t.Fatalf("forging ids: %v %v", ok, err)
	}
	binary.LittleEndian.PutUint32(p[6:], seq)
	binary.LittleEndian.PutUint32(p[10:], tick)
	return reseal(p, mode)
}

func forgePlayer(r *rand.Rand) cfPlayer {
	var p cfPlayer
	p.Pos.X, p.Pos.Z, p.Pos.Y = float32(r.Float64()*1024-512), float32(r.Float64()*1024-512), float32(r.Float64()*128-16)
	p.Yaw, p.Health, p.Weapon = float32(r.Float64()*360), r.Intn(201), r.Intn(16)
	return p
}

// forgeStats counts what a stream's Go receiver made of it.
type forgeStats struct {
	genuine, refused  int            // genuine packets delivered in order (each newer than any before), and refused
	late              int            // genuine packets delivered late or again
	forged, accepted  int            // forged packets delivered, and accepted
	madeUpMost, reanc int            // the most made-up entities held at once; genuine packets accepted after the stall
	newest            uint32         // the newest genuine one
	why               map[string]int // the errors of those refused in order
}

// count counts a genuine packet of sequence number or tick n.
func (s *forgeStats) count(n uint32, err error) {
	if n <= s.newest {
		s.late++
		return
	}
	s.newest = n
	s.genuine++
	s.refused += b2i(err != nil)
	if err != nil {
		if s.why == nil {
			s.why = map[string]int{}
		}
		s.why[replSentinel(err)]++
	}
}

func (s forgeStats) String() string {
	return fmt.Sprintf("%d of %d genuine packets in order refused (and %d late or again), %d of %d forged accepted, at most %d made-up entities held",
		s.refused, s.genuine, s.late, s.accepted, s.forged, s.madeUpMost) + fmt.Sprintf(" (refused in order: %v)", s.why)
}

// replForgery appends the cases of one replication stream, and a last one
// with every entity the client holds.
func replForgery(t *testing.T, st int, f forgeRepl, r *rand.Rand, cases *[]cfCase) (stats forgeStats, madeUpLeft int) {
	c := bitwire.MustFor[cfPlayer]()
	s := c.Schema()
	const entities = 30
	srv, err := replicate.NewServer(c, replicate.WithTickRate(f.cfg.serverTickRate()))
	if err != nil {
		t.Fatal(err)
	}
	var key []byte
	if f.cfg.mode == 2 {
		key = make([]byte, 16+st)
		r.Read(key)
	}
	peer, err := srv.NewPeer(replicate.PeerConfig[cfPlayer]{Integrity: snapshot.Mode(f.cfg.mode), Key: key, Budget: 400, Refresh: f.cfg.refresh})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := replicate.NewClient(c, f.cfg.clientOptions(key)...)
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(p []byte, forged bool) error {
		cs, err := replCase(t, s, cl, "Player", st, f.cfg, key, p)
		*cases = append(*cases, cs)
		if forged {
			stats.forged++
			stats.accepted += b2i(err == nil)
		} else {
			h, _ := replicate.ParseHeader(p)
			stats.count(h.Seq, err)
			if err == nil || errors.Is(err, replicate.ErrNoBaseline) {
				_ = peer.Ack(cl.Ack())
			}
		}
		n := 0
		cl.Range(func(id, _ uint32, _ *cfPlayer) bool { n += b2i(id >= madeUp); return true })
		stats.madeUpMost = max(stats.madeUpMost, n)
		return err
	}
	in := func(span [2]int, tick int) bool { return tick >= span[0] && tick < span[1] }
	type held struct {
		at int // delivered after the genuine packet of this tick
		p  []byte
	}
	var late []held
	world := map[uint32]cfPlayer{}
	next := uint32(madeUp)
	sent := 0
	for tick := 1; tick <= f.ticks; tick++ {
		if err := srv.Advance(uint32(tick)); err != nil {
			t.Fatal(err)
		}
		change := 30
		if f.idleFrom > 0 && tick >= f.idleFrom {
			change = 1
		}
		for id := uint32(1); id <= entities; id++ {
			e, ok := world[id]
			switch x := r.Intn(1000); {
			case !ok && x < 10*change, tick == 1:
				e = forgePlayer(r)
			case ok && x < change/3:
				delete(world, id)
				if _, err := srv.Remove(id); err != nil {
					t.Fatal(err)
				}
				continue
			case ok && x < 10*change:
				e.Pos.X = max(-512, min(512, e.Pos.X+float32(r.Float64()*4-2)))
				e.Health = r.Intn(201)
			case !ok:
				continue
			}
			world[id] = e
			if _, err := srv.Set(id, &e); err != nil {
				t.Fatal(err)
			}
		}
		p, ok, err := peer.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		sent++
		h, _ := replicate.ParseHeader(p)
		switch x := r.Intn(40); {
		case in(f.stall, tick):
			if tick < f.stall[0]+2 {
				// a straggler: arrives 20 ticks after the stream resumes
				late = append(late, held{f.stall[1] + 20, p})
			}
		case x < 2: // lost
		case x < 8: // held back, by at most 20 packets: within ReorderTicks
			late = append(late, held{tick + 1 + r.Intn(20), p})
		case x < 10:
			deliver(p, false)
			deliver(p, false)
		default:
			if deliver(p, false) == nil && f.stall[1] > 0 && tick >= f.stall[1] {
				stats.reanc++
			}
		}
		var keep []held
		for _, l := range late {
			if l.at <= tick && !in(f.stall, tick) {
				deliver(l.p, false)
			} else {
				keep = append(keep, l)
			}
		}
		late = keep
		if in(f.far, tick) && sent%8 == 0 {
			base := h.Seq + 1_000_000 + uint32(r.Intn(1<<30))
			for k := range replicate.RecoverAfter {
				q := append([]byte(nil), p...)
				binary.LittleEndian.PutUint32(q[6:], base+uint32(k))
				deliver(reseal(q, f.cfg.mode), true)
			}
		}
		if in(f.old, tick) && sent%16 == 0 && h.Seq > 200 {
			base := 1 + uint32(r.Intn(int(h.Seq)-100))
			for k := range replicate.RecoverAfter {
				q := append([]byte(nil), p...)
				binary.LittleEndian.PutUint32(q[6:], base+uint32(k))
				deliver(reseal(q, f.cfg.mode), true)
			}
		}
		if in(f.ids, tick) {
			if deliver(forgedIDs(t, r, f.cfg.mode, next, f.idsPer, h.Seq+1, h.Tick), true) == nil {
				next += uint32(f.idsPer)
			}
		}
	}
	cs := cfCase{Kind: "repl-held", Msg: "Player", Stream: st, Max: f.cfg.maxEnts, Expiry: f.cfg.expiry, Refresh: f.cfg.refresh, TickRate: f.cfg.tickRate, Mode: f.cfg.mode}
	var ids []uint32
	cl.Range(func(id, _ uint32, _ *cfPlayer) bool { ids = append(ids, id); return true })
	slices.Sort(ids)
	var b strings.Builder
	b.WriteString("held")
	for _, id := range ids {
		e, tick, _ := cl.Get(id)
		fmt.Fprintf(&b, " %d@%d=%s", id, tick, canonOf(t, s, e))
		madeUpLeft += b2i(id >= madeUp)
	}
	cs.Want = b.String()
	*cases = append(*cases, cs)
	return stats, madeUpLeft
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// snapForgery appends the cases of one snapshot stream of cfPlayer states,
// one packet a tick from tick 5000 on, in integrity mode mode.
func snapForgery(t *testing.T, st, mode, ticks int, stall [2]int, r *rand.Rand, cases *[]cfCase) forgeStats {
	c := bitwire.MustFor[cfPlayer]()
	s := c.Schema()
	var opts []snapshot.Option
	key := ""
	switch mode {
	case 1:
		opts = append(opts, snapshot.WithChecksum())
	case 2:
		k := make([]byte, 16+st)
		r.Read(k)
		key = hex.EncodeToString(k)
		opts = append(opts, snapshot.WithMAC(k))
	}
	snd, err := snapshot.NewSender(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := snapshot.NewReceiver(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// the forger's sender: the same format; with a MAC, another key
	fopts := opts
	if mode == 2 {
		fopts = []snapshot.Option{snapshot.WithMAC(make([]byte, 16))}
	}
	var stats forgeStats
	deliver := func(p []byte, forged bool) error {
		var out cfPlayer
		tick, err := rcv.Decode(p, &out)
		cs := cfCase{Kind: "snap", Msg: "Player", Stream: st, Mode: mode, Key: key, Packet: hex.EncodeToString(p)}
		if err != nil {
			cs.Err, cs.ErrMsg = sentinel(err), err.Error()
		} else {
			cs.Tick, cs.Want = tick, canonOf(t, s, &out)
		}
		if a, ok := rcv.Ack(); ok {
			b, _ := a.MarshalBinary()
			cs.Ack = hex.EncodeToString(b)
			if !forged {
				snd.HandleAck(a)
			}
		}
		*cases = append(*cases, cs)
		if forged {
			stats.forged++
			stats.accepted += b2i(err == nil)
		} else {
			h, _ := snapshot.ParseHeader(p)
			stats.count(h.Tick, err)
		}
		return err
	}
	burst := func(from uint32) {
		fs, err := snapshot.NewSender(c, fopts...)
		if err != nil {
			t.Fatal(err)
		}
		for k := range uint32(snapshot.DefaultRecoverAfter) {
			v := forgePlayer(r)
			p, err := fs.Encode(nil, from+k, &v)
			if err != nil {
				t.Fatal(err)
			}
			deliver(p, true)
		}
	}
	type held struct {
		at int
		p  []byte
	}
	var late []held
	in := func(span [2]int, i int) bool { return i >= span[0] && i < span[1] }
	state := forgePlayer(r)
	for i := 0; i < ticks; i++ {
		tick := uint32(5000 + i)
		state.Pos.X = max(-512, min(512, state.Pos.X+float32(r.Float64()*4-2)))
		state.Health = r.Intn(201)
		p, err := snd.Encode(nil, tick, &state)
		if err != nil {
			t.Fatal(err)
		}
		switch x := r.Intn(40); {
		case in(stall, i):
			if i < stall[0]+2 {
				late = append(late, held{stall[1] + 20, p}) // a straggler
			}
		case x < 2: // lost
		case x < 8: // held back, within ReorderTicks
			late = append(late, held{i + 1 + r.Intn(20), p})
		case x < 10:
			deliver(p, false)
			deliver(p, false)
		default:
			deliver(p, false)
		}
		var keep []held
		for _, l := range late {
			if l.at <= i && !in(stall, i) {
				deliver(l.p, false)
			} else {
				keep = append(keep, l)
			}
		}
		late = keep
		switch {
		case in(stall, i):
		case i < 20: // the receiver holds an honest tick first
		case i%8 == 0 && i < ticks/2: // far-away ticks
			burst(tick + 1_000_000 + uint32(r.Intn(1<<30)))
		case i%16 == 4 && i >= ticks/2: // old ticks
			burst(1 + uint32(r.Intn(4000)))
		}
	}
	return stats
}

// forgeryCases is the forgery corpus, and what Go's receivers made of it.
func forgeryCases(t *testing.T) []cfCase {
	r := rand.New(rand.NewSource(21))
	var cases []cfCase
	// the stall is longer than MaxAhead (1,024) packets
	stall := [2]int{300, 1400}
	for i, f := range []forgeRepl{
		// the default expiry, from the Peer's Refresh (20 ticks: 60)
		{cfg: replStream{refresh: 20}, ticks: 1700, stall: stall, far: [2]int{20, 300}, old: [2]int{1400, 1700}, ids: [2]int{150, 200}, idsPer: 5, idleFrom: 200},
		// with a CRC, which the forger computes; a client that holds at
		// most 60 entities, which made-up ids fill; the default expiry
		// from the tick rate (10 Hz: three default Refreshes, 300 ticks)
		{cfg: replStream{mode: 1, maxEnts: 60, tickRate: 10}, ticks: 1900, stall: stall, far: [2]int{1400, 1900}, old: [2]int{20, 300}, ids: [2]int{100, 140}, idsPer: 4},
		// an expiry in ticks, which the stall ages
		{cfg: replStream{expiry: intp(90)}, ticks: 1600, stall: stall, far: [2]int{20, 300}, ids: [2]int{100, 130}, idsPer: 3, idleFrom: 200},
		// no expiry
		{cfg: replStream{expiry: intp(0)}, ticks: 400, far: [2]int{20, 300}, old: [2]int{100, 400}, ids: [2]int{50, 60}, idsPer: 3},
		{cfg: replStream{refresh: -1}, ticks: 300, ids: [2]int{50, 60}, idsPer: 3},
		// a MAC: nothing forged gets through, the default expiry is off
		{cfg: replStream{mode: 2}, ticks: 1600, stall: stall, far: [2]int{20, 300}, old: [2]int{1400, 1600}, ids: [2]int{100, 130}, idsPer: 3},
	} {
		stats, left := replForgery(t, 200+i, f, r, &cases)
		t.Logf("replication stream %d (mode %d): %v; %d made-up entities held at the end", 200+i, f.cfg.mode, stats, left)
		expiring := f.cfg.mode != 2 && (f.cfg.expiry == nil || *f.cfg.expiry > 0) && f.cfg.refresh >= 0
		switch {
		case f.cfg.mode == 2 && stats.accepted != 0:
			t.Errorf("stream %d: %d forged packets accepted with a MAC", 200+i, stats.accepted)
		case f.cfg.mode != 2 && (stats.accepted == 0 || stats.madeUpMost == 0):
			t.Errorf("stream %d: no forged packet accepted: the stream lost its point", 200+i)
		case expiring && left != 0:
			t.Errorf("stream %d: %d made-up entities outlived the expiry", 200+i, left)
		case !expiring && f.cfg.mode != 2 && left == 0:
			t.Errorf("stream %d: without an expiry, the made-up entities went", 200+i)
		case f.stall[1] > 0 && stats.reanc == 0:
			t.Errorf("stream %d: no genuine packet accepted after the stall", 200+i)
		}
	}
	for mode := range 3 {
		stats := snapForgery(t, 300+mode, mode, 1200, [2]int{400, 800}, r, &cases)
		t.Logf("snapshot stream %d (mode %d): %v", 300+mode, mode, stats)
		if (mode == 2) != (stats.accepted == 0) {
			t.Errorf("snapshot stream %d: %d forged packets accepted", 300+mode, stats.accepted)
		}
	}
	kinds := map[string]int{}
	for _, c := range cases {
		k := c.Kind + " accepted"
		if c.Err != "" {
			k = c.Kind + " " + c.Err
		}
		kinds[k]++
	}
	t.Logf("forgery corpus: %d packets: %v", len(cases), kinds)
	return cases
}

// TestTypeScriptForgery feeds the forgery corpus to the TypeScript
// runtime's ReplicaClient and SnapshotReceiver.
func TestTypeScriptForgery(t *testing.T) {
	node, tsc := clientTools(t)
	cases := forgeryCases(t)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", corpusMessages(t)...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

// TestCSharpForgery feeds the forgery corpus to the C# runtime's
// ReplicaClient and SnapshotReceiver.
func TestCSharpForgery(t *testing.T) {
	mcs, mono := csTools(t)
	cases := forgeryCases(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", corpusMessages(t)...); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)
}
