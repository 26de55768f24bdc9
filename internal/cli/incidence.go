package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flipbench/flipbench/armbuild"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/incidence"
	"github.com/flipbench/flipbench/lanekind"
	"github.com/flipbench/flipbench/ledger"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/spec"
)

// ProbeTag is the build tag that compiles the incidence probes in (package probe).
const ProbeTag = "flipbench_probe"

// incidenceRunsFile holds the suite's runs, one receipt.Record per line, next to
// incidence.json.
const incidenceRunsFile = "incidence-runs.jsonl"

type incidenceOptions struct {
	page    string
	receipt string // an ab receipt folder to add the report to
	results string // where a new results folder goes (default: results/ beside experiments/)
	ref     string // the ref the suite is built from
	json    bool
	args    []string
}

func newIncidenceCmd(s Streams) *cobra.Command {
	opts := &incidenceOptions{}
	cmd := &cobra.Command{
		Use:   "incidence PAGE|NNN",
		Short: "Measure how often an experiment's situation occurs: the release suite with probe counters",
		Long: `incidence runs the release suite named by the spec's incidence section with the probe
counters compiled in (-tags ` + ProbeTag + `), each suite lane once in its own process, and
reports what they counted: totals per counter, the eligible share (incidence.eligible /
incidence.total), a per-lane breakdown, the positive-control check and the value estimate
(frequency x eligible share x incidence.saving-ns). See docs/incidence.md.

The suite is built from --ref, else incidence.suite.ref, else harness.ref, else HEAD, with
its lanes taken from the same ref. The report is written as incidence.json and incidence.md,
with the suite's runs in ` + incidenceRunsFile + `, into a new folder
results/<stamp>-expNNN-incidence/ (with a manifest), or into an ab receipt folder given
with --receipt, whose receipt is then rendered again. stdout gets the report (markdown, or
--json). The exit status is 1 when the measurement proves nothing: a lane failed, or the
positive control did not fire.

flipbench ab runs this itself, into its receipt, when the spec has an incidence section.`,
		Example: `  flipbench incidence 275
  flipbench incidence 275 --json
  flipbench incidence 275 --receipt results/2026-11-30T10-00-00Z-exp275-quick`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("incidence: want one experiment page or number, got %d arguments", len(args))
			}
			if opts.receipt != "" && opts.results != "" {
				return usageError("incidence: give --receipt or --results, not both")
			}
			opts.page = args[0]
			opts.args = append([]string{"flipbench"}, s.argv...)
			return runIncidenceCmd(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.receipt, "receipt", "", "add the report to this ab receipt data folder and render its receipt again")
	f.StringVar(&opts.results, "results", "", "folder for the new results folder (default: results/ beside experiments/)")
	f.StringVar(&opts.ref, "ref", "", "git ref to build the suite from (default: incidence.suite.ref, harness.ref, or HEAD)")
	f.BoolVar(&opts.json, "json", false, "print the report as JSON instead of markdown")
	return cmd
}

