package gen_test

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/snapshot"
)

// The C# fragment reassembly (clients/cs/Bitwire/Fragments.cs) against
// Go's Receiver: the golden fragments of snapshot/testdata/golden/
// fragments.txt, and sessions of a Go Sender's blocks and packets over a
// channel that loses, duplicates and reorders them, with bad fragments of
// every kind mixed in, through a Go Receiver and a C# Reassembler feeding
// a SnapshotReceiver. For every datagram both must give the same verdict,
// the same tick and state, and the same ack; at the end of a session the
// same ReassemblyStats.

// csfGolden is snapshot's goldenFrag (the same layout, so the same
// fingerprint as the golden vectors').
type csfGolden struct {
	A [12]uint32
}

// csfState is over the budget in full and in a large delta, within it in
// a small delta.
type csfState struct {
	Words []uint32 `net:",maxlen=4096"`
	Small uint8
}

var csfKey = []byte("bitwire golden session key, 32B")

// csfVerdict names a Go Receiver's error as the C# runtime names it.
func csfVerdict(err error) string {
	if errors.Is(err, snapshot.ErrIncomplete) {
		return "ErrIncomplete"
	}
	return sentinel(err)
}

// csfHeader is a fragment header (docs/wire-format.md, "Fragments"),
// written out byte by byte.
func csfHeader(fp, tick uint32, mode, index, count, length int) []byte {
	b := binary.LittleEndian.AppendUint16(nil, snapshot.FragmentMagic)
	b = binary.LittleEndian.AppendUint32(b, fp)
	b = binary.LittleEndian.AppendUint32(b, tick)
	return append(b, byte(mode), byte(index), byte(count-1), byte(length), byte(length>>8), byte(length>>16))
}

// csfCut cuts block into count fragments of tick, sealed by g.
func csfCut(g *snapshot.Integrity, fp, tick uint32, block []byte, count int) [][]byte {
	size := (len(block) + count - 1) / count
	var out [][]byte
	for k := range count {
		b := append(csfHeader(fp, tick, int(g.Mode()), k, count, len(block)), block[k*size:min(len(block), (k+1)*size)]...)
		b, _ = g.Seal(b, 0)
		out = append(out, b)
	}
	return out
}

// csfDamage returns a bad copy of the fragment f, of one of the kinds the
// receiver checks; most are resealed, so that the check they are made for
// decides, not the trailer. tick is the newest tick the sender encoded.
func csfDamage(rng *rand.Rand, g *snapshot.Integrity, f []byte, tick uint32) []byte {
	over := g.Overhead()
	reseal := func(edit func(b []byte) []byte) []byte {
		b := edit(append([]byte(nil), f[:len(f)-over]...))
		b, _ = g.Seal(b, 0)
		return b
	}
	switch rng.Intn(14) {
	case 0:
		return append([]byte(nil), f[:rng.Intn(16)]...) // short (or other magic when 2+ bytes of another)
	case 1:
		return append([]byte{0x7e, 0xb5}, f[2:10]...) // short, another magic
	case 2:
		q := append([]byte(nil), f...)
		q[1] = 0xb5 // another magic: not a fragment, nor a snapshot packet
		return q
	case 3:
		return reseal(func(b []byte) []byte { b[3] ^= 1; return b }) // fingerprint
	case 4:
		return reseal(func(b []byte) []byte { b[10] = b[10]&^3 | (b[10]+1)%3; return b }) // another mode
	case 5:
		return reseal(func(b []byte) []byte { b[10] |= 3; return b }) // mode 3
	case 6:
		return reseal(func(b []byte) []byte { b[10] |= 4 << rng.Intn(6); return b }) // reserved
	case 7:
		return reseal(func(b []byte) []byte { b[11] = b[12] + 1; return b }) // index past count
	case 8:
		return reseal(func(b []byte) []byte { b[13], b[14], b[15] = b[12], 0, 0; return b }) // length short of the count
	case 9:
		q := append([]byte(nil), f...)
		q[len(q)-1] ^= 1 // the trailer (in mode none, the payload)
		return q
	case 10:
		return reseal(func(b []byte) []byte { b[15] = 0x7f; return b }) // a block over any bound
	case 11:
		return reseal(func(b []byte) []byte { return b[:len(b)-1] }) // a payload a byte short
	case 12:
		return reseal(func(b []byte) []byte { // an older tick
			binary.LittleEndian.PutUint32(b[6:], tick-min(tick, 1+uint32(rng.Intn(3))))
			return b
		})
	default:
		return reseal(func(b []byte) []byte { b[13]++; return b }) // the same tick, another length
	}
}

