package gen_test

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math/rand"
	"reflect"
	"strings"
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
// no code), the quaternion's first table (absolute `0`, rank 0 with slot
// 0 `10`, with slot 3 `110`, with slot 1 `111000000000`, nothing else) and
// 16 difference tables alike: ESC `0`, slots 0..4 `10`, `110`, `1110`,
// `11110`, `111110`. A relative form may take at most L_0 + 2 + 3N = 30
// bits; with these tables one of exactly 30 and one of 31 can be written.
func mhModel(t *testing.T) *bitwire.Codec[mhSpin] {
	c := bitwire.MustFor[mhSpin]()
	f := []byte("BWM\x03")
	f = binary.BigEndian.AppendUint64(f, c.Fingerprint())
	f = binary.BigEndian.AppendUint32(f, 18)
	table := func(kind byte, lens ...byte) {
		f = append(f, kind)
		f = binary.BigEndian.AppendUint16(f, uint16(len(lens)))
		f = append(f, lens...)
	}
	table(1, 2, 2, 2)
	first := make([]byte, 1+4*fields.TokenSlots(9)+1)    // the last, mhSpin's "unchanged", not coded: not folded
	first[0], first[1], first[2], first[4] = 1, 2, 12, 3 // symbol 1 + slot for rank 0
	table(4, first...)
	for range 16 {
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
	long.WriteBits(7, 12) // rank 0, e0 in slot 1 (`111000000000`)
	long.WriteBits(0, 1)  // e0 = +1
	long.WriteBits(0, 10) // e1: ESC, 0
	long.WriteBits(0, 10) // e2: ESC, 0
	// at30 and at31: e0 +1 (13 bits), e1 escaped (+1 or 0, 11 or 10), e2
	// a token (+3: `11110` and the sign, 6; +4: `111110`, one low bit and
	// the sign, 8): 30 and 31 bits after the mask.
	at := func(e1, e2bits uint64, n int) string {
		w := bits.NewWriter(nil)
		w.WriteBits(1, 2)  // mask: changed (`10`)
		w.WriteBits(7, 12) // rank 0, e0 in slot 1 (`111000000000`)
		w.WriteBits(0, 1)  // e0 = +1
		w.WriteBits(0, 1)  // e1: ESC
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

// Plain mask tables (wire-format.md, "Struct changed bits"): a mask table
// whose code lengths are all 0 codes its chunk as the k changed bits alone,
// with no symbol before them. mpOne's only chunk is plain; mpWide's first
// chunk (8 fields) and its entities' chunk (2 fields, the id's bit first)
// are plain, its second chunk (2 fields) has a code.

// mpOne is a one-field struct.
type mpOne struct {
	N int `net:"range,min=-3,max=4"`
}

// mpEnt is an entity of mpWide.
type mpEnt struct {
	ID uint16 `net:"id"`
	V  int8   `net:"bits=6"`
}

// mpWide has 10 fields: chunks of 8 and 2.
type mpWide struct {
	Es               []mpEnt `net:"maxlen=4"`
	A, B, C, D, E, F bool
	N                int `net:"range,min=-3,max=4"`
	G                bool
	H                int8 `net:"bits=5"`
}

// mpModel returns c with a model whose table i has the code lengths
// lens(i, kind, S) (the layout's kinds and sizes are read from a model
// trained on one pair, whose lengths are all replaced).
func mpModel[T any](t *testing.T, c *bitwire.Codec[T], lens func(i int, kind byte, s int) []byte) *bitwire.Codec[T] {
	tr := c.NewTrainer()
	var z T
	if err := tr.Add(&z, &z); err != nil {
		t.Fatal(err)
	}
	tm, err := tr.Model()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := tm.MarshalBinary()
	p := 16
	for i := range int(binary.BigEndian.Uint32(f[12:])) {
		kind, s := f[p], int(binary.BigEndian.Uint16(f[p+1:]))
		copy(f[p+3:p+3+s], lens(i, kind, s))
		p += 3 + s
	}
	f = binary.BigEndian.AppendUint32(f[:len(f)-4], crc32.ChecksumIEEE(f[:len(f)-4]))
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

// mpFlat is a code for a table of s symbols that is not a mask's: ESC `0`,
// every other symbol 1 + ceil(log2(s - 1)) bits.
func mpFlat(s int) []byte {
	l := byte(1)
	for 1<<(l-1) < s-1 {
		l++
	}
	b := make([]byte, s)
	b[0] = 1
	for i := 1; i < s; i++ {
		b[i] = l
	}
	return b
}

// mpOneModel returns mpOne's codec with its mask table plain and N's
// modular table coding every slot in 3 bits (ESC `000`, symbol s `s`).
func mpOneModel(t *testing.T) *bitwire.Codec[mpOne] {
	return mpModel(t, bitwire.MustFor[mpOne](), func(i int, kind byte, s int) []byte {
		if kind == 1 {
			return make([]byte, s)
		}
		return []byte{3, 3, 3, 3, 3, 3, 3}
	})
}

// mpWideModel returns mpWide's codec: every mask table plain but the
// root's second chunk (ESC `110`, mask 0 `111`, masks 1, 2, 3 `00`, `01`,
// `10`), the other tables mpFlat.
func mpWideModel(t *testing.T) *bitwire.Codec[mpWide] {
	masks := 0
	return mpModel(t, bitwire.MustFor[mpWide](), func(i int, kind byte, s int) []byte {
		if kind != 1 {
			return mpFlat(s)
		}
		masks++
		if masks == 2 {
			return []byte{3, 3, 2, 2, 2}
		}
		return make([]byte, s)
	})
}

// mpCase is Go's verdict on one delta of msg against its full case base.
func mpCase[T any](t *testing.T, c *bitwire.Codec[T], msg string, base *T, b int, d []byte) cfCase {
	var out T
	cs := cfCase{Msg: msg, Base: &b, Delta: hex.EncodeToString(d)}
	if err := c.UnmarshalDelta(d, base, &out); err != nil {
		cs.Kind, cs.Err, cs.ErrMsg = "damaged-delta", sentinel(err), err.Error()
	} else {
		cs.Want = canonOf(t, c.Schema(), &out)
	}
	return cs
}

// mpOneCases are mpOne's deltas: Go's (each pinned: the chunk's one bit,
// then N's token), and hand-written ones: none (the input ends before the
// chunk's bit), an escaped N, a token past N's range and one of 0.
func mpOneCases(t *testing.T, c *bitwire.Codec[mpOne], msg string) []cfCase {
	s := c.Schema()
	bases := []mpOne{{N: 0}, {N: 2}}
	var cases []cfCase
	for i := range bases {
		full, err := c.Marshal(&bases[i])
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, cfCase{Msg: msg, Full: hex.EncodeToString(full), Want: canonOf(t, s, &bases[i])})
	}
	for _, dl := range []struct {
		b    int
		cur  mpOne
		want string
	}{
		{0, mpOne{N: 0}, "00"},  // unchanged: `0`
		{0, mpOne{N: 4}, "0b"},  // `1`, +4: slot 4 `101`, low bit 0, sign 0
		{0, mpOne{N: -3}, "13"}, // `1`, -3: slot 3 `100`, sign 1
		{1, mpOne{N: -3}, "03"}, // `1`, +3 (5 mod 8): `100`, sign 0
		{1, mpOne{N: 3}, "05"},  // `1`, +1: slot 1 `010`, sign 0
		{1, mpOne{N: -1}, "13"}, // `1`, -3: `100`, sign 1
	} {
		enc, err := c.MarshalDelta(&bases[dl.b], &dl.cur)
		if err != nil {
			t.Fatal(err)
		}
		if h := hex.EncodeToString(enc); h != dl.want {
			t.Errorf("mpOne delta %+v → %+v: Go writes %s, want %s", bases[dl.b], dl.cur, h, dl.want)
		}
		cs := mpCase(t, c, msg, &bases[dl.b], dl.b, enc)
		if cs.Err != "" || cs.Want != canonOf(t, s, &dl.cur) {
			t.Fatalf("mpOne delta %s: Go decodes %s (%s)", cs.Delta, cs.Want, cs.ErrMsg)
		}
		cases = append(cases, cs)
	}
	for _, dl := range []struct{ d, want string }{
		{"", "ErrUnexpectedEnd"}, // no chunk bit
		{"01", ""},               // `1`, ESC `000`, N in full: offset 0 (-3)
		{"1b", "ErrMalformed"},   // `1`, +5 (slot 4 `101`, low bit 1, sign 0): past h = 4
		{"09", "ErrMalformed"},   // `1`, a difference of 0 (slot 0 `001`)
	} {
		d, _ := hex.DecodeString(dl.d)
		cs := mpCase(t, c, msg, &bases[0], 0, d)
		if cs.Err != dl.want {
			t.Fatalf("mpOne delta %q: Go says %q (%s), want %q", dl.d, cs.Err, cs.ErrMsg, dl.want)
		}
		cases = append(cases, cs)
	}
	return cases
}

// mpWideCases are mpWide's deltas, Go's, against two baselines (random
// changes to every field and the entities), each pinned to begin with the
// plain chunk's 8 bits; then every one-bit flip and every cut of some of
// them, with Go's verdict, among which the entity's id bit set
// (ErrMalformed).
func mpWideCases(t *testing.T, c *bitwire.Codec[mpWide], msg string, r *rand.Rand) []cfCase {
	s := c.Schema()
	bases := []mpWide{{}, {Es: []mpEnt{{1, 5}, {4, -7}, {9, 0}}, B: true, N: -2, H: 3}}
	var cases []cfCase
	for i := range bases {
		full, err := c.Marshal(&bases[i])
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, cfCase{Msg: msg, Full: hex.EncodeToString(full), Want: canonOf(t, s, &bases[i])})
	}
	var encs [][]byte
	var bs []int
	idBit := false
	for i := 0; i < 200; i++ {
		b := i % 2
		cur := bases[b]
		cur.Es = append([]mpEnt(nil), cur.Es...)
		mask := uint64(r.Intn(1 << 10))
		if i < 4 {
			mask = []uint64{0, 1 << 7, 1 << 9, 1}[i] // unchanged; N alone; H alone; Es alone
		}
		for f := range 10 {
			if mask>>f&1 == 0 {
				continue
			}
			switch f {
			case 0:
				for j := range cur.Es {
					if r.Intn(2) == 0 {
						cur.Es[j].V = int8(r.Intn(64) - 32)
					}
				}
				if len(cur.Es) == 0 || r.Intn(3) == 0 {
					cur.Es = append(cur.Es, mpEnt{ID: uint16(10 + r.Intn(50)), V: int8(r.Intn(64) - 32)})
				}
			case 7:
				cur.N = r.Intn(8) - 3
			case 8:
				cur.G = !cur.G
			case 9:
				cur.H = int8(r.Intn(32) - 16)
			default:
				*[]*bool{&cur.A, &cur.B, &cur.C, &cur.D, &cur.E, &cur.F}[f-1] = r.Intn(2) == 0
			}
		}
		enc, err := c.MarshalDelta(&bases[b], &cur)
		if err != nil {
			t.Fatal(err)
		}
		cs := mpCase(t, c, msg, &bases[b], b, enc)
		if cs.Err != "" || cs.Want != canonOf(t, s, &cur) {
			t.Fatalf("mpWide delta %s: Go decodes %s (%s), want %s", cs.Delta, cs.Want, cs.ErrMsg, canonOf(t, s, &cur))
		}
		// the plain chunk: bit f set when field f changed (the slice
		// compared by its entities)
		var want uint64
		if !reflect.DeepEqual(bases[b].Es, cur.Es) {
			want |= 1
		}
		for f, ch := range []bool{bases[b].A != cur.A, bases[b].B != cur.B, bases[b].C != cur.C, bases[b].D != cur.D, bases[b].E != cur.E, bases[b].F != cur.F, bases[b].N != cur.N} {
			if ch {
				want |= 1 << (f + 1)
			}
		}
		if uint64(enc[0]) != want {
			t.Fatalf("mpWide delta %s: plain chunk %08b, want %08b", cs.Delta, enc[0], want)
		}
		if i == 0 && cs.Delta != "0007" { // 8 plain 0 bits, then mask 0 `111`
			t.Fatalf("mpWide unchanged: %s, want 0007", cs.Delta)
		}
		cases = append(cases, cs)
		encs, bs = append(encs, enc), append(bs, b)
	}
	for i := 0; i < 40; i++ {
		enc, b := encs[i], bs[i]
		for x := 0; x < 8*len(enc); x++ {
			d := append([]byte(nil), enc...)
			d[x/8] ^= 1 << (x % 8)
			cs := mpCase(t, c, msg, &bases[b], b, d)
			idBit = idBit || strings.Contains(cs.ErrMsg, "id field")
			cases = append(cases, cs)
		}
		for n := range len(enc) {
			cases = append(cases, mpCase(t, c, msg, &bases[b], b, enc[:n]))
		}
	}
	if !idBit {
		t.Fatal("mpWide: no flipped bit sets an entity's id bit")
	}
	return cases
}
