package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/fatih/structtag"
)

// codingNamed returns the coding a net tag names by key: one of the leaf
// rows marked tag in coders.go (range, q, fixed, varint, bitlen, quat).
func codingNamed(key string) (code, bool) {
	for c := range coders {
		if coders[c].tag && coders[c].name == key {
			return code(c), true
		}
	}
	return 0, false
}

// optionNames are the options a tag may carry after its coding.
var optionNames = map[string]bool{
	"min": true, "max": true, "prec": true, "bits": true, "group": true, "maxlen": true,
	"dmin": true, "dmax": true, "composite": true, "id": true, "clamp": true, "pred": true,
}

// spec is one field's parsed net tag. Parsing checks the grammar; checking the
// spec against the field's Go type is done by the plan compiler (check).
type spec struct {
	present bool // the field has a net tag
	skip    bool // net:"-"
	coding  code // the coding the tag names; 0: the type's default

	min, max       string // as written; parsed per type
	prec           float64
	bits           int
	group          string // varint: group size; bitlen: group name
	maxlen         int
	dmin, dmax     string
	hasMin, hasMax bool
	hasPrec        bool
	hasBits        bool
	hasGroup       bool
	hasMaxlen      bool
	hasDelta       bool
	composite      bool
	id             bool
	clamp          bool
	pred           bool // code the value against its prediction from two baselines (predict.go)
}

// badTag builds an ErrBadTag error naming the field path and the problem.
func badTag(path, format string, args ...any) error {
	// Errors of package fields start with the same "bitwire: " that
	// ErrBadTag's text does: say it once.
	msg := strings.TrimPrefix(fmt.Sprintf(format, args...), "bitwire: ")
	return &FieldError{Path: path, Bit: -1, Err: fmt.Errorf("%w: %s", ErrBadTag, msg)}
}

// parseTag parses the net tag of a struct field. path names the field in errors.
func parseTag(path string, tag reflect.StructTag) (spec, error) {
	var s spec
	if tag == "" {
		return s, nil
	}
	tags, err := structtag.Parse(string(tag))
	if err != nil {
		if _, ok := tag.Lookup("net"); !ok && !strings.Contains(string(tag), "net:") {
			return s, nil // someone else's malformed tag; we have no net tag
		}
		return s, badTag(path, "malformed struct tag %q: %v", tag, err)
	}
	t, err := tags.Get("net")
	if err != nil {
		return s, nil // no net tag
	}
	s.present = true
	if t.Name == "-" && len(t.Options) == 0 {
		s.skip = true
		return s, nil
	}
	elems := append([]string{t.Name}, t.Options...)
	for i, e := range elems {
		e = strings.TrimSpace(e)
		if e == "" {
			if i == 0 {
				continue // empty kind
			}
			return s, badTag(path, "empty option in net tag %q", t.Value())
		}
		key, val, hasVal := strings.Cut(e, "=")
		if i == 0 && !hasVal {
			if c, ok := codingNamed(key); ok {
				s.coding = c
				continue
			}
			if !optionNames[key] {
				return s, badTag(path, "unknown coding %q (the codings are bitlen, fixed, q, quat, range and varint)", key)
			}
		}
		if err := s.setOption(key, val, hasVal); err != nil {
			return s, badTag(path, "%v", err)
		}
	}
	return s, nil
}

func (s *spec) setOption(key, val string, hasVal bool) error {
	switch key {
	case "composite", "id", "clamp", "pred": // flags
		if hasVal {
			return fmt.Errorf("option %q takes no value", key)
		}
		switch key {
		case "composite":
			s.composite = true
		case "id":
			s.id = true
		case "pred":
			s.pred = true
		default:
			s.clamp = true
		}
		return nil
	case "min", "max", "prec", "bits", "group", "maxlen", "dmin", "dmax":
		if !hasVal || val == "" {
			return fmt.Errorf("option %q needs a value", key)
		}
		return s.setValue(key, val)
	}
	if _, ok := codingNamed(key); ok {
		return fmt.Errorf("coding %q must be the first element of the tag", key)
	}
	return fmt.Errorf("unknown option %q", key)
}

// setValue sets option key=val of those that take a value. Bounds stay
// text until the field's type tells how to parse them.
func (s *spec) setValue(key, val string) error {
	switch key {
	case "min":
		s.min, s.hasMin = val, true
	case "max":
		s.max, s.hasMax = val, true
	case "group":
		s.group, s.hasGroup = val, true
	case "dmin":
		s.dmin, s.hasDelta = val, true
	case "dmax":
		s.dmax, s.hasDelta = val, true
	case "prec":
		p, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return fmt.Errorf("prec=%s does not parse as a number", val)
		}
		if !(p > 0) || math.IsInf(p, 0) {
			return fmt.Errorf("prec=%s must be a positive finite number", val)
		}
		s.prec, s.hasPrec = p, true
	case "bits":
		n, err := parseCount(key, val, 64)
		if err != nil {
			return err
		}
		s.bits, s.hasBits = n, true
	case "maxlen":
		n, err := parseCount(key, val, math.MaxInt32)
		if err != nil {
			return err
		}
		s.maxlen, s.hasMaxlen = n, true
	}
	return nil
}

// parseCount parses the value of option name, an integer in 1..hi.
func parseCount(name, val string, hi int) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil {
		return 0, fmt.Errorf("%s=%s does not parse as an integer", name, val)
	}
	if n < 1 || n > hi {
		return 0, fmt.Errorf("%s=%d is outside 1..%d", name, n, hi)
	}
	return n, nil
}

// inherit returns the spec an element or leaf gets from a container's tag:
// the coding and its options, without the options that belong to the
// container itself (maxlen, composite, id, delta bounds stay with the leaf).
func (s spec) inherit() spec {
	e := s
	e.maxlen, e.hasMaxlen = 0, false
	e.composite = false
	e.id = false
	return e
}

// hasCoding reports whether the spec names a coding that a struct-typed field
// passes down to its untagged leaves.
func (s spec) hasCoding() bool {
	return s.coding != 0 || s.hasBits || s.hasPrec || s.hasMin || s.hasMax || s.clamp
}

// parseIntBound parses a min/max bound for an integer field.
func parseIntBound(name, v string, unsigned bool) (int64, uint64, error) {
	if unsigned {
		u, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s=%s does not parse as an unsigned integer", name, v)
		}
		return 0, u, nil
	}
	i, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%s=%s does not parse as an integer", name, v)
	}
	return i, 0, nil
}

func parseFloatBound(name, v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s=%s does not parse as a finite number", name, v)
	}
	return f, nil
}
