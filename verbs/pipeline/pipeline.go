// Package pipeline runs an experiment from its spec to its receipt. Each measuring verb is
// one call with a typed request that returns a typed outcome carrying the analysed receipt
// in memory: Ab, Gate, Compare and Calibrate (Merge and Incidence take their own jobs).
// They share one code path, Run:
//
//	lock -> build the arms (armbuild) -> plan.json (harness.NewPlan) -> measure (harness.Runner:
//	fixed, or sequential rounds with a look after each) -> incidence suite (if the spec has
//	one) -> analyse (driftcheck) -> derived files (.bench, analysis.json, plots, manifest)
//	-> the receipt page (report.Render)
//
// The receipt is loaded and analysed once after the measured runs (loaded.Load); the
// page, the profiled lanes and Result.Receipt all come from that one analysis.
//
// Everything a run needs from outside comes in Options: how processes start, how the
// machine lock is taken, where progress goes, the clock. A test passes a fake starter and
// runs the whole pipeline without processes. The package prints nothing itself: progress
// and warnings go to Options.Events, build logs to Options.Log.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/analysis/profdiff"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/calibrate"
)

// Events receives a run's progress: the run loop's events and the sequential protocol's
// looks.
type Events interface {
	harness.Events
	// Look is called after every look of a sequential run.
	Look(l receipt.Look)
}

// Options are what a run takes from outside.
type Options struct {
	// Starter starts every process of a run but the builds' (lanes, listings, the
	// Valgrind check); nil means harness.ExecStarter with Clock.
	Starter harness.Starter
	// Events receives progress; nil discards it.
	Events Events
	// Log receives build and incidence logs; nil discards them.
	Log io.Writer
	// Lock takes the machine lock for a run whose receipts go to dir; nil takes none
	// (tests).
	Lock func(ctx context.Context, dir string) (*harness.Lock, error)
	// Clock is the run's one clock (package clock), handed to the builds, the run loop
	// and the real starter; nil is the machine's.
	Clock clock.Clock
	// Capture and Others replace the host snapshot and the busy-host meter (tests); nil
	// means the real ones.
	Capture func(when string, collection, pass int, now time.Time, dir string) receipt.Snapshot
	Others  harness.OthersMeter
	// Method is the analysis method new runs are planned with (plan.json's method); nil
	// is this build's, driftcheck.CurrentMethod.
	Method *driftcheck.Method
	// Recalibrate calibrates every lane's iteration count again instead of reusing an
	// earlier run's of the same binaries (ReuseIterations).
	Recalibrate bool
}

// method returns the analysis method new runs are planned with.
func (o Options) method() driftcheck.Method {
	if o.Method == nil {
		return driftcheck.CurrentMethod("")
	}
	return *o.Method
}

// capture returns the host snapshot: Capture, or the real one.
func (o Options) capture() func(when string, collection, pass int, now time.Time, dir string) receipt.Snapshot {
	if o.Capture == nil {
		return harness.CaptureEnv
	}
	return o.Capture
}

func (o Options) starter() harness.Starter {
	if o.Starter == nil {
		return harness.ExecStarter{Clock: o.Clock}
	}
	return o.Starter
}

func (o Options) log() io.Writer {
	if o.Log == nil {
		return io.Discard
	}
	return o.Log
}

func (o Options) events() Events {
	if o.Events == nil {
		return discard{}
	}
	return o.Events
}

// discard is the Events of a run nobody watches.
type discard struct{}

func (discard) Begin(int, int)                   {}
func (discard) RunDone(int, int, receipt.Record) {}
func (discard) Warn(receipt.Warning)             {}
func (discard) Look(receipt.Look)                {}

