package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/bitwire/bitwire/fields"
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

var timeType = reflect.TypeOf(time.Time{})

func (c *compiler) fill(nd *node, path string, t reflect.Type, s spec, inhKey string) error {
	what := t.String()
	if s.kind != kindNone {
		what = fmt.Sprintf("%s (coding %s)", t, s.kind)
	}
	kindOn := func() error {
		return badTag(path, "coding %s does not apply to %s", s.kind, t)
	}
	switch t.Kind() {
	case reflect.Bool:
		if s.kind != kindNone {
			return kindOn()
		}
		nd.code = cBool
		return s.reject(path, what, "min", "max", "prec", "bits", "group", "maxlen", "dmin", "composite", "id", "clamp")

	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return c.fillInt(nd, path, t, s, what)

	case reflect.Float32, reflect.Float64:
		return c.fillFloat(nd, path, t, s, what)

	case reflect.String:
		if s.kind != kindNone {
			return kindOn()
		}
		nd.code = cString
		nd.maxlen = s.maxlen
		return s.reject(path, what, "min", "max", "prec", "bits", "group", "dmin", "composite", "id", "clamp")

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

// fillSlice compiles a slice: []byte without a coding is a byte string;
// any other slice codes its elements with the field's inherited tag.
func (c *compiler) fillSlice(nd *node, path string, t reflect.Type, s spec, what, inhKey string) error {
	if err := s.reject(path, what, "composite", "id"); err != nil {
		return err
	}
	if t.Elem().Kind() == reflect.Uint8 && !s.hasCoding() && !s.hasDelta {
		nd.code = cBytes
		nd.maxlen = s.maxlen
		return s.reject(path, what, "group")
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
	if s.kind == kindQuat && t.Len() == 4 && (t.Elem().Kind() == reflect.Float32 || t.Elem().Kind() == reflect.Float64) {
		return c.fillQuat(nd, path, t, s) // the array is the quaternion; else quat applies to each element
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
		if s.kind != kindNone {
			return badTag(path, "coding %s does not apply to %s", s.kind, t)
		}
		nd.code = cTime
		return s.reject(path, what, "min", "max", "prec", "bits", "group", "maxlen", "dmin", "composite", "id", "clamp")
	}
	if s.kind == kindQuat {
		return c.fillQuat(nd, path, t, s)
	}
	if err := s.reject(path, what, "maxlen", "id", "group"); err != nil {
		return err
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
	if err := s.reject(path, what, "composite", "id"); err != nil {
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

func (c *compiler) fillInt(nd *node, path string, t reflect.Type, s spec, what string) error {
	nd.mem = memOf(t)
	size := nd.mem.sizeBits()
	signed := nd.mem.signed()
	if err := s.reject(path, what, "prec", "maxlen", "composite"); err != nil {
		return err
	}
	if s.kind != kindBitlen && s.kind != kindVarint {
		if err := s.reject(path, what, "group"); err != nil {
			return err
		}
	}
	if s.kind != kindRange && s.kind != kindNone {
		if err := s.reject(path, what, "clamp"); err != nil {
			return err
		}
	}
	switch s.kind {
	case kindNone:
		if err := s.reject(path, what, "min", "max"); err != nil {
			return err
		}
		if !s.hasBits {
			nd.code, nd.n = cBitlen, fields.BitlenWidth(size)
			return s.reject(path, what+" (default bitlen coding)", "clamp", "dmin")
		}
		if s.bits > size {
			return badTag(path, "bits=%d is wider than %s", s.bits, t)
		}
		nd.code, nd.n = cBits, s.bits
	case kindRange:
		if !s.hasMin || !s.hasMax {
			return badTag(path, "range needs both min and max")
		}
		if err := s.reject(path, what, "bits"); err != nil {
			return err
		}
		nd.code = cRange
		lo, ulo, err := parseIntBound("min", s.min, !signed)
		if err != nil {
			return badTag(path, "%v", err)
		}
		hi, uhi, err := parseIntBound("max", s.max, !signed)
		if err != nil {
			return badTag(path, "%v", err)
		}
		if signed {
			if lo > hi {
				return badTag(path, "min=%s must not be above max=%s", s.min, s.max)
			}
			if size < 64 && (lo < -1<<(size-1) || hi > 1<<(size-1)-1) {
				return badTag(path, "range %s..%s does not fit %s", s.min, s.max, t)
			}
			nd.irng, err = fields.NewIntRange(lo, hi)
		} else {
			if ulo > uhi {
				return badTag(path, "min=%s must not be above max=%s", s.min, s.max)
			}
			if size < 64 && uhi > 1<<size-1 {
				return badTag(path, "range %s..%s does not fit %s", s.min, s.max, t)
			}
			nd.urng, err = fields.NewUintRange(ulo, uhi)
		}
		if err != nil {
			return badTag(path, "%v", err)
		}
	case kindVarint:
		if err := s.reject(path, what, "min", "max", "bits", "dmin"); err != nil {
			return err
		}
		nd.code, nd.n = cVarint, 7
		if s.hasGroup {
			var g int
			if _, err := fmt.Sscanf(s.group, "%d", &g); err != nil || fmt.Sprint(g) != s.group || g < 1 || g > 64 {
				return badTag(path, "varint group=%s must be an integer in 1..64", s.group)
			}
			nd.n = g
		}
	case kindBitlen:
		if err := s.reject(path, what, "min", "max", "bits", "dmin"); err != nil {
			return err
		}
		nd.code, nd.n = cBitlen, fields.BitlenWidth(size)
	default:
		return badTag(path, "coding %s does not apply to %s", s.kind, t)
	}
	if s.hasDelta {
		if err := checkDeltaBounds(path, s); err != nil {
			return err
		}
	}
	return nil
}

// inward32 returns the float32 nearest x on the side of x given by dir (1:
// up, -1: down), as a float64: x itself when a float32 holds it.
func inward32(x float64, dir float32) float64 {
	f := float32(x) // ±Inf beyond the float32 range
	if dir > 0 && float64(f) < x || dir < 0 && float64(f) > x {
		f = math.Nextafter32(f, dir*float32(math.Inf(1)))
	}
	return float64(f)
}

func (c *compiler) fillFloat(nd *node, path string, t reflect.Type, s spec, what string) error {
	nd.mem = memOf(t)
	if err := s.reject(path, what, "group", "maxlen", "composite", "id"); err != nil {
		return err
	}
	if s.kind != kindQ {
		if err := s.reject(path, what, "clamp"); err != nil {
			return err
		}
	}
	switch s.kind {
	case kindNone:
		if err := s.reject(path, what+" (raw float; use q or fixed to quantize)", "min", "max", "prec", "bits", "dmin"); err != nil {
			return err
		}
		nd.code = cFloat
		return nil
	case kindQ:
		if !s.hasMin || !s.hasMax {
			return badTag(path, "q needs both min and max")
		}
		if s.hasPrec == s.hasBits {
			return badTag(path, "q needs exactly one of prec and bits")
		}
		lo, err := parseFloatBound("min", s.min)
		if err != nil {
			return badTag(path, "%v", err)
		}
		hi, err := parseFloatBound("max", s.max)
		if err != nil {
			return badTag(path, "%v", err)
		}
		if lo >= hi {
			return badTag(path, "min=%s must be less than max=%s", s.min, s.max)
		}
		if nd.mem == mF32 {
			// A float32 field's grid runs between the float32 bounds
			// inside [min, max], so that every decoded value, once
			// stored as a float32, lies in the range and re-encodes.
			lo, hi = inward32(lo, 1), inward32(hi, -1)
			if !(lo < hi) {
				return badTag(path, "min=%s and max=%s hold fewer than two float32 values", s.min, s.max)
			}
		}
		if s.hasPrec {
			nd.q, err = fields.NewQuantizer(lo, hi, s.prec)
		} else {
			nd.q, err = fields.NewQuantizerBits(lo, hi, s.bits)
		}
		if err != nil {
			return badTag(path, "%v", err)
		}
		// The step must be coarse enough for the Go type to hold every
		// decoded value exactly enough to re-encode to the same index.
		mag := math.Max(math.Abs(lo), math.Abs(hi))
		ulpBits := -49.0
		if nd.mem == mF32 {
			ulpBits = -20
		}
		if nd.q.Step() < mag*math.Pow(2, ulpBits) {
			return badTag(path, "precision %g is finer than %s can hold over %s..%s", nd.q.Step(), t, s.min, s.max)
		}
		nd.code = cQ
	case kindFixed:
		if err := fillFixed(nd, path, t, s, what); err != nil {
			return err
		}
	default:
		return badTag(path, "coding %s does not apply to %s", s.kind, t)
	}
	if s.hasDelta {
		return checkDeltaBounds(path, s)
	}
	return nil
}

// fillFixed compiles a fixed coding: round(v/prec) as a signed bitlen.
func fillFixed(nd *node, path string, t reflect.Type, s spec, what string) error {
	if !s.hasPrec {
		return badTag(path, "fixed needs prec")
	}
	if err := s.reject(path, what, "min", "max", "bits"); err != nil {
		return err
	}
	fx, err := fields.NewFixed(s.prec)
	if err != nil {
		return badTag(path, "%v", err)
	}
	nd.code, nd.fx, nd.n = cFixed, fx, fields.BitlenWidth(64)
	if !fixedExact(nd, 1) {
		// Every count would decode to one value (0): the field could
		// hold nothing else, and its encodings would not be unique.
		return badTag(path, "fixed: one step of %g is 0 in %s; use a coarser prec", s.prec, t)
	}
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

func (c *compiler) fillQuat(nd *node, path string, t reflect.Type, s spec) error {
	if err := s.reject(path, "quat", "min", "max", "prec", "group", "maxlen", "id", "clamp", "dmin"); err != nil {
		return err
	}
	n := 9
	if s.hasBits {
		n = s.bits
	}
	q, err := fields.NewQuat(n)
	if err != nil {
		return badTag(path, "%v", err)
	}
	switch {
	case t.Kind() == reflect.Array && t.Len() == 4 && (t.Elem().Kind() == reflect.Float32 || t.Elem().Kind() == reflect.Float64):
		nd.mem = memOf(t.Elem())
		sz := t.Elem().Size()
		nd.qoff = [4]uintptr{0, sz, 2 * sz, 3 * sz}
	case t.Kind() == reflect.Struct:
		for i, name := range []string{"X", "Y", "Z", "W"} {
			f, ok := t.FieldByName(name)
			if !ok || len(f.Index) != 1 || (f.Type.Kind() != reflect.Float32 && f.Type.Kind() != reflect.Float64) {
				return badTag(path, "quat on struct %s needs float fields X, Y, Z and W", t)
			}
			m := memOf(f.Type)
			if i > 0 && m != nd.mem {
				return badTag(path, "quat on struct %s needs X, Y, Z and W of one float type", t)
			}
			nd.mem = m
			nd.qoff[i] = f.Offset
		}
	default:
		return badTag(path, "coding quat does not apply to %s (use [4]float32, [4]float64 or a struct of X, Y, Z, W)", t)
	}
	nd.code, nd.quat = cQuat, q
	return nil
}
