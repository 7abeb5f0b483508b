package bitwire

import (
	"encoding/binary"
	"errors"
	"slices"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// The fast path for structs made only of scalar leaves without a sign flag
// (bools, bits, ranges, quantized and raw floats, varints, unsigned bitlen
// integers, quaternions, times), in nested structs and arrays as deep as
// they go: the typical game entity. Such a struct is compiled once more
// into a flat list of leaves at their offsets from the struct, and the
// root, encStruct/decStruct, slices of such structs and composite delta
// fields walk that list in one loop: no recursion into nested structs and
// arrays, no group checks, and the hottest codings dispatched without a
// call to encNode or decNode.
//
// The flat path produces exactly the bits of the general path. On any error
// it rewinds, and the general path runs again to report the error with its
// field path, so error messages are the same too.

// flatCode selects how one flat leaf is coded.
type flatCode uint8

const (
	flatNode     flatCode = iota // any other leaf: through encNode / decNode
	flatQ32                      // q on a float32, without clamp, that Float32Scale proves a product and a sum
	flatQ32T                     // an encoder's flatQ32 that Float32Scale does not prove (flatOp.enc): Index's inline terms, or Index
	flatRangeInt                 // range on an integer, without clamp
	flatBool                     // bool
	flatBitlenU                  // bitlen on an unsigned integer (no sign flag)
	flatQuat                     // quaternion

	flatNone flatCode = 255 // not on the flat path (coder.flat)
)

// flatOp is one leaf of a flat plan: its coding and its offset from the
// start of the struct. The first leaf of a run (see flatten) also holds the
// run's length in leaves and in bits.
type flatOp struct {
	code  flatCode
	enc   flatCode // how the encoders code it: code, or flatQ32T for a flatQ32 they must check
	off   uintptr
	n     *node
	width int    // bits, for the fixed-width codings that runs are made of
	mask  uint64 // 2^width - 1
	last  bool   // the last leaf of the plan
	count int    // the first leaf of a run: how many leaves it spans
	bits  int    // and their bits
	sh    uint   // where the leaf's bits start in its run
	end   uint   // the last leaf of a run: the run's bits (encWords stores the run after it)

	// The node's parameters the kernels need, copied at plan compile time
	// so that a kernel reads its op alone (see kernel).
	mem memKind
	lim uint64 // the largest valid index: q's Steps(), a range's max-min; bitlen: the type's max; quat: a component's mask
	lo  uint64 // a range's min
	// q on a float32: Value's terms, at + (kmin+i)·step inside the grid
	// and v0, vN at its ends.
	qat, qk, qstep float64
	q0, qN         float32
	// q on a float32 where fields.Quantizer.Float32Scale proves it
	// (qmul != 0): the index of v in [qmin, qmax] is v·qmul + qoff.
	qmul, qoff, qmin, qmax float64
	// q on a float32 that Float32Scale does not prove, where Index has a
	// fast path (qinv != 0): its terms (fields.Quantizer.IndexTerms), run
	// inline for v in [qmin, qmax]; Index where they are not sure.
	qiat, qinv, qioff float64
	grid              *fields.QuatGrid // quat: the decoding tables; nil when too wide
	bw                uint             // bitlen: the prefix width; quat: the bits of a component
}

// flatPlan is the flat form of a struct plan.
// wordLoop is the outer loop's state of encWords and decWords: the first
// struct, the stride, how many structs and which one, and the last bit
// position a whole struct may start at. Both keep it in memory (they take
// its address), so the leaves' loop has the registers and the state is read
// once a struct rather than once a leaf.
type wordLoop struct {
	first    unsafe.Pointer
	stride   uintptr
	count, k int
	stop     uint
	start    uint // encWords: the struct's first bit
}

type flatPlan struct {
	ops   []flatOp
	depth int // struct nesting the leaves span: 1 when none is in a nested struct
	// words is the most bits one struct takes when decWords can read every
	// leaf (each a run of fixed-width leaves, a quaternion with a table
	// or an unsigned bitlen integer of up to 57 bits), else 0.
	words int
	// enc: encWords writes the structs (words > 0, and each piece it
	// stores, a run or a bitlen integer, is at most 56 bits).
	enc bool
}

// maxFlatOps bounds a flat plan: an array of structs is unrolled into its
// leaves, so a big one would make a big list.
const maxFlatOps = 1024

// flatten returns the flat form of p, or nil when p has a field the flat
// path does not code (strings, slices, maps, pointers, signed adaptive
// integers, whose sign flag a rewind could not take back, fixed-point
// numbers, groups) or more than maxFlatOps leaves.
//
// Consecutive fixed-width leaves (q on float32, ranges on signed integers,
// bools, quaternions) are grouped into runs of at most maxRunBits bits,
// which decFlat reads with one ReadBits: the typical entity is a few reads
// rather than a dozen. encWords makes each run up in a register and stores
// it at once; encFlats' own loop writes leaf by leaf (WriteBits is inlined,
// and accumulating a run through the Writer measured slower).
func flatten(p *plan) *flatPlan {
	fp := &flatPlan{}
	if !fp.addStruct(p, 0, 1) || len(fp.ops) == 0 {
		return nil
	}
	start := -1 // the first leaf of the open run
	words := 0
	for i := range fp.ops {
		op := &fp.ops[i]
		op.mask = 1<<uint(op.width) - 1
		if b := op.kernel(); b > 0 && words >= 0 {
			words += b
		} else {
			words = -1
		}
		if op.width == 0 {
			start = -1
			continue
		}
		if start < 0 || fp.ops[start].bits+op.width > maxRunBits {
			start = i
		}
		op.sh = uint(fp.ops[start].bits)
		fp.ops[start].count++
		fp.ops[start].bits += op.width
	}
	fp.words = max(words, 0)
	fp.enc = fp.words > 0
	for i := range fp.ops {
		op := &fp.ops[i]
		if op.width > 0 && (i+1 == len(fp.ops) || fp.ops[i+1].width == 0 || fp.ops[i+1].count > 0) {
			op.end = op.sh + uint(op.width) // the run's bits
		}
		if op.code == flatBitlenU && int(op.bw)+max(1<<op.bw-1, 1) > maxRunBits {
			fp.enc = false
		}
	}
	fp.ops[len(fp.ops)-1].last = true
	return fp
}

// kernel copies into op the parameters of its node that the kernels use,
// and returns the most bits decWords reads for it, or 0 when decWords
// cannot read it.
func (op *flatOp) kernel() int {
	n := op.n
	op.mem = n.mem
	// decWords loads 8 bytes at a bit offset of up to 7, and encWords
	// stores a run shifted by as much: a leaf wider than maxRunBits (a
	// full-range 64-bit range, say) would lose its top bits there, so a
	// plan with one stays on decFlats/encFlats, which read through the
	// Reader.
	if b := op.params(); op.width <= maxRunBits {
		return b
	}
	return 0
}

// params is kernel without the width check.
func (op *flatOp) params() int {
	n := op.n
	switch op.code {
	case flatQ32:
		q := &n.q
		op.lim = q.Steps()
		op.qk, op.qstep = float64(q.KMin()), q.Step()
		if !q.ZeroAnchored() {
			op.qat = q.Min()
		}
		op.q0, op.qN = float32(q.Value(0)), float32(q.Value(q.Steps()))
		if mul, off, ok := q.Float32Scale(); ok {
			op.qmul, op.qoff, op.qmin, op.qmax = mul, off, q.Min(), q.Max()
		} else {
			op.enc = flatQ32T // the encoders check it (Index's inline terms, or Index)
			if at, inv, off, ok := q.IndexTerms(); ok && inv != 0 {
				op.qiat, op.qinv, op.qioff, op.qmin, op.qmax = at, inv, off, q.Min(), q.Max()
			}
		}
		return op.width
	case flatRangeInt:
		op.lo, op.lim = n.rangeSpan()
		return op.width
	case flatBool:
		return op.width
	case flatQuat:
		op.bw = uint(op.width-2) / 3 // bits a component
		op.lim = 1<<op.bw - 1
		if op.grid = n.quat.Grid(); op.grid != nil && n.mem == mF32 {
			return op.width
		}
	case flatBitlenU:
		op.lim = ^uint64(0) >> (64 - uint(n.mem.sizeBits())) // unsigned: the type's max
		op.bw = uint(fields.BitlenPrefixBits(n.n))
		if body := max(1<<op.bw-1, 1); int(op.bw)+body <= 57 {
			return int(op.bw) + body
		}
	}
	return 0
}

// maxRunBits bounds a run: what one ReadBits takes from a full cache.
const maxRunBits = 56

func (fp *flatPlan) addStruct(p *plan, off uintptr, depth int) bool {
	fp.depth = max(fp.depth, depth)
	for i := range p.fields {
		f := &p.fields[i]
		if f.grp != nil || !fp.addNode(f.node, off+f.off, depth) {
			return false
		}
	}
	return true
}

func (fp *flatPlan) addNode(n *node, off uintptr, depth int) bool {
	if len(fp.ops) >= maxFlatOps {
		return false
	}
	switch n.code {
	case cStruct:
		return fp.addStruct(n.sub, off, depth+1)
	case cArray:
		if n.elem.groupable() {
			return false
		}
		for i := 0; i < n.count; i++ {
			if !fp.addNode(n.elem, off+uintptr(i)*n.stride, depth) {
				return false
			}
		}
		return true
	}
	r := n.row
	if r.flat == nil {
		return false
	}
	code := r.flat(n)
	if code == flatNone {
		return false
	}
	op := flatOp{code: code, enc: code, off: off, n: n}
	if code != flatNode && r.width != nil {
		op.width = r.width(n) // a fixed-width kernel: runs are made of these
	}
	fp.ops = append(fp.ops, op)
	return true
}

// encFlat writes the leaves of fp for the struct at base. On error the
// writer holds a partial value; the caller rewinds it and runs the general
// path, which returns the real error: so the errors here need not be the
// right ones, only non-nil. The hottest codings are written through the
// inlinable parts of their fields API (Quantizer.IndexQuick/IndexTerms or
// Float32Scale, IntRange bounds, Writer.WriteBits) rather than through
// Write, which saves a call each.
func (e *encoder) encFlat(fp *flatPlan, base unsafe.Pointer) error {
	return e.encFlats(fp, base, 1, 0)
}

// encFlats is encFlat of count structs stride bytes apart, in one loop: an
// array or slice of them costs no call per element.
func (e *encoder) encFlats(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr) error {
	if fp.enc && count > 1 {
		return e.encFlatsWords(fp, first, count, stride)
	}
	// Through the Writer, a leaf at a time: a single struct (among them
	// those encWords hands back, errSlow), or a plan encWords does not write.
	w := e.w
	ops := fp.ops
	// the open run's leaves so far, in memory (its address is taken): it
	// then costs no register across encNode's calls
	acc := &struct{ run uint64 }{}
	for k := range count {
		base := unsafe.Add(first, uintptr(k)*stride)
		for i := range ops {
			op := &ops[i]
			p := unsafe.Add(base, op.off)
			switch op.enc {
			case flatQ32: // proven at plan compile time: Index is this product and sum
				v := float64(*(*float32)(p))
				if !(v >= op.qmin && v <= op.qmax) { // NaN too
					return errFlat
				}
				acc.run |= uint64(int64(float64(v*op.qmul)+op.qoff)) << (op.sh & 63) // float64: no fused multiply-add
			case flatQ32T:
				v := float64(*(*float32)(p))
				var x uint64
				if y := float64((v-op.qiat)*op.qinv) + op.qioff; op.qinv != 0 && v >= op.qmin && v <= op.qmax &&
					int64(y-fields.IndexGuard) == int64(y) && int64(y+fields.IndexGuard) == int64(y) {
					x = uint64(int64(y)) // Index's fast path, inline
				} else {
					var err error
					if x, err = op.n.q.Index(v); err != nil {
						return err
					}
				}
				acc.run |= x << (op.sh & 63)
			case flatRangeInt:
				x := loadInt(p, op.mem) - op.lo
				if x > op.lim {
					return errFlat
				}
				acc.run |= x << (op.sh & 63)
			case flatBool:
				if *(*bool)(p) {
					acc.run |= 1 << (op.sh & 63)
				}
			case flatBitlenU:
				// fields.WriteBitlen, written out: the prefix p, then the
				// value above it, whose leading 1 WriteBits drops.
				v := loadInt(p, op.mem)
				hb := uint(fields.HighBit(v))
				if n := op.bw + max(hb, 1); n <= 64 {
					w.WriteBits(uint64(hb)|v<<(op.bw&63), int(n))
				} else {
					fields.WriteBitlen(w, v, op.n.n)
				}
			case flatQuat:
				var u uint64
				ok := false
				if op.grid != nil && op.mem == mF32 { // float32 components: Pack32 where it is sure
					q := &op.n.qoff
					u, ok = op.grid.Pack32(*(*float32)(unsafe.Add(p, q[0])), *(*float32)(unsafe.Add(p, q[1])),
						*(*float32)(unsafe.Add(p, q[2])), *(*float32)(unsafe.Add(p, q[3])))
				}
				if !ok {
					var err error
					if u, err = op.n.quat.Pack(loadQuat(op.n, p)); err != nil {
						return err
					}
				}
				acc.run |= u << (op.sh & 63)
			default:
				if err := e.encNode(op.n, p); err != nil {
					return err
				}
				continue // in no run
			}
			if op.end > 0 { // the run is whole: one write of it
				w.WriteBits(acc.run, int(op.end))
				acc.run = 0
			}
		}
	}
	return nil
}

// encFlatsWords is encFlats by encWords, which writes straight into the
// writer's storage, as many structs as fit with their most bits and 8
// bytes to spare; the window grows for at most 64 structs at a time.
func (e *encoder) encFlatsWords(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr) error {
	w := e.w
	for k := 0; k < count; {
		buf, pos := w.Window(min(count-k, 64)*(fp.words/8+1) + 16)
		next, done, err := encWords(fp, unsafe.Add(first, uintptr(k)*stride), count-k, stride,
			buf, uint(pos), uint(len(buf)*8-fp.words-64))
		w.Commit(buf, int(next))
		k += done
		if err == errSlow { // struct k needs a call
			if err := e.encFlats(fp, unsafe.Add(first, uintptr(k)*stride), 1, 0); err != nil {
				return err
			}
			k++
		} else if err != nil {
			return err
		}
	}
	return nil
}

// decFlat reads the leaves of fp into the struct at base. On error the
// reader has moved on; the caller restores it and runs the general path,
// which returns the real error.
func (d *decoder) decFlat(fp *flatPlan, base unsafe.Pointer) error {
	return d.decFlats(fp, base, 1, 0)
}

// errFlat is the flat path's error: the general path then runs again and
// returns the real one.
var errFlat = errors.New("bitwire: flat path")

// errSlow is encWords' report of a struct that needs a call (a q value its
// inline terms are not sure of, a quaternion Pack32 is not sure of): the
// caller writes that struct by the Writer and goes on.
var errSlow = errors.New("bitwire: flat path needs a call")

// decFlats is decFlat of count structs stride bytes apart, in one loop: an
// array or slice of them costs no call per element. While the input holds
// a whole struct's worth of bits past the next one (and 8 bytes more),
// decWords reads the structs straight from the input; the rest go through
// the Reader.
func (d *decoder) decFlats(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr) error {
	r := d.r
	k := 0
	if fp.words > 0 {
		data, pos := r.Source()
		if stop := len(data)*8 - fp.words - 64; pos <= stop {
			next, done, err := decWords(fp, first, count, stride, data, uint(pos), uint(stop))
			if err != nil {
				return err
			}
			r.SkipTo(int(next))
			k = done
		}
		if k < count {
			// The last structs, too near the input's end for decWords:
			// from a zero-padded copy of the rest when it is short.
			data, pos := r.Source()
			if rest := len(data) - pos>>3; rest <= padBytes-8 && pos&7+fp.words+64 <= padBytes*8 {
				next, done, err := decWordsPadded(fp, unsafe.Add(first, uintptr(k)*stride), count-k, stride, data, uint(pos))
				if err != nil {
					return err
				}
				r.SkipTo(int(next))
				k += done
			}
		}
	}
	ops := fp.ops
	var v uint64 // the open run's bits not yet taken
	for ; k < count; k++ {
		base := unsafe.Add(first, uintptr(k)*stride)
		for i := range ops {
			op := &ops[i]
			p := unsafe.Add(base, op.off)
			if op.count > 0 {
				var err error
				if v, err = r.ReadBits(op.bits); err != nil {
					return err
				}
			}
			x := v & op.mask
			v >>= uint(op.width) & 63
			switch op.code {
			case flatQ32:
				if x > op.lim {
					return errFlat
				}
				*(*float32)(p) = op.value32(x)
			case flatRangeInt:
				if x > op.lim {
					return errFlat
				}
				storeInt(p, op.mem, op.lo+x)
			case flatBool:
				*(*bool)(p) = x != 0
			case flatQuat:
				q, err := op.n.quat.Unpack(x)
				if err != nil {
					return err
				}
				storeQuat(op.n, p, q)
			case flatBitlenU:
				// An unsigned value has no sign bit and sets no flag: the
				// magnitude is the value (decInt's general path reports the
				// error of one the type cannot hold).
				u, err := fields.ReadBitlen(r, op.n.n)
				if err != nil {
					return err
				}
				if !fitsInt(op.mem, u) {
					return errFlat
				}
				storeInt(p, op.mem, u)
			default:
				if err := d.decNode(op.n, p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// padBytes is the size of decWordsPadded's copy; smallPad that of
// unmarshalWords' copy of a small message.
const (
	padBytes = 128
	smallPad = 32
)

// decWordsPadded is decWords over a zero-padded copy of data from pos's
// byte, which the caller has checked fits with 8 bytes to spare: the
// structs at the end of the input, where decWords' 8-byte loads would
// read past it. A struct that runs past the end of the real data read
// zeros; that is an error (the general path then reports it).
func decWordsPadded(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr, data []byte, pos uint) (uint, int, error) {
	var buf [padBytes]byte
	at := pos >> 3
	copy(buf[:], data[at:])
	next, done, err := decWords(fp, first, count, stride, buf[:], pos&7, padBytes*8-uint(fp.words)-64)
	if next += at * 8; err == nil && next > uint(len(data))*8 {
		err = errFlat
	}
	return next, done, err
}

// value32 is float32(Quantizer.Value(x)) for x <= lim, from the op's copy
// of its terms.
func (op *flatOp) value32(x uint64) float32 {
	if x-1 < op.lim-1 { // 0 < x < lim
		// float64(...) keeps the product rounded alone: no fused multiply-add.
		return float32(op.qat + float64((op.qk+float64(int64(x)))*op.qstep)) // x < 2^53: int64 converts alike, and quicker
	}
	if x == 0 {
		return op.q0
	}
	return op.qN
}

// encWords writes structs of fp (fp.enc) into buf from bit pos (the bits
// below it kept), while structs remain and pos <= stop, which the caller
// sets so that a struct starting there ends, with 8 bytes to spare, inside
// buf: every piece (a run of fixed-width leaves, made up in a register, or
// a bitlen integer) is then one unaligned 8-byte store, without a bounds
// check. It returns the next bit and how many structs it wrote. It calls
// nothing, so that its state stays in registers: at a struct whose leaf
// would need a call it stops with errSlow, returning that struct's first
// bit (the caller writes it another way and goes on). On any other error
// the caller rewinds, and the general path reports it.
func encWords(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr, buf []byte, pos, stop uint) (uint, int, error) {
	dst := unsafe.Pointer(unsafe.SliceData(buf))
	ops := fp.ops
	acc := uint64(0)
	if pos&7 != 0 {
		acc = uint64(buf[pos>>3]) & (1<<(pos&7) - 1) // the bits already in pos's byte
	}
	var run uint64 // the open run's leaves so far
	l := &wordLoop{first: first, stride: stride, count: count, stop: stop}
	for ; l.k < l.count && pos <= l.stop; l.k++ {
		base := unsafe.Add(l.first, uintptr(l.k)*l.stride)
		l.start = pos
		for op := &ops[0]; ; op = (*flatOp)(unsafe.Add(unsafe.Pointer(op), unsafe.Sizeof(*op))) {
			p := unsafe.Add(base, op.off)
			var x uint64
			switch op.enc {
			case flatQ32: // as in encFlats
				v := float64(*(*float32)(p))
				if !(v >= op.qmin && v <= op.qmax) { // NaN too
					return pos, l.k, errFlat
				}
				x = uint64(int64(float64(v*op.qmul) + op.qoff)) // float64: no fused multiply-add
			case flatQ32T:
				v := float64(*(*float32)(p))
				if y := float64((v-op.qiat)*op.qinv) + op.qioff; op.qinv != 0 && v >= op.qmin && v <= op.qmax &&
					int64(y-fields.IndexGuard) == int64(y) && int64(y+fields.IndexGuard) == int64(y) {
					x = uint64(int64(y)) // as in encFlats
				} else {
					return l.start, l.k, errSlow
				}
			case flatRangeInt:
				x = loadInt(p, op.mem) - op.lo
				if x > op.lim {
					return pos, l.k, errFlat
				}
			case flatBool:
				if *(*bool)(p) {
					x = 1
				}
			case flatQuat: // float32 components with a table: Pack32 where it is sure
				q := &op.n.qoff
				var ok bool
				x, ok = op.grid.Pack32(*(*float32)(unsafe.Add(p, q[0])), *(*float32)(unsafe.Add(p, q[1])),
					*(*float32)(unsafe.Add(p, q[2])), *(*float32)(unsafe.Add(p, q[3])))
				if !ok {
					return l.start, l.k, errSlow
				}
			case flatBitlenU:
				// its own piece: the prefix, then the value below its
				// leading 1 (one bit for 0 and 1), as in encFlats
				v := loadInt(p, op.mem)
				hb := uint(fields.HighBit(v))
				bw := op.bw & 63
				n := bw + max(hb, 1) // at most 56
				word := acc | (uint64(hb)|v<<bw)&(1<<n-1)<<(pos&7)
				store8(dst, pos>>3, word)
				acc = word >> ((pos&7 + n) &^ 7 & 63)
				pos += n // x stays 0: the leaf is in no run
			}
			run |= x << (op.sh & 63)
			if n := op.end; n > 0 {
				// the run is whole: one store of it above the pending bits
				word := acc | run<<(pos&7)
				store8(dst, pos>>3, word)
				acc = word >> ((pos&7 + n) &^ 7 & 63)
				pos += n
				run = 0
				if op.last { // the last leaf ends a run, or is a bitlen integer
					break
				}
			} else if op.last {
				break
			}
		}
	}
	return pos, l.k, nil
}

// store8 writes v to the 8 bytes at byte o of p, little-endian.
func store8(p unsafe.Pointer, o uint, v uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(p, o))[:], v)
}

// load8 returns the 8 bytes at byte o of p, little-endian.
func load8(p unsafe.Pointer, o uint) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, o))[:])
}

