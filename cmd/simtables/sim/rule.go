package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// RuleLane is one lane of a rule world: its role in the experiment's spec and its truth.
type RuleLane struct {
	Name   string
	Role   spec.Role
	Expect string
	// Effect is the candidate's true relative change of the lane's time.
	Effect float64
	// TimeoutCand is the share of the candidate's processes of this lane that hang until
	// the timeout: a candidate that sometimes hangs.
	TimeoutCand float64
}

// RuleWorld is a whole experiment the decision rule decides: lanes with roles, a
// sequential stopping rule, noise within and between processes, an AR(1) host level that
// carries from one process to the next, and contaminated processes (a neighbour's burst:
// every sample Slowdown times slower and Noisier times noisier).
type RuleWorld struct {
	Lanes              []RuleLane
	Collections        int
	MinPairs, MaxPairs int
	Samples            int
	Within, Between    float64
	// AR is the AR(1) coefficient of the host's level from one process to the next; 0 is
	// independent processes. The level's stationary spread is Between.
	AR float64
	// Contaminated is the share of processes disturbed; Slowdown and Noisier their effect
	// (default ContaminatedSlowdown and ContaminatedNoisier).
	Contaminated, Slowdown, Noisier float64
	// Spending is the error spending function of the rule ("" is the default).
	Spending driftcheck.Spending
	// NoRemeasure leaves a set-aside pass out instead of measuring it again, as the
	// rule did before decide.Remeasure.
	NoRemeasure bool
	// NoiseScale multiplies both noises in each collection (index c-1; missing or 0 is 1):
	// a host that got busier between the collections.
	NoiseScale []float64
	// Arms is the number of arms: 0 or 2 is base and cand; more is base and candA, candB,
	// ..., a lane's Effect on the first candidate only. Such a world, or one with a cost
	// of place (FirstCost, Heat), runs the real balanced schedule (harness.Schedule),
	// each run with its position and predecessor, as a sequential run records them.
	Arms int
	// FirstCost slows the first run of each lane in a pass, Heat every process that
	// follows one of the last arm, in any pass (fractions, as in CarryWorld).
	FirstCost, Heat float64
	// Unseated runs the lanes of each pass in a random order instead of seating them
	// (harness.Seat): the schedule without its alternation, to measure what it buys.
	Unseated bool
	// Timeout is the share of every process, in either arm, that hangs until the timeout;
	// Crash the share that crashes. A hung process is recorded as the harness records it:
	// timed out, with the bound TimeoutFactor x the lane's nominal level (a timeout set at
	// TimeoutFactor times a normal run's length); a crashed one without samples.
	Timeout, Crash float64
	// Calibration lends each lane a host calibration of its noise: the calibrated noise of
	// a pass delta as a multiple of the world's true one (1 exact; 0.5 a calibration from a
	// host half as noisy as today's), with CalibrationDF degrees of freedom, of which the
	// rule takes at most MaxCalibrationDF. 0 gives none.
	Calibration, CalibrationDF, MaxCalibrationDF float64
}

// ContaminatedSlowdown and ContaminatedNoisier are what a contaminated process does to
// every sample by default (a neighbour's burst): twice as slow, five times as noisy.
const (
	ContaminatedSlowdown = 2
	ContaminatedNoisier  = 5
)

// TimeoutFactor is how many times a normal run's length the simulated timeout is: a hung
// process's bound is that many times the lane's nominal level.
const TimeoutFactor = 20

// RuleResult is what trials of a rule world did: how many rounds each ran, and the
// statuses the decision rule gave.
type RuleResult struct {
	World  RuleWorld
	Trials int
	Rounds []int // rounds each trial ran, sorted
	// PrimaryRounds are the rounds after which each trial stopped measuring its first
	// primary lane (decided, or the run's end), in trial order: the pairs per collection
	// that the lane with the effect took.
	PrimaryRounds []int
	Statuses      map[spec.Status]int // status -> trials
	Decided       int                 // trials that stopped with every lane decided
	// Reasons holds the reasons of the trials that were not accepted, one line each.
	Reasons []string
	// FalseReproduced counts lane decisions reproduced in the direction against the truth
	// (for lanes with no effect, any reproduced verdict), over Lanes x Trials.
	FalseReproduced, LaneDecisions int
	// FalseSlowerTrials and FalseFasterTrials count the trials (decisions) in which at
	// least one lane with no true effect ended reproduced slower (faster): the decision
	// level's error per direction.
	FalseSlowerTrials, FalseFasterTrials int
}

