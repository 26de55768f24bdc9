// Package receipt defines the on-disk form of one experiment run: the receipt folder.
//
// A receipt is a markdown page results/<stamp>-exp<NNN>-<label>.md and a data folder of the
// same name holding:
//
//	plan.json             the resolved plan: spec snapshot, protocol, seed, arms, lanes, schedule
//	raw.jsonl             one Record per finished run (one process), appended and fsynced at once
//	env.json              environment snapshots taken before and after every pass
//	looks.jsonl           a sequential run's looks, one per round
//	warnings.jsonl        warnings the other files cannot show again
//	superseded.jsonl      runs taken out of raw.jsonl to be measured again
//	incidence.json        the incidence report, with incidence.md and incidence-runs.jsonl
//	profiles.json         the profiled lanes' differences, the profiles in profiles/
//	<arm>.bench           every sample of one arm in Go benchmark format, for benchstat
//	analysis.json         the drift check's result
//	*.svg                 plots of the lanes and the profile differences
//	manifest.json         the SHA-256 of every other file, and of the page
//
// Folder is the one writer of these files; the Read functions read them. Everything after
// the run (drift check, receipt page, experiment page) is computed from this folder alone,
// so it can be repeated and re-checked at any time.
package receipt

import (
	"strings"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/cpuset"
)

// Record is one finished run: one lane of one arm in one process.
type Record struct {
	// SchemaVersion is RecordSchema, set when the record is appended to the log.
	SchemaVersion int    `json:"schema_version,omitempty"`
	Collection    int    `json:"collection"`
	Pass          int    `json:"pass"` // 1-based within the collection
	Order         string `json:"order"`
	// Position is the run's Position in the plan (0 in older receipts).
	Position int `json:"position,omitempty"`
	// Attempt and Round are the run's (Run.Attempt, Run.Round): set for a re-measure of
	// a pass whose run was set aside as contaminated.
	Attempt int       `json:"attempt,omitempty"`
	Round   int       `json:"round,omitempty"`
	Arm     string    `json:"arm"`
	Lane    string    `json:"lane"`
	PID     int       `json:"pid"`
	Exit    int       `json:"exit"`
	Samples []float64 `json:"samples"` // primary metric, in the unit the lane printed
	Unit    string    `json:"unit"`
	// Metrics holds every other metric the lane printed, one value per sample.
	Metrics map[string][]float64 `json:"metrics,omitempty"`
	// Iters is the iteration count of each sample as the lane printed it (b.N of a Go
	// benchmark); absent in records of older receipts, which the .bench files then write
	// as 1.
	Iters []int `json:"iters,omitempty"`
	// Intervals are what the kernel counted over each sample's interval, one per sample,
	// in Samples' order: from the output line before the sample's to its own (the
	// process's start for the first), the time that passed, the process's threads' time
	// on a CPU and their time runnable but waiting for one (run-queue delay). Absent where
	// the kernel gives no per-thread schedstat, and for counted lanes.
	Intervals []Interval `json:"intervals,omitempty"`
	// Sched is what the kernel counted over the whole process (absent in older records).
	Sched *ProcessSched `json:"sched,omitempty"`
	// LayoutSeed is the -randlayout seed of the build the run measured (Arm.Layouts); 0
	// when the arm has one build.
	LayoutSeed int64 `json:"layout_seed,omitempty"`
	// Config holds the file configuration lines the lane printed (goos, goarch, pkg, cpu
	// for a Go test binary), written at the top of the arm's .bench file.
	Config      map[string]string `json:"config,omitempty"`
	MaxRSSBytes int64             `json:"max_rss_bytes"`
	Started     time.Time         `json:"started"`
	Ended       time.Time         `json:"ended"`
	// Error says why the run produced no usable samples: a crash, a timeout, output that
	// does not parse, or the wrong number of samples. Empty when the run is good.
	Error string `json:"error,omitempty"`
	// TimedOut marks a run killed at the protocol's timeout. AtLeast, when above 0, is
	// what the run's level per operation is known to be at least, in Unit: the wall time
	// until the kill over the operations the run had to do (warmup and samples, each of
	// the lane's iterations per sample), a lower bound of its mean time per operation up to
	// the process's start-up, which is small against a timeout set well beyond a normal
	// run. 0 when the harness cannot say (a lane whose unit is not a time per operation, or
	// whose operations per sample are unknown): the run then counts as failed. A run with
	// a bound is a right-censored observation (docs/methodology.md: failed and timed-out
	// runs).
	TimedOut bool    `json:"timed_out,omitempty"`
	AtLeast  float64 `json:"at_least,omitempty"`
	// StderrTail is the last lines the process wrote to stderr.
	StderrTail string   `json:"stderr_tail,omitempty"`
	Command    []string `json:"command"`
	// Leftover describes the processes the run left running when it exited, which
	// flipbench then ended ("pid N: command"); empty when it left none.
	Leftover []string `json:"leftover,omitempty"`
	// Reaper names what found the processes the run left running, beyond its process
	// group: "cgroup+subreaper" (a cgroup of its own, with flipbench the child subreaper),
	// "subreaper" (flipbench the child subreaper: every descendant whose parent exits is
	// reparented to it) or "owner mark" (only the mark in the environment, which a process
	// that clears its environment escapes). Absent in records of older receipts, and of
	// runs whose process did not start.
	Reaper string `json:"reaper,omitempty"`
	// Counting is set for a run of an instruction-count lane (Lane.Metric
	// "instructions"): how long counting took against the native run. PID, Exit,
	// StderrTail and Command are the counted process's; MaxRSSBytes and Started the
	// native one's.
	Counting *Counting `json:"counting,omitempty"`
}

