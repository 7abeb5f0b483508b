package interp_test

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/interp"
	"github.com/bitwire/bitwire/replicate"
)

type Vec struct {
	X float32 `net:"q,min=-1000,max=1000,prec=0.01"`
	Y float32 `net:"q,min=-1000,max=1000,prec=0.01"`
}

type Mob struct {
	Pos   Vec
	Rot   [4]float32 `net:"quat,bits=12"`
	Hp    uint8      `net:"range,min=0,max=100"`
	Speed float64    `net:"fixed,prec=0.5"`
	heat  float32    `net:"q,min=0,max=10,prec=0.1"`
	Trail []Vec      `net:",maxlen=4"`
}

var mobCodec = bitwire.MustFor[Mob]()

func rotZ(deg float64) [4]float32 {
	h := deg * math.Pi / 360
	return [4]float32{0, 0, float32(math.Sin(h)), float32(math.Cos(h))}
}

func TestLerp(t *testing.T) {
	ip, err := interp.New(mobCodec, interp.Config[Mob]{})
	require.NoError(t, err)
	a := Mob{Pos: Vec{0, 10}, Rot: rotZ(0), Hp: 10, Speed: 1, heat: 2, Trail: []Vec{{0, 0}, {4, 4}}}
	b := Mob{Pos: Vec{10, -10}, Rot: rotZ(90), Hp: 90, Speed: 3, heat: 4, Trail: []Vec{{2, 2}, {8, 8}}}
	var d Mob
	ip.Lerp(&d, &a, &b, 0.25)
	require.InDelta(t, 2.5, d.Pos.X, 1e-6)
	require.InDelta(t, 5, d.Pos.Y, 1e-6)
	require.Equal(t, uint8(10), d.Hp, "integers are held")
	require.InDelta(t, 1.5, d.Speed, 1e-9)
	require.InDelta(t, 2.5, d.heat, 1e-6, "a tagged unexported field too")
	r := rotZ(22.5)
	require.InDeltaSlice(t, r[:], d.Rot[:], 1e-6, "slerp: a quarter of 90 degrees")
	require.Equal(t, []Vec{{0.5, 0.5}, {5, 5}}, d.Trail)
	require.Equal(t, []Vec{{0, 0}, {4, 4}}, a.Trail, "a's storage is not written")

	// The shorter arc: b's sign flipped is the same rotation.
	nb := b
	for i := range nb.Rot {
		nb.Rot[i] = -nb.Rot[i]
	}
	ip.Lerp(&d, &a, &nb, 0.5)
	r = rotZ(45)
	require.InDeltaSlice(t, r[:], d.Rot[:], 1e-6)
	ip.Lerp(&d, &a, &b, 0)
	require.InDeltaSlice(t, a.Rot[:], d.Rot[:], 1e-6)
	ip.Lerp(&d, &a, &b, 1)
	require.InDeltaSlice(t, b.Rot[:], d.Rot[:], 1e-6)
}

func TestTeleport(t *testing.T) {
	ip, err := interp.New(mobCodec, interp.Config[Mob]{Threshold: 50})
	require.NoError(t, err)
	a, b := Mob{Rot: rotZ(0)}, Mob{Pos: Vec{49, 0}, Rot: rotZ(0)}
	require.False(t, ip.Teleport(&a, &b))
	b.Pos.Y = -50.5
	require.True(t, ip.Teleport(&a, &b))
	_, err = interp.New(mobCodec, interp.Config[Mob]{Threshold: -1})
	require.Error(t, err)
}

