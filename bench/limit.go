package bench

import (
	"encoding/binary"
	"errors"
	"math"
	mbits "math/bits"
	"unsafe"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/fields"
)

// The "limit" subject: a codec written by hand for exactly the world901
// layout (World of Crates, wire version 4), in plain Go, without packages
// bits and fields on its hot path. It writes the bytes bitwire writes,
// decodes the values bitwire decodes, and accepts and rejects the inputs
// bitwire accepts and rejects (limit_test.go checks all three). It is the
// speed limit of that message: every ratio against it says how far the
// general plan is from a codec that knows the message.
//
// What it knows (the layout Codec[World].Layout() prints):
//
//	Tick        32 bits
//	len(Crates) 11 bits (maxlen=1024)
//	per crate:  ID bitlen (5-bit prefix, then max(1, p) bits)
//	            Pos.X q [-512, 512] at 0.01, anchored at zero: 17 bits (0..102400)
//	            Pos.Y q [0, 64] at 0.01, grid from 0: 13 bits (0..6400)
//	            Pos.Z like X
//	            Rot   smallest three, 9 bits a component: 2 + 27 bits
//	            Asleep 1 bit
//	zero padding to a whole byte
//
// How it is fast, crate by crate, with one branch that is almost never
// taken: one bit position and two whole-word stores or loads (a crate is
// at most 113 bits, and 128 bits from the byte holding its first bit always
// hold it); range checks as integer compares on float bits, and every
// check of a crate folded into the sign bit of one word; a tie-breaking
// argmax as an integer max of magnitude bits above the complement of the
// index; 1/sqrt of a nearly unit squared norm by its first-order series;
// quaternion indices in fixed point, with the rounding guard folded into
// the added constant, so that the guard is a 32-bit truncation and one
// subtraction;
// the keep-the-indices rule of docs/wire-format.md as integer compares of
// a sum of precomputed squares against a precomputed bound (one table entry
// per index, squares and bounds side by side); the decoder's rebuilt
// component from that same integer sum, sqrt(1 - S·step²), which rounds to
// the float32 that fields' sum of the three squared values does for every
// valid code (TestLimitAllQuatCodes checks all 2^29).
//
// Slow cases go to the general path: a quaternion whose quantization lands
// near a rounding boundary, whose squared norm is further than 2^-20 from 1,
// or whose indices break the decoder's rule (which the general encoder then
// moves) goes to fields.Quat.Pack; and any input the limit would reject (an
// encoder's bad value, a decoder's bad packet) is handed whole to bitwire's
// Codec, so that the error returned is bitwire's own, field path and all.

const (
	limLenBits   = 11     // BitsRequired(1024)
	limMaxLen    = 1024   // maxlen of World.Crates
	limXSteps    = 102400 // X and Z: K from -51200 to 51200
	limXHalf     = 51200  // -kmin: the index of 0
	limYSteps    = 6400   // Y: 64 / 0.01 intervals from 0
	limQBits     = 9      // bits per quaternion component
	limQSteps    = 510    // 2^9 - 2 intervals
	limQHalf     = 255    // the index of 0
	limHeadBits  = 32 + limLenBits
	limCrateMin  = 5 + 1 + 17 + 13 + 17 + 2 + 3*limQBits + 1 // 83: an ID of 0 or 1
	limCrateMax  = limCrateMin - 1 + 31                      // 113: an ID of 2^31 or more
	limRestBits  = 13 + 17 + 2 + 3*limQBits + 1              // 60: Y, Z, Rot, Asleep
	limTailBytes = 64                                        // the zero-padded copy of a packet's end
)

// limSafeBits is how many bits from a crate's first bit the decoder's two
// loads may reach: the 16 bytes from the byte holding that bit.
const limSafeBits = 128

// limYStep is the step of Y's grid, (64 - 0) / 6400 as fields computes it.
const limYStep = 64.0 / limYSteps

// The float bits of the range ends: a float32 of magnitude at most 512 has
// its bits (sign cleared) at most those of 512, and a NaN more; a float32
// in [0, 64] with its sign clear has bits at most those of 64 (-0, in range,
// has the sign set and is left to the careful path).
const (
	limSign32 = 1 << 31
	limSign64 = 1 << 63
	limB512   = 0x44000000         // math.Float32bits(512)
	limB64    = 0x42800000         // math.Float32bits(64)
	limQuick  = 0x3eb0000000000000 // math.Float64bits(2^-20)
)

