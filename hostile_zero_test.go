package bitwire

import (
	"errors"
	"testing"

	"github.com/bitwire/bitwire/bits"
)

type hzE struct{}

type hzS struct {
	S []hzE `net:"maxlen=2147483647"`
}

type hzSS struct {
	S [][]hzE
}

type hzA struct {
	S [][0]int `net:"maxlen=2147483647"`
}

// Elements that take no bits and no memory (struct{}, [0]int) were not
// bounded by the input: 4 bytes asked for 2^31-1 of them, and the decoder
// stepped through each (15.9 s). Each now costs a byte of the allocation
// budget: the same 4 bytes are ErrTooLong, and what a valid message of
// them holds still decodes.
func TestHostileZeroSizeElements(t *testing.T) {
	bomb := []byte{0xff, 0xff, 0xff, 0x7f}
	var s hzS
	if err := Unmarshal(bomb, &s); !errors.Is(err, ErrTooLong) {
		t.Fatalf("Unmarshal(% x) = %v, want ErrTooLong", bomb, err)
	}
	// into a slice whose capacity holds them already (free for zero-size
	// elements): charged all the same
	big := hzS{S: make([]hzE, 1<<31-1)}
	if err := Unmarshal(bomb, &big); !errors.Is(err, ErrTooLong) {
		t.Fatalf("Unmarshal into a big slice = %v, want ErrTooLong", err)
	}
	var a hzA
	if err := Unmarshal(bomb, &a); !errors.Is(err, ErrTooLong) {
		t.Fatalf("[][0]int: %v, want ErrTooLong", err)
	}
	if err := UnmarshalDelta(append([]byte{1}, bomb...), &hzS{}, &s); !errors.Is(err, ErrTooLong) {
		t.Fatalf("UnmarshalDelta = %v, want ErrTooLong", err)
	}
	// nested: a few hundred bytes of inner lengths, each 100,000
	nested := hzSS{S: make([][]hzE, 100)}
	for i := range nested.S {
		nested.S[i] = make([]hzE, 100_000)
	}
	b, err := Marshal(&nested)
	if err != nil {
		t.Fatal(err)
	}
	var ss hzSS
	if err := Unmarshal(b, &ss); !errors.Is(err, ErrTooLong) {
		t.Fatalf("[][]E of %d bytes: %v, want ErrTooLong", len(b), err)
	}
	t.Logf("nested bomb: %d bytes", len(b))

	// What the budget allows round-trips: 64 elements an input byte plus
	// AllocBase, less the allocator's rounding (allocCost).
	const fits = 3800
	ok := hzS{S: make([]hzE, fits)}
	b, err = Marshal(&ok)
	if err != nil {
		t.Fatal(err)
	}
	var out hzS
	if err := Unmarshal(b, &out); err != nil || len(out.S) != fits {
		t.Fatalf("%d elements: %v, len %d", fits, err, len(out.S))
	}
	// with the bound off, as Limits documents
	if err := MustFor[hzS]().WithLimits(Limits{MaxAllocPerByte: -1}).Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
}

// A single-variant union of an empty struct: a message takes no bits, so
// a count of 2^20 in 4 bytes was accepted.
func TestHostileZeroSizeUnion(t *testing.T) {
	u, err := NewUnion(hzE{})
	if err != nil {
		t.Fatal(err)
	}
	w := bits.NewWriter(nil)
	if err := u.EncodeCount(w, DefaultMaxLen); err != nil {
		t.Fatal(err)
	}
	r := bits.NewReader(append([]byte(nil), w.Bytes()...))
	if n, err := u.DecodeCount(r); !errors.Is(err, ErrTooLong) {
		t.Fatalf("DecodeCount of %d bytes = %d, %v; want ErrTooLong", len(w.Bytes()), n, err)
	}
	w.Reset(nil)
	if err := u.EncodeCount(w, 100); err != nil {
		t.Fatal(err)
	}
	r = bits.NewReader(append([]byte(nil), w.Bytes()...))
	if n, err := u.DecodeCount(r); err != nil || n != 100 {
		t.Fatalf("DecodeCount = %d, %v; want 100", n, err)
	}
}

type hzMix struct {
	S []hzE `net:"maxlen=2147483647"`
	N [][]hzE
	A [][0]int32 `net:"maxlen=65535"`
	P *[]hzE
	M map[uint8][]hzE
}

// FuzzUnmarshalZeroSize decodes arbitrary bytes, full and as a delta,
// into containers of elements that take no bits: each is ErrTooLong past
// the allocation budget, never a long loop; a message that decodes
// re-encodes to the same bytes.
func FuzzUnmarshalZeroSize(f *testing.F) {
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff})
	seed, _ := Marshal(&hzMix{S: make([]hzE, 5), N: [][]hzE{{}, make([]hzE, 3)}, M: map[uint8][]hzE{1: make([]hzE, 2)}})
	f.Add(seed)
	c := MustFor[hzMix]()
	f.Fuzz(func(t *testing.T, b []byte) {
		var v hzMix
		if err := c.Unmarshal(b, &v); err == nil {
			again, err := c.Marshal(&v)
			if err != nil || string(again) != string(b) {
				t.Fatalf("decoded %x, re-encoded %x (%v)", b, again, err)
			}
		}
		var d hzMix
		_ = c.UnmarshalDelta(b, &v, &d)
	})
}

// BenchmarkHostileZeroSizeBomb: the 4 bytes ff ff ff 7f asking for
// 2^31-1 empty structs, refused (ErrTooLong) before any element is
// decoded.
func BenchmarkHostileZeroSizeBomb(b *testing.B) {
	bomb := []byte{0xff, 0xff, 0xff, 0x7f}
	var s hzS
	for range b.N {
		if err := Unmarshal(bomb, &s); !errors.Is(err, ErrTooLong) {
			b.Fatal(err)
		}
	}
}