// Span says where a measured call starts and ends: "from main.opStart to main.opEnd", or
// "to testing.(*common).runCleanup" (from one entry to the next).
func (c Counter) Span() string {
	if c.Start == "" {
		return "to " + c.End
	}
	return "from " + c.Start + " to " + c.End
}

// Counting is what one run of an instruction-count lane measured besides its samples.
type Counting struct {
	// Tool is the counter that wrote the profile, as it names itself
	// ("callgrind-3.19.0").
	Tool string `json:"tool"`
	// Calls is the number of measured calls found in the profile (warmup included; a
	// gotest lane with a b.N loop makes two per repetition).
	Calls int `json:"calls"`
	// NativeSeconds and CountedSeconds are the wall times of the lane's native process
	// and of the same command under the counter; their ratio is counting's slowdown.
	NativeSeconds  float64 `json:"native_seconds"`
	CountedSeconds float64 `json:"counted_seconds"`
}

// OK reports whether the run produced usable samples.
func (r Record) OK() bool { return r.Error == "" }

// Key identifies a run in the schedule: its place in the plan and its attempt (0 for the
// plan's run, n for its n-th re-measure).
type Key struct {
	Collection int
	Pass       int
	Lane       string
	Arm        string
	Attempt    int
}

// IterationsIn returns the b.N every sample of the lane runs in arm: its own
// (ArmIterations), else Iterations.
func (l Lane) IterationsIn(arm string) int {
	if n, ok := l.ArmIterations[arm]; ok {
		return n
	}
	return l.Iterations
}

// Interval is what the kernel counted over one sample's interval of a lane process.
type Interval struct {
	// WallNs is the time that passed, CPUNs its threads' time on a CPU, WaitNs their
	// time runnable but waiting for a CPU (a neighbour's time slice, or one thread of the
	// lane waiting for another's CPU); 0, 0, 0 when the interval could not be measured (its
	// line arrived in one read with the line before).
	WallNs int64 `json:"wall_ns"`
	CPUNs  int64 `json:"cpu_ns"`
	WaitNs int64 `json:"wait_ns"`
}

// MinIntervalNs is the shortest interval whose counts say anything: the kernel accounts
// run-queue delay at its scheduler's ticks, so a sample much shorter than a millisecond
// (a lane that prints its results at once, or an operation of microseconds timed alone)
// has no interval worth judging, and is judged as unmeasured.
const MinIntervalNs = 1_000_000

// Measured reports whether the interval was measured, and long enough to judge
// (MinIntervalNs).
func (i Interval) Measured() bool { return i.WallNs >= MinIntervalNs }

// WaitShare is the share of the interval the process's threads spent waiting for a CPU.
func (i Interval) WaitShare() float64 {
	if i.WallNs <= 0 {
		return 0
	}
	return float64(i.WaitNs) / float64(i.WallNs)
}

