package bench

import (
	"math/rand/v2"

	"github.com/bitwire/bitwire"
)

// The bitwire-model subjects of the delta workloads: a Codec with a model
// (Codec.WithModel) trained on pairs of the same workload made from other
// seeds than the measured one (world901-delta: 20 pairs of worlds;
// snapshot64-delta: 200 consecutive ticks of 4 other matches), so the
// figure is that of a model trained offline on recorded traffic.

// trainedCodec returns the codec of T with a model trained on pairs.
func trainedCodec[T any](pairs func(add func(base, cur *T))) *bitwire.Codec[T] {
	c := bitwire.MustFor[T]()
	tr := c.NewTrainer()
	pairs(func(base, cur *T) {
		if err := tr.Add(base, cur); err != nil {
			panic(err)
		}
	})
	m, err := tr.Model()
	if err != nil {
		panic(err)
	}
	return c.WithModel(m)
}

// bitwireDeltaModel is bitwireDeltaCodec with codec c.
func bitwireDeltaModel[T any](c *bitwire.Codec[T], base, cur *T, eq func(a, b *T) bool) Subject {
	recv := deltaBase(base)
	var buf []byte
	var out T
	return Subject{
		Name: "bitwire-model",
		Encode: func() ([]byte, error) {
			var err error
			buf, err = c.AppendDelta(buf[:0], base, cur)
			return buf, err
		},
		Decode: func(data []byte) error { return c.UnmarshalDelta(data, &recv, &out) },
		Check:  checkDelta("bitwire-model", &out, cur, eq),
	}
}

func init() {
	register(WWorldDelta, func() Subject {
		c := trainedCodec(func(add func(base, cur *World)) {
			for s := range uint64(20) {
				b, c := makeWorlds(rand.New(rand.NewPCG(s+1, 77)))
				add(&b, &c)
			}
		})
		base, cur := MakeWorlds()
		return bitwireDeltaModel(c, &base, &cur, (*World).Equal)
	})
	register(WSnapDelta, func() Subject {
		c := trainedCodec(func(add func(base, cur *DeltaSnapshot)) {
			for s := range uint64(4) {
				m := newMatch(rand.New(rand.NewPCG(s+1, 77)))
				prev := m.State()
				for range 200 {
					next := m.Step()
					add(&prev, &next)
					prev = next
				}
			}
		})
		base, cur := MakeSnapshotDeltas()
		return bitwireDeltaModel(c, &base, &cur, (*DeltaSnapshot).Equal)
	})
}
