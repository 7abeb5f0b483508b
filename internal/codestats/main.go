// Command codestats prints the shape of Go packages: files, lines, long
// functions, the ratio of comment lines to code lines, and the take-back
// sites of the bit writer. It measures the figures docs/decisions.md quotes
// for the layout of the root package.
//
//	go run ./internal/codestats . ./bits ./fields ./snapshot ./replicate
//
// Test files are left out. A line counts as a comment line when it holds
// only a comment; a code line is any other non-blank line.
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// longFunc is the length past which a function is listed.
const longFunc = 80

func main() {
	dirs := os.Args[1:]
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	for _, d := range dirs {
		if err := report(d); err != nil {
			fmt.Fprintln(os.Stderr, "codestats:", err)
			os.Exit(1)
		}
	}
}

type fileStat struct {
	name        string
	lines       int
	code, comms int
}

func report(dir string) error {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	var files []fileStat
	var long []string
	funcs, methods, unexported, takeBacks := 0, 0, 0, 0
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		fs, err := countLines(n)
		if err != nil {
			return err
		}
		files = append(files, fs)
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				funcs++
				if d.Recv != nil {
					methods++
				} else if !d.Name.IsExported() {
					unexported++
				}
				n := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1
				if n > longFunc {
					long = append(long, fmt.Sprintf("%s %d (%s)", d.Name.Name, n, filepath.Base(fs.name)))
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							unexported++
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if !id.IsExported() && id.Name != "_" {
								unexported++
							}
						}
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Truncate" {
					takeBacks++
				}
			}
			return true
		})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].lines > files[j].lines })
	total, code, comms := 0, 0, 0
	for _, f := range files {
		total += f.lines
		code += f.code
		comms += f.comms
	}
	ratio := 0.0
	if code > 0 {
		ratio = float64(comms) / float64(code)
	}
	fmt.Printf("%s: %d files, %d lines, %d functions (%d methods), %d unexported top-level names, comment ratio %.2f, %d Truncate calls\n",
		dir, len(files), total, funcs, methods, unexported, ratio, takeBacks)
	sort.Strings(long)
	fmt.Printf("  functions over %d lines: %d\n", longFunc, len(long))
	for _, l := range long {
		fmt.Println("    " + l)
	}
	fmt.Print("  largest files:")
	for i, f := range files {
		if i == 5 {
			break
		}
		fmt.Printf(" %s %d", filepath.Base(f.name), f.lines)
	}
	fmt.Println()
	return nil
}

func countLines(name string) (fileStat, error) {
	f, err := os.Open(name)
	if err != nil {
		return fileStat{}, err
	}
	defer f.Close()
	fs := fileStat{name: name}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fs.lines++
		t := strings.TrimSpace(sc.Text())
		switch {
		case t == "":
		case strings.HasPrefix(t, "//"):
			fs.comms++
		default:
			fs.code++
		}
	}
	return fs, sc.Err()
}
