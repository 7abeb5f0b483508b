package gen

import (
	"fmt"
	"strings"
	"unicode"
)

// docText makes a label (a Go type as Go prints it, say) safe in a
// TypeScript /** */ or C# /// <summary> comment: line breaks and other
// control or format characters (U+2028 and U+2029 end a line in both
// languages) become \uXXXX, "*/" cannot close the comment, and <, > and &
// are XML entities in C# documentation.
func docText(s string, cs bool) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		switch {
		case r == '/' && prev == '*':
			b.WriteString(`\/`)
		case cs && r == '<':
			b.WriteString("&lt;")
		case cs && r == '>':
			b.WriteString("&gt;")
		case cs && r == '&':
			b.WriteString("&amp;")
		case r == '\\':
			b.WriteString(`\\`)
		case unicode.IsPrint(r) && r != 0x2028 && r != 0x2029 && r != 0x85:
			b.WriteRune(r)
		default:
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08X`, r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		}
		prev = r
	}
	return b.String()
}

func tsDoc(s string) string { return docText(s, false) }
func csDoc(s string) string { return docText(s, true) }

// csNewArray is C#'s expression for a new array of count elements of
// type elem: the count goes in the first brackets, so that an array of
// arrays is new float[3][], not new float[][3] (which does not compile).
func csNewArray(elem string, count int) string {
	base, rest := elem, ""
	for strings.HasSuffix(base, "[]") {
		base, rest = base[:len(base)-2], rest+"[]"
	}
	return fmt.Sprintf("new %s[%d]%s", base, count, rest)
}
