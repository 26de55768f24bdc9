package pipeline

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"golang.org/x/perf/benchunit"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// Iteration counts of gotest lanes (docs/lanes.md, "Fixed iteration counts"): go test
// ramps b.N up again for every sample of a duration benchtime, and every step of the
// ramp runs the benchmark's setup again, so half of a process can be no measured sample,
// and the two arms need not time the same work. A lane with a duration benchtime is
// therefore run once in the base arm at that benchtime (one calibration process), which
// gives its time per operation and so N, the iteration count that makes a sample take
// about the benchtime; every arm then runs -test.benchtime Nx. One check process per
// other arm runs one sample at N: when it takes less than ReplanLow or more than
// ReplanHigh times the benchtime, N is re-planned from the geometric mean of the arms'
// times per operation, and the plan says so (receipt.Lane.Replanned).
//
// A sample also costs time outside the timer: go test calls the benchmark at b.N = 1
// before every sample and then at N, each call after a forced collection, so a
// benchmark's setup before b.ResetTimer (or between StopTimer and StartTimer) runs twice
// per sample. For a lane whose check run spent more than LengthenAbove of the benchtime
// outside its sample, two more processes measure it (see lengthened); when it exceeds
// LengthenAbove of the benchtime, N grows until it is that share of a sample, at most
// MaxLengthen times the benchtime, and the plan says so (receipt.Lane.Lengthened): a
// process then spends its time on samples, not on setups.
//
// A check sample is bounded: it is cut at CheckLimit times the benchtime (plus
// checkSlack for the process's start-up), and an arm whose check was cut, or whose time
// per operation differs from the base's by more than ArmSplit, is calibrated at the
// benchtime itself; arms more than ArmSplit apart then run each their own N
// (receipt.Lane.ArmIterations), so that no arm's sample takes many benchtimes: a 1000x
// slower candidate costs seconds before round 1, not minutes. Their values stay times per
// operation.
const (
	ReplanLow     = 0.5
	ReplanHigh    = 2.0
	LengthenAbove = 1.0 / 3
	MaxLengthen   = 4
	CheckLimit    = 4
	ArmSplit      = 8.0
)

// checkSlack is the time a check process may take beyond CheckLimit benchtimes: its
// start-up and exit.
const checkSlack = 2 * time.Second

// LaneCalibration is what the iteration calibration measured of one lane.
type LaneCalibration struct {
	Lane string
	// Iterations is the lane's fixed b.N (receipt.Lane.Iterations).
	Iterations int
	// Target is the sample time N aims at: the lane's benchtime.
	Target time.Duration
	// PerOp is the time of one operation in each arm, seconds.
	PerOp map[string]float64
	// Overhead is a run's time outside its samples (start-up, exit, the run loop's checks,
	// one sample's setup), from the check runs: their wall time less their one sample.
	Overhead time.Duration
	// PerSample is the time outside the timer of every further sample (the benchmark's
	// setup at b.N = 1 and at N, go test's collections), measured only for a lane whose
	// overhead is large (lengthened); 0 otherwise.
	PerSample time.Duration
	// ArmIterations gives arms whose speeds differ by more than ArmSplit each their own N
	// (receipt.Lane.ArmIterations); nil when every arm runs Iterations.
	ArmIterations map[string]int
	// Replanned says why N is not the base arm's calibration ("" when it is), Lengthened
	// why a sample takes longer than the benchtime ("" when it does not).
	Replanned, Lengthened string
	// Repeated counts the calibration processes measured again because their sample
	// waited for a CPU (quietProbe); Busy says the quietest of some still did.
	Repeated int
	Busy     bool
	// ReusedFrom names the receipt whose calibration the lane reused (ReuseIterations);
	// "" when it was calibrated now.
	ReusedFrom string
}

// timing is the calibration as plan.json keeps it (receipt.Lane.Timing).
func (c LaneCalibration) timing() *receipt.IterationTiming {
	t := &receipt.IterationTiming{PerOpNs: map[string]float64{}, OverheadNs: int64(c.Overhead), PerSampleNs: int64(c.PerSample),
		Repeated: c.Repeated, Busy: c.Busy, ReusedFrom: c.ReusedFrom}
	for arm, v := range c.PerOp {
		t.PerOpNs[arm] = v * 1e9
	}
	return t
}

