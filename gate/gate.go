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
// interval to exclude 0 at the family level alpha/N (N lanes x candidates, Bonferroni),
// so the chance that any of N unchanged lanes fails the build is at most alpha/2 (2.5%
// at the default alpha of 0.05) even if the collections were perfectly correlated, and
// about N (alpha/2N)^C when they are independent (C collections). A pass uses each lane's
// own interval at alpha: a regression beyond the threshold that a lane lets through is
// missed at most alpha/2 of the time.
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
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/spec"
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
	Reason   string  `json:"reason"`
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

// Evaluate applies the gate rule to a drift check and the runs behind it. Per lane and
// candidate:
//
//   - broken: a run of the lane failed, in the candidate or the base;
//   - regression: reproduced slower in every collection, with every collection's estimate
//     at or beyond thresholdPct and its interval above 0 at the family level (see the
//     package doc);
//   - pass: the pooled interval lies below +thresholdPct: a regression beyond the
//     threshold is ruled out (a lane faster or unchanged passes this way);
//   - rerun: anything else: the data cannot settle it yet; the finding says about how
//     many more pairs would.
//
// The overall outcome is the worst lane's.
func Evaluate(rep driftcheck.Report, runs []receipt.Record, thresholdPct float64) Result {
	return EvaluateLanes(rep, runs, thresholdPct, nil)
}

