package codeshape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// starters returns the folders (relative to the module root) whose production files may
// start processes: harness (Starter, for lanes, listings and checks) and armbuild (builds,
// git and the go command). examples and lanes are systems under test, and cmd/neighbour
// is the load the project puts beside them on purpose, never run by flipbench.
func starters() []string {
	return []string{"harness", "steps/armbuild", "examples", "lanes", "cmd/neighbour"}
}

// startCalls returns the functions that start a process, by import path.
func startCalls() map[string][]string {
	return map[string][]string{
		"os":                    {"StartProcess"},
		"syscall":               {"ForkExec", "StartProcess", "Exec"},
		"golang.org/x/sys/unix": {"Exec"},
	}
}

// processStarts returns how the Go source src starts processes: "imports os/exec", or
// "calls os.StartProcess" and the like, one line each with its position.
func processStarts(fset *token.FileSet, name string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var found []string
	calls := startCalls()
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "os/exec" {
			found = append(found, fset.Position(imp.Pos()).String()+": imports os/exec")
		}
	}
	local := importNames(f)
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		for _, fn := range calls[local[x.Name]] {
			if sel.Sel.Name == fn {
				found = append(found, fset.Position(sel.Pos()).String()+": uses "+local[x.Name]+"."+fn)
			}
		}
		return true
	})
	return found, nil
}

// TestProcessesStartBehindTheSeam fails when a production file outside harness/ and
// armbuild/ (and the systems under test in examples/ and lanes/) can start a process: every
// other package starts them through a Starter, so each gets the owner mark, its process
// group, its CPUs, the sweep of what it leaves, and a fake in tests (docs/architecture.md).
func TestProcessesStartBehindTheSeam(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files, err := productionFiles(root, starters(), func(rel string, src []byte) error {
		found, err := processStarts(fset, rel, src)
		for _, f := range found {
			t.Errorf("%s: start it through harness.Starter, or build through armbuild", f)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < minFiles {
		t.Fatalf("walked %d production files under %s; the walk missed the tree", files, root)
	}
}

func TestProcessStarts(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"clean", `package p; import "os"; func f() { os.Getpid() }`, 0},
		{"os/exec", `package p; import "os/exec"; func f() { exec.LookPath("go") }`, 1},
		{"renamed os/exec", `package p; import x "os/exec"; var _ = x.Command`, 1},
		{"os.StartProcess", `package p; import "os"; func f() { os.StartProcess("a", nil, nil) }`, 1},
		{"syscall.ForkExec", `package p; import sc "syscall"; func f() { sc.ForkExec("a", nil, nil) }`, 1},
		{"unix.Exec", `package p; import "golang.org/x/sys/unix"; func f() { unix.Exec("a", nil, nil) }`, 1},
		{"another package's StartProcess", `package p; import "example.com/os"; func f() { os.StartProcess() }`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := processStarts(token.NewFileSet(), "p.go", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Fatalf("found %q, want %d", got, tc.want)
			}
		})
	}
}