// ProcessSched is what the kernel counted over a whole lane process.
type ProcessSched struct {
	// CPUNs is the process's user and system time at its exit (rusage, its children
	// that it waited for included).
	CPUNs int64 `json:"cpu_ns"`
	// StealNs is the steal time of the machine's CPUs over the process's life: time a
	// hypervisor gave them to other guests (0 on bare metal).
	StealNs int64 `json:"steal_ns,omitempty"`
	// ThrottledNs is how long flipbench's cgroup was held back by its CPU limit over the
	// process's life (0 without a limit).
	ThrottledNs int64 `json:"throttled_ns,omitempty"`
}

// Key returns the record's place in the schedule.
func (r Record) Key() Key { return Key{r.Collection, r.Pass, r.Lane, r.Arm, r.Attempt} }

// MeasuredRound returns the round that measured the record (Run.MeasuredRound).
func (r Record) MeasuredRound() int { return measuredRound(r.Pass, r.Round) }

// Plan is everything needed to run, resume and re-analyse an experiment run.
type Plan struct {
	// SchemaVersion is PlanSchema (harness.NewPlan sets it).
	SchemaVersion int    `json:"schema_version,omitempty"`
	Experiment    int    `json:"experiment"`
	Title         string `json:"title"`
	Page          string `json:"page"` // the experiment page, relative to the ledger root
	Label         string `json:"label"`
	Profile       string `json:"profile,omitempty"`
	Stamp         string `json:"stamp"`
	// Command is the flipbench command line that made the plan.
	Command  []string          `json:"command"`
	Protocol Protocol          `json:"protocol"`
	Drift    driftcheck.Config `json:"drift"`
	Arms     []Arm             `json:"arms"` // base first, then candidates in spec order
	Lanes    []Lane            `json:"lanes"`
	// Rule is the rest of the decision rule as the page pre-registered it when the run
	// started: the lanes' roles, expectations, better directions and floors are in Lanes,
	// the stopping rule in Protocol and the thresholds in Drift. Finalize and check
	// compare the page with it field by field. It is nil in plans of schema 2 and older,
	// which did not record it.
	Rule *Rule `json:"rule,omitempty"`
	// Method is the analysis method the run was planned with (driftcheck.Method): its
	// looks, its receipt's analysis and the page's verdict are computed by it, until
	// someone re-analyses the page on purpose (finalize --reanalyse). It is nil in plans
	// made before methods were recorded, which are judged by driftcheck.ImpliedMethod.
	Method *driftcheck.Method `json:"method,omitempty"`
	Runs   []Run              `json:"runs"` // the schedule, in execution order
	// Continues, for a run that continues an earlier receipt's pairs (flipbench gate
	// --continue), is that receipt's folder: relative to this folder's parent when they
	// share it, else absolute.
	Continues string `json:"continues,omitempty"`
	// ContinueTuned, for such a run, is the rounds its confidence sequences are tightest
	// at: fixed by the first continuation (its earlier rounds and its own max-pairs) and
	// kept by every later one, so that a gate continued again and again judges every look
	// by one sequence (a sequence re-tuned to the data seen would not hold its error).
	ContinueTuned int `json:"continue_tuned_rounds,omitempty"`
	// Shard is the part of the run this receipt holds when the run is spread over
	// machines (a shard, or a merge of shards); nil for a run on one machine.
	Shard *Shard `json:"shard,omitempty"`
	// ProfileLanes says which lanes get one more process per arm with profiling after
	// the measured runs (docs/profiles.md): "reproduced", "all", or empty for none.
	ProfileLanes string `json:"profile_lanes,omitempty"`
	// ProfileSamples is the samples a profiled process runs (after the protocol's
	// warmup); 0 means the protocol's samples.
	ProfileSamples int `json:"profile_samples,omitempty"`
}

// Protocol is the resolved protocol of a run.
type Protocol struct {
	Samples     int           `json:"samples"`
	Warmup      int           `json:"warmup"`
	Passes      int           `json:"passes"`
	Collections int           `json:"collections"`
	Seed        int64         `json:"seed"`
	Timeout     time.Duration `json:"timeout_ns"`
	// Sequential is the stopping rule of a sequential run; nil for a fixed protocol.
	// Its runs are scheduled in rounds (Round) and Passes is 2 x MaxPairs.
	Sequential *Sequential `json:"sequential,omitempty"`
	// Design is the arm-order design of the schedule (harness.ArmDesign): "flip" for two
	// arms, "williams" for more; empty in plans made before designs. SeparateArms is set
	// when a pass ran every lane's first arm, then every lane's second, and so on.
	Design       string `json:"design,omitempty"`
	SeparateArms bool   `json:"separate_arms,omitempty"`
	// CPUs are the CPUs every lane process was pinned to (protocol.cpus), sorted; nil
	// when the operating system placed them.
	CPUs []int `json:"cpus,omitempty"`
	// OwnCPUs are the CPUs flipbench's own threads kept to while the lanes ran, away from
	// the lanes' (harness.OwnPlacement); nil when they were not moved.
	OwnCPUs []int `json:"own_cpus,omitempty"`
	// Layouts is how many layout builds each arm runs (Arm.Layouts; protocol.layouts); 0 in
	// plans made before layouts, whose arms ran one build each.
	Layouts int `json:"layouts,omitempty"`
}