// calibrationOf returns the calibration a plan's lane keeps (receipt.Lane.Timing), with
// its iteration counts and their reasons; ok is false for a lane without one.
func calibrationOf(l receipt.Lane) (c LaneCalibration, ok bool) {
	t := l.Timing
	if t == nil || l.Iterations <= 0 || len(t.PerOpNs) == 0 {
		return LaneCalibration{}, false
	}
	target, err := time.ParseDuration(l.Benchtime)
	if err != nil {
		return LaneCalibration{}, false
	}
	c = LaneCalibration{Lane: l.Name, Iterations: l.Iterations, Target: target, PerOp: map[string]float64{},
		Overhead: time.Duration(t.OverheadNs), PerSample: time.Duration(t.PerSampleNs), ArmIterations: l.ArmIterations,
		Replanned: l.Replanned, Lengthened: l.Lengthened, Repeated: t.Repeated, Busy: t.Busy, ReusedFrom: t.ReusedFrom}
	for arm, ns := range t.PerOpNs {
		c.PerOp[arm] = ns / 1e9
	}
	return c, true
}

// SampleTime is the time one sample of the lane takes in arm at its fixed N.
func (c LaneCalibration) SampleTime(arm string) time.Duration {
	n := c.Iterations
	if m, ok := c.ArmIterations[arm]; ok {
		n = m
	}
	return time.Duration(c.PerOp[arm] * float64(n) * 1e9)
}

// ProcessTime is about how long one run of the lane in arm takes with warmup+samples
// samples.
func (c LaneCalibration) ProcessTime(arm string, samples, warmup int) time.Duration {
	n := time.Duration(samples + warmup)
	return c.Overhead + n*c.SampleTime(arm) + max(n-1, 0)*c.PerSample
}

// Iterations is what FixIterations did.
type Iterations struct {
	// Lanes are the calibrated lanes.
	Lanes []LaneCalibration
	// Warnings are the lanes whose calibration failed: they keep their duration
	// benchtime.
	Warnings []receipt.Warning
	// Took is the wall time of the calibration.
	Took time.Duration
}

// Note says in one line which lanes were re-planned or lengthened, "" when none was: a
// re-planned N is no mistake (a candidate 3x slower makes one), nor is a setup that
// takes longer than the samples, so it is a note, and plan.json keeps each lane's
// reason (lanes[].replanned, lanes[].lengthened).
func (it Iterations) Note() string {
	var replanned, lengthened, busy []string
	repeated := 0
	for _, c := range it.Lanes {
		if c.ReusedFrom != "" {
			continue // said by reusedNote
		}
		repeated += c.Repeated
		if c.Busy {
			busy = append(busy, c.Lane)
		}
		if c.Replanned != "" {
			replanned = append(replanned, fmt.Sprintf("%s %dx", c.Lane, c.Iterations))
		}
		if c.Lengthened != "" {
			lengthened = append(lengthened, fmt.Sprintf("%s %dx", c.Lane, c.Iterations))
		}
	}
	var notes []string
	if n := reusedNote(it.Lanes); n != "" {
		notes = append(notes, n)
	}
	if repeated > 0 {
		still := "every lane then found a quiet sample"
		if len(busy) > 0 {
			still = fmt.Sprintf("the quietest of %s still waited, and no later run reuses its counts", shortList(busy))
		}
		notes = append(notes, fmt.Sprintf("the iteration calibration measured %s again whose sample waited for a CPU over %.0f%% of its time (a busy host); %s",
			human.Count(repeated, "process", "processes"), 100*driftcheck.MaxWaitShare, still))
	}
	if len(replanned) > 0 {
		notes = append(notes, fmt.Sprintf("iteration counts re-planned for %d of %d lanes to the geometric mean of the arms' times per operation, since a check sample at the base's N took less than %gx or more than %gx the benchtime in another arm (the arms differ, or the host is busy): %s; plan.json says why for each (lanes[].replanned)",
			len(replanned), len(it.Lanes), ReplanLow, ReplanHigh, shortList(replanned)))
	}
	if len(lengthened) > 0 {
		notes = append(notes, fmt.Sprintf("samples lengthened for %d of %d lanes whose time outside the timer per sample (their setup, which go test runs twice per sample) was more than %.0f%% of the benchtime, so that it is at most that share of a sample (at most %dx the benchtime): %s; plan.json says why for each (lanes[].lengthened)",
			len(lengthened), len(it.Lanes), 100*LengthenAbove, MaxLengthen, shortList(lengthened)))
	}
	return strings.Join(notes, "; ")
}

