package snapshot_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/snapshot"
)

// Break 5: Sender.Ack from another goroutine than Encode was a data race
// that Ack's doc did not warn of. Every exported method of Sender and
// Receiver now states the rule.
func TestConcurrencyRuleDocumented(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if idx, ok := recv.(*ast.IndexExpr); ok {
				recv = idx.X
			}
			id, ok := recv.(*ast.Ident)
			if !ok || (id.Name != "Sender" && id.Name != "Receiver") {
				continue
			}
			checked++
			require.Contains(t, fn.Doc.Text(), "concurrently", "%s.%s does not state its concurrency rule", id.Name, fn.Name.Name)
		}
	}
	require.GreaterOrEqual(t, checked, 14)
}

func TestAckEncoding(t *testing.T) {
	a := snapshot.Ack{Tick: 0x01020304, Token: 0xA1B2C3D4, MissingBaseline: true}
	b, err := a.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, []byte{0x01, 0x04, 0x03, 0x02, 0x01, 0xD4, 0xC3, 0xB2, 0xA1}, b)
	require.Len(t, b, snapshot.AckSize)
	b, err = snapshot.Ack{Tick: 7, StateMismatch: true}.AppendBinary([]byte("x"))
	require.NoError(t, err)
	require.Equal(t, []byte{'x', 0x02, 7, 0, 0, 0, 0, 0, 0, 0}, b)

	rng := rand.New(rand.NewSource(1))
	for range 200 {
		a := snapshot.Ack{Tick: rng.Uint32(), Token: rng.Uint32(), MissingBaseline: rng.Intn(2) == 0, StateMismatch: rng.Intn(2) == 0}
		b, err := a.MarshalBinary()
		require.NoError(t, err)
		var got snapshot.Ack
		require.NoError(t, got.UnmarshalBinary(b))
		require.Equal(t, a, got)
		require.Equal(t, a.MissingBaseline || a.StateMismatch, got.NeedsFull())
		// inside a larger datagram, and in a bit stream at any offset
		got, n, err := snapshot.ParseAck(append(b, 0xEE, 0xFF))
		require.NoError(t, err)
		require.Equal(t, snapshot.AckSize, n)
		require.Equal(t, a, got)
		var w bits.Writer
		w.WriteBits(5, 3)
		a.WriteBits(&w)
		r := bits.NewReader(w.Bytes())
		_, _ = r.ReadBits(3)
		got, err = snapshot.ReadAck(r)
		require.NoError(t, err)
		require.Equal(t, a, got)
	}

	good, _ := a.MarshalBinary()
	for n := range snapshot.AckSize {
		_, _, err := snapshot.ParseAck(good[:n])
		require.ErrorIs(t, err, bitwire.ErrUnexpectedEnd, "%d bytes", n)
	}
	var got snapshot.Ack
	require.ErrorIs(t, got.UnmarshalBinary(append(good, 0)), bitwire.ErrTrailingData)
	for bit := 2; bit < 8; bit++ {
		bad := append([]byte(nil), good...)
		bad[0] |= 1 << bit
		require.ErrorIs(t, got.UnmarshalBinary(bad), bitwire.ErrMalformed)
	}
	require.Equal(t, snapshot.Ack{}, got, "a failed decode leaves the ack alone")
}

