package gen_test

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// cfV2 is one Go type that the naming corpus codes under several codings,
// in two messages: one class for all of them (its members have the same
// types), with a coder per plan.
type cfV2 struct {
	X, Y float32
}

// cfN64 holds an int64 that one coding bounds within 2^53 (a TypeScript
// number) and another does not (a bigint): two classes.
type cfN64 struct {
	N int64
}

type cfNamesA struct {
	P cfV2  `net:"q,min=-1,max=1,prec=0.01"`
	V cfV2  `net:"q,min=-9,max=9,prec=0.1,dmin=-1,dmax=1"`
	B cfN64 `net:"range,min=-1000,max=1000"`
}

// cfNamesB meets cfV2 first under a coding cfNamesA does not have, so its
// schema labels it cfV2 as cfNamesA's does.
type cfNamesB struct {
	Q  cfV2 `net:"q,min=-100,max=100,prec=0.5"`
	Vs []cfV2
	U  cfN64
}

func randNamesA(r *rand.Rand) cfNamesA {
	v := func(s float64) cfV2 { return cfV2{float32((r.Float64()*2 - 1) * s), float32((r.Float64()*2 - 1) * s)} }
	return cfNamesA{P: v(1), V: v(9), B: cfN64{r.Int63n(2001) - 1000}}
}

func randNamesB(r *rand.Rand) cfNamesB {
	v := func(s float64) cfV2 { return cfV2{float32((r.Float64()*2 - 1) * s), float32((r.Float64()*2 - 1) * s)} }
	b := cfNamesB{Q: v(100), U: cfN64{r.Int63() - r.Int63()}}
	for i := r.Intn(4); i > 0; i-- {
		b.Vs = append(b.Vs, v(1e6))
	}
	return b
}

func namesMessages() []gen.Message {
	return []gen.Message{
		gen.Named("NamesA", bitwire.MustFor[cfNamesA]().Schema()),
		gen.Named("NamesB", bitwire.MustFor[cfNamesB]().Schema()),
	}
}

// namesCases are random values of both naming messages and deltas between
// them, which both clients must decode as Go does (with the corpus).
func namesCases(t *testing.T, n int, r *rand.Rand) []cfCase {
	var cases []cfCase
	corpus(t, "NamesA", n, func() cfNamesA { return randNamesA(r) }, func(v cfNamesA) cfNamesA {
		w := v
		w.V.X += float32(r.Float64()*0.6 - 0.3) // within the window, mostly
		if w.V.X > 9 || w.V.X < -9 {
			w.V.X = v.V.X
		}
		if r.Intn(2) == 0 {
			w.B = cfN64{r.Int63n(2001) - 1000}
		}
		return w
	}, &cases)
	corpus(t, "NamesB", n, func() cfNamesB { return randNamesB(r) }, func(cfNamesB) cfNamesB { return randNamesB(r) }, &cases)
	return cases
}

// One class per Go type: cfV2 under three codings in two messages is one
// class in TypeScript and in C# (with a coder of its own for each further
// plan in TypeScript; in C# the classes hold only fields and every plan
// has a static coder class), while cfN64, whose N is a number under one
// coding and a bigint under the other, is two.
func TestOneClassPerGoType(t *testing.T) {
	var ts, cs strings.Builder
	if err := gen.TypeScript(&ts, "./bitwire.js", namesMessages()...); err != nil {
		t.Fatal(err)
	}
	if err := gen.CSharp(&cs, "Names", namesMessages()...); err != nil {
		t.Fatal(err)
	}
	got := func(re, src string) string {
		return strings.Join(regexp.MustCompile(re).FindAllString(src, -1), ", ")
	}
	if g, want := got(`export class \w+`, ts.String()), "export class cfNamesA, export class cfV2, export class cfN64, export class cfNamesB, export class cfN64_2"; g != want {
		t.Errorf("TypeScript classes: %s, want %s", g, want)
	}
	if g, want := got(`(public sealed|internal static) class \w+`, cs.String()), "public sealed class cfNamesA, internal static class cfNamesACoder, public sealed class cfV2, internal static class cfV2Coder, internal static class cfV2Coder_2, public sealed class cfN64, internal static class cfN64Coder, public sealed class cfNamesB, internal static class cfNamesBCoder, internal static class cfV2Coder_3, internal static class cfV2Coder_4, public sealed class cfN64_2, internal static class cfN64_2Coder"; g != want {
		t.Errorf("C# classes: %s, want %s", g, want)
	}
	if !strings.Contains(cs.String(), "public cfV2 Q = new cfV2();") || !strings.Contains(cs.String(), "cfV2Coder_3.Decode(d, o.Q);") {
		t.Errorf("C#: cfNamesB.Q is not a cfV2 decoded by its own plan's coder:\n%s", cs.String())
	}
}
