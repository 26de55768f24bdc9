package compare

import (
	"fmt"
	"io"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/texttable"
	"github.com/flipbench/flipbench/lanekind"
	"github.com/flipbench/flipbench/profdiff"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
)

// Names say what the arms of a comparison are, for the table's first line: "main
// (1a2b3c4d5e6f)", "the working tree (uncommitted changes)".
type Names struct {
	Base, Cand string
}

// Row is one lane of the comparison.
type Row struct {
	Lane string
	// Unit is the lane's unit as its runs printed it.
	Unit string
	// Base and Cand are each arm's value: the median over its runs of each run's median,
	// with a 95% interval (Bounded false when there are too few runs for one).
	Base, Cand driftcheck.Summary
	// Effect is the lane's evidence pooled over collections: the effect with its interval,
	// the verdict and its reason.
	Effect driftcheck.LaneSummary
	// Memory holds the medians of the lane's B/op and allocs/op for base and cand, when
	// the lane reported them.
	Memory map[string][2]float64
}

// Rows computes the comparison of a receipt, one row per lane in plan order: the arms'
// values from their successful runs, the effect from the drift check.
func Rows(d *report.Data) []Row {
	base, cand := d.Plan.Arms[0].Name, ""
	if len(d.Plan.Arms) > 1 {
		cand = d.Plan.Arms[1].Name
	}
	var rows []Row
	for _, l := range d.Plan.Lanes {
		r := Row{Lane: l.Name, Unit: l.Unit, Memory: map[string][2]float64{}}
		meds := map[string][]float64{}
		mem := map[string]map[string][]float64{}
		for _, rec := range d.Records {
			if rec.Lane != l.Name || !rec.OK() || (rec.Arm != base && rec.Arm != cand) {
				continue
			}
			if r.Unit == "" {
				r.Unit = rec.Unit
			}
			meds[rec.Arm] = append(meds[rec.Arm], driftcheck.Median(rec.Samples))
			for _, u := range []string{"B/op", "allocs/op"} {
				if vs := rec.Metrics[u]; len(vs) > 0 {
					if mem[u] == nil {
						mem[u] = map[string][]float64{}
					}
					mem[u][rec.Arm] = append(mem[u][rec.Arm], vs...)
				}
			}
		}
		r.Base, r.Cand = summarize(meds[base]), summarize(meds[cand])
		for u, by := range mem {
			r.Memory[u] = [2]float64{driftcheck.Median(by[base]), driftcheck.Median(by[cand])}
		}
		if i := slices.IndexFunc(d.Analysis.Pooled, func(s driftcheck.LaneSummary) bool { return s.Lane == l.Name && s.Arm == cand }); i >= 0 {
			r.Effect = d.Analysis.Pooled[i]
		} else {
			r.Effect = driftcheck.LaneSummary{Lane: l.Name, Arm: cand, Verdict: driftcheck.LaneInsufficient, Reason: "no pair of runs to compare"}
		}
		rows = append(rows, r)
	}
	return rows
}

// summarize returns the median of xs with its 95% interval (benchmath's, with no
// assumption about the distribution).
func summarize(xs []float64) driftcheck.Summary {
	if len(xs) == 0 {
		return driftcheck.Summary{}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), 0.95)
	out := driftcheck.Summary{N: len(xs), Median: s.Center, Confidence: s.Confidence}
	if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi) {
		out.Lo, out.Hi, out.Bounded = s.Lo, s.Hi, true
	}
	return out
}

// ProfileLines is how many functions of each profile difference the table names.
const ProfileLines = 3

