package armbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// WorktreeRef is the ref of an arm built from the repository's working tree as it is now,
// uncommitted changes included (`ref: WORKTREE`).
const WorktreeRef = "WORKTREE"

// DotDir is the folder at the repository root that holds flipbench's worktrees and build
// cache. It carries its own .gitignore ("*"), so git status stays clean.
const DotDir = ".flipbench"

// cleanupTimeout bounds the removal of worktrees, which runs even after an interrupt.
const cleanupTimeout = time.Minute

// repo is the git repository holding the ledger root. Every git command runs through
// repo.git, with hooks off and no optional locks, so that building arms never runs the
// user's hooks nor rewrites their index.
type repo struct {
	top string // the work tree root: git rev-parse --show-toplevel of the ledger root
	rel string // the ledger root relative to top, slash-separated; "." at the top
	dot string // top/.flipbench
}

// openRepo finds the repository that holds the ledger root.
func openRepo(ctx context.Context, root string) (*repo, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	out, err := run(ctx, command{Dir: abs, Args: []string{"git", "rev-parse", "--show-toplevel"}})
	if err != nil {
		var ce *CmdError
		if errors.As(err, &ce) && !interrupted(err) {
			return nil, fmt.Errorf("arms with ref need the ledger root %s inside a git repository: %s", root, ce.FirstLine())
		}
		return nil, err
	}
	top := strings.TrimSpace(string(out))
	realTop, err1 := filepath.EvalSymlinks(top)
	realRoot, err2 := filepath.EvalSymlinks(abs)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("resolving %s inside %s: %v", root, top, errors.Join(err1, err2))
	}
	rel, err := filepath.Rel(realTop, realRoot)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("ledger root %s is not inside its repository %s", root, top)
	}
	return &repo{top: realTop, rel: filepath.ToSlash(rel), dot: filepath.Join(realTop, DotDir)}, nil
}

// git runs a git command at the repository root.
func (r *repo) git(ctx context.Context, args ...string) ([]byte, error) {
	return r.gitIn(ctx, r.top, nil, nil, args...)
}

// gitIn runs a git command in dir (the repository or one of its worktrees) with extra
// environment and stdin. Git commands are short and local, and one killed half-way (a
// worktree add) can leave records that git worktree prune does not clear, so they are not
// cancelled: they finish, and the caller checks ctx between steps.
func (r *repo) gitIn(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	ctx = context.WithoutCancel(ctx)
	argv := append([]string{"git", "-c", "core.hooksPath=/dev/null"}, args...)
	env = append([]string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0"}, env...)
	return run(ctx, command{Dir: dir, Args: argv, Env: env, Stdin: stdin})
}

// MergeBase returns the commit where ref and candidate diverge, in the repository that
// holds the ledger root: a gate compares a change with what it was built on, not with
// whatever ref has moved on to since.
func MergeBase(ctx context.Context, root, ref, candidate string) (string, error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return "", err
	}
	for _, x := range []string{ref, candidate} {
		if _, err := r.commit(ctx, x); err != nil {
			return "", err
		}
	}
	out, err := r.git(ctx, "merge-base", "--end-of-options", ref, candidate)
	if err != nil {
		return "", fmt.Errorf("git merge-base %s %s: %w", ref, candidate, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// commit resolves ref to a full commit hash.
func (r *repo) commit(ctx context.Context, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("ref %q: not a valid ref", ref)
	}
	out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		if interrupted(err) {
			return "", err
		}
		return "", fmt.Errorf("ref %s: no such commit in %s", ref, r.top)
	}
	return strings.TrimSpace(string(out)), nil
}

// repoPath turns a path relative to the ledger root ("./lanes/x") into a path relative to
// the repository root ("perf/lanes/x"), refusing paths that leave the repository.
func (r *repo) repoPath(p string) (string, error) {
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("%s: must be relative to the ledger root", p)
	}
	q := path.Clean(path.Join(r.rel, filepath.ToSlash(p)))
	if q == ".." || strings.HasPrefix(q, "../") {
		return "", fmt.Errorf("%s: leaves the repository", p)
	}
	return q, nil
}