// The fixed point of the quaternion indices: t = c·K + C, K = ±2^limF/step
// scaled by the first-order 1/sqrt of the squared norm, C = (255.5)·2^limF
// + limG. The index is t >> limF; the guard holds when the fraction, t's low
// limF bits, is at least 2·limG: the scaled component then lies at least
// limG/2^limF (1e-6) from a rounding boundary, a thousand times what the
// series, the products and the sums can move it, so fields' floor of its own
// computation gives the same index.
const (
	limF = 32
	limG = 4295 // 1e-6 · 2^32, rounded up
)

// limOffs lists, for each dropped quaternion component, the other three in
// increasing order, as byte offsets of float32 components (four a row for
// the addressing).
var limOffs = [4][4]uint8{{4, 8, 12}, {0, 8, 12}, {0, 4, 12}, {0, 4, 8}}

// limIDDec is, for each 5-bit bitlen prefix p, the mask of its body, the
// leading 1 it drops (none for p = 0, whose 1-bit body is the value), how
// many bits prefix and body take, and how many the whole crate takes.
var limIDDec = func() (t [32]struct {
	mask, top uint32
	n, adv    uint64
}) {
	for p := range t {
		body := max(p, 1)
		t[p].mask = uint32(1<<body - 1)
		t[p].top = uint32(1<<p) &^ 1
		t[p].n = uint64(5 + body)
		t[p].adv = uint64(5 + body + 17 + limRestBits)
	}
	return t
}()

// limDEntry is what the decoder knows of a quaternion index, at one byte
// offset: its value as a float32, its square and its bound (see
// limQEntry).
type limDEntry struct {
	val     float32
	sq, lim uint32
	_       uint32
}

// limIDEnc is, for each length of an ID (bits.Len32), its bitlen prefix p
// (0 for 0 and 1), the mask of prefix and body and their length.
var limIDEnc = func() (t [33]struct{ p, mask, n uint64 }) {
	for n := range t {
		p := max(n-1, 0)
		body := max(p, 1)
		t[n].p = uint64(p)
		t[n].mask = 1<<(5+body) - 1
		t[n].n = uint64(5 + body)
	}
	return t
}()

// limBits is the bits of the float32 at f, loaded as an integer.
func limBits(f *float32) uint32 { return *(*uint32)(unsafe.Pointer(f)) }

// limQEntry is a quaternion index's square and bound. With j = i - 255
// the index's distance from the middle, sq is j², and lim the largest sum
// of three squares that the decoder's rule accepts when |j| is the largest
// of the three (docs/wire-format.md: d = sqrt(1 - a² - b² - c²) at least
// max(|a|, |b|, |c|) + 1e-6, with a = j·step and so on). The bounds fall
// as |j| grows, so a sum S is accepted when it is at most every one of the
// three bounds. Index 511, off the grid, has a square no sum may have.
type limQEntry struct{ sq, lim uint32 }

// Limit is the message-specific codec of World. Use NewLimit.
type Limit struct {
	general *bitwire.Codec[World] // every error, so that it is bitwire's
	quat    fields.Quat           // the quaternions the fast path leaves
	slow    int                   // how many it left (for the tests)
	// kq and kh are K for a positive and a negative dropped component,
	// and their halves (K = kq - d·kh for a squared norm of 1 + d); cfix
	// is C.
	kq, kh [2]float64
	cfix   float64
	step2  float64 // step², the rebuilt component's scale
	qe     [512]limQEntry
	qd     [512]limDEntry
}

// limQuatMargin is the encoder's margin between the rebuilt component and
// the others (docs/wire-format.md, "Smallest-three quaternion").
const limQuatMargin = 1e-6

