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
// layout (World of Crates under wire version 2), in plain Go, without
// packages bits and fields on its hot path. It writes the bytes bitwire
// writes, decodes the values bitwire decodes, and accepts and rejects the
// inputs bitwire accepts and rejects (limit_test.go checks all three). It
// is the real speed limit of that message: every ratio against it says how
// far the general plan is from a codec that knows the message.
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
// Slow cases go to the general path: a quaternion whose quantization lands
// near a rounding boundary or breaks the encoder's margin goes to
// fields.Quat.Pack, and any input the limit would reject (an encoder's bad
// value, a decoder's bad packet) is handed whole to bitwire's Codec, so that
// the error returned is bitwire's own, field path and all.

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

// limSafeBits is how many bits past a crate's first bit the decoder's loads
// reach at most: its third load starts at most 5+31+17+13+17 = 83 bits in
// and reads the 8 bytes from the byte holding that bit.
const limSafeBits = 5 + 31 + 17 + 13 + 17 + 64

// limYStep is the step of Y's grid, (64 - 0) / 6400 as fields computes it.
const limYStep = 64.0 / limYSteps

// limOthers lists, for each dropped quaternion component, the other three
// in increasing order.
var limOthers = [4][3]uint8{{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}}

// Limit is the message-specific codec of World. Use NewLimit.
type Limit struct {
	general *bitwire.Codec[World] // every error, so that it is bitwire's
	quat    fields.Quat           // the quaternions the fast path leaves
	slow    int                   // how many it left (for the tests)
	// The quaternion grid: qstep is √2 / 510, qinv its inverse, qmid
	// 255.5 (the index of 0 plus the rounding half).
	qstep, qinv, qmid float64
	// Per component index: the grid value, as a float64 and as a float32,
	// and the float64 bits of |value| + 1e-6, the least the rebuilt
	// component must reach (positive floats order as their bits, so the
	// largest threshold is an integer max). Index 511, off the grid, has
	// value 0 and threshold +Inf, which no component reaches.
	qval [512]float64
	q32  [512]float32
	qthr [512]uint64
}

// limQuatMargin is the encoder's margin between the rebuilt component and
// the others (docs/wire-format.md, "Smallest-three quaternion").
const limQuatMargin = 1e-6

// limGuard is how far from an integer a quaternion component's scaled value
// must lie for its rounding to be trusted without the general path.
const limGuard = 1e-6

// NewLimit returns the codec with its tables built.
func NewLimit() *Limit {
	l := &Limit{general: bitwire.MustFor[World](), quat: must(fields.NewQuat(limQBits))}
	sqrt2 := math.Sqrt2 // as a float64, so that the division rounds as fields' does
	l.qstep = sqrt2 / limQSteps
	l.qinv = 1 / l.qstep
	l.qmid = limQHalf + 0.5
	for i := range limQSteps + 1 {
		v := float64(i-limQHalf) * l.qstep
		l.qval[i] = v
		l.q32[i] = float32(v)
		l.qthr[i] = math.Float64bits(math.Abs(v) + limQuatMargin)
	}
	l.qthr[511] = math.Float64bits(math.Inf(1))
	return l
}