// csfLines is the runner's input, a line each: S starts a session (the
// codec, mode, key, bound, whether to print blocks, history size), P is a datagram and
// what Go made of it, X resets the receiver (and the reassembler), R is
// the session's ReassemblyStats.
type csfLines struct {
	b strings.Builder
	n int // checks
}

func (l *csfLines) session(msg string, mode snapshot.Mode, history, maxBlock int, blocks bool) {
	key := ""
	if mode == snapshot.ModeMAC {
		key = hex.EncodeToString(csfKey)
	}
	fmt.Fprintf(&l.b, "S\t%s\t%d\t%s\t%d\t%t\t%d\n", msg, mode, key, maxBlock, blocks, history)
}

func (l *csfLines) packet(p []byte, want string) {
	fmt.Fprintf(&l.b, "P\t%s\t%s\n", hex.EncodeToString(p), want)
	l.n++
}

func (l *csfLines) reset() { l.b.WriteString("X\n") }

func (l *csfLines) stats(s snapshot.ReassemblyStats) {
	fmt.Fprintf(&l.b, "R\t%d %d %d %d\n", s.Fragments, s.Duplicates, s.Blocks, s.Superseded)
	l.n++
}

// csfOutcome is what a Go Receiver made of a packet, as the runner
// prints it: the verdict or the tick and the state (in full, in hex),
// then the ack asked for.
func csfOutcome[T any](c *bitwire.Codec[T], rc *snapshot.Receiver[T], tick uint32, err error, out *T) string {
	s := ""
	if err != nil {
		s = csfVerdict(err)
	} else {
		b, merr := c.Marshal(out)
		if merr != nil {
			panic(merr)
		}
		s = fmt.Sprintf("tick %d %s", tick, hex.EncodeToString(b))
	}
	s += " ack "
	if a, ok := rc.Ack(); ok {
		b, _ := a.MarshalBinary()
		s += hex.EncodeToString(b)
	}
	return s
}

func csfGoldenCorpus(t *testing.T, l *csfLines) {
	c := bitwire.MustFor[csfGolden]()
	f, err := os.Open(filepath.Join("..", "snapshot", "testdata", "golden", "fragments.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type mode struct {
		block string
		frags [][]byte
	}
	var modes []mode
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## mode "):
			modes = append(modes, mode{})
		case strings.HasPrefix(line, "block = "):
			modes[len(modes)-1].block = line[8:]
		case strings.HasPrefix(line, "fragment "):
			b, err := hex.DecodeString(line[strings.Index(line, "= ")+2:])
			if err != nil {
				t.Fatal(err)
			}
			modes[len(modes)-1].frags = append(modes[len(modes)-1].frags, b)
		}
	}
	if len(modes) != 3 {
		t.Fatalf("%d modes in fragments.txt", len(modes))
	}
	var want csfGolden
	for i := range want.A {
		want.A[i] = 0x01010101 * uint32(i+1)
	}
	for m, md := range modes {
		opts := []snapshot.Option{nil, snapshot.WithChecksum(), snapshot.WithMAC(csfKey)}[m : m+1]
		rc, err := snapshot.NewReceiver(c, opts...)
		if err != nil {
			t.Fatal(err)
		}
		// Last first, then again in order: the second time every
		// fragment's tick is stale, refused before it is collected.
		order := append(slices.Clone(md.frags), md.frags...)
		slices.Reverse(order[:len(md.frags)])
		l.session("Golden", snapshot.Mode(m), snapshot.DefaultHistorySize, 0, true)
		for i, p := range order {
			var out csfGolden
			tick, err := rc.Decode(p, &out)
			got := csfOutcome(c, rc, tick, err, &out)
			if i == len(md.frags)-1 {
				if err != nil || tick != 7 || out != want {
					t.Fatalf("golden mode %d: Go decodes tick %d %+v, %v", m, tick, out, err)
				}
				got = "block " + md.block + " " + got
			}
			l.packet(p, got)
		}
		l.stats(rc.ReassemblyStats())
	}
}

