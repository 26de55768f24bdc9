package armbuild

import (
	"context"
	"fmt"
	"strings"
)

// TopLevel returns the root of the git repository that holds dir (git rev-parse
// --show-toplevel), symbolic links resolved.
func TopLevel(ctx context.Context, dir string) (string, error) {
	r, err := openRepo(ctx, dir)
	if err != nil {
		return "", err
	}
	return r.top, nil
}

// DefaultBranch returns the branch a change in the repository at root goes into: the
// remote's default branch (origin/HEAD, e.g. origin/main) when the clone knows it, else
// the first of main, master and trunk that exists. It is an error when none does.
func DefaultBranch(ctx context.Context, root string) (string, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return "", err
	}
	if out, err := r.git(ctx, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); err == nil {
		if b := strings.TrimSpace(string(out)); b != "" {
			return b, nil
		}
	}
	for _, b := range []string{"main", "master", "trunk"} {
		if _, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+b); err == nil {
			return b, nil
		}
	}
	return "", fmt.Errorf("no default branch in %s (no origin/HEAD, main, master or trunk): name the base, as in flipbench compare BRANCH", r.top)
}

// Commit resolves ref to a full commit hash in the repository at root.
func Commit(ctx context.Context, root, ref string) (string, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return "", err
	}
	return r.commit(ctx, ref)
}

// Dirty reports whether the working tree of the repository at root has uncommitted
// changes to tracked files, or untracked files git does not ignore.
func Dirty(ctx context.Context, root string) (bool, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return false, err
	}
	out, err := r.git(ctx, "status", "--porcelain")
	if err != nil {
		return false, err
	}
	return len(strings.TrimSpace(string(out))) > 0, nil
}
