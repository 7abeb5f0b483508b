package bits

import (
	"testing"
)

// FuzzReader reads arbitrary input with a schedule of widths taken from
// the input itself: no read may panic, a read past the end must fail with
// ErrUnexpectedEnd and consume nothing, and the bits read must be exactly
// the input's bits (checked by writing them back).
func FuzzReader(f *testing.F) {
	f.Add([]byte{0x3A}, []byte{3, 3, 2})
	f.Add([]byte{0xFF, 0x00, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE}, []byte{64, 1, 7, 0, 65})
	f.Add([]byte{}, []byte{1})
	f.Fuzz(func(t *testing.T, data, widths []byte) {
		if len(widths) == 0 {
			return
		}
		r := NewReader(data)
		var w Writer
		for i := 0; r.Remaining() > 0 && i < 4*len(data)+8; i++ {
			n := int(widths[i%len(widths)]) % 66 // 65 is invalid on purpose
			before := r.Remaining()
			v, err := r.ReadBits(n)
			switch {
			case n > 64:
				if err == nil {
					t.Fatalf("ReadBits(%d) succeeded", n)
				}
				continue
			case n > before:
				if err != ErrUnexpectedEnd || r.Remaining() != before {
					t.Fatalf("ReadBits(%d) with %d left: %v, %d left after", n, before, err, r.Remaining())
				}
				n = before // read the rest instead
				if v, err = r.ReadBits(n); err != nil {
					t.Fatalf("ReadBits(%d) of the rest: %v", n, err)
				}
			case err != nil:
				t.Fatalf("ReadBits(%d) with %d left: %v", n, before, err)
			}
			if n < 64 && v>>uint(n) != 0 {
				t.Fatalf("ReadBits(%d) returned bits above n: %#x", n, v)
			}
			w.WriteBits(v, n)
		}
		if r.Remaining() != 0 {
			return // the schedule ran out first
		}
		got := w.Bytes()
		if string(got) != string(data) {
			t.Fatalf("bits read back differ:\n got %x\nwant %x", got, data)
		}
		if _, err := r.ReadBool(); err != ErrUnexpectedEnd {
			t.Fatalf("ReadBool at the end: %v", err)
		}
	})
}
