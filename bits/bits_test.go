package bits

import (
	"encoding/binary"
	"errors"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSeedExample(t *testing.T) {
	var w Writer
	w.WriteBits(0b101010, 3)
	w.WriteBits(0b1111, 3)
	require.Equal(t, 6, w.Len())
	require.Equal(t, []byte{0b00111010}, w.Bytes())
}

func TestLSBFirst(t *testing.T) {
	var w Writer
	w.WriteBool(true)
	w.WriteBool(false)
	w.WriteBool(true)
	w.WriteBits(0xABC, 12)
	// bits: 1,0,1 then 0xABC low bit first
	want := uint64(0b101) | 0xABC<<3
	require.Equal(t, []byte{byte(want), byte(want >> 8)}, w.Bytes())
}

type item struct {
	v uint64
	n int
}

func randomItems(rng *rand.Rand, count int) []item {
	items := make([]item, count)
	for i := range items {
		n := rng.Intn(65)
		v := rng.Uint64()
		if n < 64 {
			v &= 1<<uint(n) - 1
		}
		items[i] = item{v, n}
	}
	return items
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 500; trial++ {
		items := randomItems(rng, rng.Intn(40))
		w := NewWriter(nil)
		total := 0
		for _, it := range items {
			junk := uint64(0)
			if it.n < 64 {
				junk = ^uint64(0) << uint(it.n) // bits above n must be ignored
			}
			w.WriteBits(it.v|junk, it.n)
			total += it.n
			require.Equal(t, total, w.Len())
		}
		data := w.Bytes()
		require.Equal(t, (total+7)/8, len(data))
		r := NewReader(data)
		for i, it := range items {
			got, err := r.ReadBits(it.n)
			require.NoError(t, err)
			require.Equal(t, it.v, got, "item %d (%d bits)", i, it.n)
		}
		require.Less(t, r.Remaining(), 8)
		require.True(t, r.CheckPadding())
	}
}

func TestJunkAboveNIgnored(t *testing.T) {
	var w Writer
	w.WriteBits(0xFF, 4)
	w.WriteBits(0, 4)
	require.Equal(t, []byte{0x0F}, w.Bytes())
}

func TestBytesThenMoreWrites(t *testing.T) {
	var w Writer
	w.WriteBits(0x1, 1)
	first := append([]byte(nil), w.Bytes()...)
	w.WriteBits(0x7F, 7)
	require.Equal(t, []byte{0x01}, first)
	require.Equal(t, []byte{0xFF}, w.Bytes())
	for i := 0; i < 9; i++ {
		w.WriteBits(uint64(i), 8)
	}
	require.Equal(t, []byte{0xFF, 0, 1, 2, 3, 4, 5, 6, 7, 8}, w.Bytes())
}

func TestWriteBytesReadBytes(t *testing.T) {
	for shift := 0; shift < 8; shift++ {
		var w Writer
		w.WriteBits(0x55, shift)
		p := []byte("hello, bit world! 0123456789")
		w.WriteBytes(p)
		r := NewReader(w.Bytes())
		_, err := r.ReadBits(shift)
		require.NoError(t, err)
		got := make([]byte, len(p))
		require.NoError(t, r.ReadBytes(got))
		require.Equal(t, p, got)
	}
}

// TestReadBits64AfterByteRefill: near the end of the input the cache is
// refilled byte by byte, and a 64-bit read right after must not find 64
// bits cached and take none of them (it returned 0).
func TestReadBits64AfterByteRefill(t *testing.T) {
	var w Writer
	w.WriteBits(0xA5A5A5A5A5A5A5A5, 64)
	w.WriteBits(0x5A5A5A5A5A5A5A5A, 64)
	w.WriteBits(0x2A5, 10)
	r := NewReader(w.Bytes())
	require.NoError(t, r.Skip(64))
	r.Peek(56)
	v, err := r.ReadBits(64)
	require.NoError(t, err)
	require.Equal(t, uint64(0x5A5A5A5A5A5A5A5A), v)
	v, err = r.ReadBits(10)
	require.NoError(t, err)
	require.Equal(t, uint64(0x2A5), v)
}

// TestWriteBytesReadBytesAnyOffset checks WriteBytes against WriteBits of
// each byte, and ReadBytes against ReadBits of each byte, at every bit
// offset, for lengths around the 8-byte words, with more bits after the
// bytes or none, and ReadBytes past the end.
func TestWriteBytesReadBytesAnyOffset(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 3000; trial++ {
		lead := rng.Intn(130)
		p := make([]byte, rng.Intn(40))
		rng.Read(p)
		tail := rng.Intn(3) * rng.Intn(70)
		var w, ref Writer
		for _, x := range []*Writer{&w, &ref} {
			for k := lead; k > 0; k -= min(k, 64) {
				x.WriteBits(0xA5A5A5A5A5A5A5A5, min(k, 64))
			}
		}
		w.WriteBytes(p)
		for _, c := range p {
			ref.WriteBits(uint64(c), 8)
		}
		for _, x := range []*Writer{&w, &ref} {
			for k := tail; k > 0; k -= min(k, 64) {
				x.WriteBits(0x5A5A5A5A5A5A5A5A, min(k, 64))
			}
		}
		require.Equal(t, ref.Bytes(), w.Bytes(), "lead %d, %d bytes, tail %d", lead, len(p), tail)
		require.Equal(t, ref.Len(), w.Len())
		data := w.Bytes()
		r := NewReader(data)
		require.NoError(t, r.Skip(lead))
		if rng.Intn(2) == 0 { // fill the cache first, or not
			r.Peek(rng.Intn(57))
		}
		got := make([]byte, len(p))
		require.NoError(t, r.ReadBytes(got))
		require.Equal(t, p, got)
		require.Equal(t, lead+8*len(p), r.Pos())
		k := min(tail, 64)
		v, err := r.ReadBits(k)
		require.NoError(t, err)
		require.Equal(t, uint64(0x5A5A5A5A5A5A5A5A)&(^uint64(0)>>(64-k)), v, "lead %d, %d bytes, tail %d", lead, len(p), tail)
		// past the end: ErrUnexpectedEnd, nothing consumed
		r = NewReader(data)
		require.NoError(t, r.Skip(lead))
		over := make([]byte, (len(data)*8-lead)/8+1)
		require.ErrorIs(t, r.ReadBytes(over), ErrUnexpectedEnd)
		require.Equal(t, lead, r.Pos())
	}
}

func TestTruncate(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for trial := 0; trial < 200; trial++ {
		items := randomItems(rng, 30)
		var ref Writer
		lens := []int{0}
		for _, it := range items {
			ref.WriteBits(it.v, it.n)
			lens = append(lens, ref.Len())
		}
		cut := rng.Intn(len(items) + 1)
		var w Writer
		for _, it := range items {
			w.WriteBits(it.v, it.n)
		}
		w.Truncate(lens[cut])
		require.Equal(t, lens[cut], w.Len())
		// continue writing the rest: must equal the reference
		for _, it := range items[cut:] {
			w.WriteBits(it.v, it.n)
		}
		require.Equal(t, ref.Bytes(), w.Bytes())
	}
}

func TestReaderUnexpectedEnd(t *testing.T) {
	r := NewReader([]byte{0xFF, 0x01})
	_, err := r.ReadBits(17)
	require.True(t, errors.Is(err, ErrUnexpectedEnd))
	require.Equal(t, 16, r.Remaining(), "a failed read consumes nothing")
	v, err := r.ReadBits(16)
	require.NoError(t, err)
	require.Equal(t, uint64(0x01FF), v)
	_, err = r.ReadBool()
	require.ErrorIs(t, err, ErrUnexpectedEnd)
	require.ErrorIs(t, r.Skip(1), ErrUnexpectedEnd)
	_, err = r.ReadBits(65)
	require.Error(t, err)
	_, err = NewReader(nil).ReadBits(1)
	require.ErrorIs(t, err, ErrUnexpectedEnd)
}

func TestCheckPadding(t *testing.T) {
	r := NewReader([]byte{0x01})
	_, _ = r.ReadBits(1)
	require.True(t, r.CheckPadding())
	r = NewReader([]byte{0x03})
	_, _ = r.ReadBits(1)
	require.False(t, r.CheckPadding(), "non-zero padding")
	r = NewReader([]byte{0x01, 0x00})
	_, _ = r.ReadBits(1)
	require.False(t, r.CheckPadding(), "a whole unread byte")
}

func TestPool(t *testing.T) {
	w := GetWriter()
	w.WriteBits(5, 3)
	PutWriter(w)
	w2 := GetWriter()
	require.Equal(t, 0, w2.Len())
	require.Empty(t, w2.Bytes())
}

func BenchmarkWriteBits(b *testing.B) {
	var w Writer
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Reset(buf)
		for j := 0; j < 256; j++ {
			w.WriteBits(uint64(j), 13)
		}
		buf = w.Bytes()
	}
}

