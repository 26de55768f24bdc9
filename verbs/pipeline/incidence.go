package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
)

// ProbeTag is the build tag that compiles the incidence probes in (package probe).
const ProbeTag = "flipbench_probe"

// IncidenceJob is one measurement of an experiment's incidence suite.
type IncidenceJob struct {
	// Spec is the experiment (it has an incidence section); Root its ledger root.
	Spec *spec.Experiment
	Root string
	// Dir is the folder the report goes into.
	Dir string
	// Ref is the ref the suite is built from; "" means incidence.suite.ref, harness.ref,
	// or HEAD.
	Ref string
	// Command is the command line recorded in the report.
	Command []string
	// Receipt, for Incidence, is an ab receipt folder to add the report to; else Results
	// is where a folder of its own goes.
	Receipt, Results string
}

// Incidence measures the incidence suite on its own, under the machine lock: into a new
// folder <stamp>-expNNN-incidence under j.Results (with a manifest), or into the finished
// ab receipt j.Receipt, whose receipt is then rendered again. A receipt that changed since
// its run, belongs to another experiment or already has a report is refused. It returns
// the report and the folder it is in.
func Incidence(ctx context.Context, j IncidenceJob, opts Options) (*incidence.Report, string, error) {
	if j.Spec.Incidence == nil {
		return nil, "", fmt.Errorf("the spec has no incidence section (incidence: {suite: ..., total: ..., eligible: ...}); see docs/incidence.md")
	}
	lockDir := j.Results
	if dir := j.Receipt; dir != "" {
		lockDir = dir
		plan, err := receipt.ReadPlan(dir)
		if err != nil {
			return nil, "", fmt.Errorf("--receipt %s: not an ab receipt data folder: %w", dir, err)
		}
		if plan.Experiment != j.Spec.ID {
			return nil, "", fmt.Errorf("--receipt %s: a receipt of experiment %d, not %d", dir, plan.Experiment, j.Spec.ID)
		}
		// A finished receipt is immutable: check it before adding to it, and never replace
		// a report it already has.
		if err := receipt.VerifyManifest(dir); err != nil {
			return nil, "", fmt.Errorf("--receipt %s: its data changed since the run; refusing to add to it:\n%w", dir, err)
		}
		if incidence.Exists(dir) {
			return nil, "", fmt.Errorf("--receipt %s: it already has an incidence report; measure into a folder of its own (drop --receipt)", dir)
		}
	}
	lock, err := takeLock(ctx, opts, lockDir)
	if err != nil {
		return nil, "", err
	}
	defer release(lock)
	if j.Receipt != "" {
		j.Dir = j.Receipt
	} else {
		var f receipt.Folder
		if _, f, err = receipt.Create(j.Results, j.Spec.ID, "incidence", opts.Clock); err != nil {
			return nil, "", err
		}
		j.Dir = string(f)
		if lock != nil {
			lock.SetDir(j.Dir)
		}
	}
	rep, err := MeasureIncidence(ctx, j, opts)
	if err != nil {
		return nil, j.Dir, err
	}
	if j.Receipt != "" {
		// The receipt gains files: render it again, which rewrites its manifest too.
		if _, err := Finish(j.Dir); err != nil {
			return nil, j.Dir, fmt.Errorf("rendering the receipt %s again: %w", j.Dir, err)
		}
	} else if _, err := receipt.Folder(j.Dir).SealData(); err != nil {
		return nil, j.Dir, err
	}
	return rep, j.Dir, nil
}

// suiteRef returns the ref the suite is built from.
func (j IncidenceJob) suiteRef() string {
	for _, r := range []string{j.Ref, j.Spec.Incidence.Suite.Ref, j.Spec.Harness.Ref} {
		if r != "" {
			return r
		}
	}
	return "HEAD"
}

