package bisect

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/verbs/pipeline"
)

// Label names a bisection step's receipts: results/<stamp>-exp000-bisect.
const Label = "bisect"

// Steps is what every measurer needs to run a step's job: where the repository and the
// receipts are, the protocol flags, and how jobs run.
type Steps struct {
	// Root is the repository root (or the ledger root of a page).
	Root string
	// Results is the receipts folder.
	Results string
	// Overrides change the protocol (--samples, --max-pairs, --budget).
	Overrides spec.Overrides
	// Command is the command line recorded in each receipt's plan.
	Command []string
	// Run runs a job; nil means pipeline.Run without a lock or progress.
	Run func(ctx context.Context, job pipeline.Job) (*pipeline.Result, error)
	// Note receives what the benchmark selection left out and why a commit was skipped;
	// nil drops it.
	Note func(string)
	// Clock dates the receipts, and is the pipeline's clock when Run is nil; nil is the
	// machine's.
	Clock clock.Clock
}

// PipelineMeasurer measures a pair as flipbench compare does: a gotest harness over one
// package with the base and cand arms built from the pair's commits (cached by tree),
// the benchmarks from HarnessRef in both arms, the sequential protocol until the pair's
// rule has what it needs, and a receipt under Results.
type PipelineMeasurer struct {
	Steps
	// Package is the benchmarks' package relative to Root.
	Package string
	// HarnessRef is the commit the benchmark functions come from (BAD's: every step runs
	// the same lanes).
	HarnessRef string
	// Bench selects the baseline's benchmarks (a go test -bench expression); later steps
	// run the followed lane alone.
	Bench string
	// Benchtime is the lanes' -test.benchtime ("" for compare.DefaultBenchtime).
	Benchtime string
}

// Measure compares p.Cand against p.Base.
func (m *PipelineMeasurer) Measure(ctx context.Context, p Pair) (Measurement, error) {
	e := compare.Experiment(compare.Options{Package: m.Package, Base: p.Base.Hash, Candidate: p.Cand.Hash, Benchtime: m.Benchtime,
		Title: fmt.Sprintf("bisect %s: %s against %s", m.Package, p.Cand.Short(), p.Base.Short()), Date: m.Clock.Now().UTC().Format(time.DateOnly)})
	e.Harness.Ref = m.HarnessRef
	bench := m.Bench
	if p.Lane != "" {
		bench = ExactBench(p.Lane)
	}
	job := m.job(e, spec.Resolved{}, p)
	ov, placed := pipeline.PlaceLanes(e.Protocol.CPUs, m.Overrides)
	if placed != "" {
		m.note(placed)
	}
	job.Layouts = pipeline.LayoutsOf(e, ov)
	job.Select = func(ctx context.Context, st harness.Starter, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
		exp, res, notes, err := compare.Select(ctx, st, e, arms, bench, spec.RoleGuard, ov)
		for _, n := range notes {
			m.note(n)
		}
		return exp, res, err
	}
	return m.measure(ctx, job)
}

// PageMeasurer measures a pair with an experiment page's harness and one of its lanes:
// the page's arms give way to base and cand built from the pair's commits (with the
// base arm's tags, ldflags, env and args), the lanes come from the page's harness.ref as
// in flipbench ab, and the protocol is the page's, run sequentially. The receipts are
// experiment 0's, so they are never taken for the page's own.
type PageMeasurer struct {
	Steps
	// Spec is the page.
	Spec *spec.Experiment
	// Lane is the page's lane to follow.
	Lane string
}

// Measure compares p.Cand against p.Base.
func (m *PageMeasurer) Measure(ctx context.Context, p Pair) (Measurement, error) {
	e := *m.Spec
	base := m.Spec.Base()
	e.ID, e.Incidence = 0, nil
	e.Title = fmt.Sprintf("bisect of experiment %d, lane %s: %s against %s", m.Spec.ID, m.Lane, p.Cand.Short(), p.Base.Short())
	e.Arms = []spec.Arm{gitArm(base, spec.BaseArm, p.Base.Hash), gitArm(base, compare.CandArm, p.Cand.Hash)}
	ov := m.Overrides
	ov.UntilDecided, ov.Lanes = true, "^"+regexp.QuoteMeta(m.Lane)+"$"
	res, err := e.Resolve(ov)
	if err != nil {
		return Measurement{}, err
	}
	return m.measure(ctx, m.job(&e, res, p))
}

// gitArm is arm a built from commit ref under another name.
func gitArm(a spec.Arm, name, ref string) spec.Arm {
	a.Name, a.Ref, a.Bin, a.Patch, a.Reference = name, ref, "", "", false
	return a
}

// job is the pipeline job of a step: the stopping rule of the pair, no profiles, no
// measurement of identical binaries, a build that reports a candidate that does not build.
func (m *Steps) job(e *spec.Experiment, res spec.Resolved, p Pair) pipeline.Job {
	return pipeline.Job{Spec: e, Root: m.Root, Resolved: res, Label: Label, Results: m.Results, Command: m.Command,
		SkipIdentical: true, Pending: pending(p), Build: m.buildOrSkip(p.Cand)}
}

