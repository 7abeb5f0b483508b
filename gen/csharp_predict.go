package gen

import (
	"fmt"
	"strconv"

	"github.com/bitwire/bitwire"
)

// Prediction from two baselines in generated C#: per struct type that
// holds a value tagged pred, a Predict(o, p) method that replaces in p (a
// copy of the newer baseline) each pred value by its prediction from p's
// value and o's (the older baseline), by the rule of wire-format.md,
// "Prediction from two baselines" (Prediction.Signed and .Unsigned in the
// runtime's Prediction.cs compute the clamped extrapolation, Prediction.Quat
// a quaternion's).

// predTypes reports, per type of s, whether it holds a value tagged pred
// (through fields, arrays, slices and pointers; types may hold
// themselves, so the marks grow until they stop).
func predTypes(s *bitwire.Schema) []bool {
	has := make([]bool, len(s.Types))
	for changed := true; changed; {
		changed = false
		for i, t := range s.Types {
			for _, f := range t.Fields {
				if !has[i] && holdsPred(f.Node, has) {
					has[i], changed = true, true
				}
			}
		}
	}
	return has
}

// emitPredict returns type ti's Predict method.
func (g *csGen) emitPredict(ti int, holds []bool) string {
	t := &g.s.Types[ti]
	g.method()
	b := &csLines{}
	b.f("\n        internal static void Predict(%s o, %s p)\n        {\n", g.class, g.class)
	for _, f := range t.Fields {
		if holdsPred(f.Node, holds) {
			b.f("%s", g.predict(f.Node, "o."+f.Name, "p."+f.Name, holds, "            "))
		}
	}
	b.f("        }\n")
	return b.String()
}

// holdsPred reports whether node n is, or holds through arrays, slices
// and pointers, a value tagged pred, has telling it of each struct type.
func holdsPred(n *bitwire.NodeSchema, has []bool) bool {
	switch {
	case n == nil:
		return false
	case n.Coding == "struct":
		return has[*n.Ref]
	case n.Elem != nil && n.Coding != "map":
		return holdsPred(n.Elem, has)
	}
	return n.Pred
}

// predict returns statements replacing lv, a value of node n in the
// copy of the newer baseline, by its prediction from it and older.
func (g *csGen) predict(n *bitwire.NodeSchema, older, lv string, holds []bool, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "struct":
		b.p("if (%s != null && %s != null) %s.Predict(%s, %s);", older, lv, g.names[*n.Ref], older, lv)
	case "ptr":
		if csValueType(n.Elem) {
			t := g.v("t")
			b.p("if (%s.HasValue && %s.HasValue)", older, lv)
			b.p("{")
			b.p("  %s %s = %s.Value;", g.typ(n.Elem), t, lv)
			b.WriteString(g.predict(n.Elem, older+".Value", t, holds, in+"  "))
			b.p("  %s = %s;", lv, t)
			b.p("}")
		} else { // a reference: the element's own statements test for null
			b.WriteString(g.predict(n.Elem, older, lv, holds, in))
		}
	case "array", "slice":
		return g.predictElems(n, older, lv, holds, in)
	case "quat":
		return g.predictQuat(n, older, lv, in)
	case "q":
		q := g.quantizer(n)
		b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("%s.Value(Prediction.Unsigned(%s.Index(%s, false), %s.Index(%s, false), 0UL, %dUL))", q, q, lv, q, older, n.Q.Steps)))
	case "range":
		if signed(n.Type) {
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("Prediction.Signed((long)%s, (long)%s, %s, %s)", lv, older, csLong(n.Range.Min), csLong(n.Range.Max))))
		} else {
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("Prediction.Unsigned((ulong)%s, (ulong)%s, %sUL, %sUL)", lv, older, n.Range.Min, n.Range.Max)))
		}
	case "bits":
		w := n.Bits.Width
		if signed(n.Type) {
			lo, hi := csLong(strconv.FormatInt(-1<<(w-1), 10)), csLong(strconv.FormatInt(1<<(w-1)-1, 10))
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("Prediction.Signed((long)%s, (long)%s, %s, %s)", lv, older, lo, hi)))
		} else {
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("Prediction.Unsigned((ulong)%s, (ulong)%s, 0UL, %dUL)", lv, older, ^uint64(0)>>(64-w))))
		}
	}
	return b.String()
}