// Table writes the comparison of a finished receipt for a terminal, at most width columns
// wide: a line saying what was compared and how, then one row per lane with the base and
// candidate values (median over runs of each run's median ± the half-width of its 95%
// interval, as benchstat shows them), the effect with its 95% interval (from the pair
// means of order-flipped passes; as a factor beyond 2x), the verdict, and under each row
// its reason; then the lanes' memory per operation when they reported it; then, for
// every profiled lane, where its CPU time and allocations changed (profdiff.Lines: the
// top ProfileLines functions by flat difference per operation).
func Table(w io.Writer, d *report.Data, names Names, width int) error {
	ew := report.NewErrWriter(w)
	p := d.Plan
	what := fmt.Sprintf("%s against %s", names.Cand, names.Base)
	fmt.Fprintln(ew, wrap(what, width))
	fmt.Fprintln(ew, wrap(protocolLine(d), width))
	fmt.Fprintln(ew)
	rows := Rows(d)
	conf := "95%"
	if len(rows) > 0 && rows[0].Effect.Confidence > 0 {
		conf = human.Num(math.Round(rows[0].Effect.Confidence*1000)/10) + "%"
	}
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, []string{r.Lane, value(r.Base, r.Unit), value(r.Cand, r.Unit), report.Effect(r.Effect), string(r.Effect.Verdict), r.Effect.Reason})
	}
	if err := texttable.Write(ew, []string{"lane", p.Arms[0].Name, p.Arms[len(p.Arms)-1].Name, "delta [" + conf + " CI]", "verdict", "reason"}, cells, width); err != nil {
		return err
	}
	var mem [][]string
	for _, r := range rows {
		if len(r.Memory) == 0 {
			continue
		}
		row := []string{r.Lane}
		for _, u := range []string{"B/op", "allocs/op"} {
			v, ok := r.Memory[u]
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf("%s -> %s (%s)", human.Quantity(v[0], u), human.Quantity(v[1], u), change(v[0], v[1])))
		}
		mem = append(mem, row)
	}
	if len(mem) > 0 {
		fmt.Fprintf(ew, "\nMemory per operation, median over every sample (go test -benchmem):\n\n")
		if err := texttable.Write(ew, []string{"lane", "B/op", "allocs/op"}, mem, width); err != nil {
			return err
		}
	}
	if err := profdiff.Lines(ew, d.Profiles, ProfileLines); err != nil {
		return err
	}
	return ew.Err()
}

// protocolLine says how the comparison was measured: "benchtime 100ms; 6 samples per
// process; 2 collections; stopped after 3 rounds (every lane decided); 96 processes in
// 1m10s."
func protocolLine(d *report.Data) string {
	p := d.Plan
	bt := "-"
	if len(p.Arms) > 0 {
		if k, err := lanekind.Lookup(p.Arms[0].Kind); err == nil {
			if v, ok := k.Benchtime(p.Arms[0].Command); ok {
				bt = v
			}
		}
	}
	s := fmt.Sprintf("benchtime %s; %s per process after %d warmup; %s", bt, report.Count(p.Protocol.Samples, "sample", "samples"),
		p.Protocol.Warmup, report.Count(p.Protocol.Collections, "collection", "collections"))
	if last, ok := report.Stopped(d); ok {
		s += fmt.Sprintf("; stopped after %s (%s)", report.Count(last.Round, "round", "rounds"), stopWhy(last.Stop))
	}
	return s + fmt.Sprintf("; %s.", report.Count(len(d.Records), "process", "processes"))
}

// stopWhy says why a sequential comparison stopped.
func stopWhy(stop string) string {
	switch stop {
	case receipt.StopDecided:
		return "every lane decided"
	case receipt.StopMaxPairs:
		return "max-pairs reached"
	case receipt.StopBudget:
		return "budget spent"
	}
	return stop
}

// value formats an arm's value: "1.20ms ±2%", "-" without runs.
func value(s driftcheck.Summary, unit string) string {
	if s.N == 0 {
		return "-"
	}
	return human.Spread(s.Median, s.Lo, s.Hi, unit, s.Bounded)
}

// change formats the change from a to b in percent of a: "+33.3%", "x2.00", "0.0%".
func change(a, b float64) string {
	switch {
	case a == b:
		return "0.0%"
	case a == 0:
		return "from 0"
	}
	return human.Delta((b - a) / a * 100)
}

// wrap folds a line of text to width.
func wrap(s string, width int) string {
	lines := texttable.Wrap(s, width)
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n"
		}
		out += l
	}
	return out
}
