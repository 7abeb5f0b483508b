package bitwire

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fpTiny is the type of the fingerprint's worked example in
// docs/wire-format.md (and of the snapshot header's example).
type fpTiny struct {
	A uint8 `net:"bits=7"`
}

// TestFingerprintWorkedExample checks the input bytes and the hash that
// docs/wire-format.md ("Fingerprint") spells out.
func TestFingerprintWorkedExample(t *testing.T) {
	s, err := SchemaOf(fpTiny{})
	require.NoError(t, err)
	var in []byte
	fp := fingerprintInput(s, &in)
	require.Equal(t, "626974776972652d66702d31"+ // "bitwire-fp-1"
		"0400000000000000"+ // wire version 4
		"00"+ // not debug
		"0d"+"00"+"00"+ // struct, not composite, its fields follow
		"0100000000000000"+ // one field
		"0000000000000000"+ // in no group
		"02"+"05"+ // bits, uint8
		"0700000000000000"+ // width 7
		"00", // no delta window
		hex.EncodeToString(in))
	require.Equal(t, uint64(0xcf2886a68fe710c8), fp)
	require.Equal(t, "cf2886a68fe710c8", s.Fingerprint)
	c := MustFor[fpTiny]()
	require.Equal(t, fp, c.Fingerprint())
	require.Equal(t, uint32(0x40cf966e), uint32(fp)^uint32(fp>>32)) // the snapshot header's 32 bits
	require.Equal(t, uint64(0xb0c866bd8a18e773), c.WithDebug(true).Fingerprint())
	require.Equal(t, "b0c866bd8a18e773", c.WithDebug(true).Schema().Fingerprint)
	require.Equal(t, fp, c.WithDebug(true).WithDebug(false).Fingerprint())
}

// Two declarations of one layout under other names.
type fpPos struct {
	X, Y float32 `net:"q,min=-512,max=512,prec=0.01"`
}
type fpPlayer struct {
	Pos    fpPos
	Health int `net:"range,min=0,max=200"`
	Tags   []string
	Next   *fpPlayer
}
type fpPlace struct {
	Left, Right float32 `net:"q,min=-512,max=512,prec=0.01"`
}
type fpAvatar struct {
	Where fpPlace
	Life  int `net:"range,min=0,max=200"`
	Names []string
	Link  *fpAvatar
}

func TestFingerprintIgnoresNames(t *testing.T) {
	a, b := MustFor[fpPlayer](), MustFor[fpAvatar]()
	require.Equal(t, a.Fingerprint(), b.Fingerprint())
	require.Equal(t, a.Schema().Fingerprint, b.Schema().Fingerprint)
	require.NotEqual(t, a.Layout(), b.Layout()) // the labels differ

	// reflect.StructOf: the same field under another name
	mk := func(name string) reflect.Type {
		return reflect.StructOf([]reflect.StructField{
			{Name: name, Type: reflect.TypeFor[int32](), Tag: `net:"range,min=-5,max=5"`},
			{Name: "Rot", Type: reflect.TypeFor[[4]float32](), Tag: `net:"quat"`},
		})
	}
	s1, err := SchemaOf(mk("Speed"))
	require.NoError(t, err)
	s2, err := SchemaOf(reflect.New(mk("Velocity")).Interface()) // a pointer
	require.NoError(t, err)
	require.Equal(t, s1.Fingerprint, s2.Fingerprint)
	require.Equal(t, "Speed", s1.Types[0].Fields[0].Name)
	require.Equal(t, "Velocity", s2.Types[0].Fields[0].Name)
}