// Job is one run of an experiment.
type Job struct {
	// Spec is the experiment; Root its ledger root; Page the page relative to Root ("" for
	// a gate).
	Spec *spec.Experiment
	Root string
	Page string
	// Resolved is the protocol and lanes of this run (spec.Resolve).
	Resolved spec.Resolved
	// Label names the receipt (quick, full, gate, calibrate).
	Label string
	// Results is where the receipt folder goes.
	Results string
	// Command is the command line recorded in the plan.
	Command []string
	// Incidence measures the spec's release suite into the receipt after the A/B runs.
	Incidence bool
	// Pending, for a sequential run, returns the lanes that still need pairs after a look
	// (see Look); nil means the decision rule's (decide.Pending) for the job's spec.
	Pending PendingFunc
	// Build, when set, replaces armbuild.Build (tests, and calibrate's A/A arms).
	Build func(ctx context.Context, e *spec.Experiment, o armbuild.Options) ([]receipt.Arm, error)
	// Shard, when set, measures one shard of the run: the pass pairs it deals to this
	// machine (docs/shards.md).
	Shard *ShardRequest
	// ExpectArms, when set, are the arms (flipbench build --json, read from the file
	// ExpectArmsFrom) whose binaries this run must measure: a built arm with another
	// sha256 stops the run before anything is measured.
	ExpectArms     []receipt.Arm
	ExpectArmsFrom string
	// ProfileLanes says which lanes get one more process per arm with profiling after
	// the measured runs (profdiff.SelectReproduced, SelectAll; "" or SelectNone for none);
	// it is recorded in the plan, so a resumed run profiles the same.
	ProfileLanes string
	// ProfileSamples is the samples each profiled process runs; 0 means the protocol's.
	// A profile of a short operation needs more than a measured run does: a CPU profile
	// records one stack per 10ms of CPU time.
	ProfileSamples int
	// Layouts is the layout builds per arm to link (protocol.layouts) when the job's
	// lanes, and so its resolved protocol, are chosen after the build (Select); 0 takes
	// Resolved's.
	Layouts int
	// StopUndecidable, for a sequential run, stops measuring a lane once a look finds it
	// cannot be decided within the budget at its noise, unless the decision rule reads it
	// (RuleReads); it is recorded in the plan (receipt.Sequential.StopUndecidable), so a
	// resumed or merged run stops the same lanes.
	StopUndecidable bool
	// FitBudget, for a sequential run, moves the rule's last look to the rounds the budget
	// buys once round 1 has measured a round's time (receipt.Sequential.FitBudget): the
	// gate's binding end then comes within the budget.
	FitBudget bool
	// SkipIdentical stops the run before anything is planned or measured when the built
	// arms are identical (Identical): Result.Identical says so, and no receipt is written.
	SkipIdentical bool
	// Select, when set, is called with the built arms and the run's starter before the
	// plan is made (what it runs on the binaries, it starts through st), and returns
	// the experiment and the resolved protocol and lanes to plan instead of Spec and
	// Resolved: flipbench compare lists the benchmarks of the built binaries to choose its
	// lanes.
	Select func(ctx context.Context, st harness.Starter, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error)
	// Continue, when set, is the earlier receipts this run continues (LoadPrior): the run
	// must measure the same binaries and protocol (Prior.Check), keeps their iteration
	// counts, and its looks analyse their runs with its own (docs/gate.md, "Continuing an
	// undecided gate").
	Continue *Prior
	// goal is what the run holds its lanes to beyond the analysis: Gate sets its
	// thresholds and its reach; the zero goal holds lanes to their floors.
	goal goal
}

// goal is what a run's forecasts hold its lanes' MDEs against, and who checks them.
type goal struct {
	// reach, when set, is called with each forecast that knows every lane's noise or the
	// time per round: before round 1 (the host calibration, the iteration calibration),
	// after round 1 when the first forecast lacked something, and at the look that first
	// knows the lanes' own noise when round 1 did not (watch). An error stops the run there
	// (a *ReachError carrying it); what was measured stays in the receipt folder. Gate sets
	// it to check that its threshold is within reach.
	reach func(Forecast) error
	// threshold, when set, is a lane's threshold (the gate's), which forecasts state the
	// lane's MDE against instead of its floor.
	threshold func(lane string) float64
}

// apply states f's lanes against the goal's thresholds, when it has them.
func (g goal) apply(f Forecast) Forecast {
	if g.threshold == nil {
		return f
	}
	for i := range f.Lanes {
		l := &f.Lanes[i]
		l.Bar, l.FloorPct = "threshold", g.threshold(l.Lane)
		if l.NoisePct > 0 {
			l.PairsNeeded = driftcheck.PowerAt(l.NoisePct, l.FloorPct, f.Rounds, max(f.Collections, 1), f.Drift).PairsNeeded
		}
	}
	f.Advice = advice(f)
	return f
}

