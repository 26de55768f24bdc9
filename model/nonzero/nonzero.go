// Package nonzero finds measured quantities that must not be exactly zero and are: the
// one place flipbench turns "exactly zero" into a warning, in one shape.
//
// A zero can be the right answer and still be a warning sign. Experiment 10's decision
// record says it of stale compute: once a scheduler starts work it is not sure of, some
// of that work must end obsolete, and a stale compute of exactly zero usually means too
// much was discarded before it started. An incidence counter says it of the situation an
// experiment optimises: zero events may be the suite's true answer, or a probe in the
// wrong place. Either way a person should look before relying on it.
//
// Two callers build Quantities and ask Find: the incidence report, for its eligible
// counter over the release suite, and receipts and pages, for the metrics a page names in
// a lane's nonzero list (FromRecords), per lane and arm. Find returns one Warning per
// quantity that is exactly zero (measured at least once, and 0 every time) or, for the
// lanes, was never reported at all.
package nonzero

import (
	"fmt"
	"strings"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
)

// Quantity is one measured quantity that must not be exactly zero.
type Quantity struct {
	// Name is the metric or counter, as the lane reports it: "stale-compute-ms/op",
	// "cheap-parked-behind-costly".
	Name string
	// Where says where it was measured ("lane Overload125, arm base"); empty for the
	// whole measurement.
	Where string
	// Over says what it was measured over ("12 runs (72 samples)", "4280 dispatches in
	// 6 lanes").
	Over string
	// Values are its measurements. The quantity is exactly zero when there is at least
	// one and every one is 0; it is missing when there is none.
	Values []float64
	// Why says what a zero means here, or what to check.
	Why string
}

// Zero reports whether the quantity was measured and is 0 in every measurement.
func (q Quantity) Zero() bool {
	if len(q.Values) == 0 {
		return false
	}
	for _, v := range q.Values {
		if v != 0 {
			return false
		}
	}
	return true
}

// Warning says that a quantity that must not be exactly zero is, or was never reported.
type Warning struct {
	Name, Where, Over, Why string
	// Missing says the quantity was not reported at all (no values), rather than 0.
	Missing bool
}

// String formats the warning in its one shape:
//
//	NAME is exactly 0 in WHERE, over OVER: verify it before relying on it (WHY)
//	NAME was not reported in WHERE, over OVER: check its name against what the lane reports (WHY)
//
// Each part without a value is left out with its words.
func (w Warning) String() string {
	var b strings.Builder
	b.WriteString(w.Name)
	if w.Missing {
		b.WriteString(" was not reported")
	} else {
		b.WriteString(" is exactly 0")
	}
	if w.Where != "" {
		b.WriteString(" in " + w.Where)
	}
	if w.Over != "" {
		if w.Where != "" {
			b.WriteString(",")
		}
		b.WriteString(" over " + w.Over)
	}
	if w.Missing {
		b.WriteString(": check its name against what the lane reports")
	} else {
		b.WriteString(": verify it before relying on it")
	}
	if w.Why != "" {
		b.WriteString(" (" + w.Why + ")")
	}
	return b.String()
}

// Find returns a warning for every quantity that is exactly zero and, when missing is
// set, for every quantity with no values at all, in the order given.
func Find(qs []Quantity, missing bool) []Warning {
	var out []Warning
	for _, q := range qs {
		switch {
		case q.Zero():
			out = append(out, Warning{Name: q.Name, Where: q.Where, Over: q.Over, Why: q.Why})
		case missing && len(q.Values) == 0:
			out = append(out, Warning{Name: q.Name, Where: q.Where, Over: q.Over, Why: q.Why, Missing: true})
		}
	}
	return out
}

// FromRecords returns the quantities a receipt's lanes name in their nonzero lists: one
// per lane, metric and arm (plan order), with the values of every sample of the arm's
// successful runs of the lane. A metric is the lane's own value when it is the unit the
// runs recorded, else one of their extra metrics. An arm with no successful run of the
// lane is left out: its failed runs are reported as such.
func FromRecords(plan *receipt.Plan, recs []receipt.Record) []Quantity {
	var out []Quantity
	for li, l := range plan.Lanes {
		for _, name := range l.NonZero {
			for _, a := range plan.Arms {
				q := Quantity{Name: name, Where: fmt.Sprintf("lane %s, arm %s", l.Name, a.Name),
					Why: fmt.Sprintf("the page names it in lanes[%d].nonzero: an exact zero there is a warning sign, not a result", li)}
				runs, samples := 0, 0
				for _, r := range recs {
					if r.Lane != l.Name || r.Arm != a.Name || !r.OK() {
						continue
					}
					runs++
					samples += len(r.Samples)
					if r.Unit == name {
						q.Values = append(q.Values, r.Samples...)
					} else {
						q.Values = append(q.Values, r.Metrics[name]...)
					}
				}
				if runs == 0 {
					continue
				}
				q.Over = fmt.Sprintf("%s (%s)", human.Count(runs, "run", "runs"), human.Count(samples, "sample", "samples"))
				out = append(out, q)
			}
		}
	}
	return out
}