// Variations of fpBase, each changing one thing on the wire.
type fpBase struct {
	A int32   `net:"range,min=-5,max=5"`
	B float32 `net:"q,min=0,max=1,bits=8"`
}
type fpReordered struct {
	B float32 `net:"q,min=0,max=1,bits=8"`
	A int32   `net:"range,min=-5,max=5"`
}
type fpOtherRange struct {
	A int32   `net:"range,min=-5,max=6"`
	B float32 `net:"q,min=0,max=1,bits=8"`
}
type fpOtherSteps struct {
	A int32   `net:"range,min=-5,max=5"`
	B float32 `net:"q,min=0,max=1,bits=9"`
}
type fpFloat64 struct {
	A int32   `net:"range,min=-5,max=5"`
	B float64 `net:"q,min=0,max=1,bits=8"`
}
type fpInt64 struct {
	A int64   `net:"range,min=-5,max=5"`
	B float32 `net:"q,min=0,max=1,bits=8"`
}
type fpWindow struct {
	A int32   `net:"range,min=-5,max=5,dmin=-1,dmax=1"`
	B float32 `net:"q,min=0,max=1,bits=8"`
}
type fpClamp struct {
	A int32   `net:"range,min=-5,max=5,clamp"`
	B float32 `net:"q,min=0,max=1,bits=8,clamp"`
}

type fpInner struct{ X, Y uint8 }
type fpNest struct{ I fpInner }
type fpComposite struct {
	I fpInner `net:"composite"`
}
type fpFlat struct{ X, Y uint8 }
type fpGroupOf struct {
	X uint8 `net:"bitlen,group=g"`
	Y uint8 `net:"bitlen,group=g"`
}
type fpSlice struct{ S []gEntity }
type fpSliceMax struct {
	S []gEntity `net:",maxlen=9"`
}
type fpNoEntity struct{ S []fpInner }
type fpSelf struct{ Next *fpSelf }
type fpMutualA struct{ Next *fpMutualB }
type fpMutualB struct{ Next *fpMutualA }
type fpMap struct{ M map[string]uint8 }
type fpMapKey struct{ M map[uint8]uint8 }

func TestFingerprintChangesWithTheWire(t *testing.T) {
	fps := map[uint64]string{}
	add := func(name string, v any) {
		t.Helper()
		s, err := SchemaOf(v)
		require.NoError(t, err, name)
		var fp uint64
		_, err = fmt.Sscanf(s.Fingerprint, "%x", &fp)
		require.NoError(t, err)
		if other, dup := fps[fp]; dup {
			t.Fatalf("%s and %s have the same fingerprint", name, other)
		}
		fps[fp] = name
	}
	add("base", fpBase{})
	add("reordered", fpReordered{})
	add("other range", fpOtherRange{})
	add("other steps", fpOtherSteps{})
	add("float64", fpFloat64{})
	add("int64", fpInt64{})
	add("window", fpWindow{})
	add("nested", fpNest{})
	add("composite", fpComposite{})
	add("group", fpGroupOf{})
	add("entity set", fpSlice{})
	add("entity set maxlen", fpSliceMax{})
	add("slice", fpNoEntity{})
	add("self", fpSelf{})
	add("mutual", fpMutualA{})
	add("map", fpMap{})
	add("map key", fpMapKey{})
	add("tiny", fpTiny{})

	// a nested struct codes like its fields in place in a full message,
	// but not in a delta (a changed bit of its own)
	add("flat", fpFlat{})
	require.Equal(t, MustFor[fpBase]().Fingerprint(), MustFor[fpClamp]().Fingerprint(), "clamp only changes what an encoder accepts")
	require.NotEqual(t, MustFor[fpBase]().Fingerprint(), MustFor[fpBase]().WithDebug(true).Fingerprint())
	require.Equal(t, MustFor[fpBase]().Fingerprint(), MustFor[fpBase]().WithLimits(Limits{MaxLen: 5}).Fingerprint())
}

