// Package bits provides the LSB-first bit stream that every bitwire coding
// writes to and reads from.
//
// The first bit written is bit 0 of byte 0; a multi-bit value is written low
// bit first. The Writer accumulates bits in a 64-bit scratch register and
// flushes it in whole little-endian words; the final byte is zero-padded.
// The Reader never returns zeros past the end of its input: reading past the
// end is ErrUnexpectedEnd, and nothing in this package panics on any input.
//
// Package bits knows nothing of reflection or of the codings built on it.
package bits

import (
	"encoding/binary"
	"errors"
	"slices"
	"sync"
)

// ErrUnexpectedEnd is returned by a Reader asked for more bits than remain.
var ErrUnexpectedEnd = errors.New("bitwire: unexpected end of input")

// Writer appends bits to a byte slice. The zero value is ready to use.
type Writer struct {
	buf     []byte // whole flushed words (and, transiently, partial bytes)
	scratch uint64 // pending bits, low bits first
	n       int    // number of pending bits in scratch, 0..63
}

// NewWriter returns a Writer that appends to buf[:0], reusing its storage.
func NewWriter(buf []byte) *Writer {
	return &Writer{buf: buf[:0]}
}

// Reset discards everything written and reuses buf's storage.
func (w *Writer) Reset(buf []byte) {
	w.buf = buf[:0]
	w.scratch = 0
	w.n = 0
}

// WriteBits writes the low n bits of v, low bit first. n must be in 0..64;
// bits of v above n are ignored. WriteBits panics on an n outside 0..64, which
// is always a bug in the caller, never a property of the data.
func (w *Writer) WriteBits(v uint64, n int) {
	if uint(n-1) >= 64 { // n outside 1..64, in one comparison
		if n == 0 {
			return
		}
		panic("bits: WriteBits with n outside 0..64")
	}
	// Every shift below is masked to 0..63, which spares the compiler's
	// handling of shifts by 64 or more.
	v &= ^uint64(0) >> (uint(64-n) & 63)
	w.scratch |= v << (uint(w.n) & 63)
	w.n += n
	if w.n >= 64 {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, w.scratch)
		w.n -= 64
		// The bits of v that did not fit. When none is left (w.n == 0)
		// the masked shift would keep v, so the scratch is cleared.
		w.scratch = v >> (uint(n-w.n) & 63)
		if w.n == 0 {
			w.scratch = 0
		}
	}
}

// WriteBool writes one bit: 1 for true. It is small enough to be inlined.
func (w *Writer) WriteBool(b bool) {
	if b {
		w.scratch |= 1 << uint(w.n)
	}
	w.n++
	if w.n == 64 {
		w.flush()
	}
}

// flush moves a full scratch word to buf.
func (w *Writer) flush() {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, w.scratch)
	w.scratch, w.n = 0, 0
}

// WriteBytes writes each byte of p as 8 bits, in order. It is the same as
// calling WriteBits(uint64(c), 8) for every byte, only faster.
func (w *Writer) WriteBytes(p []byte) {
	// Whole words: appended as they are when the pending bits are none,
	// else shifted in over them, a word out for each word in.
	words := len(p) &^ 7
	if w.n == 0 {
		w.buf = append(w.buf, p[:words]...)
	} else {
		sh := uint(w.n) & 63
		s, buf := w.scratch, w.buf // in registers across the loop
		for k := 0; k < words; k += 8 {
			v := binary.LittleEndian.Uint64(p[k:])
			buf = binary.LittleEndian.AppendUint64(buf, s|v<<sh)
			s = v >> ((64 - sh) & 63) // sh is 1..63
		}
		w.scratch, w.buf = s, buf
	}
	// The last 0..7 bytes in one write: the top of p's last 8 bytes, or
	// the bytes gathered when p is shorter.
	k := len(p) - words
	if k == 0 {
		return
	}
	var v uint64
	if words > 0 {
		v = binary.LittleEndian.Uint64(p[len(p)-8:]) >> (uint(64-8*k) & 63)
	} else {
		for i, c := range p {
			v |= uint64(c) << (uint(i*8) & 63)
		}
	}
	w.WriteBits(v, 8*k)
}

// WriteFrom writes every bit written to src so far, in order, as if each
// had been written to w directly. src is not changed; it must not be w.
func (w *Writer) WriteFrom(src *Writer) {
	w.WriteBytes(src.buf)
	w.WriteBits(src.scratch, src.n)
}

