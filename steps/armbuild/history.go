package armbuild

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// HistoryCommit is one commit of a first-parent history: its full hash and the first
// line of its message.
type HistoryCommit struct {
	Hash, Subject string
}

// IsAncestor reports whether commit a is an ancestor of commit b (or b itself), as git
// merge-base --is-ancestor says.
func IsAncestor(ctx context.Context, root, a, b string) (bool, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return false, err
	}
	_, err = r.git(ctx, "merge-base", "--is-ancestor", "--end-of-options", a, b)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false, nil
	}
	return false, err
}

// FirstParents returns the commits of the first-parent history from commit from
// (exclusive) to commit to (inclusive), oldest first: git rev-list --first-parent
// --reverse from..to, with each commit's subject.
func FirstParents(ctx context.Context, root, from, to string) ([]HistoryCommit, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return nil, err
	}
	out, err := r.git(ctx, "log", "--first-parent", "--reverse", "--format=%H %s", "--end-of-options", from+".."+to)
	if err != nil {
		return nil, fmt.Errorf("listing the first-parent history %s..%s: %w", from, to, err)
	}
	var cs []HistoryCommit
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		hash, subject, _ := strings.Cut(line, " ")
		cs = append(cs, HistoryCommit{Hash: hash, Subject: subject})
	}
	return cs, nil
}

// FirstParent returns the first parent of commit c, or "" for a root commit.
func FirstParent(ctx context.Context, root, c string) (string, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return "", err
	}
	out, err := r.git(ctx, "rev-list", "--parents", "-n", "1", "--end-of-options", c)
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return "", nil
	}
	return f[1], nil
}

// Subject returns the first line of commit c's message.
func Subject(ctx context.Context, root, c string) (string, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return "", err
	}
	out, err := r.git(ctx, "log", "-n", "1", "--format=%s", "--end-of-options", c)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
