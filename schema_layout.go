package bitwire

import (
	"fmt"
	"strings"
)

// layoutSchema renders a message schema as Layout's table: one row per
// leaf, container and composite struct, in wire order, with the field path
// (Root.Players[].Pos.X), the coding, the size in bits and the options.
func layoutSchema(s *Schema) string {
	l := &layouter{s: s}
	root := &s.Types[s.Root]
	l.typeRows(s.Root, root.Name, nil)
	wid := [4]int{len("field"), len("coding"), len("bits"), 0}
	for _, r := range l.rows {
		for i := 0; i < 3; i++ {
			wid[i] = max(wid[i], len(r[i]))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %-*s  %*s  %s\n", wid[0], "field", wid[1], "coding", wid[2], "bits", "options")
	for _, r := range l.rows {
		fmt.Fprintf(&b, "%-*s  %-*s  %*s  %s\n", wid[0], r[0], wid[1], r[1], wid[2], r[2], r[3])
	}
	return b.String()
}

type layouter struct {
	s    *Schema
	rows [][4]string
}

// typeRows adds the rows of struct type t at path; stack holds the types
// being walked, so that a recursive type prints one "recursive" row.
func (l *layouter) typeRows(t int, path string, stack []int) {
	ts := &l.s.Types[t]
	for _, u := range stack {
		if u == t {
			l.rows = append(l.rows, [4]string{path, "recursive", "", "(" + ts.Name + ")"})
			return
		}
	}
	stack = append(stack, t)
	for i := range ts.Fields {
		f := &ts.Fields[i]
		opts := ""
		if f.Group >= 0 {
			opts = "group=" + ts.Groups[f.Group].Name
		}
		l.nodeRows(f.Node, path+"."+f.Name, opts, stack)
	}
}

func (l *layouter) nodeRows(n *NodeSchema, path, extra string, stack []int) {
	var opts []string
	add := func(format string, args ...any) { opts = append(opts, fmt.Sprintf(format, args...)) }
	coding := n.Coding
	if r := leafNamed(n.Coding); r != nil && r.describe != nil {
		add("%s", r.describe(n))
	}
	switch n.Coding {
	case "array":
		coding = fmt.Sprintf("array[%d]", n.Count)
		if n.DeltaByElement() {
			add("deltas element by element")
		}
	case "ptr":
		add("presence bit")
	}
	if n.MaxLen > 0 {
		add("maxlen=%d", n.MaxLen)
	}
	if n.SharedLength {
		add("shared length")
	}
	if n.Entity != nil {
		add("entity set by %s", l.s.Types[*n.Elem.Ref].Fields[n.Entity.IDField].Name)
	}
	if n.Clamp {
		add("clamp")
	}
	if d := n.Delta; d != nil {
		// What an in-window difference really costs after its window bit:
		// the plain fixed coding, or the adaptive code's bounds.
		if d.FirstK == 0 {
			add("dmin=%g dmax=%g (steps %d..%d, %d bits)", d.DMin, d.DMax, d.Lo, d.Hi, d.Bits)
		} else {
			add("dmin=%g dmax=%g (steps %d..%d, %d..%d bits; first of a message at most %d)", d.DMin, d.DMax, d.Lo, d.Hi, d.MinBits, d.MaxBits, d.Bits+1)
		}
	}
	if n.Pred {
		add("predicted from two baselines")
	}
	if n.Composite {
		add("composite")
	}
	if extra != "" {
		add("%s", extra)
	}
	bitsStr := fmt.Sprint(n.MinBits)
	switch {
	case n.MaxBits < 0:
		bitsStr += "+"
	case n.MaxBits != n.MinBits:
		bitsStr += fmt.Sprintf("-%d", n.MaxBits)
	}
	row := [4]string{path, coding, bitsStr, strings.Join(opts, " ")}
	switch n.Coding {
	case "struct":
		if n.Composite {
			l.rows = append(l.rows, row)
		}
		l.typeRows(*n.Ref, path, stack)
	case "array", "slice":
		l.rows = append(l.rows, row)
		l.nodeRows(n.Elem, path+"[]", "", stack)
	case "ptr":
		l.rows = append(l.rows, row)
		l.nodeRows(n.Elem, path+"*", "", stack)
	case "map":
		l.rows = append(l.rows, row)
		l.nodeRows(n.Key, path+"{key}", "", stack)
		l.nodeRows(n.Elem, path+"{}", "", stack)
	default:
		l.rows = append(l.rows, row)
	}
}
