// Package harness runs an experiment's plan: every lane of every arm in its own fresh
// process, in the order-flipped passes and collections of the schedule, appending each
// finished run to the receipt's raw.jsonl at once so that an interrupted run can be resumed
// without repeating or losing any run.
//
// The pipeline is: spec (package spec) -> arms built (package armbuild) -> plan (NewPlan,
// Schedule) -> processes (Runner) -> raw results on disk (package receipt). Analysis and
// rendering happen afterwards, from the files alone (packages driftcheck and report).
package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/owner"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// Events receives progress from a Runner. Implementations print; the Runner never does.
type Events interface {
	// Begin is called once with the number of runs in the plan and how many are already done.
	Begin(total, done int)
	// RunDone is called after each run is safely on disk; n counts finished runs.
	RunDone(n, total int, rec receipt.Record)
	// Warn reports a problem worth a user's attention, phrased with what to do.
	Warn(w receipt.Warning)
}

// Runner executes a plan into a receipt data folder.
type Runner struct {
	Dir     string // the receipt data folder, holding plan.json
	Plan    *receipt.Plan
	Starter Starter
	Events  Events
	// Clock stamps the host snapshots; nil is the machine's clock.
	Clock clock.Clock
	// Capture snapshots the host; nil means CaptureEnv. Tests pass a fake.
	Capture func(when string, collection, pass int, now time.Time, dir string) receipt.Snapshot
	// Others measures the CPU other processes use during each pass; nil means
	// MeasureOthers. Tests pass a fake.
	Others OthersMeter
	// CheckArms, if set, is called before every pass; an error (say, an arm's binary was
	// rebuilt under the run) stops the run with every finished run kept.
	CheckArms func() error
	// CleanUp ends what killed runs left behind before the run starts; nil means CleanUp.
	// Tests pass a fake.
	CleanUp func(dir string) ([]string, error)
	// Total is how many runs Events counts to; 0 means every run of the plan (a shard
	// of a run measures fewer).
	Total int
}

// Outcome summarises a Runner.Run.
type Outcome struct {
	Ran      int // runs executed now
	Resumed  int // runs found already finished on disk
	Failed   int // runs (of all, old and new) that produced no usable samples
	Warnings []receipt.Warning
}

// Run executes every run of the plan that raw.jsonl does not hold yet. A lane that crashes,
// hangs past the timeout or prints bad output is recorded with its error and the run goes
// on. Cancelling ctx stops at once; the run in flight is not recorded and will be repeated
// by a resume.
func (r *Runner) Run(ctx context.Context) (Outcome, error) {
	given := false
	return r.Sequence(ctx, func([]receipt.Record) []receipt.Run {
		if given {
			return nil
		}
		given = true
		return r.Plan.Runs
	})
}

// Next returns the runs to execute next, given every record on disk so far (resumed ones
// included, in log order); nil or empty ends the run. Runs already on disk are skipped.
type Next func(done []receipt.Record) []receipt.Run

// Sequence executes the plan's runs in the batches next chooses, as Run does: a sequential
// run looks at its data after every round and runs only the lanes that still need pairs.
// Every run next returns must be in the plan, or a re-measure of one (Run.Attempt).
func (r *Runner) Sequence(ctx context.Context, next Next) (Outcome, error) {
	sq := &sequence{r: r}
	if err := sq.cleanUp(); err != nil {
		return sq.out, err
	}
	log, recs, err := receipt.Folder(r.Dir).OpenLog()
	if err != nil {
		return sq.out, err
	}
	defer log.Close()
	sq.log, sq.recs = log, recs
	if err := sq.resume(); err != nil {
		return sq.out, err
	}
	for {
		batch := next(sq.recs)
		if len(batch) == 0 {
			return sq.out, nil
		}
		for _, run := range batch {
			if !sq.inPlan(run.Key()) {
				return sq.out, fmt.Errorf("run %+v is not in the plan", run.Key())
			}
		}
		for _, pass := range groupPasses(batch) {
			if err := sq.runPass(ctx, pass); err != nil {
				return sq.out, err
			}
		}
	}
}

