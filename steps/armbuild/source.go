package armbuild

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/model/spec"
)

// harnessSource is the one harness source that is copied over every git arm, so that all
// arms run the same lanes and only the code under test differs.
//
// What counts as harness source:
//   - gotest: the *_test.go files directly in harness.package and its testdata/ folder.
//     The package's other files are code under test and come from the arm, so a package
//     that holds both the code and its benchmarks works.
//   - exec: the whole harness.package folder (the lane program's source), when given.
//   - both: every harness.paths entry, whole.
type harnessSource struct {
	Ref    string // as written (default HEAD)
	Commit string
	// Rules say what is replaced in every arm; Files is what replaces it.
	Rules []sourceRule
	Files []treeEntry
	// SHA256 identifies the source: a hash of the rules and of every file's path, mode
	// and blob id.
	SHA256 string
	// Dir is harness.package relative to the repository root, or the ledger root's own
	// folder when there is none; it is where {src} points in a worktree.
	Dir string
}

// sourceRule is one part of the harness source: a folder (or file) relative to the
// repository root, taken whole or only its Go test files.
type sourceRule struct {
	Path      string
	TestsOnly bool   // only *_test.go directly in Path, and Path/testdata
	Field     string // the spec field it comes from: harness.package, harness.paths[i]
	Written   string // the path as written in the spec
}

// Covers reports whether the repository path p belongs to the rule.
func (r sourceRule) Covers(p string) bool {
	if !r.TestsOnly {
		return p == r.Path || r.Path == "." || strings.HasPrefix(p, r.Path+"/")
	}
	rel, ok := strings.CutPrefix(p, r.Path+"/")
	if r.Path == "." {
		rel, ok = p, true
	}
	if !ok {
		return false
	}
	return rel == "testdata" || strings.HasPrefix(rel, "testdata/") ||
		!strings.Contains(rel, "/") && strings.HasSuffix(rel, "_test.go")
}

// sourceRules derives the harness source rules from the spec, with paths relative to the
// repository root.
func sourceRules(exp *spec.Experiment, r *repo) ([]sourceRule, string, error) {
	h := exp.Harness
	kind, err := h.LaneKind()
	if err != nil {
		return nil, "", specError(exp, "harness.kind", err.Error())
	}
	build, _ := kind.Build(h.ForKind())
	var rules []sourceRule
	dir := r.rel
	if h.Package != "" {
		p, err := r.repoPath(h.Package)
		if err != nil {
			return nil, "", specError(exp, "harness.package", err.Error())
		}
		dir = p
		rules = append(rules, sourceRule{Path: p, TestsOnly: build.TestsOnly, Field: "harness.package", Written: h.Package})
	}
	for i, hp := range h.Paths {
		field := fmt.Sprintf("harness.paths[%d]", i)
		p, err := r.repoPath(hp)
		if err != nil {
			return nil, "", specError(exp, field, err.Error())
		}
		rules = append(rules, sourceRule{Path: p, Field: field, Written: hp})
	}
	return rules, dir, nil
}

// loadHarnessSource lists the harness source at the harness ref. A harness package or path
// that is not there is an error naming the field.
func loadHarnessSource(ctx context.Context, r *repo, exp *spec.Experiment) (*harnessSource, error) {
	h := exp.Harness
	src := &harnessSource{Ref: h.Ref}
	if src.Ref == "" {
		src.Ref = "HEAD"
	}
	if src.Ref == WorktreeRef {
		return nil, specError(exp, "harness.ref", "WORKTREE is for arms only; the harness source must come from a commit (commit it, or name a ref)")
	}
	rules, dir, err := sourceRules(exp, r)
	if err != nil {
		return nil, err
	}
	src.Rules, src.Dir = rules, dir
	commit, err := r.commit(ctx, src.Ref)
	if err != nil {
		if interrupted(err) {
			return nil, err
		}
		return nil, specError(exp, "harness.ref", err.Error())
	}
	src.Commit = commit
	for _, rule := range rules {
		entries, err := r.lsTree(ctx, commit, rule.Path)
		if err != nil {
			return nil, fmt.Errorf("listing the harness source: %w", err)
		}
		n := 0
		for _, e := range entries {
			if e.Type == "blob" && rule.Covers(e.Path) {
				src.Files = append(src.Files, e)
				n++
			}
		}
		written := rule.Written
		switch {
		case len(entries) == 0:
			return nil, specError(exp, rule.Field, fmt.Sprintf("%s: not found at %s (%.12s)", written, src.Ref, commit))
		case n == 0 && rule.TestsOnly:
			return nil, specError(exp, rule.Field, fmt.Sprintf("%s: no _test.go files at %s (%.12s); the gotest lanes are Benchmark functions in test files", written, src.Ref, commit))
		}
	}
	slices.SortFunc(src.Files, func(a, b treeEntry) int { return strings.Compare(a.Path, b.Path) })
	src.Files = slices.CompactFunc(src.Files, func(a, b treeEntry) bool { return a.Path == b.Path })
	src.SHA256 = hashSource(rules, src.Files)
	return src, nil
}

