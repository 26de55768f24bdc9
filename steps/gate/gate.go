// Package gate decides a CI regression gate from a drift check: fail the build only when a
// regression reproduces across order-flipped pass pairs in every collection, and advise a
// rerun, not a failure, when what it sees is drift or too little data.
//
// Continuous-benchmarking gates on shared CI runners are known for false alarms, and a gate
// that cries wolf gets switched off. This gate reads the drift check's noise-calibrated
// evidence: a lane passes when its pooled interval rules out a slowdown beyond the
// threshold, fails when a slowdown beyond the threshold reproduced in every collection,
// and asks for a rerun (with about how many more pairs would decide) otherwise.
//
// Many guard lanes are tested at once. A regression call needs every collection's
// interval to exclude 0 at the family level: alpha/2N (N lanes x candidates, Bonferroni)
// spent over the rule's looks by its spending function, as one lane's alpha/2 is, so the
// chance that any of N unchanged lanes fails the build at any look is at most alpha/2
// (2.5% at the default alpha of 0.05) even if the collections' estimates were perfectly
// correlated, and about N (alpha/2N)^C when they are independent (C collections). (The
// noise estimate assumes each collection's processes are its own; docs/gate.md shows what
// identical processes in every collection cost.) A pass uses each lane's own pooled
// interval, one-sided at alpha: a lane that regressed by the threshold passes at most
// alpha of the time (the catch rate a pass at the last look states is the rule's power
// against twice the threshold at the noise it saw).
//
// A run that fails (a lane that crashes, hangs past its timeout or prints bad output) is
// not noise: no rerun makes it pass. The gate calls the build broken then, whatever the
// timings say. The gate's spec (experiments/gate.yaml) is parsed and validated by package
// spec (spec.ParseGate).
package gate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// SchemaVersion is the version of flipbench gate --json's output (docs/json.md): the
// Result, with the base, candidate and receipt.
const SchemaVersion = 1

// Outcome is the gate's decision.
type Outcome string

// Outcomes, from best to worst.
const (
	Pass       Outcome = "pass"       // no reproduced regression
	Rerun      Outcome = "rerun"      // drift, too little data, or a regression seen in only some collections
	Regression Outcome = "regression" // a regression beyond the threshold reproduced in every collection
	Broken     Outcome = "broken"     // runs failed: a lane crashed, hung or printed bad output
)

// Finding is one lane's contribution to the decision.
type Finding struct {
	Lane    string  `json:"lane"`
	Arm     string  `json:"arm"`
	Outcome Outcome `json:"outcome"`
	// EstimatePct and CILowPct..CIHighPct are the lane's effect pooled over collections,
	// with its interval (positive is slower); Bounded is false when there is none.
	EstimatePct float64 `json:"estimate_pct"`
	CILowPct    float64 `json:"ci_low_pct"`
	CIHighPct   float64 `json:"ci_high_pct"`
	Bounded     bool    `json:"bounded"`
	// DeltaPct is the lane's effect estimate per collection.
	DeltaPct []float64 `json:"delta_pct"`
	// Verdicts are the lane verdicts, per collection.
	Verdicts []driftcheck.LaneVerdict `json:"verdicts"`
	// Pairs is the number of usable pass-pairs the lane used, over all collections.
	Pairs int `json:"pairs"`
	// MorePairs is about how many more pairs in all would decide a rerun (0 otherwise;
	// -1 when it cannot be estimated).
	MorePairs int `json:"more_pairs"`
	// ThresholdPct is the threshold the lane was judged against: its own threshold-pct
	// in the gate spec, or the gate's.
	ThresholdPct float64 `json:"threshold_pct"`
	// CatchPct, for a lane passed at the rule's last look, is the probability (percent) at
	// which the gate would have failed a regression of twice the threshold at this noise:
	// what the pass is worth. 0 otherwise.
	CatchPct float64 `json:"catch_pct,omitempty"`
	// LastLook says the lane was passed at the rule's last look (the binding end) without
	// a shown regression, rather than by ruling one out.
	LastLook bool   `json:"last_look,omitempty"`
	Reason   string `json:"reason"`
	// Unit is the lane's unit, and BaseValue and CandValue each arm's value in it: the
	// median over the arm's successful runs of each run's median (0 without runs).
	Unit      string  `json:"unit,omitempty"`
	BaseValue float64 `json:"base_value"`
	CandValue float64 `json:"cand_value"`
}

