package bitwire

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// mixFields makes cur a copy of base whose exported top-level fields are
// each, with probability p, taken from other instead: a delta then has a
// random subset of changed fields.
func mixFields[T any](base, other *T, rng *rand.Rand, p float64) {
	b, o := reflect.ValueOf(base).Elem(), reflect.ValueOf(other).Elem()
	for i := 0; i < b.NumField(); i++ {
		if b.Field(i).CanSet() && rng.Float64() < p {
			b.Field(i).Set(o.Field(i))
		}
	}
}

// deltaProperty checks, for one seed, that UnmarshalDelta(MarshalDelta(base,
// cur), Quantize(base)) equals Quantize(cur) for a cur sharing a random part
// of base, for an unrelated cur, and for cur = base (which costs one bit a
// field). mk must return a fresh, equal value for equal seeds.
func deltaProperty[T any](t *testing.T, c *Codec[T], seed int64, mk func(int64) *T, ign func(*T) *T) {
	t.Helper()
	for _, p := range []float64{0, 0.3, 1} {
		rng := rand.New(rand.NewSource(seed))
		cur := mk(seed)
		mixFields(cur, mk(seed+7919), rng, p)
		want := mk(seed)
		mixFields(want, mk(seed+7919), rand.New(rand.NewSource(seed)), p)
		require.NoError(t, c.Quantize(want))

		base := mk(seed)
		qbase := mk(seed)
		require.NoError(t, c.Quantize(qbase))
		data, err := c.MarshalDelta(base, cur)
		require.NoError(t, err, "seed %d p %v", seed, p)
		var got T
		require.NoError(t, c.UnmarshalDelta(data, qbase, &got), "seed %d p %v", seed, p)
		require.Equal(t, ign(want), ign(&got), "seed %d p %v: delta round trip", seed, p)

		// decoding in place over the baseline gives the same
		inPlace := mk(seed)
		require.NoError(t, c.Quantize(inPlace))
		require.NoError(t, c.UnmarshalDelta(data, inPlace, inPlace), "seed %d p %v", seed, p)
		require.Equal(t, ign(want), ign(inPlace), "seed %d p %v: in-place delta", seed, p)

		// the baseline was not touched
		fresh := mk(seed)
		require.NoError(t, c.Quantize(fresh))
		require.Equal(t, ign(fresh), ign(qbase), "seed %d p %v: baseline modified", seed, p)

		if p == 0 {
			// nothing changed: one bit a top-level field
			require.Equal(t, (len(c.p.fields)+7)/8, len(data), "seed %d: unchanged delta", seed)
		}
	}
}