// shortList joins at most eight phrases, then says how many more there are.
func shortList(parts []string) string {
	const show = 8
	if len(parts) > show {
		return joinAnd(append(parts[:show:show], fmt.Sprintf("%d more", len(parts)-show)))
	}
	return joinAnd(parts)
}

// FixIterations calibrates the iteration count of every gotest lane of plan whose
// benchtime is a duration (see ReplanLow), through st, and writes it into plan.Lanes.
// A lane that fails its calibration keeps its duration benchtime and gets a warning.
// The clock now times the calibration; nil is the machine's.
func FixIterations(ctx context.Context, plan *receipt.Plan, st harness.Starter, now clock.Clock) (Iterations, error) {
	started := now.Now()
	var it Iterations
	if len(plan.Arms) < 2 || !durationArms(plan) {
		return it, nil
	}
	proto := plan.Protocol
	proto.Samples, proto.Warmup = 1, 0
	warn := func(format string, args ...any) {
		it.Warnings = append(it.Warnings, receipt.Warning{Stage: receipt.StageBenchmark, Text: fmt.Sprintf(format, args...)})
	}
	for i := range plan.Lanes {
		l := &plan.Lanes[i]
		if l.Iterations > 0 || l.Counter != nil || !lanekind.IsDuration(l.Benchtime) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return Iterations{}, err
		}
		target, _ := time.ParseDuration(l.Benchtime)
		cal, err := calibrateLane(ctx, st, plan, *l, proto, target, now)
		if err != nil {
			warn("lane %s: the iteration calibration failed (%v): it runs at benchtime %s, a b.N ramp-up in every sample", l.Name, err, l.Benchtime)
			continue
		}
		l.Iterations, l.ArmIterations, l.Replanned, l.Lengthened = cal.Iterations, cal.ArmIterations, cal.Replanned, cal.Lengthened
		l.Timing = cal.timing()
		it.Lanes = append(it.Lanes, cal)
	}
	it.Took = now.Since(started)
	return it, nil
}

// durationArms reports whether every arm runs lanes with b.N loops at a duration
// benchtime (gotest arms of one harness).
func durationArms(plan *receipt.Plan) bool {
	for _, a := range plan.Arms {
		kind, err := lanekind.Lookup(a.Kind)
		if err != nil {
			return false
		}
		bt, loops := kind.Benchtime(a.Command)
		if !loops || !lanekind.IsDuration(bt) {
			return false
		}
	}
	return true
}

// probe is what one calibration process measured: the mean time per operation of its
// samples, the sum of its sample times, how long the run took (from before the process
// started to after the run loop's checks on it: a scratch folder, the scan for processes
// it left) and the process's wall time.
type probe struct {
	perOp         float64
	sampled       time.Duration
	took, process time.Duration
	// cut says the process was cut at its time limit (a check sample of a far slower
	// arm): it measured nothing.
	cut bool
	// wait is the largest share of a sample's interval the process waited for a CPU (0
	// when no interval was measured).
	wait float64
}

// busy reports whether a sample of the probe waited for a CPU over the analysis's limit.
func (p probe) busy() bool { return p.wait > driftcheck.MaxWaitShare }

// quietAttempts is how many processes a calibration probe may take to find samples that
// did not wait for a CPU.
const quietAttempts = 3