// Failure is one lane of one arm whose runs failed.
type Failure struct {
	Lane string `json:"lane"`
	Arm  string `json:"arm"`
	// Failed of Runs runs of the lane and arm produced no usable samples.
	Failed int `json:"failed"`
	Runs   int `json:"runs"`
	// Error is the first failed run's error ("exited with status 2"), and Stderr the last
	// line it wrote to stderr.
	Error  string `json:"error"`
	Stderr string `json:"stderr,omitempty"`
}

// String describes the failure in one line: "lane alpha, arm cand: 8 of 8 runs failed
// (exited with status 3: panic: ...)".
func (f Failure) String() string {
	why := f.Error
	if f.Stderr != "" {
		why += ": " + f.Stderr
	}
	return fmt.Sprintf("lane %s, arm %s: %d of %d runs failed (%s)", f.Lane, f.Arm, f.Failed, f.Runs, why)
}

// Result is the gate's decision with the findings behind it.
type Result struct {
	Outcome      Outcome   `json:"outcome"`
	ThresholdPct float64   `json:"threshold_pct"`
	Findings     []Finding `json:"findings"`
	// Failures lists the lanes and arms whose runs failed; any makes the outcome Broken.
	Failures []Failure `json:"failures"`
	// ContinuedRounds, for a run that continued earlier receipts' pairs (Rule.Anytime), is
	// how many rounds came from them; its intervals are confidence sequences.
	ContinuedRounds int `json:"continued_rounds,omitempty"`
}

// continued says, for a run that continued earlier receipts, how its intervals differ: ""
// otherwise.
func (r Result) continued() string {
	if r.ContinuedRounds == 0 {
		return ""
	}
	return fmt.Sprintf(" This run continues %s of the same binaries: every interval (CS) is a confidence sequence, valid at any number of pairs, so pairs can be added until the lanes are decided.",
		human.Count(r.ContinuedRounds, "earlier round", "earlier rounds"))
}

// weak says, when lanes were passed at the rule's last look with less than an even chance
// of catching a regression of twice the threshold, how many, in one sentence ("" when none
// were): such a pass is worth little, and the summary says so above the table.
func (r Result) weak() string {
	n := 0
	for _, f := range r.Findings {
		if f.Outcome == Pass && f.LastLook && f.CatchPct < 50 {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d lanes passed only at the rule's last look, where at their noise the gate would have caught a regression of twice the threshold less than half the time: for them the budget bought too few rounds to rule much out (raise --budget, or gate fewer lanes).",
		n, len(r.Findings))
}

// interval names the kind of the findings' intervals: " CI", or " CS" for confidence
// sequences.
func (r Result) interval() string {
	if r.ContinuedRounds > 0 {
		return " CS"
	}
	return " CI"
}

// Failures returns the lanes and arms with failed runs among runs, in the order of their
// first failure.
func Failures(runs []receipt.Record) []Failure {
	type key struct{ lane, arm string }
	total := map[key]int{}
	out := []Failure{}
	at := map[key]int{}
	for _, r := range runs {
		k := key{r.Lane, r.Arm}
		total[k]++
		if r.OK() {
			continue
		}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Failure{Lane: r.Lane, Arm: r.Arm, Error: r.Error, Stderr: lastLine(r.StderrTail)})
		}
		out[i].Failed++
	}
	for i := range out {
		out[i].Runs = total[key{out[i].Lane, out[i].Arm}]
	}
	return out
}

// lastLine returns the last non-empty line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Rule is what the gate judges lanes by.
type Rule struct {
	// ThresholdPct is the smallest slowdown that fails the build; LanePct gives lanes a
	// threshold of their own (a lane counted in instructions is judged against a far
	// smaller one than a timed lane).
	ThresholdPct float64
	LanePct      map[string]float64
	// Anytime, when set, judges every interval as a confidence sequence: a gate run that
	// continues an earlier receipt's pairs (driftcheck.SequenceCrit).
	Anytime *Anytime
}

