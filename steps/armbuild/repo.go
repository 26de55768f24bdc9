package armbuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
// changes to tracked files, or untracked files git does not ignore, outside flipbench's
// own outputs (OutputDirs at root, DotDir): the same files the snapshot of a WORKTREE arm
// records, so the table's header and the receipt agree.
func Dirty(ctx context.Context, root string) (bool, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return false, err
	}
	out, err := r.git(ctx, append([]string{"status", "--porcelain", "--"}, r.codePathspec(ctx)...)...)
	if err != nil {
		return false, err
	}
	return len(strings.TrimSpace(string(out))) > 0, nil
}

// Ignored reports whether git ignores path (a file or folder in the repository at root).
func Ignored(ctx context.Context, root, path string) (bool, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return false, err
	}
	_, err = r.git(ctx, "check-ignore", "-q", "--no-index", path)
	if err == nil {
		return true, nil
	}
	var ce *CmdError
	var ee *exec.ExitError
	if errors.As(err, &ce) && errors.As(ce.Err, &ee) && ee.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}

// Uncommitted reports whether the file at path (in the repository at root) has changes
// git has not committed: untracked, added or modified.
func Uncommitted(ctx context.Context, root, path string) (bool, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return false, err
	}
	out, err := r.git(ctx, "status", "--porcelain", "--", path)
	return len(strings.TrimSpace(string(out))) > 0, err
}

// Untracked reports whether path (a folder in the repository at root) exists, has no
// file git tracks and is not ignored: a folder git status lists as untracked.
func Untracked(ctx context.Context, root, path string) (bool, error) {

	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return false, nil
	}
	ignored, err := Ignored(ctx, root, path)
	if err != nil || ignored {
		return false, err
	}
	r, err := openRepo(ctx, root)
	if err != nil {
		return false, err
	}
	out, err := r.git(ctx, "ls-files", "--", path)
	if err != nil {
		return false, err
	}
	return len(strings.TrimSpace(string(out))) == 0, nil
}