func BenchmarkReadBits(b *testing.B) {
	var w Writer
	for j := 0; j < 256; j++ {
		w.WriteBits(uint64(j), 13)
	}
	data := w.Bytes()
	var r Reader
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Reset(data)
		for j := 0; j < 256; j++ {
			if _, err := r.ReadBits(13); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestResetAppend(t *testing.T) {
	var w Writer
	w.ResetAppend([]byte{0xAA, 0xBB, 0xCC})
	require.Equal(t, 24, w.Len())
	w.WriteBits(0x1234, 16)
	w.WriteBits(1, 1)
	w.WriteBits(0xDEADBEEFCAFE, 48)
	w.Truncate(24 + 17)
	w.WriteBits(0, 7)
	require.Equal(t, []byte{0xAA, 0xBB, 0xCC, 0x34, 0x12, 0x01}, w.Bytes())
}

// WriteFrom of a second writer gives the bytes of one writer that wrote
// both halves, whatever the alignment of either half, and leaves src alone.
func TestWriteFrom(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 300; trial++ {
		items := randomItems(rng, 1+rng.Intn(40))
		cut := rng.Intn(len(items) + 1)
		var ref, w, src Writer
		for k, it := range items {
			ref.WriteBits(it.v, it.n)
			if k < cut {
				w.WriteBits(it.v, it.n)
			} else {
				src.WriteBits(it.v, it.n)
			}
		}
		if trial%3 == 0 { // a source that appends to a byte prefix
			var pre Writer
			pre.ResetAppend([]byte{0xA5})
			ref2 := NewWriter(nil)
			ref2.WriteBits(0xA5, 8)
			ref2.WriteFrom(&src)
			pre.WriteFrom(&src)
			require.Equal(t, ref2.Bytes(), pre.Bytes())
		}
		before, n := append([]byte(nil), src.Bytes()...), src.Len()
		w.WriteFrom(&src)
		require.Equal(t, ref.Len(), w.Len())
		require.Equal(t, ref.Bytes(), w.Bytes())
		require.Equal(t, before, src.Bytes())
		require.Equal(t, n, src.Len())
	}
}

// WriteBits with n = 0 writes nothing whatever v holds; an n outside 0..64
// is a bug in the caller and panics.
func TestWriteBitsWidthBounds(t *testing.T) {
	var w Writer
	w.WriteBits(^uint64(0), 0)
	require.Equal(t, 0, w.Len())
	w.WriteBits(^uint64(0), 64)
	w.WriteBits(^uint64(0), 0)
	require.Equal(t, 64, w.Len())
	require.Equal(t, []byte{255, 255, 255, 255, 255, 255, 255, 255}, w.Bytes())
	require.Panics(t, func() { w.WriteBits(1, 65) })
	require.Panics(t, func() { w.WriteBits(1, -1) })
}

// Spent is a plain counter for the decoders above: Spend adds to it,
// NewReader and Reset clear it, reading does not touch it.
func TestReaderSpent(t *testing.T) {
	r := NewReader([]byte{0xff, 0x01})
	if r.Spent() != 0 {
		t.Fatal("new reader has spent", r.Spent())
	}
	r.Spend(100)
	r.Spend(28)
	if _, err := r.ReadBits(9); err != nil || r.Spent() != 128 {
		t.Fatal(r.Spent(), err)
	}
	r.Reset([]byte{1})
	if r.Spent() != 0 {
		t.Fatal("Reset keeps spent", r.Spent())
	}
}

func TestPeek(t *testing.T) {
	data := []byte{0xA5, 0x3C, 0xFF}
	r := NewReader(data)
	for pos := 0; pos <= 24; pos++ {
		for n := 0; n <= 56; n++ {
			want := uint64(0)
			for i := 0; i < n && pos+i < 24; i++ {
				want |= uint64(data[(pos+i)/8]>>uint((pos+i)%8)&1) << uint(i)
			}
			if got := r.Peek(n); got != want {
				t.Fatalf("pos %d: Peek(%d) = %#x, want %#x", pos, n, got, want)
			}
			if r.Pos() != pos {
				t.Fatalf("Peek consumed input: pos %d, want %d", r.Pos(), pos)
			}
		}
		if pos < 24 {
			if _, err := r.ReadBits(1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Skip(1); err == nil {
		t.Fatal("Skip past the end after Peek: no error")
	}
}

func TestReaderSourceSkipTo(t *testing.T) {
	data := []byte{0xa5, 0x3c, 0xff, 0x01, 0x80, 0x7e, 0x11, 0x22, 0x33, 0x44, 0x55}
	for start := 0; start <= len(data)*8; start++ {
		for to := start; to <= len(data)*8; to++ {
			r := NewReader(data)
			if start > 0 {
				if _, err := r.ReadBits(start % 57); err != nil {
					t.Fatal(err)
				}
				_ = r.Skip(start - start%57)
			}
			d, pos := r.Source()
			if pos != start || len(d) != len(data) {
				t.Fatalf("Source at %d: pos %d, %d bytes", start, pos, len(d))
			}
			r.SkipTo(to)
			ref := NewReader(data)
			_ = ref.Skip(to)
			if r.Pos() != to || r.Remaining() != ref.Remaining() {
				t.Fatalf("SkipTo(%d) from %d: Pos %d", to, start, r.Pos())
			}
			for r.Remaining() > 0 {
				n := min(r.Remaining(), 13)
				a, err1 := r.ReadBits(n)
				b, err2 := ref.ReadBits(n)
				if a != b || err1 != nil || err2 != nil {
					t.Fatalf("SkipTo(%d) from %d: read %#x, want %#x", to, start, a, b)
				}
			}
		}
	}
	r := NewReader(data)
	r.SkipTo(20)
	for _, bad := range []int{19, len(data)*8 + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("SkipTo(%d) at 20 did not panic", bad)
				}
			}()
			r.SkipTo(bad)
		}()
	}
}

// TestInsert checks Insert against a list of bits, for prefixes and
// inserted codes of every size and position (in the pending word or
// further back, after Truncate left a partial byte), then more writes.
func TestInsert(t *testing.T) {
	rng := rand.New(rand.NewSource(713))
	for iter := 0; iter < 3000; iter++ {
		var w Writer
		var want []byte // one bit a byte
		put := func(v uint64, n int) {
			w.WriteBits(v, n)
			for k := 0; k < n; k++ {
				want = append(want, byte(v>>k&1))
			}
		}
		for range rng.Intn(40) {
			put(rng.Uint64(), rng.Intn(65))
		}
		if len(want) > 0 && rng.Intn(3) == 0 {
			k := rng.Intn(len(want))
			w.Truncate(k)
			want = want[:k]
		}
		at := rng.Intn(len(want) + 1)
		n := rng.Intn(65)
		v := rng.Uint64()
		w.Insert(at, v, n)
		ins := make([]byte, n)
		for k := range ins {
			ins[k] = byte(v >> k & 1)
		}
		want = append(want[:at:at], append(ins, want[at:]...)...)
		for range rng.Intn(5) {
			put(rng.Uint64(), rng.Intn(65))
		}
		if w.Len() != len(want) {
			t.Fatalf("iter %d: Len %d, want %d", iter, w.Len(), len(want))
		}
		r := NewReader(w.Bytes())
		for k, b := range want {
			got, err := r.ReadBits(1)
			if err != nil || got != uint64(b) {
				t.Fatalf("iter %d: bit %d = %d (%v), want %d (insert of %d bits at %d)", iter, k, got, err, b, n, at)
			}
		}
	}
}

// TestLookahead checks that Lookahead's low 56 bits are Peek(56)'s at
// every position of random inputs of every short length.
func TestLookahead(t *testing.T) {
	rng := rand.New(rand.NewSource(56))
	for iter := 0; iter < 300; iter++ {
		data := make([]byte, rng.Intn(40))
		rng.Read(data)
		r, q := NewReader(data), NewReader(data)
		for r.Remaining() > 0 {
			k := 1 + rng.Intn(min(20, r.Remaining()))
			if got, want := r.Lookahead()&(1<<56-1), q.Peek(56); got != want {
				t.Fatalf("iter %d at %d: Lookahead %x, Peek %x", iter, r.Pos(), got, want)
			}
			require.NoError(t, r.Skip(k))
			require.NoError(t, q.Skip(k))
		}
	}
}

// TestWindowCommit writes random pieces, some through WriteBits and some
// straight into a Window (whole-word stores, as the flat encoder makes
// them, with garbage past the written bits), and checks the result against
// a writer that took every piece through WriteBits.
func TestWindowCommit(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for round := 0; round < 300; round++ {
		var ref Writer
		var w Writer
		if round%3 == 0 {
			w.ResetAppend(make([]byte, 3, 5)) // after existing bytes, little room
			ref.ResetAppend(make([]byte, 3))
		}
		for range rng.Intn(40) {
			if rng.Intn(2) == 0 {
				v, n := rng.Uint64(), rng.Intn(65)
				ref.WriteBits(v, n)
				w.WriteBits(v, n)
				continue
			}
			pieces := rng.Intn(20)
			buf, pos := w.Window(pieces*8 + 8)
			require.Equal(t, ref.Len(), pos)
			require.GreaterOrEqual(t, len(buf), (pos+7)/8+pieces*8+8)
			for i := range buf[(pos+7)/8:] {
				buf[(pos+7)/8+i] = byte(rng.Uint32()) // unspecified content
			}
			for range pieces {
				n := 1 + rng.Intn(56)
				v := rng.Uint64() & (1<<uint(n) - 1)
				ref.WriteBits(v, n)
				// keep the bits below pos, write v above them, 8 bytes at once
				o := pos >> 3
				word := binary.LittleEndian.Uint64(buf[o:])&(1<<uint(pos&7)-1) | v<<uint(pos&7)
				binary.LittleEndian.PutUint64(buf[o:], word)
				pos += n
			}
			if pos&7 != 0 {
				buf[pos>>3] |= byte(rng.Uint32()) << uint(pos&7) // ignored: past n
			}
			w.Commit(buf, pos)
			require.Equal(t, ref.Len(), w.Len())
		}
		require.Equal(t, ref.Bytes(), w.Bytes(), "round %d", round)
	}
}
