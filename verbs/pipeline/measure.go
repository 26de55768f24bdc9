package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/harness"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// PendingFunc returns the lanes that still need pairs, given the drift check of the data
// so far. Its result decides which lanes the next round runs.
type PendingFunc func(rep driftcheck.Report) []string

// measure runs every unfinished run of the plan in dir: all of them for a fixed protocol,
// round by round with a look after each for a sequential one (w, when set, shows what
// each look implies).
func measure(ctx context.Context, dir string, plan *receipt.Plan, job Job, opts Options, w *watch) (harness.Outcome, []receipt.Look, error) {
	runner := &harness.Runner{Dir: dir, Plan: plan, Starter: opts.starter(), Events: opts.events(),
		Clock: opts.Clock, Capture: opts.Capture, Others: opts.Others,
		CheckArms: func() error {
			if err := CheckArms(plan); err != nil {
				return fmt.Errorf("%w; the finished runs are kept: restore the binary, then flipbench ab --resume %s", err, dir)
			}
			return nil
		}}
	if plan.Part() {
		// A shard measures its pairs; the merge of all shards looks at the data.
		runs := plan.Shard.Runs(plan)
		runner.Total = len(runs)
		out, err := runner.Sequence(ctx, once(runs))
		return out, nil, err
	}
	if plan.Protocol.Sequential == nil {
		out, err := runner.Run(ctx)
		return out, nil, err
	}
	pending := job.Pending
	if pending == nil {
		e := job.Spec
		pending = func(rep driftcheck.Report) []string {
			if e == nil {
				return lanesOf(plan)
			}
			return decide.Pending(decide.Input{Spec: e, Plan: plan, Analysis: rep})
		}
	}
	prior, err := PriorOf(dir, plan)
	if err != nil {
		return harness.Outcome{}, nil, err
	}
	seq := &sequence{dir: dir, plan: plan, pending: pending, events: opts.events(), watch: w, prior: prior}
	if err := seq.load(); err != nil {
		return harness.Outcome{}, nil, err
	}
	out, err := runner.Sequence(ctx, seq.next)
	if err == nil && seq.err != nil {
		err = seq.err
	}
	return out, seq.looks, err
}

// lanesOf returns every lane of a plan.
func lanesOf(plan *receipt.Plan) []string {
	out := make([]string, len(plan.Lanes))
	for i, l := range plan.Lanes {
		out[i] = l.Name
	}
	return out
}

// sequence is the controller of a sequential run: it hands the runner one round at a
// time, for the lanes that still need pairs. Every decision is made from the data on
// disk, so a resumed run replays the same looks and goes on where it stopped: no finished
// run is repeated, none is lost.
type sequence struct {
	dir     string
	plan    *receipt.Plan
	pending PendingFunc
	events  Events

	round    int            // the next round to run (1-based)
	lanes    []string       // the lanes the next round runs
	logged   map[int]bool   // rounds whose look is in looks.jsonl
	looks    []receipt.Look // every look, this session's and resumed ones
	err      error          // a failure to write a look, returned after the run
	byRound  map[int][]receipt.Run
	groups   map[receipt.GroupKey][]receipt.Run // the plan's runs of each lane's pass
	maxRound int
	// mended is the last round whose mend (the passes measured again before its look)
	// was decided; mends the passes it measured again, ready its analysis when it
	// measured nothing (the look's analysis then).
	mended int
	mends  []receipt.Remeasure
	ready  *driftcheck.Report
	// elapsed measures the wall time of records; nil means elapsed (one machine).
	elapsed func(recs []receipt.Record) time.Duration
	// watch, when set, shows what each look implies (a forecast, undecidable lanes).
	watch *watch
	// prior, when set, is the earlier receipts the run continues: every look analyses
	// their runs with this run's.
	prior *Prior
}

// load reads the looks a previous session wrote.
func (s *sequence) load() error {
	s.round, s.lanes = 1, lanesOf(s.plan)
	s.logged = map[int]bool{}
	s.byRound = map[int][]receipt.Run{}
	s.groups = map[receipt.GroupKey][]receipt.Run{}
	for _, r := range s.plan.Runs {
		k := receipt.Round(r.Pass)
		s.byRound[k] = append(s.byRound[k], r)
		s.maxRound = max(s.maxRound, k)
		g := receipt.GroupKey{Collection: r.Collection, Pass: r.Pass, Lane: r.Lane}
		s.groups[g] = append(s.groups[g], r)
	}
	looks, err := receipt.ReadLooks(s.dir)
	if err != nil {
		return err
	}
	for _, l := range looks {
		s.logged[l.Round] = true
	}
	return nil
}

