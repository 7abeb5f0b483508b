package gen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitwire/bitwire"
)

// dec returns statements decoding n into the lvalue lv.
func (g *csGen) dec(n *bitwire.NodeSchema, lv, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "bool":
		b.p("%s = d.R.Bool();", lv)
	case "bits", "range", "varint", "bitlen":
		return g.decInt(n, lv, in)
	case "q":
		b.p("%s = %s;", lv, g.conv(n, g.quantizer(n)+".Read(d.R)"))
	case "float":
		if isF32(n.Type) {
			b.p("%s = Codings.F32(d.R.Read(32));", lv)
		} else {
			b.p("%s = BitConverter.Int64BitsToDouble((long)d.R.Read(64));", lv)
		}
	case "fixed":
		b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("d.Fixed(%s, %v)", fmtFloat(n.Fixed.Prec), isF32(n.Type))))
	case "string":
		b.p("%s = Codings.ReadString(d.R, d.Len(%d, 8));", lv, n.MaxLen)
	case "bytes":
		b.p("%s = Codings.ReadBytes(d.R, d.Len(%d, 8), %s);", lv, n.MaxLen, lv)
	case "quat":
		qc := g.quatCoder(n)
		b.p("%s.Read(d.R, d.P4); %s.Unpack(d.P4, d.Q4);", qc, qc)
		b.WriteString(g.storeQuat(n, lv, in))
	case "time":
		v := g.v("z")
		b.p("{ ulong %s = Codings.ReadBitlen(d.R, 6); ulong ns%s = d.R.Read(30); if (ns%s >= 1000000000UL) throw new ErrOutOfRange(ns%s + \" nanoseconds\");", v, v, v, v)
		b.p("  %s = new Bitwire.Time(Codings.Unzigzag(%s), (int)ns%s); }", lv, v, v)
	case "struct":
		b.p("if (%s == null) %s = new %s();", lv, lv, g.classes[*n.Ref])
		b.p("%s.Decode(d, %s);", g.names[*n.Ref], lv)
	case "array":
		return g.decArray(n, lv, in)
	case "slice":
		return g.decSlice(n, lv, in)
	case "ptr":
		return g.decPtr(n, lv, in)
	case "map":
		return g.decMap(n, lv, in)
	default:
		g.fail("coding %q", n.Coding)
	}
	return b.String()
}

// decInt returns statements decoding an integer coded bits, range, varint
// or bitlen into lv, refusing what does not fit its range or Go type.
func (g *csGen) decInt(n *bitwire.NodeSchema, lv, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "bits":
		if signed(n.Type) {
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("Codings.SignExt(d.R.Read(%d), %d)", n.Bits.Width, n.Bits.Width)))
		} else {
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("d.R.Read(%d)", n.Bits.Width)))
		}
	case "range":
		v := g.v("off")
		b.p("{ ulong %s = d.R.Read(%d); if (%s > %sUL) throw new ErrOutOfRange(\"offset \" + %s + \" over the range\");", v, n.Range.Bits, v, rangeSpan(n), v)
		if signed(n.Type) {
			b.p("  %s = %s; }", lv, g.conv(n, fmt.Sprintf("(long)(unchecked((ulong)%s) + %s)", csLong(n.Range.Min), v)))
		} else {
			b.p("  %s = %s; }", lv, g.conv(n, fmt.Sprintf("%sUL + %s", n.Range.Min, v)))
		}
	case "varint":
		v := g.v("u")
		b.p("{ ulong %s = Codings.ReadVarint(d.R, %d);", v, n.Varint.Group)
		if signed(n.Type) {
			b.p("  long s%s = Codings.Unzigzag(%s); if (!Codings.FitsSigned(s%s, %d)) throw new ErrOutOfRange(s%s + \" for a %d-bit integer\");", v, v, v, intSize(n.Type), v, intSize(n.Type))
			b.p("  %s = %s; }", lv, g.conv(n, "s"+v))
		} else {
			b.p("  if (!Codings.FitsUnsigned(%s, %d)) throw new ErrOutOfRange(%s + \" for a %d-bit integer\");", v, intSize(n.Type), v, intSize(n.Type))
			b.p("  %s = %s; }", lv, g.conv(n, v))
		}
	case "bitlen":
		if signed(n.Type) {
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("d.BitlenSigned(%d, %d)", n.Bitlen.Width, intSize(n.Type))))
		} else {
			b.p("%s = %s;", lv, g.conv(n, fmt.Sprintf("d.BitlenUnsigned(%d, %d)", n.Bitlen.Width, intSize(n.Type))))
		}
	}
	return b.String()
}

// decArray returns statements decoding the array n into lv, reusing lv's
// array when it has the length.
func (g *csGen) decArray(n *bitwire.NodeSchema, lv, in string) string {
	b := &csLines{in: in}
	a := g.v("a")
	b.p("{ var %s = %s; if (%s == null || %s.Length != %d) %s = %s = %s;", a, lv, a, a, n.Count, lv, a, csNewArray(g.typ(n.Elem), n.Count))
	b.WriteString(g.decElems(n, a, strconv.Itoa(n.Count), in+"  "))
	b.p("}")
	return b.String()
}