// measure runs a step's job and reads every lane's effect from its receipt.
func (m *Steps) measure(ctx context.Context, job pipeline.Job) (Measurement, error) {
	run := m.Run
	if run == nil {
		run = func(ctx context.Context, job pipeline.Job) (*pipeline.Result, error) {
			return pipeline.Run(ctx, job, pipeline.Options{Clock: m.Clock})
		}
	}
	res, err := run(ctx, job)
	if err != nil {
		return Measurement{}, err
	}
	if res.Identical {
		return Measurement{Identical: true}, nil
	}
	d, err := loaded.Load(res.Dir)
	if err != nil {
		return Measurement{}, err
	}
	out := Measurement{Receipt: res.Page}
	for _, s := range d.Analysis.Pooled {
		if s.Arm == compare.CandArm {
			out.Lanes = append(out.Lanes, EffectOf(s))
		}
	}
	return out, nil
}

// note passes n to Note.
func (m *Steps) note(n string) {
	if m.Note != nil {
		m.Note(n)
	}
}

// pending is the stopping rule of a pair: the followed lane while p.Rule needs it, or at
// the baseline every lane whose verdict is undecided (compare's rule).
func pending(p Pair) pipeline.PendingFunc {
	return func(rep driftcheck.Report) []string {
		if p.Lane == "" {
			return compare.Pending(rep)
		}
		for _, s := range rep.Pooled {
			if s.Lane == p.Lane && s.Arm == compare.CandArm && p.Rule.Pending(EffectOf(s)) {
				return []string{p.Lane}
			}
		}
		return nil
	}
}

// buildOrSkip builds a pair's arms with armbuild.Build; when that fails and the base arm
// alone builds, the candidate is the commit that does not build: a *BuildError, whose
// whole error goes to Note.
func (m *Steps) buildOrSkip(cand Commit) func(ctx context.Context, e *spec.Experiment, o armbuild.Options) ([]receipt.Arm, error) {
	return func(ctx context.Context, e *spec.Experiment, o armbuild.Options) ([]receipt.Arm, error) {
		arms, err := armbuild.Build(ctx, e, o)
		if err == nil || ctx.Err() != nil || len(e.Arms) < 2 {
			return arms, err
		}
		base := *e
		base.Arms = e.Arms[:1]
		if _, berr := armbuild.Build(ctx, &base, o); berr != nil {
			return nil, err
		}
		be := &BuildError{Commit: cand, Err: err}
		m.note(fmt.Sprintf("commit %s does not build; skipped, as git bisect skip does: %v", cand.Short(), err))
		return nil, be
	}
}

// ExactBench is the go test -bench expression that selects lane alone: every level of
// its name anchored ("Get/size=10" -> "^BenchmarkGet$/^size=10$").
func ExactBench(lane string) string {
	parts := strings.Split(lane, "/")
	for i, p := range parts {
		if i == 0 {
			p = "Benchmark" + p
		}
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// ResolveRange resolves GOOD and BAD in the repository at root and lists the
// first-parent history between them. Every error names the argument: an unknown ref,
// GOOD that is not an ancestor of BAD or not on its first-parent line, an empty range.
func ResolveRange(ctx context.Context, root, good, bad string) (Range, error) {
	g, err := armbuild.Commit(ctx, root, good)
	if err != nil {
		return Range{}, fmt.Errorf("GOOD %s: %w", good, err)
	}
	b, err := armbuild.Commit(ctx, root, bad)
	if err != nil {
		return Range{}, fmt.Errorf("BAD %s: %w", bad, err)
	}
	if g == b {
		return Range{}, fmt.Errorf("GOOD %s and BAD %s are the same commit (%s): the range is empty", good, bad, receipt.ShortHash(g))
	}
	anc, err := armbuild.IsAncestor(ctx, root, g, b)
	if err != nil {
		return Range{}, err
	}
	if !anc {
		return Range{}, fmt.Errorf("GOOD %s (%s) is not an ancestor of BAD %s (%s): bisect searches the history from GOOD to BAD (swapped?)", good, receipt.ShortHash(g), bad, receipt.ShortHash(b))
	}
	hist, err := armbuild.FirstParents(ctx, root, g, b)
	if err != nil {
		return Range{}, err
	}
	if len(hist) == 0 {
		return Range{}, fmt.Errorf("GOOD %s..BAD %s: no first-parent commits between them", good, bad)
	}
	parent, err := armbuild.FirstParent(ctx, root, hist[0].Hash)
	if err != nil {
		return Range{}, err
	}
	if parent != g {
		return Range{}, fmt.Errorf("GOOD %s (%s) is not on the first-parent history of BAD %s (it was merged in from a side branch): give a GOOD on that line, such as %s", good, receipt.ShortHash(g), bad, receipt.ShortHash(parent))
	}
	r := Range{Good: Commit{Hash: g}, Bad: Commit{Hash: b}}
	for _, c := range hist {
		r.Commits = append(r.Commits, Commit{Hash: c.Hash, Subject: c.Subject})
	}
	r.Bad = r.Commits[len(r.Commits)-1]
	if r.Good.Subject, err = armbuild.Subject(ctx, root, g); err != nil {
		return Range{}, err
	}
	return r, nil
}
