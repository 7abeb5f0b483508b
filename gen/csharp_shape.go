package gen

import (
	"fmt"
	"strings"

	"github.com/bitwire/bitwire"
)

// csShape emits the codec class's Shape: the message's struct types, their
// encoded fields in wire order (with the reflection handle of each) and
// their codings, which the C# runtime walks for the paths of events
// (clients/cs/Conn.cs). Built once, on first use.
func csShape(s *bitwire.Schema, names []string) string {
	var b strings.Builder
	b.WriteString("        /// <summary>The message's fields and codings, for the runtime's walks (the paths of ReplicaEvents).</summary>\n")
	b.WriteString("        public static Shape Shape { get { if (bwShape == null) bwShape = BwMakeShape(); return bwShape; } }\n")
	b.WriteString("        static Shape bwShape;\n")
	b.WriteString("        static Shape BwMakeShape()\n        {\n")
	fmt.Fprintf(&b, "            var t = new Shape[%d];\n", len(s.Types))
	fmt.Fprintf(&b, "            for (int i = 0; i < t.Length; i++) t[i] = new Shape(\"struct\");\n")
	for i, ty := range s.Types {
		fmt.Fprintf(&b, "            t[%d].Fields = new ShapeField[] {", i)
		for k, f := range ty.Fields {
			if k > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " new ShapeField(%q, typeof(%s).GetField(%q), %s)", f.Name, names[i], f.Name, csShapeNode(f.Node))
		}
		b.WriteString(" };\n")
	}
	fmt.Fprintf(&b, "            return t[%d];\n        }\n", s.Root)
	return b.String()
}

func csShapeNode(n *bitwire.NodeSchema) string {
	switch n.Coding {
	case "struct":
		return fmt.Sprintf("t[%d]", *n.Ref)
	case "array", "slice", "ptr":
		id := -1
		if n.Entity != nil {
			id = n.Entity.IDField
		}
		return fmt.Sprintf("new Shape(%q, %s, null, %d)", n.Coding, csShapeNode(n.Elem), id)
	case "map":
		return fmt.Sprintf("new Shape(\"map\", %s, %s, -1)", csShapeNode(n.Elem), csShapeNode(n.Key))
	}
	return fmt.Sprintf("new Shape(%q)", n.Coding)
}
