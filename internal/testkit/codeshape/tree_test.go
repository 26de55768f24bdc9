package codeshape

import (
	"go/ast"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// productionFiles calls visit with every production Go file under root (its path
// relative to root, slash-separated, and its source), in the order of a walk: tests,
// testdata, folders whose names start with "." or "_", and the folders skip names
// (relative to root) are left out. It returns how many files it visited.
func productionFiles(root string, skip []string, visit func(rel string, src []byte) error) (int, error) {
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || slices.Contains(skip, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		return visit(rel, src)
	})
	return files, err
}

// importNames maps the names a file uses for its imports to their paths.
func importNames(f *ast.File) map[string]string {
	local := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		n := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			n = imp.Name.Name
		}
		local[n] = path
	}
	return local
}

// minFiles is how many production files a walk of the tree must find, or it missed it.
const minFiles = 50
