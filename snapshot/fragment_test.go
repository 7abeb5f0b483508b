package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/internal/golden"
)

// bigState is a state far over a packet: its words are random, so they
// take their 32 bits each in a full snapshot.
type bigState struct {
	Words []uint32 `net:",maxlen=20000"`
	Small uint8
}

func copyAll(pkts [][]byte) [][]byte {
	out := make([][]byte, len(pkts))
	for k, p := range pkts {
		out[k] = append([]byte(nil), p...)
	}
	return out
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newBig(rng *rand.Rand, n int) *bigState {
	s := &bigState{Words: make([]uint32, n), Small: uint8(rng.Intn(256))}
	for i := range s.Words {
		s.Words[i] = rng.Uint32()
	}
	return s
}

var fragModes = []struct {
	name string
	opt  Option
}{{"none", nil}, {"crc", WithChecksum()}, {"mac", WithMAC(goldenKey)}}

// A state of 4,000 random words (16,000 bytes and more) at a budget of
// 1,200 bytes: EncodeFragments cuts the block into fragments of at most
// 1,200 bytes, every one but the last the same size; the Receiver decodes
// nothing until the last fragment, in any order and with duplicates, and
// then the state itself. Its ack makes the block a baseline: the next,
// small, change goes as one delta packet.
func TestFragmentsRoundTrip(t *testing.T) {
	c := bitwire.MustFor[bigState]()
	for _, m := range fragModes {
		t.Run(m.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(1))
			s, err := NewSender(c, m.opt)
			require.NoError(t, err)
			rc, err := NewReceiver(c, m.opt)
			require.NoError(t, err)
			st := newBig(rng, 4000)
			frags, err := s.EncodeFragments(10, st)
			require.NoError(t, err)
			// The block is the packet Encode writes with no budget.
			ref, err := NewSender(c, m.opt, WithBudget(1<<20))
			require.NoError(t, err)
			pkt, err := ref.Encode(nil, 10, st)
			require.NoError(t, err)
			require.Equal(t, pkt, s.frag.block)
			block := len(pkt)
			require.Greater(t, block, 16000)
			payload := 1200 - fragmentHeaderSize - s.guard.Overhead()
			count := (block + payload - 1) / payload
			require.Len(t, frags, count)
			size := (block + count - 1) / count
			total := 0
			for k, f := range frags {
				require.LessOrEqual(t, len(f), 1200)
				want := size
				if k == count-1 {
					want = block - (count-1)*size
				}
				require.Equal(t, fragmentHeaderSize+want+s.guard.Overhead(), len(f), "fragment %d", k)
				h, err := ParseFragmentHeader(f)
				require.NoError(t, err)
				require.Equal(t, FragmentHeader{Fingerprint: s.fp, Tick: 10, Integrity: s.Mode(), Index: k, Count: count, Length: block}, h)
				total += len(f)
			}
			require.Equal(t, FragmentStats{Blocks: 1, Fragments: count, Bytes: total}, s.FragmentStats())
			require.Zero(t, s.OverBudget())

			order := rng.Perm(count)
			order = append(order[:count/2], append([]int{order[0], order[1]}, order[count/2:]...)...) // two duplicates
			var out bigState
			for i, k := range order {
				tick, err := rc.Decode(frags[k], &out)
				if i < len(order)-1 {
					require.ErrorIs(t, err, ErrIncomplete, "fragment %d (%d of %d)", k, i, len(order))
					require.Zero(t, tick)
					_, ok := rc.Ack()
					require.False(t, ok, "nothing to acknowledge before the block is whole")
					continue
				}
				require.NoError(t, err)
				require.Equal(t, uint32(10), tick)
			}
			require.Equal(t, *st, out)
			require.Equal(t, ReassemblyStats{Fragments: count, Duplicates: 2, Blocks: 1}, rc.ReassemblyStats())

			ack, ok := rc.Ack()
			require.True(t, ok)
			require.NoError(t, s.HandleAck(ack))
			st.Words[7]++
			frags, err = s.EncodeFragments(11, st)
			require.NoError(t, err)
			require.Len(t, frags, 1, "a small change against the block: one packet")
			h, err := ParseHeader(frags[0])
			require.NoError(t, err)
			require.True(t, h.Delta)
			require.Equal(t, uint32(10), h.Baseline)
			tick, err := rc.Decode(frags[0], &out)
			require.NoError(t, err)
			require.Equal(t, uint32(11), tick)
			require.Equal(t, *st, out)
			require.Equal(t, 1, s.FragmentStats().Blocks)
		})
	}
}

