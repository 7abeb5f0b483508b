package bitwire

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// The seed types: the layouts whose sizes the format fixes.

type SeedPlayer struct {
	ID     uint16  `net:"bits=16"`
	X      float32 `net:"q,min=-1000,max=1000,bits=16"`
	Y      float32 `net:"q,min=-1000,max=1000,bits=16"`
	Aim    uint8   `net:"bits=8"`
	Health uint8   `net:"bits=7"`
	Score  uint16  `net:"bits=16"`
	Alive  bool
}

type Transform struct {
	X     float32 `net:"q,min=-100,max=100,prec=0.1"`
	Y     float32 `net:"q,min=-10,max=10,prec=0.1"`
	Z     float32 `net:"q,min=-100,max=100,prec=0.1"`
	Yaw   float32 `net:"q,min=0,max=360,prec=0.1"`
	Pitch float32 `net:"q,min=0,max=360,prec=0.1"`
}

type PlayerPos struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01"`
	Y float32 `net:"q,min=-16,max=112,prec=0.01"`
	Z float32 `net:"q,min=-512,max=512,prec=0.01"`
}

type PlayerState struct {
	Pos    PlayerPos
	Yaw    float32 `net:"q,min=0,max=360,bits=10"`
	Health int     `net:"range,min=0,max=200"`
	Weapon int     `net:"range,min=0,max=15"`
	Crouch bool
	Firing bool
}

type Adaptive struct {
	A int64 `net:"bitlen"`
	B int32 `net:"bitlen,group=a"`
	C int32 `net:"bitlen,group=a"`
}

func bitLen(t *testing.T, v any) int {
	t.Helper()
	p, ptr, err := valuePointer(v)
	require.NoError(t, err)
	var w bits.Writer
	require.NoError(t, encodeRoot(p, &w, ptr))
	return w.Len()
}

func TestSeedPlayer80Bits(t *testing.T) {
	v := SeedPlayer{ID: 7, X: 12.5, Y: -300, Aim: 200, Health: 100, Score: 65535, Alive: true}
	require.Equal(t, 80, bitLen(t, &v))
	c := MustFor[SeedPlayer]()
	require.Equal(t, 80, c.MaxBits())
	data, err := c.Marshal(&v)
	require.NoError(t, err)
	require.Len(t, data, 10)
	var got SeedPlayer
	require.NoError(t, c.Unmarshal(data, &got))
	require.Equal(t, v.ID, got.ID)
	require.InDelta(t, v.X, got.X, 2000.0/65535/2+1e-4)
	require.Equal(t, v.Health, got.Health)
	require.Equal(t, v.Alive, got.Alive)
}

func TestTransform54Bits(t *testing.T) {
	v := Transform{X: 12.34, Y: -3.3, Z: 99.9, Yaw: 359.9, Pitch: 0.05}
	require.Equal(t, 54, bitLen(t, &v))
	data, err := Marshal(v)
	require.NoError(t, err)
	require.Len(t, data, 7)
	var got Transform
	require.NoError(t, Unmarshal(data, &got))
	for _, pair := range [][2]float32{{v.X, got.X}, {v.Y, got.Y}, {v.Z, got.Z}, {v.Yaw, got.Yaw}, {v.Pitch, got.Pitch}} {
		require.InDelta(t, pair[0], pair[1], 0.05+1e-4)
	}
}

func TestPlayerState72Bits(t *testing.T) {
	v := PlayerState{Pos: PlayerPos{X: 100.25, Y: 3.5, Z: -511}, Yaw: 90, Health: 200, Weapon: 15, Firing: true}
	require.Equal(t, 72, bitLen(t, &v))
	require.Equal(t, 72, MustFor[PlayerState]().MaxBits())
	// naive: the same struct for encoding/binary, with int as int64
	type naivePlayerState struct {
		X, Y, Z        float32
		Yaw            float32
		Health, Weapon int64
		Crouch, Firing bool
	}
	require.Equal(t, 34, binary.Size(naivePlayerState{}))
}

