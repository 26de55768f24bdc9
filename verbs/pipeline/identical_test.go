package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flipbench/flipbench/model/receipt"
)

// TestIdenticalDirs checks identical arms whose lanes run in checkouts of their own: the
// same binary in two directories with the same data is identical whatever their Go
// sources say; different data, or a different binary, is not.
func TestIdenticalDirs(t *testing.T) {
	write := func(dir string, files map[string]string) string {
		for name, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	root := t.TempDir()
	a := write(filepath.Join(root, "a"), map[string]string{"work.go": "// one\npackage w\n", "testdata/in.txt": "rows"})
	b := write(filepath.Join(root, "b"), map[string]string{"work.go": "// another comment\npackage w\n", "testdata/in.txt": "rows"})
	c := write(filepath.Join(root, "c"), map[string]string{"work.go": "// one\npackage w\n", "testdata/in.txt": "more rows"})
	arm := func(name, dir, sha string) receipt.Arm {
		return receipt.Arm{Name: name, SHA256: sha, Dir: dir, Kind: "gotest", Command: []string{"{bin}"}}
	}
	for _, tt := range []struct {
		name string
		arms []receipt.Arm
		want bool
	}{
		{"same data, other sources", []receipt.Arm{arm("base", a, "s1"), arm("cand", b, "s1")}, true},
		{"other testdata", []receipt.Arm{arm("base", a, "s1"), arm("cand", c, "s1")}, false},
		{"other binary", []receipt.Arm{arm("base", a, "s1"), arm("cand", b, "s2")}, false},
		{"one directory missing", []receipt.Arm{arm("base", a, "s1"), arm("cand", filepath.Join(root, "gone"), "s1")}, false},
		{"one arm", []receipt.Arm{arm("base", a, "s1")}, false},
	} {
		if got := Identical(tt.arms); got != tt.want {
			t.Errorf("%s: Identical = %v, want %v", tt.name, got, tt.want)
		}
	}
}