// Result is what a run produced.
type Result struct {
	// Dir is the receipt data folder and Page the receipt page.
	Dir, Page string
	// Outcome counts the runs.
	Outcome harness.Outcome
	// Looks are a sequential run's looks, the last one saying why it stopped.
	Looks []receipt.Look
	// IncidenceErr is set when the incidence suite could not be measured: the A/B receipt
	// is complete without it.
	IncidenceErr error
	// Receipt is the receipt as its page shows it: loaded and analysed once after the
	// measured runs, with what profiling and the incidence suite added. Nil when the run
	// stopped before its receipt was written, or measured nothing (Identical).
	Receipt *loaded.Receipt
	// Shard is the part of the run a shard measured (nil for a whole run).
	Shard *receipt.Shard
	// Identical is set when the job skipped identical arms (Job.SkipIdentical): Arms are
	// the built arms, and nothing was measured.
	Identical bool
	Arms      []receipt.Arm
}

// ErrInterrupted is wrapped by the error of a run whose context was cancelled: every
// finished run is on disk, and Resume finishes it.
var ErrInterrupted = errors.New("interrupted")

// Run builds the job's arms, plans, measures and writes the receipt. The machine lock is
// taken first, since a build competing with another run's measurement contaminates it as
// a second measurement would, and held until the receipt is written.
func Run(ctx context.Context, job Job, opts Options) (*Result, error) {
	if cpus := job.Resolved.Protocol.CPUList(); cpus != nil {
		if err := cpuset.Check(cpus); err != nil {
			return nil, fmt.Errorf("the protocol pins lanes to %w", err)
		}
	}
	results := job.Results
	lock, err := takeLock(ctx, opts, results)
	if err != nil {
		return nil, err
	}
	defer release(lock)
	arms, buildWarnings, identical, err := buildArms(ctx, &job, opts)
	if err != nil {
		return nil, err
	}
	if identical {
		return &Result{Identical: true, Arms: arms}, nil
	}
	plan, folder, err := newRunPlan(job, arms, opts.method())
	if err != nil {
		return nil, err
	}
	var iters Iterations
	if job.Shard == nil {
		// Shards would each pick their own iteration counts: they keep the benchtime.
		var reused []LaneCalibration
		if !opts.Recalibrate {
			reused = ReuseIterations(results, plan, calibrate.HostOf(opts.capture()("plan", 0, 0, opts.Clock.Now(), results)))
		}
		if iters, err = FixIterations(ctx, plan, opts.starter(), opts.Clock); err != nil {
			return nil, err
		}
		iters.Lanes = append(reused, iters.Lanes...)
		for _, w := range iters.Warnings {
			opts.events().Warn(w)
		}
		buildWarnings = append(buildWarnings, iters.Warnings...)
	}
	stamp, f, err := receipt.Create(results, job.Spec.ID, folder, opts.Clock)
	if err != nil {
		return nil, err
	}
	dir := string(f)
	plan.Stamp = stamp
	if job.Continue != nil {
		plan.Continues, plan.ContinueTuned = job.Continue.From(dir), job.Continue.Tuned
	}
	if lock != nil {
		lock.SetDir(dir)
	}
	// The host's calibration is read at most once: for the plan and for the forecast.
	host := sync.OnceValue(func() *calibrate.File { return hostCalibration(opts, job.Root, dir) })
	if err := writePlan(dir, plan, host); err != nil {
		return nil, err
	}
	if err := receipt.Folder(dir).AppendWarnings(buildWarnings...); err != nil {
		return nil, err
	}
	known := true
	if !plan.Part() {
		if known, err = planForecast(opts, plan, iters, host, job.goal); err != nil {
			return &Result{Dir: dir}, err
		}
	}
	return measureAndFinish(ctx, dir, plan, job, opts, newWatch(opts, plan, known, job.goal))
}

// buildArms builds the job's arms, then lets the job choose its lanes from them
// (job.Select, which may change job.Spec and job.Resolved) and checks the arms it expects.
// It says so when job.SkipIdentical finds the arms identical, before choosing; the
// warnings are the build's, already shown.
func buildArms(ctx context.Context, job *Job, opts Options) (arms []receipt.Arm, warnings []receipt.Warning, identical bool, err error) {
	build := job.Build
	if build == nil {
		build = armbuild.Build
	}
	arms, err = build(ctx, job.Spec, armbuild.Options{Root: job.Root, Log: opts.log(), Clock: opts.Clock, Starter: opts.starter(),
		Layouts: cmp.Or(job.Layouts, job.Resolved.Protocol.Layouts), Warn: func(w receipt.Warning) {
			opts.events().Warn(w)
			warnings = append(warnings, w)
		}})
	if err != nil {
		return nil, nil, false, err
	}
	if job.SkipIdentical && Identical(arms) {
		return arms, warnings, true, nil
	}
	if job.Select != nil {
		if job.Spec, job.Resolved, err = job.Select(ctx, opts.starter(), arms); err != nil {
			return nil, nil, false, err
		}
	}
	return arms, warnings, false, checkExpectArms(arms, job.ExpectArms, job.ExpectArmsFrom)
}

