package fields

import (
	"errors"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

// readAll decodes data with every reader in turn, as a hostile peer's
// packet would be, and checks the contract: no panic, only this package's
// errors, and every value a reader accepts re-encodes to the same bits.
func readAll(t *testing.T, data []byte, param uint8) {
	g := 1 + int(param)%64
	w := 3 + int(param)%4
	neg := param&0x80 != 0
	maxlen := int(param) % 40
	qz, _ := NewQuantizer(-512, 512, 0.01)
	qb, _ := NewQuantizerBits(0, 360, 1+int(param)%45) // grids float64 resolves
	ir, _ := NewIntRange(-int64(param)*1000, 77)
	ur, _ := NewUintRange(uint64(param), 1<<40)
	fx, _ := NewFixed(0.01)
	qt, _ := NewQuat(2 + int(param)%19)

	check := func(err error) {
		t.Helper()
		if err == nil {
			return
		}
		for _, want := range []error{bits.ErrUnexpectedEnd, ErrOutOfRange, ErrInvalidValue, ErrMalformed, ErrTooLong} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("unexpected error %v", err)
	}
	// same re-encodes v with encode and requires the bits just read.
	same := func(r *bits.Reader, start int, encode func(w *bits.Writer) error) {
		t.Helper()
		var wr bits.Writer
		require.NoError(t, encode(&wr))
		n := r.Pos() - start
		require.Equal(t, n, wr.Len(), "re-encoded size")
		orig := bits.NewReader(data)
		require.NoError(t, orig.Skip(start))
		re := reader(&wr)
		for n > 0 {
			k := min(n, 64)
			a, _ := orig.ReadBits(k)
			b, _ := re.ReadBits(k)
			require.Equal(t, a, b, "re-encoded bits")
			n -= k
		}
	}

	r := bits.NewReader(data)
	for r.Remaining() > 0 {
		start := r.Pos()
		switch (start + int(param)) % 16 {
		case 0:
			v, err := qz.Read(r)
			check(err)
			if err == nil {
				same(r, start, func(w *bits.Writer) error { return qz.Write(w, v) })
			}
		case 1:
			v, err := qb.Read(r)
			check(err)
			if err == nil {
				if qb.Bits() <= 16 { // coarser than float32 over [0, 360]
					v = float64(float32(v))
				}
				same(r, start, func(w *bits.Writer) error { return qb.Write(w, v) })
			}
		case 2:
			v, err := ir.Read(r)
			check(err)
			if err == nil {
				same(r, start, func(w *bits.Writer) error { return ir.Write(w, v) })
			}
		case 3:
			v, err := ur.Read(r)
			check(err)
			if err == nil {
				same(r, start, func(w *bits.Writer) error { return ur.Write(w, v) })
			}
		case 4:
			v, err := ReadVarint(r, g)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { WriteVarint(wr, v, g); return nil })
			}
		case 5:
			v, err := ReadBitlen(r, w)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { WriteBitlen(wr, v, w); return nil })
			}
		case 6:
			v, err := ReadBitlenInt(r, w, neg)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { return WriteBitlenInt(wr, v, w, neg) })
			}
		case 7:
			dst := make([]uint64, int(param)%7)
			err := ReadBitlenUints(r, dst, w)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { WriteBitlenUints(wr, dst, w); return nil })
			}
		case 8:
			dst := make([]int64, int(param)%6)
			err := ReadBitlenInts(r, dst, w, neg)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { return WriteBitlenInts(wr, dst, w, neg) })
			}
		case 9:
			v, err := fx.Read(r, neg)
			check(err)
			// Beyond 2^50 steps float64 no longer holds every integer.
			if err == nil && v/fx.Prec() < 1<<50 && v/fx.Prec() > -1<<50 {
				same(r, start, func(wr *bits.Writer) error { return fx.Write(wr, v, neg) })
			}
		case 10:
			v, err := qt.Read(r)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { return qt.Write(wr, to32(v)) })
			}
		case 11:
			s, err := ReadString(r, maxlen)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { return WriteString(wr, s, maxlen) })
			}
		case 12:
			b, err := ReadBytes(r, nil, maxlen)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { return WriteBytes(wr, b, maxlen) })
			}
		case 13:
			v, err := ReadInt(r, g)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { return WriteInt(wr, v, g) })
			}
		case 14:
			v, err := ReadUint(r, g)
			check(err)
			if err == nil {
				same(r, start, func(wr *bits.Writer) error { return WriteUint(wr, v, g) })
			}
		case 15:
			_, err := ReadFloat64(r)
			check(err)
			_, err = ReadFloat32(r)
			check(err)
		}
		if r.Pos() == start {
			// A reader that failed without consuming: move on by a bit so
			// the rest of the input gets decoded too.
			if r.Skip(1) != nil {
				return
			}
		}
	}
}

func TestReadersOnRandomInput(t *testing.T) {
	rng := newRand(18)
	for trial := range 3000 {
		data := make([]byte, rng.IntN(64))
		for i := range data {
			data[i] = byte(rng.Uint32())
			if trial%3 == 0 { // sparse inputs reach the short encodings
				data[i] &= byte(rng.Uint32()) & byte(rng.Uint32())
			}
		}
		readAll(t, data, uint8(rng.Uint32()))
	}
}

// FuzzReaders feeds arbitrary input to every reader; `go test` runs the seed
// corpus, `go test -fuzz=FuzzReaders ./fields` explores further.
func FuzzReaders(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint8(6))
	f.Add([]byte{0x01, 0x80, 0x00, 0x7f}, uint8(0x85))
	f.Add([]byte("hello, world: some plain text"), uint8(11))
	f.Fuzz(readAll)
}