// A state that fits: EncodeFragments returns Encode's very packet.
func TestFragmentsFitting(t *testing.T) {
	c := bitwire.MustFor[bigState]()
	a, _ := NewSender(c)
	b, _ := NewSender(c)
	st := newBig(rand.New(rand.NewSource(2)), 100)
	want, err := a.Encode(nil, 5, st)
	require.NoError(t, err)
	got, err := b.EncodeFragments(5, st)
	require.NoError(t, err)
	require.Equal(t, [][]byte{want}, got)
	require.Equal(t, FragmentStats{}, b.FragmentStats())
}

// More than MaxFragments fragments: refused with ErrOverBudget, counted,
// the Sender unchanged (the next tick is still a full snapshot).
func TestFragmentsTooMany(t *testing.T) {
	c := bitwire.MustFor[bigState]()
	s, err := NewSender(c, WithBudget(128))
	require.NoError(t, err)
	st := newBig(rand.New(rand.NewSource(3)), 20000)
	_, err = s.EncodeFragments(1, st)
	require.ErrorIs(t, err, ErrOverBudget)
	require.Equal(t, 1, s.OverBudget())
	require.Equal(t, FragmentStats{}, s.FragmentStats())
	_, ok := s.Last()
	require.False(t, ok)
	st.Words = st.Words[:100]
	frags, err := s.EncodeFragments(1, st)
	require.NoError(t, err)
	require.Greater(t, len(frags), 1)
	require.Equal(t, 1, s.OverBudget())
}

// A session of 300 ticks whose state, and even its delta, is over the
// budget every tick, each datagram lost at 10%, duplicated at 5%, and
// delivered out of order across ticks: every state the Receiver decodes
// is the sender's of that tick, none twice; blocks lost in part are
// superseded and counted; the Receiver never holds more than its bound.
func TestFragmentsUnderLoss(t *testing.T) {
	c := bitwire.MustFor[bigState]()
	for _, m := range fragModes {
		t.Run(m.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(4))
			s, err := NewSender(c, m.opt)
			require.NoError(t, err)
			rc, err := NewReceiver(c, m.opt)
			require.NoError(t, err)
			require.NoError(t, rc.SetMaxBlock(64<<10))
			st := newBig(rng, 3000)
			sent := map[uint32]bigState{}
			var flight [][]byte // datagrams in flight, delivered in random order
			var decoded, incomplete, stale int
			last := uint32(0)
			for tick := uint32(1); tick <= 300; tick++ {
				// Enough changes that a delta takes two fragments too.
				for range 400 {
					st.Words[rng.Intn(len(st.Words))] = rng.Uint32()
				}
				frags, err := s.EncodeFragments(tick, st)
				require.NoError(t, err)
				sent[tick] = bigState{Words: append([]uint32(nil), st.Words...), Small: st.Small}
				var now [][]byte // delivered this tick, in random order
				for _, f := range frags {
					if rng.Float64() < 0.1 {
						continue
					}
					f = append([]byte(nil), f...)
					for range 1 + bool2int(rng.Float64() < 0.05) {
						if rng.Float64() < 0.05 {
							flight = append(flight, f) // held back a tick
						} else {
							now = append(now, f)
						}
					}
				}
				now = append(now, flight...)
				flight = flight[:0]
				rng.Shuffle(len(now), func(i, j int) { now[i], now[j] = now[j], now[i] })
				for _, d := range now {
					var out bigState
					got, err := rc.Decode(d, &out)
					switch {
					case err == nil:
						require.Greater(t, got, last, "a tick decoded once, in order")
						last = got
						require.Equal(t, sent[got], out, "tick %d", got)
						decoded++
						if ack, ok := rc.Ack(); ok && rng.Float64() >= 0.1 {
							require.NoError(t, s.HandleAck(ack))
						}
					case errors.Is(err, ErrIncomplete):
						incomplete++
					case errors.Is(err, ErrStaleTick), errors.Is(err, ErrNoBaseline):
						stale++
						if ack, ok := rc.Ack(); ok {
							require.NoError(t, s.HandleAck(ack))
						}
					default:
						t.Fatalf("tick %d: %v", tick, err)
					}
					require.LessOrEqual(t, cap(rc.frag.block), 64<<10, "the reassembly memory is bounded")
				}
			}
			fs, rs := s.FragmentStats(), rc.ReassemblyStats()
			t.Logf("%s: %d ticks decoded; %d blocks sent in %d fragments, %d reassembled, %d superseded, %d duplicates; %d incomplete, %d stale",
				m.name, decoded, fs.Blocks, fs.Fragments, rs.Blocks, rs.Superseded, rs.Duplicates, incomplete, stale)
			require.Greater(t, decoded, 200, "most ticks arrive: a block and then small deltas")
			require.Greater(t, fs.Blocks, 0)
			require.Greater(t, rs.Blocks, 0)
			require.Greater(t, rs.Duplicates, 0)
			require.Zero(t, s.OverBudget())
		})
	}
}

