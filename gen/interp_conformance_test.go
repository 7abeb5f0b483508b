package gen_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/interp"
	"github.com/bitwire/bitwire/replicate"
)

// The interpolation corpus: a Go replicate stream of moving, turning and
// now and then teleporting entities under 20% loss and arrival jitter,
// with Go's interp.Clock fed every accepted packet and Go's Interpolator
// sampling every entity at the clock's render tick each tick. The
// TypeScript Clock and Interpolator (clients/ts/src/interp.ts) get the
// same packets and arrival times and must give the same clock figures and
// the same states (within float rounding of the trigonometry).

type icVec struct {
	X float32 `net:"q,min=-500,max=500,prec=0.01"`
	Y float32 `net:"q,min=-500,max=500,prec=0.01"`
}

type icPart struct {
	ID  uint8   `net:"id"`
	Off float32 `net:"q,min=-10,max=10,prec=0.01"`
}

type icMob struct {
	Pos   icVec
	Rot   [4]float32 `net:"quat,bits=12"`
	Speed float64    `net:"fixed,prec=0.25"`
	Hp    uint8      `net:"range,min=0,max=100"`
	Parts []icPart   `net:",maxlen=4"`
	Aim   *icVec
}

type icSample struct {
	ID       uint32          `json:"id"`
	Has      bool            `json:"has"`
	From     uint32          `json:"from"`
	To       uint32          `json:"to"`
	Frac     float64         `json:"frac"`
	Held     bool            `json:"held"`
	Teleport bool            `json:"teleport"`
	Value    json.RawMessage `json:"value"`
	Flat     []float64       `json:"-"`
}

// icFlat is a sampled state as numbers, in field order, for the C# runner.
func icFlat(m *icMob) []float64 {
	f := []float64{float64(m.Pos.X), float64(m.Pos.Y), float64(m.Rot[0]), float64(m.Rot[1]), float64(m.Rot[2]), float64(m.Rot[3]), m.Speed, float64(m.Hp), float64(len(m.Parts))}
	for _, p := range m.Parts {
		f = append(f, float64(p.ID), float64(p.Off))
	}
	if m.Aim != nil {
		f = append(f, 1, float64(m.Aim.X), float64(m.Aim.Y))
	} else {
		f = append(f, 0)
	}
	return f
}

type icTick struct {
	Packet  string     `json:"packet"` // "" when none arrived
	At      int64      `json:"at"`     // its arrival, ns
	Now     int64      `json:"now"`    // when the frame is drawn, ns
	Tick    float64    `json:"tick"`
	Drift   float64    `json:"drift"`
	Jitter  float64    `json:"jitter"`
	Delay   float64    `json:"delay"`
	Render  float64    `json:"render"`
	Samples []icSample `json:"samples"`
}