// NewLimit returns the codec with its tables built.
func NewLimit() *Limit {
	l := &Limit{general: bitwire.MustFor[World](), quat: must(fields.NewQuat(limQBits))}
	sqrt2 := math.Sqrt2 // as a float64, so that the division rounds as fields' does
	step := sqrt2 / limQSteps
	k := math.Ldexp(1/step, limF)
	l.kq = [2]float64{k, -k}
	l.kh = [2]float64{k / 2, -k / 2}
	l.cfix = math.Ldexp(limQHalf+0.5, limF) + limG
	l.step2 = step * step
	for i := range limQSteps + 1 {
		j := i - limQHalf
		l.qd[i].val = float32(float64(j) * step)
		// The bound, by the rule in reals: S·step² + (J·step + margin)²
		// at most 1. TestLimitEveryQuatCode (and TestLimitAllQuatCodes,
		// every code) checks it against fields' floating-point rule.
		big := math.Abs(float64(j))*step + limQuatMargin
		l.qe[i] = limQEntry{sq: uint32(j * j), lim: uint32(math.Floor((1 - big*big) / l.step2))}
	}
	l.qe[511] = limQEntry{sq: 1 << 24, lim: 0}
	for i, e := range l.qe {
		l.qd[i].sq, l.qd[i].lim = e.sq, e.lim
	}
	return l
}

// ---- encoding ----

// store writes u at byte offset o of p, little-endian.
func store(p unsafe.Pointer, o uint, u uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(p, o))[:], u)
}

// Append appends the encoding of w to dst.
func (l *Limit) Append(dst []byte, w *World) ([]byte, error) {
	n := len(w.Crates)
	if n > limMaxLen {
		return l.general.Append(dst, w)
	}
	// Room for the longest crates and 16 bytes past the end: every crate is
	// two whole 8-byte stores.
	start := len(dst)
	need := (limHeadBits+n*limCrateMax+7)/8 + 16
	if cap(dst)-start < need {
		grown := make([]byte, start, start+need)
		copy(grown, dst)
		dst = grown
	}
	buf := dst[start : start+need]
	p := unsafe.Pointer(unsafe.SliceData(buf))
	store(p, 0, uint64(w.Tick)|uint64(n)<<32)
	// bp is the one bit position. The bits of buf from bp to the end of
	// the last store are zero, so the byte holding bp, or'ed into the
	// first word, keeps the bits before it.
	bp := uint(limHeadBits)
	// Crates by pointer, from the first to the last (never past it: the
	// garbage collector may not see a pointer to the end of an object).
	for i := 0; i < n; {
		var stop int
		bp, stop = l.encodeRun(p, bp, w.Crates[i:])
		if i += stop; i == n {
			break
		}
		// A crate the run could not be sure of.
		c := &w.Crates[i]
		rot, ok := l.crateSlow(c)
		if !ok {
			return l.general.Append(dst[:start], w)
		}
		bp = limPut(p, bp, c, limIndexXZ(float64(c.Pos.X)), limIndexY(float64(c.Pos.Y)), limIndexXZ(float64(c.Pos.Z)), rot)
		i++
	}
	return dst[:start+int((bp+7)>>3)], nil
}