// newRunPlan makes the plan of the job's run over the built arms, with its shard and the
// receipt it continues, and returns it with the label of the receipt's folder.
func newRunPlan(job Job, arms []receipt.Arm, method driftcheck.Method) (*receipt.Plan, string, error) {
	plan := harness.NewPlan(harness.PlanInput{
		Experiment: job.Spec, Page: job.Page, Label: job.Label, Profile: job.Resolved.Profile,
		Command: job.Command, Resolved: job.Resolved, Arms: arms, Method: method,
	})
	plan.ProfileLanes, plan.ProfileSamples = job.ProfileLanes, job.ProfileSamples
	plan.Protocol.OwnCPUs = harness.OwnPlacement(plan.Protocol.CPUs)
	if !slices.ContainsFunc(arms, func(a receipt.Arm) bool { return len(a.Layouts) >= plan.Protocol.Layouts }) || plan.Protocol.Layouts < 1 {
		plan.Protocol.Layouts = 1 // prebuilt or not a Go test binary: one build per arm
	}
	if s := plan.Protocol.Sequential; s != nil {
		s.StopUndecidable, s.FitBudget = job.StopUndecidable, job.FitBudget
	}
	if plan.ProfileLanes == profdiff.SelectNone {
		plan.ProfileLanes = ""
	}
	folder := job.Label
	if job.Shard != nil {
		var err error
		if plan.Shard, err = shardOf(plan, *job.Shard); err != nil {
			return nil, "", err
		}
		folder += shardSuffix(plan.Shard)
	}
	if p := job.Continue; p != nil {
		if job.Shard != nil {
			return nil, "", fmt.Errorf("a shard cannot continue another receipt")
		}
		if err := p.Check(plan); err != nil {
			return nil, "", err
		}
		p.Carry(plan)
	}
	return plan, folder, nil
}

