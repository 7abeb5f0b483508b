package gen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitwire/bitwire"
)

// Input deltas in C#: Go's Codec.EncodeDelta for the input structs the
// runtime's InputSender sends (clients/cs/Conn.cs), older inputs as deltas
// against the next newer. Each coder gets InputSame (every field equal, on
// quantized values, as Go's equality compares keys) and EncodeDeltaInput
// (a changed bit per field but an entity's id, then each changed field's
// delta, as the decoders read it: windows, relative quaternions, index sets
// of changed slice elements and map entries, entity sets matched by id,
// pointers, nested structs by their own changed bits, every other coding in
// full). Inputs of a message with a model throw ErrUnsupportedType: their
// model-coded deltas are Go's only.

func (g *csGen) emitInputDelta(ti int) string {
	t := &g.s.Types[ti]
	id := entityIDField(g.s, ti)
	var b strings.Builder
	// InputSame: every field equal.
	g.method()
	fmt.Fprintf(&b, "\n        internal static bool InputSame(%s b, %s o)\n        {\n", g.class, g.class)
	var same []string
	for _, f := range t.Fields {
		same = append(same, g.same(f.Node, "b."+f.Name, "o."+f.Name))
	}
	if len(same) == 0 {
		same = []string{"true"}
	}
	fmt.Fprintf(&b, "            return %s;\n        }\n", strings.Join(same, "\n                && "))
	// EncodeDeltaInput: the changed bits and the changed fields; an
	// entity's delta (skip: its id field) has none for its id.
	g.method()
	fmt.Fprintf(&b, "\n        internal static void EncodeDeltaInput(Encoder e, %s b, %s o, int skip)\n        {\n            string f = null;\n            try\n            {\n", g.class, g.class)
	for i, f := range t.Fields {
		fmt.Fprintf(&b, "                f = %q;\n", f.Name)
		if i == id {
			fmt.Fprintf(&b, "                if (skip == %d) { } // an entity's id: no changed bit in its delta\n                else ", i)
		} else {
			b.WriteString("                ")
		}
		fmt.Fprintf(&b, "if (%s) e.W.Bool(false);\n                else\n                {\n                    e.W.Bool(true);\n%s                }\n",
			g.same(f.Node, "b."+f.Name, "o."+f.Name), g.encDelta(f.Node, "b."+f.Name, "o."+f.Name, "                    "))
	}
	b.WriteString("            }\n            catch (BitwireException x) { throw x.Within(f); }\n        }\n")
	return b.String()
}

// same returns a C# expression: whether a and b, values of node n, are
// equal as Go's delta compares them (quantized values, floats by bits,
// nil and empty slices alike).
func (g *csGen) same(n *bitwire.NodeSchema, a, b string) string {
	switch n.Coding {
	case "float":
		if isF32(n.Type) {
			return fmt.Sprintf("Codings.F32Bits(%s) == Codings.F32Bits(%s)", a, b)
		}
		return fmt.Sprintf("BitConverter.DoubleToInt64Bits(%s) == BitConverter.DoubleToInt64Bits(%s)", a, b)
	case "bytes":
		return fmt.Sprintf("Codings.SameBytes(%s, %s)", a, b)
	case "time":
		return fmt.Sprintf("(%s.Sec == %s.Sec && %s.Nsec == %s.Nsec)", a, b, a, b)
	case "quat":
		if len(n.Quat.Fields) == 4 {
			return fmt.Sprintf("(%s.X == %s.X && %s.Y == %s.Y && %s.Z == %s.Z && %s.W == %s.W)", a, b, a, b, a, b, a, b)
		}
		return fmt.Sprintf("Codings.SameArray(%s, %s, (x, y) => x == y)", a, b)
	case "struct":
		return fmt.Sprintf("%s.InputSame(%s, %s)", g.names[*n.Ref], a, b)
	case "array", "slice":
		x, y := g.v("x"), g.v("y")
		fn := "SameArray"
		if n.Coding == "slice" {
			fn = "SameList"
		}
		return fmt.Sprintf("Codings.%s(%s, %s, (%s, %s) => %s)", fn, a, b, x, y, g.same(n.Elem, x, y))
	case "ptr":
		if csValueType(n.Elem) {
			return fmt.Sprintf("(%s.HasValue ? %s.HasValue && %s : !%s.HasValue)", a, b, g.same(n.Elem, a+".Value", b+".Value"), b)
		}
		return fmt.Sprintf("(%s == null ? %s == null : %s != null && %s)", a, b, b, g.same(n.Elem, a, b))
	case "map":
		x, y := g.v("x"), g.v("y")
		return fmt.Sprintf("Codings.SameMap(%s, %s, (%s, %s) => %s)", a, b, x, y, g.same(n.Elem, x, y))
	}
	return fmt.Sprintf("%s == %s", a, b)
}