// Anytime is the rule of a continued gate run: every bound is a confidence sequence's,
// valid at any number of pairs and looks, so pairs can be added to an undecided lane run
// after run at one error rate instead of restarting its test.
type Anytime struct {
	// TunedRounds is the rounds (pairs per collection) the sequences are tightest at: the
	// earlier receipts' rounds and this run's max-pairs.
	TunedRounds int
	// PriorRounds is how many of the rounds came from the earlier receipts.
	PriorRounds int
}

// Threshold is lane's threshold: its own (LanePct), else the rule's.
func (r Rule) Threshold(lane string) float64 {
	if t := r.LanePct[lane]; t > 0 {
		return t
	}
	return r.ThresholdPct
}

// Evaluate applies the gate rule to a drift check and the runs behind it. Per lane and
// candidate:
//
//   - broken: a run of the lane failed, in the candidate or the base;
//   - regression: reproduced slower in every collection, with every collection's estimate
//     at or beyond the threshold and its interval above 0 at the family level (see the
//     package doc);
//   - pass: the pooled interval lies below +threshold: a regression beyond the threshold
//     is ruled out (a lane faster or unchanged passes this way); at the rule's last look, a
//     lane that shows no reproduced regression (the binding end);
//   - rerun: anything else: the data cannot settle it yet; the finding says about how
//     many more pairs would.
//
// The overall outcome is the worst lane's.
func Evaluate(rep driftcheck.Report, runs []receipt.Record, rule Rule) Result {
	res := Result{Outcome: Pass, ThresholdPct: rule.ThresholdPct, Failures: Failures(runs)}
	if rule.Anytime != nil {
		res.ContinuedRounds = rule.Anytime.PriorRounds
	}
	type key struct{ lane, arm string }
	var order []key
	by := map[key][]driftcheck.LaneSummary{}
	pooled := map[key]driftcheck.LaneSummary{}
	for _, l := range rep.Lanes {
		k := key{l.Lane, l.Arm}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], l)
	}
	for _, l := range rep.Pooled {
		pooled[key{l.Lane, l.Arm}] = l
	}
	// A pass reads each lane's own pooled interval; a regression needs every collection's
	// replication test at its level divided over the lanes (family).
	family := float64(max(len(order), 1))
	k := crits{anytime: rule.Anytime, alpha: rep.Config.Alpha, collections: max(rep.Collections, 1)}
	if !(k.alpha > 0) {
		k.alpha = driftcheck.DefaultConfig().Alpha
	}
	if family > 1 {
		k.family, _ = FamilyDesign(rep.Config, max(rep.Collections, 1), int(family))
	}
	// The look is the run's, the furthest any lane got: a lane settled at an earlier look
	// and measured no more is judged at the run's last look like the others (the binding
	// end), so that a pass the other lanes' data later moves (their noise lends to its
	// interval) cannot leave a stopped lane to a rerun no round will measure.
	look := 0
	for _, p := range rep.Pooled {
		look = max(look, p.Round)
	}
	values := runValues(runs)
	for _, key := range order {
		f := judge(key.lane, key.arm, by[key], pooled[key], rule.Threshold(key.lane), family, end{rep.Config.MaxPairs, look}, k)
		if v := values[key.lane]; v != nil {
			f.Unit, f.BaseValue, f.CandValue = v.unit, driftcheck.Median(v.by[rep.Base]), driftcheck.Median(v.by[key.arm])
		}
		if failed := failuresOf(res.Failures, key.lane, key.arm); len(failed) > 0 {
			f.Outcome = Broken
			f.Reason = "runs failed: " + strings.Join(failed, "; ")
		}
		res.Findings = append(res.Findings, f)
	}
	for _, fl := range res.Failures { // a failed lane the drift check has nothing on
		if !slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Lane == fl.Lane }) {
			res.Findings = append(res.Findings, Finding{Lane: fl.Lane, Arm: fl.Arm, Outcome: Broken,
				Reason: "runs failed: " + strings.Join(failuresOf(res.Failures, fl.Lane, ""), "; ")})
		}
	}
	for _, f := range res.Findings {
		if rank(f.Outcome) > rank(res.Outcome) {
			res.Outcome = f.Outcome
		}
	}
	return res
}