// quietProbe runs a calibration process through run until its samples did not wait for a
// CPU over the analysis's limit (driftcheck.MaxWaitShare), at most quietAttempts times,
// and returns the quietest, counting the processes measured again in *repeated and
// setting *busy when even the quietest waited. It stops repeating when a process waited
// about as much as the one before (within a fifth): a lane whose own threads wait for
// each other's CPUs waits alike on a quiet host, and repeating it buys nothing.
func quietProbe(run prober, repeated *int, busy *bool) prober {
	return func(arm receipt.Arm, lane receipt.Lane, samples int, limit time.Duration) (probe, error) {
		var best probe
		for attempt := range quietAttempts {
			p, err := run(arm, lane, samples, limit)
			if err != nil || p.cut {
				return p, err
			}
			if attempt > 0 && p.wait >= 0.8*best.wait {
				if p.wait < best.wait {
					best = p
				}
				break
			}
			if attempt == 0 || p.wait < best.wait {
				best = p
			}
			if !p.busy() || attempt == quietAttempts-1 {
				break
			}
			*repeated++
		}
		if best.busy() {
			*busy = true
		}
		return best, nil
	}
}

// outside is the process's time outside its samples.
func (p probe) outside() time.Duration { return max(p.process-p.sampled, 0) }

// prober runs one calibration process of lane in arm with samples samples, cut after
// limit (0: the protocol's timeout).
type prober func(arm receipt.Arm, lane receipt.Lane, samples int, limit time.Duration) (probe, error)

// calibrateLane runs lane once at its duration benchtime in the base arm, picks N, and
// checks N with one sample in every other arm; then it lengthens the samples of a lane
// whose setup outside the timer is large (lengthened).
func calibrateLane(ctx context.Context, st harness.Starter, plan *receipt.Plan, l receipt.Lane, proto receipt.Protocol, target time.Duration, now clock.Clock) (LaneCalibration, error) {
	var repeated int
	var busy bool
	run := func(arm receipt.Arm, lane receipt.Lane, samples int, limit time.Duration) (probe, error) {
		return calibrationProbe(ctx, st, arm, lane, proto, samples, limit, now)
	}
	if m := plan.Method; m != nil && m.Interference == driftcheck.InterferenceRunQueue20 {
		// The analysis sets aside samples that waited for a CPU: the calibration looks
		// for samples that did not.
		run = quietProbe(run, &repeated, &busy)
	}
	cal, err := calibrateWith(run, plan, l, target)
	cal.Repeated, cal.Busy = repeated, busy
	return cal, err
}

// calibrateWith is calibrateLane with its calibration processes run by run.
func calibrateWith(run prober, plan *receipt.Plan, l receipt.Lane, target time.Duration) (LaneCalibration, error) {
	cal := LaneCalibration{Lane: l.Name, Target: target, PerOp: map[string]float64{}}
	base := plan.Arms[0]
	p0, err := run(base, l, 1, 0)
	if err != nil {
		return cal, err
	}
	cal.PerOp[base.Name] = p0.perOp
	cal.Iterations = iterationsFor(target, p0.perOp)
	fixed := l
	fixed.Iterations = cal.Iterations
	var overhead time.Duration
	var outside []string
	checked := 0
	for _, a := range plan.Arms[1:] {
		p, err := run(a, fixed, 1, CheckLimit*target+checkSlack)
		if err != nil {
			return cal, err
		}
		if p.cut || farApart(p.perOp, p0.perOp) {
			// A far slower or faster arm: its own calibration at the benchtime, not
			// CheckLimit benchtimes of a sample.
			own, err := run(a, l, 1, 0)
			if err != nil {
				return cal, err
			}
			cal.PerOp[a.Name] = own.perOp
			continue
		}
		cal.PerOp[a.Name] = p.perOp
		sample := time.Duration(p.perOp * float64(cal.Iterations) * 1e9)
		overhead += max(p.took-sample, 0)
		checked++
		// A sample of one operation longer than the benchtime cannot be shortened.
		if r := float64(sample) / float64(target); r < ReplanLow || r > ReplanHigh && cal.Iterations > 1 {
			outside = append(outside, fmt.Sprintf("%s in arm %s", sample.Round(time.Microsecond), a.Name))
		}
	}
	if checked > 0 {
		cal.Overhead = overhead / time.Duration(checked)
	}
	if splitArms(&cal, plan, target) {
		return cal, nil // each arm's own N: no common N to lengthen
	}
	if len(outside) > 0 {
		logSum := 0.0
		for _, v := range cal.PerOp {
			logSum += math.Log(v)
		}
		if n := iterationsFor(target, math.Exp(logSum/float64(len(cal.PerOp)))); n != cal.Iterations {
			cal.Replanned = fmt.Sprintf("re-planned from %dx to %dx: at %d iterations a sample took %s, outside [%gx, %gx] of the %s benchtime; "+
				"%dx is the geometric mean of the arms, the same for every arm", cal.Iterations, n, cal.Iterations, joinAnd(outside), ReplanLow, ReplanHigh, target, n)
			cal.Iterations = n
		}
	}
	fixed.Iterations = cal.Iterations
	return lengthened(cal, run, plan.Arms[len(plan.Arms)-1], fixed), nil
}