// decSlice returns statements decoding the slice n into lv, reusing lv's
// list (trimmed or grown to the length read).
func (g *csGen) decSlice(n *bitwire.NodeSchema, lv, in string) string {
	b := &csLines{in: in}
	a, l := g.v("a"), g.v("l")
	emin := sliceElemMinBits(n)
	b.p("{ int %s = d.Len(%d, %d); var %s = %s; if (%s == null) %s = %s = new %s();", l, n.MaxLen, emin, a, lv, a, lv, a, g.typ(n))
	if emin == 0 { // elements of no bits: bounded by the allocation budget (BitReader.ChargeZero)
		b.p("  d.R.ChargeZero(%s);", l)
	}
	b.p("  if (%s.Count > %s) %s.RemoveRange(%s, %s.Count - %s);", a, l, a, l, a, l)
	b.p("  while (%s.Count < %s) %s.Add(%s);", a, l, a, g.zero(n.Elem))
	b.WriteString(g.decElems(n, a, l, in+"  "))
	b.p("}")
	return b.String()
}

// decPtr returns statements decoding the pointer n into lv: its presence
// bit, then its element.
func (g *csGen) decPtr(n *bitwire.NodeSchema, lv, in string) string {
	b := &csLines{in: in}
	b.p("if (!d.R.Bool()) %s = null;", lv)
	b.p("else")
	b.p("{")
	b.WriteString(g.ptrElem(n.Elem, lv, in, func(lv string) string { return g.dec(n.Elem, lv, in+"  ") }))
	b.p("}")
	return b.String()
}

// ptrElem returns the statements elem writes (indented by in+"  ") to set
// lv, a pointer to el, to a value: a pointer to a value type (a C# T?)
// through a local of T that they write into, then assigned; a reference
// by itself.
func (g *csGen) ptrElem(el *bitwire.NodeSchema, lv, in string, elem func(lv string) string) string {
	if !csValueType(el) {
		return elem(lv)
	}
	b := &csLines{in: in}
	t := g.v("t")
	b.p("  %s %s = default(%s);", g.typ(el), t, g.typ(el))
	b.WriteString(elem(t))
	b.p("  %s = %s;", lv, t)
	return b.String()
}

// decMap returns statements decoding the map n into lv, reusing lv's
// dictionary (cleared): its length, then its entries in key order.
func (g *csGen) decMap(n *bitwire.NodeSchema, lv, in string) string {
	b := &csLines{in: in}
	m, l, i, k, v := g.v("m"), g.v("l"), g.v("i"), g.v("k"), g.v("v")
	b.p("{ int %s = d.Len(%d, %d); var %s = %s; if (%s == null) %s = %s = new %s(); else %s.Clear();", l, n.MaxLen, n.Key.MinBits+n.Elem.MinBits, m, lv, m, lv, m, g.typ(n), m)
	prev := g.v("prev")
	b.p("  %s %s = %s;", g.typ(n.Key), prev, g.zero(n.Key))
	b.p("  for (int %s = 0; %s < %s; %s++)", i, i, l, i)
	b.p("  {")
	b.WriteString(g.decEntry(n, m, i, k, v, prev, false, in))
	b.p("  }")
	b.p("  if (%s.Count != %s) throw new ErrMalformed(\"duplicate map key\");", m, l) // as Go: checked once all are read
	b.p("}")
	return b.String()
}

// decEntry returns the body of a loop over i reading the entries of the
// map n into the dictionary m: the key into the local k, which must follow
// prev, the last one read (errors name the entry by i), then the value
// into the local v. With dup it refuses a key m holds already (the new
// entries of a delta, added to the baseline's).
func (g *csGen) decEntry(n *bitwire.NodeSchema, m, i, k, v, prev string, dup bool, in string) string {
	b := &csLines{in: in}
	b.p("    %s %s = %s;", g.typ(n.Key), k, g.zero(n.Key))
	b.p("    try")
	b.p("    {")
	b.WriteString(g.decKey(n.Key, k, in+"      "))
	if n.Key.Coding == "float" {
		b.p("      if (double.IsNaN(%s)) throw new ErrInvalidValue(\"NaN map key\");", k)
	}
	b.p("      if (%s > 0 && !(%s)) throw new ErrMalformed(\"map key \" + %s + \" after \" + %s + \": keys must be in ascending order, each once\");", i, csKeyBefore(n.Key, prev, k), k, prev)
	if dup {
		b.p("      if (%s.ContainsKey(%s)) throw new ErrMalformed(\"duplicate map key \" + %s);", m, k, k)
	}
	b.p("    }")
	b.p("    catch (BitwireException x) { throw x.Within(\"{#\" + %s + \"}\"); }", i)
	b.p("    %s = %s;", prev, k)
	b.p("    %s %s = %s;", g.typ(n.Elem), v, g.zero(n.Elem))
	b.WriteString(g.dec(n.Elem, v, in+"    "))
	b.p("    %s[%s] = %s;", m, k, v)
	return b.String()
}

func rangeSpan(n *bitwire.NodeSchema) string {
	if signed(n.Type) {
		lo, _ := strconv.ParseInt(n.Range.Min, 10, 64)
		hi, _ := strconv.ParseInt(n.Range.Max, 10, 64)
		return strconv.FormatUint(uint64(hi)-uint64(lo), 10)
	}
	lo, _ := strconv.ParseUint(n.Range.Min, 10, 64)
	hi, _ := strconv.ParseUint(n.Range.Max, 10, 64)
	return strconv.FormatUint(hi-lo, 10)
}

