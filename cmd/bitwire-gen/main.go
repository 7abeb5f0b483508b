// Command bitwire-gen generates TypeScript or C# client code from bitwire
// schema files (the JSON of Codec.Schema, see docs/schema.md), for builds
// that keep schemas rather than run Go:
//
//	bitwire-gen -lang ts -out client/world.ts World=world.json Input=input.json
//	bitwire-gen -lang cs -ns Game.Net -out World.cs World=world.json
//
// Each argument names the generated codec object and the schema file it is
// generated from. The TypeScript output imports the runtime from -runtime
// (default ./bitwire.js: clients/ts/src/bitwire.ts compiled beside it); the
// C# output needs the runtime, clients/cs/Bitwire/*.cs, in the same build. Go programs can
// call package gen directly instead (see examples/gen).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bitwire-gen:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bitwire-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lang := fs.String("lang", "ts", "output language: ts (TypeScript) or cs (C#)")
	out := fs.String("out", "", "output file (default: standard output)")
	runtime := fs.String("runtime", "./bitwire.js", "TypeScript: the import path of the runtime")
	ns := fs.String("ns", "Bitwire.Generated", "C#: the namespace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no schemas: give Name=schema.json arguments")
	}
	var msgs []gen.Message
	for _, a := range fs.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("%q: want Name=schema.json", a)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var s bitwire.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		msgs = append(msgs, gen.Named(name, &s))
	}
	var b bytes.Buffer
	var err error
	switch *lang {
	case "ts":
		err = gen.TypeScript(&b, *runtime, msgs...)
	case "cs":
		err = gen.CSharp(&b, *ns, msgs...)
	default:
		err = fmt.Errorf("-lang %q: want ts or cs", *lang)
	}
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	return os.WriteFile(*out, b.Bytes(), 0o644)
}
