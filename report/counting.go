package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// Counted reports whether any lane of the plan counts instructions.
func Counted(p *receipt.Plan) bool {
	return slices.ContainsFunc(p.Lanes, func(l receipt.Lane) bool { return l.Metric == lanekind.MetricInstructions })
}

// CountingTable writes, for every lane of the plan that counts instructions, how it was
// counted (from which function's entry to which, operations per sample, the pinned
// environment, the tool) and what counting cost: the median wall time of the native and
// the counted process of a run, and their ratio, over the successful runs.
func CountingTable(w io.Writer, d *loaded.Receipt) error {
	type times struct{ native, counted, ratio []float64 }
	by := map[string]*times{}
	tools := map[string][]string{}
	for _, r := range d.Records {
		if !r.OK() || r.Counting == nil {
			continue
		}
		t := by[r.Lane]
		if t == nil {
			t = &times{}
			by[r.Lane] = t
		}
		c := r.Counting
		t.native = append(t.native, c.NativeSeconds)
		t.counted = append(t.counted, c.CountedSeconds)
		if c.NativeSeconds > 0 {
			t.ratio = append(t.ratio, c.CountedSeconds/c.NativeSeconds)
		}
		if !slices.Contains(tools[r.Lane], c.Tool) {
			tools[r.Lane] = append(tools[r.Lane], c.Tool)
		}
	}
	header := []string{"lane", "counted", "ops/sample", "pinned env", "tool", "native run", "counted run", "slowdown"}
	var rows [][]string
	for _, l := range d.Plan.Lanes {
		if l.Metric != lanekind.MetricInstructions || l.Counter == nil {
			continue
		}
		c := l.Counter
		span := fmt.Sprintf("`%s` to `%s`", c.Start, c.End)
		if c.Start == "" {
			span = fmt.Sprintf("`%s` to the next", c.End)
		}
		row := []string{l.Name, span, itoa(c.Iterations), strings.Join(c.Env, " "), mdtable.OrDash(strings.Join(tools[l.Name], ", "))}
		if t := by[l.Name]; t != nil {
			row = append(row, fmt.Sprintf("%.2f s", driftcheck.Median(t.native)), fmt.Sprintf("%.2f s", driftcheck.Median(t.counted)),
				fmt.Sprintf("%.0fx", driftcheck.Median(t.ratio)))
		} else {
			row = append(row, "-", "-", "-")
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "Instructions per operation, counted by Valgrind's callgrind: every instruction the lane process executes, on every thread, but for the Go runtime's work paced by the clock (its monitor and its scavenger), from an entry of the first function to the next entry of the second. System calls, I/O and waiting are not counted, nor is anything outside those calls. Each run executes the lane twice, natively and counted, with the same pinned environment; the slowdown is the median ratio of their wall times (medians over the successful runs).\n\n")
	return mdtable.Write(w, header, rows)
}
