package bitwire

import (
	"encoding/binary"
	mbits "math/bits"
	"strconv"
)

// The schema decoder's side of models, written from docs/wire-format.md
// ("Models") and the schema JSON alone, like the rest of schemadec_test.go:
// the model file from the schema's "model", the tables numbered by the
// spec's walk, canonical codes decoded bit by bit.

// sdecModel is a model as the schema decoder knows it.
type sdecModel struct {
	kinds []byte
	lens  [][]byte
	first map[any]int // a node's (by *NodeSchema) or a type's (by int) first table
}

// sdecLoadModel parses the schema's model file and numbers its tables.
func sdecLoadModel(s *Schema) *sdecModel {
	b := s.Model.File
	m := &sdecModel{first: map[any]int{}}
	nt := int(binary.BigEndian.Uint32(b[12:]))
	p := b[16 : len(b)-4]
	for range nt {
		k, n := p[0], int(binary.BigEndian.Uint16(p[1:]))
		m.kinds = append(m.kinds, k)
		m.lens = append(m.lens, p[3:3+n])
		p = p[3+n:]
	}
	count := 0
	var walkType func(t int)
	var walk func(n *NodeSchema)
	walk = func(n *NodeSchema) {
		if n == nil {
			return
		}
		switch {
		case n.Coding == "quat":
			m.first[n] = count
			count += 17
		case n.Delta != nil && n.Coding != "struct":
			m.first[n] = count
			count++
		case n.Coding == "q" || n.Coding == "range" || n.Coding == "bits":
			m.first[n] = count
			count++
		}
		walk(n.Elem)
		walk(n.Key)
		if n.Coding == "struct" {
			walkType(*n.Ref)
		}
	}
	walkType = func(t int) {
		if _, seen := m.first[t]; seen {
			return
		}
		m.first[t] = count
		count += (len(s.Types[t].Fields) + 7) / 8
		for _, f := range s.Types[t].Fields {
			walk(f.Node)
		}
	}
	walkType(s.Root)
	if count != nt {
		panic(errSchemaDec)
	}
	return m
}

// sym reads one symbol of table t: canonical codes, most significant bit
// first, one bit at a time.
func (d *sdec) sym(t int) int {
	lens := d.model.lens[t]
	code, first := 0, 0
	for l := 1; l <= 15; l++ {
		code = code<<1 | int(d.read(1))
		// the symbols of length l in symbol order take the codes from first
		for s, sl := range lens {
			if int(sl) == l {
				if code == first {
					return s
				}
				first++
			}
		}
		first <<= 1
	}
	panic(errSchemaDec)
}

// token reads a token of table t: esc, or the magnitude and sign.
func (d *sdec) token(t int) (m uint64, neg, esc bool) {
	s := d.sym(t)
	if s == 0 {
		return 0, false, true
	}
	m, neg = d.tail(s - 1)
	return m, neg, false
}

// tail reads what follows a token's symbol of magnitude slot slot: the
// magnitude's low bits, then a sign unless it is 0.
func (d *sdec) tail(slot int) (m uint64, neg bool) {
	if slot < 4 {
		m = uint64(slot)
	} else {
		x := slot/2 - 1
		m = uint64(2+slot%2)<<uint(x) | d.read(x)
	}
	if m != 0 {
		neg = d.read(1) == 1
	}
	return m, neg
}

// quatFirstModel reads a quaternion's first table (base t0) for n-bit
// components: the absolute form (ok false), or the rank and the first
// difference, whose slot is in the symbol and whose tail follows it.
func (d *sdec) quatFirstModel(t0, nb int) (rank int, e0 int64, ok bool) {
	s := d.preread - 1
	if d.preread == 0 {
		s = d.sym(t0)
	}
	d.preread = 0
	if s == 0 {
		return 0, 0, false
	}
	slots := 2 * nb // the slots of magnitudes of up to nb ≥ 2 bits
	if s > 4*slots {
		panic(errSchemaDec) // the folded "unchanged" where a form belongs
	}
	m, neg := d.tail((s - 1) % slots)
	e0 = int64(m)
	if neg {
		e0 = -e0
	}
	return (s - 1) / slots, e0, true
}

// plainTable reports whether a table's lengths are all 0 (a plain mask
// table).
func plainTable(lens []byte) bool {
	for _, l := range lens {
		if l != 0 {
			return false
		}
	}
	return true
}