func TestUnionSchema(t *testing.T) {
	u, err := NewUnion(MsgMove{}, MsgChat{}, MsgFire{})
	require.NoError(t, err)
	s := u.Schema()
	require.Equal(t, -1, s.Root)
	require.Equal(t, &UnionSchema{TagBits: 2, Variants: []int{0, 1, 2}}, s.Union)
	require.Equal(t, []string{"MsgMove", "MsgChat", "MsgFire"}, []string{s.Types[0].Name, s.Types[1].Name, s.Types[2].Name})
	require.Equal(t, fmt.Sprintf("%016x", u.Fingerprint()), s.Fingerprint)
	require.Equal(t, 2+8+8*140, s.MaxBits) // the tag, a length in 8 bits and the longest chat

	// the order of the variants counts, their names do not
	v, err := NewUnion(MsgChat{}, MsgMove{}, MsgFire{})
	require.NoError(t, err)
	require.NotEqual(t, u.Fingerprint(), v.Fingerprint())
	type Shout struct {
		Words string `net:",maxlen=140"`
	}
	w, err := NewUnion(MsgMove{}, Shout{}, MsgFire{})
	require.NoError(t, err)
	require.Equal(t, u.Fingerprint(), w.Fingerprint())
	// a union of one message is not that message
	one, err := NewUnion(MsgFire{})
	require.NoError(t, err)
	require.NotEqual(t, MustFor[MsgFire]().Fingerprint(), one.Fingerprint())
	require.Equal(t, 0, one.Schema().Union.TagBits)

	// a variant that another variant holds is listed once
	type Wrap struct{ F MsgFire }
	x, err := NewUnion(Wrap{}, MsgFire{})
	require.NoError(t, err)
	xs := x.Schema()
	require.Len(t, xs.Types, 2)
	require.Equal(t, 1, *xs.Types[0].Fields[0].Node.Ref)

	// an unbounded variant makes the union unbounded
	type Free struct{ S string }
	y, err := NewUnion(MsgFire{}, Free{})
	require.NoError(t, err)
	require.Equal(t, -1, y.Schema().MaxBits)
}

func TestSchemaOf(t *testing.T) {
	s, err := SchemaOf(PlayerState{})
	require.NoError(t, err)
	c := MustFor[PlayerState]()
	require.Equal(t, c.Schema(), s)
	require.Equal(t, 72, s.MaxBits)
	s2, err := SchemaOf(reflect.TypeFor[PlayerState]())
	require.NoError(t, err)
	require.Equal(t, s, s2)
	s3, err := SchemaOf(&PlayerState{})
	require.NoError(t, err)
	require.Equal(t, s, s3)

	_, err = SchemaOf(nil)
	require.ErrorIs(t, err, ErrUnsupportedType)
	_, err = SchemaOf(3)
	require.ErrorIs(t, err, ErrUnsupportedType)
	type bad struct{ C chan int }
	_, err = SchemaOf(bad{})
	require.ErrorIs(t, err, ErrUnsupportedType)

	// a codec's own options show
	lc := c.WithLimits(Limits{MaxDepth: 7, MaxLen: 9}).WithDebug(true)
	ls := lc.Schema()
	require.Equal(t, SchemaLimits{MaxDepth: 7, MaxLen: 9}, ls.Limits)
	require.True(t, ls.Debug)
	require.Equal(t, fmt.Sprintf("%016x", lc.Fingerprint()), ls.Fingerprint)

	// each call is a new value
	ls.Types[0].Name = "changed"
	require.Equal(t, "PlayerState", lc.Schema().Types[0].Name)
}

// schemaAll holds every coding and container, to check what the schema
// says of each.
type schemaAll struct {
	B    bool
	Bi   int16   `net:"bits=9,clamp"`
	R    uint64  `net:"range,min=10,max=18446744073709551615"`
	Ri   int64   `net:"range,min=-9223372036854775808,max=9223372036854775807,dmin=-3,dmax=4"`
	Q    float64 `net:"q,min=-1,max=1,prec=0.001,dmin=-0.01,dmax=0.01"`
	F    float32
	Fx   float32 `net:"fixed,prec=0.25"`
	V    int32   `net:"varint,group=4"`
	L    uint    `net:"bitlen,group=a"`
	L2   int8    `net:"bitlen,group=a"`
	S    string  `net:",maxlen=20"`
	By   []byte
	Qu   Quat4f     `net:"quat,bits=11"`
	Qa   [4]float64 `net:"quat"`
	T    time.Time
	Arr  [2]int16
	Sl   []int8 `net:"maxlen=3"`
	P    *uint8 `net:"bits=3"`
	M    map[int16]string
	E    []gEntity
	Gen  schemaGeneric[int]
	Anon struct {
		Z bool
	}
	Vq Vec3 `net:"q,min=-1,max=1,prec=0.1"`
	Vp Vec3 `net:"q,min=-2,max=2,prec=0.1"`
	Vc Vec3 `net:"composite"`
}

type schemaGeneric[T any] struct{ V T }