// Through a replicate.Client under 20% loss: an entity moving at a
// constant speed is drawn exactly where it was at any render tick between
// two kept states; a teleport is held, not smeared.
func TestSampleFromClient(t *testing.T) {
	s, err := replicate.NewServer(mobCodec)
	require.NoError(t, err)
	p, err := s.NewPeer(replicate.PeerConfig[Mob]{})
	require.NoError(t, err)
	cl, err := replicate.NewClient(mobCodec)
	require.NoError(t, err)
	ip, err := interp.New(mobCodec, interp.Config[Mob]{Threshold: 100})
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(1))
	at := func(tick float64) float64 {
		if tick >= 150 {
			return 500 // teleported
		}
		return tick * 0.5
	}
	lerped, held, teleports := 0, 0, 0
	for tick := uint32(1); tick <= 200; tick++ {
		require.NoError(t, s.Advance(tick))
		_, err := s.Set(1, &Mob{Pos: Vec{X: float32(at(float64(tick)))}, Rot: rotZ(0)})
		require.NoError(t, err)
		pkt, ok, err := p.Encode(nil)
		require.NoError(t, err)
		if ok && rng.Intn(5) != 0 {
			_, err := cl.Decode(pkt)
			require.NoError(t, err)
			require.NoError(t, p.Ack(cl.Ack()))
		}
		render := float64(tick) - 2.5
		var m Mob
		smp, ok := ip.Sample(cl, 1, render, &m)
		if !ok {
			continue
		}
		switch {
		case smp.Teleport:
			teleports++
			require.Less(t, float64(smp.From), 150.0)
			require.GreaterOrEqual(t, float64(smp.To), 150.0)
			require.InDelta(t, at(float64(smp.From)), m.Pos.X, 0.006)
		case smp.Held:
			held++
		default:
			lerped++
			require.LessOrEqual(t, float64(smp.From), render)
			require.Greater(t, float64(smp.To), render)
			require.InDelta(t, at(render), m.Pos.X, 0.011, "tick %d", tick)
		}
	}
	require.Greater(t, lerped, 120)
	require.Greater(t, teleports, 0)
	_ = held
}

// The clock follows a server clock 0.2% fast through 0-40 ms of uniform
// arrival jitter: drift, jitter and tick within a fraction of a tick.
func TestClock(t *testing.T) {
	const rate = 30.0
	rng := rand.New(rand.NewSource(2))
	c := interp.NewClock(rate)
	start := time.Unix(1000, 0)
	drift := 0.002
	var now time.Time
	var maxErr float64
	for k := uint32(100); k < 100+1800; k++ {
		sent := float64(k-100) / (rate * (1 + drift))
		delay := 0.010 + rng.Float64()*0.040
		now = start.Add(time.Duration((sent + delay) * float64(time.Second)))
		if rng.Intn(10) == 0 {
			continue // lost
		}
		c.Observe(k, now)
		if k > 400 {
			// The truth as of the mean delay (30 ms).
			truth := 100 + (now.Sub(start).Seconds()-0.030)*rate*(1+drift)
			maxErr = math.Max(maxErr, math.Abs(c.Tick(now)-truth))
		}
	}
	require.InDelta(t, drift, c.Drift(), 0.0005)
	// The standard deviation of a uniform 40 ms is 11.5 ms: 0.35 ticks.
	require.InDelta(t, 0.35, c.Jitter(), 0.08)
	require.Less(t, maxErr, 0.25)
	require.InDelta(t, 2+2*0.35, c.Delay(), 0.3)
	require.InDelta(t, c.Tick(now)-c.Delay(), c.RenderTick(now), 1e-9)
	require.InDelta(t, c.Tick(now)+3, c.ServerTick(now, 200*time.Millisecond), 0.01)
}

// Unexported tagged containers are interpolated too (reflection reads them
// through their addresses).
type hidden struct {
	trail []Vec `net:",maxlen=4"`
	aim   *Vec  `net:""`
	N     uint8
}

func TestLerpUnexportedContainers(t *testing.T) {
	c, err := bitwire.For[hidden]()
	require.NoError(t, err)
	ip, err := interp.New(c, interp.Config[hidden]{Threshold: 100})
	require.NoError(t, err)
	a := hidden{trail: []Vec{{0, 0}}, aim: &Vec{0, 2}, N: 1}
	b := hidden{trail: []Vec{{4, 8}}, aim: &Vec{2, 2}, N: 9}
	var d hidden
	ip.Lerp(&d, &a, &b, 0.5)
	require.Equal(t, []Vec{{2, 4}}, d.trail)
	require.Equal(t, &Vec{1, 2}, d.aim)
	require.Equal(t, uint8(1), d.N)
	require.Equal(t, []Vec{{0, 0}}, a.trail)
	require.Equal(t, &Vec{0, 2}, a.aim)
	require.False(t, ip.Teleport(&a, &b))
}