// structDeltaModel reads a struct's masks, then its changed fields.
func (d *sdec) structDeltaModel(t int, base map[string]any, top bool, skip int) map[string]any {
	fields := d.s.Types[t].Fields
	changed := make([]bool, len(fields))
	// One field, a quaternion, whose first table codes its last symbol
	// ("unchanged"): the struct's changed bit is that table's symbol.
	if len(fields) == 1 && fields[0].Node.Coding == "quat" {
		qt := d.model.first[fields[0].Node]
		if lens := d.model.lens[qt]; lens[len(lens)-1] != 0 && len(lens) == 2+4*2*fields[0].Node.Quat.Bits {
			if s := d.sym(qt); s != len(lens)-1 {
				d.preread = s + 1
				changed[0] = true
			}
			goto fields
		}
	}
	for j := 0; 8*j < len(fields); j++ {
		k := min(8, len(fields)-8*j)
		var mask uint64
		if tab := d.model.first[t] + j; plainTable(d.model.lens[tab]) {
			mask = d.read(k) // a plain table: the k bits alone
		} else if s := d.sym(tab); s == 0 {
			mask = d.read(k)
		} else {
			mask = uint64(s - 1)
		}
		for i := range k {
			changed[8*j+i] = mask>>uint(i)&1 == 1
		}
	}
	if skip >= 0 && changed[skip] {
		panic(errSchemaDec)
	}
fields:
	out := map[string]any{}
	for i, f := range fields {
		out[f.Name] = base[f.Name]
		if changed[i] {
			out[f.Name] = d.valueDelta(f.Node, base[f.Name])
		}
		if i != skip {
			d.sentinel(top)
		}
	}
	return out
}

// scalarModel reads a changed window or modular scalar.
func (d *sdec) scalarModel(n *NodeSchema, b any) any {
	m, neg, esc := d.token(d.model.first[n])
	if esc {
		return d.node(n)
	}
	kb := stepKey(n, b)
	if w := n.Delta; w != nil {
		diff := int64(m)
		if neg {
			diff = -diff
		}
		if diff < w.Lo || diff > w.Hi {
			panic(errSchemaDec)
		}
		return keyValue(n, kb+uint64(diff))
	}
	// modular: keys kmin..kmin+rm
	var kmin, rm uint64
	switch n.Coding {
	case "q":
		rm = n.Q.Steps
	case "range":
		if isSignedType(n.Type) {
			lo, _ := strconv.ParseInt(n.Range.Min, 10, 64)
			hi, _ := strconv.ParseInt(n.Range.Max, 10, 64)
			kmin, rm = uint64(lo), uint64(hi-lo)
		} else {
			lo, _ := strconv.ParseUint(n.Range.Min, 10, 64)
			hi, _ := strconv.ParseUint(n.Range.Max, 10, 64)
			kmin, rm = lo, hi-lo
		}
	case "bits":
		rm = ^uint64(0) >> uint(64-n.Bits.Width)
		if isSignedType(n.Type) {
			kmin = -(rm>>1 + 1)
		}
	}
	ub := kb - kmin
	h := rm>>1 + rm&1
	if ub > rm || m == 0 || !neg && m > h || neg && m > rm-h {
		panic(errSchemaDec)
	}
	// (ub ± m) mod (rm + 1), without overflow
	var u uint64
	switch {
	case !neg && m > rm-ub:
		u = m - (rm - ub) - 1
	case !neg:
		u = ub + m
	case m > ub:
		u = rm - (m - ub) + 1
	default:
		u = ub - m
	}
	return keyValue(n, u+kmin)
}

// quatDiffModel reads difference k (1 or 2) of a relative quaternion with
// table base t0 (its first table).
func (d *sdec) quatDiffModel(t0, k, nb int, e [3]int64) int64 {
	cls := func(m int64) int { return min(mbits.Len64(uint64(m)), 7) }
	t := t0 + 1 + cls(abs(e[0]))
	if k == 2 {
		t = t0 + 9 + cls((abs(e[0])+abs(e[1])+1)/2)
	}
	m, neg, esc := d.token(t)
	if esc {
		m = d.read(nb)
		neg = m != 0 && d.read(1) == 1
	}
	if neg {
		return -int64(m)
	}
	return int64(m)
}