func (g *csGen) storeQuat(n *bitwire.NodeSchema, lv, in string) string {
	ct := csScalar(n.Type)
	if len(n.Quat.Fields) == 4 {
		t := g.v("q")
		return fmt.Sprintf("%s{ var %s = %s; %s.X = (%s)d.Q4[0]; %s.Y = (%s)d.Q4[1]; %s.Z = (%s)d.Q4[2]; %s.W = (%s)d.Q4[3]; %s = %s; }\n",
			in, t, lv, t, ct, t, ct, t, ct, t, ct, lv, t)
	}
	a := g.v("qa")
	return fmt.Sprintf("%s{ var %s = %s; if (%s == null || %s.Length != 4) %s = %s = new %s[4]; %s[0] = (%s)d.Q4[0]; %s[1] = (%s)d.Q4[1]; %s[2] = (%s)d.Q4[2]; %s[3] = (%s)d.Q4[3]; }\n",
		in, a, lv, a, a, lv, a, ct, a, ct, a, ct, a, ct, a, ct)
}

func quatArgs(n *bitwire.NodeSchema, x string) string {
	if len(n.Quat.Fields) == 4 {
		return fmt.Sprintf("%s.X, %s.Y, %s.Z, %s.W", x, x, x, x)
	}
	return fmt.Sprintf("%s[0], %s[1], %s[2], %s[3]", x, x, x, x)
}

// decElems decodes count elements of the array or slice n into a.
func (g *csGen) decElems(n *bitwire.NodeSchema, a, count, in string) string {
	b := &csLines{in: in}
	i := g.v("i")
	if n.SharedLength {
		el := n.Elem
		z, pr, f := csGroupType(el)
		b.p("d.Group(%s, %d, %v, %s, %s, %s);", count, csWidth(el), el.Coding == "fixed" || signed(el.Type), z, pr, f)
		b.p("for (int %s = 0; %s < %s; %s++) %s[%s] = %s;", i, i, count, i, a, i, g.fromSignMag(el, "d.GNeg["+i+"]", "d.GMag["+i+"]"))
		return b.String()
	}
	if el := n.Elem; el.Coding == "struct" {
		// the element read once from the list (mono calls List's indexer)
		e := g.v("e")
		body := &csLines{in: in + "    "}
		body.p("var %s = %s[%s]; if (%s == null) %s[%s] = %s = new %s();", e, a, i, e, a, i, e, g.classes[*el.Ref])
		body.p("%s.Decode(d, %s);", g.names[*el.Ref], e)
		b.elemLoop(i, count, body.String())
		return b.String()
	}
	b.elemLoop(i, count, g.dec(n.Elem, a+"["+i+"]", in+"    "))
	return b.String()
}

// enc returns statements encoding the expression x of node n.
func (g *csGen) enc(n *bitwire.NodeSchema, x, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "bool":
		b.p("e.W.Bool(%s);", x)
	case "bits", "range", "varint", "bitlen":
		return g.encInt(n, x, in)
	case "q":
		b.p("%s.Write(e.W, %s, %v);", g.quantizer(n), x, n.Clamp)
	case "float":
		if isF32(n.Type) {
			b.p("e.W.Write(Codings.F32Bits(%s), 32);", x)
		} else {
			b.p("e.W.Write((ulong)BitConverter.DoubleToInt64Bits(%s), 64);", x)
		}
	case "fixed":
		b.p("e.Fixed(%s, %s, %v);", x, fmtFloat(n.Fixed.Prec), isF32(n.Type))
	case "string":
		b.p("Codings.WriteBytes(e, Codings.Utf8(%s), %d);", x, n.MaxLen)
	case "bytes":
		b.p("Codings.WriteBytes(e, %s, %d);", x, n.MaxLen)
	case "quat":
		qc := g.quatCoder(n)
		if len(n.Quat.Fields) != 4 {
			b.p("if (%s == null || %s.Length != 4) throw new ErrInvalidValue(\"quaternion of 4 components expected\");", x, x)
		}
		b.p("%s.Pack(%s, e.P4); %s.Write(e.W, e.P4);", qc, quatArgs(n, x), qc)
	case "time":
		v := g.v("t")
		b.p("{ var %s = %s; Codings.WriteBitlen(e.W, Codings.Zigzag(%s.Sec), 6);", v, x, v)
		b.p("  if (%s.Nsec < 0 || %s.Nsec >= 1000000000) throw new ErrOutOfRange(%s.Nsec + \" nanoseconds\");", v, v, v)
		b.p("  e.W.Write((ulong)%s.Nsec, 30); }", v)
	case "struct":
		b.p("%s.Encode(e, %s);", g.names[*n.Ref], x)
	case "array":
		return g.encArray(n, x, in)
	case "slice":
		return g.encSlice(n, x, in)
	case "ptr":
		return g.encPtr(n, x, in)
	case "map":
		return g.encMap(n, x, in)
	default:
		g.fail("coding %q", n.Coding)
	}
	return b.String()
}