func TestAdaptiveMessageAtMost49Bits(t *testing.T) {
	v := Adaptive{A: 123456789, B: 25, C: 3}
	n := bitLen(t, &v)
	require.LessOrEqual(t, n, 49)
	require.Equal(t, 49, n, "1 sign flag + 6+26 + mode bit and 5+4, 5+1")
	var got Adaptive
	data, err := Marshal(&v)
	require.NoError(t, err)
	require.NoError(t, Unmarshal(data, &got))
	require.Equal(t, v, got)

	neg := Adaptive{A: -123456789, B: -25, C: 3}
	data, err = Marshal(&neg)
	require.NoError(t, err)
	require.NoError(t, Unmarshal(data, &got))
	require.Equal(t, neg, got)
}

type QuatMsg struct {
	Rot [4]float32 `net:"quat"`
}

type QuatMsg11 struct {
	Rot struct{ X, Y, Z, W float64 } `net:"quat,bits=11"`
}

func randomQuat(rng *rand.Rand) [4]float64 {
	var q [4]float64
	var n float64
	for i := range q {
		q[i] = rng.NormFloat64()
		n += q[i] * q[i]
	}
	n = math.Sqrt(n)
	for i := range q {
		q[i] /= n
	}
	return q
}

func angleDeg(a, b [4]float64) float64 {
	dot := math.Abs(a[0]*b[0] + a[1]*b[1] + a[2]*b[2] + a[3]*b[3])
	if dot > 1 {
		dot = 1
	}
	return 2 * math.Acos(dot) * 180 / math.Pi
}

func TestQuat29BitsAndAccuracy(t *testing.T) {
	c := MustFor[QuatMsg]()
	c11 := MustFor[QuatMsg11]()
	require.Equal(t, 29, c.MaxBits())
	require.Equal(t, 35, c11.MaxBits())
	rng := rand.New(rand.NewSource(3))
	worst9, worst11 := 0.0, 0.0
	for i := 0; i < 10000; i++ {
		q := randomQuat(rng)
		v := QuatMsg{Rot: [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}}
		require.Equal(t, 29, bitLen(t, &v))
		data, err := c.Marshal(&v)
		require.NoError(t, err)
		var got QuatMsg
		require.NoError(t, c.Unmarshal(data, &got))
		g := [4]float64{float64(got.Rot[0]), float64(got.Rot[1]), float64(got.Rot[2]), float64(got.Rot[3])}
		worst9 = math.Max(worst9, angleDeg(q, g))

		var v11 QuatMsg11
		v11.Rot.X, v11.Rot.Y, v11.Rot.Z, v11.Rot.W = q[0], q[1], q[2], q[3]
		data, err = c11.Marshal(&v11)
		require.NoError(t, err)
		var got11 QuatMsg11
		require.NoError(t, c11.Unmarshal(data, &got11))
		worst11 = math.Max(worst11, angleDeg(q, [4]float64{got11.Rot.X, got11.Rot.Y, got11.Rot.Z, got11.Rot.W}))
	}
	require.Less(t, worst9, 0.5)
	require.Less(t, worst11, 0.15)
	t.Logf("worst angle: %.3f° (9 bits), %.3f° (11 bits)", worst9, worst11)
}

type VarintMsg struct {
	V int32 `net:"varint,group=5"`
}

type Varint64Msg struct {
	V int64  `net:"varint,group=5"`
	U uint64 `net:"varint"`
}

func TestVarintGroup5(t *testing.T) {
	require.Equal(t, 6, bitLen(t, &VarintMsg{V: -1}))
	for _, v := range []int32{0, 1, -1, 63, -64, 1000, -1000, math.MaxInt32, math.MinInt32} {
		data, err := Marshal(&VarintMsg{V: v})
		require.NoError(t, err)
		var got VarintMsg
		require.NoError(t, Unmarshal(data, &got))
		require.Equal(t, v, got.V)
	}
	for _, v := range []int64{0, 1, -1, 63, -64, 1000, -1000, math.MaxInt64, math.MinInt64} {
		in := Varint64Msg{V: v, U: uint64(v)}
		data, err := Marshal(&in)
		require.NoError(t, err)
		var got Varint64Msg
		require.NoError(t, Unmarshal(data, &got))
		require.Equal(t, in, got)
	}
}

func TestVarintOverflowIntoSmallType(t *testing.T) {
	// an int64 varint of MaxInt64 read as int32 does not fit
	data, err := Marshal(&Varint64Msg{V: math.MaxInt64})
	require.NoError(t, err)
	var got VarintMsg
	err = Unmarshal(data[:], &got)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrOutOfRange) || errors.Is(err, ErrTrailingData), err)
}
