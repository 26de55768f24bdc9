package incidence

import (
	"fmt"
	"io"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/receipt"
)

// Markdown writes the report as a markdown section: the gate's numbers, the value
// estimate, the positive-control check, a per-lane table and the findings.
func Markdown(w io.Writer, r *Report) error {
	ew := mdtable.NewErrWriter(w)
	fmt.Fprintf(ew, "## Incidence\n\n")
	fmt.Fprintf(ew, "Probe counters over the release suite (`%s`), each lane run once in a probe build (`-tags flipbench_probe`). "+
		"Totals leave the positive control lane out.\n\n", suiteName(r.Gate.Suite))
	if b := r.Build; b != nil {
		fmt.Fprintf(ew, "Suite build: %s, sha256 `%s`.\n\n", b.Source, receipt.ShortHash(b.SHA256))
	}
	if err := Summary(ew, r); err != nil {
		return err
	}
	fmt.Fprintln(ew)
	if err := Table(ew, r); err != nil {
		return err
	}
	fmt.Fprintln(ew)

	fmt.Fprintf(ew, "### Incidence findings\n\n")
	if len(r.Findings) == 0 {
		fmt.Fprintf(ew, "None.\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(ew, "- **%s**: %s\n", f.Level, mdtable.OneLine(f.Message))
	}
	return ew.Err()
}

// Summary writes the report's numbers as a markdown list: the eligible share against the
// min-share, the frequency, the extra shares, the value estimate and the positive-control
// check. An experiment page's results block shows it too.
func Summary(w io.Writer, r *Report) error {
	ew := mdtable.NewErrWriter(w)
	g := r.Gate
	fmt.Fprintf(ew, "- **Eligible share**: %s %s of %s %s = %s",
		num(r.Eligible), g.Eligible, num(r.Total), g.Total, pctText(r.Share))
	if g.MinShare > 0 {
		verdict := "below"
		if r.MeetsMinShare {
			verdict = "at or above"
		}
		fmt.Fprintf(ew, ", %s the min-share %s", verdict, human.Num(g.MinShare*100)+"%")
	}
	fmt.Fprintf(ew, ".\n")
	if r.FrequencyPerSec > 0 {
		fmt.Fprintf(ew, "- **Frequency**: %s %s per second of suite workload (%s events in %s).\n",
			num3(r.FrequencyPerSec), g.Total, num(r.Total), durText(r.SuiteTimeNs))
	} else {
		fmt.Fprintf(ew, "- **Frequency**: not computed (the suite reported no time).\n")
	}
	if len(r.Shares) > 0 {
		fmt.Fprintf(ew, "- **Shares** over the suite:")
		for i, sh := range r.Shares {
			sep := ";"
			if i == len(r.Shares)-1 {
				sep = "."
			}
			fmt.Fprintf(ew, " %s / %s = %s (%s of %s)%s", sh.Part, sh.Of, pctText(sh.Share), num(sh.PartCount), num(sh.OfCount), sep)
		}
		fmt.Fprintln(ew)
	}
	if r.HasValue {
		fmt.Fprintf(ew, "- **Value estimate**: frequency × share × saving = %s/s × %s × %s = %s ns saved per second of workload (%s of its time).\n",
			num3(r.FrequencyPerSec), pctText(r.Share), durText(g.SavingNs), num3(r.ValueNsPerSec), pctText(r.ValueShare))
	} else {
		fmt.Fprintf(ew, "- **Value estimate**: not computed (needs incidence.saving-ns and a suite time).\n")
	}
	switch c := r.Control; {
	case c.Lane == "":
		fmt.Fprintf(ew, "- **Positive control**: none named in the spec.\n")
	case !c.Ran:
		fmt.Fprintf(ew, "- **Positive control** %s: did not run.\n", c.Lane)
	case c.Fired:
		fmt.Fprintf(ew, "- **Positive control** %s: fired (%s %s), so the probe counts.\n", c.Lane, num(c.Eligible), g.Eligible)
	default:
		fmt.Fprintf(ew, "- **Positive control** %s: **did not fire** (0 %s): the probe is broken and these counts prove nothing.\n", c.Lane, g.Eligible)
	}
	return ew.Err()
}

// Table writes the per-lane table (each lane's time, counters and shares, and the suite's
// totals without the control) and the line saying which share the gate reads.
func Table(w io.Writer, r *Report) error {
	ew := mdtable.NewErrWriter(w)
	g := r.Gate
	cols := r.columns()
	header := append([]string{"lane", "time"}, cols...)
	if len(r.Gate.Shares) == 0 {
		header = append(header, "share")
	} else {
		header = append(header, g.Eligible+" / "+g.Total)
	}
	for _, sh := range r.Gate.Shares {
		header = append(header, sh.Part+" / "+sh.Of)
	}
	var rows [][]string
	for _, l := range r.Lanes {
		name := l.Lane
		if l.Control {
			name += " (control)"
		}
		row := []string{name, durText(l.TimeNs)}
		if l.Runs == 0 {
			for range cols {
				row = append(row, "-")
			}
			row = append(row, "failed")
			for range r.Gate.Shares {
				row = append(row, "-")
			}
			rows = append(rows, row)
			continue
		}
		for _, c := range cols {
			row = append(row, num(l.Counts[c]))
		}
		rows = append(rows, append(append(row, pctText(l.Share)), shareCells(l.Shares)...))
	}
	total := []string{"**suite** (control excluded)", durText(r.SuiteTimeNs)}
	for _, c := range cols {
		total = append(total, num(r.Totals[c]))
	}
	rows = append(rows, append(append(total, pctText(r.Share)), shareCells(r.Shares)...))
	if err := mdtable.Write(ew, header, rows); err != nil {
		return fmt.Errorf("incidence table: %w", err)
	}
	if len(r.Gate.Shares) == 0 {
		fmt.Fprintf(ew, "\nshare = %s / %s.\n", g.Eligible, g.Total)
	} else {
		fmt.Fprintf(ew, "\nThe gate's share is %s / %s; the others are descriptive.\n", g.Eligible, g.Total)
	}
	return ew.Err()
}

// shareCells formats extra shares as table cells.
func shareCells(shares []ShareValue) []string {
	out := make([]string, len(shares))
	for i, sh := range shares {
		out[i] = pctText(sh.Share)
	}
	return out
}

// columns orders the counters for the table: the total first, the eligible last, the
// others in between by name.
func (r *Report) columns() []string {
	g := r.Gate
	cols := []string{g.Total}
	for _, c := range r.Counters {
		if c != g.Total && c != g.Eligible {
			cols = append(cols, c)
		}
	}
	if g.Eligible != g.Total {
		cols = append(cols, g.Eligible)
	}
	return cols
}

// pctText formats a share as a percentage with enough digits for small shares.
func pctText(s float64) string {
	if s == 0 {
		return "0%"
	}
	return human.Sig(s*100) + "%"
}

// num3 formats a rate with 3 significant digits, never in e-notation.
func num3(v float64) string { return human.Sig(v) }

// durText formats ns as a duration with 3 significant digits: "1.23ms".
func durText(ns float64) string {
	if ns <= 0 {
		return "-"
	}
	return human.Value(ns, "ns")
}

func suiteName(pkg string) string {
	if pkg == "" {
		return "the suite"
	}
	return pkg
}