// sequence is the state of one Runner.Sequence: the log and its records, which runs are
// done, the unit each lane prints, the host snapshots so far.
type sequence struct {
	r    *Runner
	out  Outcome
	log  *receipt.Log
	recs []receipt.Record

	planned, done map[receipt.Key]bool
	units         map[string]string // lane -> the unit its runs print
	arms          map[string]receipt.Arm
	lanes         map[string]receipt.Lane

	total, finished int
	env             receipt.Env
	// lastKinds are the host problems of the last snapshot of each kind ("before",
	// "after"), so that a problem is reported when it appears, not at every snapshot.
	lastKinds map[string]map[string]bool
	first     bool // no pass measured yet: watch the idle machine first
}

// warn reports a run-stage warning and keeps it in warnings.jsonl, since nothing else in
// the receipt would show it again.
func (sq *sequence) warn(msg string) error {
	w := receipt.Warning{Stage: receipt.StageRun, Text: msg}
	sq.r.Events.Warn(w)
	sq.out.Warnings = append(sq.out.Warnings, w)
	return receipt.Folder(sq.r.Dir).AppendWarnings(w)
}

// cleanUp removes what earlier runs left (CleanUp) and sets aside partial groups of runs
// an interruption cut off, warning about each.
func (sq *sequence) cleanUp() error {
	r := sq.r
	cleanUp := r.CleanUp
	if cleanUp == nil {
		cleanUp = CleanUp
	}
	notes, err := cleanUp(r.Dir)
	if err != nil {
		notes = append(notes, err.Error())
	}
	for _, msg := range notes {
		if err := sq.warn(msg); err != nil {
			return err
		}
	}
	moved, err := r.supersedePartialGroups()
	if err != nil {
		return err
	}
	if moved > 0 {
		return sq.warn(fmt.Sprintf("re-measuring %d runs whose partner runs (the same lane and pass in the other arms) were cut off by the interruption, so that every comparison is made back to back; the earlier runs are kept in %s", moved, receipt.SupersededFile))
	}
	return nil
}

// inPlan reports whether a run is the plan's, or a re-measure of one.
func (sq *sequence) inPlan(k receipt.Key) bool {
	k.Attempt = 0
	return sq.planned[k]
}

// resume indexes the plan and checks the records already on disk against it: each must
// be the plan's, recorded once, with the plan's samples.
func (sq *sequence) resume() error {
	r := sq.r
	sq.planned, sq.done, sq.units = map[receipt.Key]bool{}, map[receipt.Key]bool{}, map[string]string{}
	sq.arms, sq.lanes, sq.lastKinds, sq.first = map[string]receipt.Arm{}, map[string]receipt.Lane{}, map[string]map[string]bool{}, true
	for _, run := range r.Plan.Runs {
		sq.planned[run.Key()] = true
	}
	for _, a := range r.Plan.Arms {
		sq.arms[a.Name] = a
	}
	for _, l := range r.Plan.Lanes {
		sq.lanes[l.Name] = l
		if l.Unit != "" {
			sq.units[l.Name] = l.Unit
		}
	}
	raw := filepath.Join(r.Dir, receipt.RawFile)
	for _, rec := range sq.recs {
		if !sq.inPlan(rec.Key()) || sq.done[rec.Key()] {
			return fmt.Errorf("%s: run %+v is not in the plan or recorded twice; this folder was not written by this plan", raw, rec.Key())
		}
		if rec.OK() && len(rec.Samples) != r.Plan.Protocol.Samples {
			return fmt.Errorf("%s: run %+v has %d samples, the plan %d; this folder was not written by this plan", raw, rec.Key(), len(rec.Samples), r.Plan.Protocol.Samples)
		}
		sq.done[rec.Key()] = true
		if !rec.OK() {
			sq.out.Failed++
		} else if sq.units[rec.Lane] == "" {
			sq.units[rec.Lane] = rec.Unit
		}
	}
	sq.out.Resumed = len(sq.done)
	if sq.out.Resumed > 0 {
		_ = receipt.ReadJSON(filepath.Join(r.Dir, receipt.EnvFile), &sq.env) // a missing env.json only loses old snapshots
	}
	sq.total = len(r.Plan.Runs)
	if r.Total > 0 {
		sq.total = r.Total
	}
	r.Events.Begin(sq.total, sq.out.Resumed)
	sq.finished = sq.out.Resumed
	return nil
}

