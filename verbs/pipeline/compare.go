package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
)

// CompareRequest is the comparison of one package's Go benchmarks at two commits
// (flipbench compare measures one per package).
type CompareRequest struct {
	// Root is the repository's top level, or the ledger root inside it that a saved page
	// goes to; Package the package, relative to the repository root ("./btree").
	Root, Package string
	// Base is the base commit; Candidate a ref or armbuild.WorktreeRef; Names say what
	// they are, for the title and a saved page.
	Base, Candidate string
	Names           compare.Names
	// Bench selects benchmarks as go test -bench does ("" for all); Benchtime is each
	// sample's -test.benchtime ("" for compare.DefaultBenchtime).
	Bench, Benchtime string
	// Roles give lanes roles by name (--primary, --guard, --control); unset, every lane
	// is a guard, or a primary on a saved page.
	Roles compare.Roles
	// Overrides are the flags' protocol.
	Overrides spec.Overrides
	// Save, when set, also writes the comparison as an experiment page.
	Save *SavePage
	// ProfileLanes and ProfileSamples say which lanes are profiled after the measured runs
	// (Job.ProfileLanes).
	ProfileLanes   string
	ProfileSamples int
	// MeasureIdentical measures identical base and candidate binaries too.
	MeasureIdentical bool
	// Results is the receipts folder; Command the command line recorded in the plan and
	// on a saved page.
	Results string
	Command []string
}

// SavePage is the experiment page a comparison is saved as (compare --save NNN).
type SavePage struct {
	// ID is the experiment number; Title the page's title ("" for the comparison's).
	ID    int
	Title string
	// Path is the page's path relative to Root (experiments/NNN-slug.md), which must not
	// exist; Command is the command line the page records.
	Path    string
	Command string
}

// Compare runs the comparison of one package: it builds the benchmarks at both commits,
// lists the benchmarks both binaries have (compare.Select), gives them their roles,
// writes the saved page (Save) once the lanes are known, and measures them in rounds
// until each is decided (compare.Pending). Notes and the chosen lanes go to
// opts.Events' Note. The result carries the analysed receipt; with identical binaries it
// has the built arms and nothing is measured.
func Compare(ctx context.Context, req CompareRequest, opts Options) (*Result, error) {
	co := compare.Options{Package: req.Package, Base: req.Base, Candidate: req.Candidate, Benchtime: req.Benchtime,
		Title: CompareTitle(req.Package, req.Names), Date: opts.Clock.Now().UTC().Format(time.DateOnly)}
	role := spec.RoleGuard
	if sp := req.Save; sp != nil {
		role, co.ID = spec.RolePrimary, sp.ID
		if sp.Title != "" {
			co.Title = sp.Title
		}
	}
	e := compare.Experiment(co)
	ov, placed := PlaceLanes(e.Protocol.CPUs, compare.Overrides(e, req.Overrides))
	if placed != "" {
		note(opts, "%s", placed)
	}
	job := Job{Spec: e, Root: req.Root, Label: compare.Label, Results: req.Results, Command: req.Command,
		Pending: compare.Pending, ProfileLanes: req.ProfileLanes, ProfileSamples: req.ProfileSamples,
		SkipIdentical: !req.MeasureIdentical, Layouts: LayoutsOf(e, ov)}
	job.Select = func(ctx context.Context, st harness.Starter, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
		return compareLanes(ctx, st, req, opts, e, ov, role, arms)
	}
	if req.Save != nil {
		job.Page = req.Save.Path
	}
	return Run(ctx, job, opts)
}

// CompareTitle is a comparison's title, unless a saved page gives its own: "compare
// ./btree: the working tree (...) against main (merge base ...)".
func CompareTitle(pkg string, names compare.Names) string {
	return "compare " + pkg + ": " + names.Cand + " against " + names.Base
}

// compareLanes chooses a comparison's lanes once its arms are built: the benchmarks both
// binaries list, with the request's roles; it notes them and writes the saved page.
func compareLanes(ctx context.Context, st harness.Starter, req CompareRequest, opts Options, e *spec.Experiment, ov spec.Overrides, role spec.Role, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
	exp, res, notes, err := compare.Select(ctx, st, e, arms, req.Bench, role, ov)
	for _, n := range notes {
		note(opts, "note: %s", n)
	}
	if err != nil {
		return nil, spec.Resolved{}, err
	}
	if req.Roles.Set() {
		if exp, res, err = assignRoles(exp, req.Roles, ov); err != nil {
			return nil, spec.Resolved{}, err
		}
	}
	note(opts, "%s in %s: %s", human.Count(len(res.Lanes), "benchmark", "benchmarks"), req.Package, LaneNames(res.Lanes))
	if sp := req.Save; sp != nil {
		in := compare.PageInput{Command: sp.Command, Names: req.Names, Bench: req.Bench}
		if in.CandRef, in.CandPatch, err = savedCandidate(ctx, req.Root, exp, arms); err != nil {
			return nil, spec.Resolved{}, err
		}
		path := filepath.Join(req.Root, filepath.FromSlash(sp.Path))
		if err := writeNewFile(path, compare.Page(exp, res, in)); err != nil {
			return nil, spec.Resolved{}, err
		}
		note(opts, "wrote %s; when the run is done, flipbench finalize %d fills in its results", shortPath(path), sp.ID)
	}
	return exp, res, nil
}

// assignRoles gives the lanes of a comparison the roles of --primary, --guard and
// --control (the rest secondary) and resolves the protocol again.
func assignRoles(exp *spec.Experiment, roles compare.Roles, ov spec.Overrides) (*spec.Experiment, spec.Resolved, error) {
	lanes, err := roles.Apply(exp.Lanes)
	if err != nil {
		return nil, spec.Resolved{}, &RequestError{Err: err}
	}
	out := *exp
	out.Lanes = lanes
	res, err := out.Resolve(ov)
	if err != nil {
		return nil, spec.Resolved{}, err
	}
	return &out, res, nil
}

// writeNewFile writes a file that must not exist yet, creating its folder.
func writeNewFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// savedCandidate says what a saved page's cand arm is built from: the commit the run
// measured, and for a working tree with changes those changes, kept as a patch in the
// experiment's archive folder, so flipbench ab NNN rebuilds what was measured.
func savedCandidate(ctx context.Context, root string, exp *spec.Experiment, arms []receipt.Arm) (ref, patch string, err error) {
	var cand receipt.Arm
	for _, a := range arms {
		if a.Name == compare.CandArm {
			cand = a
		}
	}
	if cand.Commit == "" {
		return "", "", fmt.Errorf("--save: arm %s has no commit to name", compare.CandArm)
	}
	for _, a := range exp.Arms {
		if a.Name == compare.CandArm && a.Ref != armbuild.WorktreeRef {
			return cand.Commit, "", nil
		}
	}
	patch, head, err := armbuild.ArchiveWorktree(ctx, armbuild.WorktreeArchive{Root: root, Dir: armbuild.ArchiveDir(exp), Experiment: exp.ID,
		Arm: compare.CandArm, DiffSHA256: cand.DiffSHA256})
	if err != nil {
		return "", "", fmt.Errorf("--save: %w", err)
	}
	if head != cand.Commit {
		return "", "", fmt.Errorf("--save: HEAD moved to %s after arm %s was built at %s: save it again", receipt.ShortHash(head), compare.CandArm, receipt.ShortHash(cand.Commit))
	}
	return head, patch, nil
}
