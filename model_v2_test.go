package bitwire

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// modelFile builds a model file by hand: header, tables (kind, lengths),
// and a correct CRC, so that each refusal is reached on its own.
func modelFile(version byte, layout uint64, tables ...[]byte) []byte {
	b := append([]byte("BWM"), version)
	b = binary.BigEndian.AppendUint64(b, layout)
	b = binary.BigEndian.AppendUint32(b, uint32(len(tables)))
	for _, t := range tables {
		b = append(b, t[0])
		b = binary.BigEndian.AppendUint16(b, uint16(len(t)-1))
		b = append(b, t[1:]...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// Every refusal of UnmarshalBinary, each in a file with a good CRC.
func TestModelFileRefusals(t *testing.T) {
	good := []byte{tkMask, 2, 2, 1} // ESC `10`, unchanged `11`, changed `0`
	var m Model
	require.NoError(t, m.UnmarshalBinary(modelFile(2, 7, good)))
	// Each version's file round-trips byte for byte: a model without a
	// quaternion's tables is written as version 2, one with them as
	// version 3.
	qd := []byte{tkQuatDiff, 0, 1, 2, 2} // no ESC: every slot coded
	for _, f := range [][]byte{
		modelFile(2, 7, good),
		modelFile(3, 7, good, qd),
	} {
		var m2 Model
		require.NoError(t, m2.UnmarshalBinary(f))
		b, err := m2.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, f, b)
	}
	withTrailer := modelFile(2, 7, good)
	withTrailer = append(withTrailer[:len(withTrailer)-4], 0)
	withTrailer = binary.BigEndian.AppendUint32(withTrailer, crc32.ChecksumIEEE(withTrailer))
	cut := modelFile(2, 7, good)
	cut = binary.BigEndian.AppendUint32(cut[:len(cut)-5], crc32.ChecksumIEEE(cut[:len(cut)-5]))
	badCRC := modelFile(2, 7, good)
	badCRC[len(badCRC)-1] ^= 1
	many := modelFile(2, 7, good)
	binary.BigEndian.PutUint32(many[12:], 1<<30)
	many = binary.BigEndian.AppendUint32(many[:len(many)-4], crc32.ChecksumIEEE(many[:len(many)-4]))
	for name, file := range map[string][]byte{
		"short":           []byte("BWM"),
		"magic":           append([]byte("XWM"), modelFile(2, 7, good)[3:]...),
		"version 1":       modelFile(1, 7, good),
		"version 4":       modelFile(4, 7, good),
		"crc":             badCRC,
		"trailing byte":   withTrailer,
		"table cut off":   cut,
		"too many tables": many,
		"kind 0":          modelFile(2, 7, []byte{0, 2, 2, 1}),
		"kind 6":          modelFile(2, 7, []byte{6, 2, 2, 1}),
		"one symbol":      modelFile(2, 7, []byte{tkMask, 1}),
		"length 16":       modelFile(2, 7, []byte{tkMask, 1, 16, 1}),
		"over-subscribed": modelFile(2, 7, []byte{tkMask, 1, 1, 1}),
		"no ESC":          modelFile(2, 7, []byte{tkMask, 0, 1, 1}),
		"ESC of 6 bits":   modelFile(2, 7, []byte{tkMask, 6, 1, 2}),
		// Version 3 iff a quaternion's tables are there (version 2's
		// quaternion tables were others: retrain).
		"version 2 with quaternion tables": modelFile(2, 7, good, qd),
		"version 3 without":                modelFile(3, 7, good),
		// A quaternion difference table may have no ESC when it codes
		// every slot; not with a slot uncoded, not another kind of table.
		"no ESC, a slot uncoded":   modelFile(3, 7, []byte{tkQuatDiff, 0, 1, 1, 0}),
		"no ESC in a mask table":   modelFile(3, 7, []byte{tkMask, 0, 1, 1}, qd),
		"no ESC in a window table": modelFile(3, 7, []byte{tkWindow, 0, 1, 1}, qd),
		"no ESC in a first table":  modelFile(3, 7, []byte{tkQuatFirst, 0, 1, 2, 3, 3}, qd),
	} {
		var m2 Model
		require.ErrorIs(t, m2.UnmarshalBinary(file), ErrModel, name)
		require.Zero(t, m2.hash, name) // left unchanged
	}
}

type mScalars struct {
	U  uint64  `net:"bits=64"`
	S  int64   `net:"bits=64"`
	S5 int8    `net:"bits=5"`
	R  int32   `net:"range,min=-1000,max=1000"`
	Q  float32 `net:"q,min=0,max=360,bits=10"`
	W  uint16  `net:"range,min=0,max=60000,dmin=-300,dmax=300"`
	On bool
}

// Modular tables: random pairs round-trip exactly through a trained model
// (every wrap-around, the ends of 64-bit ranges included), and a small
// step across the wrap costs a small token.
func TestModelModularRoundTrip(t *testing.T) {
	c := MustFor[mScalars]()
	rng := rand.New(rand.NewPCG(21, 21))
	rnd := func() mScalars {
		return mScalars{U: rng.Uint64(), S: int64(rng.Uint64()), S5: int8(rng.IntN(32) - 16), R: int32(rng.IntN(2001) - 1000),
			Q: float32(rng.Float64() * 360), W: uint16(rng.IntN(60001)), On: rng.IntN(2) == 0}
	}
	near := func(b mScalars) mScalars {
		d := int64(rng.IntN(9) - 4)
		b.U += uint64(d)
		b.S += d
		b.S5 = int8((int64(b.S5)+d+16)&31 - 16)
		b.R = int32((int64(b.R)+d+1000+2001)%2001 - 1000)
		b.Q = float32(math.Mod(float64(b.Q)+float64(d)*0.35+360, 360))
		b.W = uint16(max(0, min(60000, int64(b.W)+d*50)))
		return b
	}
	tr := c.NewTrainer()
	for range 500 {
		b := rnd()
		cur := near(b)
		require.NoError(t, tr.Add(&b, &cur))
	}
	m, err := tr.Model()
	require.NoError(t, err)
	cm := c.WithModel(m)
	require.NoError(t, cm.ModelErr())
	ends := []mScalars{
		{U: math.MaxUint64, S: math.MaxInt64, S5: 15, R: 1000, Q: 360, W: 60000},
		{U: 0, S: math.MinInt64, S5: -16, R: -1000, Q: 0, W: 0, On: true},
	}
	for i := range 3000 {
		var b, cur mScalars
		switch i % 3 {
		case 0:
			b, cur = rnd(), rnd()
		case 1:
			b = rnd()
			cur = near(b)
		default:
			b, cur = ends[i%2], ends[(i+1)%2]
		}
		data, err := cm.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		var got, want mScalars
		require.NoError(t, cm.UnmarshalDelta(data, &b, &got))
		d0, err := c.MarshalDelta(&b, &cur)
		require.NoError(t, err)
		require.NoError(t, c.UnmarshalDelta(d0, &b, &want))
		require.Equal(t, want, got, "%+v -> %+v", b, cur)
	}
	// The ends of every range are one step apart modulo it: a few bits
	// each, where the plain coding spends the full widths.
	data, err := cm.MarshalDelta(&ends[0], &mScalars{U: 0, S: math.MinInt64, S5: -16, R: -1000, Q: 0, W: 60000})
	require.NoError(t, err)
	d0, err := c.MarshalDelta(&ends[0], &mScalars{U: 0, S: math.MinInt64, S5: -16, R: -1000, Q: 0, W: 60000})
	require.NoError(t, err)
	require.Less(t, 4*len(data), len(d0))
}