// Pinned says where the lanes ran when the protocol pinned them: "every lane process
// pinned to CPU 1, flipbench's own threads on CPU 0"; "" when it did not.
func (p Protocol) Pinned() string {
	if len(p.CPUs) == 0 {
		return ""
	}
	s := "every lane process " + cpuset.Placement(p.CPUs)
	if len(p.OwnCPUs) > 0 {
		s += ", flipbench's own threads " + strings.TrimPrefix(cpuset.Placement(p.OwnCPUs), "pinned ")
	}
	return s
}

// Sequential is a run's pre-registered stopping rule: look after every round (one pass
// pair in every collection) from MinPairs on, stop when every lane the decision needs is
// decided, after MaxPairs rounds, or when the measured wall time passes Budget.
type Sequential struct {
	MinPairs int           `json:"min_pairs"`
	MaxPairs int           `json:"max_pairs"`
	Budget   time.Duration `json:"budget_ns"`
	// StopUndecidable stops measuring a lane once a look finds it cannot be decided
	// within the budget at its noise, unless the decision rule reads it (a primary,
	// guard or control of a run with a page). flipbench compare sets it.
	StopUndecidable bool `json:"stop_undecidable,omitempty"`
	// FitBudget moves the rule's last look to the rounds the budget buys, once round 1
	// has measured the time of a round (flipbench gate sets it): MaxPairs becomes that
	// many rounds in the plan, and PlannedMaxPairs keeps the one planned. A gate then ends
	// pass or fail within its budget instead of running out of it undecided.
	FitBudget       bool `json:"fit_budget,omitempty"`
	PlannedMaxPairs int  `json:"planned_max_pairs,omitempty"`
}

// Round returns the round of pass p (1-based within its collection): its pass pair.
func Round(p int) int { return (p + 1) / 2 }

// Arm is one built arm as it was run.
type Arm struct {
	Name   string   `json:"name"`
	Bin    string   `json:"bin"`
	SHA256 string   `json:"sha256"`
	Args   []string `json:"args,omitempty"`
	Env    []string `json:"env,omitempty"`
	// Source describes where the binary came from (prebuilt path, or commit + patch).
	Source      string `json:"source"`
	Commit      string `json:"commit,omitempty"`
	Dirty       bool   `json:"dirty,omitempty"`
	DiffSHA256  string `json:"diff_sha256,omitempty"`
	PatchSHA256 string `json:"patch_sha256,omitempty"`
	// Command is the lane command template for this arm, placeholders unexpanded.
	Command []string `json:"command"`
	// Kind is the harness kind, one of lanekind.Names().
	Kind string `json:"kind"`
	// Dir is the working directory of the arm's lane processes; empty means flipbench's.
	Dir string `json:"dir,omitempty"`
	// Layouts are the arm's layout builds (protocol.layouts): the same source linked with
	// -ldflags=-randlayout=SEED, each a function layout of its own; a run measures the one
	// its pass pair's layout index names (LayoutOf). Empty: every run measures Bin.
	Layouts []ArmLayout `json:"layouts,omitempty"`
}

// ArmLayout is one layout build of an arm.
type ArmLayout struct {
	Seed   int64  `json:"seed"`
	Bin    string `json:"bin"`
	SHA256 string `json:"sha256"`
}

// BinFor returns the binary of the arm's layout index i: its layout build, or Bin when it
// has none.
func (a Arm) BinFor(i int) (bin, sha string) {
	if i >= 0 && i < len(a.Layouts) {
		return a.Layouts[i].Bin, a.Layouts[i].SHA256
	}
	return a.Bin, a.SHA256
}

