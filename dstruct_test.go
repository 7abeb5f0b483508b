package bitwire

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

type dVec3 struct{ X, Y, Z float32 }

type dBody struct {
	Pos dVec3 `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"`
}

type dBodyFlat struct {
	X float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"`
	Y float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"`
	Z float32 `net:"q,min=-512,max=512,prec=0.01,dmin=-2,dmax=2"`
}

type dNoCoding struct {
	Pos dVec3 `net:"dmin=-2,dmax=2"`
}

// Issue 14: a dmin/dmax window on a struct-typed field applies to each leaf
// that inherits the field's coding, in value units, as it does on a leaf.
func TestDeltaWindowOnStructField(t *testing.T) {
	c, err := For[dBody]()
	require.NoError(t, err)
	flat := MustFor[dBodyFlat]()
	base := dBody{Pos: dVec3{10, 20, 30}}
	cur := dBody{Pos: dVec3{10.5, 20, 28.25}} // within ±2 (value units)
	d, err := c.MarshalDelta(&base, &cur)
	require.NoError(t, err)
	fb, fc := dBodyFlat{10, 20, 30}, dBodyFlat{10.5, 20, 28.25}
	// The struct's changed bit, then the same leaves as the flat struct.
	w1, w2 := bitsOf(t, func() (int, error) { return deltaLen(c, &base, &cur) }), bitsOf(t, func() (int, error) { return deltaLen(flat, &fb, &fc) })
	require.Equal(t, w2+1, w1)
	var got dBody
	require.NoError(t, c.UnmarshalDelta(d, &base, &got))
	require.InDelta(t, 10.5, got.Pos.X, 1e-4)
	require.InDelta(t, 28.25, got.Pos.Z, 1e-4)

	_, err = For[dNoCoding]()
	require.ErrorIs(t, err, ErrBadTag)
	require.Contains(t, err.Error(), "dNoCoding.Pos")
}

func deltaLen[T any](c *Codec[T], b, v *T) (int, error) {
	var w bits.Writer
	err := c.EncodeDelta(&w, b, v)
	return w.Len(), err
}

func bitsOf(t *testing.T, f func() (int, error)) int {
	t.Helper()
	n, err := f()
	require.NoError(t, err)
	return n
}