func TestSchemaDescribesEveryCoding(t *testing.T) {
	s, err := SchemaOf(schemaAll{})
	require.NoError(t, err)
	node := func(name string) *NodeSchema {
		for _, f := range s.Types[0].Fields {
			if f.Name == name {
				return f.Node
			}
		}
		t.Fatalf("no field %s", name)
		return nil
	}
	require.Equal(t, &NodeSchema{Coding: "bool", Type: "bool", MinBits: 1, MaxBits: 1}, node("B"))
	require.Equal(t, &NodeSchema{Coding: "bits", Type: "int16", Bits: &BitsParams{Width: 9}, Clamp: true, MinBits: 9, MaxBits: 9}, node("Bi"))
	require.Equal(t, &RangeParams{Min: "10", Max: "18446744073709551615", Bits: 64}, node("R").Range)
	require.Equal(t, &RangeParams{Min: "-9223372036854775808", Max: "9223372036854775807", Bits: 64}, node("Ri").Range)
	require.Equal(t, &DeltaParams{DMin: -3, DMax: 4, Lo: -3, Hi: 4, Bits: 3, MinBits: 3, MaxBits: 3}, node("Ri").Delta)
	q := node("Q")
	require.Equal(t, &QParams{Min: -1, Max: 1, Steps: 2000, Bits: 11, Step: 0.001, Zero: true, KMin: -1000}, q.Q)
	require.Equal(t, &DeltaParams{DMin: -0.01, DMax: 0.01, Lo: -10, Hi: 10, Bits: 5, MinBits: 5, MaxBits: 5}, q.Delta)
	require.Equal(t, "float32", node("F").Type)
	require.Equal(t, &FixedParams{Prec: 0.25, Width: 6}, node("Fx").Fixed)
	require.Equal(t, &VarintParams{Group: 4}, node("V").Varint)
	require.Equal(t, &BitlenParams{Width: 6}, node("L").Bitlen)
	require.Equal(t, []GroupSchema{{Name: "a", Members: []int{8, 9}, Width: 6, Signed: true}}, s.Types[0].Groups)
	require.Equal(t, 0, s.Types[0].Fields[8].Group)
	require.Equal(t, 20, node("S").MaxLen)
	require.Equal(t, "bytes", node("By").Coding)
	require.Equal(t, &QuatParams{Bits: 11, Fields: []string{"X", "Y", "Z", "W"}}, node("Qu").Quat)
	require.Equal(t, &QuatParams{Bits: 9}, node("Qa").Quat)
	require.Equal(t, "float64", node("Qa").Type)
	require.Equal(t, "time", node("T").Coding)
	arr := node("Arr")
	require.Equal(t, 2, arr.Count)
	require.True(t, arr.SharedLength)
	require.Equal(t, "bitlen", arr.Elem.Coding)
	sl := node("Sl")
	require.Equal(t, 3, sl.MaxLen)
	require.True(t, sl.SharedLength)
	require.Nil(t, sl.Entity)
	p := node("P")
	require.Equal(t, "ptr", p.Coding)
	require.Equal(t, &BitsParams{Width: 3}, p.Elem.Bits)
	m := node("M")
	require.Equal(t, "int16", m.Key.Type)
	require.Equal(t, "string", m.Elem.Coding)
	e := node("E")
	require.Equal(t, &EntityParams{IDField: 0}, e.Entity)
	require.Equal(t, "gEntity", s.Types[*e.Elem.Ref].Name)
	require.True(t, s.Types[0].SignFlag)
	require.False(t, s.Types[*e.Elem.Ref].SignFlag)
	require.Equal(t, "schemaGeneric_int", s.Types[*node("Gen").Ref].Name)
	require.Equal(t, "bitwire.schemaGeneric[int]", s.Types[*node("Gen").Ref].GoType)
	anon := s.Types[*node("Anon").Ref]
	require.Regexp(t, `^Struct\d+$`, anon.Name)
	// one Go type, two codings passed down: two types, two names
	vq, vp := s.Types[*node("Vq").Ref], s.Types[*node("Vp").Ref]
	require.Equal(t, "Vec3", vq.Name)
	require.Equal(t, "Vec3_2", vp.Name)
	require.Equal(t, 1.0, vq.Fields[0].Node.Q.Max)
	require.Equal(t, 2.0, vp.Fields[0].Node.Q.Max)
	require.True(t, node("Vc").Composite)
	require.Equal(t, "Vec3_3", s.Types[*node("Vc").Ref].Name)

	// JSON round trip keeps everything, the fingerprint included
	js, err := json.Marshal(s)
	require.NoError(t, err)
	var back Schema
	require.NoError(t, json.Unmarshal(js, &back))
	require.Equal(t, *s, back)
	require.Equal(t, s.Fingerprint, fmt.Sprintf("%016x", fingerprint(&back)))
}

