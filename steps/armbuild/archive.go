package armbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/internal/within"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// ArchiveREADME is the file name of an archive folder's README.
const ArchiveREADME = "README.md"

// ArchiveDir returns an experiment's archive folder, relative to the ledger root: the
// spec's archive field, or archive/exp-NNN.
func ArchiveDir(exp *spec.Experiment) string {
	if exp.Archive != "" {
		return filepath.Clean(exp.Archive)
	}
	return fmt.Sprintf("archive/exp-%03d", exp.ID)
}

// RestoreBranch is the branch Restore creates for an archived arm: exp-NNN-ARM.
func RestoreBranch(id int, arm string) string { return fmt.Sprintf("exp-%03d-%s", id, arm) }

// ArchiveOptions says what Archive stores.
type ArchiveOptions struct {
	// Root is the ledger root; Dir the archive folder relative to it (see ArchiveDir).
	Root, Dir string
	// Experiment is the experiment number, recorded in the patch and README.
	Experiment int
	// Arm names the patch: Dir/Arm.patch.
	Arm string
	// Branch is the prototype: a branch (or any commit) holding the candidate's code.
	Branch string
	// BaseRef is the base arm's ref; the patch is Branch against its merge base with it.
	// WORKTREE means HEAD.
	BaseRef string
	// Force replaces an existing patch with different content.
	Force bool
}

// Archived describes a patch written by Archive.
type Archived struct {
	// Patch and README are the files written, relative to the ledger root.
	Patch, README string
	// BaseCommit is the merge base the patch applies to; Tip the branch's commit.
	BaseCommit, Tip string
	Files           []FileChange
	// Unchanged is true when the patch was already archived with the same content.
	Unchanged bool
}

// Archive writes Branch as a patch against its merge base with BaseRef
// (git diff --binary MERGEBASE BRANCH), preceded by a preamble that records the base
// commit, and regenerates the folder's README from every patch in it. It never touches
// the user's checkout.
func Archive(ctx context.Context, o ArchiveOptions) (Archived, error) {
	if !regexp.MustCompile(spec.NamePattern).MatchString(o.Arm) {
		return Archived{}, fmt.Errorf("arm name %q: must match %s", o.Arm, spec.NamePattern)
	}
	r, err := openRepo(ctx, o.Root)
	if err != nil {
		return Archived{}, err
	}
	baseRef := o.BaseRef
	if baseRef == "" || baseRef == WorktreeRef {
		baseRef = "HEAD"
	}
	base, err := r.commit(ctx, baseRef)
	if err != nil {
		return Archived{}, fmt.Errorf("base %w", err)
	}
	tip, err := r.commit(ctx, o.Branch)
	if err != nil {
		return Archived{}, fmt.Errorf("branch %w", err)
	}
	out, err := r.git(ctx, "merge-base", base, tip)
	if err != nil {
		if interrupted(err) {
			return Archived{}, err
		}
		return Archived{}, fmt.Errorf("branch %s has no common history with the base ref %s", o.Branch, baseRef)
	}
	mb := strings.TrimSpace(string(out))
	diff, err := r.git(ctx, "diff-tree", "-p", "--binary", "--full-index", mb, tip)
	if err != nil {
		return Archived{}, fmt.Errorf("diffing %s against %s: %w", o.Branch, receipt.ShortHash(mb), err)
	}
	if len(bytes.TrimSpace(diff)) == 0 {
		return Archived{}, fmt.Errorf("branch %s (%s) has no changes against its merge base %s with %s", o.Branch, receipt.ShortHash(tip), receipt.ShortHash(mb), baseRef)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "flipbench-archive: experiment %03d, arm %s\n", o.Experiment, o.Arm)
	fmt.Fprintf(&b, "branch: %s\n", o.Branch)
	fmt.Fprintf(&b, "tip: %s\n", tip)
	fmt.Fprintf(&b, "base-ref: %s\n", baseRef)
	fmt.Fprintf(&b, "base-commit: %s\n\n", mb)
	b.Write(diff)

	dir, err := under(o.Root, o.Dir)
	if err != nil {
		return Archived{}, err
	}
	patchRel := filepath.Join(o.Dir, o.Arm+".patch")
	patchAbs, err := under(o.Root, patchRel)
	if err != nil {
		return Archived{}, err
	}
	res := Archived{Patch: patchRel, README: filepath.Join(o.Dir, ArchiveREADME), BaseCommit: mb, Tip: tip,
		Files: ParsePatch(b.Bytes()).Files}
	if old, err := os.ReadFile(patchAbs); err == nil {
		switch {
		case bytes.Equal(old, b.Bytes()):
			res.Unchanged = true
		case !o.Force:
			return Archived{}, fmt.Errorf("%s exists with other content (archived from %s); give --force to replace it",
				patchRel, orUnknown(ParsePatch(old).Preamble["branch"]))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Archived{}, err
	}
	if !res.Unchanged {
		if err := os.WriteFile(patchAbs, b.Bytes(), 0o644); err != nil {
			return Archived{}, err
		}
	}
	if err := WriteArchiveREADME(o.Root, o.Dir, o.Experiment); err != nil {
		return Archived{}, err
	}
	return res, nil
}

// under resolves p, the archive folder or a file in it, against the ledger root, and
// refuses a path that leads out of it (through "..", an absolute path, or a symbolic
// link): an archive is part of the ledger, and archiving must never write elsewhere.
func under(root, p string) (string, error) {
	abs, err := within.Path(root, p)
	if err != nil {
		return "", fmt.Errorf("archive folder: %w; the archive field names a folder inside the ledger", err)
	}
	return abs, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown branch"
	}
	return s
}