// encInt returns statements encoding x, an integer coded bits, range,
// varint or bitlen, refusing (or, for a clamped range, clamping) what its
// coding cannot hold.
func (g *csGen) encInt(n *bitwire.NodeSchema, x, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "bits":
		w := n.Bits.Width
		if signed(n.Type) {
			b.p("%s", csFitsCheck(n, "(long)"+x, x, w))
			b.p("e.W.Write((ulong)(long)%s, %d);", x, w)
		} else {
			b.p("%s", csFitsCheck(n, "(ulong)"+x, x, w))
			b.p("e.W.Write((ulong)%s, %d);", x, w)
		}
	case "range":
		v := g.v("r")
		t, lo, hi := csRangeBounds(n)
		b.p("{ %s %s = (%s)%s;", t, v, t, x)
		if n.Clamp {
			b.p("  if (%s < %s) %s = %s; else if (%s > %s) %s = %s;", v, lo, v, lo, v, hi, v, hi)
		} else {
			b.p("  %s", csRangeCheck(n, v))
		}
		if signed(n.Type) {
			b.p("  e.W.Write((ulong)%s - unchecked((ulong)%s), %d); }", v, lo, n.Range.Bits)
		} else {
			b.p("  e.W.Write(%s - %s, %d); }", v, lo, n.Range.Bits)
		}
	case "varint":
		if signed(n.Type) {
			b.p("Codings.WriteVarint(e.W, Codings.Zigzag((long)%s), %d);", x, n.Varint.Group)
		} else {
			b.p("Codings.WriteVarint(e.W, (ulong)%s, %d);", x, n.Varint.Group)
		}
	case "bitlen":
		if signed(n.Type) {
			b.p("e.BitlenSigned((long)%s, %d);", x, n.Bitlen.Width)
		} else {
			b.p("e.BitlenUnsigned((ulong)%s, %d);", x, n.Bitlen.Width)
		}
	}
	return b.String()
}

// csRangeBounds returns the C# type a value of the range n is checked in
// (long or ulong) and the range's bounds as literals of it.
func csRangeBounds(n *bitwire.NodeSchema) (typ, lo, hi string) {
	if signed(n.Type) {
		return "long", csLong(n.Range.Min), csLong(n.Range.Max)
	}
	return "ulong", n.Range.Min + "UL", n.Range.Max + "UL"
}

// csRangeCheck returns the statement refusing v, a local of the type
// csRangeBounds gives, outside the range n with ErrOutOfRange.
func csRangeCheck(n *bitwire.NodeSchema, v string) string {
	_, lo, hi := csRangeBounds(n)
	return fmt.Sprintf("if (%s < %s || %s > %s) throw new ErrOutOfRange(%s + \" outside %s..%s\");", v, lo, v, hi, v, n.Range.Min, n.Range.Max)
}

// csFitsCheck returns the statement refusing with ErrOutOfRange a value v
// of n (as long or ulong: arg) that does not fit w bits.
func csFitsCheck(n *bitwire.NodeSchema, arg, v string, w int) string {
	fits := "FitsUnsigned"
	if signed(n.Type) {
		fits = "FitsSigned"
	}
	return fmt.Sprintf("if (!Codings.%s(%s, %d)) throw new ErrOutOfRange(%s + \" does not fit %d bits\");", fits, arg, w, v, w)
}

// encArray returns statements encoding x, an array of node n, refusing
// one of another length.
func (g *csGen) encArray(n *bitwire.NodeSchema, x, in string) string {
	b := &csLines{in: in}
	a := g.v("a")
	b.p("{ var %s = %s; if (%s == null || %s.Length != %d) throw new ErrInvalidValue(\"array of %d elements expected\");", a, x, a, a, n.Count, n.Count)
	b.WriteString(g.encElems(n, a, strconv.Itoa(n.Count), in+"  "))
	b.p("}")
	return b.String()
}

// encSlice returns statements encoding x, a slice of node n (null as
// empty): its length, then its elements.
func (g *csGen) encSlice(n *bitwire.NodeSchema, x, in string) string {
	b := &csLines{in: in}
	a, l := g.v("a"), g.v("l")
	b.p("{ var %s = %s; int %s = %s == null ? 0 : %s.Count; Codings.Len(e, %s, %d);", a, x, l, a, a, l, n.MaxLen)
	b.WriteString(g.encElems(n, a, l, in+"  "))
	b.p("}")
	return b.String()
}

// encPtr returns statements encoding x, a pointer of node n: its presence
// bit, then its element.
func (g *csGen) encPtr(n *bitwire.NodeSchema, x, in string) string {
	b := &csLines{in: in}
	v := g.v("p")
	b.p("{ var %s = %s; e.W.Bool(%s != null);", v, x, v)
	b.p("  if (%s != null)", v)
	b.p("  {")
	if csValueType(n.Elem) {
		b.WriteString(g.enc(n.Elem, v+".Value", in+"    "))
	} else {
		b.WriteString(g.enc(n.Elem, v, in+"    "))
	}
	b.p("  }")
	b.p("}")
	return b.String()
}

// encMap returns statements encoding x, a map of node n (null as empty):
// its length, then its entries in key order.
func (g *csGen) encMap(n *bitwire.NodeSchema, x, in string) string {
	b := &csLines{in: in}
	m, l, ks, k := g.v("m"), g.v("l"), g.v("ks"), g.v("k")
	b.p("{ var %s = %s; int %s = %s == null ? 0 : %s.Count; Codings.Len(e, %s, %d);", m, x, l, m, m, l, n.MaxLen)
	b.p("  if (%s > 0)", l)
	b.p("  {")
	b.p("    var %s = new List<%s>(%s.Keys);", ks, g.typ(n.Key), m)
	b.p("    %s", csSortKeys(n.Key, ks))
	b.p("    foreach (var %s in %s)", k, ks)
	b.p("    {")
	b.WriteString(g.enc(n.Key, k, in+"      "))
	b.p("      try")
	b.p("      {")
	b.WriteString(g.enc(n.Elem, m+"["+k+"]", in+"        "))
	b.p("      }")
	b.p("      catch (BitwireException x) { throw x.Within(\"[\" + %s + \"]\"); }", k)
	b.p("    }")
	b.p("  }")
	b.p("}")
	return b.String()
}