// hashSource identifies a harness source by its rules and files (path, mode, blob id), so
// that the same files at another commit hash the same.
func hashSource(rules []sourceRule, files []treeEntry) string {
	h := sha256.New()
	for _, r := range rules {
		fmt.Fprintf(h, "rule %s tests-only=%v\n", r.Path, r.TestsOnly)
	}
	for _, f := range files {
		fmt.Fprintf(h, "%s %s %s\t%s\n", f.Mode, f.Type, f.Object, f.Path)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// install replaces the harness source in the worktree wt with the harness ref's.
func (s *harnessSource) install(ctx context.Context, r *repo, wt string) error {
	if err := clearSource(wt, s.Rules); err != nil {
		return fmt.Errorf("clearing the arm's harness source: %w", err)
	}
	if len(s.Files) == 0 {
		return nil
	}
	var in strings.Builder
	for _, f := range s.Files {
		in.WriteString(f.Object + "\n")
	}
	out, err := r.gitIn(ctx, r.top, nil, strings.NewReader(in.String()), "cat-file", "--batch")
	if err != nil {
		return fmt.Errorf("reading the harness source: %w", err)
	}
	br := bufio.NewReader(strings.NewReader(string(out)))
	for _, f := range s.Files {
		data, err := readBatchObject(br, f.Object)
		if err != nil {
			return fmt.Errorf("reading the harness source: %w", err)
		}
		if err := writeEntry(filepath.Join(wt, filepath.FromSlash(f.Path)), f.Mode, data); err != nil {
			return err
		}
	}
	return nil
}

// readBatchObject reads one object of git cat-file --batch output.
func readBatchObject(br *bufio.Reader, want string) ([]byte, error) {
	header, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("object %s: %v", want, err)
	}
	f := strings.Fields(header)
	if len(f) != 3 || f[0] != want {
		return nil, fmt.Errorf("object %s: unexpected header %q", want, strings.TrimSpace(header))
	}
	size, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, fmt.Errorf("object %s: bad size %q", want, f[2])
	}
	data := make([]byte, size+1) // content and a newline
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("object %s: %v", want, err)
	}
	return data[:size], nil
}

// clearSource removes, in a worktree, what the harness source replaces.
func clearSource(wt string, rules []sourceRule) error {
	for _, rule := range rules {
		dir := filepath.Join(wt, filepath.FromSlash(rule.Path))
		if !rule.TestsOnly {
			if rule.Path == "." {
				return fmt.Errorf("refusing to replace the whole repository with the harness source")
			}
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, "testdata")); err != nil {
			return err
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		for _, e := range entries {
			if !e.IsDir() && rule.Covers(path.Join(rule.Path, e.Name())) {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeEntry writes one file of the harness source with its git mode.
func writeEntry(p, mode string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	switch mode {
	case "120000":
		return os.Symlink(string(data), p)
	case "100755":
		return os.WriteFile(p, data, 0o755)
	default:
		return os.WriteFile(p, data, 0o644)
	}
}

// specError places a problem at a field of the experiment page.
func specError(exp *spec.Experiment, field, msg string) error {
	line := 0
	for f := field; f != "" && line == 0; {
		line = exp.Lines[f]
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return &spec.Error{File: exp.Path, Line: line, Field: field, Msg: msg}
}