// runIncidenceCmd is the incidence verb: measure, write, print.
func runIncidenceCmd(ctx context.Context, s Streams, opts *incidenceOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	exp, page, root, err := findExperiment(opts.page)
	if err != nil {
		return err
	}
	if exp.Incidence == nil {
		return fmt.Errorf("%s: the spec has no incidence section (incidence: {suite: ..., total: ..., eligible: ...}); see docs/incidence.md", relPath(page))
	}
	var lock *harness.Lock
	dir := opts.receipt
	if dir != "" {
		dir = ledger.ReceiptDir(dir)
		plan, err := receipt.ReadPlan(dir)
		if err != nil {
			return fmt.Errorf("--receipt %s: not an ab receipt data folder: %w", dir, err)
		}
		if plan.Experiment != exp.ID {
			return fmt.Errorf("--receipt %s: a receipt of experiment %d, not %d", dir, plan.Experiment, exp.ID)
		}
		// A finished receipt is immutable: check it before adding to it, and never
		// replace a report it already has.
		if err := receipt.VerifyManifest(dir); err != nil {
			return fmt.Errorf("--receipt %s: its data changed since the run; refusing to add to it:\n%w", dir, err)
		}
		if incidence.Exists(dir) {
			return fmt.Errorf("--receipt %s: it already has an incidence report; measure into a folder of its own (drop --receipt)", dir)
		}
		if lock, err = acquireLock(s, opts.args, dir); err != nil {
			return err
		}
	} else {
		results := opts.results
		if results == "" {
			results = filepath.Join(root, ledger.ResultsDir)
		}
		var err error
		if lock, err = acquireLock(s, opts.args, results); err != nil {
			return err
		}
		if _, dir, err = newReceiptDir(results, exp.ID, "incidence"); err != nil {
			lock.Release()
			return err
		}
		lock.SetDir(dir)
	}
	defer lock.Release()

	rep, err := measureIncidence(ctx, s, incidenceJob{exp: exp, root: root, dir: dir, ref: opts.ref, args: opts.args, starter: harness.ExecStarter{}})
	if err != nil {
		return err
	}
	if opts.receipt != "" {
		// The receipt gains files: render it again, which rewrites its manifest too.
		if _, err := report.Finish(dir); err != nil {
			return fmt.Errorf("rendering the receipt %s again: %w", dir, err)
		}
	} else if _, err := receipt.WriteManifest(dir); err != nil {
		return err
	}
	if opts.json {
		b, err := incidence.JSON(rep)
		if err != nil {
			return err
		}
		if _, err := s.Out.Write(b); err != nil {
			return err
		}
	} else if err := incidence.Markdown(s.Out, rep); err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "flipbench: wrote %s\n", relPath(filepath.Join(dir, incidence.File)))
	if rep.Broken() {
		for _, f := range rep.Findings {
			if f.Level == incidence.LevelError {
				fmt.Fprintf(s.Err, "flipbench: %s\n", report.OneLine(f.Message))
			}
		}
		return silentExit(ExitError)
	}
	return nil
}

// runIncidence measures the incidence of experiment exp into the receipt data folder dir
// of an ab run, when the spec has an incidence section; root is the ledger root. ab calls
// it (through withIncidence) after its runs; withIncidence then renders the receipt again,
// so its page and manifest list the new files. The caller holds the machine lock. A
// resumed receipt that already has a report is left as it is. A measurement that proves nothing (a failed lane,
// a silent positive control) is not an error here: the report records it and the decision
// rule then cannot accept an arm; it is said on stderr.
func runIncidence(ctx context.Context, s Streams, exp *spec.Experiment, root, dir string) error {
	if exp.Incidence == nil || incidence.Exists(dir) {
		return nil
	}
	rep, err := measureIncidence(ctx, s, incidenceJob{exp: exp, root: root, dir: dir,
		args: append([]string{"flipbench"}, s.argv...), starter: harness.ExecStarter{}})
	if err != nil {
		return fmt.Errorf("incidence: %w", err)
	}
	fmt.Fprintf(s.Err, "flipbench: incidence: %s\n", incidenceSummary(rep))
	for _, f := range rep.Findings {
		fmt.Fprintf(s.Err, "flipbench: incidence %s: %s\n", f.Level, report.OneLine(f.Message))
	}
	return nil
}

// incidenceJob is one measurement of an experiment's incidence suite.
type incidenceJob struct {
	exp     *spec.Experiment
	root    string // ledger root
	dir     string // where the report goes
	ref     string // "" for the default (see suiteRef)
	args    []string
	starter harness.Starter
}

// suiteRef returns the ref the suite is built from.
func (j incidenceJob) suiteRef() string {
	for _, r := range []string{j.ref, j.exp.Incidence.Suite.Ref, j.exp.Harness.Ref} {
		if r != "" {
			return r
		}
	}
	return "HEAD"
}