func TestIntegrity(t *testing.T) {
	_, err := snapshot.NewIntegrity(snapshot.ModeNone, testKey)
	require.Error(t, err)
	_, err = snapshot.NewIntegrity(snapshot.ModeMAC, testKey[:snapshot.MinKeySize-1])
	require.Error(t, err)
	_, err = snapshot.NewIntegrity(3, nil)
	require.Error(t, err)
	_, err = snapshot.NewSender(worldCodec, snapshot.WithMAC(nil))
	require.Error(t, err)

	msg := []byte("a snapshot packet, more or less")
	for _, mode := range []snapshot.Mode{snapshot.ModeNone, snapshot.ModeChecksum, snapshot.ModeMAC} {
		var key []byte
		if mode == snapshot.ModeMAC {
			key = testKey
		}
		g, err := snapshot.NewIntegrity(mode, key)
		require.NoError(t, err)
		require.Equal(t, mode.Overhead(), g.Overhead())
		sealed, token := g.Seal(append([]byte("prefix"), msg...), 6)
		require.Len(t, sealed, 6+len(msg)+g.Overhead())
		body, token2, err := g.Open(sealed[6:])
		require.NoError(t, err)
		require.Equal(t, msg, body)
		require.Equal(t, token, token2)

		if mode == snapshot.ModeNone {
			continue
		}
		_, _, err = g.Open(sealed[6 : 6+g.Overhead()-1])
		require.ErrorIs(t, err, bitwire.ErrUnexpectedEnd)
		for bit := range (len(sealed) - 6) * 8 {
			bad := append([]byte(nil), sealed[6:]...)
			bad[bit/8] ^= 1 << (bit % 8)
			_, _, err := g.Open(bad)
			require.ErrorIs(t, err, snapshot.ErrIntegrity, "mode %v bit %d", mode, bit)
		}
	}
	// the ack token of a MAC'd packet is not in the packet
	g, _ := snapshot.NewIntegrity(snapshot.ModeMAC, testKey)
	other, _ := snapshot.NewIntegrity(snapshot.ModeMAC, append([]byte("another "), testKey...))
	sealed, token := g.Seal(append([]byte(nil), msg...), 0)
	_, t2 := other.Seal(append([]byte(nil), msg...), 0)
	require.NotEqual(t, token, t2)
	_, _, err = other.Open(sealed)
	require.ErrorIs(t, err, snapshot.ErrIntegrity)
}

// Peers in different modes, or with different keys, refuse each other.
func TestModeMismatch(t *testing.T) {
	opts := []snapshot.Option{nil, snapshot.WithChecksum(), snapshot.WithMAC(testKey)}
	g := newGame(20, 4, 4)
	for i, so := range opts {
		s, err := snapshot.NewSender(worldCodec, so)
		require.NoError(t, err)
		pkt, err := s.Encode(nil, 1, &g.w)
		require.NoError(t, err)
		for j, ro := range opts {
			r, err := snapshot.NewReceiver(worldCodec, ro)
			require.NoError(t, err)
			_, err = r.Decode(pkt, &World{})
			if i == j {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, snapshot.ErrProtocolMismatch, "sender %v, receiver %v", s.Mode(), r.Mode())
			}
		}
	}
	s, _ := snapshot.NewSender(worldCodec, snapshot.WithMAC(testKey))
	r, _ := snapshot.NewReceiver(worldCodec, snapshot.WithMAC([]byte("a different secret, same length!")))
	pkt, err := s.Encode(nil, 1, &g.w)
	require.NoError(t, err)
	_, err = r.Decode(pkt, &World{})
	require.ErrorIs(t, err, snapshot.ErrIntegrity)
	_, ok := r.Ack()
	require.False(t, ok, "nothing to acknowledge")
}

func TestTickWindow(t *testing.T) {
	w := snapshot.NewTickWindow(100, 3, true)
	require.NoError(t, w.Check(5000)) // anything first
	require.False(t, w.Accept(5000))
	require.ErrorIs(t, w.Check(5000), snapshot.ErrStaleTick)
	require.ErrorIs(t, w.Check(4000), snapshot.ErrStaleTick)
	require.NoError(t, w.Check(5100))
	require.ErrorIs(t, w.Check(5101), snapshot.ErrFutureTick)

	// a run forward: three increasing ticks, each within 100 of the last;
	// a duplicate neither counts nor breaks it
	require.ErrorIs(t, w.Check(6000), snapshot.ErrFutureTick)
	require.ErrorIs(t, w.Check(6000), snapshot.ErrFutureTick)
	require.ErrorIs(t, w.Check(6001), snapshot.ErrFutureTick)
	require.NoError(t, w.Check(6003))
	require.NoError(t, w.Check(6004)) // the run goes on until a packet is accepted
	require.False(t, w.Accept(6004))
	newest, ok := w.Newest()
	require.True(t, ok)
	require.Equal(t, uint32(6004), newest)

	// a tick that continues the stream the run left takes the window back
	// to it (a rewind), once: the stream of the run is not remembered
	require.ErrorIs(t, w.Check(5000), snapshot.ErrStaleTick)
	require.NoError(t, w.Check(5001))
	require.True(t, w.Accept(5001))
	require.ErrorIs(t, w.Check(6005), snapshot.ErrFutureTick)
	require.False(t, w.Accept(5090))

	// a run is broken by a tick of the other kind or too far from it
	require.ErrorIs(t, w.Check(5000), snapshot.ErrStaleTick)
	require.ErrorIs(t, w.Check(9000), snapshot.ErrFutureTick)
	require.ErrorIs(t, w.Check(5001), snapshot.ErrStaleTick)
	require.ErrorIs(t, w.Check(5002), snapshot.ErrStaleTick)
	require.NoError(t, w.Check(5003)) // backward: a rewind
	require.True(t, w.Accept(5003))

	// without rewinds, stale stays stale
	w = snapshot.NewTickWindow(100, 3, false)
	w.Accept(50)
	for tick := uint32(10); tick < 40; tick++ {
		require.ErrorIs(t, w.Check(tick), snapshot.ErrStaleTick)
	}
	// with recoverAfter 0, no run ever passes
	w = snapshot.NewTickWindow(100, 0, true)
	w.Accept(50)
	for tick := uint32(1000); tick < 1040; tick++ {
		require.ErrorIs(t, w.Check(tick), snapshot.ErrFutureTick)
	}
	w.Reset()
	require.NoError(t, w.Check(1))
	_, ok = w.Newest()
	require.False(t, ok)
}

