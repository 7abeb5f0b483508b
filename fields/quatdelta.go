package fields

import (
	"fmt"

	"github.com/bitwire/bitwire/bits"
)

// A changed quaternion in a delta is coded relative to its baseline when
// that is shorter. Both sides are packed (Pack); when they drop the same
// component, the three index differences are zigzagged and share one bit
// length. The coding is one bit, then either (1) the highest bit index h of
// the three zigzagged differences in BitsRequired(n) bits and each
// difference in h+1 bits, or (0) the quaternion in full, as Write codes it.
// The relative form is chosen only when strictly shorter than Bits().

// ComponentBits returns n, the bits of each of the three coded components.
func (q Quat) ComponentBits() int { return q.n }

// relWidth is the prefix width of a relative quaternion: it holds the
// highest set bit of a zigzagged component difference, at most n.
func (q Quat) relWidth() int { return BitsRequired(uint64(q.n)) }

// WriteDelta writes the packed quaternion cur relative to the packed
// baseline base (both from Pack). baseOK false means the baseline could not
// be packed, and cur is written in full.
func (q Quat) WriteDelta(w *bits.Writer, base uint64, baseOK bool, cur uint64) {
	nb := q.n
	if baseOK && base&3 == cur&3 {
		var z [3]uint64
		high := 0
		mask := uint64(1)<<uint(nb) - 1
		for i := 0; i < 3; i++ {
			sh := uint(2 + i*nb)
			z[i] = Zigzag(int64(cur>>sh&mask) - int64(base>>sh&mask))
			if h := HighBit(z[i]); h > high {
				high = h
			}
		}
		rw := q.relWidth()
		if rw+3*(high+1) < q.Bits() {
			w.WriteBool(true)
			w.WriteBits(uint64(high), rw)
			for i := 0; i < 3; i++ {
				w.WriteBits(z[i], high+1)
			}
			return
		}
	}
	w.WriteBool(false)
	w.WriteBits(cur, q.Bits())
}

// ReadDelta reads a quaternion written by WriteDelta against the baseline
// base, and returns it packed: Unpack gives its components (and rejects
// what no writer packs). The baseline is packed only when the quaternion is
// coded relative to it (one that cannot be packed is then an error,
// prefixed "baseline: "). A width or a component difference that leaves
// the grid is ErrMalformed.
func (q *Quat) ReadDelta(r *bits.Reader, base *[4]float64) (uint64, error) {
	rel, err := r.ReadBool()
	if err != nil || !rel {
		if err == nil {
			return r.ReadBits(q.Bits())
		}
		return 0, err
	}
	qb, err := q.Pack(*base)
	if err != nil {
		return 0, fmt.Errorf("baseline: %w", err)
	}
	nb := q.n
	h, err := r.ReadBits(q.relWidth())
	if err != nil {
		return 0, err
	}
	if int(h) >= nb+1 {
		return 0, fmt.Errorf("%w: relative quaternion width %d", ErrMalformed, h+1)
	}
	mask := uint64(1)<<uint(nb) - 1
	u := qb & 3
	for i := 0; i < 3; i++ {
		z, err := r.ReadBits(int(h) + 1)
		if err != nil {
			return 0, err
		}
		sh := uint(2 + i*nb)
		v := int64(qb>>sh&mask) + Unzigzag(z)
		if v < 0 || uint64(v) > mask {
			return 0, fmt.Errorf("%w: relative quaternion component out of range", ErrMalformed)
		}
		u |= uint64(v) << sh
	}
	return u, nil
}