// next is the runner's harness.Next: after each round it measures again what the data so
// far set aside (mend), looks at the data of the rounds so far, and returns the next
// round's runs for the pending lanes, or nil to stop.
func (s *sequence) next(done []receipt.Record) []receipt.Run {
	for {
		if s.round > 1 {
			if again := s.mend(done, s.round-1); again != nil {
				return again
			}
			look, ok := s.look(done, s.round-1)
			if !ok {
				return nil
			}
			s.lanes = look.Pending
			if look.Stop != "" {
				return nil
			}
		}
		if s.round > s.maxRound {
			return nil
		}
		var batch []receipt.Run
		for _, r := range s.byRound[s.round] {
			if slices.Contains(s.lanes, r.Lane) {
				batch = append(batch, r)
			}
		}
		if !s.plan.Protocol.SeparateArms {
			batch = harness.SeatRound(batch, lastArm(done)) // stopped lanes leave gaps in the plan's alternation
		}
		s.round++
		if !allDone(batch, done) {
			return batch
		}
		// A round a previous session finished: replay its look and go on.
	}
}

// mend returns, once per round, the passes of the lanes that ran in round to measure
// again before its look (decide.Remeasure on the data of rounds 1..round as the round's
// planned runs left it: a set-aside run, an outlier pair, a failed run, a neighbour's
// burst), each every arm's run of the lane's pass back to back in the plan's order,
// seated among themselves after the last run, with the round's number; nil when there
// are none or a previous session measured them (its look is then replayed). The look
// that follows reads them, so a contaminated process costs the lane no pair at that look.
func (s *sequence) mend(done []receipt.Record, round int) []receipt.Run {
	if s.mended == round {
		return nil
	}
	s.mended, s.mends, s.ready = round, nil, nil
	var recs []receipt.Record
	for _, r := range done {
		if r.MeasuredRound() <= round && (r.Attempt == 0 || r.Round < round) {
			recs = append(recs, r)
		}
	}
	rep, _, err := s.prior.Analyze(s.plan, recs)
	if err != nil {
		return nil // the look analyses the same data and reports the error
	}
	s.mends = s.remeasures(rep, s.lanes, s.bursts(round))
	if len(s.mends) == 0 {
		s.ready = &rep
		return nil
	}
	var again []receipt.Run
	for _, m := range s.mends {
		for _, r := range s.groups[receipt.GroupKey{Collection: m.Collection, Pass: m.Pass, Lane: m.Lane}] {
			r.Attempt, r.Round = m.Attempt, round
			again = append(again, r)
		}
	}
	if !s.plan.Protocol.SeparateArms {
		again = harness.SeatPasses(again, lastArm(done))
	}
	if allDone(again, done) {
		return nil
	}
	return again
}

// lastArm returns the arm of the latest run started among recs, "" for none.
func lastArm(recs []receipt.Record) string {
	last := -1
	for i, r := range recs {
		if last < 0 || r.Started.After(recs[last].Started) {
			last = i
		}
	}
	if last < 0 {
		return ""
	}
	return recs[last].Arm
}

