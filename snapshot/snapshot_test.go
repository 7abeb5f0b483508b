package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/snapshot"
)

// pair is a sender and a receiver that hold the snapshots of ticks 1 (full)
// and 2 (a delta against 1), with the packets that carried them.
type pair struct {
	s        *snapshot.Sender[World]
	r        *snapshot.Receiver[World]
	g        *game
	full     []byte // tick 1
	delta    []byte // tick 2, against 1
	states   map[uint32]*World
	lastTick uint32
}

func newPair(t testing.TB, seed int64) *pair {
	s, err := snapshot.NewSender(worldCodec)
	require.NoError(t, err)
	r, err := snapshot.NewReceiver(worldCodec)
	require.NoError(t, err)
	p := &pair{s: s, r: r, g: newGame(seed, 8, 20), states: map[uint32]*World{}}
	p.full = p.send(t, true)
	p.delta = p.send(t, true)
	h, err := snapshot.ParseHeader(p.delta)
	require.NoError(t, err)
	require.True(t, h.Delta)
	return p
}

// send encodes the next tick; when deliver, the receiver decodes it and the
// sender gets its ack.
func (p *pair) send(t testing.TB, deliver bool) []byte {
	p.g.step()
	p.lastTick++
	tick := p.lastTick
	p.states[tick] = quantized(&p.g.w)
	pkt, err := p.s.Encode(nil, tick, &p.g.w)
	require.NoError(t, err)
	if deliver {
		var out World
		got, err := p.r.Decode(pkt, &out)
		require.NoError(t, err)
		require.Equal(t, tick, got)
		require.Equal(t, *p.states[tick], out)
		p.s.Ack(got)
	}
	return pkt
}

// untouched decodes packet into a filled value and checks that the error
// is want and that neither the value nor the receiver changed.
func untouched(t *testing.T, r *snapshot.Receiver[World], packet []byte, want error) error {
	t.Helper()
	out := *quantized(&newGame(99, 3, 3).w)
	before := *quantized(&out)
	newest, ok := r.Newest()
	tick, err := r.Decode(packet, &out)
	require.Error(t, err)
	if want != nil {
		require.ErrorIs(t, err, want)
	}
	require.Zero(t, tick)
	require.Equal(t, before, out)
	n2, ok2 := r.Newest()
	require.Equal(t, newest, n2)
	require.Equal(t, ok, ok2)
	return err
}

// fullPacket encodes v at tick with a fresh sender: a full snapshot.
func fullPacket(t testing.TB, tick uint32, v *World) []byte {
	s, err := snapshot.NewSender(worldCodec)
	require.NoError(t, err)
	pkt, err := s.Encode(nil, tick, v)
	require.NoError(t, err)
	return pkt
}

func TestPrefixesAreErrors(t *testing.T) {
	p := newPair(t, 10)
	delta := p.send(t, false) // tick 3, against 2
	h, err := snapshot.ParseHeader(delta)
	require.NoError(t, err)
	require.True(t, h.Delta)
	require.Equal(t, uint32(2), h.Baseline)
	p.g.step()
	full := fullPacket(t, 4, &p.g.w)

	for _, pkt := range [][]byte{delta, full} {
		for n := 0; n < len(pkt); n++ {
			untouched(t, p.r, pkt[:n], nil)
		}
		// the whole packet still decodes
		var out World
		_, err := p.r.Decode(pkt, &out)
		require.NoError(t, err)
	}
}

func TestBadMagic(t *testing.T) {
	p := newPair(t, 11)
	pkt := p.send(t, false)
	for bit := 0; bit < 16; bit++ {
		bad := append([]byte(nil), pkt...)
		bad[bit/8] ^= 1 << (bit % 8)
		untouched(t, p.r, bad, snapshot.ErrBadMagic)
	}
	untouched(t, p.r, []byte("GET / HTTP/1.1\r\n"), snapshot.ErrBadMagic)
	require.Equal(t, []byte{0x7E, 0xB2}, pkt[:2])
}

// OtherWorld is World with one more field: another layout.
type OtherWorld struct {
	Players []Player  `net:"maxlen=64"`
	Flag    *Vec3     // the carried flag; nil while it sits at its base
	Score   [2]uint16 `net:"range,min=0,max=999"`
	Round   uint8     `net:"range,min=0,max=15"`
	Wind    int8
}

