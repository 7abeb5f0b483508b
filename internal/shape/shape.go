// Package shape joins a Go type to its bitwire Schema: for every encoded
// field, the reflect index that reaches it and the coding that sends it.
// Packages beside replicate walk values with it (the changed paths of
// client events, interpolation) without reaching into the root's plans,
// which stay free to change: the Schema is the root's published
// description of a message.
package shape

import (
	"fmt"
	"reflect"

	"github.com/bitwire/bitwire"
)

// Node is the coding of one value, as the Schema gives it, with what a
// walker needs to reach its parts.
type Node struct {
	// Coding is the Schema's (bool, q, quat, struct, array, slice, map,
	// ptr, ...).
	Coding string
	// Q is set for a q coding.
	Q *bitwire.QParams
	// QuatFields, for a quaternion held in a struct, are the field
	// indexes of x, y, z, w; nil for a [4]float array.
	QuatFields [][]int
	// Fields are a struct's encoded fields in wire order.
	Fields []Field
	// Elem is the element of an array, slice or pointer, or a map's
	// value; Key a map's key.
	Elem, Key *Node
	// ID is, for an entity set (a slice of structs with an id field), the
	// index in Elem.Fields of the id; -1 otherwise.
	ID int
}

// Field is one encoded field of a struct.
type Field struct {
	Name  string
	Index []int // reflect's index path of the field in its struct
	Node  *Node
}

// Of compiles the shape of t, a struct type, from s, the Schema of its
// codec. Recursive types make cycles of Nodes.
func Of(t reflect.Type, s *bitwire.Schema) (*Node, error) {
	if s == nil || s.Root < 0 || s.Root >= len(s.Types) {
		return nil, fmt.Errorf("shape: %v: not a message schema", t)
	}
	b := builder{s: s, types: map[refKey]*Node{}}
	return b.structOf(t, s.Root)
}

type refKey struct {
	t   reflect.Type
	ref int
}

type builder struct {
	s     *bitwire.Schema
	types map[refKey]*Node
}

func (b *builder) structOf(t reflect.Type, ref int) (*Node, error) {
	if n, ok := b.types[refKey{t, ref}]; ok {
		return n, nil
	}
	if t.Kind() != reflect.Struct || ref < 0 || ref >= len(b.s.Types) {
		return nil, fmt.Errorf("shape: %v is not the schema's struct %d", t, ref)
	}
	n := &Node{Coding: "struct", ID: -1}
	b.types[refKey{t, ref}] = n // before the fields: recursion finds it
	for _, fs := range b.s.Types[ref].Fields {
		sf, ok := t.FieldByName(fs.Name)
		if !ok {
			return nil, fmt.Errorf("shape: %v has no field %s", t, fs.Name)
		}
		c, err := b.node(sf.Type, fs.Node)
		if err != nil {
			return nil, fmt.Errorf("%s.%w", fs.Name, err)
		}
		n.Fields = append(n.Fields, Field{Name: fs.Name, Index: sf.Index, Node: c})
	}
	return n, nil
}

func (b *builder) node(t reflect.Type, ns *bitwire.NodeSchema) (*Node, error) {
	if ns == nil {
		return nil, fmt.Errorf("shape: %v: no coding", t)
	}
	n := &Node{Coding: ns.Coding, Q: ns.Q, ID: -1}
	var err error
	switch ns.Coding {
	case "struct":
		if ns.Ref == nil {
			return nil, fmt.Errorf("shape: %v: a struct without a type", t)
		}
		return b.structOf(t, *ns.Ref)
	case "quat":
		if t.Kind() == reflect.Struct && ns.Quat != nil {
			for _, name := range ns.Quat.Fields {
				sf, ok := t.FieldByName(name)
				if !ok {
					return nil, fmt.Errorf("shape: quaternion %v has no field %s", t, name)
				}
				n.QuatFields = append(n.QuatFields, sf.Index)
			}
		}
	case "array", "slice", "ptr":
		if n.Elem, err = b.node(t.Elem(), ns.Elem); err != nil {
			return nil, err
		}
		if ns.Entity != nil {
			n.ID = ns.Entity.IDField
		}
	case "map":
		if n.Key, err = b.node(t.Key(), ns.Key); err != nil {
			return nil, err
		}
		if n.Elem, err = b.node(t.Elem(), ns.Elem); err != nil {
			return nil, err
		}
	}
	return n, nil
}