// MedianRounds returns the median number of rounds.
func (r RuleResult) MedianRounds() float64 {
	xs := make([]float64, len(r.Rounds))
	for i, n := range r.Rounds {
		xs[i] = float64(n)
	}
	return driftcheck.Median(xs)
}

// MeanPrimaryRounds returns the mean of PrimaryRounds.
func (r RuleResult) MeanPrimaryRounds() float64 { return meanOf(r.PrimaryRounds) }

// MeanRounds returns the mean number of rounds.
func (r RuleResult) MeanRounds() float64 { return meanOf(r.Rounds) }

// meanOf returns the mean of ns (0 for none).
func meanOf(ns []int) float64 {
	var s float64
	for _, n := range ns {
		s += float64(n)
	}
	return s / float64(max(len(ns), 1))
}

// page returns the spec of the world's experiment as a page, parsed by package spec like
// any other.
func (w RuleWorld) page() (*spec.Experiment, error) {
	var b strings.Builder
	b.WriteString("---\nid: 999\ntitle: a simulated experiment\ndate: 2026-12-02\nstatus: planned\ncategory: measurement\n")
	b.WriteString("harness: {kind: exec, command: [\"{bin}\", \"{lane}\"]}\narms:\n")
	for _, a := range w.arms() {
		fmt.Fprintf(&b, "  %s: {bin: lane}\n", a)
	}
	fmt.Fprintf(&b, "protocol: {samples: %d, warmup: 0, collections: %d, seed: 1, sequential: {min-pairs: %d, max-pairs: %d, budget: 10h}}\n",
		w.Samples, w.Collections, w.MinPairs, w.MaxPairs)
	b.WriteString("lanes:\n")
	for _, l := range w.Lanes {
		fmt.Fprintf(&b, "  - {name: %s, role: %s", l.Name, l.Role)
		if l.Expect != "" {
			fmt.Fprintf(&b, ", expect: %s", l.Expect)
		}
		b.WriteString("}\n")
	}
	b.WriteString("---\n## Problem\nsimulated\n")
	return spec.Parse("999-sim.md", []byte(b.String()))
}

// EvaluateRule runs trials of a rule world through the real decision code: after every
// round from MinPairs on, driftcheck analyses the data so far, decide.Pending says which
// lanes still need pairs (the others stop, as a sequential run stops them), the passes
// decide.Remeasure names are measured again before each look (the round's mend), and at
// the end decide.Decide gives the status.
func EvaluateRule(w RuleWorld, trials int, seed uint64) (RuleResult, error) {
	if w.Slowdown == 0 {
		w.Slowdown = ContaminatedSlowdown
	}
	if w.Noisier == 0 {
		w.Noisier = ContaminatedNoisier
	}
	rg, err := newRuleRig(w)
	if err != nil {
		return RuleResult{}, err
	}
	out := RuleResult{World: w, Trials: trials, Statuses: map[spec.Status]int{}}
	for t := range trials {
		tr, err := rg.trial(NewRand(seed + uint64(t)))
		if err != nil {
			return RuleResult{}, err
		}
		dec := decide.Decide(decide.Input{Spec: rg.e, Plan: rg.plan, Analysis: tr.rep})
		out.Statuses[dec.Status]++
		if dec.Status != spec.StatusAccepted {
			out.Reasons = append(out.Reasons, dec.Summary())
			for _, a := range dec.Arms {
				for _, r := range a.Reasons {
					out.Reasons = append(out.Reasons, "  "+r.String())
				}
			}
		}
		out.Rounds = append(out.Rounds, tr.rounds)
		out.PrimaryRounds = append(out.PrimaryRounds, tr.primaryAt)
		if tr.decided {
			out.Decided++
		}
		out.count(tr.rep)
	}
	slices.Sort(out.Rounds)
	return out, nil
}

// ruleRig is a rule world made ready to run: its page, drift configuration, plan and
// lanes, as a sequential run would have them.
type ruleRig struct {
	w     RuleWorld
	e     *spec.Experiment
	cfg   driftcheck.Config
	plan  *receipt.Plan
	lanes []driftcheck.Lane
	// budget, when above 0, stops the trial by the pipeline's own stopping rule
	// (pipeline.NextStep) with that budget, a round costing laneCost per lane measured
	// (EvaluateBudget); 0 stops it as the rule table does, with no budget.
	budget time.Duration
}

// laneCost is what one lane's pass pairs of a round cost in a budget trial: every lane
// costs the same.
const laneCost = time.Second