// MeasureIncidence builds the suite with the probe tag, runs each of its lanes once in
// its own process, computes the report and writes incidence.json, incidence.md and the
// runs into j.Dir. It does not write a manifest. Progress goes to opts.Log. A measurement
// that proves nothing (a failed lane, a silent positive control) is not an error: the
// report says so (Report.Broken) and the decision rule then cannot accept an arm.
func MeasureIncidence(ctx context.Context, j IncidenceJob, opts Options) (*incidence.Report, error) {
	in := j.Spec.Incidence
	if in == nil {
		return nil, fmt.Errorf("the spec has no incidence section")
	}
	suite := in.Suite
	kind, err := suite.LaneKind()
	if err != nil {
		return nil, fmt.Errorf("incidence.suite: %w", err)
	}
	if kind.ListArgs("") == nil {
		return nil, fmt.Errorf("incidence.suite: kind %s cannot be run yet: its lanes cannot be listed; use a kind that lists them (gotest)", kind.Name())
	}
	log := opts.log()
	ref := j.suiteRef()
	suite.Ref = ref
	suiteExp := &spec.Experiment{
		ID:      j.Spec.ID,
		Path:    j.Spec.Path,
		Title:   j.Spec.Title,
		Harness: suite,
		Arms:    []spec.Arm{{Name: spec.BaseArm, Ref: ref, Tags: []string{ProbeTag}}},
	}
	fmt.Fprintf(log, "incidence: building the suite %s at %s with -tags %s\n", suite.Package, ref, ProbeTag)
	st := opts.starter()
	arms, err := armbuild.Build(ctx, suiteExp, armbuild.Options{Root: j.Root, Log: log, Clock: opts.Clock, Starter: st})
	if err != nil {
		return nil, fmt.Errorf("building the incidence suite: %w", err)
	}
	arm := arms[0]
	arm.Name = "probe"
	lanes, _, err := harness.ListLanes(ctx, st, arm)
	if err != nil {
		return nil, fmt.Errorf("the incidence suite: %w", err)
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
		rec := runSuiteLane(ctx, st, arm, lane, timeout)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		fmt.Fprintf(log, "incidence: %s\n", laneLine(rec, in))
	}
	rep, err := incidence.Compute(incidence.Input{Experiment: j.Spec.ID, Gate: *in, Records: recs})
	if err != nil {
		return nil, err
	}
	rep.Build, rep.Command = &arm, j.Command
	if err := writeIncidence(j.Dir, rep, recs); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "incidence: %s\n", IncidenceSummary(rep))
	for _, f := range rep.Findings {
		fmt.Fprintf(log, "incidence %s: %s\n", f.Level, mdtable.OneLine(f.Message))
	}
	return rep, nil
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
		return fmt.Sprintf("%s failed: %s", rec.Lane, mdtable.OneLine(rec.Error))
	}
	count := func(name string) string {
		v, ok := rec.Metrics[name]
		if !ok || len(v) == 0 {
			return "no " + name
		}
		return human.Num(v[0]) + " " + name
	}
	took := rec.Ended.Sub(rec.Started).Round(time.Millisecond)
	return fmt.Sprintf("%s: %s, %s (%s)", rec.Lane, count(in.Total), count(in.Eligible), took)
}

// writeIncidence writes the report (JSON and markdown) and the suite's runs into dir.
func writeIncidence(dir string, rep *incidence.Report, recs []receipt.Record) error {
	js, err := incidence.JSON(rep)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	if err := incidence.Markdown(&md, rep); err != nil {
		return err
	}
	return receipt.Folder(dir).WriteIncidence(js, md.Bytes(), recs)
}

// IncidenceSummary says the gate's numbers in one line.
func IncidenceSummary(r *incidence.Report) string {
	g := r.Gate
	control := "no positive control"
	switch {
	case r.Control.Fired:
		control = fmt.Sprintf("positive control %s fired (%s)", r.Control.Lane, human.Num(r.Control.Eligible))
	case r.Control.Lane != "":
		control = fmt.Sprintf("positive control %s did NOT fire", r.Control.Lane)
	}
	return fmt.Sprintf("%s %s of %s %s (%s%%, min-share %s%%); %s",
		human.Num(r.Eligible), g.Eligible, human.Num(r.Total), g.Total, pctOf(r.Share), human.Num(g.MinShare*100), control)
}

// pctOf formats a measured share in percent: "0", "44.4", with Sig's digits.
func pctOf(share float64) string { return human.Sig(share * 100) }
