package bisect

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with main: c1..c4 and a side branch merged into main at
// c4 (side: s1 from c1), and returns its folder.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", name)
		git("commit", "-q", "-m", name)
	}
	git("init", "-q", "-b", "main")
	commit("c1")
	git("tag", "c1")
	git("checkout", "-q", "-b", "side")
	commit("s1")
	git("tag", "s1")
	git("checkout", "-q", "main")
	commit("c2")
	commit("c3")
	git("merge", "-q", "--no-ff", "-m", "c4 merge side", "side")
	return dir
}

func TestResolveRange(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	r, err := ResolveRange(ctx, dir, "c1", "main")
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, c := range r.Commits {
		subjects = append(subjects, c.Subject)
	}
	// The first-parent history: the side branch's commit is not in it.
	if got := strings.Join(subjects, ", "); got != "c2, c3, c4 merge side" || r.Good.Subject != "c1" || r.Bad.Subject != "c4 merge side" {
		t.Errorf("range %s (GOOD %q, BAD %q), want c2, c3, c4 merge side", got, r.Good.Subject, r.Bad.Subject)
	}
	for _, tc := range []struct {
		name, good, bad, want string
	}{
		{"unknown GOOD", "v9", "main", "GOOD v9: ref v9: no such commit in "},
		{"unknown BAD", "c1", "nope", "BAD nope: ref nope: no such commit in "},
		{"swapped", "main", "c1", "GOOD main ("},
		{"same commit", "main", "main", "GOOD main and BAD main are the same commit ("},
		{"GOOD on a side branch", "s1", "main", "GOOD s1 ("},
		{"a GOOD that is not related", "s1", "main~1", "is not an ancestor of BAD main~1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveRange(ctx, dir, tc.good, tc.bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ResolveRange(%s, %s) = %v, want one line containing %q", tc.good, tc.bad, err, tc.want)
			}
		})
	}
	if _, err := ResolveRange(ctx, dir, "s1", "main"); err == nil || !strings.Contains(err.Error(), "is not on the first-parent history of BAD main") {
		t.Errorf("side-branch GOOD: %v", err)
	}
	if _, err := ResolveRange(ctx, dir, "main", "c1"); err == nil || !strings.Contains(err.Error(), "is not an ancestor of BAD c1") {
		t.Errorf("swapped: %v", err)
	}
}
