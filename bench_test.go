//go:build go1.24

package bitwire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The benchmarks of the hot path: Codec.Append into a reused buffer and
// Codec.Unmarshal into a reused value, each beside a hand-written encoder
// and decoder of exactly the same layout built from packages bits and
// fields. The hand-written code is the speed limit the compiled plan chases;
// TestHandwrittenMatchesPlan checks that both write the same bytes, so that
// the comparison is honest.
//
// The sub-benchmarks are named .../encode/bitwire, .../encode/handwritten,
// .../decode/bitwire and .../decode/handwritten. benchstat cannot split
// columns on a positional name part, so to see the plan against the
// hand-written code side by side, with the ratio, split the output in two
// with the implementation's name taken out, and compare the files:
//
//	go test -run=NONE -bench='PlayerState|Players64' -count=6 . > b.txt
//	grep -v /bitwire- b.txt | sed s#/handwritten-#-# > hand.txt
//	grep -v /handwritten- b.txt | sed s#/bitwire-#-# > plan.txt
//	benchstat hand.txt plan.txt

// Players64 is the second workload: a full 64-player game.
type Players64 struct {
	Players [64]PlayerState
}

// handPlayer holds the codings of PlayerState's tags, built once, as a
// hand-written encoder would.
type handPlayer struct {
	posXZ, posY, yaw fields.Quantizer
	health, weapon   fields.IntRange
}

func mustCoding[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var hand = handPlayer{
	posXZ:  mustCoding(fields.NewQuantizer(-512, 512, 0.01)),
	posY:   mustCoding(fields.NewQuantizer(-16, 112, 0.01)),
	yaw:    mustCoding(fields.NewQuantizerBits(0, 360, 10)),
	health: mustCoding(fields.NewIntRange(0, 200)),
	weapon: mustCoding(fields.NewIntRange(0, 15)),
}

func handEncodePlayer(w *bits.Writer, v *PlayerState) error {
	if err := hand.posXZ.Write(w, float64(v.Pos.X)); err != nil {
		return err
	}
	if err := hand.posY.Write(w, float64(v.Pos.Y)); err != nil {
		return err
	}
	if err := hand.posXZ.Write(w, float64(v.Pos.Z)); err != nil {
		return err
	}
	if err := hand.yaw.Write(w, float64(v.Yaw)); err != nil {
		return err
	}
	if err := hand.health.Write(w, int64(v.Health)); err != nil {
		return err
	}
	if err := hand.weapon.Write(w, int64(v.Weapon)); err != nil {
		return err
	}
	w.WriteBool(v.Crouch)
	w.WriteBool(v.Firing)
	return nil
}

func handDecodePlayer(r *bits.Reader, v *PlayerState) error {
	x, err := hand.posXZ.Read(r)
	if err != nil {
		return err
	}
	y, err := hand.posY.Read(r)
	if err != nil {
		return err
	}
	z, err := hand.posXZ.Read(r)
	if err != nil {
		return err
	}
	yaw, err := hand.yaw.Read(r)
	if err != nil {
		return err
	}
	health, err := hand.health.Read(r)
	if err != nil {
		return err
	}
	weapon, err := hand.weapon.Read(r)
	if err != nil {
		return err
	}
	crouch, err := r.ReadBool()
	if err != nil {
		return err
	}
	firing, err := r.ReadBool()
	if err != nil {
		return err
	}
	v.Pos.X, v.Pos.Y, v.Pos.Z = float32(x), float32(y), float32(z)
	v.Yaw = float32(yaw)
	v.Health, v.Weapon = int(health), int(weapon)
	v.Crouch, v.Firing = crouch, firing
	return nil
}

// The hand-written counterparts of Codec.Append and Codec.Unmarshal: a
// writer on the stack over the caller's buffer, and the same trailing-data
// check that Unmarshal makes.

func handAppendPlayer(dst []byte, v *PlayerState) ([]byte, error) {
	var w bits.Writer
	w.ResetAppend(dst)
	if err := handEncodePlayer(&w, v); err != nil {
		return dst, err
	}
	return w.Bytes(), nil
}

func handUnmarshalPlayer(data []byte, v *PlayerState) error {
	var r bits.Reader
	r.Reset(data)
	if err := handDecodePlayer(&r, v); err != nil {
		return err
	}
	if !r.CheckPadding() {
		return ErrTrailingData
	}
	return nil
}

func handAppendPlayers(dst []byte, v *Players64) ([]byte, error) {
	var w bits.Writer
	w.ResetAppend(dst)
	for i := range v.Players {
		if err := handEncodePlayer(&w, &v.Players[i]); err != nil {
			return dst, err
		}
	}
	return w.Bytes(), nil
}

func handUnmarshalPlayers(data []byte, v *Players64) error {
	var r bits.Reader
	r.Reset(data)
	for i := range v.Players {
		if err := handDecodePlayer(&r, &v.Players[i]); err != nil {
			return err
		}
	}
	if !r.CheckPadding() {
		return ErrTrailingData
	}
	return nil
}

// randomPlayer returns a player with every field anywhere in its range,
// the bounds included now and then.
func randomPlayer(rng *rand.Rand) PlayerState {
	f := func(min, max float64) float32 {
		switch rng.IntN(10) {
		case 0:
			return float32(min)
		case 1:
			return float32(max)
		}
		return float32(min + rng.Float64()*(max-min))
	}
	return PlayerState{
		Pos:    PlayerPos{X: f(-512, 512), Y: f(-16, 112), Z: f(-512, 512)},
		Yaw:    f(0, 360),
		Health: rng.IntN(201),
		Weapon: rng.IntN(16),
		Crouch: rng.IntN(2) == 1,
		Firing: rng.IntN(2) == 1,
	}
}

func randomPlayers(rng *rand.Rand) Players64 {
	var v Players64
	for i := range v.Players {
		v.Players[i] = randomPlayer(rng)
	}
	return v
}

// benchPlayer is the value of the single-player benchmarks.
var benchPlayer = PlayerState{
	Pos: PlayerPos{X: 100.25, Y: 3.5, Z: -211.37}, Yaw: 271.4,
	Health: 173, Weapon: 6, Crouch: false, Firing: true,
}

func TestHandwrittenMatchesPlan(t *testing.T) {
	c := MustFor[PlayerState]()
	c64 := MustFor[Players64]()
	rng := rand.New(rand.NewPCG(1, 2))
	var buf, hbuf []byte
	for i := 0; i < 2000; i++ {
		v := randomPlayer(rng)
		if i == 0 {
			v = benchPlayer
		}
		var err error
		if buf, err = c.Append(buf[:0], &v); err != nil {
			t.Fatal(err)
		}
		if hbuf, err = handAppendPlayer(hbuf[:0], &v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, hbuf) {
			t.Fatalf("%+v:\nbitwire     %x\nhandwritten %x", v, buf, hbuf)
		}
		if len(buf) != 9 {
			t.Fatalf("%d bytes, want 9 (72 bits)", len(buf))
		}
		var a, b PlayerState
		if err := c.Unmarshal(buf, &a); err != nil {
			t.Fatal(err)
		}
		if err := handUnmarshalPlayer(buf, &b); err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("decoded differently:\nbitwire     %+v\nhandwritten %+v", a, b)
		}
	}
	for i := 0; i < 50; i++ {
		v := randomPlayers(rng)
		var err error
		if buf, err = c64.Append(buf[:0], &v); err != nil {
			t.Fatal(err)
		}
		if hbuf, err = handAppendPlayers(hbuf[:0], &v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, hbuf) {
			t.Fatalf("64 players: bitwire and hand-written bytes differ")
		}
		if len(buf) != 64*9 {
			t.Fatalf("%d bytes, want %d", len(buf), 64*9)
		}
		var a, b Players64
		if err := c64.Unmarshal(buf, &a); err != nil {
			t.Fatal(err)
		}
		if err := handUnmarshalPlayers(buf, &b); err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("64 players decoded differently")
		}
	}
}