// measureIncidence builds the suite with the probe tag, runs each of its lanes once in
// its own process, computes the report and writes incidence.json, incidence.md and the
// runs into j.dir. It does not write a manifest.
func measureIncidence(ctx context.Context, s Streams, j incidenceJob) (*incidence.Report, error) {
	in := j.exp.Incidence
	suite := in.Suite
	kind, err := suite.LaneKind()
	if err != nil {
		return nil, fmt.Errorf("incidence.suite: %w", err)
	}
	if kind.ListArgs("") == nil {
		return nil, fmt.Errorf("incidence.suite: kind %s cannot be run yet: its lanes cannot be listed; use a kind that lists them (gotest)", kind.Name())
	}
	ref := j.suiteRef()
	suite.Ref = ref
	suiteExp := &spec.Experiment{
		ID:      j.exp.ID,
		Path:    j.exp.Path,
		Title:   j.exp.Title,
		Harness: suite,
		Arms:    []spec.Arm{{Name: spec.BaseArm, Ref: ref, Tags: []string{ProbeTag}}},
	}
	fmt.Fprintf(s.Err, "incidence: building the suite %s at %s with -tags %s\n", suite.Package, ref, ProbeTag)
	arms, err := armbuild.Build(ctx, suiteExp, armbuild.Options{Root: j.root, Log: s.Err})
	if err != nil {
		return nil, fmt.Errorf("building the incidence suite: %w", err)
	}
	arm := arms[0]
	arm.Name = "probe"
	lanes, err := listLanes(ctx, j.starter, kind, arm)
	if err != nil {
		return nil, err
	}
	if len(lanes) == 0 {
		return nil, fmt.Errorf("the incidence suite %s has no benchmarks (lanes)", suite.Package)
	}
	timeout := time.Duration(suite.Timeout)
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	var recs []receipt.Record
	for _, lane := range lanes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec := runSuiteLane(ctx, j.starter, arm, lane, timeout)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		fmt.Fprintf(s.Err, "incidence: %s\n", laneLine(rec, in))
	}
	rep, err := incidence.Compute(incidence.Input{Experiment: j.exp.ID, Gate: *in, Records: recs})
	if err != nil {
		return nil, err
	}
	rep.Build, rep.Command = &arm, j.args
	if err := writeIncidence(j.dir, rep, recs); err != nil {
		return nil, err
	}
	return rep, nil
}

// listLanes lists the lanes of a suite binary.
func listLanes(ctx context.Context, st harness.Starter, kind lanekind.Kind, arm receipt.Arm) ([]string, error) {
	p := st.Start(ctx, kind.ListArgs(arm.Bin), arm.Env, arm.Dir, time.Minute)
	if p.Err != nil {
		return nil, fmt.Errorf("listing the lanes of the incidence suite %s: %v: %s", arm.Bin, p.Err, p.StderrTail)
	}
	return kind.Lanes(p.Stdout), nil
}

// runSuiteLane runs one suite lane once (one sample, no warmup) and records it as the run
// loop records a run.
func runSuiteLane(ctx context.Context, st harness.Starter, arm receipt.Arm, lane string, timeout time.Duration) receipt.Record {
	run := receipt.Run{Collection: 1, Pass: 1, Order: driftcheck.OrderForward, Lane: lane, Arm: arm.Name}
	proto := receipt.Protocol{Samples: 1, Warmup: 0, Passes: 1, Collections: 1, Timeout: timeout}
	return harness.RunOnce(ctx, st, run, arm, receipt.Lane{Name: lane}, proto)
}

// laneLine is one progress line for a finished suite lane.
func laneLine(rec receipt.Record, in *spec.Incidence) string {
	if !rec.OK() {
		return fmt.Sprintf("%s failed: %s", rec.Lane, report.OneLine(rec.Error))
	}
	count := func(name string) string {
		v, ok := rec.Metrics[name]
		if !ok || len(v) == 0 {
			return "no " + name
		}
		return fmt.Sprintf("%g %s", v[0], name)
	}
	took := rec.Ended.Sub(rec.Started).Round(time.Millisecond)
	return fmt.Sprintf("%s: %s, %s (%s)", rec.Lane, count(in.Total), count(in.Eligible), took)
}