// ensureDot creates .flipbench/ with its .gitignore, and the worktrees and cache folders.
func (r *repo) ensureDot() error {
	for _, d := range []string{r.dot, filepath.Join(r.dot, "worktrees"), filepath.Join(r.dot, "cache"), filepath.Join(r.dot, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	ign := filepath.Join(r.dot, ".gitignore")
	if b, err := os.ReadFile(ign); err == nil && string(b) == "*\n" {
		return nil
	}
	return os.WriteFile(ign, []byte("*\n"), 0o644)
}

// ownedPrefix starts the name of a temporary folder (a worktree, a build's output, an
// index): what it is for, the owning process and (from os.MkdirTemp) a random part, so
// that a later run can tell the leftovers of a killed process from a live one's.
func ownedPrefix(what string) string { return fmt.Sprintf("%s-%d-", what, os.Getpid()) }

// addWorktree checks out commit, detached, in a new worktree under .flipbench/worktrees.
func (r *repo) addWorktree(ctx context.Context, arm, commit string) (string, error) {
	dir, err := os.MkdirTemp(filepath.Join(r.dot, "worktrees"), ownedPrefix(arm))
	if err != nil {
		return "", err
	}
	if _, err := r.git(ctx, "worktree", "add", "--detach", "--quiet", dir, commit); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("creating a worktree at %.12s: %w", commit, err)
	}
	return dir, nil
}

// removeWorktrees removes worktrees and prunes their records. It uses a fresh context, so
// that it still runs after ctx was cancelled (Ctrl-C).
func (r *repo) removeWorktrees(ctx context.Context, dirs []string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for _, d := range dirs {
		if _, err := r.git(ctx, "worktree", "remove", "--force", "--force", d); err != nil {
			if _, statErr := os.Stat(d); statErr == nil {
				errs = append(errs, err)
			}
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := r.git(ctx, "worktree", "prune"); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing worktrees: %w", err)
	}
	return nil
}

// removeStale removes what flipbench processes that no longer exist (killed with
// SIGKILL, or a machine that went down mid-build) left behind: worktrees, unfinished
// builds in the cache, temporary indexes.
func (r *repo) removeStale(ctx context.Context) error {
	var stale []string
	for _, sub := range []string{"worktrees", "cache", "tmp"} {
		entries, err := os.ReadDir(filepath.Join(r.dot, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if sub == "cache" && !strings.HasPrefix(e.Name(), "tmp-") {
				continue // a finished build
			}
			p := filepath.Join(r.dot, sub, e.Name())
			if pid, ok := ownerPID(e.Name()); ok && !alive(pid) {
				if sub == "worktrees" {
					stale = append(stale, p)
				} else if err := os.RemoveAll(p); err != nil {
					return err
				}
			}
		}
	}
	if len(stale) == 0 {
		return nil
	}
	return r.removeWorktrees(ctx, stale)
}

// ownerPID reads the owning process id out of a temporary folder's name
// ("cand-4242-123456", see ownedPrefix).
func ownerPID(name string) (int, bool) {
	parts := strings.Split(name, "-")
	if len(parts) < 3 {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	return pid, err == nil && pid > 0
}

// alive reports whether a process exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// OutputDirs returns the folders flipbench writes at the ledger root: the experiment
// pages, the receipts and the archived patches. They are records, not code: the working tree's snapshot and the
// dirty check leave them out, as they leave out DotDir, the build folder.
func OutputDirs() []string { return []string{"experiments", "results", "archive"} }

// codePathspec is the git pathspec of the repository's code: everything but OutputDirs
// at the ledger root and DotDir. A folder git ignores already is not named (git add
// refuses a pathspec that names an ignored path, even to exclude it).
func (r *repo) codePathspec(ctx context.Context) []string {
	pathspec := []string{":/"}
	for _, d := range append([]string{DotDir}, OutputDirs()...) {
		p := d
		if d != DotDir {
			p, _ = r.repoPath(d)
		}
		if _, err := r.git(ctx, "check-ignore", "-q", "--no-index", p+"/"); err == nil {
			continue
		}
		pathspec = append(pathspec, ":(top,exclude)"+p)
	}
	return pathspec
}

// Snapshot captures the working tree of the repository at root as a WORKTREE arm does:
// the HEAD commit and the binary diff from it to the working tree (empty when the tree is
// clean), flipbench's outputs left out. Its SHA-256 is the arm's DiffSHA256.
func Snapshot(ctx context.Context, root string) (head string, diff []byte, err error) {
	r, err := openRepo(ctx, root)
	if err != nil {
		return "", nil, err
	}
	if err := r.ensureDot(); err != nil {
		return "", nil, err
	}
	return r.snapshot(ctx)
}

// snapshot captures the working tree as it is now, without touching the user's index:
// the current HEAD commit and the binary diff from it to the working tree, untracked files
// included (ignored ones not), the ledger's OutputDirs left out (they are records, not
// code, and change with every run).
func (r *repo) snapshot(ctx context.Context) (head string, diff []byte, err error) {
	head, err = r.commit(ctx, "HEAD")
	if err != nil {
		return "", nil, fmt.Errorf("ref %s: the repository has no commit yet", WorktreeRef)
	}
	tmp, err := os.MkdirTemp(filepath.Join(r.dot, "tmp"), ownedPrefix("index"))
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	// Start from a copy of the user's index: its stat data spares rehashing every file.
	if out, err := r.git(ctx, "rev-parse", "--path-format=absolute", "--git-path", "index"); err == nil {
		if b, err := os.ReadFile(strings.TrimSpace(string(out))); err == nil {
			if err := os.WriteFile(index, b, 0o644); err != nil {
				return "", nil, err
			}
		}
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	pathspec := r.codePathspec(ctx)
	if _, err := r.gitIn(ctx, r.top, env, nil, append([]string{"add", "--all", "--"}, pathspec...)...); err != nil {
		return "", nil, fmt.Errorf("ref %s: recording the working tree: %w", WorktreeRef, err)
	}
	out, err := r.gitIn(ctx, r.top, env, nil, "write-tree")
	if err != nil {
		return "", nil, fmt.Errorf("ref %s: recording the working tree: %w", WorktreeRef, err)
	}
	tree := strings.TrimSpace(string(out))
	diff, err = r.git(ctx, append([]string{"diff-tree", "-p", "--binary", "--full-index", head, tree, "--"}, pathspec...)...)
	if err != nil {
		return "", nil, fmt.Errorf("ref %s: diffing the working tree: %w", WorktreeRef, err)
	}
	return head, diff, nil
}

// apply applies a patch file in a worktree with git apply. On failure it returns the
// first line git printed.
func (r *repo) apply(ctx context.Context, wt, patchFile string, index bool) error {
	args := []string{"apply", "--binary", "--whitespace=nowarn"}
	if index {
		args = append(args, "--index")
	}
	_, err := r.gitIn(ctx, wt, nil, nil, append(args, patchFile)...)
	if err != nil && !interrupted(err) {
		var ce *CmdError
		if errors.As(err, &ce) {
			return errors.New(ce.FirstLine())
		}
	}
	return err
}

// treeEntry is one line of git ls-tree.
type treeEntry struct {
	Mode, Type, Object, Path string
}

// lsTree lists the entries under paths (relative to the repository root) at commit,
// recursively.
func (r *repo) lsTree(ctx context.Context, commit string, paths ...string) ([]treeEntry, error) {
	out, err := r.git(ctx, append([]string{"ls-tree", "-r", "-z", "--full-tree", commit, "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	return parseLsTree(out)
}

// parseLsTree parses git ls-tree -z output: "mode type object\tpath\x00".
func parseLsTree(out []byte) ([]treeEntry, error) {
	var entries []treeEntry
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("unexpected git ls-tree output %q", rec)
		}
		entries = append(entries, treeEntry{Mode: f[0], Type: f[1], Object: f[2], Path: string(p)})
	}
	return entries, nil
}