// look analyses the records of rounds 1..round and decides what comes next: the lanes
// the rule still needs (PendingFunc) less, when the plan's rule says so
// (receipt.Sequential.StopUndecidable), the lanes that cannot be decided within the
// budget at their noise and that the decision rule does not read; and whether the run
// stops.
func (s *sequence) look(done []receipt.Record, round int) (receipt.Look, bool) {
	var recs []receipt.Record
	for _, r := range done {
		if r.MeasuredRound() <= round {
			recs = append(recs, r)
		}
	}
	rep, err := s.analyze(recs, round)
	if err != nil {
		s.err = fmt.Errorf("look after round %d: %w", round, err)
		return receipt.Look{}, false
	}
	measured := elapsed
	if s.elapsed != nil {
		measured = s.elapsed
	}
	l := receipt.Look{Round: round, Elapsed: measured(recs), Pending: []string{}}
	for _, p := range rep.Pooled {
		l.Lanes = append(l.Lanes, receipt.LookLane{Lane: p.Lane, Arm: p.Arm, Pairs: p.UsablePairs, Verdict: p.Verdict,
			EstimatePct: p.EstimatePct, CILowPct: p.CILowPct, CIHighPct: p.CIHighPct, MDEPct: p.MDEPct})
	}
	seq := s.plan.Protocol.Sequential
	switch {
	case round < seq.MinPairs:
		l.Pending = s.lanes
	default:
		// Only lanes that ran this round can still be pending: a stopped lane stays
		// stopped.
		for _, name := range s.pending(rep) {
			if slices.Contains(s.lanes, name) {
				l.Pending = append(l.Pending, name)
			}
		}
	}
	roundTime := func(lanes []string) time.Duration { return nextRound(recs, round, lanes, measured) }
	step := NextStep(StepInput{Plan: s.plan, Rep: rep, Round: round, Pending: l.Pending, Elapsed: l.Elapsed,
		RoundTime: roundTime, MaxRound: s.maxRound, Named: s.named()})
	l.Pending, l.Undecidable, l.Stop = step.Pending, step.Undecidable, step.Stop
	fit := step.Fit
	if fit > 0 {
		if err := s.fitLastLook(fit); err != nil {
			s.err = err
			return l, false
		}
		l.LastLook = fit
	}
	if l.Stop != "" {
		l.Pending = []string{}
	}
	if s.mended == round {
		l.Remeasure = s.mends
	}
	if !s.logged[round] {
		if err := receipt.Folder(s.dir).AppendLook(l); err != nil {
			s.err = err
			return l, false
		}
		s.logged[round] = true
	}
	s.looks = append(s.looks, l)
	s.events.Look(l)
	if s.watch != nil {
		if err := s.watch.look(l, rep); err != nil {
			s.err = err
			return l, false
		}
	}
	return l, true
}

// budgetRound returns the pending lanes a last round measures when a round of all of them
// would end past the budget: those that one more pair buys the most of what a user reads,
// the bound, per second of measuring (budgetValue), as many as fit into left at their
// share of a round's time (roundTime); none when not one fits.
func budgetRound(rep driftcheck.Report, pending []string, left time.Duration, roundTime func([]string) time.Duration) []string {
	type lane struct {
		name  string
		value float64
	}
	var ls []lane
	for _, name := range pending {
		cost := roundTime([]string{name})
		ls = append(ls, lane{name, budgetValue(rep, name) / max(cost.Seconds(), 1e-3)})
	}
	slices.SortStableFunc(ls, func(a, b lane) int { return cmp.Compare(b.value, a.value) })
	var chosen []string
	for _, l := range ls {
		try := append(slices.Clone(chosen), l.name)
		if roundTime(try) <= left {
			chosen = try
		}
	}
	return chosen
}

// budgetValue is what one more pair buys a lane's bound: the half-width of its widest
// candidate's interval times the share one more pair per collection takes off it (its
// width falls as one over the square root of its pairs), in percent; a lane without an
// interval yet is worth the most.
func budgetValue(rep driftcheck.Report, lane string) float64 {
	best := 0.0
	for _, s := range rep.Pooled {
		if s.Lane != lane {
			continue
		}
		hw := (s.CIHighPct - s.CILowPct) / 2
		if !s.Bounded || math.IsInf(hw, 0) || math.IsNaN(hw) {
			return math.Inf(1)
		}
		k := float64(max(s.UsablePairs, 1))
		best = max(best, hw*(1-math.Sqrt(k/(k+1))))
	}
	return best
}

// analyze returns the drift check of recs, the records of rounds 1..round: the mend's
// analysis when it measured nothing again (the same records), else a new one.
func (s *sequence) analyze(recs []receipt.Record, round int) (driftcheck.Report, error) {
	if s.ready != nil && s.mended == round {
		return *s.ready, nil
	}
	rep, _, err := s.prior.Analyze(s.plan, recs)
	return rep, err
}

