package bitwire

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type dbgWriterSide struct {
	A uint8 `net:"bits=5"`
	B uint8 `net:"bits=8"`
	C bool
}

// dbgReaderSide disagrees with dbgWriterSide about A's width, the kind of
// one-bit mismatch a hand-written decoder in another language makes.
type dbgReaderSide struct {
	A uint8 `net:"bits=6"`
	B uint8 `net:"bits=8"`
	C bool
}

func TestDebugSentinelNamesTheMismatchedField(t *testing.T) {
	w := MustFor[dbgWriterSide]().WithDebug(true)
	r := MustFor[dbgReaderSide]().WithDebug(true)
	v := dbgWriterSide{A: 21, B: 200, C: true}
	data, err := w.Marshal(&v)
	require.NoError(t, err)
	require.Len(t, data, (5+8+1+3*8+7)/8)
	var got dbgReaderSide
	err = r.Unmarshal(data, &got)
	require.True(t, errors.Is(err, ErrMalformed), err)
	var fe *FieldError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "dbgReaderSide.A", fe.Path)
	require.Equal(t, 6, fe.Bit, "the sentinel's own bit")
	require.Equal(t, 1, strings.Count(err.Error(), "(at bit"), err.Error())

	// the same mismatch without debug decodes into garbage silently
	plain, err := MustFor[dbgWriterSide]().Marshal(&v)
	require.NoError(t, err)
	err = MustFor[dbgReaderSide]().Unmarshal(plain, &got)
	require.NoError(t, err)
	require.NotEqual(t, v.B, got.B)

	// debug mode has its own fingerprint, and turning it off restores it
	require.NotEqual(t, MustFor[dbgWriterSide]().Fingerprint(), w.Fingerprint())
	require.Equal(t, MustFor[dbgWriterSide]().Fingerprint(), w.WithDebug(false).Fingerprint())

	// agreeing sides round-trip in debug mode, full and delta
	var back dbgWriterSide
	require.NoError(t, w.Unmarshal(data, &back))
	require.Equal(t, v, back)
	cur := v
	cur.B = 7
	d, err := w.MarshalDelta(&v, &cur)
	require.NoError(t, err)
	require.NoError(t, w.UnmarshalDelta(d, &v, &back))
	require.Equal(t, cur, back)
}

type limitList struct {
	V    uint8 `net:"bits=8"`
	Next *limitList
}

type limitSlice struct {
	S []uint8 `net:"bits=8"`
	T string
}

func TestLimits(t *testing.T) {
	c := MustFor[limitSlice]().WithLimits(Limits{MaxLen: 4})
	_, err := c.Marshal(&limitSlice{S: []uint8{1, 2, 3, 4, 5}})
	require.True(t, errors.Is(err, ErrTooLong), err)
	_, err = c.Marshal(&limitSlice{T: "hello"})
	require.True(t, errors.Is(err, ErrTooLong), err)
	data, err := MustFor[limitSlice]().Marshal(&limitSlice{S: []uint8{1, 2, 3, 4, 5}})
	require.NoError(t, err)
	var got limitSlice
	err = c.Unmarshal(data, &got)
	require.True(t, errors.Is(err, ErrTooLong), err)
	require.NoError(t, MustFor[limitSlice]().Unmarshal(data, &got))

	deep := &limitList{}
	for i := 0; i < 10; i++ {
		deep = &limitList{V: uint8(i), Next: deep}
	}
	lc := MustFor[limitList]().WithLimits(Limits{MaxDepth: 5})
	_, err = lc.Marshal(deep)
	require.True(t, errors.Is(err, ErrInvalidValue), err)
	data, err = MustFor[limitList]().Marshal(deep)
	require.NoError(t, err)
	var l limitList
	err = lc.Unmarshal(data, &l)
	require.True(t, errors.Is(err, ErrMalformed), err)
	require.NoError(t, MustFor[limitList]().Unmarshal(data, &l))
}
