package replicate

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/integrity"
)

// Id lists round-trip: random ascending lists, dense, sparse and with a
// jump between two ranges, read back exactly, in the bits costed.
func TestIDListRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	for it := range 300 {
		var ids []uint32
		id := int64(rng.IntN(50)) - 1
		for range rng.IntN(200) {
			switch rng.IntN(10) {
			case 0:
				id += 1 + int64(rng.Uint32N(1<<24))
			case 1, 2, 3, 4:
				id++
			default:
				id += 1 + int64(rng.IntN(12))
			}
			if id > int64(^uint32(0)) {
				break
			}
			ids = append(ids, uint32(id))
		}
		if it == 0 {
			ids = []uint32{0, 1, ^uint32(0)}
		}
		var w bits.Writer
		writeCount(&w, len(ids))
		want := countBits(len(ids))
		q, c := newIDSeq(), newIDSeq()
		for _, id := range ids {
			want += c.bits(id)
			q.write(&w, id)
		}
		require.Equal(t, want, w.Len(), "bits of %v", ids)
		r := bits.NewReader(w.Bytes())
		n, err := readCount(r)
		require.NoError(t, err)
		require.Equal(t, len(ids), n)
		q = newIDSeq()
		for _, id := range ids {
			got, err := q.read(r)
			require.NoError(t, err)
			require.Equal(t, id, got)
		}
	}
	// Exact sizes: 21 dense ids from 0 cost a count (1+5+4) and a bit
	// each.
	dense := make([]uint32, 21)
	for i := range dense {
		dense[i] = uint32(i)
	}
	q, n := newIDSeq(), countBits(len(dense))
	for _, id := range dense {
		n += q.bits(id)
	}
	require.Equal(t, 10+21, n)
}

type listThing struct {
	X uint8 `net:"range,min=0,max=200"`
}

// craft returns a packet of tick 9 (seq 1, no integrity) whose body body
// writes.
func craft(c *bitwire.Codec[listThing], body func(w *bits.Writer)) []byte {
	var w bits.Writer
	writeHeader(&w, Header{Fingerprint: fingerprint32(c.Fingerprint()), Seq: 1, Tick: 9, Integrity: integrity.ModeNone})
	body(&w)
	return w.Bytes()
}

// Each malformed list or kind is refused with its error, and a
// well-formed packet of the same shape is accepted.
func TestListsMalformed(t *testing.T) {
	c := bitwire.MustFor[listThing]()
	full := func(w *bits.Writer) { _ = c.Encode(w, &listThing{X: 7}) }
	cases := []struct {
		name string
		body func(w *bits.Writer)
		want error
	}{
		{"ok: one full state", func(w *bits.Writer) {
			writeCount(w, 0)
			w.WriteBool(false)
			writeCount(w, 1)
			q := newIDSeq()
			q.write(w, 5)
			writeCount(w, 1)
			var at, v riceSeq
			at.write(w, 0)
			v.write(w, 0)
			full(w)
		}, nil},
		{"a delta against a common baseline the packet lacks", func(w *bits.Writer) {
			writeCount(w, 0)
			w.WriteBool(false)
			writeCount(w, 1)
			q := newIDSeq()
			q.write(w, 5)
			writeCount(w, 0)
			full(w)
		}, bitwire.ErrMalformed},
		{"a kind past the entities", func(w *bits.Writer) {
			writeCount(w, 0)
			w.WriteBool(false)
			writeCount(w, 1)
			q := newIDSeq()
			q.write(w, 5)
			writeCount(w, 1)
			var at, v riceSeq
			at.write(w, 1)
			v.write(w, 0)
			full(w)
		}, bitwire.ErrMalformed},
		{"an own baseline that is the common one", func(w *bits.Writer) {
			writeCount(w, 0)
			w.WriteBool(true)
			fields.WriteBitlen(w, 2, distWidth) // tick - common - 1 = 2: common 6
			writeCount(w, 1)
			q := newIDSeq()
			q.write(w, 5)
			writeCount(w, 1)
			var at, v riceSeq
			at.write(w, 0)
			v.write(w, 3) // tick - baseline = 3: baseline 6
			full(w)
		}, bitwire.ErrMalformed},
		{"an own baseline before tick 0", func(w *bits.Writer) {
			writeCount(w, 0)
			w.WriteBool(false)
			writeCount(w, 1)
			q := newIDSeq()
			q.write(w, 5)
			writeCount(w, 1)
			var at, v riceSeq
			at.write(w, 0)
			v.write(w, 10)
			full(w)
		}, bitwire.ErrMalformed},
		{"an id gap past 2^32", func(w *bits.Writer) {
			writeCount(w, 2)
			q := newIDSeq()
			q.write(w, ^uint32(0)-1)
			q.riceSeq.write(w, 5)
		}, bitwire.ErrMalformed},
		{"a count over the bits left", func(w *bits.Writer) {
			writeCount(w, 1000)
		}, bitwire.ErrUnexpectedEnd},
		{"a gap escaped that the unary form spells", func(w *bits.Writer) {
			writeCount(w, 1)
			w.WriteBits(1<<6-1, 6)
			fields.WriteBitlen(w, 5, valueWidth)
			w.WriteBool(false)
			writeCount(w, 0)
			writeCount(w, 0)
		}, bitwire.ErrMalformed},
	}
	for _, tc := range cases {
		cl, err := NewClient(c)
		require.NoError(t, err)
		_, err = cl.Decode(craft(c, tc.body))
		if tc.want == nil {
			require.NoError(t, err, tc.name)
			e, tick, ok := cl.Get(5)
			require.True(t, ok)
			require.Equal(t, uint32(9), tick)
			require.Equal(t, uint8(7), e.X)
			continue
		}
		t.Logf("%s: %v", tc.name, err)
		require.True(t, errors.Is(err, tc.want), "%s: %v, want %v", tc.name, err, tc.want)
		require.Equal(t, 0, cl.Len(), tc.name)
	}
}