// Resume finishes the interrupted run in receipt data folder dir: it measures what is
// missing (a sequential run replays its looks from the data and goes on where it stopped),
// then measures the incidence suite if job.Spec asks for it, and writes the receipt. job
// holds the page the plan was made from (Spec, Root; nil Spec when it is not found) and
// the options of the measurement; its Resolved and Label are not used. A finished receipt
// is re-rendered only when its data still match its manifest.
func Resume(ctx context.Context, dir string, job Job, opts Options) (*Result, error) {
	plan, err := receipt.ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	if plan.Merged() {
		return nil, fmt.Errorf("a merged receipt measures nothing itself; run the missing or next shards (flipbench ab --shard i/n) and merge again")
	}
	if err := CheckArms(plan); err != nil {
		return nil, err
	}
	if cpus := plan.Protocol.CPUs; cpus != nil {
		if err := cpuset.Check(cpus); err != nil {
			return nil, fmt.Errorf("the plan pins its lanes to %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, receipt.ManifestFile)); err == nil {
		// A finished receipt: re-rendering it must not launder edits to its data.
		if err := receipt.VerifyManifest(dir); err != nil {
			return nil, fmt.Errorf("the receipt was finished and its data changed since; refusing to rewrite its manifest:\n%w", err)
		}
	}
	lock, err := takeLock(ctx, opts, dir)
	if err != nil {
		return nil, err
	}
	defer release(lock)
	return measureAndFinish(ctx, dir, plan, job, opts, newWatch(opts, plan, true, goal{}))
}

// takeLock takes the machine lock through opts.Lock.
func takeLock(ctx context.Context, opts Options, dir string) (*harness.Lock, error) {
	if opts.Lock == nil {
		return nil, nil
	}
	return opts.Lock(ctx, dir)
}

// release releases a lock takeLock took, if it took one.
func release(l *harness.Lock) {
	if l != nil {
		l.Release()
	}
}

// measureAndFinish measures the plan in dir (w, when set, shows what the looks imply),
// then profiles the lanes the plan asks for (profileLanes), then measures the incidence
// suite, then writes the receipt. The receipt is loaded and analysed once, after the
// measured runs: profiling chooses its lanes from that analysis, and the page and
// Result.Receipt carry it.
func measureAndFinish(ctx context.Context, dir string, plan *receipt.Plan, job Job, opts Options, w *watch) (*Result, error) {
	res := &Result{Dir: dir, Shard: plan.Shard}
	// flipbench's own threads keep off the lanes' CPUs while they are measured.
	if len(plan.Protocol.OwnCPUs) > 0 {
		restore, err := cpuset.PinProcess(plan.Protocol.OwnCPUs)
		if err != nil {
			return res, fmt.Errorf("keeping flipbench off the lanes' CPUs: %w", err)
		}
		defer restore()
	}
	out, looks, err := measure(ctx, dir, plan, job, opts, w)
	res.Outcome, res.Looks = out, looks
	if err != nil {
		var refused *ReachError
		if errors.As(err, &refused) {
			return res, refused
		}
		if errors.Is(err, context.Canceled) {
			return res, fmt.Errorf("%w after %d runs; nothing finished is lost: flipbench ab --resume %s", ErrInterrupted, out.Resumed+out.Ran, dir)
		}
		return res, fmt.Errorf("%w (finished runs are kept: flipbench ab --resume %s)", err, dir)
	}
	if err := checkRunFiles(dir); err != nil {
		return res, fmt.Errorf("writing the receipt for %s: %w", dir, err)
	}
	d, err := loaded.Load(dir)
	if err != nil {
		return res, fmt.Errorf("writing the receipt for %s: %w", dir, err)
	}
	if err := profileLanes(ctx, d, opts); err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("%w while profiling; the measured runs are complete: flipbench ab --resume %s", ErrInterrupted, dir)
		}
		return res, fmt.Errorf("profiling the reproduced lanes: %w (the measured runs are complete: flipbench ab --resume %s)", err, dir)
	}
	if err := measureIncidence(ctx, res, plan, job, opts); err != nil {
		return res, err
	}
	if err := d.ReadAdded(); err != nil {
		return res, fmt.Errorf("writing the receipt for %s: %w", dir, err)
	}
	if res.Page, err = finishLoaded(d); err != nil {
		return res, fmt.Errorf("writing the receipt for %s: %w", dir, err)
	}
	res.Receipt = d
	return res, nil
}

// measureIncidence measures the spec's incidence suite into the receipt res.Dir after its
// A/B runs, when the job asks for it and the receipt has none yet. An incidence suite that
// cannot be measured is res.IncidenceErr, not an error: the A/B receipt is complete
// without it; only an interruption stops the run.
func measureIncidence(ctx context.Context, res *Result, plan *receipt.Plan, job Job, opts Options) error {
	dir := res.Dir
	if !job.Incidence || job.Spec == nil || job.Spec.Incidence == nil || incidence.Exists(dir) || !measuresIncidence(plan) {
		return nil
	}
	ij := IncidenceJob{Spec: job.Spec, Root: job.Root, Dir: dir, Command: plan.Command}
	if _, err := MeasureIncidence(ctx, ij, opts); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w while measuring the incidence; the A/B runs are complete: flipbench incidence %d --receipt %s", ErrInterrupted, job.Spec.ID, dir)
		}
		res.IncidenceErr = err
	}
	return nil
}

// CheckArms refuses a plan whose arm binaries changed since it was made: resumed runs
// would measure a different build.
func CheckArms(plan *receipt.Plan) error {
	for _, a := range plan.Arms {
		builds := []receipt.ArmLayout{{Bin: a.Bin, SHA256: a.SHA256}}
		for _, l := range a.Layouts {
			builds = append(builds, l)
		}
		for _, b := range builds {
			sum, err := receipt.HashFile(b.Bin)
			if err != nil {
				return fmt.Errorf("arm %s: %w", a.Name, err)
			}
			if sum != b.SHA256 {
				return fmt.Errorf("arm %s: %s changed since the run started (sha256 %.12s, plan says %.12s); resuming would mix two builds", a.Name, b.Bin, sum, b.SHA256)
			}
		}
	}
	return nil
}

// ReceiptDirOf returns the data folder of a receipt page path (or the folder itself).
func ReceiptDirOf(path string) string { return strings.TrimSuffix(path, ".md") }
