package bitwire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

type MsgMove struct {
	X, Y float32 `net:"q,min=-512,max=512,prec=0.01"`
}

type MsgChat struct {
	Text string `net:",maxlen=140"`
}

type MsgFire struct {
	Weapon uint8 `net:"bits=4"`
}

func TestUnionRoundTrip(t *testing.T) {
	u, err := NewUnion(MsgMove{}, &MsgChat{}, MsgFire{})
	require.NoError(t, err)
	require.Equal(t, 2, u.TagBits())
	for _, v := range []any{MsgMove{X: 1.5, Y: -2}, &MsgChat{Text: "gg"}, MsgFire{Weapon: 9}} {
		data, err := u.Marshal(v)
		require.NoError(t, err)
		got, err := u.Unmarshal(data)
		require.NoError(t, err)
		switch m := got.(type) {
		case *MsgMove:
			require.Equal(t, v, *m)
		case *MsgChat:
			require.Equal(t, v, m)
		case *MsgFire:
			require.Equal(t, v, *m)
		default:
			t.Fatalf("unexpected %T", got)
		}
	}
	// the tag is 2 bits, then the message: MsgFire is 2+4 bits, one byte
	data, err := u.Marshal(MsgFire{Weapon: 9})
	require.NoError(t, err)
	require.Equal(t, []byte{2 | 9<<2}, data)
}

func TestUnionSeveralInOnePacket(t *testing.T) {
	u, err := NewUnion(MsgMove{}, MsgChat{}, MsgFire{})
	require.NoError(t, err)
	var w bits.Writer
	msgs := []any{MsgFire{Weapon: 1}, MsgChat{Text: "hi"}, MsgMove{X: 3}}
	for _, m := range msgs {
		require.NoError(t, u.Encode(&w, m))
	}
	r := bits.NewReader(w.Bytes())
	for _, m := range msgs {
		got, err := u.Decode(r)
		require.NoError(t, err)
		require.Equal(t, m, reflectDeref(got))
	}
}

func reflectDeref(v any) any {
	switch m := v.(type) {
	case *MsgMove:
		return *m
	case *MsgChat:
		return *m
	case *MsgFire:
		return *m
	}
	return v
}

func TestUnionErrors(t *testing.T) {
	u, err := NewUnion(MsgMove{}, MsgChat{}, MsgFire{})
	require.NoError(t, err)
	// tag 3 has no variant
	_, err = u.Unmarshal([]byte{3})
	require.True(t, errors.Is(err, ErrUnknownTag), err)
	_, err = u.Marshal(Transform{})
	require.True(t, errors.Is(err, ErrUnknownTag), err)
	_, err = u.Marshal(nil)
	require.True(t, errors.Is(err, ErrUnknownTag), err)
	_, err = u.Unmarshal(nil)
	require.True(t, errors.Is(err, ErrUnexpectedEnd), err)
	data, err := u.Marshal(MsgChat{Text: "hello"})
	require.NoError(t, err)
	for i := 0; i < len(data); i++ {
		_, err := u.Unmarshal(data[:i])
		require.True(t, errors.Is(err, ErrUnexpectedEnd), "prefix %d: %v", i, err)
	}
	_, err = u.Unmarshal(append(data, 0))
	require.True(t, errors.Is(err, ErrTrailingData), err)

	_, err = NewUnion()
	require.ErrorIs(t, err, ErrUnsupportedType)
	_, err = NewUnion(MsgMove{}, &MsgMove{})
	require.ErrorIs(t, err, ErrUnsupportedType)
	_, err = NewUnion(42)
	require.ErrorIs(t, err, ErrUnsupportedType)
	type bad struct {
		C chan int
	}
	_, err = NewUnion(bad{})
	require.ErrorIs(t, err, ErrUnsupportedType)
}

func TestUnionSingleVariantHasNoTag(t *testing.T) {
	u, err := NewUnion(MsgFire{})
	require.NoError(t, err)
	require.Equal(t, 0, u.TagBits())
	data, err := u.Marshal(MsgFire{Weapon: 15})
	require.NoError(t, err)
	require.Equal(t, []byte{15}, data)
}

