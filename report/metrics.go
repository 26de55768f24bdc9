package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/nonzero"
	"github.com/flipbench/flipbench/model/spec"
)

// MetricsSection writes the "Lane metrics" section (heading, a line on what it shows, the
// MetricsTable of every arm) after heading, the text that starts its heading line ("\n## ",
// "### "). It writes nothing and returns false when the table would show nothing.
func MetricsSection(w io.Writer, d *loaded.Receipt, heading string) (bool, error) {
	var table bytes.Buffer
	shown, err := MetricsTable(&table, d, d.Plan.ArmNames())
	if err != nil || !shown {
		return false, err
	}
	ew := NewErrWriter(w)
	fmt.Fprintf(ew, "%sLane metrics\n\nMedian over every sample of each arm's successful runs of the lane: the lane's value, then every other metric its runs reported.\n\n", heading)
	ew.Write(table.Bytes())
	return true, ew.Err()
}

// MetricsTable writes the lane metrics of a receipt: for every lane of the plan, in plan
// order, the lane's value and then every other metric its runs reported (by name), with
// one column per given arm holding the median over every sample of the arm's successful
// runs of the lane, "-" where the arm reported none. The value's row says "(value)" and
// names whether higher is better; a metric the page names in the lane's nonzero list says
// "(nonzero)". It writes nothing and returns false when no lane reported a metric besides
// its value and none names a nonzero metric: the per-pass tables already show the values.
func MetricsTable(w io.Writer, d *loaded.Receipt, arms []string) (bool, error) {
	type key struct{ lane, arm, metric string }
	values := map[key][]float64{}
	units := map[string]string{}     // lane -> the unit its runs recorded
	metrics := map[string][]string{} // lane -> its extra metrics, sorted
	for _, r := range d.Records {
		if !r.OK() {
			continue
		}
		if units[r.Lane] == "" {
			units[r.Lane] = r.Unit
		}
		values[key{r.Lane, r.Arm, r.Unit}] = append(values[key{r.Lane, r.Arm, r.Unit}], r.Samples...)
		for m, vs := range r.Metrics {
			if !slices.Contains(metrics[r.Lane], m) {
				metrics[r.Lane] = append(metrics[r.Lane], m)
			}
			values[key{r.Lane, r.Arm, m}] = append(values[key{r.Lane, r.Arm, m}], vs...)
		}
	}
	show := false
	for _, l := range d.Plan.Lanes {
		show = show || len(metrics[l.Name]) > 0 || len(l.NonZero) > 0
	}
	if !show {
		return false, nil
	}
	header := append([]string{"lane", "metric"}, arms...)
	var rows [][]string
	for _, l := range d.Plan.Lanes {
		unit := units[l.Name]
		if unit == "" {
			unit = l.Unit // no successful run: the row shows "-" for every arm
		}
		names := slices.Sorted(slices.Values(metrics[l.Name]))
		for _, m := range l.NonZero { // named but never reported: shown as "-"
			if m != unit && !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
		for i, m := range append([]string{unit}, names...) {
			label := m
			switch {
			case i == 0 && m == "":
				label = "value"
			case i == 0 && l.Better == spec.BetterHigher:
				label += " (value, higher is better)"
			case i == 0:
				label += " (value)"
			}
			if slices.Contains(l.NonZero, m) {
				label += " (nonzero)"
			}
			row := []string{l.Name, label}
			for _, a := range arms {
				xs := values[key{l.Name, a, m}]
				if len(xs) == 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, human.Quantity(driftcheck.Median(xs), m))
			}
			rows = append(rows, row)
		}
	}
	return true, mdtable.Write(w, header, rows)
}

// NonZeroWarnings returns the receipt's warnings about the metrics its lanes name in
// their nonzero lists: one for every lane, metric and arm where the metric is exactly
// zero over the arm's successful runs, or was never reported (package nonzero finds and
// phrases them, as it does the incidence report's zero).
func NonZeroWarnings(d *loaded.Receipt) []string {
	var out []string
	for _, w := range nonzero.Find(nonzero.FromRecords(d.Plan, d.Records), true) {
		out = append(out, w.String())
	}
	return out
}
