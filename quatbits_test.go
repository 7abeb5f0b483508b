package bitwire

import (
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/internal/tumble"
)

// tumbleBody is one rigid body's orientation, as games send it.
type tumbleBody struct {
	Rot [4]float32 `net:"quat,bits=9"`
}

// BenchmarkQuatDeltaBits measures the size of deltas of tumbling rigid
// bodies' orientations (internal/tumble: rotations of up to 2° a tick;
// spinning: every body turning at a speed uniform in 0..2° a tick;
// settling: damping, collisions, sleep), each against the previous tick:
// bits/changed is the cost of a changed quaternion, its changed bit
// included; switch% the share of changes whose largest component differs
// from the baseline's. Run with
//
//	go test -run '^$' -bench QuatDeltaBits -benchtime 1x .
func BenchmarkQuatDeltaBits(b *testing.B) {
	b.Run("spinning", func(b *testing.B) { quatDeltaBits(b, tumble.NewSpinning(1, 256)) })
	b.Run("settling", func(b *testing.B) { quatDeltaBits(b, tumble.New(1, 256)) })
}

func quatDeltaBits(b *testing.B, w *tumble.World) {
	c := MustFor[tumbleBody]()
	const ticks = 400
	prev := make([]tumbleBody, w.Len())
	for i := range prev {
		prev[i].Rot = w.Rot(i)
	}
	var wr bits.Writer
	changed, total, switched := 0, 0, 0
	for t := 0; t < ticks; t++ {
		w.Step()
		for i := range prev {
			cur := tumbleBody{Rot: w.Rot(i)}
			if !c.Equal(&prev[i], &cur) {
				wr.Reset(nil)
				if err := c.EncodeDelta(&wr, &prev[i], &cur); err != nil {
					b.Fatal(err)
				}
				changed++
				total += wr.Len()
				if largest(prev[i].Rot) != largest(cur.Rot) {
					switched++
				}
			}
			prev[i] = cur
		}
	}
	if changed == 0 {
		b.Fatal("nothing changed")
	}
	b.ReportMetric(float64(total)/float64(changed), "bits/changed")
	b.ReportMetric(100*float64(switched)/float64(changed), "switch%")
	b.ReportMetric(float64(changed)/float64(ticks*len(prev)), "changed/body")
}

// largest returns the component of largest magnitude.
func largest(q [4]float32) int {
	m := 0
	for i := 1; i < 4; i++ {
		if abs32(q[i]) > abs32(q[m]) {
			m = i
		}
	}
	return m
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