// encDelta returns statements writing the delta of cur, a value of node n,
// against base, which differs from it: what Decoder reads for a changed
// field (csharp_stmt.go's delta).
func (g *csGen) encDelta(n *bitwire.NodeSchema, base, cur, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "struct":
		if n.Composite {
			return g.enc(n, cur, in)
		}
		b.p("%s.EncodeDeltaInput(e, %s, %s, -1);", g.names[*n.Ref], base, cur)
		return b.String()
	case "quat":
		if len(n.Quat.Fields) != 4 {
			b.p("if (%s == null || %s.Length != 4 || %s == null || %s.Length != 4) throw new ErrInvalidValue(\"quaternion of 4 components expected\");", base, base, cur, cur)
		}
		b.p("%s.WriteDelta(e, %d, %s, %s);", g.quatCoder(n), g.slot(n), quatArgs(n, base), quatArgs(n, cur))
		return b.String()
	case "slice":
		if n.Entity != nil {
			b.p("EntitySet.EncodeDelta(e, %s, %s, %d, %d, new %s());", base, cur, n.MaxLen, n.Entity.IDField, g.entityCoder(n))
			return b.String()
		}
		return g.sliceDeltaEnc(n, base, cur, in)
	case "map":
		return g.mapDeltaEnc(n, base, cur, in)
	case "array":
		if !n.DeltaByElement() {
			return g.enc(n, cur, in)
		}
		return g.arrayDeltaEnc(n, base, cur, in)
	case "ptr":
		return g.ptrDeltaEnc(n, base, cur, in)
	}
	if n.Delta == nil {
		return g.enc(n, cur, in)
	}
	return g.windowDeltaEnc(n, base, cur, in)
}

// sliceDeltaEnc writes a slice's delta as the decoders read it
// (sliceDelta): its length, the index set of the elements changed among
// those base has too, then in index order each changed element's delta
// and each new element in full.
func (g *csGen) sliceDeltaEnc(n *bitwire.NodeSchema, base, cur, in string) string {
	b := &csLines{in: in}
	bl, cl, bn, l, common, ch, i, j := g.v("bl"), g.v("cl"), g.v("bn"), g.v("l"), g.v("c"), g.v("ch"), g.v("i"), g.v("j")
	b.p("{ var %s = %s; var %s = %s; int %s = %s == null ? 0 : %s.Count; int %s = %s == null ? 0 : %s.Count;", bl, base, cl, cur, bn, bl, bl, l, cl, cl)
	b.p("  Codings.Len(e, %s, %d); int %s = Math.Min(%s, %s);", l, n.MaxLen, common, bn, l)
	b.p("  var %s = e.TakeList();", ch)
	b.p("  for (int %s = 0; %s < %s; %s++) if (!(%s)) %s.Add(%s);", i, i, common, i, g.same(n.Elem, bl+"["+i+"]", cl+"["+i+"]"), ch, i)
	b.p("  e.IndexSet(%s, %s, false);", ch, common)
	b.p("  int %s = 0;", j)
	b.p("  for (int %s = 0; %s < %s; %s++)", i, i, l, i)
	b.p("  {")
	b.p("    try")
	b.p("    {")
	b.p("      if (%s >= %s)", i, common)
	b.p("      {")
	b.WriteString(g.enc(n.Elem, cl+"["+i+"]", in+"        "))
	b.p("      }")
	b.p("      else if (%s < %s.Count && %s[%s] == %s)", j, ch, ch, j, i)
	b.p("      {")
	b.p("        %s++;", j)
	b.WriteString(g.encDelta(n.Elem, bl+"["+i+"]", cl+"["+i+"]", in+"        "))
	b.p("      }")
	b.p("    }")
	b.p("    catch (BitwireException x) { throw x.Within(\"[\" + %s + \"]\"); }", i)
	b.p("  }")
	b.p("  e.GiveList(%s);", ch)
	b.p("}")
	return b.String()
}

