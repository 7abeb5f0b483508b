package snapshot_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/snapshot"
)

type Tiny struct {
	A uint8 `net:"bits=7"`
}

// TestHeaderBits checks the header bit for bit, as docs/wire-format.md
// documents it.
func TestHeaderBits(t *testing.T) {
	c := bitwire.MustFor[Tiny]()
	fp := snapshot.Fingerprint32(c.Fingerprint())
	require.Equal(t, uint32(c.Fingerprint())^uint32(c.Fingerprint()>>32), fp)
	s, err := snapshot.NewSender(c)
	require.NoError(t, err)

	// full: magic, fingerprint, tick, mode 00, hashed 0, delta 0 (84
	// bits), then A in 7 bits: 91 bits
	pkt, err := s.Encode(nil, 0x01020304, &Tiny{A: 0x55})
	require.NoError(t, err)
	require.Len(t, pkt, 12)
	require.Equal(t, uint16(snapshot.Magic), binary.LittleEndian.Uint16(pkt[0:]))
	require.Equal(t, []byte{0x7E, 0xB2}, pkt[:2])
	require.Equal(t, fp, binary.LittleEndian.Uint32(pkt[2:]))
	require.Equal(t, uint32(0x01020304), binary.LittleEndian.Uint32(pkt[6:]))
	require.Equal(t, []byte{0x55 << 4 & 0xFF, 0x55 >> 4}, pkt[10:]) // bits 80..83 zero, A in bits 84..90
	s.Ack(0x01020304)

	// delta against the previous tick: delta flag (bit 83) 1,
	// distance-1 = 0 as a bit length (prefix 00000, body bit 0), then A's
	// changed bit (0): 91 bits
	pkt, err = s.Encode(nil, 0x01020305, &Tiny{A: 0x55})
	require.NoError(t, err)
	require.Len(t, pkt, 12)
	require.Equal(t, uint32(0x01020305), binary.LittleEndian.Uint32(pkt[6:]))
	require.Equal(t, []byte{0x08, 0x00}, pkt[10:])

	// delta reaching 6 ticks back: distance-1 = 5 = 101b, high bit 2: prefix
	// 00010, then the 2 bits below it, 01; then A changed (1) and its 7 bits
	s.Ack(0x01020305)
	pkt, err = s.Encode(nil, 0x0102030b, &Tiny{A: 0x7f})
	require.NoError(t, err)
	// bits 80..: 0,0 | 0 | 1 | 0,1,0,0,0 | 1,0 | 1 | 1111111 : 19 bits
	require.Len(t, pkt, 13)
	require.Equal(t, uint32(0b1111111_1_01_00010_1_0_00), binary.LittleEndian.Uint32(append(pkt[10:13:13], 0)))
	h, err := snapshot.ParseHeader(pkt)
	require.NoError(t, err)
	require.Equal(t, snapshot.Header{Fingerprint: fp, Tick: 0x0102030b, Delta: true, Baseline: 0x01020305}, h)

	// a distance past tick 0 is malformed
	bad := append([]byte(nil), pkt...)
	binary.LittleEndian.PutUint32(bad[6:], 3)
	_, err = snapshot.ParseHeader(bad)
	require.ErrorIs(t, err, bitwire.ErrMalformed)
	r, err := snapshot.NewReceiver(c)
	require.NoError(t, err)
	_, err = r.Decode(bad, &Tiny{})
	require.ErrorIs(t, err, bitwire.ErrMalformed)
	// integrity mode 3 is reserved
	bad = append([]byte(nil), pkt...)
	bad[10] |= 3
	_, err = snapshot.ParseHeader(bad)
	require.ErrorIs(t, err, bitwire.ErrMalformed)
}

