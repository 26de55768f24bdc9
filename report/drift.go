package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/receipt"
)

// DriftMarkdown writes the drift check of r as markdown, meant to sit under a
// second-level heading of a receipt: for each candidate the lane evidence pooled over
// collections and per collection (EvidenceTable), the pass statistics per collection,
// then every pass-pair verdict with its reason (PairTable). Sections use third-level
// headings. roles names the lanes' roles (nil shows none). The drift check's warnings are
// not here: the receipt shows them with every other warning (Warnings), and
// flipbench drift after the tables.
func DriftMarkdown(w io.Writer, r driftcheck.Report, roles Roles, vals *Values) error {
	ew := NewErrWriter(w)
	if len(r.Pooled) > 0 {
		fmt.Fprintf(ew, "%s\n\n", LevelSentence(r))
	}
	for _, g := range Groups(r.Pooled) {
		fmt.Fprintf(ew, "### %s vs %s, pooled over collections\n\n", g[0].Arm, r.Base)
		if err := EvidenceTable(ew, r, g, roles, vals); err != nil {
			return err
		}
		fmt.Fprintln(ew)
	}
	for _, g := range Groups(r.Lanes) {
		fmt.Fprintf(ew, "### %s vs %s, collection %d\n\n", g[0].Arm, r.Base, g[0].Collection)
		if err := EvidenceTable(ew, r, g, roles, vals); err != nil {
			return err
		}
		fmt.Fprintf(ew, "\nPass statistics (for comparison with benchstat; the verdicts use the pair means above):\n\n")
		if err := passStats(ew, g, r.Base, vals); err != nil {
			return err
		}
		fmt.Fprintln(ew)
	}

	if err := carryoverTable(ew, r); err != nil {
		return err
	}
	if err := setAsideTable(ew, r); err != nil {
		return err
	}
	if err := unfinishedTable(ew, r, vals); err != nil {
		return err
	}
	fmt.Fprintf(ew, "### Pass-pair verdicts\n\n")
	if ew.Err() != nil {
		return ew.Err()
	}
	if len(r.Pairs) == 0 {
		fmt.Fprintf(ew, "No pass-pairs.\n\n")
	} else {
		if err := PairTable(ew, r.Pairs, true); err != nil {
			return err
		}
		fmt.Fprintln(ew)
	}

	return ew.Err()
}

