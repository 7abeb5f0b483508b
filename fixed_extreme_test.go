package bitwire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Step counts of a fixed-point field are valid only when they survive the
// trip through the field's float type. With an extreme prec that fails even
// for small counts: i·prec overflows to ±Inf (a huge prec) or lands among the
// subnormals, where neighbouring counts share one value (a tiny prec). The
// decoder must refuse those counts (ErrOutOfRange) rather than store a value
// that re-encodes to other bits.
func TestFixedExtremePrecision(t *testing.T) {
	type steps struct {
		I int64 `net:"bitlen"` // the same bits as a fixed field's step count
	}
	type huge struct {
		F float64 `net:"fixed,prec=1e300"`
	}
	type tiny struct {
		F float32 `net:"fixed,prec=1e-45"`
	}
	count := func(i int64) []byte {
		b, err := Marshal(&steps{I: i})
		require.NoError(t, err)
		return b
	}

	var h huge
	require.NoError(t, Unmarshal(count(3), &h))
	require.Equal(t, 3e300, h.F)
	err := Unmarshal(count(1<<40), &h) // 1.1e312: +Inf in a float64
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = Marshal(&huge{F: 1.5e308})
	require.NoError(t, err) // 1.5e8 steps: values near the largest float64 stay encodable

	var s tiny
	require.NoError(t, Unmarshal(count(1), &s))
	require.Equal(t, float32(1e-45), s.F)
	err = Unmarshal(count(2), &s) // 2e-45 rounds to the float32 of 1 step
	require.ErrorIs(t, err, ErrOutOfRange)
}

// A prec so fine that one step is 0 in the field's float type leaves the
// field nothing to hold but 0: every count decodes to the same value, so
// encodings are not unique. For refuses the tag.
func TestFixedPrecBelowTheType(t *testing.T) {
	type f32 struct {
		F float32 `net:"fixed,prec=1e-300"`
	}
	type f64 struct {
		F float64 `net:"fixed,prec=1e-330"` // parses to 0: NewFixed refuses it
	}
	_, err := For[f32]()
	require.ErrorIs(t, err, ErrBadTag)
	require.ErrorContains(t, err, "f32.F")
	require.ErrorContains(t, err, "one step of 1e-300 is 0 in float32")
	_, err = For[f64]()
	require.ErrorIs(t, err, ErrBadTag)

	// The finest precs that hold a step stay valid.
	type fine struct {
		F float32 `net:"fixed,prec=1e-45"`
		G float64 `net:"fixed,prec=5e-324"`
	}
	_, err = For[fine]()
	require.NoError(t, err)
}