// TestHotPathAllocs pins the 0 allocs/op that the benchmarks report.
func TestHotPathAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are checked in the long run")
	}
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so the pooled scratch space allocates")
	}
	c := MustFor[PlayerState]()
	c64 := MustFor[Players64]()
	v := benchPlayer
	v64 := randomPlayers(rand.New(rand.NewPCG(3, 4)))
	buf := make([]byte, 0, 1024)
	data, _ := c.Append(nil, &v)
	data64, _ := c64.Append(nil, &v64)
	var out PlayerState
	var out64 Players64
	cw := MustFor[CubeWorld]()
	wBase, wCur := changedWorlds()
	qBase := cloneWorld(wBase)
	if err := cw.Quantize(&qBase); err != nil {
		t.Fatal(err)
	}
	dataW, err := cw.AppendDelta(nil, &wBase, &wCur)
	if err != nil {
		t.Fatal(err)
	}
	var outW CubeWorld
	_ = cw.UnmarshalDelta(dataW, &qBase, &outW) // outW owns its slice from now on
	for name, f := range map[string]func(){
		"CubeWorld delta encode": func() { buf, _ = cw.AppendDelta(buf[:0], &wBase, &wCur) },
		"CubeWorld delta decode": func() { _ = cw.UnmarshalDelta(dataW, &qBase, &outW) },
		"PlayerState encode":     func() { buf, _ = c.Append(buf[:0], &v) },
		"PlayerState decode":     func() { _ = c.Unmarshal(data, &out) },
		"Players64 encode":       func() { buf, _ = c64.Append(buf[:0], &v64) },
		"Players64 decode":       func() { _ = c64.Unmarshal(data64, &out64) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs/op, want 0", name, n)
		}
	}
}

// benchCodec runs the four sub-benchmarks of one workload.
func benchCodec[T any](b *testing.B, v *T, appendHand func([]byte, *T) ([]byte, error), unmarshalHand func([]byte, *T) error) {
	c := MustFor[T]()
	data, err := c.Append(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	size := float64(len(data))
	encode := func(b *testing.B, app func([]byte, *T) ([]byte, error)) {
		buf := make([]byte, 0, 2*len(data)+8)
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var err error
		for b.Loop() {
			if buf, err = app(buf[:0], v); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(size, "B/msg")
	}
	decode := func(b *testing.B, un func([]byte, *T) error) {
		var out T
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := un(data, &out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(size, "B/msg")
	}
	b.Run("encode/bitwire", func(b *testing.B) { encode(b, c.Append) })
	b.Run("encode/handwritten", func(b *testing.B) { encode(b, appendHand) })
	b.Run("decode/bitwire", func(b *testing.B) { decode(b, c.Unmarshal) })
	b.Run("decode/handwritten", func(b *testing.B) { decode(b, unmarshalHand) })
}

func BenchmarkPlayerState(b *testing.B) {
	v := benchPlayer
	benchCodec(b, &v, handAppendPlayer, handUnmarshalPlayer)
}

func BenchmarkPlayers64(b *testing.B) {
	v := randomPlayers(rand.New(rand.NewPCG(5, 6)))
	benchCodec(b, &v, handAppendPlayers, handUnmarshalPlayers)
}