// EvaluateLanes is Evaluate with a threshold of its own for the lanes in lanePct (a lane
// counted in instructions is judged against a far smaller one than a timed lane); the
// other lanes take thresholdPct.
func EvaluateLanes(rep driftcheck.Report, runs []receipt.Record, thresholdPct float64, lanePct map[string]float64) Result {
	res := Result{Outcome: Pass, ThresholdPct: thresholdPct, Failures: Failures(runs)}
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
	// A pass reads each lane's own pooled interval (alpha 0); a regression needs every
	// collection's replication test at its look's level divided over the lanes (family).
	alpha, family := 0.0, float64(max(len(order), 1))
	values := runValues(runs)
	for _, k := range order {
		thr := thresholdPct
		if t := lanePct[k.lane]; t > 0 {
			thr = t
		}
		f := judge(k.lane, k.arm, by[k], pooled[k], thr, alpha, family, rep.Config.MaxPairs)
		if v := values[k.lane]; v != nil {
			f.Unit, f.BaseValue, f.CandValue = v.unit, driftcheck.Median(v.by[rep.Base]), driftcheck.Median(v.by[k.arm])
		}
		if failed := failuresOf(res.Failures, k.lane, k.arm); len(failed) > 0 {
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
func Pending(rep driftcheck.Report, thresholdPct float64) []string {
	return PendingLanes(rep, thresholdPct, nil)
}

// PendingLanes is Pending with the lane thresholds of EvaluateLanes.
func PendingLanes(rep driftcheck.Report, thresholdPct float64, lanePct map[string]float64) []string {
	var out []string
	for _, f := range EvaluateLanes(rep, nil, thresholdPct, lanePct).Findings {
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
func judge(lane, arm string, colls []driftcheck.LaneSummary, p driftcheck.LaneSummary, threshold, alpha, family float64, maxPairs int) Finding {
	f := Finding{Lane: lane, Arm: arm, Outcome: Rerun, Pairs: p.UsablePairs, ThresholdPct: threshold,
		EstimatePct: p.EstimatePct, CILowPct: p.CILowPct, CIHighPct: p.CIHighPct, Bounded: p.Bounded}
	slowAll := len(colls) > 0
	slowAll = slowAll && p.EstimateLog >= driftcheck.FloorLog(threshold)
	for _, c := range colls {
		f.DeltaPct = append(f.DeltaPct, c.EstimatePct)
		f.Verdicts = append(f.Verdicts, c.Verdict)
		slowAll = slowAll && c.Verdict == driftcheck.LaneReproducedSlower && c.LowerAbove(0, 2*c.Tail/family)
	}
	effect := human.DeltaCI(p.EstimatePct, p.CILowPct, p.CIHighPct)
	if !p.Bounded {
		effect = "no interval yet"
	}
	thr := driftcheck.FloorLog(threshold)
	thrText := human.Num(threshold)
	switch {
	case slowAll:
		f.Outcome = Regression
		f.Reason = fmt.Sprintf("reproduced slower in every collection (%s) beyond the %s%% threshold, each interval above 0 at the family level; pooled %s",
			formatDeltas(f.DeltaPct), thrText, effect)
	case p.UpperBelow(threshold, alpha):
		f.Outcome = Pass
		f.Reason = fmt.Sprintf("a regression beyond %s%% is ruled out: pooled effect %s", thrText, effect)
		if p.Bounded && (p.OrderLowPct > 0 || p.OrderHighPct < 0) {
			f.Reason += fmt.Sprintf("; an order effect of %s was measured (the host drifts, or the lane depends on which arm runs first), which the order-flipped pairs cancel",
				human.DeltaCI(p.OrderEffectPct, p.OrderLowPct, p.OrderHighPct))
		}
	case p.Bounded && (maxPairs == 0 || p.Round >= maxPairs) && p.LowerAbove(threshold, 0):
		// The binding end, with a slowdown the collections did not each reproduce: the gate
		// fails only reproduced regressions (a pooled-only call would add its own false
		// alarms), so it passes, and says loudly what it saw.
		f.Outcome = Pass
		f.Reason = fmt.Sprintf("passed at the rule's last look (round %d), but look at it: the pooled interval lies above the %s%% threshold (pooled effect %s) while not every collection reproduced it (%s); the gate fails only reproduced regressions",
			max(p.Round, 1), thrText, effect, verdictList(f.Verdicts))
	case p.Bounded && (maxPairs == 0 || p.Round >= maxPairs):
		// The binding end: at the rule's last look a lane that shows no regression passes.
		f.Outcome = Pass
		f.CatchPct = 100 * catchRate(colls, p, 2*thr, thr, family)
		f.Reason = fmt.Sprintf("passed at the rule's last look (round %d): a regression beyond %s%% is not shown (pooled effect %s); at this noise the gate catches a %s%% regression with probability %s",
			max(p.Round, 1), thrText, effect, human.Num(2*threshold), human.Percent(f.CatchPct))
	case !p.Bounded:
		f.MorePairs = -1
		f.Reason = fmt.Sprintf("no interval yet (%s); run at least 2 pairs per collection", report.OrDash(p.Reason))
	case p.EstimateLog >= thr:
		// The estimate is past the threshold: more pairs would confirm the regression.
		f.MorePairs = more(pairsToCatch(colls, p, p.EstimateLog, thr, family, morePower), p.UsablePairs)
		f.Reason = fmt.Sprintf("slower beyond the %s%% threshold (%s) but not reproduced in every collection (%s); about %d more pairs would settle it",
			thrText, effect, verdictList(f.Verdicts), f.MorePairs)
	default:
		f.MorePairs = more(pairsToPass(p, thr, morePower), p.UsablePairs)
		f.Reason = fmt.Sprintf("a regression beyond %s%% is not ruled out: pooled effect %s reaches past it; about %d more pairs would rule it out if the estimate holds",
			thrText, effect, f.MorePairs)
	}
	return f
}

// catchRate returns the probability that the gate's regression rule fails a lane whose true
// slowdown is theta (log scale) at the noise and look of its summaries: every collection's
// interval above 0 at its family level, and the pooled estimate past the threshold thr
// (normal approximation; a lower bound, the events being positively correlated).
func catchRate(colls []driftcheck.LaneSummary, p driftcheck.LaneSummary, theta, thr, family float64) float64 {
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	rate := 1.0
	for _, c := range colls {
		if !c.Bounded || c.SELog <= 0 {
			return 0
		}
		q := driftcheck.TCritical(c.Tail/family, c.DFUsed)
		rate *= phi(theta/c.SELog - q)
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
func pairsToCatch(colls []driftcheck.LaneSummary, p driftcheck.LaneSummary, theta, thr, family, power float64) int {
	if !p.Bounded || p.SELog <= 0 || len(colls) == 0 {
		return -1
	}
	at := func(perColl int) float64 {
		scaled := make([]driftcheck.LaneSummary, len(colls))
		for i, c := range colls {
			c.SELog *= math.Sqrt(float64(max(c.UsablePairs, 1)) / float64(perColl))
			scaled[i] = c
		}
		q := p
		q.SELog *= math.Sqrt(float64(max(p.UsablePairs, 1)) / float64(perColl*len(colls)))
		return catchRate(scaled, q, theta, thr, family)
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
func pairsToPass(p driftcheck.LaneSummary, thr, power float64) int {
	margin := thr - p.EstimateLog
	if !p.Bounded || p.SELog <= 0 || p.Crit <= 0 {
		return -1
	}
	if margin <= 0 {
		return maxMorePairs
	}
	z := math.Sqrt2 * math.Erfinv(2*power-1)
	n := float64(max(p.UsablePairs, 1)) * math.Pow(p.SELog*(p.Crit+z)/margin, 2)
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
	fmt.Fprintf(w, "Base `%s`, candidate `%s`; threshold %s%%. Positive effects are slower.\n\n", base, candidate, human.Num(res.ThresholdPct))
	rows := make([][]string, len(res.Findings))
	for i, f := range res.Findings {
		rows[i] = []string{f.Lane, f.Arm, f.valuesCell(), f.effectCell(), formatDeltas(f.DeltaPct), verdictList(f.Verdicts), fmt.Sprint(f.Pairs), string(f.Outcome), f.Reason}
	}
	if err := mdtable.Write(w, []string{"lane", "arm", "base -> candidate", "effect [" + level + " CI]", "effect per collection", "lane verdicts", "pairs", "outcome", "reason"}, rows); err != nil {
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