func TestProtocolMismatch(t *testing.T) {
	p := newPair(t, 12)
	oc := bitwire.MustFor[OtherWorld]()
	require.NotEqual(t, oc.Fingerprint(), worldCodec.Fingerprint())
	require.NotEqual(t, snapshot.Fingerprint32(oc.Fingerprint()), snapshot.Fingerprint32(worldCodec.Fingerprint()))
	os, err := snapshot.NewSender(oc)
	require.NoError(t, err)
	pkt, err := os.Encode(nil, 100, &OtherWorld{Players: p.g.w.Players, Wind: -3})
	require.NoError(t, err)
	untouched(t, p.r, pkt, snapshot.ErrProtocolMismatch)

	// any flipped fingerprint bit, in a packet that is otherwise fine
	good := p.send(t, false)
	for bit := 16; bit < 48; bit++ {
		bad := append([]byte(nil), good...)
		bad[bit/8] ^= 1 << (bit % 8)
		untouched(t, p.r, bad, snapshot.ErrProtocolMismatch)
	}
	var out World
	_, err = p.r.Decode(good, &out)
	require.NoError(t, err)
}

func TestNoBaseline(t *testing.T) {
	p := newPair(t, 13) // the receiver holds ticks 1 and 2
	// another sender, whose client acknowledged tick 7
	s2, err := snapshot.NewSender(worldCodec)
	require.NoError(t, err)
	_, err = s2.Encode(nil, 7, p.states[2])
	require.NoError(t, err)
	s2.Ack(7)
	p.g.step()
	pkt, err := s2.Encode(nil, 8, &p.g.w)
	require.NoError(t, err)
	h, err := snapshot.ParseHeader(pkt)
	require.NoError(t, err)
	require.Equal(t, snapshot.Header{Fingerprint: snapshot.Fingerprint32(worldCodec.Fingerprint()), Tick: 8, Delta: true, Baseline: 7}, h)
	untouched(t, p.r, pkt, snapshot.ErrNoBaseline)

	// a fresh receiver holds nothing
	r2, err := snapshot.NewReceiver(worldCodec)
	require.NoError(t, err)
	untouched(t, r2, p.delta, snapshot.ErrNoBaseline)
	// and takes the full snapshot
	var out World
	tick, err := r2.Decode(p.full, &out)
	require.NoError(t, err)
	require.Equal(t, uint32(1), tick)
	require.Equal(t, *p.states[1], out)
	// the receiver of the pair still goes on
	next := p.send(t, true)
	require.NotEmpty(t, next)
}

func TestStaleAndDuplicateTicks(t *testing.T) {
	p := newPair(t, 14)
	untouched(t, p.r, p.delta, snapshot.ErrStaleTick) // a duplicate of tick 2
	untouched(t, p.r, p.full, snapshot.ErrStaleTick)  // tick 1, late
	pkt3 := p.send(t, false)
	pkt4 := p.send(t, false)
	var out World
	tick, err := p.r.Decode(pkt4, &out)
	require.NoError(t, err)
	require.Equal(t, uint32(4), tick)
	untouched(t, p.r, pkt3, snapshot.ErrStaleTick) // overtaken by tick 4
	untouched(t, p.r, pkt4, snapshot.ErrStaleTick)

	// the sender's ticks must increase
	_, err = p.s.Encode(nil, 4, &p.g.w)
	require.ErrorIs(t, err, snapshot.ErrStaleTick)
	_, err = p.s.Encode(nil, 1, &p.g.w)
	require.ErrorIs(t, err, snapshot.ErrStaleTick)
	last, ok := p.s.Last()
	require.True(t, ok)
	require.Equal(t, uint32(4), last)
}

func TestTrailingData(t *testing.T) {
	p := newPair(t, 15)
	untouched(t, p.r, append(p.send(t, false), 0), bitwire.ErrTrailingData)
	// a set padding bit: find packets that end with padding
	padded := 0
	for i := 0; i < 20; i++ {
		pkt := p.send(t, false)
		h, err := snapshot.ParseHeader(pkt)
		require.NoError(t, err)
		var w bitsWriter
		bodyBits := w.deltaBits(t, p.states[h.Baseline], p.states[h.Tick])
		n := 84 + 6 + bodyBits // h.Baseline is 1..4 ticks back: a 6-bit distance
		if h.Hashed {
			n += 32
		}
		require.Equal(t, (n+7)/8, len(pkt))
		if n%8 != 0 {
			bad := append([]byte(nil), pkt...)
			bad[len(bad)-1] |= 0x80
			untouched(t, p.r, bad, bitwire.ErrTrailingData)
			padded++
		}
		var out World
		_, err = p.r.Decode(pkt, &out)
		require.NoError(t, err)
		p.s.Ack(h.Tick)
	}
	require.Greater(t, padded, 10)
}

