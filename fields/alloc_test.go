package fields

import (
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

// TestNoAllocs runs every Write and Read path on a Writer with enough room
// and requires that none of them allocates.
func TestNoAllocs(t *testing.T) {
	qz := mustQuantizer(t, -512, 512, 0.01)
	fine := mustQuantizerBits(t, 1e6, 1e6+1, 50)
	ir, _ := NewIntRange(-100, 100)
	ur, _ := NewUintRange(10, 1000)
	fx, _ := NewFixed(0.01)
	qt := mustQuat(t, 9)
	us := []uint64{5, 6, 7, 1 << 40}
	is := []int64{-5, 6, -7}
	small := []uint64{5, 6, 7}
	blob := []byte("some bytes here")
	str := "a string of some length"

	w := bits.NewWriter(make([]byte, 0, 4096))
	write := func() {
		w.Reset(w.Bytes()[:0])
		_ = qz.Write(w, 12.34)
		_ = qz.WriteClamp(w, 1e9)
		_ = fine.Write(w, 1e6+0.3)
		_ = ir.Write(w, -42)
		_ = ur.Write(w, 500)
		_ = WriteUint(w, 77, 9)
		_ = WriteInt(w, -77, 9)
		WriteVarint(w, Zigzag(-1000), 7)
		WriteBitlen(w, 123456789, 6)
		_ = WriteBitlenInt(w, -123456789, 6, true)
		WriteBitlenUints(w, us, 6)
		WriteBitlenUints(w, small, 6)
		_ = WriteBitlenInts(w, is, 6, true)
		_ = fx.Write(w, -3.14, true)
		_ = qt.Write(w, [4]float64{0.5, 0.5, 0.5, 0.5})
		WriteFloat32(w, 1.5)
		WriteFloat64(w, 2.5)
		_ = WriteLen(w, 7, 10)
		_ = WriteString(w, str, 0)
		_ = WriteBytes(w, blob, 64)
	}
	write()
	data := append([]byte(nil), w.Bytes()...)
	require.Zero(t, testing.AllocsPerRun(100, write), "writes")

	var r bits.Reader
	u3 := make([]uint64, len(us))
	s3 := make([]uint64, len(small))
	i3 := make([]int64, len(is))
	dst := make([]byte, 0, 64)
	read := func() {
		r.Reset(data)
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err := qz.Read(&r)
		must(err)
		_, err = qz.ReadIndex(&r)
		must(err)
		_, err = fine.Read(&r)
		must(err)
		_, err = ir.Read(&r)
		must(err)
		_, err = ur.Read(&r)
		must(err)
		_, err = ReadUint(&r, 9)
		must(err)
		_, err = ReadInt(&r, 9)
		must(err)
		_, err = ReadVarint(&r, 7)
		must(err)
		_, err = ReadBitlen(&r, 6)
		must(err)
		_, err = ReadBitlenInt(&r, 6, true)
		must(err)
		must(ReadBitlenUints(&r, u3, 6))
		must(ReadBitlenUints(&r, s3, 6))
		must(ReadBitlenInts(&r, i3, 6, true))
		_, err = fx.Read(&r, true)
		must(err)
		_, err = qt.Read(&r)
		must(err)
		_, err = ReadFloat32(&r)
		must(err)
		_, err = ReadFloat64(&r)
		must(err)
		_, err = ReadLen(&r, 10)
		must(err)
		// ReadString returns a new string: one allocation, measured below.
		n, err := ReadLen(&r, 0)
		must(err)
		must(r.Skip(8 * n))
		_, err = ReadBytes(&r, dst, 64)
		must(err)
		if !r.CheckPadding() {
			t.Fatal("unread bits")
		}
	}
	require.Zero(t, testing.AllocsPerRun(100, read), "reads")

	w.Reset(w.Bytes()[:0])
	_ = WriteString(w, str, 0)
	sdata := append([]byte(nil), w.Bytes()...)
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() {
		r.Reset(sdata)
		_, _ = ReadString(&r, 0)
	}), "ReadString allocates the string once")
}
