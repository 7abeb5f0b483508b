package gen

import (
	"fmt"
	"strings"

	"github.com/bitwire/bitwire"
)

// Input deltas in C#: Go's Codec.EncodeDelta for the input structs the
// runtime's InputSender sends (clients/cs/Conn.cs), older inputs as deltas
// against the next newer. Each coder gets InputSame (every field
// equal, on quantized values) and EncodeDeltaInput (a changed bit per
// field, then a changed field in full, a nested struct field by its own
// changed bits unless composite). Fields of codings outside bool, bits,
// range, q and float without a dmin/dmax window, varint, unsigned bitlen,
// string, and structs of them, throw ErrUnsupportedType: they would need
// the delta codings (windows, quaternions, entity sets) that only Go and
// the decoders implement.

// csInputSupported reports whether an input field of coding n is one the
// generated delta encoder writes.
func csInputSupported(n *bitwire.NodeSchema, group int) bool {
	if group >= 0 || n.Delta != nil {
		return false
	}
	switch n.Coding {
	case "bool", "bits", "range", "q", "float", "varint", "string", "struct":
		return true
	case "bitlen":
		return !signed(n.Type)
	}
	return false
}

func (g *csGen) emitInputDelta(t *bitwire.TypeSchema) string {
	var b strings.Builder
	// InputSame: every field equal.
	fmt.Fprintf(&b, "\n        internal static bool InputSame(%s b, %s o)\n        {\n", g.class, g.class)
	var same []string
	for _, f := range t.Fields {
		switch {
		case !csInputSupported(f.Node, f.Group):
			same = append(same, "false")
		case f.Node.Coding == "struct":
			same = append(same, fmt.Sprintf("%s.InputSame(b.%s, o.%s)", g.names[*f.Node.Ref], f.Name, f.Name))
		default:
			same = append(same, fmt.Sprintf("b.%s == o.%s", f.Name, f.Name))
		}
	}
	if len(same) == 0 {
		same = []string{"true"}
	}
	fmt.Fprintf(&b, "            return %s;\n        }\n", strings.Join(same, " && "))
	// EncodeDeltaInput: the changed bits and the changed fields.
	fmt.Fprintf(&b, "\n        internal static void EncodeDeltaInput(Encoder e, %s b, %s o)\n        {\n            string f = null;\n            try\n            {\n", g.class, g.class)
	for _, f := range t.Fields {
		fmt.Fprintf(&b, "                f = %q;\n", f.Name)
		n := f.Node
		switch {
		case !csInputSupported(n, f.Group):
			fmt.Fprintf(&b, "                throw new BitwireException(\"ErrUnsupportedType\", \"a %s input field: not delta-coded by this runtime\");\n", n.Coding)
		case n.Coding == "struct" && !n.Composite:
			cls := g.names[*n.Ref]
			fmt.Fprintf(&b, "                if (%s.InputSame(b.%s, o.%s)) e.W.Bool(false);\n                else { e.W.Bool(true); %s.EncodeDeltaInput(e, b.%s, o.%s); }\n", cls, f.Name, f.Name, cls, f.Name, f.Name)
		default:
			cond := fmt.Sprintf("b.%s == o.%s", f.Name, f.Name)
			if n.Coding == "struct" {
				cond = fmt.Sprintf("%s.InputSame(b.%s, o.%s)", g.names[*n.Ref], f.Name, f.Name)
			}
			fmt.Fprintf(&b, "                if (%s) e.W.Bool(false);\n                else\n                {\n                    e.W.Bool(true);\n%s                }\n", cond, g.enc(n, "o."+f.Name, "                    "))
		}
	}
	b.WriteString("            }\n            catch (BitwireException x) { throw x.Within(f); }\n        }\n")
	return b.String()
}

// csInputCodec is the codec class's EncodeDeltaInput: both values
// quantized first (on copies), as Go's delta compares quantized values.
func csInputCodec(root, coder string) string {
	return fmt.Sprintf(`        /// <summary>Writes cur as a delta against baseline as Go's Codec.EncodeDelta does, for the input types the runtime delta-codes (else ErrUnsupportedType): the InputSender's older inputs.</summary>
        public static void EncodeDeltaInput(BitWriter w, %[1]s baseline, %[1]s cur)
        {
            var qb = new %[1]s(); Copy(baseline, qb); Quantize(qb);
            var qc = new %[1]s(); Copy(cur, qc); Quantize(qc);
            var e = new Encoder(w);
            e.Begin(false);
            int start = w.Length;
            try { %[2]s.EncodeDeltaInput(e, qb, qc); } catch (BitwireException x) { w.Truncate(start); throw x.Within(%[1]q); }
        }
`, root, coder)
}
