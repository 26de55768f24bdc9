package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// receiptPkg is the package whose Folder is the one writer of a receipt folder.
const receiptPkg = "github.com/flipbench/flipbench/model/receipt"

// writeCalls are the functions, by import path, that write, create, move or remove a file.
var writeCalls = map[string][]string{
	"os": {"WriteFile", "Create", "OpenFile", "Mkdir", "MkdirAll", "Rename", "Remove", "RemoveAll",
		"Symlink", "Link", "Truncate", "Chmod"},
	"github.com/flipbench/flipbench/internal/atomicfile": {"Write", "WriteJSON", "CreateTemp"},
}

// receiptWrites returns, for one Go file, each call of a function of writeCalls whose
// arguments name a part of a receipt folder's layout: a constant of package receipt
// ending in File, Dir or Ext, or receipt.PagePath.
func receiptWrites(fset *token.FileSet, name string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := importNames(f)
	names := func(x ast.Expr) (pkg, sel string, ok bool) {
		s, isSel := x.(*ast.SelectorExpr)
		if !isSel {
			return "", "", false
		}
		id, isID := s.X.(*ast.Ident)
		if !isID {
			return "", "", false
		}
		return local[id.Name], s.Sel.Name, local[id.Name] != ""
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		pkg, fn, ok := names(call.Fun)
		if !ok || !slices.Contains(writeCalls[pkg], fn) {
			return true
		}
		for _, arg := range call.Args {
			ast.Inspect(arg, func(a ast.Node) bool {
				x, ok := a.(ast.Expr)
				if !ok {
					return true
				}
				p, sel, ok := names(x)
				if ok && p == receiptPkg && (sel == "PagePath" || strings.HasSuffix(sel, "File") || strings.HasSuffix(sel, "Dir") || strings.HasSuffix(sel, "Ext")) {
					found = append(found, fmt.Sprintf("%s: %s.%s writes receipt.%s", fset.Position(call.Pos()), pkg[strings.LastIndex(pkg, "/")+1:], fn, sel))
					return false
				}
				return true
			})
		}
		return true
	})
	return found, nil
}

// TestOneReceiptWriter fails when a production file outside model/receipt writes a file
// of a receipt folder by its place in the layout: every file of a receipt is written
// through receipt.Folder, which knows the layout and the manifest (docs/architecture.md).
func TestOneReceiptWriter(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files, err := productionFiles(root, []string{"model/receipt", "examples", "lanes"}, func(rel string, src []byte) error {
		found, err := receiptWrites(fset, rel, src)
		for _, f := range found {
			t.Errorf("%s: write it through receipt.Folder", f)
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

// TestReceiptWritesFound checks the detector: writes that name a receipt file are found
// through any import name, other writes and reads are not.
func TestReceiptWritesFound(t *testing.T) {
	src := `package p

import (
	"os"
	"path/filepath"

	rc "github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/internal/atomicfile"
)

func f(dir string) {
	os.WriteFile(filepath.Join(dir, rc.PlanFile), nil, 0o644)
	atomicfile.WriteJSON(rc.PagePath(dir), 1)
	os.MkdirAll(filepath.Join(dir, rc.ProfilesDir), 0o755)
	os.ReadFile(filepath.Join(dir, rc.RawFile))
	os.WriteFile(filepath.Join(dir, "other.txt"), nil, 0o644)
	rc.Folder(dir).WritePlan(nil)
}
`
	got, err := receiptWrites(token.NewFileSet(), "p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p.go:12:2: os.WriteFile writes receipt.PlanFile",
		"p.go:13:2: atomicfile.WriteJSON writes receipt.PagePath",
		"p.go:14:2: os.MkdirAll writes receipt.ProfilesDir",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
