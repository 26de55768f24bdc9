package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/mdtable"
)

// DriftMarkdown writes the drift check of r as markdown, meant to sit under a
// second-level heading of a receipt: for each candidate and collection a pooled table
// (one row per lane), then one table of every pass-pair verdict with its reason, then the
// warnings as a bullet list. Sections use third-level headings.
func DriftMarkdown(w io.Writer, r driftcheck.Report) error {
	ew := NewErrWriter(w)

	for _, g := range driftGroups(r.Lanes) {
		fmt.Fprintf(ew, "### %s vs %s, collection %d\n\n", g[0].Arm, r.Base, g[0].Collection)
		if ew.Err() != nil {
			return ew.Err()
		}
		rows := make([][]string, 0, len(g))
		for _, l := range g {
			med, mean := SummaryDeltas(l)
			rows = append(rows, []string{
				l.Lane, l.Role, fmt.Sprint(l.Passes), med, mean,
				fmt.Sprintf("%d/%d", l.Faster, l.Passes), OrDash(driftcheck.PairCounts(l)), driftP(l),
				driftSummary(l.Base), driftSummary(l.Cand), driftBlips(l.HostBlips), string(l.Verdict), l.Reason,
			})
		}
		if err := mdtable.Write(w, []string{"lane", "role", "passes", "median Δ", "mean Δ", "faster",
			"pairs", "p", r.Base + " median (95% CI)", g[0].Arm + " median (95% CI)", "host blips", "verdict", "reason"}, rows); err != nil {
			return err
		}
		fmt.Fprintln(ew)
	}

	fmt.Fprintf(ew, "### Pass-pair verdicts\n\n")
	if ew.Err() != nil {
		return ew.Err()
	}
	if len(r.Pairs) == 0 {
		fmt.Fprintf(ew, "No pass-pairs.\n\n")
	} else {
		rows := make([][]string, 0, len(r.Pairs))
		for _, p := range r.Pairs {
			d1, d2 := Pct(p.Delta1Pct), Pct(p.Delta2Pct)
			if !p.Usable1 {
				d1 = "-"
			}
			if !p.Usable2 {
				d2 = "-"
			}
			rows = append(rows, []string{p.Lane, p.Arm, fmt.Sprint(p.Collection), fmt.Sprint(p.Pair),
				d1, d2, string(p.Verdict), p.Reason})
		}
		if err := mdtable.Write(w, []string{"lane", "arm", "collection", "pair", "delta 1 (fwd)", "delta 2 (rev)", "verdict", "reason"}, rows); err != nil {
			return err
		}
		fmt.Fprintln(ew)
	}

	fmt.Fprintf(ew, "### Warnings\n\n")
	if len(r.Warnings) == 0 {
		fmt.Fprintf(ew, "None.\n")
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(ew, "- %s\n", s)
	}
	return ew.Err()
}

// driftGroups splits lane summaries into runs of the same candidate and collection,
// keeping their order.
func driftGroups(lanes []driftcheck.LaneSummary) [][]driftcheck.LaneSummary {
	var out [][]driftcheck.LaneSummary
	for i, l := range lanes {
		if i == 0 || l.Arm != lanes[i-1].Arm || l.Collection != lanes[i-1].Collection {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], l)
	}
	return out
}

// driftP formats the pooled p-value, or "-" when nothing was pooled.
func driftP(l driftcheck.LaneSummary) string {
	switch {
	case l.Base.N == 0 || l.Cand.N == 0:
		return "-"
	case l.P < 0.001:
		return "<0.001"
	default:
		return fmt.Sprintf("%.3f", l.P)
	}
}

// driftSummary formats a pooled median with its confidence interval.
func driftSummary(s driftcheck.Summary) string {
	switch {
	case s.N == 0:
		return "-"
	case !s.Bounded:
		return fmt.Sprintf("%s (n=%d, too few for a CI)", driftNum(s.Median), s.N)
	default:
		return fmt.Sprintf("%s [%s, %s]", driftNum(s.Median), driftNum(s.Lo), driftNum(s.Hi))
	}
}

// driftNum formats a measured value with 4 significant digits.
func driftNum(x float64) string {
	if math.Abs(x) >= 1e4 || (x != 0 && math.Abs(x) < 1e-3) {
		return fmt.Sprintf("%.3e", x)
	}
	return fmt.Sprintf("%.4g", x)
}

// SummaryDeltas formats a lane summary's median and mean pass delta with Pct, or "-" for
// both when the lane has no usable pass in the collection (all its runs failed or are
// missing): the summary's zeros are then no measurement.
func SummaryDeltas(l driftcheck.LaneSummary) (median, mean string) {
	if l.Passes == 0 {
		return "-", "-"
	}
	return Pct(l.MedianDeltaPct), Pct(l.MeanDeltaPct)
}

// driftBlips lists host-blip passes: "pass 5, 9".
func driftBlips(passes []int) string {
	if len(passes) == 0 {
		return "-"
	}
	s := make([]string, len(passes))
	for i, p := range passes {
		s[i] = fmt.Sprint(p)
	}
	return "pass " + strings.Join(s, ", ")
}