// arrayDeltaEnc writes the delta of an array whose elements carry a
// window as the decoders read it (arrayDelta): a changed bit an element,
// then its delta.
func (g *csGen) arrayDeltaEnc(n *bitwire.NodeSchema, base, cur, in string) string {
	b := &csLines{in: in}
	bl, cl, i, ch := g.v("bl"), g.v("cl"), g.v("i"), g.v("ch")
	b.p("{ var %s = %s; var %s = %s;", bl, base, cl, cur)
	b.p("  if (%s == null || %s.Length != %d || %s == null || %s.Length != %d) throw new ErrInvalidValue(\"array of %d elements expected\");", bl, bl, n.Count, cl, cl, n.Count, n.Count)
	body := &csLines{in: in + "      "}
	body.p("bool %s = !(%s);", ch, g.same(n.Elem, bl+"["+i+"]", cl+"["+i+"]"))
	body.p("e.W.Bool(%s);", ch)
	body.p("if (%s)", ch)
	body.p("{")
	body.WriteString(g.encDelta(n.Elem, bl+"["+i+"]", cl+"["+i+"]", in+"        "))
	body.p("}")
	loop := &csLines{in: in + "  "}
	loop.elemLoop(i, strconv.Itoa(n.Count), body.String())
	b.WriteString(loop.String())
	b.p("}")
	return b.String()
}

// ptrDeltaEnc writes a pointer's delta as the decoders read it
// (ptrDelta): its presence bit, then the element in full when base is
// null, else the element's delta against base's.
func (g *csGen) ptrDeltaEnc(n *bitwire.NodeSchema, base, cur, in string) string {
	b := &csLines{in: in}
	bv, cv := base, cur
	if csValueType(n.Elem) {
		bv, cv = base+".Value", cur+".Value"
	}
	b.p("e.W.Bool(%s != null);", cur)
	b.p("if (%s != null)", cur)
	b.p("{")
	b.p("  if (%s == null)", base)
	b.p("  {")
	b.WriteString(g.enc(n.Elem, cv, in+"    "))
	b.p("  }")
	b.p("  else")
	b.p("  {")
	b.WriteString(g.encDelta(n.Elem, bv, cv, in+"    "))
	b.p("  }")
	b.p("}")
	return b.String()
}

// windowDeltaEnc writes the delta of a value with a window as the
// decoders read it (windowDelta): the difference from base when the window
// holds it, else a miss and the value in full.
func (g *csGen) windowDeltaEnc(n *bitwire.NodeSchema, base, cur, in string) string {
	b := &csLines{in: in}
	dl := n.Delta
	diff := g.v("diff")
	switch n.Coding {
	case "q":
		q := g.quantizer(n)
		b.p("long %s = (long)(%s.Index(%s, %v) - %s.Index(%s, %v));", diff, q, cur, n.Clamp, q, base, n.Clamp)
	case "range", "bits":
		if signed(n.Type) {
			b.p("long %s = (long)((ulong)(long)%s - (ulong)(long)%s);", diff, cur, base)
		} else {
			b.p("long %s = (long)((ulong)%s - (ulong)%s);", diff, cur, base)
		}
	case "fixed":
		bn, bm, cn, cm := g.v("neg"), g.v("mag"), g.v("neg"), g.v("mag")
		b.p("bool %s, %s; ulong %s, %s;", bn, cn, bm, cm)
		b.p("Encoder.FixedMag(%s, %s, %v, out %s, out %s); Encoder.FixedMag(%s, %s, %v, out %s, out %s);", base, fmtFloat(n.Fixed.Prec), isF32(n.Type), bn, bm, cur, fmtFloat(n.Fixed.Prec), isF32(n.Type), cn, cm)
		b.p("long %s = (%s ? -(long)%s : (long)%s) - (%s ? -(long)%s : (long)%s);", diff, cn, cm, cm, bn, bm, bm)
	default:
		return g.enc(n, cur, in)
	}
	b.p("if (%s >= %dL && %s <= %dL) e.Window(%d, %dL, %dL, %d, %d, %d, %s);", diff, dl.Lo, diff, dl.Hi, g.slot(n), dl.Lo, dl.Hi, dl.Bits, dl.FirstK, dl.Unary, diff)
	b.p("else")
	b.p("{")
	b.p("  e.WindowMiss();")
	b.WriteString(g.enc(n, cur, in+"  "))
	b.p("}")
	return b.String()
}