// encodeRun encodes crates (at least one) at bit bp of p, and returns the
// next bit and len(crates), or the bit and the index of the crate where it
// stopped: the first that failed a quick check.
func (l *Limit) encodeRun(p unsafe.Pointer, bp uint, crates []Crate) (uint, int) {
	first := unsafe.Pointer(unsafe.SliceData(crates))
	last := unsafe.Add(first, (len(crates)-1)*int(unsafe.Sizeof(Crate{})))
	for cp := first; ; cp = unsafe.Add(cp, unsafe.Sizeof(Crate{})) {
		c := (*Crate)(cp)
		// Every check of the crate lands in fl's sign bit.
		// |X| and |Z| at most 512 carry into bit 31 when they are not;
		// that bit goes to the sign.
		xb, yb, zb := limBits(&c.Pos.X), limBits(&c.Pos.Y), limBits(&c.Pos.Z)
		fl := uint64((xb&^limSign32+(limSign32-1-limB512))|(zb&^limSign32+(limSign32-1-limB512)))<<32 | (limB64 - uint64(yb))
		xi, yi, zi := limIndexXZ(float64(c.Pos.X)), limIndexY(float64(c.Pos.Y)), limIndexXZ(float64(c.Pos.Z))
		// The rotation, fields.Quat.Pack's result when fl stays clear.
		r := &c.Rot
		f0, f1, f2, f3 := float64(r[0]), float64(r[1]), float64(r[2]), float64(r[3])
		dn := f0*f0 + f1*f1 + f2*f2 + f3*f3 - 1 // NaN and ±Inf fail the next line
		fl |= limQuick - math.Float64bits(dn)&^limSign64
		// The largest magnitude, lowest index on ties, as one integer max:
		// the magnitude's bits (the sign shifted out) above the complement
		// of the index.
		km := max(uint64(limBits(&r[0])<<1)*4+3, uint64(limBits(&r[1])<<1)*4+2,
			uint64(limBits(&r[2])<<1)*4+1, uint64(limBits(&r[3])<<1)*4)
		m := ^km & 3
		m4 := uintptr(^km<<2) & 12 // m as a byte offset
		rp := unsafe.Pointer(r)
		sg := *(*uint32)(unsafe.Add(rp, m4)) >> 31
		k := l.kq[sg] - dn*l.kh[sg] // ±2^limF/step / sqrt(1 + dn), to 0.375·dn² < 4e-13
		of := (*[4]uint8)(unsafe.Add(unsafe.Pointer(&limOffs), m4))
		ta := uint64(int64(float64(*(*float32)(unsafe.Add(rp, of[0])))*k + l.cfix))
		tb := uint64(int64(float64(*(*float32)(unsafe.Add(rp, of[1])))*k + l.cfix))
		tc := uint64(int64(float64(*(*float32)(unsafe.Add(rp, of[2])))*k + l.cfix))
		fl |= (uint64(uint32(ta)) - 2*limG) | (uint64(uint32(tb)) - 2*limG) | (uint64(uint32(tc)) - 2*limG)
		// The indices lie in 0..510 when the guard holds (the three are no
		// larger than 1/√2 of the norm); the masks keep garbage in the
		// tables otherwise.
		// They serve as byte offsets into qe and as the code's fields.
		a8, b8, c8 := uintptr(ta>>(limF-3))&(511<<3), uintptr(tb>>(limF-3))&(511<<3), uintptr(tc>>(limF-3))&(511<<3)
		qe := unsafe.Pointer(&l.qe)
		ea, eb, ec := (*limQEntry)(unsafe.Add(qe, a8)), (*limQEntry)(unsafe.Add(qe, b8)), (*limQEntry)(unsafe.Add(qe, c8))
		sum := uint64(ea.sq) + uint64(eb.sq) + uint64(ec.sq)
		fl |= (uint64(ea.lim) - sum) | (uint64(eb.lim) - sum) | (uint64(ec.lim) - sum)
		if int64(fl) < 0 {
			return bp, int((uintptr(cp) - uintptr(first)) / unsafe.Sizeof(Crate{}))
		}
		rot := m | uint64(a8)>>1 | uint64(b8)<<(2+limQBits-3) | uint64(c8)<<(2+2*limQBits-3)
		// As limPut, written out (too large to inline).
		e := &limIDEnc[mbits.Len32(c.ID)]
		id := (e.p | uint64(c.ID)<<5) & e.mask
		ob, s := bp>>3, bp&7
		t0 := s + uint(e.n) + 17
		rest := yi | zi<<13 | rot<<30 | uint64(*(*uint8)(unsafe.Pointer(&c.Asleep)))<<59
		w0 := uint64(*(*byte)(unsafe.Add(p, ob))) | id<<s | xi<<((s+uint(e.n))&63) | rest<<(t0&63)
		store(p, ob, w0)
		store(p, ob+8, rest>>((64-t0)&63))
		bp = ob*8 + t0 + limRestBits
		if cp == last {
			return bp, len(crates)
		}
	}
}

// limPut writes crate c at bit bp of p, with the indices of its position
// and its rotation's code, and returns the next bit.
func limPut(p unsafe.Pointer, bp uint, c *Crate, xi, yi, zi, rot uint64) uint {
	// ID as bitlen: p in 5 bits, then the max(1, p) bits below its
	// leading 1 (masked off with the bits above).
	e := &limIDEnc[mbits.Len32(c.ID)]
	id := (e.p | uint64(c.ID)<<5) & e.mask
	// Word 0: the byte holding bp, the ID and X (at most 7+36+17 = 60
	// bits); then Y, Z, Rot and Asleep (60 bits) straddle words 0 and 1.
	ob, s := bp>>3, bp&7
	t0 := s + uint(e.n) + 17
	rest := yi | zi<<13 | rot<<30 | uint64(*(*uint8)(unsafe.Pointer(&c.Asleep)))<<59 // a bool is 0 or 1
	w0 := uint64(*(*byte)(unsafe.Add(p, ob))) | id<<s | xi<<((s+uint(e.n))&63) | rest<<(t0&63)
	store(p, ob, w0)
	store(p, ob+8, rest>>((64-t0)&63))
	return ob*8 + t0 + limRestBits
}

