package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// The demo's TypeScript (the Node clients, the arena's Node clients and
// the browser page) is generated and compiled at start-up, with the
// runtime of clients/ts and the compiler `npm ci` pins there, so that it
// always matches the Go side's schema and model.

// tsBuild is a TypeScript program to compile: its sources by file name.
type tsBuild struct {
	flag    string            // the flag that needs it, for errors ("-node", "-web")
	files   map[string][]byte // sources written as they are
	runtime []string          // files copied from clients/ts/src
	demo    map[string]string // files copied from the repository, by path from its root
	browser bool              // the page: DOM, ES2022, no Node types
}

// compile writes the sources under dir/src and compiles them into
// dir/build; it returns node's path.
func (b tsBuild) compile(dir string) (node string, err error) {
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("%s: %w", b.flag, err)
	}
	if node, err = exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("%s: node is not installed", b.flag)
	}
	ts := filepath.Join(root, "clients", "ts")
	tsc := filepath.Join(ts, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		return "", fmt.Errorf("%s: the TypeScript compiler is missing: run `npm ci` in clients/ts", b.flag)
	}
	files := map[string][]byte{}
	for name, src := range b.files {
		files[name] = src
	}
	copies := map[string]string{}
	for _, name := range b.runtime {
		copies[name] = filepath.Join(ts, "src", name)
	}
	for name, path := range b.demo {
		copies[name] = filepath.Join(root, path)
	}
	for name, from := range copies {
		src, err := os.ReadFile(from)
		if err != nil {
			return "", err
		}
		files[name] = src
	}
	srcDir := filepath.Join(dir, "src")
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		return "", err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(srcDir, name), src, 0o644); err != nil {
			return "", err
		}
	}
	config := `{"compilerOptions": {"target": "ES2020", "module": "ES2020", "moduleResolution": "node", "strict": true,
"outDir": "build", "skipLibCheck": true, "types": ["node"], "typeRoots": [` + strconv.Quote(filepath.Join(ts, "node_modules", "@types")) + `]},
"include": ["src/*.ts"]}`
	if b.browser {
		config = `{"compilerOptions": {"target": "ES2022", "module": "ES2022", "moduleResolution": "node", "strict": true,
"lib": ["ES2022", "DOM"], "outDir": "build", "skipLibCheck": true, "types": []}, "include": ["src/*.ts"]}`
	} else if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type": "module"}`), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(config), 0o644); err != nil {
		return "", err
	}
	if out, err := exec.Command(node, tsc, "-p", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: compiling TypeScript: %v\n%s", b.flag, err, out)
	}
	return node, nil
}

// errNotInRepo: the demo compiles TypeScript from the repository's files.
var errNotInRepo = errors.New("run the demo inside the bitwire repository (it compiles TypeScript from clients/ts)")