// farApart reports whether two times per operation differ by more than ArmSplit.
func farApart(a, b float64) bool { return a > ArmSplit*b || b > ArmSplit*a }

// splitArms gives every arm its own N when some arm's time per operation differs from
// the base's by more than ArmSplit, and says so; it reports whether it did.
func splitArms(cal *LaneCalibration, plan *receipt.Plan, target time.Duration) bool {
	base := plan.Arms[0].Name
	var apart []string
	for _, a := range plan.Arms[1:] {
		if farApart(cal.PerOp[a.Name], cal.PerOp[base]) {
			apart = append(apart, fmt.Sprintf("%s %s per operation against %s's %s", a.Name, human.Value(cal.PerOp[a.Name], "sec/op"), base, human.Value(cal.PerOp[base], "sec/op")))
		}
	}
	if len(apart) == 0 {
		return false
	}
	cal.ArmIterations = map[string]int{}
	var counts []string
	for _, a := range plan.Arms {
		n := iterationsFor(target, cal.PerOp[a.Name])
		cal.ArmIterations[a.Name] = n
		counts = append(counts, fmt.Sprintf("%s %dx", a.Name, n))
	}
	cal.Iterations = cal.ArmIterations[base]
	cal.Replanned = fmt.Sprintf("each arm runs its own iteration count (%s), so that a sample takes about the %s benchtime in every arm: %s, more than %gx apart; the values stay times per operation",
		joinAnd(counts), target, joinAnd(apart), ArmSplit)
	return true
}

// calibrationProbe runs one calibration process of lane in arm with samples samples, cut
// after limit (0: the protocol's timeout; the probe then says it was cut).
func calibrationProbe(ctx context.Context, st harness.Starter, arm receipt.Arm, lane receipt.Lane, proto receipt.Protocol, samples int, limit time.Duration, now clock.Clock) (probe, error) {
	pr := proto
	pr.Samples = samples
	if limit > 0 && (pr.Timeout <= 0 || limit < pr.Timeout) {
		pr.Timeout = limit
	}
	t0 := now.Now()
	rec := harness.RunOnce(ctx, st, receipt.Run{Lane: lane.Name, Arm: arm.Name}, arm, lane, pr)
	p := probe{process: rec.Ended.Sub(rec.Started)}
	p.took = max(now.Since(t0), p.process)
	if rec.TimedOut && limit > 0 && pr.Timeout == limit {
		p.cut = true
		return p, nil
	}
	if !rec.OK() {
		return p, fmt.Errorf("arm %s: %s", arm.Name, rec.Error)
	}
	for _, iv := range rec.Intervals {
		if iv.Measured() {
			p.wait = max(p.wait, iv.WaitShare())
		}
	}
	if len(rec.Samples) != samples {
		return p, fmt.Errorf("arm %s: %d samples, want %d", arm.Name, len(rec.Samples), samples)
	}
	var ops float64
	for i, x := range rec.Samples {
		v, unit := benchunit.Tidy(x, rec.Unit)
		if unit != "sec/op" || !(v > 0) {
			return p, fmt.Errorf("arm %s: its samples are %s, not a time per operation", arm.Name, rec.Unit)
		}
		n := max(lane.Iterations, 1)
		if i < len(rec.Iters) && rec.Iters[i] > 0 {
			n = rec.Iters[i]
		}
		p.sampled += time.Duration(v * float64(n) * 1e9)
		ops += float64(n)
	}
	p.perOp = p.sampled.Seconds() / ops
	return p, nil
}