// crateSlow is the careful path of a crate that failed a quick check: its
// rotation by fields.Quat.Pack, and false when a position is out of range
// (or NaN) or the rotation is refused.
func (l *Limit) crateSlow(c *Crate) (uint64, bool) {
	x, y, z := c.Pos.X, c.Pos.Y, c.Pos.Z
	if !(x >= -512 && x <= 512 && y >= 0 && y <= 64 && z >= -512 && z <= 512) {
		return 0, false
	}
	return l.packSlow(&c.Rot)
}

// limIndexXZ is the index of X or Z, floor(v/0.01 + 0.5) + 51200, for v a
// float32 in [-512, 512]: exact for every one of them (TestLimitQuantizers
// proves it), since v·100 of a float32 is exact in a float64 and the sum
// rounds across an integer only where the quotient by the step does.
func limIndexXZ(v float64) uint64 { return uint64(int64(v*100 + (limXHalf + 0.5))) }

// limIndexY is the index of Y, floor(v/0.01 + 0.5), for v a float32 in
// [0, 64]; exact likewise.
func limIndexY(v float64) uint64 { return uint64(int64(v*100 + 0.5)) }

// limValueXZ is the float32 that X or Z of index i decodes to, for i in
// 0..102400 (TestLimitQuantizers checks every one): (i - 51200)·0.01, which
// the float32 rounding keeps inside [-512, 512] without a clamp.
func limValueXZ(i uint64) float32 { return float32(float64(int64(i)-limXHalf) * 0.01) }

// limValueY is the float32 that Y of index i decodes to, for i in 0..6400.
func limValueY(i uint64) float32 { return float32(float64(i) * limYStep) }

// packSlow is fields.Quat.Pack of the rotation, and false on its error.
func (l *Limit) packSlow(r *[4]float32) (uint64, bool) {
	l.slow++
	u, err := l.quat.Pack([4]float64{float64(r[0]), float64(r[1]), float64(r[2]), float64(r[3])})
	return u, err == nil
}

// ---- decoding ----

// errLimitSlow says the fast decoder met something it leaves to bitwire.
var errLimitSlow = errors.New("limit: slow path")

// Unmarshal decodes data into w, reusing w's slice.
func (l *Limit) Unmarshal(data []byte, w *World) error {
	if err := l.decode(data, w); err != nil {
		return l.general.Unmarshal(data, w)
	}
	return nil
}

func (l *Limit) decode(data []byte, w *World) error {
	total := uint(len(data)) * 8
	if total < limHeadBits {
		return errLimitSlow
	}
	var head uint64
	if len(data) >= 8 {
		head = binary.LittleEndian.Uint64(data)
	} else {
		var short [8]byte
		copy(short[:], data)
		head = binary.LittleEndian.Uint64(short[:])
	}
	n := uint(head>>32) & (1<<limLenBits - 1)
	if n > limMaxLen || n*limCrateMin > total-limHeadBits {
		return errLimitSlow
	}
	w.Tick = uint32(head)
	if n == 0 {
		w.Crates = nil
	} else {
		if uint(cap(w.Crates)) < n {
			w.Crates = make([]Crate, n)
		}
		w.Crates = w.Crates[:n]
	}
	crates := w.Crates
	bp := uint(limHeadBits)
	bad := false
	// Crates whose loads all fall inside data are read from it in place;
	// the rest from a zero-padded copy of the end.
	if total >= limSafeBits {
		var done int
		bp, done, bad = l.decodeCrates(unsafe.Pointer(unsafe.SliceData(data)), bp, total-limSafeBits, crates)
		crates = crates[done:]
	}
	if len(crates) > 0 {
		from := bp >> 3
		var tail [limTailBytes]byte // at most 17 bytes of data, then zeros
		copy(tail[:], data[from:])
		tb := uint(len(data))*8 - from*8 // the bits the copy holds
		bp2, _, bad2 := l.decodeCrates(unsafe.Pointer(&tail), bp&7, tb, crates)
		if bp2 > tb { // read into the padding: the input ended
			return errLimitSlow
		}
		bp, bad = from*8+bp2, bad || bad2
	}
	if bad || total-bp >= 8 {
		return errLimitSlow
	}
	if bp&7 != 0 && data[bp>>3]>>(bp&7) != 0 {
		return errLimitSlow // non-zero padding
	}
	return nil
}

