package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
	"github.com/flipbench/flipbench/steps/armbuild"
	"github.com/flipbench/flipbench/steps/compare"
	"github.com/flipbench/flipbench/steps/gate"
)

// GateRequest is one flipbench gate: the gate spec's guard lanes measured at the merge
// base of Base and at Candidate, in rounds until every lane passes or fails.
type GateRequest struct {
	// Gate is the gate spec; Root the ledger root the arms are built in.
	Gate *spec.Gate
	Root string
	// Base is the branch the change goes into (its merge base with Candidate is
	// measured); Candidate a ref, or armbuild.WorktreeRef for the uncommitted tree.
	Base, Candidate string
	// Bench, when set, gates on the harness's benchmarks it selects (as go test -bench),
	// listed from the built arms; a spec without lanes does so with every benchmark.
	Bench string
	// Overrides are the flags' protocol and lane filter.
	Overrides spec.Overrides
	// ThresholdPct, when positive, replaces the spec's threshold.
	ThresholdPct float64
	// Continue is an earlier gate receipt (a data folder) whose pairs this run adds to.
	Continue string
	// Strict refuses to run on when a lane's threshold is out of reach within the budget.
	Strict bool
	// MeasureIdentical measures identical base and candidate binaries too.
	MeasureIdentical bool
	// Results is the receipts folder; Command the command line recorded in the plan.
	Results string
	Command []string
}

// GateOutcome is what a gate decided, with the run behind it.
type GateOutcome struct {
	// Result is the run: its receipt (Result.Receipt), looks, and for identical arms
	// (Result.Identical) the built arms, with nothing measured.
	*Result
	// BaseCommit is the merge base measured as the base arm.
	BaseCommit string
	// Decision is the gate's decision (the zero Result for identical arms: they pass).
	Decision gate.Result
	// Analysis is the drift check decided from: the receipt's, or with a continued run
	// the earlier receipts' pairs and this run's analysed together.
	Analysis driftcheck.Report
	// Level is the level the pooled intervals hold at every look ("90%"), stated once in the
	// summary.
	Level string
	// Prior is the earlier receipts a continued run continued; nil otherwise.
	Prior *Prior
}

// Gate runs one flipbench gate: it resolves the request against the gate spec (flag
// values are checked before git is asked anything), finds the merge base, builds both
// arms, measures the guard lanes in rounds the gate's rule picks (gate.Pending), checks
// that each lane's threshold is within reach of the budget, and decides (gate.Evaluate)
// from the analysed receipt.
func Gate(ctx context.Context, req GateRequest, opts Options) (*GateOutcome, error) {
	job, rule, base, err := gateRun(ctx, req, opts)
	if err != nil {
		return nil, err
	}
	out := &GateOutcome{BaseCommit: base, Prior: job.Continue}
	if out.Result, err = Run(ctx, job, opts); err != nil {
		return out, err
	}
	if out.Identical {
		out.Decision = gate.Result{Outcome: gate.Pass, Findings: []gate.Finding{}, Failures: []gate.Failure{}}
		return out, nil
	}
	runs := out.Receipt.Records
	out.Analysis = out.Receipt.Analysis
	if out.Prior != nil {
		if out.Analysis, runs, err = out.Prior.Analyze(out.Receipt.Plan, runs); err != nil {
			return out, err
		}
	}
	// The table's values are in the metric of the verdicts: on-CPU time for a lane
	// measured by it.
	out.Decision = gate.Evaluate(out.Analysis, loaded.JudgedRecords(out.Receipt.Method, out.Receipt.Plan, runs), rule)
	out.Level = gateLevel(out.Analysis, out.Prior != nil)
	return out, nil
}

// gateRun resolves a gate request into the job it runs, the rule it decides by and the
// merge base it measures.
func gateRun(ctx context.Context, req GateRequest, opts Options) (job Job, rule gate.Rule, base string, err error) {
	gs := req.Gate
	var placed string
	if req.Overrides, placed = PlaceLanes(gs.Protocol.CPUs, req.Overrides); placed != "" {
		note(opts, "%s", placed)
	}
	threshold := gs.Threshold()
	if req.ThresholdPct > 0 {
		threshold = req.ThresholdPct
	}
	// Without lanes in the spec, or with Bench, the lanes are the harness's benchmarks,
	// listed once the arms are built; the lane filter then filters those.
	discover := req.Bench != "" || len(gs.Lanes) == 0
	if kind, err := gs.Harness.LaneKind(); discover && (err != nil || kind.ListArgs("bin") == nil) {
		return Job{}, gate.Rule{}, "", requestErrorf("--bench: the gate spec's %s harness cannot list its lanes; name them in the spec's lanes", gs.Harness.Kind)
	}
	pre := req.Overrides
	if discover {
		pre.Lanes = ""
	}
	res, err := gateExperiment(req, "").Resolve(pre)
	if err != nil {
		return Job{}, gate.Rule{}, "", flagErrors(err)
	}
	mergeRef := req.Candidate
	if mergeRef == armbuild.WorktreeRef {
		mergeRef = "HEAD"
	}
	if base, err = armbuild.MergeBase(ctx, req.Root, req.Base, mergeRef); err != nil {
		return Job{}, gate.Rule{}, "", err
	}
	exp := gateExperiment(req, base)
	rule = gate.Rule{ThresholdPct: threshold, LanePct: gs.LaneThresholds()}
	job = Job{Spec: exp, Root: req.Root, Resolved: res, Label: "gate", Results: req.Results, Command: req.Command,
		Pending:       func(rep driftcheck.Report) []string { return gate.Pending(rep, rule) },
		SkipIdentical: !req.MeasureIdentical, FitBudget: true}
	if req.Continue != "" {
		if job.Continue, err = LoadPrior(req.Continue); err != nil {
			return Job{}, gate.Rule{}, "", requestErrorf("--continue %s: %v", req.Continue, err)
		}
		p := job.Continue
		if err := p.Undecided(); err != nil {
			return Job{}, gate.Rule{}, "", requestErrorf("%v", err)
		}
		rule.Anytime = &gate.Anytime{PriorRounds: p.Rounds, TunedRounds: p.TuneFor(res.Protocol.Passes / 2)}
		note(opts, "continuing %s from %s (%d rounds): its pairs and this run's are judged together by confidence sequences",
			human.Count(len(p.Dirs), "receipt", "receipts"), shortPath(req.Continue), p.Rounds)
	}
	reach := gateReach{opts: opts, strict: req.Strict, rule: rule, prior: job.Continue}
	job.goal = goal{reach: reach.check, threshold: rule.Threshold}
	if discover {
		job.Select = func(ctx context.Context, st harness.Starter, arms []receipt.Arm) (*spec.Experiment, spec.Resolved, error) {
			e, res, notes, err := compare.Select(ctx, st, exp, arms, req.Bench, spec.RoleGuard, req.Overrides)
			for _, n := range notes {
				note(opts, "note: %s", n)
			}
			if err == nil {
				note(opts, "gating on %s: %s", human.Count(len(res.Lanes), "benchmark", "benchmarks"), LaneNames(res.Lanes))
			}
			return e, res, err
		}
	}
	return job, rule, base, nil
}