// csSortKeys returns the statement sorting the list of map keys ks in key
// order: strings by their UTF-8 bytes, others by value.
func csSortKeys(key *bitwire.NodeSchema, ks string) string {
	if key.Coding == "string" {
		return ks + ".Sort(Codings.Utf8Compare);"
	}
	return ks + ".Sort();"
}

func (g *csGen) encElems(n *bitwire.NodeSchema, a, count, in string) string {
	b := &csLines{in: in}
	i := g.v("i")
	if n.SharedLength {
		el := n.Elem
		b.p("e.Ensure(%s);", count)
		b.p("for (int %s = 0; %s < %s; %s++)", i, i, count, i)
		b.p("{")
		b.p("  try { %s; }", g.setGroup(el, i, a+"["+i+"]"))
		b.p("  catch (BitwireException x) { throw x.Within(\"[\" + %s + \"]\"); }", i)
		b.p("}")
		b.p("e.Group(%s, %d, %v);", count, csWidth(el), el.Coding == "fixed" || signed(el.Type))
		return b.String()
	}
	b.elemLoop(i, count, g.enc(n.Elem, a+"["+i+"]", in+"    "))
	return b.String()
}

// cp returns statements making lv a deep copy of src.
func (g *csGen) cp(n *bitwire.NodeSchema, src, lv, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "bytes":
		b.p("%s = Codings.CopyBytes(%s, %s);", lv, src, lv)
	case "quat":
		if len(n.Quat.Fields) == 4 {
			b.p("%s = %s;", lv, src)
			break
		}
		a := g.v("qa")
		sv := g.v("qs")
		b.p("{ var %s = %s; var %s = %s; if (%s == null || %s.Length != 4) %s = %s = new %s[4]; %s[0] = %s[0]; %s[1] = %s[1]; %s[2] = %s[2]; %s[3] = %s[3]; }",
			sv, src, a, lv, a, a, lv, a, csScalar(n.Type), a, sv, a, sv, a, sv, a, sv)
	case "struct":
		b.p("if (%s == null) %s = new %s();", lv, lv, g.classes[*n.Ref])
		b.p("%s.Copy(%s, %s);", g.names[*n.Ref], src, lv)
	case "array":
		a, s, i := g.v("a"), g.v("s"), g.v("i")
		b.p("{ var %s = %s; var %s = %s; if (%s == null || %s.Length != %d) %s = %s = %s;", s, src, a, lv, a, a, n.Count, lv, a, csNewArray(g.typ(n.Elem), n.Count))
		b.p("  for (int %s = 0; %s < %d; %s++)", i, i, n.Count, i)
		b.p("  {")
		b.WriteString(g.cp(n.Elem, s+"["+i+"]", a+"["+i+"]", in+"    "))
		b.p("  }")
		b.p("}")
	case "slice":
		a, s, i, l := g.v("a"), g.v("s"), g.v("i"), g.v("l")
		b.p("{ var %s = %s; int %s = %s == null ? 0 : %s.Count; var %s = %s; if (%s == null) %s = %s = new %s();", s, src, l, s, s, a, lv, a, lv, a, g.typ(n))
		b.p("  if (%s.Count > %s) %s.RemoveRange(%s, %s.Count - %s);", a, l, a, l, a, l)
		b.p("  while (%s.Count < %s) %s.Add(%s);", a, l, a, g.zero(n.Elem))
		b.p("  for (int %s = 0; %s < %s; %s++)", i, i, l, i)
		b.p("  {")
		b.WriteString(g.cp(n.Elem, s+"["+i+"]", a+"["+i+"]", in+"    "))
		b.p("  }")
		b.p("}")
	case "ptr":
		if csValueType(n.Elem) {
			b.p("%s = %s;", lv, src)
			break
		}
		s := g.v("s")
		b.p("{ var %s = %s; if (%s == null) %s = null;", s, src, s, lv)
		b.p("  else")
		b.p("  {")
		b.WriteString(g.cp(n.Elem, s, lv, in+"    "))
		b.p("  }")
		b.p("}")
	case "map":
		s, m, kv, v := g.v("s"), g.v("m"), g.v("kv"), g.v("v")
		b.p("{ var %s = %s; var %s = %s; if (%s == null) %s = %s = new %s(); else %s.Clear();", s, src, m, lv, m, lv, m, g.typ(n), m)
		b.p("  if (%s != null) foreach (var %s in %s)", s, kv, s)
		b.p("  {")
		b.p("    %s %s = %s;", g.typ(n.Elem), v, g.zero(n.Elem))
		b.WriteString(g.cp(n.Elem, kv+".Value", v, in+"    "))
		b.p("    %s[%s.Key] = %s;", m, kv, v)
		b.p("  }")
		b.p("}")
	default: // value types and immutable strings
		b.p("%s = %s;", lv, src)
	}
	return b.String()
}