// Insert writes the low n bits of v (n in 0..64) at bit position at
// (0..Len()), moving every bit written after at up by n: the result is as
// if the bits had been written there in order. It lets a coder write a
// prefix (a code that depends on what follows) once the rest is written.
// Its cost grows with the number of bits after at. An n or at outside its
// range panics, as it is always a bug in the caller.
func (w *Writer) Insert(at int, v uint64, n int) {
	end := w.Len()
	if at < 0 || at > end || uint(n) > 64 {
		panic("bits: Insert outside 0..Len()")
	}
	if k := at - len(w.buf)*8; k >= 0 { // the bits after at are all pending
		tail, tn := w.scratch>>(uint(k)&63), w.n-k
		w.scratch &= 1<<(uint(k)&63) - 1
		w.n = k
		w.WriteBits(v, n)
		w.WriteBits(tail, tn)
		return
	}
	if end-at <= 64 { // a short tail: read it, then write v and it
		i, r := at>>3, uint(at&7)
		var lo uint64
		if i+8 <= cap(w.buf) { // one load: the bytes past len are masked off below
			lo = binary.LittleEndian.Uint64(w.buf[i : i+8 : cap(w.buf)])
		} else {
			for k, c := range w.buf[i:] { // at most 8 bytes
				lo |= uint64(c) << (uint(k*8) & 63)
			}
		}
		bp := (len(w.buf)-i)*8 - int(r) // its bits in buf, 1..64
		tail := lo >> r
		if bp < 64 {
			tail = tail&(1<<(uint(bp)&63)-1) | w.scratch<<(uint(bp)&63)
		}
		tn := end - at
		w.Truncate(at)
		w.WriteBits(v, n)
		w.WriteBits(tail, tn)
		return
	}
	// Copy the bytes from at's on to a spare area past the end (far enough
	// that rewriting them never catches up with what is still to be read),
	// truncate at at, write v, then the copied bits.
	i, r := at>>3, at&7
	t := len(w.buf) - i
	gap := len(w.buf) + 24
	if cap(w.buf) < gap+t {
		nb := make([]byte, len(w.buf), 2*cap(w.buf)+gap+t)
		copy(nb, w.buf)
		w.buf = nb
	}
	src := w.buf[gap : gap+t]
	copy(src, w.buf[i:])
	sc, sn := w.scratch, w.n
	w.Truncate(at)
	w.WriteBits(v, n)
	w.WriteBits(uint64(src[0])>>uint(r), 8-r)
	w.WriteBytes(src[1:])
	w.WriteBits(sc, sn)
}

// Len returns the number of bits written.
func (w *Writer) Len() int { return len(w.buf)*8 + w.n }

// Bytes returns the bytes written so far, the last one zero-padded. The slice
// aliases the Writer's storage and is valid until the next write or Reset.
func (w *Writer) Bytes() []byte {
	m := len(w.buf)
	tail := (w.n + 7) / 8
	if tail == 0 {
		return w.buf
	}
	out := binary.LittleEndian.AppendUint64(w.buf, w.scratch)
	return out[:m+tail]
}

// Truncate discards every bit written after the first n, so that Len()
// becomes n. It panics if n is negative or larger than Len().
func (w *Writer) Truncate(n int) {
	if n < 0 || n > w.Len() {
		panic("bits: Truncate outside 0..Len()")
	}
	if n >= len(w.buf)*8 {
		k := n - len(w.buf)*8
		w.scratch &= 1<<uint(k) - 1
		w.n = k
		return
	}
	i, k := n/8, n%8
	w.scratch = uint64(w.buf[i]) & (1<<uint(k) - 1)
	w.buf = w.buf[:i]
	w.n = k
}

// ResetAppend discards the pending bits and continues after the bytes of
// dst: what is written next starts at bit 0 of byte len(dst), and Bytes
// returns dst followed by the new bytes. Len counts dst's bytes too.
func (w *Writer) ResetAppend(dst []byte) {
	w.buf = dst
	w.scratch = 0
	w.n = 0
}

// Window returns the writer's storage for a caller that writes whole words
// itself: buf holds every bit written so far (the pending ones flushed into
// bytes, the last byte's bits past them zero) followed by at least extra
// more bytes of unspecified content, and n is Len(). The caller may change
// any bit of buf from bit n on (bit i is bit i%8 of buf[i/8]) and must then
// call Commit. Window grows the storage as append does when it must.
func (w *Writer) Window(extra int) (buf []byte, n int) {
	n = w.Len()
	w.buf = slices.Grow(w.buf, 8+max(extra, 0))
	buf = w.buf[:cap(w.buf)]
	binary.LittleEndian.PutUint64(buf[len(w.buf):], w.scratch)
	return buf, n
}

// Commit ends a Window: the writer then holds the first n bits of buf, the
// slice Window returned (its bits past n are ignored), with n at least the
// Len() Window returned and at most 8·len(buf).
func (w *Writer) Commit(buf []byte, n int) {
	w.buf = buf[:n>>3]
	w.n = n & 7
	w.scratch = 0
	if w.n != 0 {
		w.scratch = uint64(buf[n>>3]) & (1<<uint(w.n) - 1)
	}
}