// Issue 14: several messages in one packet, framed by a count, decoded into
// the caller's values; bad destinations and counts are errors.
func TestUnionDecodeIntoAndCount(t *testing.T) {
	u, err := NewUnion(MsgMove{}, MsgChat{}, MsgFire{})
	require.NoError(t, err)
	var w bits.Writer
	msgs := []any{MsgFire{Weapon: 1}, MsgChat{Text: "hi"}, MsgMove{X: 3}, MsgChat{Text: "yo"}}
	require.NoError(t, u.EncodeCount(&w, len(msgs)))
	for _, m := range msgs {
		require.NoError(t, u.Encode(&w, m))
	}
	var mv MsgMove
	var ch MsgChat
	var fi MsgFire
	r := bits.NewReader(w.Bytes())
	n, err := u.DecodeCount(r)
	require.NoError(t, err)
	require.Equal(t, len(msgs), n)
	var got []any
	for range n {
		tag, err := u.DecodeInto(r, &mv, &ch, &fi)
		require.NoError(t, err)
		got = append(got, []any{mv, ch, fi}[tag])
	}
	require.Equal(t, msgs, got)
	require.True(t, r.CheckPadding())

	// Decoding into the caller's values allocates nothing (beyond new
	// strings: this packet has none).
	data := w.Bytes()
	var w2 bits.Writer
	require.NoError(t, u.EncodeCount(&w2, 3))
	for _, m := range []any{MsgFire{Weapon: 1}, MsgMove{X: 3}, MsgFire{Weapon: 2}} {
		require.NoError(t, u.Encode(&w2, m))
	}
	if data := w2.Bytes(); !raceEnabled {
		allocs := testing.AllocsPerRun(100, func() {
			r := bits.NewReader(data)
			n, _ := u.DecodeCount(r)
			for range n {
				_, _ = u.DecodeInto(r, &mv, &ch, &fi)
			}
		})
		require.Zero(t, allocs)
	}

	r = bits.NewReader(data)
	_, _ = u.DecodeCount(r)
	_, err = u.DecodeInto(r, &mv, &ch) // one destination short
	require.ErrorIs(t, err, ErrUnsupportedType)
	_, err = u.DecodeInto(r, &mv, &fi, &ch) // fire's tag into a *MsgFire slot holding a chat
	require.ErrorIs(t, err, ErrUnsupportedType)

	// A count over what the input holds fails before any message.
	w.Reset(nil)
	require.NoError(t, u.EncodeCount(&w, 1000))
	_, err = u.DecodeCount(bits.NewReader(w.Bytes()))
	require.ErrorIs(t, err, ErrUnexpectedEnd)
}

type emptyMsg struct{}

// A union whose only variant is an empty struct: a message takes no bits
// (no tag, no fields), so only the count says how many there are, and
// DecodeCount must not refuse it against the input left.
func TestUnionCountOfEmptyMessages(t *testing.T) {
	u, err := NewUnion(emptyMsg{})
	require.NoError(t, err)
	var w bits.Writer
	require.NoError(t, u.EncodeCount(&w, 100))
	for range 100 {
		require.NoError(t, u.Encode(&w, emptyMsg{}))
	}
	r := bits.NewReader(w.Bytes())
	n, err := u.DecodeCount(r)
	require.NoError(t, err)
	require.Equal(t, 100, n)
	for range n {
		v, err := u.Decode(r)
		require.NoError(t, err)
		require.Equal(t, &emptyMsg{}, v)
	}
	require.True(t, r.CheckPadding())
	// A count over DefaultMaxLen is still refused.
	w.Reset(nil)
	require.NoError(t, fields.WriteLen(&w, DefaultMaxLen+1, 0))
	_, err = u.DecodeCount(bits.NewReader(w.Bytes()))
	require.ErrorIs(t, err, ErrTooLong)

	// Messages of at least 16 bits: the bound is the input left over 16.
	u16, err := NewUnion(struct {
		A uint16 `net:"bits=16"`
	}{})
	require.NoError(t, err)
	w.Reset(nil)
	require.NoError(t, u16.EncodeCount(&w, 3))
	w.WriteBits(0, 2*16) // room for two
	_, err = u16.DecodeCount(bits.NewReader(w.Bytes()))
	require.ErrorIs(t, err, ErrUnexpectedEnd)
}
