package entropy

import (
	"fmt"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Reader splits an encoded message into its Values, as the caller (who
// knows the layout) reads them field by field. The first error sticks and
// is returned by Message.
type Reader struct {
	r   bits.Reader
	msg Message
	err error
}

// NewReader returns a Reader of the message in data.
func NewReader(data []byte) *Reader {
	p := &Reader{}
	p.r.Reset(data)
	return p
}

// Fixed reads an n-bit value of field.
func (p *Reader) Fixed(field string, n int) uint64 {
	if p.err != nil {
		return 0
	}
	v, err := p.r.ReadBits(n)
	p.err = err
	p.msg = append(p.msg, Value{Field: field, Key: v, Bits: n, Width: n})
	return v
}

// Bitlen reads a value of field in the adaptive-integer code with prefix
// width w; its plain width is today's size.
func (p *Reader) Bitlen(field string, w int) uint64 {
	if p.err != nil {
		return 0
	}
	at := p.r.Pos()
	v, err := fields.ReadBitlen(&p.r, w)
	p.err = err
	n := p.r.Pos() - at
	p.msg = append(p.msg, Value{Field: field, Key: v, Bits: n, Width: n})
	return v
}

// Quat reads a smallest-three quaternion of n-bit components as four
// values: field.m (the dropped component's index) and field.a, .b, .c.
func (p *Reader) Quat(field string, n int) {
	p.Fixed(field+".m", 2)
	p.Fixed(field+".a", n)
	p.Fixed(field+".b", n)
	p.Fixed(field+".c", n)
}

// Message returns the values read, and an error when reading failed or
// more than the padding (under 8 bits) is left.
func (p *Reader) Message() (Message, error) {
	if p.err == nil && p.r.Remaining() >= 8 {
		p.err = fmt.Errorf("entropy: %d bits left unread", p.r.Remaining())
	}
	return p.msg, p.err
}
