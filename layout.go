package bitwire

import (
	"fmt"
	"strings"
)

// The plan rendered as a table for Layout, one row per leaf.

// layout renders the plan as a table, one row per leaf.
func layoutPlan(p *plan) string {
	var rows [][4]string
	layoutRows(p, p.name, &rows, map[*plan]bool{})
	wid := [4]int{len("field"), len("coding"), len("bits"), 0}
	for _, r := range rows {
		for i := 0; i < 3; i++ {
			if len(r[i]) > wid[i] {
				wid[i] = len(r[i])
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %-*s  %*s  %s\n", wid[0], "field", wid[1], "coding", wid[2], "bits", "options")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %-*s  %*s  %s\n", wid[0], r[0], wid[1], r[1], wid[2], r[2], r[3])
	}
	return b.String()
}

func layoutRows(p *plan, prefix string, rows *[][4]string, seen map[*plan]bool) {
	if seen[p] {
		*rows = append(*rows, [4]string{prefix, "recursive", "", "(" + p.name + ")"})
		return
	}
	seen[p] = true
	defer delete(seen, p)
	for _, f := range p.fields {
		layoutNode(f.node, prefix+"."+f.name, rows, seen, f.grp)
	}
}

func layoutNode(n *node, path string, rows *[][4]string, seen map[*plan]bool, g *fieldGroup) {
	bitsStr := func() string {
		lo, hi := minBitsNode(n), maxBitsNode(n, map[*plan]bool{})
		switch {
		case hi < 0:
			return fmt.Sprintf("%d+", lo)
		case lo == hi:
			return fmt.Sprint(lo)
		}
		return fmt.Sprintf("%d-%d", lo, hi)
	}
	opts := ""
	switch {
	case n.row.opts != nil:
		opts = n.row.opts(n)
		if g != nil {
			opts += fmt.Sprintf(" group=%s", g.name)
		}
	case n.code == cSlice || n.code == cMap:
		opts = maxlenOpts(n)
	}
	if n.clamp {
		opts += " clamp"
	}
	if n.spec.hasDelta {
		opts += fmt.Sprintf(" dmin=%s dmax=%s", n.spec.dmin, n.spec.dmax)
	}
	if n.spec.composite {
		opts += " composite"
	}
	if n.spec.id {
		opts += " id"
	}
	opts = strings.TrimSpace(opts)
	switch n.code {
	case cStruct:
		layoutRows(n.sub, path, rows, seen)
	case cArray:
		*rows = append(*rows, [4]string{path, fmt.Sprintf("array[%d]", n.count), bitsStr(), opts})
		layoutNode(n.elem, path+"[]", rows, seen, nil)
	case cSlice:
		*rows = append(*rows, [4]string{path, "slice", bitsStr(), opts})
		layoutNode(n.elem, path+"[]", rows, seen, nil)
	case cPtr:
		*rows = append(*rows, [4]string{path, "ptr", bitsStr(), "presence bit"})
		layoutNode(n.elem, path+"*", rows, seen, nil)
	case cMap:
		*rows = append(*rows, [4]string{path, "map", bitsStr(), opts})
		layoutNode(n.key, path+"{key}", rows, seen, nil)
		layoutNode(n.elem, path+"{}", rows, seen, nil)
	default:
		*rows = append(*rows, [4]string{path, n.row.name, bitsStr(), opts})
	}
}