// Every kind of bad fragment is refused with its own error, the block
// being collected kept.
func TestFragmentErrors(t *testing.T) {
	c := bitwire.MustFor[bigState]()
	s, err := NewSender(c, WithChecksum())
	require.NoError(t, err)
	st := newBig(rand.New(rand.NewSource(5)), 1000)
	frags, err := s.EncodeFragments(20, st)
	require.NoError(t, err)
	require.Greater(t, len(frags), 2)
	frags = copyAll(frags) // the Sender's until its next call
	newRC := func() *Receiver[bigState] {
		rc, err := NewReceiver(c, WithChecksum())
		require.NoError(t, err)
		return rc
	}
	// reseal rewrites a fragment's header bytes and its CRC32C trailer.
	reseal := func(f []byte, edit func(b []byte)) []byte {
		b := append([]byte(nil), f[:len(f)-4]...)
		edit(b)
		out, _ := s.guard.Seal(b, 0)
		return out
	}
	var out bigState
	cases := []struct {
		name string
		pkt  []byte
		want error
	}{
		{"short", frags[0][:10], bitwire.ErrUnexpectedEnd},
		{"magic", append([]byte{0x7e, 0xb5}, frags[0][2:]...), ErrBadMagic},
		{"fingerprint", reseal(frags[0], func(b []byte) { b[2] ^= 1 }), ErrProtocolMismatch},
		{"mode", reseal(frags[0], func(b []byte) { b[10] = b[10]&^3 | 2 }), ErrProtocolMismatch},
		{"mode 3", reseal(frags[0], func(b []byte) { b[10] |= 3 }), bitwire.ErrMalformed},
		{"reserved", reseal(frags[0], func(b []byte) { b[10] |= 4 }), bitwire.ErrMalformed},
		{"index past count", reseal(frags[0], func(b []byte) { b[11] = byte(len(frags)) }), bitwire.ErrMalformed},
		{"length short of the count", reseal(frags[0], func(b []byte) { b[13], b[14], b[15] = byte(len(frags)-1), 0, 0 }), bitwire.ErrMalformed},
		{"trailer", append(append([]byte(nil), frags[0][:len(frags[0])-1]...), frags[0][len(frags[0])-1]^1), ErrIntegrity},
		// one byte short of its piece, resealed
		{"payload", reseal(frags[0][:len(frags[0])-1], func([]byte) {}), bitwire.ErrMalformed},
	}
	for _, tc := range cases {
		rc := newRC()
		_, err := rc.Decode(frags[1], &out)
		require.ErrorIs(t, err, ErrIncomplete)
		_, err = rc.Decode(tc.pkt, &out)
		require.ErrorIs(t, err, tc.want, tc.name)
		require.NotErrorIs(t, err, ErrIncomplete, tc.name)
		require.Equal(t, 1, rc.ReassemblyStats().Fragments, "%s: the block being collected is kept", tc.name)
	}

	// Over the receiver's bound: ErrTooLong, before any memory is taken.
	rc := newRC()
	require.NoError(t, rc.SetMaxBlock(1000))
	_, err = rc.Decode(frags[0], &out)
	require.ErrorIs(t, err, bitwire.ErrTooLong)
	require.Zero(t, cap(rc.frag.block))
	require.Error(t, rc.SetMaxBlock(-1))

	// Older than the block being collected: stale; the same tick with
	// another cut: malformed.
	later, err := s.EncodeFragments(21, st)
	require.NoError(t, err)
	rc = newRC()
	_, err = rc.Decode(later[0], &out)
	require.ErrorIs(t, err, ErrIncomplete)
	_, err = rc.Decode(frags[0], &out)
	require.ErrorIs(t, err, ErrStaleTick)
	recut := reseal(later[1], func(b []byte) { binary.LittleEndian.PutUint16(b[13:], binary.LittleEndian.Uint16(b[13:])+1) })
	_, err = rc.Decode(recut, &out)
	require.ErrorIs(t, err, bitwire.ErrMalformed)

	// A block whose bytes are not a snapshot packet of its tick: every
	// fragment checks, the whole does not.
	rc = newRC()
	fake := s.frag.block[:0:0]
	fake = append(fake, make([]byte, 2000)...)
	h := FragmentHeader{Fingerprint: s.fp, Tick: 30, Integrity: ModeChecksum, Count: 2, Length: len(fake)}
	for k := range 2 {
		h.Index = k
		var w bits.Writer
		writeFragmentHeader(&w, h)
		b := append(w.Bytes(), fake[k*1000:(k+1)*1000]...)
		b, _ = s.guard.Seal(b, 0)
		_, err = rc.Decode(b, &out)
	}
	require.ErrorIs(t, err, bitwire.ErrMalformed)
	require.Equal(t, 1, rc.ReassemblyStats().Blocks)
}

