package bitwire

import (
	"fmt"
	"reflect"
	"slices"
)

// Compiling one Go type and its tag into a node: which coding applies, its
// parameters, and the options the tag may not carry with it.

// reject returns an ErrBadTag error when the spec carries any of the named
// options, which the coding being compiled does not take.
func (s spec) reject(path, what string, opts ...string) error {
	for _, o := range opts {
		has := false
		switch o {
		case "min":
			has = s.hasMin
		case "max":
			has = s.hasMax
		case "prec":
			has = s.hasPrec
		case "bits":
			has = s.hasBits
		case "group":
			has = s.hasGroup
		case "maxlen":
			has = s.hasMaxlen
		case "dmin":
			has = s.hasDelta
		case "composite":
			has = s.composite
		case "id":
			has = s.id
		case "clamp":
			has = s.clamp
		case "pred":
			has = s.pred
		}
		if has {
			if o == "dmin" {
				o = "dmin/dmax"
			}
			return badTag(path, "option %s does not apply to %s", o, what)
		}
	}
	return nil
}

// optionOrder is the order in which reject and only look for options.
var optionOrder = []string{"min", "max", "prec", "bits", "group", "maxlen", "dmin", "composite", "id", "clamp", "pred"}

// only returns an ErrBadTag error when the spec carries an option other
// than the named ones: a leaf coding's fill lists the options it takes.
func (s spec) only(path, what string, opts ...string) error {
	for _, o := range optionOrder {
		if !slices.Contains(opts, o) {
			if err := s.reject(path, what, o); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *compiler) fill(nd *node, path string, t reflect.Type, s spec, inhKey string) error {
	what := t.String()
	if s.coding != 0 {
		what = fmt.Sprintf("%s (coding %s)", t, s.coding)
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fillLeaf(nd, path, t, s, what, s.codingOr(defaultCoding(t, s)))

	case reflect.Slice:
		return c.fillSlice(nd, path, t, s, what, inhKey)

	case reflect.Array:
		return c.fillArray(nd, path, t, s, what, inhKey)

	case reflect.Struct:
		return c.fillStruct(nd, path, t, s, what, inhKey)

	case reflect.Pointer:
		el, err := c.node(path, t.Elem(), s, inhKey)
		if err != nil {
			return err
		}
		nd.code, nd.elem = cPtr, el
		return nil

	case reflect.Map:
		return c.fillMap(nd, path, t, s, what, inhKey)
	}
	return &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: %s", ErrUnsupportedType, t)}
}

// codingOr returns the coding the tag names, or def when it names none.
func (s spec) codingOr(def code) code {
	if s.coding != 0 {
		return s.coding
	}
	return def
}

// defaultCoding is the coding of a scalar type whose tag names none: bits
// for an integer with bits=N, else bitlen; float for a float.
func defaultCoding(t reflect.Type, s spec) code {
	switch t.Kind() {
	case reflect.Bool:
		return cBool
	case reflect.String:
		return cString
	case reflect.Float32, reflect.Float64:
		return cFloat
	}
	if s.hasBits {
		return cBits
	}
	return cBitlen
}

// fillLeaf compiles leaf coding c for a value of type t: the row's fill
// checks the tag's options and sets the coding's parameters, then any
// dmin/dmax window is checked.
func fillLeaf(nd *node, path string, t reflect.Type, s spec, what string, c code) error {
	row := &coders[c]
	if row.fill == nil || !row.fits(t) {
		return badTag(path, "coding %s does not apply to %s", c, t)
	}
	nd.code, nd.mem = c, memOf(t)
	if s.pred {
		// pred is the same option for every coding that has a linear key:
		// checked here, not by each row's fill.
		if row.predict == nil {
			return badTag(path, "option pred does not apply to %s: it predicts q, range, bits and quat values (and arrays, slices and structs of them)", what)
		}
		s.pred, nd.pred = false, true
	}
	if err := row.fill(nd, path, t, s, what); err != nil {
		return err
	}
	if s.hasDelta {
		return checkDeltaBounds(path, s)
	}
	return nil
}

// isInt and isFloat say which Go types a scalar coding fits (coder.fits).
func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func isFloat(t reflect.Type) bool { return t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64 }

// fillSlice compiles a slice: []byte without a coding is a byte string;
// any other slice codes its elements with the field's inherited tag.
func (c *compiler) fillSlice(nd *node, path string, t reflect.Type, s spec, what, inhKey string) error {
	if err := s.reject(path, what, "composite", "id"); err != nil {
		return err
	}
	if t.Elem().Kind() == reflect.Uint8 && !s.hasCoding() && !s.hasDelta {
		return fillLeaf(nd, path, t, s, what, cBytes)
	}
	el, err := c.node(path+"[]", t.Elem(), s.inherit(), inhKey)
	if err != nil {
		return err
	}
	nd.code, nd.elem, nd.stride, nd.maxlen = cSlice, el, t.Elem().Size(), s.maxlen
	return nil
}

// fillArray compiles an array: four floats tagged quat are one quaternion;
// any other array codes its elements with the field's inherited tag.
func (c *compiler) fillArray(nd *node, path string, t reflect.Type, s spec, what, inhKey string) error {
	if s.coding == cQuat && t.Len() == 4 && isFloat(t.Elem()) {
		return fillLeaf(nd, path, t, s, "quat", cQuat) // the array is the quaternion; else quat applies to each element
	}
	if err := s.reject(path, what, "maxlen", "id"); err != nil {
		return err
	}
	el, err := c.node(path+"[]", t.Elem(), s.inherit(), inhKey)
	if err != nil {
		return err
	}
	nd.code, nd.elem, nd.stride, nd.count = cArray, el, t.Elem().Size(), t.Len()
	return nil
}

// fillStruct compiles a struct field: time.Time is a leaf, quat a
// quaternion, any other struct a nested plan whose leaves inherit the
// field's coding.
func (c *compiler) fillStruct(nd *node, path string, t reflect.Type, s spec, what, inhKey string) error {
	if t == timeType {
		return fillLeaf(nd, path, t, s, what, s.codingOr(cTime))
	}
	if s.coding == cQuat {
		return fillLeaf(nd, path, t, s, "quat", cQuat)
	}
	if err := s.reject(path, what, "maxlen", "id", "group"); err != nil {
		return err
	}
	if s.pred && !s.hasCoding() {
		return badTag(path, "option pred on %s applies to its leaves with the field's coding, and the tag has none: put pred on its fields", t)
	}
	if s.hasDelta && !s.hasCoding() {
		// A window applies to the leaves a struct field's coding
		// reaches; without a coding it would reach none.
		return badTag(path, "option dmin/dmax on %s applies to its leaves with the field's coding (such as q,min=...,max=...,prec=...), and the tag has none", t)
	}
	inh := spec{}
	if s.hasCoding() {
		inh = s.inherit()
		inh.composite = false
	} else {
		inhKey = ""
	}
	sub, err := c.structPlan(t, inh, inhKey)
	if err != nil {
		return wrapField(err, path, -1) // "[]" under a slice, as Layout writes it
	}
	nd.code, nd.sub = cStruct, sub
	return nil
}

// fillMap compiles a map: keys of basic kinds, coded as their type's
// default; values with the field's inherited tag.
func (c *compiler) fillMap(nd *node, path string, t reflect.Type, s spec, what, inhKey string) error {
	if err := s.reject(path, what, "composite", "id", "pred"); err != nil {
		return err
	}
	switch t.Key().Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		return &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: map key type %s (keys must be booleans, numbers or strings)", ErrUnsupportedType, t.Key())}
	}
	k, err := c.node(path+"{key}", t.Key(), spec{}, "")
	if err != nil {
		return err
	}
	v, err := c.node(path+"{}", t.Elem(), s.inherit(), inhKey)
	if err != nil {
		return err
	}
	nd.code, nd.key, nd.elem, nd.maxlen, nd.count = cMap, k, v, s.maxlen, keyRange(t.Key())
	return nil
}

func checkDeltaBounds(path string, s spec) error {
	if s.dmin == "" || s.dmax == "" {
		return badTag(path, "dmin and dmax go together")
	}
	lo, err := parseFloatBound("dmin", s.dmin)
	if err != nil {
		return badTag(path, "%v", err)
	}
	hi, err := parseFloatBound("dmax", s.dmax)
	if err != nil {
		return badTag(path, "%v", err)
	}
	if lo >= hi {
		return badTag(path, "dmin=%s must be less than dmax=%s", s.dmin, s.dmax)
	}
	return nil
}