// crits are the critical values, in standard errors, of the intervals the gate reads: the
// look's (its group-sequential design) or, for a continued run, a confidence sequence's.
type crits struct {
	anytime     *Anytime
	alpha       float64
	collections int
	// family is the design of the replication tests at the family level: alpha/2N spent
	// over the report's looks (FamilyDesign; nil for one lane, whose summaries' own tails
	// are its level, and for a report whose configuration designs no rule, whose looks'
	// tails are then divided by N).
	family *driftcheck.Design
}

// FamilyDesign returns the design of the regression rule's replication tests for a family
// of n lanes: the rule of cfg (its looks and spending function, over the given number of
// collections) with alpha divided by n, so that each lane's one-sided replication error
// over all its looks is alpha/2n and the family's at most alpha/2. Dividing each look's
// nominal tail by n instead (what the gate did before) lets a lane's error over its looks
// exceed alpha/2n: a spending function's nominal tails are computed for the level they
// spend, where successive looks' crossings overlap more than they do at a level n times
// smaller.
func FamilyDesign(cfg driftcheck.Config, collections, n int) (*driftcheck.Design, error) {
	cfg = cfg.WithDefaults()
	cfg.Alpha, cfg.Design = cfg.Alpha/float64(max(n, 1)), nil
	return driftcheck.NewDesign(cfg, collections)
}

// pooled is the critical value of a lane's pooled interval (the pass rule's).
func (k crits) pooled(p driftcheck.LaneSummary) float64 {
	if k.anytime == nil {
		return p.Crit
	}
	return driftcheck.SequenceCrit(k.alpha, p.UsablePairs, k.anytime.TunedRounds*k.collections, p.DFUsed)
}

// collection is the critical value of one collection's one-sided replication test at the
// family level (the regression rule's).
func (k crits) collection(c driftcheck.LaneSummary, family float64) float64 {
	switch {
	case k.anytime == nil && k.family != nil:
		return driftcheck.TCritical(k.family.CollTail(c.Round), c.DFUsed)
	case k.anytime == nil:
		return driftcheck.TCritical(c.Tail/family, c.DFUsed)
	}
	return driftcheck.SequenceCrit(k.alpha/(2*family), c.UsablePairs, k.anytime.TunedRounds, c.DFUsed)
}

// bounded reports whether a summary has an interval to read.
func bounded(s driftcheck.LaneSummary) bool { return s.Bounded && s.DFUsed > 0 }

// laneValues are one lane's run medians by arm, and its unit.
type laneValues struct {
	unit string
	by   map[string][]float64
}

// runValues collects the median of every successful run, by lane and arm.
func runValues(runs []receipt.Record) map[string]*laneValues {
	out := map[string]*laneValues{}
	for _, r := range runs {
		if !r.OK() || len(r.Samples) == 0 {
			continue
		}
		v := out[r.Lane]
		if v == nil {
			v = &laneValues{unit: r.Unit, by: map[string][]float64{}}
			out[r.Lane] = v
		}
		v.by[r.Arm] = append(v.by[r.Arm], driftcheck.Median(r.Samples))
	}
	return out
}

// Pending returns the lanes a sequential gate run still needs pairs for: those whose
// outcome would be a rerun. A lane that passes, regressed or broke is settled.
func Pending(rep driftcheck.Report, rule Rule) []string {
	return Evaluate(rep, nil, rule).Pending()
}

// Pending returns the lanes the result leaves to a rerun, once each.
func (r Result) Pending() []string {
	var out []string
	for _, f := range r.Findings {
		if f.Outcome == Rerun && !slices.Contains(out, f.Lane) {
			out = append(out, f.Lane)
		}
	}
	return out
}

// failuresOf describes the failures of a lane in the base and in the candidate arm cand
// (every arm when cand is empty): "arm cand: 8 of 8 runs failed (...)".
func failuresOf(fs []Failure, lane, cand string) []string {
	var out []string
	for _, f := range fs {
		if f.Lane == lane && (cand == "" || f.Arm == cand || f.Arm == spec.BaseArm) {
			out = append(out, strings.TrimPrefix(f.String(), "lane "+lane+", "))
		}
	}
	return out
}