// ruleTrial is how one trial ended: the last analysis, the rounds run, whether every lane
// was decided before max-pairs, and the round the primaries were decided at.
type ruleTrial struct {
	rep       driftcheck.Report
	rounds    int
	decided   bool
	primaryAt int
	// elapsed is the budget a budget trial spent (laneCost per lane and round).
	elapsed time.Duration
}

// newRuleRig resolves w's page and plan as the pipeline would.
func newRuleRig(w RuleWorld) (*ruleRig, error) {
	e, err := w.page()
	if err != nil {
		return nil, err
	}
	res, err := e.Resolve(spec.Overrides{})
	if err != nil {
		return nil, err
	}
	cfg := res.Drift
	cfg.Spending = w.Spending
	cfg.MaxCalibrationDF = w.MaxCalibrationDF
	if cfg.Design, err = driftcheck.NewDesign(cfg, w.Collections); err != nil {
		return nil, err
	}
	plan := &receipt.Plan{Experiment: 999,
		Protocol: receipt.Protocol{Samples: res.Protocol.Samples, Warmup: res.Protocol.Warmup, Passes: res.Protocol.Passes,
			Collections: res.Protocol.Collections, Sequential: &receipt.Sequential{MinPairs: w.MinPairs, MaxPairs: w.MaxPairs, Budget: 36000e9}}}
	for _, a := range w.arms() {
		plan.Arms = append(plan.Arms, receipt.Arm{Name: a})
	}
	var cal *driftcheck.CalibratedNoise
	if w.Calibration > 0 {
		// A pair mean averages two pass deltas: its variance is half a delta's.
		cal = &driftcheck.CalibratedNoise{DeltaPct: w.Calibration * math.Sqrt2 * w.pairMeanSD(NewRand(1)) * 100, DF: w.CalibrationDF}
	}
	var lanes []driftcheck.Lane
	for _, l := range res.Lanes {
		plan.Lanes = append(plan.Lanes, receipt.Lane{Name: l.Name, Role: l.Role, Expect: l.Expect})
		lanes = append(lanes, driftcheck.Lane{Name: l.Name, Calibration: cal})
	}
	return &ruleRig{w: w, e: e, cfg: cfg, plan: plan, lanes: lanes}, nil
}

// trial runs one sequential experiment: rounds of a pass pair per collection over the
// lanes still running (in a random order per pass), the passes the round's mend measures
// again, and from MinPairs on a look that stops the decided lanes.
func (rg *ruleRig) trial(rng *rand.Rand) (ruleTrial, error) {
	w := rg.w
	in := driftcheck.Input{Base: Base, Candidates: w.arms()[1:], Lanes: rg.lanes, Collections: w.Collections, Passes: 2 * w.MaxPairs}
	running := slices.Clone(w.Lanes)
	var h ruleHost
	var sched []receipt.Run // the balanced schedule, for a world of more arms or a cost of place
	if w.Arms > 2 || w.FirstCost > 0 || w.Heat > 0 {
		sched = harness.Schedule(w.arms(), lanesOfRule(w.Lanes), w.Collections, 2*w.MaxPairs, int64(rng.Uint64()>>1), false)
	}
	laneOf := func(name string) RuleLane {
		return w.Lanes[slices.IndexFunc(w.Lanes, func(l RuleLane) bool { return l.Name == name })]
	}
	var tr ruleTrial
	for tr.rounds < w.MaxPairs {
		tr.rounds++
		round := tr.rounds
		measure := func(c, p, attempt int, l RuleLane) {
			at := 0
			if attempt > 0 {
				at = round
			}
			if sched != nil { // measured again back to back, in the plan's order (an unseated world)
				w.play(rng, &in, &h, planned(sched, c, p, func(name string) bool { return name == l.Name }), laneOf, attempt, at)
				return
			}
			arms := []string{Base, Cand}
			if p%2 == 0 {
				arms = []string{Cand, Base}
			}
			for _, arm := range arms {
				o := driftcheck.Observation{Collection: c, Pass: p, Lane: l.Name, Arm: arm, Attempt: attempt, Round: at}
				o.Samples, h.level = w.run(rng, l, arm, h.level, w.scale(c))
				w.fail(rng, l, &o)
				in.Observations = append(in.Observations, o)
			}
		}
		var batch []receipt.Run // the round's planned runs of the running lanes
		for c := 1; c <= w.Collections; c++ {
			for _, p := range []int{2*round - 1, 2 * round} {
				if sched == nil {
					for _, li := range rng.Perm(len(running)) {
						measure(c, p, 0, running[li])
					}
					continue
				}
				pass := planned(sched, c, p, func(name string) bool {
					return slices.ContainsFunc(running, func(l RuleLane) bool { return l.Name == name })
				})
				if w.Unseated {
					pass = shuffleLanes(rng, pass)
				}
				batch = append(batch, pass...)
			}
		}
		switch {
		case sched != nil && !w.Unseated: // seated, as the pipeline runs them
			w.play(rng, &in, &h, harness.SeatRound(batch, h.last), laneOf, 0, 0)
		case sched != nil:
			w.play(rng, &in, &h, batch, laneOf, 0, 0)
		}
		var err error
		if tr.rep, err = driftcheck.Analyze(in, rg.cfg); err != nil {
			return tr, err
		}
		// The round's mend: what the data so far set aside is measured again before the
		// look, as the pipeline does.
		if mend := w.mend(tr.rep, running); len(mend) > 0 {
			if sched != nil && !w.Unseated {
				w.playAgain(rng, &in, &h, sched, mend, laneOf, round)
			} else {
				for _, a := range mend {
					measure(a.Collection, a.Pass, a.Attempt, laneOf(a.Lane))
				}
			}
			if tr.rep, err = driftcheck.Analyze(in, rg.cfg); err != nil {
				return tr, err
			}
			// A pass measured again costs its share of a lane's round.
			tr.elapsed += time.Duration(len(mend)) * laneCost / time.Duration(2*w.Collections)
		}
		if rg.look(&tr, &running) {
			break
		}
	}
	if tr.primaryAt == 0 {
		tr.primaryAt = tr.rounds
	}
	return tr, nil
}

