package bitwire

import (
	"fmt"

	"github.com/bitwire/bitwire/fields"
)

// Sizes of encodings, computed once per plan: the fewest bits a value can
// take (which bounds how many elements a length read from the input may
// announce) and the most (MaxBits).

// minBitsPlan is the fewest bits any encoding of p takes (without the sign
// flag). Recursion only passes through pointers, slices and maps, whose
// minimum does not depend on their element, so this terminates.
func minBitsPlan(p *plan) int {
	total := 0
	for _, f := range p.fields {
		if f.grp != nil {
			total += 1 // at least a mode bit or a prefix bit per member
			continue
		}
		total += minBitsNode(f.node)
	}
	return total
}

func minBitsNode(n *node) int {
	switch n.code {
	case cSlice, cMap:
		return fields.LenBits(0, n.maxlen)
	case cStruct:
		return minBitsPlan(n.sub)
	case cArray:
		if n.elem.groupable() && n.count > 1 {
			// a mode bit, the shared width, then at least one bit each
			return 1 + n.elem.n + n.count
		}
		return n.count * minBitsNode(n.elem)
	case cPtr:
		return 1
	}
	if r := n.row; r.width != nil {
		return r.width(n)
	}
	return n.row.minBits(n)
}

// checkZeroBitSlices rejects a slice whose elements occupy memory but
// encode to no bits (a struct whose fields are all skipped): its length
// alone, a few bits of input, could make a decoder allocate gigabytes.
func checkZeroBitSlices(p *plan, path string, seen map[*plan]bool) error {
	if seen[p] {
		return nil
	}
	seen[p] = true
	for _, f := range p.fields {
		fp := f.name
		if path != "" {
			fp = path + "." + f.name
		}
		if err := checkZeroBitNode(f.node, fp, seen); err != nil {
			return err
		}
	}
	return nil
}

func checkZeroBitNode(n *node, path string, seen map[*plan]bool) error {
	switch n.code {
	case cStruct:
		return checkZeroBitSlices(n.sub, path, seen)
	case cSlice:
		if n.emin == 0 && n.stride > 0 {
			return &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: the elements of %s encode to no bits, so a decoder could not bound its length by its input", ErrUnsupportedType, n.typ)}
		}
	case cMap:
		return checkZeroBitNode(n.elem, path+"{}", seen)
	}
	if n.elem != nil {
		return checkZeroBitNode(n.elem, path+"[]", seen)
	}
	return nil
}

// maxBitsPlan is the worst-case size of p, or -1 when unbounded.
func maxBitsPlan(p *plan, visiting map[*plan]bool) int {
	if visiting[p] {
		return -1
	}
	visiting[p] = true
	defer delete(visiting, p)
	total := 0
	done := map[*fieldGroup]bool{}
	for _, f := range p.fields {
		var b int
		if f.grp != nil {
			if done[f.grp] {
				continue
			}
			done[f.grp] = true
			b = 0
			for _, i := range f.grp.members {
				b += maxBitsNode(p.fields[i].node, visiting)
			}
			if len(f.grp.members) > 1 {
				b++ // mode bit
			}
		} else {
			b = maxBitsNode(f.node, visiting)
		}
		if b < 0 {
			return -1
		}
		total += b
	}
	return total
}

func maxBitsNode(n *node, visiting map[*plan]bool) int {
	switch n.code {
	case cStruct:
		return maxBitsPlan(n.sub, visiting)
	case cArray:
		e := maxBitsNode(n.elem, visiting)
		if e < 0 {
			return -1
		}
		b := n.count * e
		if n.elem.groupable() && n.count > 1 {
			b++
		}
		return b
	case cSlice:
		if n.maxlen == 0 {
			return -1
		}
		e := maxBitsNode(n.elem, visiting)
		if e < 0 {
			return -1
		}
		b := fields.LenBits(0, n.maxlen) + n.maxlen*e
		if n.elem.groupable() && n.maxlen > 1 {
			b++
		}
		return b
	case cPtr:
		e := maxBitsNode(n.elem, visiting)
		if e < 0 {
			return -1
		}
		return 1 + e
	case cMap:
		if n.maxlen == 0 {
			return -1
		}
		k, v := maxBitsNode(n.key, visiting), maxBitsNode(n.elem, visiting)
		if k < 0 || v < 0 {
			return -1
		}
		return fields.LenBits(0, n.maxlen) + n.maxlen*(k+v)
	}
	if r := n.row; r.width == nil {
		return r.maxBits(n)
	}
	return minBitsNode(n) // fixed-size codings
}