// judge decides one lane of one candidate from its collection summaries and its pooled
// summary.
func judge(lane, arm string, colls []driftcheck.LaneSummary, p driftcheck.LaneSummary, threshold, family float64, e end, k crits) Finding {
	f := Finding{Lane: lane, Arm: arm, Outcome: Rerun, Pairs: p.UsablePairs, ThresholdPct: threshold,
		EstimatePct: p.EstimatePct, CILowPct: p.CILowPct, CIHighPct: p.CIHighPct, Bounded: p.Bounded}
	thr := driftcheck.FloorLog(threshold)
	thrText := human.Num(threshold)
	slowAll := len(colls) > 0 && p.EstimateLog >= thr
	for _, c := range colls {
		f.DeltaPct = append(f.DeltaPct, c.EstimatePct)
		f.Verdicts = append(f.Verdicts, c.Verdict)
		slowAll = slowAll && c.Verdict == driftcheck.LaneReproducedSlower && bounded(c) && c.EstimateLog-k.collection(c, family)*c.SELog > 0
	}
	pq := k.pooled(p)
	lo, hi := p.EstimateLog-pq*p.SELog, p.EstimateLog+pq*p.SELog
	if k.anytime != nil && bounded(p) {
		// The interval shown is the confidence sequence's.
		f.CILowPct, f.CIHighPct = driftcheck.LogToPct(lo), driftcheck.LogToPct(hi)
	}
	effect := human.DeltaCI(f.EstimatePct, f.CILowPct, f.CIHighPct)
	if !p.Bounded {
		effect = "no interval yet"
	}
	switch {
	case slowAll:
		f.Outcome = Regression
		f.Reason = fmt.Sprintf("reproduced slower in every collection (%s) beyond the %s%% threshold, each interval above 0 at the family level; pooled %s",
			formatDeltas(f.DeltaPct), thrText, effect)
	case bounded(p) && hi < thr:
		f.Outcome = Pass
		f.Reason = fmt.Sprintf("a regression beyond %s%% is ruled out: pooled effect %s", thrText, effect)
		if p.Bounded && (p.OrderLowPct > 0 || p.OrderHighPct < 0) {
			f.Reason += fmt.Sprintf("; an order effect of %s was measured (the host drifts, or the lane depends on which arm runs first), which the order-flipped pairs cancel",
				human.DeltaCI(p.OrderEffectPct, p.OrderLowPct, p.OrderHighPct))
		}
	case p.Bounded && e.reached() && bounded(p) && lo > thr:
		// The binding end, with a slowdown the collections did not each reproduce: the gate
		// fails only reproduced regressions (a pooled-only call would add its own false
		// alarms), so it passes, and says loudly what it saw.
		f.Outcome = Pass
		f.Reason = fmt.Sprintf("passed at the rule's last look (round %d), but look at it: the pooled interval lies above the %s%% threshold (pooled effect %s) while not every collection reproduced it (%s); the gate fails only reproduced regressions",
			max(e.look, 1), thrText, effect, verdictList(f.Verdicts))
	case p.Bounded && e.reached():
		// The binding end: at the rule's last look a lane that shows no regression passes.
		f.Outcome, f.LastLook = Pass, true
		f.CatchPct = 100 * catchRate(colls, p, 2*thr, thr, family, k)
		f.Reason = fmt.Sprintf("passed at the rule's last look (round %d): a regression beyond %s%% is not shown (pooled effect %s); at this noise the gate catches a %s%% regression with probability %s",
			max(e.look, 1), thrText, effect, human.Num(2*threshold), human.Percent(f.CatchPct))
	case !p.Bounded && p.UsablePairs > 0 && e.maxPairs > 0 && e.reached():
		// The binding end holds for a lane without an interval too: its runs were too few
		// or too often set aside to estimate its noise, so the pass says it rules nothing out.
		f.Outcome, f.LastLook = Pass, true
		f.Reason = fmt.Sprintf("passed at the rule's last look (round %d) with no interval: %s cannot estimate the noise (%s), so this pass rules nothing out",
			e.look, human.Count(p.UsablePairs, "usable pair", "usable pairs"), mdtable.OrDash(p.Reason))
	case !p.Bounded:
		f.MorePairs = -1
		f.Reason = fmt.Sprintf("no interval yet (%s); run at least 2 pairs per collection", mdtable.OrDash(p.Reason))
	case p.EstimateLog >= thr:
		// The estimate is past the threshold: more pairs would confirm the regression.
		f.MorePairs = more(pairsToCatch(colls, p, p.EstimateLog, thr, family, morePower, k), p.UsablePairs)
		f.Reason = fmt.Sprintf("slower beyond the %s%% threshold (%s) but not reproduced in every collection (%s); about %d more pairs would settle it",
			thrText, effect, verdictList(f.Verdicts), f.MorePairs)
	default:
		f.MorePairs = more(pairsToPass(p, thr, morePower, k), p.UsablePairs)
		f.Reason = fmt.Sprintf("a regression beyond %s%% is not ruled out: pooled effect %s reaches past it; about %d more pairs would rule it out if the estimate holds",
			thrText, effect, f.MorePairs)
	}
	return f
}

