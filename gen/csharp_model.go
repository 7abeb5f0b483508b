package gen

import (
	"fmt"
	"strings"

	"github.com/bitwire/bitwire"
)

// The C# side of models (docs/wire-format.md, "Models"). A message whose
// schema carries a model gets, in its codec class, its own delta decoders:
// one method per struct type its deltas reach (bwMD<type>: the type's mask
// symbols, or a plain mask table's k changed bits, then each changed
// field's value delta), and the model's tables
// as static Bitwire.Code objects built from the code lengths of the
// schema's model file (bwMT<table>; a quaternion's 17 as one array,
// bwMQ<table>). The tables are fixed when the code is generated: the
// generator has checked the file (checkModel), so the client parses no
// model at run time. Full messages, copies and the classes' own methods
// are shared with messages without a model.

// csModel is the model of the message being generated.
type csModel struct {
	*schemaModel
	tabs   map[int]string // tables emitted, by number
	quats  map[int]string // quaternion table arrays emitted, by first table
	queued map[int]bool   // struct types whose delta method is queued
	todo   []int
}

// structDelta returns the method that decodes the delta of struct type t:
// the class's own, or with a model the codec class's bwMD<t>, which it
// queues.
func (g *csGen) structDelta(t int) string {
	if g.mdl == nil {
		return g.names[t] + ".DecodeDelta"
	}
	if !g.mdl.queued[t] {
		g.mdl.queued[t] = true
		g.mdl.todo = append(g.mdl.todo, t)
	}
	return fmt.Sprintf("bwMD%d", t)
}

// modelTable returns the static Code of table t, emitting it once.
func (g *csGen) modelTable(t int) string {
	if name, ok := g.mdl.tabs[t]; ok {
		return name
	}
	name := fmt.Sprintf("bwMT%d", t)
	ls := make([]string, len(g.mdl.lens[t]))
	for i, l := range g.mdl.lens[t] {
		ls[i] = fmt.Sprint(l)
	}
	g.stat = append(g.stat, fmt.Sprintf("static readonly Code %s = new Code(new byte[] { %s });", name, strings.Join(ls, ", ")))
	g.mdl.tabs[t] = name
	return name
}

// modelQuat returns the static array of quaternion n's 17 tables.
func (g *csGen) modelQuat(n *bitwire.NodeSchema) string {
	t0 := g.mdl.layout.nodes[n]
	if name, ok := g.mdl.quats[t0]; ok {
		return name
	}
	ts := make([]string, quatTables)
	for k := range ts {
		ts[k] = g.modelTable(t0 + k)
	}
	name := fmt.Sprintf("bwMQ%d", t0)
	g.stat = append(g.stat, fmt.Sprintf("static readonly Code[] %s = { %s };", name, strings.Join(ts, ", ")))
	g.mdl.quats[t0] = name
	return name
}

// modularDelta returns statements decoding the value delta of a q, range
// or bits node without a window under a model: a token of its modular
// table against the baseline's key, or ESC and the value in full.
func (g *csGen) modularDelta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	kmin, rm, _ := modularRange(n)
	m, ng := g.v("m"), g.v("ng")
	b.p("{ ulong %s; bool %s;", m, ng)
	b.p("  if (d.Token(%s, out %s, out %s))", g.modelTable(g.mdl.layout.nodes[n]), m, ng)
	b.p("  {")
	key := func(kb string) string {
		return fmt.Sprintf("Decoder.Modular(%s, %dUL, %dUL, %s, %s)", kb, kmin, rm, m, ng)
	}
	switch n.Coding {
	case "q":
		q := g.quantizer(n)
		b.p("    %s = %s;", lv, g.conv(n, fmt.Sprintf("%s.Value(%s)", q, key(fmt.Sprintf("%s.Index(%s, %v)", q, base, n.Clamp)))))
	case "range":
		if signed(n.Type) {
			kb := fmt.Sprintf("(ulong)(long)%s", base)
			if n.Clamp {
				kb = fmt.Sprintf("(ulong)Math.Min(Math.Max((long)%s, %s), %s)", base, csLong(n.Range.Min), csLong(n.Range.Max))
			}
			b.p("    %s = %s;", lv, g.conv(n, "(long)"+key(kb)))
		} else {
			kb := fmt.Sprintf("(ulong)%s", base)
			if n.Clamp {
				kb = fmt.Sprintf("Math.Min(Math.Max((ulong)%s, %sUL), %sUL)", base, n.Range.Min, n.Range.Max)
			}
			b.p("    %s = %s;", lv, g.conv(n, key(kb)))
		}
	case "bits":
		if signed(n.Type) {
			b.p("    %s = %s;", lv, g.conv(n, "(long)"+key(fmt.Sprintf("(ulong)(long)%s", base))))
		} else {
			b.p("    %s = %s;", lv, g.conv(n, key(fmt.Sprintf("(ulong)%s", base))))
		}
	}
	b.p("  }")
	b.p("  else")
	b.p("  {")
	b.WriteString(g.dec(n, lv, in+"    "))
	b.p("  }")
	b.p("}")
	return b.String()
}