var writerPool = sync.Pool{New: func() any { return new(Writer) }}

// GetWriter takes a reset Writer from a pool shared by the process.
func GetWriter() *Writer {
	w := writerPool.Get().(*Writer)
	w.buf = w.buf[:0]
	w.scratch = 0
	w.n = 0
	return w
}

// PutWriter returns w to the pool. The caller must not use w, nor any slice
// returned by its Bytes, afterwards. Writers that grew beyond 64 KiB are
// dropped so the pool does not pin large buffers.
func PutWriter(w *Writer) {
	if cap(w.buf) > 64<<10 {
		return
	}
	writerPool.Put(w)
}

// Reader reads bits from a byte slice in the order a Writer wrote them.
type Reader struct {
	data  []byte
	next  int    // index of the next byte of data not yet in cache
	cache uint64 // bits not yet consumed, low bits first
	n     int    // number of valid bits in cache
	total int    // len(data)*8
	// The bits consumed are next*8 - n: refill loads whole bytes only.
	spent int64 // see Spent
}

// NewReader returns a Reader over data.
func NewReader(data []byte) *Reader {
	r := &Reader{}
	r.Reset(data)
	return r
}

// Reset makes r read data from its first bit.
func (r *Reader) Reset(data []byte) {
	*r = Reader{data: data, total: len(data) * 8}
}

// Spent returns the counter that decoders reading from r keep of the memory
// they have allocated for what this input brings, so that several decodes
// from one input (a count then several messages, or a loop of decodes)
// share one allocation budget. NewReader and Reset set it to 0; the Reader
// itself never reads or changes it.
func (r *Reader) Spent() int64 { return r.spent }

// Spend adds n to the counter that Spent returns.
func (r *Reader) Spend(n int64) { r.spent += n }

// refill tops the cache up to at least 56 bits, and at most 63, when that
// much input remains. Never 64: ReadBits' fast path takes n < 64 bits from
// the cache, and a 64-bit read must find fewer cached.
func (r *Reader) refill() {
	if r.next+8 <= len(r.data) {
		r.cache |= binary.LittleEndian.Uint64(r.data[r.next:]) << uint(r.n)
		r.next += (63 - r.n) >> 3
		r.n |= 56
		return
	}
	for r.n <= 55 && r.next < len(r.data) {
		r.cache |= uint64(r.data[r.next]) << uint(r.n)
		r.next++
		r.n += 8
	}
}

// ReadBits reads n bits (0..64) and returns them as the low bits of the
// result. It returns ErrUnexpectedEnd, consuming nothing, if fewer than n bits
// remain, and an error for n outside 0..64.
func (r *Reader) ReadBits(n int) (uint64, error) {
	if uint(n) <= uint(r.n) { // all cached (so n < 64): the fast path (ReadBits is not inlined: cost 106 > 80)
		v := r.cache & (1<<(uint(n)&63) - 1)
		r.cache >>= uint(n) & 63
		r.n -= n
		return v, nil
	}
	return r.readBitsSlow(n)
}

// readBitsSlow is ReadBits when the cache is short; kept out of line so that
// ReadBits's fast path stays a few instructions.
//
//go:noinline
func (r *Reader) readBitsSlow(n int) (uint64, error) {
	if uint(n) <= 56 && r.next+8 <= len(r.data) {
		// The common miss: a whole word to load. take and refill, written out here.
		r.cache |= binary.LittleEndian.Uint64(r.data[r.next:]) << (uint(r.n) & 63)
		r.next += (63 - r.n) >> 3
		r.n |= 56
		v := r.cache & (1<<(uint(n)&63) - 1)
		r.cache >>= uint(n) & 63
		r.n -= n
		return v, nil
	}
	if uint(n) > 64 {
		return 0, errors.New("bits: ReadBits with n outside 0..64")
	}
	if n > r.Remaining() {
		return 0, ErrUnexpectedEnd
	}
	if n > 56 {
		lo := r.take(32)
		hi := r.take(n - 32)
		return lo | hi<<32, nil
	}
	return r.take(n), nil
}

// take consumes n ≤ 56 bits known to be available.
func (r *Reader) take(n int) uint64 {
	if r.n < n {
		r.refill()
	}
	v := r.cache & (1<<(uint(n)&63) - 1)
	r.cache >>= uint(n) & 63
	r.n -= n
	return v
}

// Peek returns the next n bits (0..56) without consuming them, as ReadBits
// would return them, with zeros in place of bits past the end of the input:
// a table decoder peeks at the longest code, finds the symbol, then skips
// only that symbol's length (and Skip reports an end that truncates it).
func (r *Reader) Peek(n int) uint64 {
	n &= 63
	if n > 56 {
		n = 56
	}
	if r.n < n {
		r.refill()
	}
	return r.cache & (1<<uint(n) - 1)
}