// WriteArchiveREADME regenerates the README.md of an archive folder (dir, relative to the
// ledger root) from the patches in it.
func WriteArchiveREADME(root, dir string, id int) error {
	abs, err := under(root, dir)
	if err != nil {
		return err
	}
	matches, err := filepath.Glob(filepath.Join(abs, "*.patch"))
	if err != nil {
		return err
	}
	slices.Sort(matches)
	var patches []ArchivedPatch
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		patches = append(patches, ArchivedPatch{
			Arm:    strings.TrimSuffix(filepath.Base(m), ".patch"),
			File:   filepath.Base(m),
			SHA256: sha256Hex(data),
			Info:   ParsePatch(data),
		})
	}
	return os.WriteFile(filepath.Join(abs, ArchiveREADME), []byte(RenderArchiveREADME(id, filepath.ToSlash(dir), patches)), 0o644)
}

// ArchivedPatch is one patch of an archive folder, as the README describes it.
type ArchivedPatch struct {
	Arm, File, SHA256 string
	Info              PatchInfo
}

// RenderArchiveREADME renders the README of an archive folder; dir is the folder relative
// to the ledger root, as commands and specs name it.
func RenderArchiveREADME(id int, dir string, patches []ArchivedPatch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Archived prototypes of experiment %03d\n\n", id)
	b.WriteString("Each candidate is kept as a patch against the commit it was made from, so rejected\n")
	b.WriteString("code is kept without shipping it. This file is regenerated by `flipbench archive`\n")
	b.WriteString("from the patches in this folder; edit the experiment page, not this file.\n")
	rel := dir
	for _, p := range patches {
		info := p.Info
		base := info.BaseCommit
		fmt.Fprintf(&b, "\n## %s\n\n", p.Arm)
		fmt.Fprintf(&b, "- patch: `%s` (sha256 `%s`)\n", p.File, p.SHA256)
		if br := info.Preamble["branch"]; br != "" {
			fmt.Fprintf(&b, "- archived from branch `%s` at `%s`\n", br, orUnknown(info.Preamble["tip"]))
		}
		if base != "" {
			fmt.Fprintf(&b, "- applies to commit `%s`", base)
			if ref := info.Preamble["base-ref"]; ref != "" {
				fmt.Fprintf(&b, " (the merge base with the base arm's ref `%s`)", ref)
			}
			b.WriteString("\n")
		} else {
			b.WriteString("- applies to: not recorded in the patch\n")
		}
		fmt.Fprintf(&b, "- files touched (%d):\n", len(info.Files))
		for _, f := range info.Files {
			fmt.Fprintf(&b, "  - `%s`\n", f)
		}
		b.WriteString("- restore as a branch (your checkout is not touched):\n\n")
		fmt.Fprintf(&b, "      flipbench archive %d --restore %s    # creates branch %s\n\n", id, p.Arm, RestoreBranch(id, p.Arm))
		if base != "" {
			b.WriteString("  or by hand:\n\n")
			fmt.Fprintf(&b, "      git switch -c %s %s && git apply --index %s/%s && git commit -m 'exp %03d %s'\n\n",
				RestoreBranch(id, p.Arm), base, rel, p.File, id, p.Arm)
			fmt.Fprintf(&b, "- as an arm of the experiment: `%s: {ref: %s, patch: %s/%s}`\n", p.Arm, base, rel, p.File)
		}
	}
	return b.String()
}