// A receiver's fragments are the only new packet: a Receiver refuses
// them where it predates them by magic, and the sender's packets that fit
// are the bytes they were (TestGoldenPackets).
func TestFragmentMagicDistinct(t *testing.T) {
	require.NotEqual(t, Magic, FragmentMagic)
	f := binary.LittleEndian.AppendUint16(nil, FragmentMagic)
	require.True(t, IsFragment(f))
	require.False(t, IsFragment(binary.LittleEndian.AppendUint16(nil, Magic)))
	_, err := ParseHeader(append(f, make([]byte, 20)...))
	require.ErrorIs(t, err, ErrBadMagic)
}

// Golden fragment packets: a block of goldenFrag cut at a budget of 40
// bytes, in each integrity mode, frozen under testdata/golden
// (docs/wire-format.md, "Fragments"). `go test ./snapshot -run Golden
// -update` only for an intended change.
func TestGoldenFragments(t *testing.T) {
	type goldenFrag struct {
		A [12]uint32
	}
	c := bitwire.MustFor[goldenFrag]()
	var st goldenFrag
	for i := range st.A {
		st.A[i] = 0x01010101 * uint32(i+1)
	}
	var b strings.Builder
	b.WriteString("# bitwire golden fragment packets (see docs/wire-format.md, \"Fragments\").\n")
	b.WriteString("# goldenFrag{A [12]uint32} with A[i] = 0x01010101*(i+1), tick 7, budget 40 bytes;\n")
	fmt.Fprintf(&b, "# mode mac with the key %q (the %d bytes %s).\n", goldenKey, len(goldenKey), spaced(goldenKey))
	for _, m := range fragModes {
		s, err := NewSender(c, m.opt, WithBudget(40))
		require.NoError(t, err)
		rc, err := NewReceiver(c, m.opt)
		require.NoError(t, err)
		frags, err := s.EncodeFragments(7, &st)
		require.NoError(t, err)
		fmt.Fprintf(&b, "\n## mode %v\nblock = %s\n", s.Mode(), hex.EncodeToString(s.frag.block))
		var out goldenFrag
		for k, f := range frags {
			fmt.Fprintf(&b, "fragment %d = %s\n", k, hex.EncodeToString(f))
			tick, err := rc.Decode(f, &out)
			if k < len(frags)-1 {
				require.ErrorIs(t, err, ErrIncomplete)
			} else {
				require.NoError(t, err)
				require.Equal(t, uint32(7), tick)
			}
		}
		require.Equal(t, st, out)
		var joined []byte
		for _, f := range frags {
			joined = append(joined, f[fragmentHeaderSize:len(f)-s.guard.Overhead()]...)
		}
		require.True(t, bytes.Equal(joined, s.frag.block))
	}
	golden.Check(t, filepath.Join("testdata", "golden", "fragments.txt"), b.String(), *updateGolden, "the fragment packet format", "go test ./snapshot -run Golden -update")
}