// end is where a gate run stands against its rule's last look: maxPairs (0 for a fixed
// protocol, whose one look is its last) and the look the run reached.
type end struct{ maxPairs, look int }

// reached reports whether the run is at its rule's last look, where every lane is passed
// or failed.
func (e end) reached() bool { return e.maxPairs == 0 || e.look >= e.maxPairs }

// catchRate returns the probability that the gate's regression rule fails a lane whose true
// slowdown is theta (log scale) at the noise and look of its summaries: every collection's
// interval above 0 at its family level, and the pooled estimate past the threshold thr
// (normal approximation; a lower bound, the events being positively correlated).
func catchRate(colls []driftcheck.LaneSummary, p driftcheck.LaneSummary, theta, thr, family float64, k crits) float64 {
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	rate := 1.0
	for _, c := range colls {
		if !c.Bounded || c.SELog <= 0 {
			return 0
		}
		rate *= phi(theta/c.SELog - k.collection(c, family))
	}
	if p.SELog > 0 {
		rate *= phi((theta - thr) / p.SELog)
	}
	return rate
}

// morePower is the probability at which MorePairs is sized: the pairs that would decide
// the lane 80% of the time if its effect were its estimate.
const morePower = 0.8

// maxMorePairs caps a MorePairs estimate: an effect at the threshold is out of reach.
const maxMorePairs = 100_000