// delta returns statements decoding the value delta of n against the
// baseline expression base into lv.
func (g *csGen) delta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "struct":
		if n.Composite {
			return g.dec(n, lv, in)
		}
		b.p("if (%s == null) %s = new %s();", lv, lv, g.classes[*n.Ref])
		b.p("%s(d, %s, %s, -1);", g.structDelta(*n.Ref), base, lv)
		return b.String()
	case "quat":
		qc := g.quatCoder(n)
		if g.mdl != nil {
			b.p("%s.ReadDeltaModel(d, %s, %s, d.Q4, d.P4, d.P4b);", qc, g.modelQuat(n), quatArgs(n, base))
		} else {
			b.p("%s.ReadDelta(d, %d, %s, d.Q4, d.P4, d.P4b);", qc, g.slot(n), quatArgs(n, base))
		}
		b.WriteString(g.storeQuat(n, lv, in))
		return b.String()
	case "slice":
		if n.Entity != nil {
			return g.entityDelta(n, base, lv, in)
		}
		return g.sliceDelta(n, base, lv, in)
	case "ptr":
		return g.ptrDelta(n, base, lv, in)
	case "map":
		return g.mapDelta(n, base, lv, in)
	case "array":
		if n.DeltaByElement() {
			return g.arrayDelta(n, base, lv, in)
		}
	}
	if g.mdl != nil {
		if _, _, ok := modularRange(n); ok {
			return g.modularDelta(n, base, lv, in)
		}
	}
	if n.Delta != nil {
		return g.windowDelta(n, base, lv, in)
	}
	return g.dec(n, lv, in)
}

// ptrDelta decodes the delta of a pointer: its presence bit, then the
// element in full when the baseline's is null, else the element's delta
// against it.
func (g *csGen) ptrDelta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	b.p("if (!d.R.Bool()) %s = null;", lv)
	b.p("else if (%s == null)", base)
	b.p("{")
	b.WriteString(g.ptrElem(n.Elem, lv, in, func(lv string) string { return g.dec(n.Elem, lv, in+"  ") }))
	b.p("}")
	b.p("else")
	b.p("{")
	bv := base
	if csValueType(n.Elem) {
		bv += ".Value"
	}
	b.WriteString(g.ptrElem(n.Elem, lv, in, func(lv string) string { return g.delta(n.Elem, bv, lv, in+"  ") }))
	b.p("}")
	return b.String()
}

// windowDelta decodes the delta of a value with a window (wire-format.md,
// "Windows"; a model's window token): a difference from the baseline
// within the window, or else the value in full.
func (g *csGen) windowDelta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	dl := n.Delta
	diff := g.v("diff")
	b.p("long %s;", diff)
	if g.mdl != nil {
		b.p("if (d.WindowToken(%s, %dL, %dL, out %s))", g.modelTable(g.mdl.layout.nodes[n]), dl.Lo, dl.Hi, diff)
	} else {
		b.p("if (d.Window(%d, %dL, %dL, %d, %d, %d, out %s))", g.slot(n), dl.Lo, dl.Hi, dl.Bits, dl.FirstK, dl.Unary, diff)
	}
	b.p("{")
	b.WriteString(g.windowHit(n, base, diff, lv, in))
	b.p("}")
	b.p("else")
	b.p("{")
	b.WriteString(g.dec(n, lv, in+"  "))
	b.p("}")
	return b.String()
}

// windowHit returns statements setting lv to the baseline base moved by
// diff, a difference within n's window: a q value by its index, an
// integer refused outside its range or width, a fixed value by its
// multiple of the precision.
func (g *csGen) windowHit(n *bitwire.NodeSchema, base, diff, lv, in string) string {
	b := &csLines{in: in}
	switch n.Coding {
	case "q":
		q := g.quantizer(n)
		b.p("  %s = %s;", lv, g.conv(n, fmt.Sprintf("%s.Add(%s.Index(%s, %v), %s)", q, q, base, n.Clamp, diff)))
	case "range", "bits":
		k := g.v("k")
		if signed(n.Type) {
			b.p("  long %s = (long)((ulong)(long)%s + (ulong)%s);", k, base, diff)
		} else {
			b.p("  ulong %s = (ulong)%s + (ulong)%s;", k, base, diff)
		}
		if n.Coding == "range" {
			b.p("  %s", csRangeCheck(n, k))
		} else {
			b.p("  %s", csFitsCheck(n, k, k, n.Bits.Width))
		}
		b.p("  %s = %s;", lv, g.conv(n, k))
	case "fixed":
		ng, mg := g.v("neg"), g.v("mag")
		b.p("  bool %s; ulong %s; Encoder.FixedMag(%s, %s, %v, out %s, out %s);", ng, mg, base, fmtFloat(n.Fixed.Prec), isF32(n.Type), ng, mg)
		b.p("  %s = %s;", lv, g.conv(n, fmt.Sprintf("Decoder.FromFixed((%s ? (long)(0 - %s) : (long)%s) + %s, %s, %v)", ng, mg, mg, diff, fmtFloat(n.Fixed.Prec), isF32(n.Type))))
	}
	return b.String()
}

// arrayDelta decodes a changed array whose elements carry a window: a
// changed bit an element, then its delta (wire-format.md, "Windows").
func (g *csGen) arrayDelta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	a, s, i := g.v("a"), g.v("s"), g.v("i")
	b.p("{ var %s = %s; var %s = %s; if (%s == null || %s.Length != %d) %s = %s = %s;", s, base, a, lv, a, a, n.Count, lv, a, csNewArray(g.typ(n.Elem), n.Count))
	body := &csLines{in: in + "      "}
	body.p("if (d.R.Bool())")
	body.p("{")
	body.WriteString(g.delta(n.Elem, s+"["+i+"]", a+"["+i+"]", in+"        "))
	body.p("}")
	body.p("else")
	body.p("{")
	body.WriteString(g.cp(n.Elem, s+"["+i+"]", a+"["+i+"]", in+"        "))
	body.p("}")
	loop := &csLines{in: in + "  "}
	loop.elemLoop(i, strconv.Itoa(n.Count), body.String())
	b.WriteString(loop.String())
	b.p("}")
	return b.String()
}

