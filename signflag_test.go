package bitwire

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

// sfMsg holds signed adaptive values alone and in a group, behind an
// unsigned one, so that the sign flag sits after the first bits.
type sfMsg struct {
	U    uint16 `net:"bitlen"`
	A    int32  `net:"bitlen"`
	B, C int16  `net:"bitlen,group=g"`
	D    int64  `net:"bitlen"`
}

// TestSignFlagOnePass holds the encoder to its rule for the "any negative"
// flag: a negative value met before the flag is written sets it to 1 in
// the same pass; only a negative value after a flag written 0 starts the
// message again. Either way the bytes are those of the rule in
// wire-format.md: the flag is 1 exactly when a written value is negative.
func TestSignFlagOnePass(t *testing.T) {
	p, err := planOf(reflect.TypeFor[sfMsg]())
	require.NoError(t, err)
	cases := []struct {
		name    string
		v       sfMsg
		restart bool // one pass is not enough
		bits    int
	}{
		// U 9: prefix 4 + 3 bits; the flag; A 3: 5 + 1; the group B, C
		// shares its length (mode 1, 4 bits of it, 1 bit each); D 1: 6 + 1
		{"none negative", sfMsg{U: 9, A: 3, B: 1, C: 1, D: 1}, false, 7 + 1 + 6 + 7 + 7},
		// A negative: a sign bit on A, on B and C, and on D
		{"first signed value negative", sfMsg{U: 9, A: -3, B: 1, C: 1, D: 1}, false, 7 + 1 + 7 + 9 + 8},
		// A 0 is written after the flag, so the group's negative member
		// starts the message again
		{"negative after the flag", sfMsg{U: 9, B: -1, C: 1, D: 1}, true, 7 + 1 + 7 + 9 + 8},
		{"negative last", sfMsg{U: 9, A: 3, B: 1, C: 1, D: -1}, true, 7 + 1 + 7 + 9 + 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := bits.NewWriter(nil)
			e := (*options)(nil).encoder(w, nil, 0)
			err := e.encStruct(p, unsafe.Pointer(&c.v))
			if c.restart {
				require.Equal(t, errNeedSign, err)
			} else {
				require.NoError(t, err)
				require.Equal(t, c.bits, w.Len())
			}
			codec, err := For[sfMsg]()
			require.NoError(t, err)
			b, err := codec.Marshal(&c.v)
			require.NoError(t, err)
			require.Equal(t, (c.bits+7)/8, len(b))
			flagAt := 7 // after U
			require.Equal(t, c.v.A < 0 || c.v.B < 0 || c.v.C < 0 || c.v.D < 0, b[flagAt/8]>>(flagAt%8)&1 == 1)
			var got sfMsg
			require.NoError(t, codec.Unmarshal(b, &got))
			require.Equal(t, c.v, got)
		})
	}
}

// sfGroup's first signed values are a group's.
type sfGroup struct {
	U    uint16 `net:"bitlen"`
	B, C int16  `net:"bitlen,group=g"`
}

// TestSignFlagOnePassGroup: a group whose members are the message's first
// signed values writes the flag before its mode bit, 1 when a member is
// negative, in one pass.
func TestSignFlagOnePassGroup(t *testing.T) {
	p, err := planOf(reflect.TypeFor[sfGroup]())
	require.NoError(t, err)
	codec, err := For[sfGroup]()
	require.NoError(t, err)
	for _, v := range []sfGroup{{U: 1, B: 1, C: 1}, {U: 1, B: 1, C: -1}, {U: 1, B: -1, C: -1}} {
		w := bits.NewWriter(nil)
		e := (*options)(nil).encoder(w, nil, 0)
		require.NoError(t, e.encStruct(p, unsafe.Pointer(&v)))
		neg := v.B < 0 || v.C < 0
		// U 1: 4 + 1 bits; the flag; mode 1, the shared length in 4 bits,
		// B and C in 1 bit each, and a sign bit each when the flag is 1
		want := 5 + 1 + 1 + 4 + 2
		if neg {
			want += 2
		}
		require.Equal(t, want, w.Len(), "%+v", v)
		b, err := codec.Marshal(&v)
		require.NoError(t, err)
		require.Equal(t, neg, b[0]>>5&1 == 1, "%+v: the flag", v)
		var got sfGroup
		require.NoError(t, codec.Unmarshal(b, &got))
		require.Equal(t, v, got)
	}
}