// lengthenSamples is the samples of the processes that measure the time outside the
// timer per sample: the difference to a one-sample process leaves out the process's own
// start-up and exit.
const lengthenSamples = 3

// lengthened returns cal with the time outside the timer per sample measured, and its
// samples lengthened (LaneCalibration.lengthen) when that pays. Only a lane whose whole
// overhead exceeds LengthenAbove of the benchtime is measured: a process of
// lengthenSamples samples less a process of one, both at N in arm a, gives the time
// outside the timer per sample; when it exceeds LengthenAbove of the benchtime, one more
// process of lengthenSamples samples at the longer N must find it again above that share
// and not grown by more than the square root of the growth of N. Time outside the timer
// that grows with N (a benchmark that stops its timer inside the loop to rebuild its
// input) is no setup a longer sample spreads, and a burst on the host during one of the
// processes makes the two measurements disagree: either way the lane keeps its N.
func lengthened(cal LaneCalibration, run prober, a receipt.Arm, lane receipt.Lane) LaneCalibration {
	above := time.Duration(LengthenAbove * float64(cal.Target))
	if cal.Target <= 0 || cal.Overhead <= above {
		return cal
	}
	one, err := run(a, lane, 1, 0)
	if err != nil {
		return cal
	}
	many, err := run(a, lane, lengthenSamples, 0)
	if err != nil {
		return cal
	}
	cal.PerSample = max(many.outside()-one.outside(), 0) / (lengthenSamples - 1)
	long := cal
	long.lengthen()
	if long.Lengthened == "" {
		return cal
	}
	lane.Iterations = long.Iterations
	longer, err := run(a, lane, lengthenSamples, 0)
	if err != nil {
		return cal
	}
	again := cal.PerSample + (longer.outside()-many.outside())/lengthenSamples
	if again <= above || float64(again) > math.Sqrt(float64(long.Iterations)/float64(cal.Iterations))*float64(cal.PerSample) {
		return cal
	}
	long.PerSample = again
	return long
}

// lengthen raises the iteration count of a lane whose time outside the timer per sample
// (PerSample) is more than LengthenAbove of its benchtime, so that it is that share of a
// sample at most, and a sample at most MaxLengthen times the benchtime.
func (c *LaneCalibration) lengthen() {
	if c.Target <= 0 || c.Iterations < 1 || float64(c.PerSample) <= LengthenAbove*float64(c.Target) {
		return
	}
	want := min(time.Duration(float64(c.PerSample)/LengthenAbove), MaxLengthen*c.Target)
	n := int(math.Round(float64(c.Iterations) * float64(want) / float64(c.Target)))
	if n <= c.Iterations {
		return
	}
	c.Lengthened = fmt.Sprintf("lengthened from %dx to %dx: outside the timer, a sample took %s more (the benchmark's setup, which go test runs at b.N = 1 and again at N, and its collections), more than %.0f%% of the %s benchtime; at %dx a sample takes about %s",
		c.Iterations, n, c.PerSample.Round(time.Millisecond), 100*LengthenAbove, c.Target, n, want.Round(time.Millisecond))
	c.Iterations = n
}

// iterationsFor returns the iteration count that makes a sample of target take about
// its time at perOp seconds per operation: at least 1.
func iterationsFor(target time.Duration, perOp float64) int {
	n := math.Round(target.Seconds() / perOp)
	if !(n >= 1) {
		return 1
	}
	return int(min(n, 1e9))
}

// joinAnd joins phrases: "a", "a and b", "a, b and c".
func joinAnd(ps []string) string {
	switch len(ps) {
	case 0:
		return ""
	case 1:
		return ps[0]
	}
	out := ps[0]
	for _, p := range ps[1 : len(ps)-1] {
		out += ", " + p
	}
	return out + " and " + ps[len(ps)-1]
}