// look is a trial's look after its latest round: the lanes the rule still needs keep
// running (all of them before MinPairs), by the pipeline's stopping rule when the trial
// has a budget; it reports whether the trial stops.
func (rg *ruleRig) look(tr *ruleTrial, running *[]RuleLane) bool {
	pending := lanesOfRule(*running)
	if tr.rounds >= rg.w.MinPairs {
		pending = decide.Pending(decide.Input{Spec: rg.e, Plan: rg.plan, Analysis: tr.rep})
	}
	if rg.budget > 0 {
		return rg.budgetStep(tr, running, pending)
	}
	if tr.rounds < rg.w.MinPairs {
		return false
	}
	*running = slices.DeleteFunc(*running, func(l RuleLane) bool { return !slices.Contains(pending, l.Name) })
	if tr.primaryAt == 0 && !slices.ContainsFunc(*running, func(l RuleLane) bool { return l.Role == spec.RolePrimary }) {
		tr.primaryAt = tr.rounds
	}
	if len(*running) == 0 {
		tr.decided = true
		return true
	}
	return false
}

// count adds a trial's final lane verdicts to the false reproduced counts: per lane, and
// per decision (the trial) and direction for the lanes with no true effect.
func (r *RuleResult) count(rep driftcheck.Report) {
	slower, faster := false, false
	for _, l := range r.World.Lanes {
		for _, s := range rep.Pooled {
			if s.Lane != l.Name {
				continue
			}
			r.LaneDecisions++
			effect := r.World.effectOf(l, s.Arm)
			switch {
			case s.Verdict == driftcheck.LaneReproducedFaster && effect >= 0,
				s.Verdict == driftcheck.LaneReproducedSlower && effect <= 0:
				r.FalseReproduced++
			}
			if effect == 0 {
				slower = slower || s.Verdict == driftcheck.LaneReproducedSlower
				faster = faster || s.Verdict == driftcheck.LaneReproducedFaster
			}
		}
	}
	if slower {
		r.FalseSlowerTrials++
	}
	if faster {
		r.FalseFasterTrials++
	}
}

// fail turns a drawn run into a hung or crashed one, at the world's and the lane's rates:
// a hung one as the harness records a timed-out run (no samples, the bound of a timeout
// at TimeoutFactor times a normal run), a crashed one without samples. A world without
// either draws nothing, so its random stream is that of a world without failures.
func (w RuleWorld) fail(rng *rand.Rand, l RuleLane, o *driftcheck.Observation) {
	hang := w.Timeout
	if o.Arm != Base {
		hang = 1 - (1-hang)*(1-l.TimeoutCand)
	}
	if hang == 0 && w.Crash == 0 {
		return
	}
	switch u := rng.Float64(); {
	case u < hang:
		o.Samples, o.Failed, o.TimedOut, o.AtLeast = nil, "timed out and was killed", true, TimeoutFactor*100
	case u < hang+w.Crash:
		o.Samples, o.Failed = nil, "exited with status 2"
	}
}

