package armbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirtyLeavesOutputsOut checks that flipbench's own outputs (results/, experiments/,
// .flipbench/) do not make a committed tree dirty, and that any other change does.
func TestDirtyLeavesOutputsOut(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed; these tests need it")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", "package main\n")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	ctx := context.Background()
	check := func(want bool, what string) {
		t.Helper()
		got, err := Dirty(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: Dirty = %v, want %v", what, got, want)
		}
	}
	check(false, "a committed tree")
	write("results/2026-12-02T10-00-00Z-exp000-compare.md", "receipt\n")
	write("experiments/012-x.md", "page\n")
	write("archive/exp-012/cand.patch", "patch\n")
	write(".flipbench/cache/x", "binary\n")
	check(false, "with flipbench's outputs untracked")
	write("new.go", "package main\n")
	check(true, "an untracked source file")
	if err := os.Remove(filepath.Join(dir, "new.go")); err != nil {
		t.Fatal(err)
	}
	write("main.go", "package main // changed\n")
	check(true, "a changed tracked file")

	// With the outputs in .gitignore (flipbench init), the snapshot of the tree still
	// works (git add refuses to be given an ignored path, even to exclude it).
	write(".gitignore", "/.flipbench/\n/results/\n")
	git("add", "-A")
	git("commit", "-q", "-m", "ignore")
	check(false, "outputs ignored")
	write("main.go", "package main // changed again\n")
	head, diff, err := Snapshot(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(head) != 40 || !strings.Contains(string(diff), "+package main // changed again") || strings.Contains(string(diff), "results/") {
		t.Errorf("Snapshot = %s, diff:\n%s", head, diff)
	}
}