// Reset drops the block being collected: a new connection's blocks,
// whose ticks start again below it, are not refused as older than it.
func TestFragmentsAfterReset(t *testing.T) {
	c := bitwire.MustFor[bigState]()
	st := newBig(rand.New(rand.NewSource(6)), 1000)
	old, err := NewSender(c)
	require.NoError(t, err)
	frags, err := old.EncodeFragments(500, st)
	require.NoError(t, err)
	require.Greater(t, len(frags), 1)
	rc, err := NewReceiver(c)
	require.NoError(t, err)
	var out bigState
	_, err = rc.Decode(frags[0], &out)
	require.ErrorIs(t, err, ErrIncomplete)

	rc.Reset()
	s, err := NewSender(c)
	require.NoError(t, err)
	frags, err = s.EncodeFragments(1, st)
	require.NoError(t, err)
	for k, f := range frags {
		tick, err := rc.Decode(f, &out)
		if k < len(frags)-1 {
			require.ErrorIs(t, err, ErrIncomplete, "fragment %d", k)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, uint32(1), tick)
	}
	require.Equal(t, *st, out)
	require.Equal(t, ReassemblyStats{Fragments: 1 + len(frags), Blocks: 1}, rc.ReassemblyStats())
}

// forgeFragment returns a copy of the fragment f with its tick set to
// tick, resealed as an off-path forger can: with a recomputed CRC, or
// with no trailer at all (a MAC it cannot compute).
func forgeFragment(f []byte, tick uint32, m Mode) []byte {
	g := append([]byte(nil), f...)
	binary.LittleEndian.PutUint32(g[6:], tick)
	if m == ModeChecksum {
		n := len(g) - 4
		binary.LittleEndian.PutUint32(g[n:], crc32.Checksum(g[:n], crc32.MakeTable(crc32.Castagnoli)))
	}
	return g
}

// Forged fragments are held to the tick window as packets are: one
// fragment of a tick far ahead of the stream's (forged without a MAC, or
// a tick flipped in mode none) is refused instead of becoming the block
// the receiver collects, which made it refuse every honest fragment as
// older (all 40 honest blocks after it were lost); a run of them that
// re-anchors the window, or one within the window, costs the honest
// stream at most the block it supersedes, since an honest fragment more
// than ReorderTicks older than the block being collected drops that
// block instead of being refused.
func TestFragmentsForgedAhead(t *testing.T) {
	c := bitwire.MustFor[bigState]()
	for _, m := range fragModes[:2] {
		for _, burst := range []struct {
			name  string
			ticks func(newest uint32) []uint32
			lost  int // honest blocks it costs
		}{
			{"one far ahead", func(n uint32) []uint32 { return []uint32{n + 5000} }, 0},
			{"a run far ahead", func(n uint32) []uint32 {
				var ts []uint32
				for k := range uint32(DefaultRecoverAfter) {
					ts = append(ts, n+5000+10*k)
				}
				return ts
			}, 1},
			{"one within the window", func(n uint32) []uint32 { return []uint32{n + 100} }, 1},
		} {
			t.Run(m.name+"/"+burst.name, func(t *testing.T) {
				rng := rand.New(rand.NewSource(7))
				s, err := NewSender(c, m.opt)
				require.NoError(t, err)
				rc, err := NewReceiver(c, m.opt)
				require.NoError(t, err)
				var out bigState
				decoded := 0
				for tick := uint32(1); tick <= 41; tick++ {
					st := newBig(rng, 600)
					frags, err := s.EncodeFragments(tick, st)
					require.NoError(t, err)
					require.Greater(t, len(frags), 2)
					for k, f := range frags {
						if tick == 2 && k == 1 {
							// the forger's burst, in the middle of an honest block
							for _, ft := range burst.ticks(1) {
								rc.Decode(forgeFragment(f, ft, s.Mode()), &out)
							}
						}
						got, err := rc.Decode(f, &out)
						if k == len(frags)-1 && err == nil {
							require.Equal(t, tick, got)
							require.Equal(t, *st, out)
							decoded++
						}
					}
				}
				t.Logf("%d of 41 honest blocks decoded (%+v)", decoded, rc.ReassemblyStats())
				require.Equal(t, 41-burst.lost, decoded, "honest blocks decoded of 41 (%+v)", rc.ReassemblyStats())
			})
		}
	}
}