// LayoutOf returns the layout index the runs of a pass measure: the layouts rotate with
// the pass pairs, starting one later in each collection, so that each pass pair's arms run
// one layout build each, both passes of a pair the same, and every layout comes round
// once in any layouts consecutive pairs. 0 for a protocol of one layout, and for a run of
// no pass (a calibration).
func LayoutOf(p Protocol, collection, pass int) int {
	if collection < 1 || pass < 1 {
		return 0
	}
	return driftcheck.LayoutIndex(p.Layouts, collection-1, (pass+1)/2)
}

// Lane is one lane as it was run: its role, its expected direction (one for every
// candidate, or one per candidate in ExpectArms), its unit, better direction and floor.
type Lane struct {
	Name       string            `json:"name"`
	Role       Role              `json:"role"`
	Expect     string            `json:"expect,omitempty"`
	ExpectArms map[string]string `json:"expect_arms,omitempty"`
	Unit       string            `json:"unit,omitempty"`
	Better     string            `json:"better,omitempty"`
	FloorPct   float64           `json:"floor_pct,omitempty"`
	// NonZero names the lane's metrics that must not be exactly zero (spec.Lane.NonZero).
	NonZero []string `json:"nonzero,omitempty"`
	// AtMost bounds metrics of a guard lane per operation (spec.Lane.AtMost).
	AtMost map[string]float64 `json:"at_most,omitempty"`
	// Metric is "instructions" for a lane whose samples are instructions per operation
	// counted under Valgrind; empty for a lane whose samples are what it prints (its wall
	// time, as a rule).
	Metric string `json:"metric,omitempty"`
	// Counter says how an instruction-count lane is counted; nil for other lanes.
	Counter *Counter `json:"counter,omitempty"`
	// Benchtime is the harness.benchtime the spec declared for a gotest lane ("100ms",
	// "1x"); empty when it declared none (the kind's default, one iteration per sample).
	// A declared count says the lane means its iteration count: no b.N warning is given.
	Benchtime string `json:"benchtime,omitempty"`
	// Iterations is the b.N that every sample of a gotest lane with a duration Benchtime
	// runs in every arm (-test.benchtime Nx), fixed before the run by one calibration
	// process so that a sample takes about Benchtime; 0 when the arm's command's benchtime
	// applies (older plans, a count benchtime, a lane that could not be calibrated).
	Iterations int `json:"iterations,omitempty"`
	// ArmIterations, when set, gives an arm its own b.N instead of Iterations: arms whose
	// times per operation differ by more than a factor the calibration names (a 1000x
	// slower candidate would otherwise run minutes per sample). Their values stay times
	// per operation, comparable across arms.
	ArmIterations map[string]int `json:"arm_iterations,omitempty"`
	// Replanned says why Iterations is not the base arm's calibration: a sample of
	// another arm at that N took less than half or more than twice Benchtime, or the arms'
	// speeds differ so much that each runs its own (ArmIterations).
	Replanned string `json:"replanned,omitempty"`
	// Lengthened says why a sample of Iterations takes longer than Benchtime: the time
	// outside the timer per sample (the benchmark's setup, which go test runs at b.N = 1
	// and again at N, and its collections) was more than a third of Benchtime.
	Lengthened string `json:"lengthened,omitempty"`
	// Timing is what the iteration calibration measured of the lane, which later runs of
	// the same binaries on the same host and placement reuse instead of calibrating again;
	// nil when no calibration ran (older plans, a count benchtime).
	Timing *IterationTiming `json:"timing,omitempty"`
	// Calibration is the lane's noise as this host's calibration measured it, at the
	// plan's samples per run, frozen when the page lends it to the analysis
	// (drift.calibration-df); nil otherwise.
	Calibration *driftcheck.CalibratedNoise `json:"calibration,omitempty"`
}

// IterationTiming is what a lane's iteration calibration measured: the time of one
// operation in each arm and a process's time outside its samples, from the calibration
// processes whose samples did not wait for a CPU (a busy host's neighbours), or the
// quietest of them.
type IterationTiming struct {
	// PerOpNs is the time of one operation in each arm (nanoseconds).
	PerOpNs map[string]float64 `json:"per_op_ns"`
	// OverheadNs is a process's time outside its samples; PerSampleNs the time outside
	// the timer of every further sample, when it was measured (a lengthened lane).
	OverheadNs  int64 `json:"overhead_ns"`
	PerSampleNs int64 `json:"per_sample_ns,omitempty"`
	// Repeated counts the calibration processes measured again because their sample
	// waited for a CPU over the analysis's limit (driftcheck.MaxWaitShare); Busy says the
	// quietest of them still did, so no later run reuses these counts.
	Repeated int  `json:"repeated,omitempty"`
	Busy     bool `json:"busy,omitempty"`
	// ReusedFrom names the receipt folder whose calibration this plan reused ("" when it
	// calibrated the lane itself).
	ReusedFrom string `json:"reused_from,omitempty"`
}

