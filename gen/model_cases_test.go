package gen_test

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Hand-built models whose tables make the corners of the model decoders
// reachable (docs/wire-format.md, "Models"), and their cases, shared by
// the C# and TypeScript model conformance tests (TestCSharpModel,
// TestTypeScriptModel): each case's verdict and value are Go's, pinned
// here, and each client must agree with Go.

// mhSpin has a hand-built model (mhModel) whose tables make the corners
// of the model decoders reachable.
type mhSpin struct {
	Rot [4]float32 `net:"quat,bits=9"`
}

// mhModel returns mhSpin's codec with a model whose tables are written
// here: the mask (ESC `00`, unchanged `01`, changed `10`, and `11` begins
// no code), the quaternion's mode (absolute `0`, rank 0 `10`) and 20
// difference tables alike: ESC `0`, slots 0..4 `10`, `110`, `1110`,
// `11110`, `111110`. A relative form may take at most L_0 + 2 + 3N = 30
// bits; with these tables one of exactly 30 and one of 31 can be written.
func mhModel(t *testing.T) *bitwire.Codec[mhSpin] {
	c := bitwire.MustFor[mhSpin]()
	f := []byte("BWM\x02")
	f = binary.BigEndian.AppendUint64(f, c.Fingerprint())
	f = binary.BigEndian.AppendUint32(f, 22)
	table := func(kind byte, lens ...byte) {
		f = append(f, kind)
		f = binary.BigEndian.AppendUint16(f, uint16(len(lens)))
		f = append(f, lens...)
	}
	table(1, 2, 2, 2)
	table(4, 1, 2, 0, 0, 0)
	for range 20 {
		d := make([]byte, 1+fields.TokenSlots(9))
		copy(d, []byte{1, 2, 3, 4, 5, 6})
		table(5, d...)
	}
	f = binary.BigEndian.AppendUint32(f, crc32.ChecksumIEEE(f))
	var m bitwire.Model
	if err := m.UnmarshalBinary(f); err != nil {
		t.Fatal(err)
	}
	cm := c.WithModel(&m)
	if err := cm.ModelErr(); err != nil {
		t.Fatal(err)
	}
	return cm
}

// mhCases are mhSpin's baseline (the identity) and deltas against it:
// one Go encodes, relative forms of 33 and 31 bits, longer than the
// absolute one (ErrMalformed), one of exactly 30 bits (it decodes), and
// mask bits that begin no code with fewer than 15 bits left
// (ErrUnexpectedEnd, as Go's reader says) and with 16 (ErrMalformed).
func mhCases(t *testing.T, c *bitwire.Codec[mhSpin], msg string) []cfCase {
	s := c.Schema()
	base := mhSpin{Rot: [4]float32{0, 0, 0, 1}}
	full, err := c.Marshal(&base)
	if err != nil {
		t.Fatal(err)
	}
	cur := mhSpin{Rot: [4]float32{0.0087, 0, 0, 0.99996}}
	enc, err := c.MarshalDelta(&base, &cur)
	if err != nil {
		t.Fatal(err)
	}
	long := bits.NewWriter(nil)
	long.WriteBits(1, 2)  // mask: changed (`10`)
	long.WriteBits(1, 2)  // mode: rank 0 (`10`)
	long.WriteBits(0, 1)  // e0: ESC
	long.WriteBits(1, 9)  // |e0| = 1
	long.WriteBits(0, 1)  // positive
	long.WriteBits(0, 10) // e1: ESC, 0
	long.WriteBits(0, 10) // e2: ESC, 0
	// at30 and at31: e0 and e1 escaped (+1, 11 bits, and +1 or 0, 11 or
	// 10), e2 a token (+3: `11110` and the sign, 6; +4: `111110`, one low
	// bit and the sign, 8): 2 + 28 and 2 + 29 bits after the mask.
	at := func(e1, e2bits uint64, n int) string {
		w := bits.NewWriter(nil)
		w.WriteBits(1, 2) // mask: changed (`10`)
		w.WriteBits(1, 2) // mode: rank 0 (`10`)
		w.WriteBits(0, 1) // e0: ESC
		w.WriteBits(1, 9) // |e0| = 1
		w.WriteBits(0, 1) // positive
		w.WriteBits(0, 1) // e1: ESC
		w.WriteBits(e1, 9)
		if e1 != 0 {
			w.WriteBits(0, 1)
		}
		w.WriteBits(e2bits, n) // e2's code, stream order, then its low bits and sign
		return hex.EncodeToString(w.Bytes())
	}
	at30 := at(1, 0b001111, 6)   // `11110`, sign 0
	at31 := at(0, 0b00011111, 8) // `111110`, low bit 0, sign 0
	b := 0
	cases := []cfCase{{Msg: msg, Full: hex.EncodeToString(full), Want: canonOf(t, s, &base)}}
	want := map[string]string{hex.EncodeToString(enc): "", hex.EncodeToString(long.Bytes()): "ErrMalformed", at30: "", at31: "ErrMalformed", "ff": "ErrUnexpectedEnd", "ffff": "ErrMalformed"}
	for _, d := range []string{hex.EncodeToString(enc), hex.EncodeToString(long.Bytes()), at30, at31, "ff", "ffff"} {
		db, _ := hex.DecodeString(d)
		var out mhSpin
		cs := cfCase{Msg: msg, Base: &b, Delta: d}
		if err := c.UnmarshalDelta(db, &base, &out); err != nil {
			cs.Kind, cs.Err, cs.ErrMsg = "damaged-delta", sentinel(err), err.Error()
		} else {
			cs.Want = canonOf(t, s, &out)
		}
		if cs.Err != want[d] {
			t.Fatalf("delta %s: Go says %q (%s), want %q", d, cs.Err, cs.ErrMsg, want[d])
		}
		cases = append(cases, cs)
	}
	return cases
}