// A Peer's PacketBits add up to its bytes, and split them as the packets
// hold them.
func TestPacketBitsSum(t *testing.T) {
	c := bitwire.MustFor[listThing]()
	srv, err := NewServer(c)
	require.NoError(t, err)
	for _, mode := range []integrity.Mode{integrity.ModeNone, integrity.ModeChecksum} {
		p, err := srv.NewPeer(PeerConfig[listThing]{Integrity: mode})
		require.NoError(t, err)
		_ = p
	}
	for tick := uint32(1); tick <= 20; tick++ {
		require.NoError(t, srv.Advance(tick))
		for id := uint32(0); id < 60; id += 1 + tick%3 {
			_, err := srv.Set(id, &listThing{X: uint8(tick + id)})
			require.NoError(t, err)
		}
		if tick == 10 {
			_, err := srv.Remove(3)
			require.NoError(t, err)
		}
		for _, p := range srv.peers {
			out, ok, err := p.Encode(nil)
			require.NoError(t, err)
			if ok && tick%4 != 0 {
				h, _ := ParseHeader(out)
				rec := &p.recs[h.Seq%recordRing]
				require.NoError(t, p.Ack(Ack{Seq: h.Seq, Token: rec.token}))
			}
		}
	}
	for _, p := range srv.peers {
		st := p.Stats()
		b := st.Bits
		require.Equal(t, st.Bytes*8, b.Header+b.Removals+b.IDs+b.Kinds+b.Bodies+b.Padding+b.Trailer)
		require.Equal(t, int64(st.Packets*headerBits), b.Header)
		require.Equal(t, int64(st.Packets*p.guard.Overhead()*8), b.Trailer)
		require.Positive(t, b.IDs)
		require.Positive(t, b.Kinds)
		require.Positive(t, b.Removals)
		require.Positive(t, b.Bodies)
	}
}

// Packets of the earlier versions (magic 0xB17F, 0xB27F) are refused with
// ErrBadMagic, as is a snapshot packet's magic.
func TestOldVersionsRefused(t *testing.T) {
	c := bitwire.MustFor[listThing]()
	pkt := craft(c, func(w *bits.Writer) {
		writeCount(w, 0)
		w.WriteBool(false)
		writeCount(w, 0)
		writeCount(w, 0)
	})
	cl, err := NewClient(c)
	require.NoError(t, err)
	for _, magic := range []uint16{0xB17F, 0xB27F, 0xB27E} {
		old := slices.Clone(pkt)
		old[0], old[1] = byte(magic), byte(magic>>8)
		_, err := cl.Decode(old)
		require.ErrorIs(t, err, ErrBadMagic, "magic %#04x", magic)
	}
	_, err = cl.Decode(pkt)
	require.NoError(t, err)
}
