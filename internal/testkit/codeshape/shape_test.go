// Package codeshape checks the shape the project's code keeps (CONVENTIONS: small
// functions that read along their steps): no production function is longer than
// maxFuncLines. examples/ and lanes/ are systems under test and are left out, as are
// tests and testdata.
package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a production function may be, from its signature to its
// closing brace.
const maxFuncLines = 100

// TestFunctionLengths fails on each production function longer than maxFuncLines,
// naming it with its file, line and length.
func TestFunctionLengths(t *testing.T) {
	root := moduleRoot(t)
	long, err := longFunctions(root, maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range long {
		t.Errorf("%s: split it along its steps (at most %d lines)", l, maxFuncLines)
	}
}

// TestLongFunctionsFound checks the detector on a function one line over the limit and
// one at it.
func TestLongFunctionsFound(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 1\n", lines-2) + "}\n"
	}
	src := "package p\n\n" + body("Over", 11) + "\n" + body("At", 10)
	if err := writeFile(filepath.Join(dir, "p.go"), src); err != nil {
		t.Fatal(err)
	}
	long, err := longFunctions(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) != 1 || !strings.Contains(long[0], "Over is 11 lines") {
		t.Errorf("found %q, want only Over at 11 lines", long)
	}
}

// longFunctions lists the functions over max lines in the production Go files under root,
// as "path:line: Name is N lines".
func longFunctions(root string, max int) ([]string, error) {
	var long []string
	fset := token.NewFileSet()
	_, err := productionFiles(root, []string{"examples", "lanes", "archive", "results", "experiments", "bin"}, func(rel string, src []byte) error {
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > max {
				long = append(long, fmt.Sprintf("%s:%d: %s is %d lines", rel, start.Line, fd.Name.Name, n))
			}
		}
		return nil
	})
	return long, err
}

// moduleRoot is the repository holding this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// writeFile writes src to path.
func writeFile(path, src string) error {
	return os.WriteFile(path, []byte(src), 0o644)
}