// remeasures returns the passes that a round's mend measures again (decide.Remeasure):
// those of this run, not of the receipts it continues.
func (s *sequence) remeasures(rep driftcheck.Report, pending []string, bursts []decide.Burst) []receipt.Remeasure {
	var out []receipt.Remeasure
	for _, a := range decide.Remeasure(rep, pending, bursts) {
		pass, own := s.prior.Own(a.Pass)
		if !own || len(s.groups[receipt.GroupKey{Collection: a.Collection, Pass: pass, Lane: a.Lane}]) == 0 {
			continue
		}
		a.Pass = pass
		out = append(out, a)
	}
	return out
}

// fitLastLook moves the rule's last look to round fit, in the plan and on disk, so that
// every later look, a resumed run and the receipt's analysis use the same rule. Moved
// after looks that took decisions (a budget spent early), the earlier looks spent less of
// the error rate than the fitted design assumes they did, so its last boundary is
// conservative.
func (s *sequence) fitLastLook(fit int) error {
	seq := s.plan.Protocol.Sequential
	if seq.PlannedMaxPairs == 0 {
		seq.PlannedMaxPairs = seq.MaxPairs
	}
	seq.MaxPairs = fit
	s.plan.Drift.MaxPairs = fit
	s.plan.Drift.Design = nil
	return receipt.Folder(s.dir).WritePlan(s.plan)
}

// named returns the lanes earlier looks named undecidable.
func (s *sequence) named() map[string]bool {
	named := map[string]bool{}
	for _, prev := range s.looks {
		for _, u := range prev.Undecidable {
			named[u.Lane] = true
		}
	}
	return named
}

// RuleReads reports whether the decision rule of plan's run reads lane: a primary, guard
// or control of a run made from a page. A comparison with no page has no rule: its lanes
// only show their verdicts.
func RuleReads(plan *receipt.Plan, lane string) bool {
	if plan.Page == "" {
		return false
	}
	for _, l := range plan.Lanes {
		if l.Name == lane {
			return l.Role == spec.RolePrimary || l.Role == spec.RoleGuard || l.Role == spec.RoleControl
		}
	}
	return false
}

// nextRound estimates the wall time of a round of the lanes pending after round: the
// mean over rounds 1..round of each round's measured time (measured) times the share of
// it the pending lanes took (their processes' wall time over all of the round's), so that
// a round without the lanes that stopped is priced without them.
func nextRound(recs []receipt.Record, round int, pending []string, measured func([]receipt.Record) time.Duration) time.Duration {
	if round < 1 {
		return 0
	}
	byRound := make([][]receipt.Record, round+1)
	for _, r := range recs {
		if k := r.MeasuredRound(); k >= 1 && k <= round {
			byRound[k] = append(byRound[k], r)
		}
	}
	var total time.Duration
	for _, rs := range byRound[1:] {
		var all, kept time.Duration
		for _, r := range rs {
			d := r.Ended.Sub(r.Started)
			all += d
			if slices.Contains(pending, r.Lane) {
				kept += d
			}
		}
		t := measured(rs)
		if all > 0 {
			t = time.Duration(float64(t) * float64(kept) / float64(all))
		}
		total += t
	}
	return total / time.Duration(round)
}

// elapsed is the measured wall time of records: per round, from its first run's start to
// its last run's end, summed.
func elapsed(recs []receipt.Record) time.Duration {
	type span struct{ start, end time.Time }
	byRound := map[int]*span{}
	for _, r := range recs {
		k := r.MeasuredRound()
		sp := byRound[k]
		if sp == nil {
			sp = &span{r.Started, r.Ended}
			byRound[k] = sp
		}
		if r.Started.Before(sp.start) {
			sp.start = r.Started
		}
		if r.Ended.After(sp.end) {
			sp.end = r.Ended
		}
	}
	var total time.Duration
	for _, sp := range byRound {
		total += sp.end.Sub(sp.start)
	}
	return total
}

// allDone reports whether every run of batch has a record.
func allDone(batch []receipt.Run, done []receipt.Record) bool {
	have := map[receipt.Key]bool{}
	for _, r := range done {
		have[r.Key()] = true
	}
	for _, r := range batch {
		if !have[r.Key()] {
			return false
		}
	}
	return true
}
