// Package seeds gives fuzz targets their seed corpora from the project's own test data:
// the files inside the CLI's testscripts (cmd/flipbench/cli/testdata/script/*.txtar: experiment
// pages, gate specs, directions registries, drift inputs, lane scripts) and the committed
// receipts under results/. A seed corpus drawn from what the tests already exercise starts
// the fuzzer from inputs that reach deep into each parser; `go test` runs every seed as a
// plain test, `make fuzz` mutates them.
package seeds

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/rogpeppe/go-internal/txtar"
)

// ScriptDir is the testscripts' folder, relative to the module's root (Repo).
const ScriptDir = "cmd/flipbench/cli/testdata/script"

// Repo returns the path p, given relative to the module's root, as a path from the working
// directory of the test that calls it (go test runs a package's tests in its folder, at any
// depth): the root is the nearest folder above with a go.mod. It panics when there is none,
// which only a test run outside the module can meet.
func Repo(p string) string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for up := "."; ; up = filepath.Join(up, "..") {
		if _, err := os.Stat(filepath.Join(dir, up, "go.mod")); err == nil {
			return filepath.Join(up, filepath.FromSlash(p))
		}
		if abs, _ := filepath.Abs(filepath.Join(dir, up)); abs == filepath.Dir(abs) {
			panic("seeds: no go.mod above " + dir)
		}
	}
}

// ScriptFiles returns the content of every file inside the testscripts in dir (relative to
// the module's root) whose name
// (the path inside the archive) keep accepts, in a stable order. It is an error when none
// is found: a seed corpus that silently went empty would fuzz from nothing.
func ScriptFiles(dir string, keep func(name string) bool) ([][]byte, error) {
	scripts, err := filepath.Glob(filepath.Join(Repo(dir), "*.txtar"))
	if err != nil {
		return nil, err
	}
	slices.Sort(scripts)
	var out [][]byte
	for _, s := range scripts {
		a, err := txtar.ParseFile(s)
		if err != nil {
			return nil, err
		}
		for _, f := range a.Files {
			if keep(f.Name) {
				out = append(out, f.Data)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seed files in %s", dir)
	}
	return out, nil
}

// Files returns the content of the files matching the glob pattern (filepath.Glob), in a
// stable order; it is an error when none matches.
func Files(pattern string) ([][]byte, error) {
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seed files match %s", pattern)
	}
	return out, nil
}