func TestOverBudget(t *testing.T) {
	g := newGame(16, 12, 12)
	s, err := snapshot.NewSender(worldCodec, snapshot.WithBudget(100))
	require.NoError(t, err)
	require.Equal(t, 100, s.Budget())
	dst := append(make([]byte, 0, 512), "abc"...)
	out, err := s.Encode(dst, 1, &g.w)
	require.ErrorIs(t, err, snapshot.ErrOverBudget)
	require.Equal(t, []byte("abc"), out)
	_, ok := s.Last()
	require.False(t, ok, "an over-budget state is not recorded as sent")
	s.Ack(1)
	_, ok = s.Acked()
	require.False(t, ok, "an ack of a tick never sent is ignored")

	// the same tick, with less state, goes out
	g.w.Players = g.w.Players[:2]
	out, err = s.Encode(dst, 1, &g.w)
	require.NoError(t, err)
	require.Equal(t, []byte("abc"), out[:3])
	require.LessOrEqual(t, len(out)-3, 100)
	s.Ack(1)
	// a delta over the budget: ten new players at once
	for range 10 {
		g.spawn()
	}
	_, err = s.Encode(nil, 2, &g.w)
	require.ErrorIs(t, err, snapshot.ErrOverBudget)
	base, ok := s.Baseline()
	require.True(t, ok)
	require.Equal(t, uint32(1), base)
	last, _ := s.Last()
	require.Equal(t, uint32(1), last)

	// every packet a sender produces fits its budget, down to the minimum
	small, err := snapshot.NewSender(worldCodec, snapshot.WithBudget(snapshot.MinBudget))
	require.NoError(t, err)
	_, err = small.Encode(nil, 1, &g.w)
	require.ErrorIs(t, err, snapshot.ErrOverBudget)
	pkt, err := small.Encode(nil, 1, &World{})
	require.NoError(t, err)
	require.LessOrEqual(t, len(pkt), snapshot.MinBudget)
}

func TestAcks(t *testing.T) {
	g := newGame(17, 4, 4)
	s, err := snapshot.NewSender(worldCodec, snapshot.WithHistorySize(4))
	require.NoError(t, err)
	for tick := uint32(10); tick <= 20; tick += 2 { // 10, 12, ..., 20: the ring holds 14..20
		_, err := s.Encode(nil, tick, &g.w)
		require.NoError(t, err)
	}
	acked := func() uint32 {
		tick, ok := s.Acked()
		if !ok {
			return 0
		}
		return tick
	}
	s.Ack(12) // sent, but gone from the ring
	require.Zero(t, acked())
	s.Ack(15) // never sent
	require.Zero(t, acked())
	s.Ack(22) // not sent yet
	require.Zero(t, acked())
	s.Ack(16)
	require.Equal(t, uint32(16), acked())
	s.Ack(14) // older than the newest ack
	require.Equal(t, uint32(16), acked())
	s.Ack(16)
	s.Ack(18)
	require.Equal(t, uint32(18), acked())
	base, ok := s.Baseline()
	require.True(t, ok)
	require.Equal(t, uint32(18), base)

	// the acknowledged snapshot leaves the ring: full again
	for tick := uint32(21); tick <= 24; tick++ {
		pkt, err := s.Encode(nil, tick, &g.w)
		require.NoError(t, err)
		h, err := snapshot.ParseHeader(pkt)
		require.NoError(t, err)
		require.Equal(t, tick < 24, h.Delta, "tick %d", tick)
	}
	_, ok = s.Baseline()
	require.False(t, ok)
	s.Reset()
	_, ok = s.Acked()
	require.False(t, ok)
	_, err = s.Encode(nil, 1, &g.w) // any tick after Reset
	require.NoError(t, err)
}

func TestOptions(t *testing.T) {
	_, err := snapshot.NewSender[World](nil)
	require.Error(t, err)
	_, err = snapshot.NewReceiver[World](nil)
	require.Error(t, err)
	for _, o := range []snapshot.Option{
		snapshot.WithBudget(snapshot.MinBudget - 1),
		snapshot.WithBudget(-1),
		snapshot.WithHistorySize(0),
		snapshot.WithHistorySize(snapshot.MaxHistorySize + 1),
	} {
		_, err = snapshot.NewSender(worldCodec, o)
		require.Error(t, err)
	}
	for _, n := range []int{-1, 0, snapshot.MaxHistorySize + 1} {
		_, err = snapshot.NewReceiver(worldCodec, snapshot.WithHistorySize(n))
		require.Error(t, err)
	}
	s, err := snapshot.NewSender(worldCodec, nil, snapshot.WithBudget(1500), snapshot.WithHistorySize(64))
	require.NoError(t, err)
	require.Equal(t, 1500, s.Budget())
	_, err = s.Encode(nil, 1, nil)
	require.Error(t, err)
	r, err := snapshot.NewReceiver(worldCodec, snapshot.WithBudget(1500))
	require.NoError(t, err)
	_, err = r.Decode(fullPacket(t, 1, &World{}), nil)
	require.Error(t, err)
}