// decWords reads structs of fp (fp.words > 0) from data, starting at bit
// pos, while structs remain and pos <= stop, which the caller sets so that
// a struct starting there ends, with 8 bytes to spare, inside data: every
// run of leaves is then one 8-byte load from data, without a bounds check.
// It returns the next bit and how many structs it read.
func decWords(fp *flatPlan, first unsafe.Pointer, count int, stride uintptr, data []byte, pos, stop uint) (uint, int, error) {
	src := unsafe.Pointer(unsafe.SliceData(data))
	ops := fp.ops
	var v uint64 // the open run's bits not yet taken
	l := &wordLoop{first: first, stride: stride, count: count, stop: stop}
	for ; l.k < l.count && pos <= l.stop; l.k++ {
		base := unsafe.Add(l.first, uintptr(l.k)*l.stride)
		// The leaves, by a pointer that stops at the last: one register
		// where an index and a length take two.
		for op := &ops[0]; ; op = (*flatOp)(unsafe.Add(unsafe.Pointer(op), unsafe.Sizeof(*op))) {
			p := unsafe.Add(base, op.off)
			if op.count > 0 {
				v = load8(src, pos>>3) >> (pos & 7)
				pos += uint(op.bits)
			}
			x := v & op.mask
			v >>= uint(op.width) & 63
			switch op.code {
			case flatQ32:
				if x > op.lim {
					return pos, l.k, errFlat
				}
				*(*float32)(p) = op.value32(x)
			case flatRangeInt:
				if x > op.lim {
					return pos, l.k, errFlat
				}
				storeInt(p, op.mem, op.lo+x)
			case flatBool:
				*(*bool)(p) = x != 0
			case flatQuat:
				// a quaternion of float32s (the others are not read here)
				n, qm := op.bw&31, op.lim // the bits of a component, and their mask
				y := x >> 2
				i0 := y & qm
				y >>= n
				a, b, c, dd, ok := op.grid.Rebuild32(i0, y&qm, y>>n&qm)
				m := x & 3
				if !ok {
					return pos, l.k, errFlat
				}
				o, q := op.grid.Others(m), &op.n.qoff
				*(*float32)(unsafe.Add(p, q[o[0]&3])) = a
				*(*float32)(unsafe.Add(p, q[o[1]&3])) = b
				*(*float32)(unsafe.Add(p, q[o[2]&3])) = c
				*(*float32)(unsafe.Add(p, q[m&3])) = dd
			case flatBitlenU:
				// as in decFlats: the prefix, then the value below its
				// leading 1 (one bit for 0 and 1)
				w := load8(src, pos>>3) >> (pos & 7)
				bw := op.bw & 63
				pw := w & (1<<bw - 1) & 63
				lead := uint64(1) << pw               // the leading 1, or 1 for 0 and 1
				u := w>>bw&(max(lead, 2)-1) | lead&^1 // max(lead, 2) is 1 << max(pw, 1)
				pos += bw + uint(max(pw, 1))
				if u > op.lim {
					return pos, l.k, errFlat
				}
				storeInt(p, op.mem, u)
			}
			if op.last {
				break
			}
		}
	}
	return pos, l.k, nil
}

