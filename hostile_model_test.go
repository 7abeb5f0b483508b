package bitwire

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/bitwire/bitwire/fields"
)

// hostileModelFile is a valid model file of n tables of 2 symbols (5
// bytes each), trained for no layout.
func hostileModelFile(n int) []byte {
	b := append([]byte(modelMagic), modelVersionOld)
	b = binary.BigEndian.AppendUint64(b, 1)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	for range n {
		b = append(b, tkWindow, 0, 2, 1, 1)
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// Model.UnmarshalBinary built every table's lookup tables, some 4 KB for a
// 5-byte table: 886 bytes allocated per input byte. It now checks the
// lengths and keeps them; codes are built when a codec binds the model,
// whose layout fixes how many tables there are.
func TestHostileModelAmplification(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads memory statistics")
	}
	f := hostileModelFile(200_000) // 1 MB
	var m Model
	var err error
	n := minAllocatedBy(func() { err = m.UnmarshalBinary(f) })
	if err != nil {
		t.Fatal(err)
	}
	if per := float64(n) / float64(len(f)); per > 8 {
		t.Fatalf("UnmarshalBinary of %d bytes allocated %d bytes (%.0f per byte), want at most 8 per byte", len(f), n, per)
	}
	t.Logf("UnmarshalBinary of %d bytes allocated %d bytes (%.1f per byte)", len(f), n, float64(n)/float64(len(f)))
	// the round trip holds, and binding refuses it for another layout
	b, err := m.MarshalBinary()
	if err != nil || string(b) != string(f) {
		t.Fatalf("MarshalBinary differs from the file: %v", err)
	}
	type S struct {
		X int32 `net:"range,min=0,max=100,dmin=-2,dmax=2"`
	}
	if c := MustFor[S]().WithModel(&m); c == nil {
		t.Fatal("nil codec")
	} else if _, err := c.MarshalDelta(&S{}, &S{X: 1}); !errors.Is(err, ErrModel) {
		t.Fatalf("a model of another layout: %v, want ErrModel", err)
	}
}

// testCode is table i's code, built from its lengths.
func (m *Model) testCode(i int) *fields.Code {
	c, err := fields.NewCode(m.tableLens(i))
	if err != nil {
		panic(err)
	}
	return c
}