// TestTrailerBits: a hashed packet with each trailer, bit for bit.
func TestTrailerBits(t *testing.T) {
	c := bitwire.MustFor[Tiny]()
	fp := snapshot.Fingerprint32(c.Fingerprint())
	for _, tc := range []struct {
		opt  snapshot.Option
		mode snapshot.Mode
		size int
	}{{nil, snapshot.ModeNone, 0}, {snapshot.WithChecksum(), snapshot.ModeChecksum, 4}, {snapshot.WithMAC(testKey), snapshot.ModeMAC, 10}} {
		s, err := snapshot.NewSender(c, tc.opt, snapshot.WithStateHash(1))
		require.NoError(t, err)
		pkt, err := s.Encode(nil, 7, &Tiny{A: 0x55})
		require.NoError(t, err)
		// 84 bits of header, 7 of A, 32 of state hash: 123 bits, 16 bytes
		require.Len(t, pkt, 16+tc.size, "mode %v", tc.mode)
		require.Equal(t, fp, binary.LittleEndian.Uint32(pkt[2:]))
		require.Equal(t, byte(tc.mode)|1<<2, pkt[10]&0x0F) // mode, hashed 1, delta 0
		body := bits.NewReader(pkt[10:16])
		_, _ = body.ReadBits(4)
		a, _ := body.ReadBits(7)
		require.Equal(t, uint64(0x55), a)
		sum, _ := body.ReadBits(32)
		want, err := snapshot.StateHash(c, nil, &Tiny{A: 0x55})
		require.NoError(t, err)
		require.Equal(t, uint64(crc32.Checksum([]byte{0x55}, crc32.MakeTable(crc32.Castagnoli))), uint64(want))
		require.Equal(t, uint64(want), sum)
		h, err := snapshot.ParseHeader(pkt)
		require.NoError(t, err)
		require.Equal(t, snapshot.Header{Fingerprint: fp, Tick: 7, Integrity: tc.mode, Hashed: true}, h)
		switch tc.mode {
		case snapshot.ModeChecksum:
			require.Equal(t, crc32.Checksum(pkt[:16], crc32.MakeTable(crc32.Castagnoli)), binary.LittleEndian.Uint32(pkt[16:]))
		case snapshot.ModeMAC:
			m := hmac.New(sha256.New, testKey)
			m.Write(pkt[:16])
			require.Equal(t, m.Sum(nil)[:10], pkt[16:])
		}
	}
}

type Mover struct {
	ID  uint32     `net:"id"`
	Pos Vec3       `net:"composite"`
	Rot [4]float32 `net:"quat,bits=9"`
}

type Movers struct {
	Tick   uint32  `net:"bits=32"`
	Movers []Mover `net:"maxlen=64"`
}

// TestSteadyStateAllocs: once buffers have grown, a sender and a receiver
// exchange snapshots of a state without strings or maps without
// allocating.
func TestSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	c := bitwire.MustFor[Movers]()
	var states [64]Movers
	g := newGame(50, 32, 32)
	for i := range states {
		g.step()
		m := Movers{Tick: uint32(i)}
		for _, p := range g.w.Players[:32] {
			m.Movers = append(m.Movers, Mover{ID: uint32(p.ID), Pos: p.Pos, Rot: p.Rot})
		}
		states[i] = m
	}
	s, err := snapshot.NewSender(c)
	require.NoError(t, err)
	r, err := snapshot.NewReceiver(c)
	require.NoError(t, err)
	buf := make([]byte, 0, 2048)
	var out Movers
	tick := uint32(0)
	exchange := func() {
		tick++
		pkt, err := s.Encode(buf[:0], tick, &states[tick%64])
		if err != nil {
			panic(err)
		}
		got, err := r.Decode(pkt, &out)
		if err != nil {
			panic(err)
		}
		if tick%3 != 0 { // some acks lost
			s.Ack(got)
		}
	}
	for range 200 {
		exchange()
	}
	allocs := testing.AllocsPerRun(500, exchange)
	t.Logf("%.2f allocations per packet", allocs)
	require.Zero(t, allocs)
}

// TestConcurrentClients runs one sender per client on its own goroutine,
// all sharing one codec, as a server does (run with -race).
func TestConcurrentClients(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for client := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGame(int64(60+client), 6, 16)
			s, err := snapshot.NewSender(worldCodec)
			if err != nil {
				errs <- err
				return
			}
			r, err := snapshot.NewReceiver(worldCodec)
			if err != nil {
				errs <- err
				return
			}
			var out World
			for tick := uint32(1); tick <= 300; tick++ {
				g.step()
				pkt, err := s.Encode(nil, tick, &g.w)
				if err != nil {
					errs <- err
					return
				}
				if tick%4 == 0 {
					continue // lost
				}
				got, err := r.Decode(pkt, &out)
				if err != nil {
					errs <- err
					return
				}
				if !worldCodec.Equal(quantized(&g.w), &out) {
					errs <- err
					return
				}
				s.Ack(got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