// pairsToCatch returns about how many usable pairs in all, over every collection, the
// regression rule needs to fail a lane whose slowdown is theta (log scale) with probability
// power: every collection's interval above 0 at its family level and the pooled estimate
// past thr (catchRate), each standard error shrinking with the square root of the pairs.
// It returns -1 without a noise estimate.
func pairsToCatch(colls []driftcheck.LaneSummary, p driftcheck.LaneSummary, theta, thr, family, power float64, k crits) int {
	if !p.Bounded || p.SELog <= 0 || len(colls) == 0 {
		return -1
	}
	at := func(perColl int) float64 {
		scaled := make([]driftcheck.LaneSummary, len(colls))
		for i, c := range colls {
			c.SELog *= math.Sqrt(float64(max(c.UsablePairs, 1)) / float64(perColl))
			c.UsablePairs = perColl
			scaled[i] = c
		}
		q := p
		q.SELog *= math.Sqrt(float64(max(p.UsablePairs, 1)) / float64(perColl*len(colls)))
		q.UsablePairs = perColl * len(colls)
		return catchRate(scaled, q, theta, thr, family, k)
	}
	lo, hi := 1, maxMorePairs/len(colls)
	if at(hi) < power {
		return maxMorePairs
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if at(mid) >= power {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo * len(colls)
}

// pairsToPass returns about how many usable pairs in all the pass rule needs to rule out
// a regression beyond thr (log scale) with probability power if the lane's effect were its
// estimate: the pooled interval's upper end below thr. It returns -1 without a noise
// estimate.
func pairsToPass(p driftcheck.LaneSummary, thr, power float64, k crits) int {
	margin := thr - p.EstimateLog
	crit := k.pooled(p)
	if !p.Bounded || p.SELog <= 0 || !(crit > 0) || math.IsInf(crit, 1) {
		return -1
	}
	if margin <= 0 {
		return maxMorePairs
	}
	z := math.Sqrt2 * math.Erfinv(2*power-1)
	n := float64(max(p.UsablePairs, 1)) * math.Pow(p.SELog*(crit+z)/margin, 2)
	return int(math.Min(math.Ceil(n), maxMorePairs))
}

// more returns how many pairs beyond have reach need (-1 when need is unknown).
func more(need, have int) int {
	if need < 0 {
		return -1
	}
	return max(need-have, 1)
}

// verdictList joins lane verdicts: "reproduced-slower, undecided".
func verdictList(vs []driftcheck.LaneVerdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// formatDeltas lists deltas with human.Delta: "+6.2%, +5.9%".
func formatDeltas(ds []float64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = human.Delta(d)
	}
	return strings.Join(parts, ", ")
}

func rank(o Outcome) int {
	switch o {
	case Broken:
		return 3
	case Regression:
		return 2
	case Rerun:
		return 1
	}
	return 0
}

// effectCell is a finding's pooled effect with its interval for a table, "-" without one.
func (f Finding) effectCell() string {
	if !f.Bounded {
		return "-"
	}
	return human.DeltaCI(f.EstimatePct, f.CILowPct, f.CIHighPct)
}

// verdictsCell is a finding's lane verdicts per collection for a table. A lane that
// passed is not shown as a regression: a collection that reproduced a slowdown reads
// "slower, under the threshold" when the pooled interval keeps it under the threshold,
// and "slower, not shown past the threshold" when the lane passed at the rule's last look
// without that (google/uuid's UnmarshalJSON: +3.4% [+1.8%, +5.1%] against 5%, which read
// "reproduced-slower, reproduced-slower" beside "pass").
func (f Finding) verdictsCell() string {
	if f.Outcome != Pass {
		return verdictList(f.Verdicts)
	}
	slower := "slower, not shown past the threshold"
	if f.Bounded && f.CIHighPct < f.ThresholdPct {
		slower = "slower, under the threshold"
	}
	s := make([]string, len(f.Verdicts))
	for i, v := range f.Verdicts {
		s[i] = string(v)
		if v == driftcheck.LaneReproducedSlower {
			s[i] = slower
		}
	}
	return strings.Join(s, ", ")
}

// valuesCell is a finding's base and candidate values for a table: "1.2ms -> 1.4ms", "-"
// without runs.
func (f Finding) valuesCell() string {
	if f.BaseValue <= 0 && f.CandValue <= 0 {
		return "-"
	}
	return human.Value(f.BaseValue, f.Unit) + " -> " + human.Value(f.CandValue, f.Unit)
}

// Markdown writes the gate's summary: the outcome, one row per lane (the pooled effect's
// interval at level, e.g. "95%", as Text states it), the failed runs, and the receipt.
func Markdown(w io.Writer, res Result, base, candidate, receiptPath, level string) error {
	title := map[Outcome]string{
		Pass:       "pass: no reproduced regression",
		Rerun:      "rerun advised: the data cannot settle it yet",
		Regression: "FAIL: a reproduced regression",
		Broken:     "FAIL: runs failed, the build is broken",
	}[res.Outcome]
	fmt.Fprintf(w, "## flipbench gate: %s\n\n", title)
	fmt.Fprintf(w, "Base `%s`, candidate `%s`; threshold %s%%. Positive effects are slower.%s\n\n", base, candidate, human.Num(res.ThresholdPct), res.continued())
	if weak := res.weak(); weak != "" {
		fmt.Fprintf(w, "**%s**\n\n", weak)
	}
	rows := make([][]string, len(res.Findings))
	for i, f := range res.Findings {
		rows[i] = []string{f.Lane, f.Arm, f.valuesCell(), f.effectCell(), formatDeltas(f.DeltaPct), f.verdictsCell(), fmt.Sprint(f.Pairs), string(f.Outcome), f.Reason}
	}
	if err := mdtable.Write(w, []string{"lane", "arm", "base -> candidate", "effect [" + level + res.interval() + "]", "effect per collection", "lane verdicts", "pairs", "outcome", "reason"}, rows); err != nil {
		return err
	}
	if len(res.Failures) > 0 {
		fmt.Fprintf(w, "\n### Failed runs\n\nA failed run is a real failure, not noise: a rerun will not fix it. The receipt has each run's error and stderr.\n\n")
		fs := slices.Clone(res.Failures)
		slices.SortStableFunc(fs, func(a, b Failure) int { return cmp.Compare(a.Lane, b.Lane) })
		for _, f := range fs {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
	_, err := fmt.Fprintf(w, "\nReceipt: `%s`\n", receiptPath)
	return err
}
