//go:build go1.24

package fields

import (
	"math/rand/v2"
	"testing"

	"github.com/bitwire/bitwire/bits"
)

// BenchmarkQuatDelta writes and reads quaternion deltas: "relative" of
// small turns, "crossing" of small turns whose largest component changes
// (the baseline re-expressed), "absolute" of unrelated rotations.
func BenchmarkQuatDelta(b *testing.B) {
	q, _ := NewQuat(9)
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 256
	var near, cross, far [n][2]uint64
	var bases, crossBases [n][4]float64
	for i := range n {
		// Two largest components about equal, a turn of about 0.2° apart:
		// the largest changes about half the time; pairs where it does not
		// are drawn again.
		for {
			v := randomRot(rng)
			v[0], v[1] = 0.6, 0.6+float32(rng.Float64()-0.5)*0.004
			u := normalize([4]float64{float64(v[0]), float64(v[1]), float64(v[2]) * 0.3, float64(v[3]) * 0.3})
			t := normalize([4]float64{u[0] + 0.002, u[1] - 0.002, u[2], u[3]})
			bp := mustPack(b, q, [4]float32{float32(u[0]), float32(u[1]), float32(u[2]), float32(u[3])})
			cp := mustPack(b, q, [4]float32{float32(t[0]), float32(t[1]), float32(t[2]), float32(t[3])})
			if bp&3 != cp&3 {
				cross[i] = [2]uint64{bp, cp}
				crossBases[i] = u
				break
			}
		}
		v := randomRot(rng)
		near[i][0] = mustPack(b, q, v)
		w := [4]float64{float64(v[0]) + 0.004, float64(v[1]), float64(v[2]), float64(v[3])}
		w = normalize(w)
		near[i][1] = mustPack(b, q, [4]float32{float32(w[0]), float32(w[1]), float32(w[2]), float32(w[3])})
		far[i] = [2]uint64{near[i][0], mustPack(b, q, randomRot(rng))}
		bases[i] = [4]float64{float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])}
	}
	for _, c := range []struct {
		name  string
		pairs *[n][2]uint64
		bases *[n][4]float64
	}{{"relative", &near, &bases}, {"crossing", &cross, &crossBases}, {"absolute", &far, &bases}} {
		var w bits.Writer
		b.Run("Write/"+c.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if i%n == 0 {
					w.Reset(w.Bytes()[:0])
				}
				s := NewQuatDeltaState()
				p := c.pairs[i%n]
				q.WriteDelta(&w, &s, p[0], true, p[1])
			}
		})
		w.Reset(nil)
		s := NewQuatDeltaState()
		for i := range n {
			s = NewQuatDeltaState()
			q.WriteDelta(&w, &s, c.pairs[i][0], true, c.pairs[i][1])
		}
		data := w.Bytes()
		b.Run("Read/"+c.name, func(b *testing.B) {
			var r bits.Reader
			for i := 0; b.Loop(); i++ {
				if i%n == 0 {
					r.Reset(data)
				}
				s := NewQuatDeltaState()
				base := c.bases[i%n]
				if _, err := q.ReadDelta(&r, &s, &base); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPack32 packs 256 random float32 rotations by QuatGrid.Pack32 (9
// bits a component), one a loop.
func BenchmarkPack32(b *testing.B) {
	q, _ := NewQuat(9)
	g := q.Grid()
	rng := rand.New(rand.NewPCG(2, 2))
	var vs [256][4]float32
	for i := range vs {
		vs[i] = randomRot(rng)
	}
	var sink uint64
	for i := 0; b.Loop(); i++ {
		v := &vs[i%len(vs)]
		u, _ := g.Pack32(v[0], v[1], v[2], v[3])
		sink += u
	}
	if sink == 1 {
		b.Log(sink)
	}
}
