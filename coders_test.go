package bitwire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every leaf coding has a complete row: a size rule, a way to compare
// values (a key, or its own equality), its schema and a name; a coding
// has a window unit exactly when it has a key to count in, and a fixed
// width exactly when it has no separate bounds. Containers have a name
// only. A coding added without its row fails here.
func TestCoderRowsComplete(t *testing.T) {
	for c := cBool; c <= cMap; c++ {
		r := &coders[c]
		require.NotEmpty(t, r.name, "code %d", c)
		if c >= cStruct {
			require.False(t, r.leaf(), r.name)
			continue
		}
		require.True(t, r.leaf(), r.name)
		require.True(t, (r.width != nil) != (r.minBits != nil && r.maxBits != nil), "%s: a width or both bounds", r.name)
		require.True(t, r.key != nil || r.eq != nil, "%s: a key or an equality", r.name)
		require.NotNil(t, r.schema, r.name)
		require.True(t, r.fits != nil && r.fill != nil, "%s: the types it fits and its tag check", r.name)
		if r.step != nil {
			require.NotNil(t, r.key, "%s: a window counts in keys", r.name)
			require.NotNil(t, r.storeKey, "%s: a window decodes to a key", r.name)
		}
		if r.group {
			require.NotNil(t, r.signed, "%s: a group knows its signs", r.name)
		}
	}
}

// A coding's code is its number in the schema fingerprint's input, so the
// codes are frozen: a renumbering changes every fingerprint. The codings a
// tag names are exactly those the tag grammar documents.
func TestCodingNumbers(t *testing.T) {
	want := []string{1: "bool", "bits", "range", "q", "float", "fixed", "varint", "bitlen",
		"string", "bytes", "quat", "time", "struct", "array", "slice", "ptr", "map"}
	require.Len(t, coders, len(want))
	var tagged []string
	for c := range coders {
		require.Equal(t, want[c], coders[c].name, "code %d", c)
		require.Equal(t, want[c], code(c).String())
		if c > 0 {
			b, ok := codingByte(want[c])
			require.True(t, ok)
			require.Equal(t, byte(c), b)
		}
		if coders[c].tag {
			tagged = append(tagged, coders[c].name)
		}
	}
	require.Equal(t, []string{"range", "q", "fixed", "varint", "bitlen", "quat"}, tagged)
	_, ok := codingByte("")
	require.False(t, ok)
}

// The row's sizes are those of the bytes the codec writes: for every leaf
// coding, extreme values encode to a number of bits within the rows'
// bounds, summed over the struct's fields.
func TestCoderRowSizes(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
	}{
		{"bool", &confBool{true}}, {"bits", &confBits{2047, -256}}, {"range", &confRange{5000, -300}},
		{"q", &confQ{511, 1}}, {"float", &confFloat{1, 2}}, {"varint", &confVarint{1 << 63, -1 << 31}},
		{"bitlen", &confBitlenU{1<<32 - 1, 255}}, {"quat", &confQuat{[4]float32{0, 0, 0, 1}}},
		{"strings", &confString{"abc", []byte("de")}},
	} {
		p, _, err := valuePointer(c.v)
		require.NoError(t, err)
		data, err := Marshal(c.v)
		require.NoError(t, err)
		lo, hi := 0, 0
		for _, f := range p.fields {
			lo += minBitsNode(f.node)
			if h := maxBitsNode(f.node, map[*plan]bool{}); h >= 0 && hi >= 0 {
				hi += h
			} else {
				hi = -1
			}
			if f.node.row.width != nil {
				require.Equal(t, f.node.row.width(f.node), minBitsNode(f.node), c.name)
			}
		}
		// Marshal pads to a byte: the value took len*8-7 .. len*8 bits
		require.LessOrEqual(t, lo, len(data)*8, c.name)
		if hi >= 0 {
			require.GreaterOrEqual(t, hi, len(data)*8-7, c.name)
		}
	}
}
