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

// tumblePred is tumbleBody with its orientation predicted from two
// baselines.
type tumblePred struct {
	Rot [4]float32 `net:"quat,bits=9,pred"`
}

// BenchmarkQuatDeltaBitsPredicted measures the deltas of
// BenchmarkQuatDeltaBits coded from two baselines, the two ticks before
// (MarshalPredicted: each orientation against its last rotation step
// applied again), per changed quaternion, its changed bit included. Run
// with
//
//	go test -run '^$' -bench 'QuatDeltaBits(Predicted)?$' -benchtime 1x .
func BenchmarkQuatDeltaBitsPredicted(b *testing.B) {
	b.Run("spinning", func(b *testing.B) { quatDeltaBitsPredicted(b, tumble.NewSpinning(1, 256)) })
	b.Run("settling", func(b *testing.B) { quatDeltaBitsPredicted(b, tumble.New(1, 256)) })
}

func quatDeltaBitsPredicted(b *testing.B, w *tumble.World) {
	c := MustFor[tumblePred]()
	const ticks = 400
	older, prev := make([]tumblePred, w.Len()), make([]tumblePred, w.Len())
	for i := range prev {
		prev[i].Rot = w.Rot(i)
	}
	w.Step()
	for i := range prev {
		older[i], prev[i].Rot = prev[i], w.Rot(i)
	}
	var wr bits.Writer
	changed, total := 0, 0
	for t := 0; t < ticks; t++ {
		w.Step()
		for i := range prev {
			cur := tumblePred{Rot: w.Rot(i)}
			if !c.Equal(&prev[i], &cur) {
				wr.Reset(nil)
				if err := c.EncodePredicted(&wr, &older[i], &prev[i], &cur); err != nil {
					b.Fatal(err)
				}
				changed++
				total += wr.Len()
			}
			older[i], prev[i] = prev[i], cur
		}
	}
	if changed == 0 {
		b.Fatal("nothing changed")
	}
	b.ReportMetric(float64(total)/float64(changed), "bits/changed")
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

// BenchmarkQuatDeltaBitsModel measures a model trained on one half of a
// tumble recording (the first 200 ticks) on the other half (the next 200),
// beside the adaptive code on the same half. Run with
//
//	go test -run '^$' -bench QuatDeltaBitsModel -benchtime 1x .
func BenchmarkQuatDeltaBitsModel(b *testing.B) {
	b.Run("spinning", func(b *testing.B) { quatDeltaBitsModel(b, tumble.NewSpinning(1, 256)) })
	b.Run("settling", func(b *testing.B) { quatDeltaBitsModel(b, tumble.New(1, 256)) })
}

func quatDeltaBitsModel(b *testing.B, w *tumble.World) {
	c := MustFor[tumbleBody]()
	const ticks = 200
	type pair struct{ base, cur tumbleBody }
	record := func() []pair {
		var out []pair
		prev := make([]tumbleBody, w.Len())
		for i := range prev {
			prev[i].Rot = w.Rot(i)
		}
		for range ticks {
			w.Step()
			for i := range prev {
				cur := tumbleBody{Rot: w.Rot(i)}
				if !c.Equal(&prev[i], &cur) {
					out = append(out, pair{prev[i], cur})
				}
				prev[i] = cur
			}
		}
		return out
	}
	train, test := record(), record()
	tr := c.NewTrainer()
	for i := range train {
		if err := tr.Add(&train[i].base, &train[i].cur); err != nil {
			b.Fatal(err)
		}
	}
	m, err := tr.Model()
	if err != nil {
		b.Fatal(err)
	}
	cm := c.WithModel(m)
	var wr bits.Writer
	size := func(c *Codec[tumbleBody]) int {
		total := 0
		for i := range test {
			wr.Reset(nil)
			if err := c.EncodeDelta(&wr, &test[i].base, &test[i].cur); err != nil {
				b.Fatal(err)
			}
			total += wr.Len()
		}
		return total
	}
	b.ReportMetric(float64(size(c))/float64(len(test)), "bits/changed")
	b.ReportMetric(float64(size(cm))/float64(len(test)), "model-bits/changed")
}