// csfSession runs a Go Sender's session in mode m through a Go Receiver
// and writes every datagram delivered with Go's outcome, counting the
// verdicts in seen.
func csfSession(t *testing.T, l *csfLines, m snapshot.Mode, maxBlock int, seed int64, seen map[string]int) {
	c := bitwire.MustFor[csfState]()
	var opt snapshot.Option
	switch m {
	case snapshot.ModeChecksum:
		opt = snapshot.WithChecksum()
	case snapshot.ModeMAC:
		opt = snapshot.WithMAC(csfKey)
	}
	newSender := func() *snapshot.Sender[csfState] {
		s, err := snapshot.NewSender(c, opt, snapshot.WithBudget(300), snapshot.WithStateHash(5))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := newSender()
	// A short history: a delta's baseline is at times gone.
	rc, err := snapshot.NewReceiver(c, opt, snapshot.WithHistorySize(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.SetMaxBlock(maxBlock); err != nil {
		t.Fatal(err)
	}
	g, err := snapshot.NewIntegrity(m, map[bool][]byte{true: csfKey}[m == snapshot.ModeMAC])
	if err != nil {
		t.Fatal(err)
	}
	fp := snapshot.Fingerprint32(c.Fingerprint())
	l.session("State", m, 3, maxBlock, false)
	rng := rand.New(rand.NewSource(seed))
	deliver := func(p []byte) {
		var out csfState
		tick, err := rc.Decode(p, &out)
		got := csfOutcome(c, rc, tick, err, &out)
		seen[strings.Fields(got)[0]]++
		if a, ok := rc.Ack(); ok && rng.Float64() < 0.8 {
			// In mode none a fragment damaged in its payload is taken:
			// the block decodes to something else, whose ack's token the
			// sender refuses.
			if err := s.HandleAck(a); err != nil && !(m == snapshot.ModeNone && errors.Is(err, snapshot.ErrBadAck)) {
				t.Fatalf("HandleAck: %v", err)
			}
		}
		l.packet(p, got)
	}
	st := csfState{Words: make([]uint32, 600)}
	for i := range st.Words {
		st.Words[i] = rng.Uint32()
	}
	held := map[uint32][][]byte{} // delivered at a later tick
	const ticks = 150
	for tick := uint32(1); tick <= ticks+3; tick++ {
		var frags [][]byte
		if tick <= ticks {
			n := []int{1, 2, 3, 1, 2, 120, 120, 600}[rng.Intn(8)] // small deltas fit, the rest are blocks
			for range n {
				st.Words[rng.Intn(len(st.Words))] = rng.Uint32()
			}
			st.Small = uint8(rng.Intn(256))
			fs, err := s.EncodeFragments(tick, &st)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				frags = append(frags, slices.Clone(f))
			}
		}
		var now [][]byte
		for k, f := range frags {
			if (tick%13 == 5 && k == 0 && len(frags) > 1) || rng.Float64() < 0.08 {
				continue // lost (every 13th tick's first fragment: a block superseded)
			}
			for range 1 + bool2int(rng.Float64() < 0.06) {
				if rng.Float64() < 0.12 {
					later := tick + 1 + uint32(rng.Intn(3))
					held[later] = append(held[later], f)
				} else {
					now = append(now, f)
				}
			}
		}
		if len(frags) > 1 && rng.Float64() < 0.3 {
			now = append(now, csfDamage(rng, g, frags[rng.Intn(len(frags))], tick))
		}
		now = append(now, held[tick]...)
		delete(held, tick)
		rng.Shuffle(len(now), func(i, j int) { now[i], now[j] = now[j], now[i] })
		for _, p := range now {
			deliver(p)
		}
	}

	// Blocks whose fragments all check but whose whole is not a snapshot
	// packet of their tick: random bytes, and a header cut short (10
	// bytes: magic, fingerprint, tick).
	junk := make([]byte, 700)
	rng.Read(junk)
	for _, p := range csfCut(g, fp, ticks+10, junk, 3) {
		deliver(p)
	}
	cut := binary.LittleEndian.AppendUint16(nil, snapshot.Magic)
	cut = binary.LittleEndian.AppendUint32(cut, fp)
	cut = binary.LittleEndian.AppendUint32(cut, ticks+11)
	for _, p := range csfCut(g, fp, ticks+11, cut, 1) {
		deliver(p)
	}
	// Blocks of the bound's size, taken, and a byte over it, refused (the
	// bound 0 is DefaultMaxBlock).
	bound := cmp.Or(maxBlock, snapshot.DefaultMaxBlock)
	for k, size := range []int{bound, bound + 1} {
		for _, p := range csfCut(g, fp, ticks+7+uint32(k), make([]byte, size), 4) {
			deliver(p)
		}
	}
	// Then the sender's next state, whole: it is decoded.
	fs, err := s.EncodeFragments(ticks+12, &st)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		deliver(slices.Clone(f))
	}
	sent := s.FragmentStats().Blocks
	// A block left incomplete, then a new connection (Reset on both
	// ends) whose ticks start below it: its blocks are taken.
	fs, err = newSender().EncodeFragments(ticks+20, &st)
	if err != nil {
		t.Fatal(err)
	}
	deliver(slices.Clone(fs[0]))
	rc.Reset()
	l.reset()
	s = newSender()
	fs, err = s.EncodeFragments(1, &st)
	if err != nil {
		t.Fatal(err)
	}
	for k := range fs {
		deliver(slices.Clone(fs[len(fs)-1-k])) // last first
	}
	l.stats(rc.ReassemblyStats())
	rs := rc.ReassemblyStats()
	if rs.Superseded == 0 || rs.Duplicates == 0 || rs.Blocks < 20 {
		t.Fatalf("mode %v: %+v: the session does not cover enough", m, rs)
	}
	t.Logf("mode %v: %d blocks sent, %+v", m, sent, rs)
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestFragmentsCSharp(t *testing.T) {
	mcs, mono := csTools(t)
	var l csfLines
	csfGoldenCorpus(t, &l)
	seen := map[string]int{}
	for i, m := range []snapshot.Mode{snapshot.ModeNone, snapshot.ModeChecksum, snapshot.ModeMAC} {
		csfSession(t, &l, m, []int{0, 8000, 6000}[i], int64(61+i), seen)
	}
	// Every verdict the reassembly gives, and decoded states, are among
	// the outcomes compared.
	for _, v := range []string{"tick", "ErrIncomplete", "ErrBadMagic", "ErrUnexpectedEnd", "ErrProtocolMismatch", "ErrMalformed",
		"ErrIntegrity", "ErrTooLong", "ErrStaleTick", "ErrNoBaseline"} {
		if seen[v] == 0 {
			t.Errorf("no %s among the sessions' outcomes: %v", v, seen)
		}
	}
	t.Logf("outcomes: %v", seen)

	var src strings.Builder
	if err := gen.CSharp(&src, "FR", gen.Named("Golden", bitwire.MustFor[csfGolden]().Schema()), gen.Named("State", bitwire.MustFor[csfState]().Schema())); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/FragmentRunner.cs")
	path := filepath.Join(filepath.Dir(exe), "fragments.tsv")
	if err := os.WriteFile(path, []byte(l.b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mono, exe, path).CombinedOutput()
	expectAll(t, "C#", l.n, out, err)
}