// RestoreOptions says what Restore recreates.
type RestoreOptions struct {
	// Root is the ledger root; Dir the archive folder relative to it.
	Root, Dir string
	// Experiment is the experiment number; Arm the archived arm (Dir/Arm.patch).
	Experiment int
	Arm        string
	// Branch is the branch to create; empty means RestoreBranch(Experiment, Arm).
	Branch string
}

// Restored describes the branch Restore created.
type Restored struct {
	Branch, Commit, BaseCommit string
}

// Restore recreates an archived arm as a branch: a commit on top of the patch's base
// commit holding the patch. It works in a temporary worktree, so the user's checkout,
// index and current branch are not touched; an existing branch is never overwritten.
func Restore(ctx context.Context, o RestoreOptions) (res Restored, err error) {
	patchRel := filepath.Join(o.Dir, o.Arm+".patch")
	patchAbs, err := under(o.Root, patchRel)
	if err != nil {
		return Restored{}, err
	}
	data, err := os.ReadFile(patchAbs)
	if err != nil {
		return Restored{}, fmt.Errorf("archived arm %s: %w", o.Arm, err)
	}
	info := ParsePatch(data)
	if info.BaseCommit == "" {
		info.BaseCommit = readmeBase(patchAbs)
	}
	if info.BaseCommit == "" {
		return Restored{}, fmt.Errorf("neither %s nor the README beside it records the commit it applies to; apply it by hand with git apply", patchRel)
	}
	r, err := openRepo(ctx, o.Root)
	if err != nil {
		return Restored{}, err
	}
	base, err := r.commit(ctx, info.BaseCommit)
	if err != nil {
		if interrupted(err) {
			return Restored{}, err
		}
		return Restored{}, fmt.Errorf("%s applies to commit %s, which is not in this repository (fetch it first)", patchRel, receipt.ShortHash(info.BaseCommit))
	}
	branch := o.Branch
	if branch == "" {
		branch = RestoreBranch(o.Experiment, o.Arm)
	}
	if _, err := r.git(ctx, "check-ref-format", "--branch", branch); err != nil {
		return Restored{}, fmt.Errorf("branch %s: not a valid branch name", branch)
	}
	if out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		return Restored{}, fmt.Errorf("branch %s exists already (at %s); delete it (git branch -D %s) to restore again", branch, receipt.ShortHash(strings.TrimSpace(string(out))), branch)
	}
	if err := r.ensureDot(); err != nil {
		return Restored{}, err
	}
	wt, err := r.addWorktree(ctx, "restore-"+o.Arm, base)
	if err != nil {
		return Restored{}, err
	}
	defer func() {
		if cerr := r.removeWorktrees(ctx, []string{wt}); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := r.apply(ctx, wt, patchAbs, true); err != nil {
		if interrupted(err) {
			return Restored{}, err
		}
		return Restored{}, fmt.Errorf("patch %s does not apply to %s; %s: %v", patchRel, receipt.ShortHash(base), info.MadeAgainst(), err)
	}
	msg := fmt.Sprintf("exp %03d %s: restored from %s\n\nApplies to %s.", o.Experiment, o.Arm, filepath.ToSlash(patchRel), base)
	if br := info.Preamble["branch"]; br != "" {
		msg += fmt.Sprintf(" Archived from branch %s at %s.", br, orUnknown(info.Preamble["tip"]))
	}
	if _, err := r.gitIn(ctx, wt, nil, nil, "-c", "commit.gpgsign=false", "commit", "--quiet", "--no-verify", "-m", msg); err != nil {
		return Restored{}, fmt.Errorf("committing the restored patch: %w", err)
	}
	out, err := r.gitIn(ctx, wt, nil, nil, "rev-parse", "HEAD")
	if err != nil {
		return Restored{}, err
	}
	commit := strings.TrimSpace(string(out))
	if _, err := r.git(ctx, "branch", "--no-track", branch, commit); err != nil {
		var ce *CmdError
		if errors.As(err, &ce) {
			return Restored{}, fmt.Errorf("creating branch %s: %s", branch, ce.FirstLine())
		}
		return Restored{}, err
	}
	return Restored{Branch: branch, Commit: commit, BaseCommit: base}, nil
}