// A message of one flat struct (Codec.Append and Unmarshal, Marshal and the
// package's Unmarshal) whose leaves encWords and decWords code skips the
// bits.Writer and Reader altogether: the kernel writes into dst's spare
// capacity and reads data itself, so that a small message pays for its
// leaves and little else. On any error the caller takes the general path,
// which reports it.

// appendWords appends p's struct at ptr to dst by encWords, when p's flat
// plan (one encWords writes) allows it under o. ok is false when it does not, or on any error;
// dst's length is then unchanged (its spare capacity may have been
// written).
func appendWords(dst []byte, p *plan, ptr unsafe.Pointer, o *options) (out []byte, ok bool) {
	fp := p.flat // the caller has checked fp.enc
	if !o.plain() || fp.depth > o.maxDepth() {
		return dst, false
	}
	n := len(dst)
	dst = slices.Grow(dst, fp.words/8+9) // a whole struct, and store8's 8 bytes past it
	buf := dst[n:cap(dst)]
	pos, done, err := encWords(fp, ptr, 1, 0, buf, 0, uint(len(buf)*8-fp.words-64))
	if err != nil || done != 1 {
		return dst, false
	}
	return dst[:n+int(pos+7)/8], true
}

// unmarshalWords decodes data into p's struct at ptr by decWords, when p's
// flat plan allows it under o and data is exactly one struct (no whole
// byte past its bits, zero padding bits). ok is false otherwise, or on any
// error; the struct may then be partly written.
func unmarshalWords(data []byte, p *plan, ptr unsafe.Pointer, o *options) (ok bool) {
	fp := p.flat // the caller has checked fp.words > 0
	if !o.plain() || fp.depth > o.maxDepth() {
		return false
	}
	var next uint
	var err error
	switch n := len(data); {
	case n <= smallPad-8 && n >= 8 && fp.words+64 <= smallPad*8:
		// a small message: from a zero-padded copy of it, smaller than
		// decWordsPadded's (data longer than the struct fails below),
		// copied by three 8-byte moves that may overlap
		var buf [smallPad]byte
		src, dst := unsafe.Pointer(unsafe.SliceData(data)), unsafe.Pointer(&buf)
		store8(dst, 0, load8(src, 0))
		store8(dst, uint(n/2-4), load8(src, uint(n/2-4)))
		store8(dst, uint(n-8), load8(src, uint(n-8)))
		next, _, err = decWords(fp, ptr, 1, 0, buf[:], 0, uint(smallPad*8-fp.words-64))
	case len(data) <= padBytes-8 && fp.words+64 <= padBytes*8:
		next, _, err = decWordsPadded(fp, ptr, 1, 0, data, 0)
	default:
		return false
	}
	if err != nil || (next+7)/8 != uint(len(data)) {
		return false
	}
	return next&7 == 0 || data[next>>3]>>(next&7) == 0
}
