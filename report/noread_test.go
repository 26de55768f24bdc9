package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fileImports are the packages that read (or stat, or list) files, or start processes
// that could: report renders receipts loaded into memory (package loaded) and imports none.
var fileImports = map[string]bool{"os": true, "io/ioutil": true, "io/fs": true, "os/exec": true, "embed": true}

// readingCall matches the names of the calls that read, stat or list files: os's and
// filepath's, and the loaders of receipt, loaded, incidence and profdiff (receipt.ReadPlan,
// loaded.Open, incidence.Exists, profdiff.ReadReport, receipt.VerifyManifest, ...).
var readingCall = regexp.MustCompile(`^(Read|Open|Load|Verify|Hash|Exists|Stat|Lstat|Walk|Glob|EvalSymlinks)`)

// TestReportReadsNoFiles parses report's non-test files and fails on an import that reads
// files and on a call that does (a selector call whose name readingCall matches).
func TestReportReadsNoFiles(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); fileImports[path] {
				t.Errorf("%s: imports %s: report renders data it is given and reads no files (load with package loaded)", fset.Position(imp.Pos()), path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && readingCall.MatchString(sel.Sel.Name) {
				t.Errorf("%s: calls %s: report renders data it is given and reads no files", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 10 {
		t.Errorf("checked %d files of report, want its sources (run in its folder)", checked)
	}
}