func icRot(r *rand.Rand) [4]float32 {
	q := randQuat(r)
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

func icCorpus(t *testing.T, ticks int) []icTick {
	r := rand.New(rand.NewSource(41))
	c := bitwire.MustFor[icMob]()
	srv, _ := replicate.NewServer(c)
	peer, _ := srv.NewPeer(replicate.PeerConfig[icMob]{})
	cl, _ := replicate.NewClient(c)
	clock := interp.NewClock(30)
	ip, err := interp.New(c, interp.Config[icMob]{Threshold: 50})
	if err != nil {
		t.Fatal(err)
	}
	mobs := make([]icMob, 4)
	for i := range mobs {
		mobs[i] = icMob{Pos: icVec{float32(i * 10), 0}, Rot: icRot(r), Speed: 1, Hp: 50, Parts: []icPart{{1, 0}, {2, 1}}}
	}
	mobs[3].Aim = &icVec{1, 1}
	var out []icTick
	start := int64(1_000_000_000_000)
	for tick := 1; tick <= ticks; tick++ {
		_ = srv.Advance(uint32(tick))
		for i := range mobs {
			m := &mobs[i]
			m.Pos.X = float32(math.Max(-490, math.Min(490, float64(m.Pos.X)+r.Float64()*2-0.5)))
			m.Pos.Y += 0.3
			if r.Intn(60) == 0 {
				m.Pos.X = -m.Pos.X / 2 // a teleport, most of the time
			}
			if r.Intn(4) == 0 {
				m.Rot = icRot(r)
			}
			m.Speed = float64(r.Intn(20)) / 4
			m.Parts[1].Off = float32(math.Max(-9, math.Min(9, float64(m.Parts[1].Off)+r.Float64()-0.5)))
			if m.Aim != nil {
				m.Aim.X += 0.5
			}
			if _, err := srv.Set(uint32(i+1), m); err != nil {
				t.Fatal(err)
			}
		}
		pkt, ok, err := peer.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		sent := start + int64(tick)*33_333_333
		var rec icTick
		rec.Now = sent + 45_000_000
		if ok && r.Intn(5) != 0 {
			rec.At = sent + 10_000_000 + int64(r.Intn(40_000_000))
			if info, err := cl.Decode(pkt); err == nil {
				rec.Packet = hex.EncodeToString(pkt)
				clock.Observe(info.Tick, time.Unix(0, rec.At))
				_ = peer.Ack(cl.Ack())
			}
		}
		now := time.Unix(0, rec.Now)
		rec.Tick, rec.Drift, rec.Jitter, rec.Delay, rec.Render = clock.Tick(now), clock.Drift(), clock.Jitter(), clock.Delay(), clock.RenderTick(now)
		for id := uint32(1); id <= 4; id++ {
			var m icMob
			s, has := ip.Sample(cl, id, rec.Render, &m)
			smp := icSample{ID: id, Has: has}
			if has {
				smp.From, smp.To, smp.Frac, smp.Held, smp.Teleport = s.From, s.To, s.Frac, s.Held, s.Teleport
				smp.Value, _ = json.Marshal(m)
				smp.Flat = icFlat(&m)
			}
			rec.Samples = append(rec.Samples, smp)
		}
		out = append(out, rec)
	}
	return out
}

func interpTS(t *testing.T, node, dir string) {
	cases := icCorpus(t, 600)
	teleports := 0
	for _, c := range cases {
		for _, s := range c.Samples {
			if s.Teleport {
				teleports++
			}
		}
	}
	if teleports == 0 {
		t.Fatal("the corpus has no teleport")
	}
	b, _ := json.Marshal(cases)
	path := filepath.Join(dir, "interp.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "build/test/interp.js"), path).CombinedOutput()
	t.Logf("%d teleports sampled", teleports)
	expectAll(t, "TypeScript", len(cases)*5, out, err)
}

// The C# Clock and Interpolator (clients/cs/Interp.cs) on the same
// stream: Go's clock figures and sampled states, each tick.
func TestInterpCSharp(t *testing.T) {
	mcs, mono := csTools(t)
	cases := icCorpus(t, 600)
	var lines strings.Builder
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, c := range cases {
		pkt := c.Packet
		if pkt == "" {
			pkt = "-"
		}
		fmt.Fprintf(&lines, "T\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", pkt, c.At, c.Now, g(c.Tick), g(c.Drift), g(c.Jitter), g(c.Delay), g(c.Render))
		for _, s := range c.Samples {
			var flat []string
			for _, v := range s.Flat {
				flat = append(flat, g(v))
			}
			fmt.Fprintf(&lines, "S\t%d\t%t\t%d\t%d\t%s\t%t\t%t\t%s\n", s.ID, s.Has, s.From, s.To, g(s.Frac), s.Held, s.Teleport, strings.Join(flat, ","))
		}
	}
	var src strings.Builder
	if err := gen.CSharp(&src, "IC", gen.Named("Mob", bitwire.MustFor[icMob]().Schema())); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/Interp.cs", "../clients/cs/test/InterpRunner.cs")
	path := filepath.Join(filepath.Dir(exe), "interp.tsv")
	if err := os.WriteFile(path, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mono, exe, path).CombinedOutput()
	expectAll(t, "C#", len(cases)*5, out, err)
}
