// Package gate decides a CI regression gate from a drift check: fail the build only when a
// regression reproduces across order-flipped pass pairs in every collection, and advise a
// rerun, not a failure, when what it sees is drift or too little data.
//
// Continuous-benchmarking gates on shared CI runners are known for false alarms, and a gate
// that cries wolf gets switched off. This gate's evidence rule is the experiment's: a pass
// delta counts only when it survives the order flip.
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
	"slices"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/spec"
)

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
	// DeltaPct is the lane's median pass delta, per collection (positive is slower).
	DeltaPct []float64 `json:"delta_pct"`
	// Verdicts are the lane verdicts, per collection.
	Verdicts []driftcheck.LaneVerdict `json:"verdicts"`
	Reason   string                   `json:"reason"`
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
//   - regression: the lane verdict is reproduced-slower in every collection and the median
//     pass delta is at least thresholdPct in every collection;
//   - rerun: a possible regression the data cannot settle: a drift or insufficient verdict
//     in any collection, a mixed verdict leaning slower, or a reproduced slowdown beyond
//     the threshold in only some collections;
//   - pass: anything else (neutral, faster, or a reproduced slowdown below the threshold,
//     which is reported but does not fail the build).
//
// The overall outcome is the worst lane's.
func Evaluate(rep driftcheck.Report, runs []receipt.Record, thresholdPct float64) Result {
	res := Result{Outcome: Pass, ThresholdPct: thresholdPct, Failures: Failures(runs)}
	type key struct{ lane, arm string }
	var order []key
	by := map[key][]driftcheck.LaneSummary{}
	for _, l := range rep.Lanes {
		k := key{l.Lane, l.Arm}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], l)
	}
	for _, k := range order {
		f := judge(k.lane, k.arm, by[k], thresholdPct)
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

func judge(lane, arm string, colls []driftcheck.LaneSummary, threshold float64) Finding {
	f := Finding{Lane: lane, Arm: arm, Outcome: Pass}
	slowAll, slowAny, unsettled := true, false, ""
	for _, c := range colls {
		f.DeltaPct = append(f.DeltaPct, c.MedianDeltaPct)
		f.Verdicts = append(f.Verdicts, c.Verdict)
		slow := c.Verdict == driftcheck.LaneReproducedSlower && c.MedianDeltaPct >= threshold
		slowAll = slowAll && slow
		slowAny = slowAny || slow
		switch {
		case c.Verdict == driftcheck.LaneDrift, c.Verdict == driftcheck.LaneInsufficient:
			unsettled = fmt.Sprintf("collection %d: %s (%s)", c.Collection, c.Verdict, c.Reason)
		case c.Verdict == driftcheck.LaneMixed && c.MedianDeltaPct > 0:
			unsettled = fmt.Sprintf("collection %d: mixed, leaning slower at %s", c.Collection, report.Pct(c.MedianDeltaPct))
		}
	}
	deltas := formatDeltas(f.DeltaPct)
	switch {
	case len(colls) > 0 && slowAll:
		f.Outcome = Regression
		f.Reason = fmt.Sprintf("slower in every collection (%s), reproduced across order-flipped pairs, beyond the %g%% threshold", deltas, threshold)
	case slowAny:
		f.Outcome = Rerun
		f.Reason = fmt.Sprintf("slower beyond the %g%% threshold in some collections but not all (%s); rerun to settle it", threshold, deltas)
	case unsettled != "":
		f.Outcome = Rerun
		f.Reason = unsettled + "; rerun on a quieter runner"
	default:
		f.Reason = fmt.Sprintf("no reproduced regression beyond %g%% (%s)", threshold, deltas)
	}
	return f
}

// formatDeltas lists deltas with report.Pct: "+6.2%, +5.9%".
func formatDeltas(ds []float64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = report.Pct(d)
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

// Markdown writes the gate's summary: the outcome, one row per lane, the failed runs, and
// the receipt.
func Markdown(w io.Writer, res Result, base, candidate, receiptPath string) error {
	title := map[Outcome]string{
		Pass:       "pass: no reproduced regression",
		Rerun:      "rerun advised: the data cannot settle it",
		Regression: "FAIL: a reproduced regression",
		Broken:     "FAIL: runs failed, the build is broken",
	}[res.Outcome]
	fmt.Fprintf(w, "## flipbench gate: %s\n\n", title)
	fmt.Fprintf(w, "Base `%s`, candidate `%s`; threshold %g%%. Positive deltas are slower.\n\n", base, candidate, res.ThresholdPct)
	rows := make([][]string, len(res.Findings))
	for i, f := range res.Findings {
		vs := make([]string, len(f.Verdicts))
		for j, v := range f.Verdicts {
			vs[j] = string(v)
		}
		rows[i] = []string{f.Lane, f.Arm, formatDeltas(f.DeltaPct), strings.Join(vs, ", "), string(f.Outcome), f.Reason}
	}
	if err := mdtable.Write(w, []string{"lane", "arm", "median delta per collection", "lane verdicts", "outcome", "reason"}, rows); err != nil {
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