// predictElems returns statements predicting the elements of lv, an
// array or slice of node n, from older's: those of the same index, or of
// an entity set those of the same id.
func (g *csGen) predictElems(n *bitwire.NodeSchema, older, lv string, holds []bool, in string) string {
	b := &csLines{in: in}
	count := ".Length"
	if n.Coding == "slice" {
		count = ".Count"
	}
	a, s := g.v("a"), g.v("s")
	b.p("{ var %s = %s; var %s = %s;", a, lv, s, older)
	b.p("  if (%s != null && %s != null)", a, s)
	b.p("  {")
	if n.Entity != nil {
		b.WriteString(g.predictEntities(n, a, s, count, in))
	} else {
		i := g.v("i")
		b.p("    for (int %s = 0; %s < %s%s && %s < %s%s; %s++)", i, i, a, count, i, s, count, i)
		b.p("    {")
		if csValueType(n.Elem) {
			t := g.v("t")
			b.p("      var %s = %s[%s];", t, a, i)
			b.WriteString(g.predict(n.Elem, s+"["+i+"]", t, holds, in+"      "))
			b.p("      %s[%s] = %s;", a, i, t)
		} else {
			b.WriteString(g.predict(n.Elem, s+"["+i+"]", a+"["+i+"]", holds, in+"      "))
		}
		b.p("    }")
	}
	b.p("  }")
	b.p("}")
	return b.String()
}

// predictEntities returns statements predicting the entities of the list
// a, an entity set of node n, from those of the same id in s (count: the
// lists' length property), in one pass over both as entity deltas walk
// them.
func (g *csGen) predictEntities(n *bitwire.NodeSchema, a, s, count, in string) string {
	b := &csLines{in: in}
	id := g.s.Types[*n.Elem.Ref].Fields[n.Entity.IDField]
	i, j := g.v("i"), g.v("j")
	b.p("    for (int %s = 0, %s = 0; %s < %s%s && %s < %s%s;)", i, j, i, a, count, j, s, count)
	b.p("    {")
	b.p("      ulong ka = %s, kz = %s;", csEntityKey(id, a+"["+i+"]"), csEntityKey(id, s+"["+j+"]"))
	b.p("      if (ka == kz) { %s.Predict(%s[%s], %s[%s]); %s++; %s++; }", g.names[*n.Elem.Ref], s, j, a, i, i, j)
	b.p("      else if (ka < kz) %s++;", i)
	b.p("      else %s++;", j)
	b.p("    }")
	return b.String()
}

// predictQuat returns statements replacing the quaternion lv by its
// prediction from it and older (Prediction.Quat), when there is one.
func (g *csGen) predictQuat(n *bitwire.NodeSchema, older, lv, in string) string {
	b := &csLines{in: in}
	qc, r := g.quatCoder(n), g.v("r")
	b.p("{ var %s = new double[4];", r)
	if len(n.Quat.Fields) == 4 {
		el := "double"
		if n.Type == "float32" {
			el = "float"
		}
		b.p("  if (Prediction.Quat(%s, %s, %s, %s)) %s = new %s { X = (%s)%s[0], Y = (%s)%s[1], Z = (%s)%s[2], W = (%s)%s[3] };",
			qc, quatArgs(n, older), quatArgs(n, lv), r, lv, g.typ(n), el, r, el, r, el, r, el, r)
	} else {
		el := csScalar(n.Type)
		b.p("  if (%s != null && %s != null && %s.Length == 4 && %s.Length == 4 && Prediction.Quat(%s, %s, %s, %s))", older, lv, older, lv, qc, quatArgs(n, older), quatArgs(n, lv), r)
		b.p("  { %s[0] = (%s)%s[0]; %s[1] = (%s)%s[1]; %s[2] = (%s)%s[2]; %s[3] = (%s)%s[3]; }", lv, el, r, lv, el, r, lv, el, r, lv, el, r)
	}
	b.p("}")
	return b.String()
}
