package armbuild

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSourceRuleCovers(t *testing.T) {
	tests := sourceRule{Path: "work", TestsOnly: true}
	whole := sourceRule{Path: "lanes/x"}
	top := sourceRule{Path: ".", TestsOnly: true}
	for _, tc := range []struct {
		name string
		rule sourceRule
		path string
		want bool
	}{
		{"test file", tests, "work/work_test.go", true},
		{"code under test", tests, "work/work.go", false},
		{"test file of a sub-package", tests, "work/sub/sub_test.go", false},
		{"testdata", tests, "work/testdata/in.txt", true},
		{"another folder", tests, "workshop/a_test.go", false},
		{"top-level test file", top, "a_test.go", true},
		{"top-level code", top, "a.go", false},
		{"whole folder", whole, "lanes/x/main.go", true},
		{"whole folder, nested", whole, "lanes/x/internal/y.go", true},
		{"sibling with the same prefix", whole, "lanes/xy/main.go", false},
		{"a single file path", sourceRule{Path: "lanes/common.go"}, "lanes/common.go", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.Covers(tc.path); got != tc.want {
				t.Errorf("%+v.Covers(%q) = %v, want %v", tc.rule, tc.path, got, tc.want)
			}
		})
	}
}

func TestHashSource(t *testing.T) {
	rules := []sourceRule{{Path: "work", TestsOnly: true}}
	files := []treeEntry{{Mode: "100644", Type: "blob", Object: "aaa", Path: "work/work_test.go"}}
	h := hashSource(rules, files)
	if h2 := hashSource(rules, slices.Clone(files)); h2 != h {
		t.Errorf("the same source hashes differently")
	}
	changed := slices.Clone(files)
	changed[0].Object = "bbb"
	if hashSource(rules, changed) == h {
		t.Errorf("a changed file does not change the hash")
	}
	if hashSource([]sourceRule{{Path: "work"}}, files) == h {
		t.Errorf("a changed rule does not change the hash")
	}
}

func TestClearSource(t *testing.T) {
	wt := t.TempDir()
	for _, f := range []string{"work/work.go", "work/work_test.go", "work/extra_test.go", "work/testdata/x",
		"work/sub/sub_test.go", "lanes/x/main.go", "other.go"} {
		p := filepath.Join(wt, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := clearSource(wt, []sourceRule{{Path: "work", TestsOnly: true}, {Path: "lanes/x"}, {Path: "not/there"}})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{
		"work/work.go": true, "work/work_test.go": false, "work/extra_test.go": false, "work/testdata": false,
		"work/sub/sub_test.go": true, "lanes/x": false, "lanes": true, "other.go": true,
	} {
		_, err := os.Stat(filepath.Join(wt, f))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", f, got, want)
		}
	}
	if err := clearSource(wt, []sourceRule{{Path: "."}}); err == nil {
		t.Errorf("clearing the whole repository: no error")
	}
}

func TestParseLsTree(t *testing.T) {
	out := "100644 blob aaa\twork/a_test.go\x00120000 blob bbb\twork/link\x00160000 commit ccc\tvendor/sub\x00"
	got, err := parseLsTree([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []treeEntry{
		{"100644", "blob", "aaa", "work/a_test.go"},
		{"120000", "blob", "bbb", "work/link"},
		{"160000", "commit", "ccc", "vendor/sub"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseLsTree = %v, want %v", got, want)
	}
	if _, err := parseLsTree([]byte("garbage\x00")); err == nil {
		t.Errorf("parseLsTree(garbage): no error")
	}
}