// TestNoAliasing scribbles over the sender's input and the receiver's output
// between packets: neither end may have kept a reference to them.
func TestNoAliasing(t *testing.T) {
	p := newPair(t, 18)
	var out World
	for i := 0; i < 50; i++ {
		p.g.step()
		p.lastTick++
		want := quantized(&p.g.w)
		pkt, err := p.s.Encode(nil, p.lastTick, &p.g.w)
		require.NoError(t, err)
		for j := range p.g.w.Players { // the game moves its players in place
			p.g.w.Players[j].Pos.X = 0
		}
		tick, err := p.r.Decode(pkt, &out)
		require.NoError(t, err)
		require.Equal(t, *want, out)
		p.s.Ack(tick)
		for j := range out.Players {
			out.Players[j].Pos = Vec3{X: 1, Y: 2, Z: 3}
			out.Players[j].Health = -1
		}
		if out.Flag != nil {
			out.Flag.X = 7
		}
		out.Players = out.Players[:1]
		p.g.w = *quantized(want) // fresh memory for the game, from a clean copy
	}
}

type fbEntity struct {
	ID      uint16     `net:"id"`
	X, Y, Z float32    `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1"`
	Rot     [4]float32 `net:"quat,bits=9"`
	On      bool
}

type fbState struct {
	Es []fbEntity `net:"maxlen=100"`
}

// A delta over the budget falls back to a full snapshot that fits (found
// by the demo: every entity leaving its delta window makes the delta
// larger than the full snapshot).
func TestSenderFallsBackToFullOverBudget(t *testing.T) {
	c := bitwire.MustFor[fbState]()
	var base, cur fbState
	for i := range 50 {
		base.Es = append(base.Es, fbEntity{ID: uint16(i + 1), X: float32(i), Y: 1, Z: -float32(i), Rot: [4]float32{0, 0, 0, 1}})
		cur.Es = append(cur.Es, fbEntity{ID: uint16(i + 1), X: -float32(i) - 10, Y: 20, Z: float32(i) + 10, Rot: [4]float32{0.5, 0.5, 0.5, 0.5}, On: true})
	}
	fresh, err := snapshot.NewSender(c)
	require.NoError(t, err)
	full, err := fresh.Encode(nil, 2, &cur)
	require.NoError(t, err)

	snd, err := snapshot.NewSender(c, snapshot.WithBudget(len(full)))
	require.NoError(t, err)
	_, err = snd.Encode(nil, 1, &base)
	require.NoError(t, err)
	snd.Ack(1)
	pkt, err := snd.Encode(nil, 2, &cur)
	require.NoError(t, err)
	h, err := snapshot.ParseHeader(pkt)
	require.NoError(t, err)
	require.False(t, h.Delta, "the over-budget delta became a full snapshot")
	require.Equal(t, full, pkt)

	rc, err := snapshot.NewReceiver(c)
	require.NoError(t, err)
	var out fbState
	_, err = rc.Decode(pkt, &out)
	require.NoError(t, err)
	want := cur
	require.NoError(t, c.Quantize(&want))
	require.Equal(t, want, out)
}

type bigElem struct {
	Alive bool
	Pad   [32]float64 `net:"-"`
}

type bigState struct {
	S []bigElem `net:"maxlen=4000"`
}

// A state whose decoding would go over the allocation budget (elements far
// larger in memory than on the wire): the Sender says ErrTooLong, with the
// limit to raise, not an internal error; raising it on both ends works.
func TestSenderAllocationBudget(t *testing.T) {
	st := bigState{S: make([]bigElem, 1000)}
	c := bitwire.MustFor[bigState]()
	data, err := c.Marshal(&st)
	require.NoError(t, err)
	require.ErrorIs(t, c.Unmarshal(data, &bigState{}), bitwire.ErrTooLong)
	snd, err := snapshot.NewSender(c)
	require.NoError(t, err)
	_, err = snd.Encode(nil, 1, &st)
	require.ErrorIs(t, err, bitwire.ErrTooLong)
	require.NotContains(t, err.Error(), "internal")
	require.Contains(t, err.Error(), "MaxAllocPerByte")

	raised := c.WithLimits(bitwire.Limits{MaxAllocPerByte: 4 << 10})
	snd, err = snapshot.NewSender(raised)
	require.NoError(t, err)
	pkt, err := snd.Encode(nil, 1, &st)
	require.NoError(t, err)
	rc, err := snapshot.NewReceiver(raised)
	require.NoError(t, err)
	var out bigState
	_, err = rc.Decode(pkt, &out)
	require.NoError(t, err)
	require.Len(t, out.S, 1000)
}