// ---- encoding ----

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
	head := uint64(w.Tick) | uint64(n)<<32
	binary.LittleEndian.PutUint64(buf, head)
	pos := limHeadBits / 8
	acc := head >> (limHeadBits &^ 7) // the bits of the last, partial byte
	nb := uint(limHeadBits & 7)       // how many
	for i := range w.Crates {
		c := &w.Crates[i]
		x, y, z := float64(c.Pos.X), float64(c.Pos.Y), float64(c.Pos.Z)
		if !(x >= -512 && x <= 512 && y >= 0 && y <= 64 && z >= -512 && z <= 512) {
			return l.general.Append(dst[:start], w) // NaN, ±Inf or out of range
		}
		xi, yi, zi := limIndexXZ(x), limIndexY(y), limIndexXZ(z)
		// The rotation: fields.Quat.Pack for the inputs whose result this
		// can be sure of; the others (a squared norm further than 1e-3
		// from 1 or NaN, a component within limGuard of a rounding
		// boundary, indices that break the decoder's margin, which the
		// general encoder then moves) go to packSlow.
		r := &c.Rot
		r0, r1, r2, r3 := float64(r[0]), float64(r[1]), float64(r[2]), float64(r[3])
		norm2 := r0*r0 + r1*r1 + r2*r2 + r3*r3
		// The largest magnitude, lowest index on ties, as one integer max:
		// the magnitude's bits above the complement of the index.
		k0 := uint64(math.Float32bits(r[0])&^(1<<31))<<2 | 3
		k1 := uint64(math.Float32bits(r[1])&^(1<<31))<<2 | 2
		k2 := uint64(math.Float32bits(r[2])&^(1<<31))<<2 | 1
		k3 := uint64(math.Float32bits(r[3])&^(1<<31))<<2 | 0
		m := (3 - max(k0, k1, k2, k3)) & 3
		scale := 1 / math.Sqrt(norm2)
		if r[m] < 0 {
			scale = -scale
		}
		o := &limOthers[m]
		a, ok0 := l.quatIndex(float64(r[o[0]&3]) * scale)
		b, ok1 := l.quatIndex(float64(r[o[1]&3]) * scale)
		cc, ok2 := l.quatIndex(float64(r[o[2]&3]) * scale)
		// The decoder's rule, computed as it computes it (the masks only
		// keep a NaN's garbage index in the tables; ok0 is then false).
		a, b, cc = a&511, b&511, cc&511
		va, vb, vc := l.qval[a], l.qval[b], l.qval[cc]
		rot := m | a<<2 | b<<(2+limQBits) | cc<<(2+2*limQBits)
		if !(ok0 && ok1 && ok2 && math.Abs(norm2-1) <= 1e-3 &&
			math.Sqrt(1-va*va-vb*vb-vc*vc) >= math.Float64frombits(max(l.qthr[a], l.qthr[b], l.qthr[cc]))) {
			var ok bool
			if rot, ok = l.packSlow(r); !ok {
				return l.general.Append(dst[:start], w)
			}
		}
		// ID as bitlen: p in 5 bits, then the max(1, p) bits below its
		// leading 1 (masked off with the bits above).
		p := uint(mbits.Len32(c.ID|1) - 1)
		body := max(p, 1)
		id := (uint64(p) | uint64(c.ID)<<5) & (1<<(5+body) - 1)
		// Word 0: the pending bits, the ID and X (at most 7+36+17 = 60
		// bits); then Y, Z, Rot and Asleep (60 bits) straddle words 0 and 1.
		t0 := nb + 5 + body + 17
		w0 := acc | id<<nb | xi<<(nb+5+body)
		rest := yi | zi<<13 | rot<<30 | uint64(b2u(c.Asleep))<<59
		w0 |= rest << t0
		w1 := rest >> (64 - t0)
		out := buf[pos : pos+16]
		binary.LittleEndian.PutUint64(out, w0)
		binary.LittleEndian.PutUint64(out[8:], w1)
		t := t0 + limRestBits // 83..120 bits: the last byte is in word 1
		pos += int(t >> 3)
		nb = t & 7
		acc = w1 >> ((t - 64) &^ 7)
	}
	return dst[:start+pos+int((nb+7)>>3)], nil
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

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// quatIndex is the grid index of a scaled component, floor(v/step + 0.5) +
// 255 limited to 0..510, when v/step lies clear of a rounding boundary.
func (l *Limit) quatIndex(v float64) (uint64, bool) {
	y := v*l.qinv + l.qmid
	k := int64(y)
	f := y - float64(k)
	return uint64(min(k, limQSteps)), f >= limGuard && f <= 1-limGuard
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
		var tail [limTailBytes]byte // at most 20 bytes of data, then zeros
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
// read and whether any of them was bad. The caller guarantees that the
// bytes up to stop/8 + limSafeBits/8 can be read.
func (l *Limit) decodeCrates(p unsafe.Pointer, bp, stop uint, crates []Crate) (uint, int, bool) {
	var bad uint64
	i := 0
	for ; i < len(crates) && bp <= stop; i++ {
		c := &crates[i]
		// ID and X.
		v := load(p, bp>>3) >> (bp & 7)
		pw := uint(v & 31)
		body := max(pw, 1)
		c.ID = uint32(v>>5&(1<<body-1) | (1<<pw)&^1)
		xi := v >> (5 + body) & (1<<17 - 1)
		bp += 5 + body + 17
		// Y and Z.
		v = load(p, bp>>3) >> (bp & 7)
		yi := v & (1<<13 - 1)
		zi := v >> 13 & (1<<17 - 1)
		bp += 30
		// Rot and Asleep.
		v = load(p, bp>>3) >> (bp & 7)
		bp += 30
		bad |= flag(xi > limXSteps) | flag(yi > limYSteps) | flag(zi > limXSteps)
		c.Pos.X = limValueXZ(xi)
		c.Pos.Y = limValueY(yi)
		c.Pos.Z = limValueXZ(zi)
		// The rotation, rebuilt as fields.Quat.Unpack does. An index of
		// 511 is off the grid: its threshold is +Inf. So is a NaN d
		// (squares summing above 1) refused, and a d short of the others
		// by the encoder's margin.
		m := v & 3
		a, b, cc := v>>2&511, v>>11&511, v>>20&511
		va, vb, vc := l.qval[a], l.qval[b], l.qval[cc]
		d := math.Sqrt(1 - va*va - vb*vb - vc*vc)
		bad |= flag(!(d >= math.Float64frombits(max(l.qthr[a], l.qthr[b], l.qthr[cc]))))
		o := &limOthers[m]
		c.Rot[o[0]&3] = l.q32[a]
		c.Rot[o[1]&3] = l.q32[b]
		c.Rot[o[2]&3] = l.q32[cc]
		c.Rot[m] = float32(d)
		c.Asleep = v>>29&1 != 0
	}
	return bp, i, bad != 0
}

// flag is 1 for true, without a branch.
func flag(b bool) uint64 {
	if b {
		return 1
	}
	return 0
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
