package gen

import (
	"fmt"
	"go/token"
	"strings"

	"github.com/bitwire/bitwire"
)

// A schema is untrusted input: a file that travels between teams and
// repositories. Its labels (type, field and group names, Go types) are not
// hashed into the fingerprint, so a schema whose fingerprint matches may
// still carry any text in them, and the generators write names into code
// and labels into comments. validate refuses, with ErrSchema, every name
// that is not an identifier of Go, TypeScript and C# alike, and every
// index that points outside the schema, before any code is written; the
// comment helpers below make free text inert in comments.

// validate checks the structure and names of s: what the generators
// index and print, so that they neither panic nor write what a schema's
// author chose into code.
func validate(s *bitwire.Schema) error {
	if s.Union != nil {
		if s.Root != -1 || len(s.Union.Variants) == 0 {
			return fmt.Errorf("%w: a union schema with root %d and %d variants", ErrSchema, s.Root, len(s.Union.Variants))
		}
		for _, v := range s.Union.Variants {
			if v < 0 || v >= len(s.Types) {
				return fmt.Errorf("%w: union variant %d: no such type (%d types)", ErrSchema, v, len(s.Types))
			}
		}
	} else if s.Root < 0 || s.Root >= len(s.Types) {
		return fmt.Errorf("%w: root %d: no such type (%d types)", ErrSchema, s.Root, len(s.Types))
	}
	typeNames := map[string]bool{}
	for ti := range s.Types {
		t := &s.Types[ti]
		if err := checkName("type", t.Name); err != nil {
			return err
		}
		if typeNames[t.Name] {
			return fmt.Errorf("%w: type name %q appears twice", ErrSchema, t.Name)
		}
		typeNames[t.Name] = true
		fieldNames := map[string]bool{}
		for fi := range t.Fields {
			f := &t.Fields[fi]
			if err := checkName("field "+t.Name+".", f.Name); err != nil {
				return err
			}
			if fieldNames[f.Name] {
				return fmt.Errorf("%w: field %s.%s appears twice", ErrSchema, t.Name, f.Name)
			}
			fieldNames[f.Name] = true
			if f.Group < -1 || f.Group >= len(t.Groups) {
				return fmt.Errorf("%w: field %s.%s: group %d: no such group (%d groups)", ErrSchema, t.Name, f.Name, f.Group, len(t.Groups))
			}
			if err := checkNode(s, t.Name+"."+f.Name, f.Node, 0); err != nil {
				return err
			}
		}
		for gi, g := range t.Groups {
			if len(g.Members) == 0 {
				return fmt.Errorf("%w: type %s: group %d has no members", ErrSchema, t.Name, gi)
			}
			for _, m := range g.Members {
				if m < 0 || m >= len(t.Fields) || t.Fields[m].Group != gi {
					return fmt.Errorf("%w: type %s: group %d: member %d is not a field of the group", ErrSchema, t.Name, gi, m)
				}
			}
		}
	}
	return checkCycles(s)
}

// maxNodeDepth bounds how deep nodes nest inside one field (arrays of
// maps of slices...): the generators recurse over them.
const maxNodeDepth = 64

// checkNode checks the indexes and names a node holds: its type
// reference, its quaternion's component names, its children.
func checkNode(s *bitwire.Schema, at string, n *bitwire.NodeSchema, depth int) error {
	if n == nil {
		return fmt.Errorf("%w: %s: no node", ErrSchema, at)
	}
	if depth > maxNodeDepth {
		return fmt.Errorf("%w: %s: nodes nested deeper than %d", ErrSchema, at, maxNodeDepth)
	}
	if n.Ref != nil && (*n.Ref < 0 || *n.Ref >= len(s.Types)) {
		return fmt.Errorf("%w: %s: ref %d: no such type (%d types)", ErrSchema, at, *n.Ref, len(s.Types))
	}
	if n.Coding == "struct" && n.Ref == nil {
		return fmt.Errorf("%w: %s: a struct node without ref", ErrSchema, at)
	}
	if n.Quat != nil {
		for _, c := range n.Quat.Fields {
			if err := checkName("quaternion component "+at+".", c); err != nil {
				return err
			}
		}
	}
	if n.Key != nil {
		if err := checkNode(s, at, n.Key, depth+1); err != nil {
			return err
		}
	}
	if n.Elem != nil {
		return checkNode(s, at, n.Elem, depth+1)
	}
	return nil
}

// checkCycles refuses a type that holds itself by value (through struct
// fields and arrays, not through pointers, slices or maps): such a value
// would be infinitely large, and every decode of it fails deep in the
// recursion (Go's compiler refuses the type; a schema may still say so).
func checkCycles(s *bitwire.Schema) error {
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(s.Types))
	var visit func(ti int) error
	var byValue func(n *bitwire.NodeSchema, ti int) error
	byValue = func(n *bitwire.NodeSchema, ti int) error {
		switch n.Coding {
		case "struct":
			if *n.Ref == ti {
				return fmt.Errorf("%w: type %s holds itself by value", ErrSchema, s.Types[ti].Name)
			}
			return visit(*n.Ref)
		case "array":
			if n.Elem != nil {
				return byValue(n.Elem, ti)
			}
		}
		return nil
	}
	visit = func(ti int) error {
		switch state[ti] {
		case open:
			return fmt.Errorf("%w: type %s holds itself by value", ErrSchema, s.Types[ti].Name)
		case done:
			return nil
		}
		state[ti] = open
		for _, f := range s.Types[ti].Fields {
			if err := byValue(f.Node, ti); err != nil {
				return err
			}
		}
		state[ti] = done
		return nil
	}
	for ti := range s.Types {
		if err := visit(ti); err != nil {
			return err
		}
	}
	return nil
}

// checkName refuses a name that is not an identifier in Go (letters,
// digits and '_', not starting with a digit: every Go identifier is one in
// TypeScript and C# too) or that is a keyword of TypeScript or C#, where
// the generated code would not compile.
func checkName(what, name string) error {
	if !token.IsIdentifier(name) || keywords[name] {
		return fmt.Errorf("%w: %s%q is not an identifier the generated code can use", ErrSchema, what, name)
	}
	return nil
}

// keywords are the reserved words of TypeScript (strict mode, with
// "constructor", which a class field may not be called) and C#: all
// lowercase, so Go's exported names never meet them.
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		break case catch class const continue debugger default delete do else enum export extends
		false finally for function if import in instanceof new null return super switch this throw
		true try typeof var void while with yield let static implements interface package private
		protected public await constructor arguments eval
		abstract as base bool byte char checked decimal delegate double event explicit extern fixed
		float foreach goto implicit int internal is lock long namespace object operator out override
		params readonly ref sbyte sealed short sizeof stackalloc string struct uint ulong unchecked
		unsafe ushort using virtual volatile`) {
		m[w] = true
	}
	return m
}()