// mbMod has a hand-built model (mbModel) whose modular tables code the
// slots at the ends of each field's difference range, so that a token just
// inside and just outside each bound can be written.
type mbMod struct {
	N int    `net:"range,min=-3,max=4"` // R = 8, h = 4: d in -3..4; C = 3, 6 slots
	U uint64 `net:"bits=64"`            // R = 2^64, h = 2^63: d in -(2^63-1)..2^63; C = 64, 128 slots
}

// mbModel returns mbMod's codec with a model: the mask (ESC `110`, mask 0
// `111`, masks 1, 2, 3 `00`, `01`, `10`), N's modular table coding every
// slot in 3 bits (ESC `000`, symbol s `s`), U's coding ESC `00` and slots
// 125, 126, 127 (`01`, `10`, `11`).
func mbModel(t *testing.T) *bitwire.Codec[mbMod] {
	c := bitwire.MustFor[mbMod]()
	f := []byte("BWM\x02")
	f = binary.BigEndian.AppendUint64(f, c.Fingerprint())
	f = binary.BigEndian.AppendUint32(f, 3)
	table := func(kind byte, lens ...byte) {
		f = append(f, kind)
		f = binary.BigEndian.AppendUint16(f, uint16(len(lens)))
		f = append(f, lens...)
	}
	table(1, 3, 3, 2, 2, 2)
	table(3, 3, 3, 3, 3, 3, 3, 3)
	u := make([]byte, 1+fields.TokenSlots(64))
	u[0], u[126], u[127], u[128] = 2, 2, 2, 2
	table(3, u...)
	f = binary.BigEndian.AppendUint32(f, crc32.ChecksumIEEE(f))
	var m bitwire.Model
	if err := m.UnmarshalBinary(f); err != nil {
		t.Fatal(err)
	}
	cm := c.WithModel(&m)
	if err := cm.ModelErr(); err != nil {
		t.Fatal(err)
	}
	return cm
}

// mbCases are mbMod's deltas against the baseline {0, 0}, each a mask
// symbol then one hand-written token: the ends of each field's range of
// differences decode, one past them is ErrMalformed, and so is a
// difference of 0. Go's verdict on each is checked against the one written
// here, and each generated client must agree with Go.
func mbCases(t *testing.T, c *bitwire.Codec[mbMod], msg string) []cfCase {
	s := c.Schema()
	base := mbMod{}
	full, err := c.Marshal(&base)
	if err != nil {
		t.Fatal(err)
	}
	msb := func(w *bits.Writer, code uint64, n int) { // a code, most significant bit first
		for i := n - 1; i >= 0; i-- {
			w.WriteBits(code>>uint(i)&1, 1)
		}
	}
	// token writes mask symbol mask, then table code `code` (n bits), the
	// x low bits of m and the sign.
	token := func(mask, code uint64, n int, m uint64, x int, neg bool) string {
		w := bits.NewWriter(nil)
		msb(w, mask, 2)
		msb(w, code, n)
		w.WriteBits(m&(1<<uint(x)-1), x)
		if m != 0 {
			w.WriteBits(map[bool]uint64{false: 0, true: 1}[neg], 1)
		}
		return hex.EncodeToString(w.Bytes())
	}
	const h = uint64(1) << 63
	deltas := []struct {
		d, want string
		out     mbMod
	}{
		{token(0, 5, 3, 4, 1, false), "", mbMod{N: 4}},                // N: +4 (slot 4, low bit 0) = h
		{token(0, 5, 3, 5, 1, false), "ErrMalformed", mbMod{}},        // N: +5
		{token(0, 4, 3, 3, 0, true), "", mbMod{N: -3}},                // N: -3 (slot 3) = -(R-h-1)
		{token(0, 5, 3, 4, 1, true), "ErrMalformed", mbMod{}},         // N: -4
		{token(0, 1, 3, 0, 0, false), "ErrMalformed", mbMod{}},        // N: 0 (slot 0)
		{token(1, 2, 2, h, 62, false), "", mbMod{U: h}},               // U: +2^63 (slot 126) = h
		{token(1, 2, 2, h+1, 62, false), "ErrMalformed", mbMod{}},     // U: +2^63+1
		{token(1, 1, 2, h-1, 61, true), "", mbMod{U: h + 1}},          // U: -(2^63-1) (slot 125)
		{token(1, 2, 2, h, 62, true), "ErrMalformed", mbMod{}},        // U: -2^63
		{token(1, 3, 2, 1<<64-1, 62, false), "ErrMalformed", mbMod{}}, // U: +2^64-1 (slot 127)
	}
	b := 0
	cases := []cfCase{{Msg: msg, Full: hex.EncodeToString(full), Want: canonOf(t, s, &base)}}
	for _, dl := range deltas {
		db, _ := hex.DecodeString(dl.d)
		var out mbMod
		cs := cfCase{Msg: msg, Base: &b, Delta: dl.d}
		if err := c.UnmarshalDelta(db, &base, &out); err != nil {
			cs.Kind, cs.Err, cs.ErrMsg = "damaged-delta", sentinel(err), err.Error()
		} else {
			cs.Want = canonOf(t, s, &out)
			if out != dl.out {
				t.Fatalf("delta %s: Go decodes %+v, want %+v", dl.d, out, dl.out)
			}
		}
		if cs.Err != dl.want {
			t.Fatalf("delta %s: Go says %q (%s), want %q", dl.d, cs.Err, cs.ErrMsg, dl.want)
		}
		cases = append(cases, cs)
	}
	return cases
}