// load returns the 8 bytes at byte offset o of p, little-endian.
func load(p unsafe.Pointer, o uint) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, o))[:])
}

// decodeCrates reads crates from the bytes at p, starting at bit bp, while
// bp <= stop and crates remain; it returns the next bit, how many crates it
// read and whether any of them was bad. The caller guarantees that the 16
// bytes from byte stop/8 can be read.
func (l *Limit) decodeCrates(p unsafe.Pointer, bp, stop uint, crates []Crate) (uint, int, bool) {
	var bad uint32 // every check sets its sign bit when it fails
	done := 0
	// In rounds of as many crates as surely start at most at stop (each
	// takes at most limCrateMax bits), so that the inner loop has one bound.
	for done < len(crates) && bp <= stop {
		k := min(int((stop-bp)/limCrateMax)+1, len(crates)-done)
		cp := unsafe.Pointer(&crates[done])
		last := unsafe.Add(cp, (k-1)*int(unsafe.Sizeof(Crate{}))) // never past it: see Append
		bp, bad = l.decodeRun(p, bp, cp, last, bad)
		done += k
	}
	return bp, done, int32(bad) < 0
}

// decodeRun reads the crates from cp to last, starting at bit bp, and
// returns the next bit and bad with every crate's checks or'ed in.
func (l *Limit) decodeRun(p unsafe.Pointer, bp uint, cp, last unsafe.Pointer, bad uint32) (uint, uint32) {
	qd := unsafe.Pointer(&l.qd)
	for ; ; cp = unsafe.Add(cp, unsafe.Sizeof(Crate{})) {
		c := (*Crate)(cp)
		ob, s := bp>>3, bp&7
		w0 := load(p, ob)
		// ID and X from the first word.
		v := w0 >> s
		e := &limIDDec[v&31]
		c.ID = uint32(v>>5)&e.mask | e.top
		xs := s + uint(e.n)
		bp += uint(e.adv)
		xi := w0 >> (xs & 63) & (1<<17 - 1)
		c.Pos.X = limValueXZ(xi)
		ok := uint32(xi) + (limSign32 - limXSteps - 1) // bit 31 when above the grid
		// Y, Z, Rot and Asleep (60 bits) from both words.
		t := xs + 17
		r := w0>>(t&63) | load(p, ob+8)<<((64-t)&63)
		c.Asleep = r>>59&1 != 0
		yi := r & (1<<13 - 1)
		c.Pos.Y = limValueY(yi)
		ok |= uint32(yi) + (limSign32 - limYSteps - 1)
		zi := r >> 13 & (1<<17 - 1)
		c.Pos.Z = limValueXZ(zi)
		ok |= uint32(zi) + (limSign32 - limXSteps - 1)
		// The rotation, rebuilt as fields.Quat.Unpack does. The three
		// indices as byte offsets into qd.
		ea := (*limDEntry)(unsafe.Add(qd, r>>28&(511<<4)))
		eb := (*limDEntry)(unsafe.Add(qd, r>>37&(511<<4)))
		ec := (*limDEntry)(unsafe.Add(qd, r>>46&(511<<4)))
		m := r >> 30 & 3
		of := &limOffs[m]
		rp := unsafe.Pointer(&c.Rot)
		*(*float32)(unsafe.Add(rp, of[0])) = ea.val
		*(*float32)(unsafe.Add(rp, of[1])) = eb.val
		*(*float32)(unsafe.Add(rp, of[2])) = ec.val
		// 32-bit sums and differences (all below 2^26), so that the
		// table loads fold into them.
		sum := ea.sq + eb.sq + ec.sq
		c.Rot[m] = float32(math.Sqrt(1 - float64(sum)*l.step2))
		bad |= ok | (ea.lim - sum) | (eb.lim - sum) | (ec.lim - sum)
		if cp == last {
			return bp, bad
		}
	}
}

// ---- the benchmark subject ----

func limitSubject() Subject {
	_, v := MakeWorlds()
	l := NewLimit()
	var buf []byte
	var out World
	return Subject{
		Name: "limit",
		Encode: func() ([]byte, error) {
			var err error
			buf, err = l.Append(buf[:0], &v)
			return buf, err
		},
		Decode: func(data []byte) error { return l.Unmarshal(data, &out) },
		Check:  checkQuantized("limit", &out, &v, (*World).Equal),
	}
}

func init() { register(WWorld, limitSubject) }