// gateExperiment is the experiment the gate runs: the gate spec's, with a fixed protocol
// when the overrides ask for passes and the spec has no stopping rule of its own.
func gateExperiment(req GateRequest, base string) *spec.Experiment {
	e := req.Gate.Experiment(base, req.Candidate)
	o := req.Overrides
	if o.Passes != nil && req.Gate.Protocol.Sequential == nil && o.MaxPairs == nil && o.Budget == nil {
		e.Protocol.Sequential = nil
	}
	return e
}

// LaneNames lists the lanes of a run: "Get, Put/size=10".
func LaneNames(lanes []spec.Lane) string {
	names := make([]string, len(lanes))
	for i, l := range lanes {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// gateLevel is the level of the pooled intervals, stated once in the table: the level
// they hold at every look (driftcheck.Config.Level, "90%"), or for a continued run
// (continued) the confidence sequences' level at any number of pairs ("95%").
func gateLevel(rep driftcheck.Report, continued bool) string {
	if continued {
		return human.Level(rep.Config.SequenceLevel())
	}
	return human.Level(rep.Config.Level())
}

// maxReachNotes is how many lanes out of reach the gate names one line each; the rest
// are counted in one line.
const maxReachNotes = 5

// gateReach checks, with each forecast that knows the lanes' noise (the job's reach),
// that every lane's threshold is within reach of the rounds the budget buys, with those of
// the receipts a continued run continues (prior): a lane out of reach gets a note, or with
// strict the run stops with a *RequestError that says what would reach it.
type gateReach struct {
	opts   Options
	strict bool
	rule   gate.Rule
	prior  *Prior
}

// check is the job's reach: a note or a refusal for a forecast f.
func (g gateReach) check(f Forecast) error {
	if g.prior != nil {
		f.Rounds += g.prior.Rounds // the earlier receipts' rounds count too
	}
	if f.PerRound > 0 && f.Rounds < 2 {
		msg := fmt.Sprintf("the %s budget buys %d round at about %s a round (%s), and the rule decides from round 2: unless the rounds run faster, the gate ends undecided (exit 4); raise --budget to at least %s or gate fewer lanes (--lanes, --bench)",
			f.Budget, f.Rounds, f.PerRound.Round(time.Second), f.From, (5 * f.PerRound / 2).Round(time.Second))
		if g.strict {
			return requestErrorf("--strict: %s", msg)
		}
		note(g.opts, "note: %s", msg)
		return nil
	}
	out, reachable := g.outOfReach(f)
	if len(out) == 0 {
		return nil
	}
	if g.strict {
		when := "before round 1"
		if f.After > 0 {
			when = fmt.Sprintf("after round %d (its runs are kept in the receipt folder)", f.After)
		}
		return requestErrorf("--strict: the threshold of %s is out of reach within the budget, so the gate stopped %s: %s",
			human.Count(len(out), "lane", "lanes"), when, strings.Join(out, "; "))
	}
	for _, a := range out[:min(len(out), maxReachNotes)] {
		note(g.opts, "note: threshold out of reach: %s; the gate still ends pass or fail at its last look, but may miss a regression at the threshold (--strict refuses to run)", a)
	}
	if n := len(out) - maxReachNotes; n > 0 {
		note(g.opts, "note: threshold out of reach for %s (%d of %d in all): a threshold of %s%% is within reach of every lane at these rounds",
			human.Count(n, "more lane", "more lanes"), len(out), len(f.Lanes), human.Num(reachable))
	}
	return nil
}

// outOfReach returns the advice for each lane of f whose threshold is out of reach, and
// the smallest threshold every one of them reaches.
func (g gateReach) outOfReach(f Forecast) (out []string, reachable float64) {
	for _, l := range f.Lanes {
		if l.NoisePct <= 0 {
			continue // known after round 1
		}
		if r := gate.LaneReach(l.Lane, l.NoisePct, l.NoiseFrom, g.rule.Threshold(l.Lane), f.Rounds, max(f.Collections, 1), f.Drift); r.Out() {
			out = append(out, r.Advice(f.PerRound))
			reachable = max(reachable, r.ReachablePct)
		}
	}
	return out, reachable
}