// TestLayoutFromSchema checks the table's marks: composite structs, delta
// windows with their width, groups, entity sets and recursion.
func TestLayoutFromSchema(t *testing.T) {
	l := MustFor[schemaAll]().Layout()
	for _, re := range []string{
		`schemaAll\.Ri\s+range\s+64\s+min=-9223372036854775808 max=9223372036854775807 dmin=-3 dmax=4 \(steps -3\.\.4, 3 bits\)\n`,
		`schemaAll\.L\s+bitlen\s+7-69\s+width=6 signed=false group=a\n`,
		`schemaAll\.E\s+slice\s+6\+\s+entity set by ID\n`,
		`schemaAll\.E\[\]\.X\s+bits\s+8\s+n=8 signed=false\n`,
		`schemaAll\.Vc\s+struct\s+96\s+composite\n`,
		`schemaAll\.Vc\.X\s+float\s+32\s+float32\n`,
		`schemaAll\.Bi\s+bits\s+9\s+n=9 signed=true clamp\n`,
		`schemaAll\.M\{key\}\s+bitlen`,
		`schemaAll\.P\*\s+bits\s+3`,
		`schemaAll\.Sl\s+slice\s+2-\d+\s+maxlen=3 shared length\n`,
	} {
		require.Regexp(t, re, l)
	}
	require.Regexp(t, `fpSelf\.Next\*\s+recursive\s+\(fpSelf\)`, MustFor[fpSelf]().Layout())
}

func TestSchemaErrorsAreTheCompilers(t *testing.T) {
	type badTag struct {
		X int `net:"range,min=3"`
	}
	_, err := SchemaOf(badTag{})
	require.True(t, errors.Is(err, ErrBadTag))
}

// SchemaFingerprint recomputes the codec's fingerprint from its schema,
// for messages, debug codecs and unions, and refuses a broken schema with
// ErrMalformed instead of panicking.
func TestSchemaFingerprint(t *testing.T) {
	type inner struct {
		X float32 `net:"q,min=-1,max=1,prec=0.01"`
		N uint8   `net:"bits=3"`
	}
	type msg struct {
		A []inner `net:"maxlen=4"`
		M map[uint8]int16
		P *msg
	}
	c := MustFor[msg]()
	for _, cc := range []*Codec[msg]{c, c.WithDebug(true)} {
		fp, err := SchemaFingerprint(cc.Schema())
		require.NoError(t, err)
		require.Equal(t, cc.Fingerprint(), fp)
	}
	u, err := NewUnion(msg{}, inner{})
	require.NoError(t, err)
	fp, err := SchemaFingerprint(u.Schema())
	require.NoError(t, err)
	require.Equal(t, u.Fingerprint(), fp)

	broken := map[string]func(s *Schema){
		"root out of range": func(s *Schema) { s.Root = len(s.Types) },
		"negative ref":      func(s *Schema) { r := -1; s.Types[0].Fields[2].Node.Elem.Ref = &r },
		"missing node":      func(s *Schema) { s.Types[0].Fields[0].Node.Elem = nil },
		"unknown coding":    func(s *Schema) { s.Types[0].Fields[1].Node.Key.Coding = "zigzag" },
		"no parameters":     func(s *Schema) { s.Types[1].Fields[0].Node.Q = nil },
		"no ref":            func(s *Schema) { s.Types[0].Fields[0].Node.Elem.Ref = nil },
	}
	for name, breakIt := range broken {
		s := c.Schema()
		breakIt(s)
		_, err := SchemaFingerprint(s)
		require.ErrorIs(t, err, ErrMalformed, name)
	}
	_, err = SchemaFingerprint(nil)
	require.ErrorIs(t, err, ErrMalformed)
}