// Lookahead is Peek(56) for table decoders, small enough to be inlined:
// its low 56 bits are what Peek(56) returns, and the bits above are later
// bits of the input or zeros (never bits from past its end).
func (r *Reader) Lookahead() uint64 {
	if r.n < 56 {
		r.refill()
	}
	return r.cache
}

// Drop consumes n bits (0..56) when they are already in the reader's
// cache (a Peek of at least n bits just put them there, if the input has
// them) and reports whether it did; when it reports false it consumed
// nothing, and ReadBits or Skip tell the caller why. It is the inlinable
// step a table decoder takes after a Peek.
func (r *Reader) Drop(n int) bool {
	if uint(n) > uint(r.n) {
		return false
	}
	r.cache >>= uint(n) & 63
	r.n -= n
	return true
}

// ReadBool reads one bit.
func (r *Reader) ReadBool() (bool, error) {
	if r.n > 0 { // a cached bit: the fast path (ReadBool is not inlined: cost 95 > 80)
		b := r.cache&1 != 0
		r.cache >>= 1
		r.n--
		return b, nil
	}
	return r.readBoolSlow()
}

// readBoolSlow is ReadBool when the cache is empty, kept out of line likewise.
//
//go:noinline
func (r *Reader) readBoolSlow() (bool, error) {
	if r.Remaining() <= 0 {
		return false, ErrUnexpectedEnd
	}
	return r.take(1) == 1, nil
}

// ReadBytes fills p with the next len(p)*8 bits, 8 bits a byte.
func (r *Reader) ReadBytes(p []byte) error {
	if len(p)*8 > r.Remaining() {
		return ErrUnexpectedEnd
	}
	// Whole words of the input while 8 bytes are left in it: each byte of
	// p takes the cached bits and the word's low ones, and the word's top
	// bits are cached in their place, so the count cached does not change
	// (a shift by 64 gives 0: nothing cached, or the whole word when 64
	// bits are).
	n := uint(r.n)
	c, next := r.cache, r.next
	for len(p) >= 8 && next+8 <= len(r.data) {
		x := binary.LittleEndian.Uint64(r.data[next:])
		binary.LittleEndian.PutUint64(p, c|x<<n)
		c = x >> (64 - n)
		next += 8
		p = p[8:]
	}
	r.cache, r.next = c, next
	for len(p) >= 7 {
		v := r.take(56)
		binary.LittleEndian.PutUint32(p, uint32(v))
		binary.LittleEndian.PutUint16(p[4:], uint16(v>>32))
		p[6] = byte(v >> 48)
		p = p[7:]
	}
	if len(p) > 0 {
		v := r.take(8 * len(p))
		for i := range p {
			p[i] = byte(v >> (uint(8*i) & 63))
		}
	}
	return nil
}

// Remaining returns the number of unread bits, padding included.
func (r *Reader) Remaining() int { return r.total - r.Pos() }

// Pos returns the number of bits read so far.
func (r *Reader) Pos() int { return r.next*8 - r.n }

// Skip consumes n bits, or returns ErrUnexpectedEnd if fewer remain.
func (r *Reader) Skip(n int) error {
	if n < 0 || n > r.Remaining() {
		return ErrUnexpectedEnd
	}
	for n > 0 {
		k := n
		if k > 56 {
			k = 56
		}
		r.take(k)
		n -= k
	}
	return nil
}

// CheckPadding reports whether the input ends here: fewer than 8 bits remain
// and all of them are zero. Decoders of whole messages use it to reject
// trailing data.
func (r *Reader) CheckPadding() bool {
	rem := r.Remaining()
	if rem >= 8 {
		return false
	}
	if rem == 0 {
		return true
	}
	return r.take(rem) == 0
}

// Source returns the input and the position of the next bit to read, for a
// decoder that reads whole words of the input itself (a bit at position p
// is bit p%8 of data[p/8]); SkipTo then moves the Reader past what it read.
// The slice aliases the input and must not be changed.
func (r *Reader) Source() (data []byte, pos int) { return r.data, r.Pos() }

// SkipTo moves the Reader to bit pos of its input, which must lie between
// Pos() and the end; a pos outside that range panics, as it is always a
// bug in the caller.
func (r *Reader) SkipTo(pos int) {
	if pos < r.Pos() || pos > r.total {
		panic("bits: SkipTo outside Pos()..end")
	}
	r.next, r.cache, r.n = pos>>3, 0, 0
	if k := pos & 7; k != 0 { // a byte remains: pos < total
		r.refill()
		r.cache >>= uint(k)
		r.n -= k
	}
}