// carryoverTable writes what each lane's runs say about the cost of a run's place and
// of the process before it (driftcheck.Carryover), when any lane was fitted.
func carryoverTable(w *ErrWriter, r driftcheck.Report) error {
	var rows [][]string
	for _, c := range r.Carryover {
		if c.Model == driftcheck.CarryNone {
			continue
		}
		rows = append(rows, []string{c.Lane, c.Model, c.Reason})
	}
	if len(rows) == 0 {
		return w.Err()
	}
	fmt.Fprintf(w, "### Carryover\n\nWhat a run's place among its lane's runs of a pass costs, and what following another arm's process costs, fitted from every complete pass; the pair means above are corrected by it (methodology: arm orders).\n\n")
	if err := mdtable.Write(w, []string{"lane", "model", "estimates (log-scale fit, shown in percent)"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return w.Err()
}

// setAsideTable writes the runs set aside as contaminated (driftcheck.SetAside), each
// with what became of its pair: measured again in a later attempt, or left out.
func setAsideTable(w *ErrWriter, r driftcheck.Report) error {
	if len(r.SetAside) == 0 {
		return w.Err()
	}
	rows := make([][]string, 0, len(r.SetAside))
	for _, a := range r.SetAside {
		fate := "its pair left out"
		if a.Remeasured {
			fate = "pass measured again"
		}
		rows = append(rows, []string{a.Lane, a.Arm, fmt.Sprint(a.Collection), fmt.Sprint(a.Pass), fmt.Sprint(a.Attempt + 1),
			fmt.Sprintf("%.1f%%", a.CVPct), fmt.Sprintf("%.1f%%", a.TypicalCVPct), fate})
	}
	fmt.Fprintf(w, "### Runs set aside\n\nRuns whose spread marks a disturbed process (methodology: contaminated processes); raw.jsonl keeps every one. A sequential run measures such a pass again at the end of its round, before the look, at most %d times.\n\n", receipt.MaxRemeasures)
	if err := mdtable.Write(w, []string{"lane", "arm", "collection", "pass", "measurement", "within-run CV", "typical CV", "then"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return w.Err()
}

// unfinishedTable writes the runs that gave no samples (driftcheck.Unfinished), each with
// what became of its pass: measured again, entered as a censored bound, or left without a
// delta.
func unfinishedTable(w *ErrWriter, r driftcheck.Report, vals *Values) error {
	if len(r.Unfinished) == 0 {
		return w.Err()
	}
	rows := make([][]string, 0, len(r.Unfinished))
	for _, u := range r.Unfinished {
		what := OneLine(u.Error)
		if u.TimedOut && u.AtLeast > 0 {
			what = fmt.Sprintf("timed out: at least %s", human.Value(u.AtLeast, vals.Unit(u.Lane)))
		}
		rows = append(rows, []string{u.Lane, u.Arm, fmt.Sprint(u.Collection), fmt.Sprint(u.Pass), fmt.Sprint(u.Attempt + 1), what, u.Outcome})
	}
	fmt.Fprintf(w, "### Runs without samples\n\nRuns that failed (a crash, bad output) or timed out; raw.jsonl keeps every one. A sequential run measures a failed run's pass again at the end of its round, before the look, at most %d times. A timed-out run whose bound is known (the wall time over the operations it had to do) is a censored observation: its pair counts toward one direction only, slower when the candidate timed out (methodology: failed and timed-out runs).\n\n", receipt.MaxRemeasures)
	if err := mdtable.Write(w, []string{"lane", "arm", "collection", "pass", "measurement", "what happened", "then"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return w.Err()
}

// passStats writes one collection's per-lane pass statistics: the median and mean pass
// delta (side by side, so a host blip shows), passes faster, the pooled-sample
// Mann-Whitney p and medians with their intervals, and host blips.
func passStats(w io.Writer, g []driftcheck.LaneSummary, base string, vals *Values) error {
	rows := make([][]string, 0, len(g))
	for _, l := range g {
		med, mean := SummaryDeltas(l)
		rows = append(rows, []string{l.Lane, fmt.Sprint(l.Passes), med, mean, fmt.Sprintf("%d/%d", l.Faster, l.Passes),
			driftP(l), driftSummary(l.Base, vals.Unit(l.Lane)), driftSummary(l.Cand, vals.Unit(l.Lane)), driftBlips(l.HostBlips)})
	}
	return mdtable.Write(w, []string{"lane", "passes", "median Δ", "mean Δ", "faster", "p (samples)",
		base + " median (95% CI)", g[0].Arm + " median (95% CI)", "host blips"}, rows)
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
func driftSummary(s driftcheck.Summary, unit string) string {
	switch {
	case s.N == 0:
		return "-"
	case !s.Bounded:
		return fmt.Sprintf("%s (n=%d, too few for a CI)", human.Value(s.Median, unit), s.N)
	default:
		return fmt.Sprintf("%s [%s, %s]", human.Value(s.Median, unit), human.Value(s.Lo, unit), human.Value(s.Hi, unit))
	}
}

// SummaryDeltas formats a lane summary's median and mean pass delta with human.Delta, or "-" for
// both when the lane has no usable pass in the collection (all its runs failed or are
// missing): the summary's zeros are then no measurement.
func SummaryDeltas(l driftcheck.LaneSummary) (median, mean string) {
	if l.Passes == 0 {
		return "-", "-"
	}
	return human.Delta(l.MedianDeltaPct), human.Delta(l.MeanDeltaPct)
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
