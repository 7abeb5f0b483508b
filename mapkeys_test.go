package bitwire

import (
	"encoding/hex"
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

type mapU8 struct {
	M map[uint8]uint8
}

// The reproducer of issue 14: map keys out of order (2, 1) decoded and
// re-encoded differently; a repeated key must fail as it is read.
func TestMapKeysOutOfOrder(t *testing.T) {
	c := MustFor[mapU8]()
	good, err := c.Marshal(&mapU8{M: map[uint8]uint8{1: 10, 2: 20}})
	require.NoError(t, err)
	require.Equal(t, "014e4102", hex.EncodeToString(good))

	swapped, _ := hex.DecodeString("41907002") // keys 2 then 1
	var v mapU8
	err = c.Unmarshal(swapped, &v)
	require.ErrorIs(t, err, ErrMalformed)
	require.Contains(t, err.Error(), "ascending")

	// The same key twice: the prefix of a two-entry map, then the entry
	// (1, 10) twice. An entry is coded as a struct of its key and value.
	type entry struct{ K, V uint8 }
	ec := MustFor[entry]()
	var w bits.Writer
	two, n := encBits(t, func(w *bits.Writer) error { return c.Encode(w, &mapU8{M: map[uint8]uint8{1: 10, 2: 20}}) })
	e1, n1 := encBits(t, func(w *bits.Writer) error { return ec.Encode(w, &entry{1, 10}) })
	_, n2 := encBits(t, func(w *bits.Writer) error { return ec.Encode(w, &entry{2, 20}) })
	copyBits(&w, two, n-n1-n2)
	copyBits(&w, e1, n1)
	copyBits(&w, e1, n1)
	err = c.Unmarshal(w.Bytes(), &v)
	require.ErrorIs(t, err, ErrMalformed)
	require.Contains(t, err.Error(), "{#1}")

	// A delta adding a key the baseline already has is refused as it is
	// read: the delta from {2: 10} adding key 1, read against {1: 10}.
	base := mapU8{M: map[uint8]uint8{1: 10}}
	bad, err := c.MarshalDelta(&mapU8{M: map[uint8]uint8{2: 10}}, &mapU8{M: map[uint8]uint8{1: 20, 2: 10}})
	require.NoError(t, err)
	err = c.UnmarshalDelta(bad, &base, &v)
	require.ErrorIs(t, err, ErrMalformed)
	require.Contains(t, err.Error(), "duplicate map key")
}

func encBits(t *testing.T, f func(w *bits.Writer) error) ([]byte, int) {
	t.Helper()
	var w bits.Writer
	require.NoError(t, f(&w))
	return w.Bytes(), w.Len()
}

// copyBits appends the first n bits of data to w.
func copyBits(w *bits.Writer, data []byte, n int) {
	r := bits.NewReader(data)
	for ; n > 0; n -= min(n, 8) {
		v, _ := r.ReadBits(min(n, 8))
		w.WriteBits(v, min(n, 8))
	}
}

// A map node knows its key type's range and its key and value sizes from
// compile time: decoding reads them from the node, not through reflect.
func TestMapNodeKeyRangeAtCompileTime(t *testing.T) {
	type maps struct {
		B map[bool]int32
		U map[uint8][3]float64
		I map[int16]string
		S map[string]bool
	}
	p, err := planOf(reflect.TypeFor[maps]())
	require.NoError(t, err)
	want := []struct {
		keys       int
		ksize, vsz uintptr
	}{{2, 1, 4}, {1 << 8, 1, 24}, {1 << 16, 2, 16}, {math.MaxInt32, 16, 1}}
	for i, w := range want {
		n := p.fields[i].node
		require.Equal(t, w.keys, n.count, p.fields[i].name)
		require.Equal(t, w.ksize, n.key.size, p.fields[i].name)
		require.Equal(t, w.vsz, n.elem.size, p.fields[i].name)
	}
}

// Go finds a map's −0 key by +0 (they are ==), but a float key is coded
// raw, sign and all: a delta between maps whose zero keys differ in sign
// must carry the new key, and Equal must tell the two apart.
func TestMapDeltaZeroKeySign(t *testing.T) {
	type m struct {
		M map[float64]uint8
		N map[float32]int8
	}
	negZero := math.Copysign(0, -1)
	c := MustFor[m]()
	for _, tc := range []struct{ from, to float64 }{{negZero, 0}, {0, negZero}, {negZero, negZero}} {
		mk := func(k float64) *m {
			return &m{M: map[float64]uint8{k: 1, 2: 3}, N: map[float32]int8{float32(k): -1}}
		}
		base, cur := mk(tc.from), mk(tc.to)
		require.Equal(t, tc.from == tc.to && math.Signbit(tc.from) == math.Signbit(tc.to), c.Equal(base, cur), "Equal from %v to %v", tc.from, tc.to)
		for _, cc := range []*Codec[m]{c, c.generalOnly()} {
			data, err := cc.MarshalDelta(base, cur)
			require.NoError(t, err)
			var got m
			require.NoError(t, cc.UnmarshalDelta(data, mk(tc.from), &got))
			require.Len(t, got.M, 2)
			for k := range got.M {
				if k == 0 {
					require.Equal(t, math.Signbit(tc.to), math.Signbit(k), "from %v to %v: the decoded key's sign", tc.from, tc.to)
				}
			}
			for k := range got.N {
				require.Equal(t, math.Signbit(tc.to), math.Signbit(float64(k)), "from %v to %v: the decoded float32 key's sign", tc.from, tc.to)
			}
			require.True(t, cc.Equal(cur, &got))
		}
	}
}