// Ordinary reordering (ticks 100–109 arriving after 110–120) never
// rewinds: only packets more than ReorderTicks behind the newest count
// toward a backward run.
func TestTickWindowReorderingDoesNotRewind(t *testing.T) {
	w := snapshot.NewTickWindow(snapshot.DefaultMaxAhead, snapshot.DefaultRecoverAfter, true)
	for tick := uint32(90); tick < 100; tick++ {
		require.NoError(t, w.Check(tick))
		require.False(t, w.Accept(tick))
	}
	for tick := uint32(110); tick <= 120; tick++ {
		require.NoError(t, w.Check(tick))
		require.False(t, w.Accept(tick))
	}
	for tick := uint32(100); tick < 110; tick++ {
		require.ErrorIs(t, w.Check(tick), snapshot.ErrStaleTick, "tick %d", tick)
	}
	newest, _ := w.Newest()
	require.Equal(t, uint32(120), newest)
	// Lagging by exactly ReorderTicks still does not count; one more does.
	for i := range uint32(2 * snapshot.DefaultRecoverAfter) {
		require.ErrorIs(t, w.Check(120-snapshot.ReorderTicks+i%2), snapshot.ErrStaleTick)
	}
	for i := range uint32(snapshot.DefaultRecoverAfter - 1) {
		require.ErrorIs(t, w.Check(120-snapshot.ReorderTicks-20+i), snapshot.ErrStaleTick)
	}
	tick := uint32(120 - snapshot.ReorderTicks - 20 + snapshot.DefaultRecoverAfter - 1)
	require.NoError(t, w.Check(tick)) // a rewind
	require.True(t, w.Accept(tick))
}

// A receiver fed a far-ahead stream after a stall (the sender's ticks
// jumped past the window) re-anchors after DefaultRecoverAfter packets.
func TestReceiverReanchorsAfterStall(t *testing.T) {
	l := newLink(t, 21, snapshot.WithMAC(testKey), snapshot.WithTickRate(30))
	l.honest(10)
	for range 1000 { // 33 s of ticks lost
		l.next()
	}
	acc, wrong, refused := l.honest(50)
	require.Zero(t, wrong)
	require.Equal(t, snapshot.DefaultRecoverAfter-1, refused)
	require.Equal(t, 50-refused, acc)
}

// A state hash that does not match: the receiver refuses the packet,
// drops its baselines and asks for a full snapshot, which the sender
// sends next.
func TestStateMismatch(t *testing.T) {
	l := newLink(t, 22, snapshot.WithStateHash(1))
	l.honest(5)
	// spoil the receiver's baseline through a trusted ack of a forgery
	fake := *l.truth[l.tick]
	fake.Round = (fake.Round + 1) % 16
	fs, _ := snapshot.NewSender(worldCodec, snapshot.WithStateHash(0))
	forged, err := fs.Encode(nil, l.tick+1, &fake)
	require.NoError(t, err)
	_, err = l.r.Decode(forged, &l.out)
	require.NoError(t, err)
	l.next() // the real tick, overtaken
	l.s.Ack(l.tick)
	_, _, err = l.deliver(l.next())
	require.ErrorIs(t, err, snapshot.ErrStateMismatch)
	a, ok := l.r.Ack()
	require.True(t, ok)
	require.True(t, a.StateMismatch)
	_, ok = l.s.Baseline()
	require.False(t, ok)
	acc, wrong, refused := l.honest(20)
	require.Equal(t, 20, acc)
	require.Zero(t, wrong+refused)
}