// snapshot records a host snapshot in env.json, reporting each host problem when it
// appears ("before" and "after" snapshots compared with their own kind, since only
// "after" ones measure a whole pass).
func (sq *sequence) snapshot(s receipt.Snapshot) error {
	kinds := map[string]bool{}
	for _, w := range s.Warnings {
		kind, _, _ := strings.Cut(w, " ")
		kinds[kind] = true
		if !sq.lastKinds[s.When][kind] {
			// Kept in env.json, from which the receipt shows it.
			hw := receipt.Warning{Stage: receipt.StageHost, Text: w}
			sq.r.Events.Warn(hw)
			sq.out.Warnings = append(sq.out.Warnings, hw)
		}
	}
	sq.lastKinds[s.When] = kinds
	sq.env.Snapshots = append(sq.env.Snapshots, s)
	return sq.r.diskError(receipt.Folder(sq.r.Dir).WriteEnv(sq.env))
}

// runPass measures the runs of one pass that are not on disk yet, between host
// snapshots.
func (sq *sequence) runPass(ctx context.Context, pass []receipt.Run) error {
	r := sq.r
	var todo []receipt.Run
	for _, run := range pass {
		if !sq.done[run.Key()] {
			todo = append(todo, run)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	c, p := todo[0].Collection, todo[0].Pass
	if r.CheckArms != nil {
		if err := r.CheckArms(); err != nil {
			return err
		}
	}
	capture, others := r.Capture, r.Others
	if capture == nil {
		capture = CaptureEnv
	}
	if others == nil {
		others = MeasureOthers
	}
	before := capture("before", c, p, r.Clock.Now(), r.Dir)
	if sq.first {
		// Before anything is measured, watch the idle machine briefly, so a busy host is
		// reported up front.
		stop := others()
		time.Sleep(idleWindow)
		busyCheck(&before, stop(), "while flipbench ran nothing")
		sq.first = false
	}
	if err := sq.snapshot(before); err != nil {
		return err
	}
	stopOthers := others()
	for _, run := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.runOne(ctx, run, sq.arms[run.Arm], sq.lanes[run.Lane])
		if err := ctx.Err(); err != nil {
			// Interrupted: this run did not finish, so it is not recorded.
			return err
		}
		if err := sq.record(run, rec); err != nil {
			return err
		}
	}
	after := capture("after", c, p, r.Clock.Now(), r.Dir)
	busyCheck(&after, stopOthers(), "while the pass ran")
	return sq.snapshot(after)
}

// record appends a finished run's record to the log, after the checks a record needs: a
// full disk stops the run (a resume measures it again), a run that left processes or
// failed is reported, and every run of a lane must print the lane's unit.
func (sq *sequence) record(run receipt.Run, rec receipt.Record) error {
	r := sq.r
	if !rec.OK() {
		// A full disk says nothing about the code: stop, and leave the run to be measured
		// again by a resume. The lane may say so, or not (a shell's echo says "I/O
		// error"): a file system it uses that is full says it too.
		full := FullDisks(laneDirs(r.Dir, sq.arms[run.Arm])...)
		if NoSpace(rec) || full != "" {
			return r.noSpace(rec, sq.arms[run.Arm], full)
		}
	}
	if len(rec.Leftover) > 0 {
		// The record keeps them; the receipt lists them.
		r.Events.Warn(receipt.Warning{Stage: receipt.StageRun, Text: fmt.Sprintf("arm %s, lane %s, collection %d pass %d: left %d processes running when it exited, which flipbench ended (%s); a lane must wait for what it starts, or it competes with the runs after it",
			rec.Arm, rec.Lane, rec.Collection, rec.Pass, len(rec.Leftover), strings.Join(rec.Leftover, "; "))})
	}
	if rec.OK() {
		// Every run of a lane must print the same unit, or arms would be compared in
		// different units.
		if u := sq.units[rec.Lane]; u != "" && u != rec.Unit {
			rec.Error = fmt.Sprintf("printed %s, but this lane's other runs print %s", rec.Unit, u)
		} else {
			sq.units[rec.Lane] = rec.Unit
		}
	}
	if err := sq.log.Append(rec); err != nil {
		return r.diskError(err)
	}
	sq.done[run.Key()] = true
	sq.recs = append(sq.recs, rec)
	sq.out.Ran++
	sq.finished++
	if !rec.OK() {
		sq.out.Failed++
		// The record keeps the error; the receipt lists failed runs.
		r.Events.Warn(receipt.Warning{Stage: receipt.StageRun,
			Text: fmt.Sprintf("arm %s, lane %s, collection %d pass %d: %s", rec.Arm, rec.Lane, rec.Collection, rec.Pass, rec.Error)})
	}
	r.Events.RunDone(sq.finished, sq.total, rec)
	return nil
}

// busyCheck records in s the share of CPU other processes used and warns when it is high.
func busyCheck(s *receipt.Snapshot, pct float64, during string) {
	s.BusyPct = pct
	if pct >= busyWarnPct {
		s.Warnings = append(s.Warnings, fmt.Sprintf("host busy %s pass %d of collection %d: other processes used %.0f%% of the CPU %s; stop other work on this machine or rerun, since a busy host adds noise and drift",
			s.When, s.Pass, s.Collection, pct, during))
	}
}

// supersedePartialGroups moves out of raw.jsonl the runs of every (collection, pass, lane)
// group that an interruption cut short: the arms of a group must run back to back, so a
// resume measures the whole group again rather than comparing runs taken hours apart.
func (r *Runner) supersedePartialGroups() (int, error) {
	recs, err := receipt.ReadRecords(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	have := map[receipt.GroupKey]int{}
	for _, rec := range recs {
		have[rec.Group()]++
	}
	partial := map[receipt.GroupKey]bool{}
	for g, n := range have {
		if n < len(r.Plan.Arms) {
			partial[g] = true
		}
	}
	for _, rec := range recs {
		if NoSpace(rec) {
			partial[rec.Group()] = true // recorded by an older flipbench: measure it again
		}
	}
	if len(partial) == 0 {
		return 0, nil
	}
	return receipt.Folder(r.Dir).Supersede(func(rec receipt.Record) bool { return partial[rec.Group()] })
}

// noSpace is the error that stops a run whose lane ran out of disk space.
func (r *Runner) noSpace(rec receipt.Record, arm receipt.Arm, full string) error {
	said := rec.Error
	if l := lastLine(rec.StderrTail); l != "" {
		said = l
	}
	where := DiskSpace(laneDirs(r.Dir, arm)...)
	if full != "" {
		where = full
	}
	return fmt.Errorf("arm %s, lane %s, collection %d pass %d: no space left on device (the lane said %q); the run stopped without recording it, so a resume measures it again; free space on %s",
		rec.Arm, rec.Lane, rec.Collection, rec.Pass, said, where)
}

// laneDirs are the folders whose file systems a lane of arm writes to: its $TMPDIR (the
// arm's own, when its env sets one), its working folder and the receipt folder.
func laneDirs(receiptDir string, arm receipt.Arm) []string {
	tmp := os.TempDir()
	for _, kv := range arm.Env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			tmp = v
		}
	}
	return []string{tmp, arm.Dir, receiptDir}
}