func (g *csGen) resize(n *bitwire.NodeSchema, a, lv, l string, b *csLines) {
	b.p("  var %s = %s; if (%s == null) %s = %s = new %s();", a, lv, a, lv, a, g.typ(n))
	b.p("  if (%s.Count > %s) %s.RemoveRange(%s, %s.Count - %s);", a, l, a, l, a, l)
	b.p("  while (%s.Count < %s) %s.Add(%s);", a, l, a, g.zero(n.Elem))
}

func (g *csGen) sliceDelta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	bl, bn, l, common, ch, a, i, j := g.v("bl"), g.v("bn"), g.v("l"), g.v("c"), g.v("ch"), g.v("a"), g.v("i"), g.v("j")
	emin := sliceElemMinBits(n)
	b.p("{ var %s = %s; int %s = %s == null ? 0 : %s.Count; int %s = d.Len(%d, 0); int %s = Math.Min(%s, %s);", bl, base, bn, bl, bl, l, n.MaxLen, common, bn, l)
	b.p("  if (%s > %s && %d > 0 && %s - %s > d.R.Remaining / %d) throw new ErrUnexpectedEnd((%s - %s) + \" new elements need more input than remains\");", l, common, emin, l, common, max(emin, 1), l, common)
	if emin == 0 { // new elements of no bits: bounded by the allocation budget (BitReader.ChargeZero)
		b.p("  d.R.ChargeZero(%s - %s);", l, common)
	}
	b.p("  var %s = d.TakeList();", ch)
	b.p("  try")
	b.p("  {")
	b.p("  d.IndexSet(%s, -1, %s);", common, ch)
	g.resize(n, a, lv, l, b)
	b.p("  int %s = 0;", j)
	b.p("  for (int %s = 0; %s < %s; %s++)", i, i, l, i)
	b.p("  {")
	b.p("    try")
	b.p("    {")
	b.p("      if (%s >= %s)", i, common)
	b.p("      {")
	b.WriteString(g.dec(n.Elem, a+"["+i+"]", in+"        "))
	b.p("      }")
	b.p("      else if (%s < %s.Count && %s[%s] == %s)", j, ch, ch, j, i)
	b.p("      {")
	b.p("        %s++;", j)
	b.WriteString(g.delta(n.Elem, bl+"["+i+"]", a+"["+i+"]", in+"        "))
	b.p("      }")
	b.p("      else")
	b.p("      {")
	b.WriteString(g.cp(n.Elem, bl+"["+i+"]", a+"["+i+"]", in+"        "))
	b.p("      }")
	b.p("    }")
	b.p("    catch (BitwireException x) { throw x.Within(\"[\" + %s + \"]\"); }", i)
	b.p("  }")
	b.p("  }")
	b.p("  finally { d.GiveList(%s); }", ch)
	b.p("}")
	return b.String()
}

// entityDelta decodes an entity set's delta by the runtime's one walk
// (EntitySet.DecodeDelta), given the element's coder as a struct nested in
// the class emitted.
func (g *csGen) entityDelta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	b.p("%s = EntitySet.DecodeDelta(d, %s, %s, %d, %d, %d, new %s());", lv, base, lv, n.MaxLen, n.Elem.MinBits, n.Entity.IDField, g.entityCoder(n))
	return b.String()
}

// entityCoder returns the struct that codes the entities of the entity set
// n for the runtime's walks (EntitySets.cs), emitted once into the class:
// the decoder's IEntityCoder and, but for a model's deltas, the input
// encoder's IEntityInputCoder.
func (g *csGen) entityCoder(n *bitwire.NodeSchema) string {
	t := *n.Elem.Ref
	c, cc := g.names[t], g.classes[t] // its coder and its class
	name := "bw" + c + "Entities"
	if g.mdl != nil {
		name = fmt.Sprintf("bwME%d", t)
	}
	if g.entities == nil {
		g.entities = map[string]bool{}
	}
	if g.entities[name] {
		return name
	}
	g.entities[name] = true
	ifaces := "IEntityCoder<" + cc + ">"
	methods := fmt.Sprintf(`            public %[1]s New() { return new %[1]s(); }
            public void Decode(Decoder d, %[1]s o) { %[2]s.Decode(d, o); }
            public void DecodeDelta(Decoder d, %[1]s b, %[1]s o, int skip) { %[3]s(d, b, o, skip); }
            public void Copy(%[1]s s, %[1]s o) { %[2]s.Copy(s, o); }
`, cc, c, g.structDelta(t))
	if g.mdl == nil {
		ifaces += ", IEntityInputCoder<" + cc + ">"
		methods += csEntityEncoder(cc, c, g.s.Types[t].Fields[n.Entity.IDField])
	}
	g.stat = append(g.stat, fmt.Sprintf("struct %s : %s\n        {\n%s        }", name, ifaces, methods))
	return name
}

// csEntityEncoder returns the IEntityInputCoder methods of an entity class
// cc with coder c and id field id: the id as Go compares ids
// (csEntityKey).
func csEntityEncoder(cc, c string, id bitwire.FieldSchema) string {
	return fmt.Sprintf(`            public ulong Id(%[1]s v) { return %[3]s; }
            public bool Same(%[1]s a, %[1]s b) { return %[2]s.InputSame(a, b); }
            public void Encode(Encoder e, %[1]s v) { %[2]s.Encode(e, v); }
            public void EncodeDelta(Encoder e, %[1]s b, %[1]s o, int skip) { %[2]s.EncodeDeltaInput(e, b, o, skip); }
`, cc, c, csEntityKey(id, "v"))
}