// lanesOfRule returns the names of lanes.
func lanesOfRule(lanes []RuleLane) []string {
	out := make([]string, len(lanes))
	for i, l := range lanes {
		out[i] = l.Name
	}
	return out
}

// arms returns the world's arms: base and cand, or base and candA, candB, ... (Arms > 2).
func (w RuleWorld) arms() []string {
	if w.Arms <= 2 {
		return []string{Base, Cand}
	}
	out := []string{Base}
	for i := 1; i < w.Arms; i++ {
		out = append(out, fmt.Sprintf("cand%c", 'A'+i-1))
	}
	return out
}

// effectOf returns lane l's true effect on arm: its Effect on the first candidate, none
// on the base and the other candidates.
func (w RuleWorld) effectOf(l RuleLane, arm string) float64 {
	if arm == w.arms()[1] {
		return l.Effect
	}
	return 0
}

// ruleHost is the state one process leaves for the next: the host's level (AR(1)) and
// the arm of the process that ran last, in any pass.
type ruleHost struct {
	level float64
	last  string
}

// planned returns the runs of collection c, pass p in sched whose lane keep accepts, in
// the plan's order.
func planned(sched []receipt.Run, c, p int, keep func(lane string) bool) []receipt.Run {
	var out []receipt.Run
	for _, r := range sched {
		if r.Collection == c && r.Pass == p && keep(r.Lane) {
			out = append(out, r)
		}
	}
	return out
}

// mend returns the passes a round's mend measures again before its look
// (decide.Remeasure, for the lanes that ran), none in a world that leaves them out.
func (w RuleWorld) mend(rep driftcheck.Report, running []RuleLane) []receipt.Remeasure {
	if w.NoRemeasure {
		return nil
	}
	return decide.Remeasure(rep, lanesOfRule(running), nil)
}

// playAgain measures the passes a round's mend measures again, after the round and
// seated among themselves (harness.SeatPasses), as the pipeline runs them.
func (w RuleWorld) playAgain(rng *rand.Rand, in *driftcheck.Input, h *ruleHost, sched []receipt.Run, again []receipt.Remeasure, laneOf func(string) RuleLane, round int) {
	var runs []receipt.Run
	attempt := map[receipt.GroupKey]int{}
	for _, a := range again {
		runs = append(runs, planned(sched, a.Collection, a.Pass, func(name string) bool { return name == a.Lane })...)
		attempt[receipt.GroupKey{Collection: a.Collection, Pass: a.Pass, Lane: a.Lane}] = a.Attempt
	}
	for _, r := range harness.SeatPasses(runs, h.last) {
		w.play(rng, in, h, []receipt.Run{r}, laneOf, attempt[receipt.GroupKey{Collection: r.Collection, Pass: r.Pass, Lane: r.Lane}], round)
	}
}

// play measures runs (one or more passes, each back to back) one process after another,
// as a runner does: each follows the process before it (h.last, in any pass), and its
// observation records that arm, as the receipt's records do; laneOf resolves a run's lane.
func (w RuleWorld) play(rng *rand.Rand, in *driftcheck.Input, h *ruleHost, runs []receipt.Run, laneOf func(string) RuleLane, attempt, round int) {
	for _, r := range runs {
		w.scheduled(rng, in, r, laneOf(r.Lane), h, attempt, round)
		h.last = r.Arm
	}
}

// scheduled measures run r of the schedule for lane l after the process h.last, whose
// arm the observation records as after ("" for the first run of a trial):
// its place's cost (FirstCost for the lane's first run of the pass, Heat after the last
// arm) on top of the drawn process; it appends the observation, with the run's order,
// position and predecessor, and moves the host's level on.
func (w RuleWorld) scheduled(rng *rand.Rand, in *driftcheck.Input, r receipt.Run, l RuleLane, h *ruleHost, attempt, round int) {
	o := driftcheck.Observation{Collection: r.Collection, Pass: r.Pass, Lane: l.Name, Arm: r.Arm, Attempt: attempt, Round: round,
		Order: r.Order, Position: r.Position, After: h.last}
	o.Samples, h.level = w.run(rng, l, r.Arm, h.level, w.scale(r.Collection))
	cost := 1.0
	if r.Position == 1 {
		cost *= 1 + w.FirstCost
	}
	if arms := w.arms(); h.last == arms[len(arms)-1] {
		cost *= 1 + w.Heat
	}
	for i := range o.Samples {
		o.Samples[i] *= cost
	}
	w.fail(rng, l, &o)
	in.Observations = append(in.Observations, o)
}