// mapDeltaEnc writes a map's delta as the decoders read it (mapDelta):
// the removed and the changed among the baseline's keys in key order as
// index sets, the changed values' deltas, then the new entries in full in
// key order.
func (g *csGen) mapDeltaEnc(n *bitwire.NodeSchema, base, cur, in string) string {
	b := &csLines{in: in}
	bm, cm, ks, nk, rm, ch, i, k := g.v("bm"), g.v("cm"), g.v("ks"), g.v("nk"), g.v("rm"), g.v("ch"), g.v("i"), g.v("k")
	sv, cv := g.v("s"), g.v("c")
	kt := g.typ(n.Key)
	b.p("{ var %s = %s; var %s = %s;", bm, base, cm, cur)
	b.p("  var %s = %s == null ? new List<%s>() : new List<%s>(%s.Keys);", ks, bm, kt, kt, bm)
	b.p("  %s", csSortKeys(n.Key, ks))
	b.p("  var %s = new List<%s>();", nk, kt)
	b.p("  if (%s != null) foreach (var %s in %s.Keys) if (%s == null || !%s.ContainsKey(%s)) %s.Add(%s);", cm, k, cm, bm, bm, k, nk, k)
	b.p("  %s", csSortKeys(n.Key, nk))
	b.p("  var %s = new List<int>(); var %s = new List<int>();", rm, ch)
	b.p("  for (int %s = 0, %s = 0; %s < %s.Count; %s++)", i, sv, i, ks, i)
	b.p("  {")
	b.p("    if (%s == null || !%s.ContainsKey(%s[%s])) { %s.Add(%s); continue; }", cm, cm, ks, i, rm, i)
	b.p("    if (!(%s)) %s.Add(%s);", g.same(n.Elem, bm+"["+ks+"["+i+"]]", cm+"["+ks+"["+i+"]]"), ch, sv)
	b.p("    %s++;", sv)
	b.p("  }")
	b.p("  e.IndexSet(%s, %s.Count, false);", rm, ks)
	b.p("  e.IndexSet(%s, %s.Count - %s.Count, false);", ch, ks, rm)
	b.p("  for (int %s = 0, %s = 0, %s = 0; %s < %s.Count; %s++)", i, sv, cv, i, ks, i)
	b.p("  {")
	b.p("    if (!%s.ContainsKey(%s[%s])) continue;", cm, ks, i)
	b.p("    if (%s < %s.Count && %s[%s] == %s)", cv, ch, ch, cv, sv)
	b.p("    {")
	b.p("      %s++;", cv)
	b.p("      try")
	b.p("      {")
	b.WriteString(g.encDelta(n.Elem, bm+"["+ks+"["+i+"]]", cm+"["+ks+"["+i+"]]", in+"        "))
	b.p("      }")
	b.p("      catch (BitwireException x) { throw x.Within(\"[\" + %s[%s] + \"]\"); }", ks, i)
	b.p("    }")
	b.p("    %s++;", sv)
	b.p("  }")
	b.p("  Codings.WriteBitlen(e.W, (ulong)%s.Count, 5);", nk)
	b.p("  foreach (var %s in %s)", k, nk)
	b.p("  {")
	b.WriteString(g.enc(n.Key, k, in+"    "))
	b.p("    try")
	b.p("    {")
	b.WriteString(g.enc(n.Elem, cm+"["+k+"]", in+"      "))
	b.p("    }")
	b.p("    catch (BitwireException x) { throw x.Within(\"[\" + %s + \"]\"); }", k)
	b.p("  }")
	b.p("}")
	return b.String()
}

// entityIDField returns the index of the id field of struct type ti when
// it is the element of an entity set in s, else -1.
func entityIDField(s *bitwire.Schema, ti int) int {
	id := -1
	var walk func(n *bitwire.NodeSchema)
	walk = func(n *bitwire.NodeSchema) {
		if n == nil {
			return
		}
		if n.Entity != nil && n.Elem.Ref != nil && *n.Elem.Ref == ti {
			id = n.Entity.IDField
		}
		walk(n.Key)
		walk(n.Elem)
	}
	for _, t := range s.Types {
		for _, f := range t.Fields {
			walk(f.Node)
		}
	}
	return id
}

// csInputCodec is the codec class's EncodeDeltaInput: both values
// quantized first (on copies), as Go's delta compares quantized values,
// and written again with the sign flag set when a negative bit-length
// value needs it, as Go decides the flag.
func csInputCodec(root, coder string, model bool) string {
	body := fmt.Sprintf(`            var qb = new %[1]s(); Copy(baseline, qb); Quantize(qb);
            var qc = new %[1]s(); Copy(cur, qc); Quantize(qc);
            var e = new Encoder(w);
            int start = w.Length;
            try
            {
                e.Begin(false);
                try { %[2]s.EncodeDeltaInput(e, qb, qc, -1); }
                catch (NeedSign) { w.Truncate(start); e.Begin(true); %[2]s.EncodeDeltaInput(e, qb, qc, -1); }
            }
            catch (BitwireException x) { w.Truncate(start); throw x.Within(%[1]q); }
`, root, coder)
	if model {
		body = "            throw new BitwireException(\"ErrUnsupportedType\", \"the deltas of a message with a model: not delta-coded by this runtime\");\n"
	}
	return fmt.Sprintf(`        /// <summary>Writes cur as a delta against baseline as Go's Codec.EncodeDelta does, for the input types the runtime delta-codes (else ErrUnsupportedType): the InputSender's older inputs.</summary>
        public static void EncodeDeltaInput(BitWriter w, %[1]s baseline, %[1]s cur)
        {
%[2]s        }
`, root, body)
}