// Counter says how the instructions of an instruction-count lane are counted (package
// lanekind): where a measured call starts and ends, how many operations a sample holds,
// and the environment every process of the lane runs with.
type Counter struct {
	// Tool is the Valgrind tool ("callgrind").
	Tool string `json:"tool"`
	// Start, when set, is the function whose entry starts a measured call, as a
	// callgrind pattern: an exec harness's op-start. When empty, a call runs from one
	// entry of End to the next (a gotest lane).
	Start string `json:"start,omitempty"`
	// End is the function whose next entry ends a measured call: an exec harness's
	// op-end, or the testing package's cleanup after every call of a benchmark.
	End string `json:"end"`
	// Frame is the number of entries of End the framework makes before the first call
	// and after the last (gotest: 1, testing's own cleanups); they end no call.
	Frame int `json:"frame,omitempty"`
	// Iterations is the number of operations a sample holds: b.N of a gotest lane's
	// benchtime, 1 for an exec lane.
	Iterations int `json:"iterations"`
	// Env is the environment pinned for the lane's processes (GOMAXPROCS, GODEBUG, GOGC),
	// given the base arm's env.
	Env []string `json:"env"`
}

// ExpectFor returns the lane's expected direction for candidate arm arm, as run.
func (l Lane) ExpectFor(arm string) string {
	if l.ExpectArms != nil {
		return l.ExpectArms[arm]
	}
	return l.Expect
}

// Rule is the part of the page's decision rule that a plan's lanes, protocol and drift
// thresholds do not hold, frozen when the run started.
type Rule struct {
	// Reference names the candidate arms that were measured for reference only
	// (arms.<name>.reference), in spec order.
	Reference []string `json:"reference,omitempty"`
	// Decay is the predicted shape: the lanes whose gain must shrink, strongest first
	// (shape.decay); empty when the page predicted none.
	Decay []string `json:"decay,omitempty"`
	// Incidence is the incidence gate; nil when the page had none.
	Incidence *IncidenceGate `json:"incidence,omitempty"`
}

// IncidenceGate is the decision rule's incidence gate as the page pre-registered it.
type IncidenceGate struct {
	// Total and Eligible are the counters whose share is gated (incidence.total,
	// incidence.eligible); Control is the positive control lane (incidence.control).
	Total    string `json:"total"`
	Eligible string `json:"eligible"`
	Control  string `json:"control,omitempty"`
	// MinShare is the eligible/total share required (incidence.min-share).
	MinShare float64 `json:"min_share"`
	// Arms names the candidate arms the gate tests (incidence.arms); empty means every
	// candidate.
	Arms []string `json:"arms,omitempty"`
}

// Run is one scheduled process.
type Run struct {
	Collection int    `json:"collection"`
	Pass       int    `json:"pass"`
	Order      string `json:"order"`
	Lane       string `json:"lane"`
	Arm        string `json:"arm"`
	// Position is the run's place (1-based) among its lane's runs in the pass: the
	// design's arm order, or its reverse (Order). 0 in plans made before designs, where
	// every pass ran one order (driftcheck.OrderOf) with the arms as listed.
	Position int `json:"position,omitempty"`
	// Attempt is 0 for a run of the plan, and n for the n-th time its lane's pass was
	// measured again (every arm's run of the pass, back to back, in the plan's order)
	// because a run of it was set aside as contaminated. Round is the round that measured
	// such a re-measure; 0 for a run of the plan, which runs in Round(Pass).
	Attempt int `json:"attempt,omitempty"`
	Round   int `json:"round,omitempty"`
}

// Key returns the run's place in the schedule.
func (r Run) Key() Key { return Key{r.Collection, r.Pass, r.Lane, r.Arm, r.Attempt} }

// MeasuredRound returns the round that measures the run: Round for a re-measure, else
// the round of its pass.
func (r Run) MeasuredRound() int { return measuredRound(r.Pass, r.Round) }

func measuredRound(pass, round int) int {
	if round > 0 {
		return round
	}
	return Round(pass)
}