// shuffleLanes returns the runs of one pass with its lanes in a random order, each lane's
// runs kept back to back in theirs.
func shuffleLanes(rng *rand.Rand, pass []receipt.Run) []receipt.Run {
	groups := harness.LaneGroups(pass)
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	return slices.Concat(groups...)
}

// scale returns the noise scale of collection c (NoiseScale).
func (w RuleWorld) scale(c int) float64 {
	if c-1 < len(w.NoiseScale) && w.NoiseScale[c-1] > 0 {
		return w.NoiseScale[c-1]
	}
	return 1
}

// run draws one process of lane l on arm, with the host level carried from the previous
// process (AR(1)) and both noises times noise; it returns the samples and the new level.
func (w RuleWorld) run(rng *rand.Rand, l RuleLane, arm string, level, noise float64) ([]float64, float64) {
	innov := noise * w.Between * math.Sqrt(1-w.AR*w.AR)
	level = w.AR*level + innov*rng.NormFloat64()
	scale, within := math.Exp(level), noise*w.Within
	if rng.Float64() < w.Contaminated {
		scale *= w.Slowdown
		within *= w.Noisier
	}
	scale *= 1 + w.effectOf(l, arm)
	xs := make([]float64, w.Samples)
	for i := range xs {
		xs[i] = math.Max(100*scale*(1+within*rng.NormFloat64()), 1e-3)
	}
	return xs, level
}

// RuleCase is one row of the decision rule's table: a named world.
type RuleCase struct {
	Name  string
	World RuleWorld
}

// FakeLanes returns the lanes of the fake-lane experiment: a primary expected slower that
// is 6% slower, a guard and a control with no effect.
func FakeLanes() []RuleLane {
	return []RuleLane{
		{Name: "primary", Role: spec.RolePrimary, Expect: spec.ExpectSlower, Effect: 0.06},
		{Name: "guard", Role: spec.RoleGuard},
		{Name: "control", Role: spec.RoleControl},
	}
}