// csEntityKey is the id field id of the entity x as Go compares ids: as
// an unsigned 64-bit integer, a signed one sign-extended first.
func csEntityKey(id bitwire.FieldSchema, x string) string {
	if signed(id.Node.Type) {
		return "(ulong)(long)" + x + "." + id.Name
	}
	return "(ulong)" + x + "." + id.Name
}

func (g *csGen) mapDelta(n *bitwire.NodeSchema, base, lv, in string) string {
	b := &csLines{in: in}
	bm, ks, m, rm, ch, surv, i, k, ri, ci, cnt, total, nm, v, kk := g.v("bm"), g.v("ks"), g.v("m"), g.v("rm"), g.v("ch"), g.v("surv"), g.v("i"), g.v("k"), g.v("ri"), g.v("ci"), g.v("cnt"), g.v("tot"), g.v("nm"), g.v("v"), g.v("kk")
	kt, vt := g.typ(n.Key), g.typ(n.Elem)
	b.p("{ var %s = %s; var %s = %s == null ? new List<%s>() : new List<%s>(%s.Keys);", bm, base, ks, bm, kt, kt, bm)
	b.p("  %s", csSortKeys(n.Key, ks))
	b.p("  var %s = d.TakeList(); var %s = d.TakeList();", rm, ch)
	b.p("  try")
	b.p("  {")
	b.p("  d.IndexSet(%s.Count, -1, %s);", ks, rm)
	b.p("  int %s = %s.Count - %s.Count;", surv, ks, rm)
	b.p("  d.IndexSet(%s, -1, %s);", surv, ch)
	b.p("  var %s = new %s();", nm, g.typ(n))
	b.p("  int %s = 0, %s = 0, %s = 0;", k, ri, ci)
	b.p("  for (int %s = 0; %s < %s.Count; %s++)", i, i, ks, i)
	b.p("  {")
	b.p("    if (%s < %s.Count && %s[%s] == %s) { %s++; continue; }", ri, rm, rm, ri, i, ri)
	b.p("    %s %s = %s;", vt, v, g.zero(n.Elem))
	b.p("    if (%s < %s.Count && %s[%s] == %s)", ci, ch, ch, ci, k)
	b.p("    {")
	b.p("      %s++;", ci)
	b.p("      try")
	b.p("      {")
	b.WriteString(g.delta(n.Elem, bm+"["+ks+"["+i+"]]", v, in+"        "))
	b.p("      }")
	b.p("      catch (BitwireException x) { throw x.Within(\"[\" + %s[%s] + \"]\"); }", ks, i)
	b.p("    }")
	b.p("    else")
	b.p("    {")
	b.WriteString(g.cp(n.Elem, bm+"["+ks+"["+i+"]]", v, in+"      "))
	b.p("    }")
	b.p("    %s[%s[%s]] = %s;", nm, ks, i, v)
	b.p("    %s++;", k)
	b.p("  }")
	b.p("  ulong %s = Codings.ReadBitlen(d.R, 5);", cnt)
	b.p("  if (%s > 0 && %s > (ulong)(d.R.Remaining / %d)) throw new ErrUnexpectedEnd(%s + \" new entries need more input than remains\");", cnt, cnt, max(1, n.Key.MinBits+n.Elem.MinBits), cnt)
	b.p("  ulong %s = (ulong)%s + %s;", total, surv, cnt)
	if n.MaxLen > 0 {
		b.p("  if (%s > %dUL) throw new ErrTooLong(%s + \" entries\");", total, n.MaxLen, total)
	} else {
		b.p("  if (%s > (ulong)d.MaxLen) throw new ErrTooLong(%s + \" entries\");", total, total)
	}
	kv, vv, prev := g.v("key"), g.v("val"), g.v("prev")
	b.p("  %s %s = %s;", kt, prev, g.zero(n.Key))
	b.p("  for (ulong %s = 0; %s < %s; %s++)", kk, kk, cnt, kk)
	b.p("  {")
	b.WriteString(g.decEntry(n, nm, kk, kv, vv, prev, true, in))
	b.p("  }")
	b.p("  if ((ulong)%s.Count != %s) throw new ErrMalformed(\"duplicate map key\");", nm, total)
	b.p("  %s = %s;", lv, nm)
	b.p("  }")
	b.p("  finally { d.GiveList(%s); d.GiveList(%s); }", ch, rm)
	b.p("}")
	_ = m
	return b.String()
}

// csKeyBefore is the C# test that map key a orders strictly before key b
// (docs/wire-format.md, "Map"): numbers by value, strings by their UTF-8
// bytes, false before true.
func csKeyBefore(key *bitwire.NodeSchema, a, b string) string {
	switch key.Coding {
	case "string":
		return fmt.Sprintf("Codings.Utf8Compare(%s, %s) < 0", a, b)
	case "bool":
		return fmt.Sprintf("!%s && %s", a, b)
	}
	return fmt.Sprintf("%s < %s", a, b)
}

// decKey decodes a map key: as any value, except that a string key must be
// valid UTF-8 (Codings.ReadKeyString), as in Go.
func (g *csGen) decKey(key *bitwire.NodeSchema, lv, in string) string {
	s := g.dec(key, lv, in)
	if key.Coding == "string" {
		s = strings.Replace(s, "Codings.ReadString(", "Codings.ReadKeyString(", 1)
	}
	return s
}