// foldedDelta writes the delta method of struct type ti, whose changed bit
// its quaternion's first table holds: that table's symbol, "unchanged" (its
// last) or the quaternion's first symbol.
func (g *csGen) foldedDelta(b *csLines, ti int) {
	t, c := &g.s.Types[ti], g.classes[ti]
	f := t.Fields[0]
	n := f.Node
	qt := g.mdl.layout.nodes[n]
	b.f("        /// <summary>The delta of %s coded with the model: its quaternion's first symbol, which holds the struct's changed bit (\"unchanged\", its last, or the quaternion's form).</summary>\n", c)
	g.method()
	b.f("        static void bwMD%d(Decoder d, %s b, %s o, int skip)\n        {\n            d.Enter();\n", ti, c, c)
	b.f("            try\n            {\n")
	b.f("                int bwStart = d.R.Position, bwS = %s.Read(d.R);\n", g.modelTable(qt))
	b.f("                if (bwS == %d)\n                {\n%s                }\n                else\n                {\n", len(g.mdl.lens[qt])-1, g.cp(n, "b."+f.Name, "o."+f.Name, "                    "))
	in := "                    "
	b.f("%s%s.ReadDeltaModelFrom(d, %s, bwS, bwStart, %s, d.Q4, d.P4, d.P4b);\n", in, g.quatCoder(n), g.modelQuat(n), quatArgs(n, "b."+f.Name))
	b.f("%s                }\n", g.storeQuat(n, "o."+f.Name, in))
	b.f("            }\n            catch (BitwireException x) { throw x.Within(%q); }\n            d.Leave();\n        }\n", f.Name)
}

// emitModelDeltas returns the members of a codec class whose schema has a
// model: the delta method of the root type and of every struct type its
// deltas reach, then the tables they use.
func (g *csGen) emitModelDeltas() (string, error) {
	b := &csLines{}
	g.structDelta(g.s.Root)
	for len(g.mdl.todo) > 0 {
		ti := g.mdl.todo[0]
		g.mdl.todo = g.mdl.todo[1:]
		t := &g.s.Types[ti]
		c := g.classes[ti]
		if g.mdl.folded[ti] {
			g.foldedDelta(b, ti)
			continue
		}
		b.f("        /// <summary>The delta of %s coded with the model: its fields' changed bits as mask symbols, then each changed field's delta.</summary>\n", c)
		g.method()
		b.f("        static void bwMD%d(Decoder d, %s b, %s o, int skip)\n        {\n            d.Enter();\n", ti, c, c)
		t0 := g.mdl.layout.types[ti]
		var skipBits []string
		for j := 0; 8*j < len(t.Fields); j++ {
			k := min(8, len(t.Fields)-8*j)
			if g.mdl.plain[t0+j] { // a plain table: the k changed bits, no symbol
				b.f("            ulong bwK%d = d.R.Read(%d);\n", j, k)
			} else {
				b.f("            ulong bwK%d = d.Mask(%s, %d);\n", j, g.modelTable(t0+j), k)
			}
			skipBits = append(skipBits, fmt.Sprintf("skip < %d ? bwK%d >> (skip - %d)", 8*j+k, j, 8*j))
		}
		if len(skipBits) > 0 {
			b.f("            if (skip >= 0 && ((%s : 0UL) & 1UL) != 0UL) throw new ErrMalformed(\"the id field marked changed\");\n", strings.Join(skipBits, " : "))
		}
		b.f("            string f = null;\n            try\n            {\n")
		for i, f := range t.Fields {
			b.f("                f = %q;\n", f.Name)
			b.f("                if ((bwK%d & 0x%xUL) != 0UL)\n                {\n%s                }\n                else\n                {\n%s                }\n",
				i/8, 1<<(i%8), g.delta(f.Node, "b."+f.Name, "o."+f.Name, "                    "), g.cp(f.Node, "b."+f.Name, "o."+f.Name, "                    "))
		}
		b.f("            }\n            catch (BitwireException x) { throw x.Within(f); }\n            d.Leave();\n        }\n")
	}
	for _, st := range g.stat {
		b.f("        %s\n", st)
	}
	return b.String(), g.err
}