// RuleGrid returns the worlds of the decision rule's table: the fake-lane experiment (2%
// noise within and between processes, 10 samples per run, pairs 2 to 40) clean, with 3%
// and 5% of the processes contaminated, with AR(1) host noise, and an A/A of ten lanes (a
// primary expected neutral and nine guards), each under the default spending; then the
// fake-lane experiment with 3% contamination under every spending function, and once
// without re-measuring set-aside passes; then the failed and timed-out runs: the fake-lane
// experiment with 5% of its processes crashing, with its primary 30% slower and its
// candidate runs of it timing out 10% of the time, and the A/A with 1% of the processes in
// either arm timing out; then three worlds with the first look after round 1 instead of
// 2; two with noise three times as large in the second collection; last, three with a
// cost of place on the balanced schedule, with two and three arms, heat of 10% with two
// arms, the lanes seated and not, three worlds under Hwang-Shih-DeCani spending, the
// primary alone, four lanes alone with a host calibration lent to their noise, the A/A at
// 20% process noise, and the control changed by exactly its floor with equal noise and
// with collection 2 three times as noisy (the same seeds stay with the same rows, and a
// world without failures draws the random numbers it drew before they were simulated).
func RuleGrid() []RuleCase {
	fake := RuleWorld{Lanes: FakeLanes(), Collections: 2, MinPairs: 2, MaxPairs: 40, Samples: 10, Within: 0.02, Between: 0.02}
	with := func(f func(*RuleWorld)) RuleWorld {
		w := fake
		w.Lanes = slices.Clone(fake.Lanes)
		f(&w)
		return w
	}
	aa := []RuleLane{{Name: "p", Role: spec.RolePrimary, Expect: spec.ExpectNeutral}}
	for i := range 9 {
		aa = append(aa, RuleLane{Name: fmt.Sprintf("g%d", i+1), Role: spec.RoleGuard})
	}
	out := []RuleCase{
		{"fake lanes, clean", fake},
		{"fake lanes, 3% contaminated", with(func(w *RuleWorld) { w.Contaminated = 0.03 })},
		{"fake lanes, 5% contaminated", with(func(w *RuleWorld) { w.Contaminated = 0.05 })},
		{"fake lanes, AR(1) 0.7 host, 5% contaminated", with(func(w *RuleWorld) { w.AR, w.Contaminated = 0.7, 0.05 })},
		{"A/A, a primary expected neutral and 9 guards, 5% contaminated", with(func(w *RuleWorld) { w.Lanes, w.Contaminated = aa, 0.05 })},
		{"A/A, the same, AR(1) 0.7 host, 5% contaminated", with(func(w *RuleWorld) { w.Lanes, w.AR, w.Contaminated = aa, 0.7, 0.05 })},
	}
	// The spending functions compared first (hsd, added later, is the last row, so that
	// the rows between keep their seeds).
	for _, sp := range []driftcheck.Spending{driftcheck.SpendOBrienFleming, driftcheck.SpendPocock, driftcheck.SpendPower} {
		out = append(out, RuleCase{fmt.Sprintf("fake lanes, 3%% contaminated, %s spending", sp), with(func(w *RuleWorld) { w.Contaminated, w.Spending = 0.03, sp })})
	}
	out = append(out, RuleCase{"fake lanes, 3% contaminated, no re-measure", with(func(w *RuleWorld) { w.Contaminated, w.NoRemeasure = 0.03, true })})
	slowHang := with(func(w *RuleWorld) { w.Lanes[0].Effect, w.Lanes[0].TimeoutCand = 0.3, 0.1 })
	out = append(out,
		RuleCase{"fake lanes, 5% of processes crash", with(func(w *RuleWorld) { w.Crash = 0.05 })},
		RuleCase{"fake lanes, the primary 30% slower and its candidate runs timing out 10% of the time", slowHang},
		RuleCase{"A/A, the same 10 lanes, 1% of processes in either arm time out", with(func(w *RuleWorld) { w.Lanes, w.Timeout = aa, 0.01 })})
	// The first look after round 1 instead of 2, which the default does not take.
	out = append(out,
		RuleCase{"fake lanes, clean, first look after round 1", with(func(w *RuleWorld) { w.MinPairs = 1 })},
		RuleCase{"fake lanes, 3% contaminated, first look after round 1", with(func(w *RuleWorld) { w.Contaminated, w.MinPairs = 0.03, 1 })},
		RuleCase{"A/A, a primary expected neutral and 9 guards, 5% contaminated, first look after round 1", with(func(w *RuleWorld) { w.Lanes, w.Contaminated, w.MinPairs = aa, 0.05, 1 })})
	// Noise that changes between collections: the second three times the first's.
	out = append(out,
		RuleCase{"fake lanes" + NoisierCollection, with(func(w *RuleWorld) { w.NoiseScale = []float64{1, 3} })},
		RuleCase{"A/A, a primary expected neutral and 9 guards" + NoisierCollection + ", 5% contaminated", with(func(w *RuleWorld) { w.Lanes, w.NoiseScale, w.Contaminated = aa, []float64{1, 3}, 0.05 })})
	// A cost of place on the balanced schedule (harness.Schedule): the first run of each
	// lane in a pass 10% slower, every process after one of the last arm 5% slower; with
	// two arms, and with three (the effect on the first candidate only).
	out = append(out,
		RuleCase{"fake lanes, first-run cost 10%, heat 5% after the candidate", with(func(w *RuleWorld) { w.FirstCost, w.Heat = 0.1, 0.05 })},
		RuleCase{"three arms, the first candidate's primary 6% slower, first-run cost 10%, heat 5% after the last arm", with(func(w *RuleWorld) { w.Arms, w.FirstCost, w.Heat = 3, 0.1, 0.05 })},
		RuleCase{"A/A, three identical arms, a primary expected neutral and 9 guards, first-run cost 10%, heat 5%, 5% contaminated", with(func(w *RuleWorld) {
			w.Lanes, w.Arms, w.FirstCost, w.Heat, w.Contaminated = aa, 3, 0.1, 0.05, 0.05
		})})
	// Heat of 10% with two arms, the lanes of each pass seated (the schedule's
	// alternation) and in a random order.
	out = append(out,
		RuleCase{"fake lanes, heat 10% after the candidate", with(func(w *RuleWorld) { w.Heat = 0.1 })},
		RuleCase{"fake lanes, heat 10% after the candidate" + NotSeated, with(func(w *RuleWorld) { w.Heat, w.Unseated = 0.1, true })})
	// Hwang-Shih-DeCani spending, which spends early, on the fake-lane experiment clean and
	// with 3% contaminated processes, and on the A/A.
	hsd := driftcheck.SpendHSD
	out = append(out,
		RuleCase{fmt.Sprintf("fake lanes, clean, %s spending", hsd), with(func(w *RuleWorld) { w.Spending = hsd })},
		RuleCase{fmt.Sprintf("fake lanes, 3%% contaminated, %s spending", hsd), with(func(w *RuleWorld) { w.Contaminated, w.Spending = 0.03, hsd })},
		RuleCase{fmt.Sprintf("A/A, a primary expected neutral and 9 guards, 5%% contaminated, %s spending", hsd), with(func(w *RuleWorld) { w.Lanes, w.Contaminated, w.Spending = aa, 0.05, hsd })})
	// The primary alone: no other lane to share its noise with.
	out = append(out, RuleCase{PrimaryAlone, with(func(w *RuleWorld) { w.Lanes = w.Lanes[:1] })})
	// The primary alone with a host calibration lent to its noise (drift.calibration-df: 4,
	// from 40 degrees of freedom): exact, from a host twice as quiet as today's (the
	// calibration half today's noise), and from one twice as noisy; and the neutral A/A
	// primary alone with the quiet host's calibration, for the error it could cost.
	calib := func(lanes []RuleLane, times float64) func(*RuleWorld) {
		return func(w *RuleWorld) { w.Lanes, w.Calibration, w.CalibrationDF, w.MaxCalibrationDF = lanes, times, 40, 4 }
	}
	neutral := aa[:1]
	out = append(out,
		RuleCase{"the primary alone, host calibration lent (4 df)", with(calib(fake.Lanes[:1], 1))},
		RuleCase{"the primary alone, calibration lent from a host half as noisy", with(calib(fake.Lanes[:1], 0.5))},
		RuleCase{"the primary alone, calibration lent from a host twice as noisy", with(calib(fake.Lanes[:1], 2))},
		RuleCase{"A/A, a primary expected neutral alone, calibration lent from a host half as noisy", with(calib(neutral, 0.5))})
	// The A/A at the process-to-process spread of the widest real lanes (a stickiness
	// guard's processes spread 3.9 to 9.1 ms): the early looks with few degrees of freedom.
	out = append(out, RuleCase{"A/A, a primary expected neutral and 9 guards, process noise 20%", with(func(w *RuleWorld) { w.Lanes, w.Between = aa, 0.2 })})
	// The control changed by exactly its floor, with equal noise and with collection 2
	// three times as noisy: "accepted" is then the share of runs that showed it neutral,
	// the equivalence test's error.
	atFloor := func(w *RuleWorld) { w.Lanes[2].Effect = 0.03 }
	out = append(out,
		RuleCase{FloorControl, with(atFloor)},
		RuleCase{FloorControl + NoisierCollection, with(func(w *RuleWorld) { atFloor(w); w.NoiseScale = []float64{1, 3} })})
	return out
}