// diskError names the file system when err is a write that failed for want of space.
func (r *Runner) diskError(err error) error {
	if err == nil || !IsNoSpace(err) {
		return err
	}
	return fmt.Errorf("%w; free space on %s", err, DiskSpace(r.Dir))
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// runOne runs one process of the plan and turns it into a record.
func (r *Runner) runOne(ctx context.Context, run receipt.Run, arm receipt.Arm, lane receipt.Lane) receipt.Record {
	return RunOnce(ctx, r.Starter, run, arm, lane, r.Plan.Protocol)
}

// RunOnce runs one lane of one arm under protocol proto and turns it into a record: the
// samples, or the error that made it produce none (a failure to start, a crash, a
// timeout, output that does not parse). The arm's kind (package lanekind), wrapped in the
// instruction counter for a lane that counts instructions, says which processes the run
// starts and reads their output. A zero timeout means 10 minutes; it
// bounds each process.
func RunOnce(ctx context.Context, st Starter, run receipt.Run, arm receipt.Arm, lane receipt.Lane, proto receipt.Protocol) receipt.Record {
	rec := receipt.Record{
		Collection: run.Collection,
		Pass:       run.Pass,
		Order:      run.Order,
		Position:   run.Position,
		Attempt:    run.Attempt,
		Round:      run.Round,
		Arm:        run.Arm,
		Lane:       run.Lane,
		Exit:       -1,
		Samples:    []float64{},
	}
	kind, err := lanekind.ForLane(arm.Kind, lane)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	lane.Iterations = lane.IterationsIn(arm.Name)
	timeout := proto.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	// Named for its owner (package owner), so that the next run removes what a run killed
	// with flipbench leaves (CleanUp).
	scratch, err := os.MkdirTemp("", owner.TempPrefix+owner.Self().String()+"-*-run")
	if err != nil {
		rec.Error = fmt.Sprintf("making the run's scratch folder: %v", err)
		return rec
	}
	defer os.RemoveAll(scratch)
	r := lanekind.Run{
		Lane:    lane.Name,
		Argv:    Expand(arm, run, lane, proto),
		Env:     arm.Env,
		Scratch: scratch,
		Samples: proto.Samples,
		Warmup:  proto.Warmup,
		Unit:    lane.Unit,
		// A lane with a fixed iteration count runs it in every arm.
		Iterations: lane.Iterations,
	}
	var outs []lanekind.Output
	var stamps []LineStamp
	for i, proc := range kind.Prepare(r) {
		p := st.Start(ctx, Command{Argv: proc.Argv, Env: proc.Env, Dir: arm.Dir, Timeout: timeout, CPUs: proto.CPUs, Stamp: true})
		if i == 0 {
			rec.Started, rec.MaxRSSBytes = p.Started.UTC(), p.MaxRSSBytes
		}
		rec.PID, rec.Exit, rec.Ended, rec.StderrTail, rec.Command = p.PID, p.Exit, p.Ended.UTC(), p.StderrTail, proc.Argv
		rec.Leftover = append(rec.Leftover, p.Leftover...)
		if p.Reaper != "" {
			rec.Reaper = p.Reaper
		}
		if p.Err != nil {
			rec.Error = p.Err.Error()
			if p.TimedOut {
				rec.TimedOut = true
				span := min(p.Ended.Sub(p.Started), timeout)
				if lane.Metric == lanekind.MetricCPU || lane.Metric == lanekind.MetricAuto {
					span = 0
					if p.Sched != nil {
						span = time.Duration(p.Sched.CPUNs)
					}
				}
				rec.AtLeast, rec.Unit = timeoutBound(p.Stdout, lane, proto, span)
			}
			return rec
		}
		outs = append(outs, lanekind.Output{Stdout: p.Stdout, Started: p.Started, Ended: p.Ended})
		stamps, rec.Sched = p.Stamps, p.Sched
	}
	s, err := kind.Collect(r, outs)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Samples, rec.Unit, rec.Metrics, rec.Counting = s.Values, s.Unit, s.Metrics, s.Counting
	rec.Iters, rec.Config = s.Iters, s.Config
	if i := receipt.LayoutOf(proto, run.Collection, run.Pass); i < len(arm.Layouts) {
		rec.LayoutSeed = arm.Layouts[i].Seed
	}
	if len(outs) == 1 && len(s.Lines) == len(s.Values) {
		rec.Intervals = Intervals(stamps, s.Lines)
	}
	return rec
}

// Expand fills an arm's command template for one run and appends the arm's extra args.
// Placeholders: {bin} {lane} {bench} (lanekind.BenchPattern) {samples} {warmup} {count} (warmup+samples) {arm} {pass}
// {collection}.
//
// {bin} is the arm's build of the run's layout (receipt.LayoutOf).
func Expand(arm receipt.Arm, run receipt.Run, lane receipt.Lane, p receipt.Protocol) []string {
	bin, _ := arm.BinFor(receipt.LayoutOf(p, run.Collection, run.Pass))
	rep := strings.NewReplacer(
		"{bin}", bin,
		"{lane}", lane.Name,
		"{bench}", lanekind.BenchPattern(lane.Name),
		"{samples}", strconv.Itoa(p.Samples),
		"{warmup}", strconv.Itoa(p.Warmup),
		"{count}", strconv.Itoa(p.Samples+p.Warmup),
		"{arm}", arm.Name,
		"{pass}", strconv.Itoa(run.Pass),
		"{collection}", strconv.Itoa(run.Collection),
	)
	argv := make([]string, 0, len(arm.Command)+len(arm.Args))
	for _, a := range arm.Command {
		argv = append(argv, rep.Replace(a))
	}
	return append(argv, arm.Args...)
}

// groupPasses splits a schedule into its passes, keeping order.
func groupPasses(runs []receipt.Run) [][]receipt.Run {
	var passes [][]receipt.Run
	for i, run := range runs {
		if i == 0 || run.Collection != runs[i-1].Collection || run.Pass != runs[i-1].Pass || run.Attempt != runs[i-1].Attempt {
			passes = append(passes, nil)
		}
		passes[len(passes)-1] = append(passes[len(passes)-1], run)
	}
	return passes
}
