package snapshot

import (
	"errors"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flyer moves at constant velocity; predWorld holds a field of them.
type flyer struct {
	ID uint16  `net:"id,bits=16"`
	X  float32 `net:"q,min=-1000,max=1000,prec=0.01,dmin=-4,dmax=4,pred"`
	Y  float32 `net:"q,min=-1000,max=1000,prec=0.01,dmin=-4,dmax=4,pred"`
}

type predWorld struct {
	Flyers []flyer
}

// plainFlyer and plainWorld are the same without pred.
type plainFlyer struct {
	ID uint16  `net:"id,bits=16"`
	X  float32 `net:"q,min=-1000,max=1000,prec=0.01,dmin=-4,dmax=4"`
	Y  float32 `net:"q,min=-1000,max=1000,prec=0.01,dmin=-4,dmax=4"`
}

type plainWorld struct {
	Flyers []plainFlyer
}

func flyersAt(tick int) predWorld {
	var w predWorld
	for i := range 40 {
		vx, vy := float32(i%7-3)*0.25, float32(i%5-2)*0.5 // per tick, on the grid
		w.Flyers = append(w.Flyers, flyer{ID: uint16(i + 1), X: float32(i*10) + vx*float32(tick), Y: -float32(i*5) + vy*float32(tick)})
	}
	return w
}

func toPlain(w predWorld) plainWorld {
	var p plainWorld
	for _, f := range w.Flyers {
		p.Flyers = append(p.Flyers, plainFlyer(f))
	}
	return p
}

// TestPredictedSession runs a session whose acks arrive lag ticks late, and
// checks that every packet decodes to the quantized state, that deltas
// predict from an older snapshot once the receiver acknowledged enough, and
// that the bodies at constant velocity then cost about their changed bits.
func TestPredictedSession(t *testing.T) {
	pc, qc := bitwire.MustFor[predWorld](), bitwire.MustFor[plainWorld]()
	ps, err := NewSender(pc)
	require.NoError(t, err)
	pr, err := NewReceiver(pc)
	require.NoError(t, err)
	qs, err := NewSender(qc)
	require.NoError(t, err)
	qr, err := NewReceiver(qc)
	require.NoError(t, err)
	const lag, ticks = 3, 60
	var acks, qacks []Ack
	predBytes, plainBytes, predicted := 0, 0, 0
	for tick := uint32(1); tick <= ticks; tick++ {
		state := flyersAt(int(tick))
		pkt, err := ps.Encode(nil, tick, &state)
		require.NoError(t, err)
		var out predWorld
		got, err := pr.Decode(pkt, &out)
		require.NoError(t, err, "tick %d", tick)
		require.Equal(t, tick, got)
		want := state
		require.NoError(t, pc.Quantize(&want))
		require.Equal(t, want, out, "tick %d", tick)
		a, _ := pr.Ack()
		acks = append(acks, a)

		plain := toPlain(state)
		qpkt, err := qs.Encode(nil, tick, &plain)
		require.NoError(t, err)
		var qout plainWorld
		_, err = qr.Decode(qpkt, &qout)
		require.NoError(t, err)
		qa, _ := qr.Ack()
		qacks = append(qacks, qa)

		if len(acks) > lag { // the ack of tick-lag arrives now
			require.NoError(t, ps.HandleAck(acks[len(acks)-lag-1]))
			require.NoError(t, qs.HandleAck(qacks[len(qacks)-lag-1]))
		}
		h, err := ParseHeader(pkt)
		require.NoError(t, err)
		if tick > 20 {
			require.True(t, h.Delta)
			predBytes += len(pkt)
			plainBytes += len(qpkt)
			if predictionDistance(t, pkt) != 0 {
				predicted++
			}
		}
	}
	assert.Equal(t, ticks-20, predicted, "every delta of the steady state is predicted")
	// 40 bodies, each one changed bit (and its set's bit): the predicted
	// packets hold the header and about 2 bits an entity.
	assert.Less(t, predBytes*4, plainBytes, "predicted %d bytes, plain %d", predBytes, plainBytes)
}

// predictionDistance reads a delta packet's prediction prefix.
func predictionDistance(t *testing.T, pkt []byte) uint32 {
	t.Helper()
	var r bits.Reader
	r.Reset(pkt)
	h, err := readHeader(&r)
	require.NoError(t, err)
	d, err := readPrediction(&r, h.Baseline)
	require.NoError(t, err)
	return d
}

// TestPredictedDistance checks the older snapshot the Sender picks: the
// acknowledged one whose distance from the baseline is nearest to the
// baseline's from the new tick, and none twice as far or more.
func TestPredictedDistance(t *testing.T) {
	c := bitwire.MustFor[predWorld]()
	s, err := NewSender(c)
	require.NoError(t, err)
	for tick := uint32(1); tick <= 10; tick++ {
		st := flyersAt(int(tick))
		_, err := s.Encode(nil, tick, &st)
		require.NoError(t, err)
	}
	s.Ack(2)
	s.Ack(5)
	s.Ack(8) // baseline 8
	st := flyersAt(11)
	pkt, err := s.Encode(nil, 11, &st)
	require.NoError(t, err)
	assert.Equal(t, uint32(3), predictionDistance(t, pkt), "tick 11 against 8, predicted from 5")
	s.Ack(11)
	st = flyersAt(12)
	pkt, err = s.Encode(nil, 12, &st)
	require.NoError(t, err)
	assert.Equal(t, uint32(0), predictionDistance(t, pkt), "tick 12 against 11: 8 is three ticks back, too far")
	st = flyersAt(14)
	pkt, err = s.Encode(nil, 14, &st)
	require.NoError(t, err)
	assert.Equal(t, uint32(3), predictionDistance(t, pkt), "tick 14 against 11, from 8")
}

// TestPredictedNoOlderBaseline: a receiver that lacks the older snapshot
// refuses the packet with ErrNoBaseline and asks for a full snapshot, and
// a distance past tick 0 is malformed.
func TestPredictedNoOlderBaseline(t *testing.T) {
	c := bitwire.MustFor[predWorld]()
	s, err := NewSender(c)
	require.NoError(t, err)
	full, err := NewReceiver(c)
	require.NoError(t, err)
	var pkts [][]byte
	for tick := uint32(1); tick <= 3; tick++ {
		st := flyersAt(int(tick))
		pkt, err := s.Encode(nil, tick, &st)
		require.NoError(t, err)
		pkts = append(pkts, pkt)
		s.Ack(tick)
	}
	st := flyersAt(4)
	pkt, err := s.Encode(nil, 4, &st) // against 3, from 2
	require.NoError(t, err)
	require.Equal(t, uint32(1), predictionDistance(t, pkt))

	require.Equal(t, uint32(1), predictionDistance(t, pkts[2]))
	require.Equal(t, uint32(0), predictionDistance(t, pkts[1]))
	// A receiver that keeps one snapshot holds 3, the baseline, not 2.
	late, err := NewReceiver(c, WithHistorySize(1))
	require.NoError(t, err)
	var out predWorld
	_, err = late.Decode(pkts[0], &out)
	require.NoError(t, err)
	_, err = late.Decode(pkts[1], &out) // tick 2 against 1: no prediction yet
	require.NoError(t, err)
	_, err = late.Decode(pkts[2], &out) // tick 3 against 2, predicted from 1
	require.ErrorIs(t, err, ErrNoBaseline)
	_, err = late.Decode(pkt, &out)
	require.ErrorIs(t, err, ErrNoBaseline)
	a, ok := late.Ack()
	require.True(t, ok)
	assert.True(t, a.MissingBaseline)

	for _, p := range pkts {
		_, err = full.Decode(p, &out)
		require.NoError(t, err)
	}
	_, err = full.Decode(pkt, &out)
	require.NoError(t, err)

	// Distance 3 from baseline 3 is tick 0; 4 would be before it.
	var w bits.Writer
	writePrediction(&w, 3)
	writePrediction(&w, 4)
	var r bits.Reader
	r.Reset(w.Bytes())
	d, err := readPrediction(&r, 3)
	require.NoError(t, err)
	assert.Equal(t, uint32(3), d)
	_, err = readPrediction(&r, 3)
	assert.True(t, errors.Is(err, bitwire.ErrMalformed), "%v", err)
	r.Reset(nil)
	_, err = readPrediction(&r, 3)
	assert.ErrorIs(t, err, bitwire.ErrUnexpectedEnd)
}

// BenchmarkPredictedProjectiles streams 40 bodies at constant velocity
// (flyersAt) with acks arriving 3 ticks late, and reports the bits a body
// costs in a delta packet (header and trailer included, over the bodies)
// and the time a tick's Encode and Decode take together: tagged pred, and
// the same type without pred.
func BenchmarkPredictedProjectiles(b *testing.B) {
	b.Run("pred", func(b *testing.B) {
		benchProjectiles(b, bitwire.MustFor[predWorld](), func(tick int) predWorld { return flyersAt(tick) })
	})
	b.Run("plain", func(b *testing.B) {
		benchProjectiles(b, bitwire.MustFor[plainWorld](), func(tick int) plainWorld { return toPlain(flyersAt(tick)) })
	})
}

func benchProjectiles[T any](b *testing.B, c *bitwire.Codec[T], at func(int) T) {
	const lag, warm = 3, 8
	s, err := NewSender(c)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReceiver(c)
	if err != nil {
		b.Fatal(err)
	}
	var acks []Ack
	var pkt []byte
	var out T
	states := make([]T, 600) // a straight line each (within range), then back to the start
	for i := range states {
		states[i] = at(i)
	}
	bitsSum, n := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N+warm; i++ {
		tick := uint32(i + 1)
		st := &states[i%len(states)]
		pkt, err = s.Encode(pkt[:0], tick, st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Decode(pkt, &out); err != nil {
			b.Fatal(err)
		}
		a, _ := r.Ack()
		acks = append(acks, a)
		if len(acks) > lag {
			if err := s.HandleAck(acks[len(acks)-lag-1]); err != nil {
				b.Fatal(err)
			}
		}
		if i >= warm {
			bitsSum += len(pkt) * 8
			n++
		}
	}
	b.ReportMetric(float64(bitsSum)/float64(n)/40, "bits/body")
}

// FuzzReceiverPredicted feeds arbitrary packets to a receiver of a
// predicting codec that holds ticks 1 to 3: no panic, and a packet it
// accepts rebuilds a value that encodes.
func FuzzReceiverPredicted(f *testing.F) {
	c := bitwire.MustFor[predWorld]()
	s, err := NewSender(c)
	if err != nil {
		f.Fatal(err)
	}
	var pkts [][]byte
	for tick := uint32(1); tick <= 5; tick++ {
		st := flyersAt(int(tick))
		pkt, err := s.Encode(nil, tick, &st)
		if err != nil {
			f.Fatal(err)
		}
		pkts = append(pkts, pkt)
		if tick <= 3 {
			s.Ack(tick)
		}
	}
	for _, p := range pkts[3:] { // deltas against 3, predicted from 2
		f.Add(p)
		f.Add(p[:len(p)/2])
		q := append([]byte(nil), p...)
		q[12] ^= 0x04 // about the prediction's bits
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, packet []byte) {
		r, err := NewReceiver(c)
		if err != nil {
			t.Fatal(err)
		}
		var out predWorld
		for _, p := range pkts[:3] {
			if _, err := r.Decode(p, &out); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Decode(packet, &out); err != nil {
			return
		}
		if _, err := c.Marshal(&out); err != nil {
			t.Fatalf("an accepted packet rebuilt a value that does not encode: %v", err)
		}
	})
}
