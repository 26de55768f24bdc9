package decide

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
)

// Count is one metric of one lane and arm as the processes measured it: each process's mean
// per operation over its samples (receipt.Record.Metrics), the input of a guard's count
// bounds (spec.Lane.AtMost).
type Count struct {
	Lane, Arm, Metric string
	// PerProcess holds one mean per process that reported the metric.
	PerProcess []float64
}

// CountsOf gathers every metric the runs of recs reported, per lane, arm and metric, in
// record order. Every run that ended well counts, a run set aside for its timing and its
// re-measure alike: a count does not move with the host's load.
func CountsOf(recs []receipt.Record) []Count {
	type key struct{ lane, arm, metric string }
	idx := map[key]int{}
	var out []Count
	for _, r := range recs {
		if !r.OK() {
			continue
		}
		for _, m := range slices.Sorted(maps.Keys(r.Metrics)) {
			vals := r.Metrics[m]
			if len(vals) == 0 {
				continue
			}
			k := key{r.Lane, r.Arm, m}
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, Count{Lane: r.Lane, Arm: r.Arm, Metric: m})
			}
			out[i].PerProcess = append(out[i].PerProcess, stats.Mean(vals))
		}
	}
	return out
}

// countBound is what the data say of one bound: the mean over processes and its one-sided
// interval ends at the rule's level.
type countBound struct {
	metric       string
	bound        float64
	n            int
	mean, lo, hi float64
}

// boundOf computes the mean of a count over its processes with a one-sided interval of
// tail tail at each end (Student's t over the per-process means, stats.MeanCI: unbounded
// from one process, no spread for a count the same in every process).
func boundOf(metric string, bound float64, perProcess []float64, tail float64) countBound {
	b := countBound{metric: metric, bound: bound, n: len(perProcess)}
	if b.n > 0 {
		b.mean, b.lo, b.hi = stats.MeanCI(perProcess, 1-2*tail)
	}
	return b
}

// text describes the bound's evidence: "cold-calls/op 0.12 [0.05, 0.19] over 20 processes,
// bound 0.5".
func (b countBound) text() string {
	return fmt.Sprintf("%s %s [%s, %s] over %d processes, bound %s", b.metric, human.Sig(b.mean), human.Sig(b.lo), human.Sig(b.hi), b.n, human.Num(b.bound))
}

// countTail is the one-sided error rate of the count bounds of a lane: half the rule's
// two-sided rate, or of the level of the lane's pooled interval when the rule reads each
// summary's own (its look's share of the error), 0.025 without one.
func (v *verdicts) countTail(l laneCase) float64 {
	switch {
	case v.alpha > 0:
		return v.alpha / 2
	case l.pooled != nil && l.pooled.Confidence > 0 && l.pooled.Confidence < 1:
		return (1 - l.pooled.Confidence) / 2
	}
	return 0.025
}

// counts judges a guard lane's count bounds for the arm: a bound held when the interval's
// upper end is at or below it, a regression when its lower end is above it (a count the
// candidate was to keep down is shown beyond its bound), else open. It reports whether
// every bound held.
func (v *verdicts) counts(l laneCase) bool {
	if len(l.lane.AtMost) == 0 {
		return true
	}
	held := true
	var ok []string
	for _, m := range slices.Sorted(maps.Keys(l.lane.AtMost)) {
		b := boundOf(m, l.lane.AtMost[m], v.perProcess(l.lane.Name, m), v.countTail(l))
		switch {
		case b.n == 0:
			held = false
			v.open(OpenNotMeasured, "guard lane %s bounds %s at %s, but no process of %s reported it", l.lane.Name, m, human.Num(b.bound), v.arm)
		case b.hi <= b.bound:
			ok = append(ok, b.text())
		case b.lo > b.bound:
			held = false
			v.guards = append(v.guards, fmt.Sprintf("guard lane %s exceeds its count bound: %s", l.lane.Name, b.text()))
		default:
			held = false
			v.open(OpenUnderPowered, "guard lane %s: a count above its bound not ruled out: %s", l.lane.Name, b.text())
		}
	}
	if len(ok) > 0 {
		v.passed = append(v.passed, fmt.Sprintf("guard lane %s keeps its counts within their bounds: %s", l.lane.Name, strings.Join(ok, "; ")))
	}
	return held
}

// perProcess returns the arm's per-process means of a lane's metric.
func (v *verdicts) perProcess(lane, metric string) []float64 {
	for _, c := range v.in.Counts {
		if c.Lane == lane && c.Arm == v.arm && c.Metric == metric {
			return c.PerProcess
		}
	}
	return nil
}

// boundsText lists count bounds: "cold-calls/op <= 0.5", "none".
func boundsText(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s <= %s", k, human.Num(m[k])))
	}
	return strings.Join(parts, ", ")
}