// writeIncidence writes the report (JSON and markdown) and the suite's runs into dir.
func writeIncidence(dir string, rep *incidence.Report, recs []receipt.Record) error {
	var runs bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		runs.Write(append(b, '\n'))
	}
	if err := receipt.WriteFile(filepath.Join(dir, incidenceRunsFile), runs.Bytes()); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := incidence.Markdown(&md, rep); err != nil {
		return err
	}
	if err := receipt.WriteFile(filepath.Join(dir, incidence.MarkdownFile), md.Bytes()); err != nil {
		return err
	}
	return incidence.Write(dir, rep)
}

// incidenceSummary says the gate's numbers in one line.
func incidenceSummary(r *incidence.Report) string {
	g := r.Gate
	control := "no positive control"
	switch {
	case r.Control.Fired:
		control = fmt.Sprintf("positive control %s fired (%g)", r.Control.Lane, r.Control.Eligible)
	case r.Control.Lane != "":
		control = fmt.Sprintf("positive control %s did NOT fire", r.Control.Lane)
	}
	return fmt.Sprintf("%g %s of %g %s (%.3g%%, min-share %.3g%%); %s",
		r.Eligible, g.Eligible, r.Total, g.Total, r.Share*100, g.MinShare*100, control)
}

// withIncidence adds the incidence report to a finished ab receipt when the spec has an
// incidence section: it runs the suite (runIncidence) into the receipt's data folder and
// renders the receipt again, so its page and manifest include the report. exp and root
// may be nil and "" (a resumed run): the page is then found again from the plan. A suite
// that cannot be built or run leaves the A/B receipt as it is and says so on stderr, with
// the command that measures it later; the decision rule then reports the incidence as not
// measured.
func withIncidence(ctx context.Context, s Streams, exp *spec.Experiment, root string, m measured) measured {
	if m.err != nil {
		return m
	}
	dir := strings.TrimSuffix(m.md, ".md")
	if exp == nil {
		plan, err := receipt.ReadPlan(dir)
		if err != nil {
			m.err = err
			return m
		}
		page, r, err := pageOfPlan(dir, plan)
		if err != nil {
			fmt.Fprintf(s.Err, "flipbench: warning: incidence not measured: %v\n", err)
			return m
		}
		if exp, err = spec.ParseFile(relPath(page)); err != nil {
			fmt.Fprintf(s.Err, "flipbench: warning: incidence not measured: %v\n", err)
			return m
		}
		root = r
	}
	if exp.Incidence == nil || incidence.Exists(dir) {
		return m
	}
	if err := runIncidence(ctx, s, exp, root, dir); err != nil {
		if ctx.Err() != nil {
			m.err = fmt.Errorf("interrupted while measuring the incidence; the A/B receipt %s is complete: flipbench incidence %d --receipt %s", relPath(m.md), exp.ID, relPath(dir))
			return m
		}
		fmt.Fprintf(s.Err, "flipbench: warning: %v; the A/B receipt is complete: measure it with flipbench incidence %d --receipt %s\n", err, exp.ID, relPath(dir))
		return m
	}
	md, err := report.Finish(dir)
	if err != nil {
		m.err = fmt.Errorf("writing the receipt for %s: %w", dir, err)
		return m
	}
	m.md = md
	return m
}

// pageOfPlan finds the experiment page a receipt was made from: plan.Page under the ledger
// root that holds the receipt folder (results/ beside experiments/), else the page with the
// plan's number found from the working directory.
func pageOfPlan(dir string, plan *receipt.Plan) (page, root string, err error) {
	if r, err := ledger.FindRoot(dir); err == nil && plan.Page != "" {
		p := filepath.Join(r, filepath.FromSlash(plan.Page))
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, r, nil
		}
	}
	return ledger.FindPage(".", fmt.Sprint(plan.Experiment))
}