// FloorControl names the decision-rule table row of the fake-lane experiment whose control
// is changed by exactly its floor (3%); NoisierCollection ends the name of a row whose
// second collection is three times as noisy as the first.
const (
	FloorControl      = "fake lanes, the control 3% slower (its floor)"
	NoisierCollection = ", noise 3x in collection 2"
)

// EvaluateRuleGrid evaluates every case on all CPUs, each with its own seeds.
func EvaluateRuleGrid(cases []RuleCase, trials int) ([]RuleResult, error) {
	out := make([]RuleResult, len(cases))
	errs := make([]error, len(cases))
	parallel(len(cases), func(i int) { out[i], errs[i] = EvaluateRule(cases[i].World, trials, uint64(i)*9_000_011+5) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RuleMarkdown renders the decision rule's table of docs/methodology.md.
func RuleMarkdown(cases []RuleCase, results []RuleResult, known []KnownResult, previous []PreviousRow) string {
	var b strings.Builder
	b.WriteString("| world | trials | stopped decided | accepted | median rounds | mean rounds | mean rounds, primary | false reproduced lane verdicts | decisions with a no-effect lane reproduced slower | decisions with a no-effect lane reproduced faster |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.1f | %.1f | %.1f | %s | %s | %s |\n", cases[i].Name, r.Trials, pct(Rate{r.Decided, r.Trials}),
			pct(Rate{r.Statuses[spec.StatusAccepted], r.Trials}), r.MedianRounds(), r.MeanRounds(), r.MeanPrimaryRounds(), pct(Rate{r.FalseReproduced, r.LaneDecisions}),
			pct(Rate{r.FalseSlowerTrials, r.Trials}), pct(Rate{r.FalseFasterTrials, r.Trials}))
	}
	b.WriteString(KnownMarkdown(known))
	b.WriteString(PreviousMarkdown(previous))
	return b.String()
}
