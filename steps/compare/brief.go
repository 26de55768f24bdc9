package compare

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/report"
)

// BriefRows is the most lanes Brief's table lists; the others are counted.
const BriefRows = 8

// briefNames is the most neutral lanes Brief names; the others are counted.
const briefNames = 12

// briefRank orders Brief's rows: reproduced slower, then faster, then the rest (undecided,
// order-dependent, insufficient).
func briefRank(v driftcheck.LaneVerdict) int {
	switch v {
	case driftcheck.LaneReproducedSlower:
		return 0
	case driftcheck.LaneReproducedFaster:
		return 1
	}
	return 2
}

// Brief writes the comparison as a pull-request comment of at most about 15 lines, where
// Markdown writes every lane: the heading with the Summary, what was compared, a table of
// the lanes that are not neutral (reproduced slower, then faster, then the others; at most
// BriefRows, the others counted), the neutral lanes named on one line, and where the full
// table is (full: the receipt page, say).
func Brief(w io.Writer, d *loaded.Receipt, names Names, full string) error {
	arms := d.Plan.Arms
	return brief(w, Rows(d), [2]string{arms[0].Name, arms[len(arms)-1].Name}, Level(d.Analysis), names, full)
}

// brief writes Brief's comment for the rows of a comparison of the arms named arms, whose
// intervals are at level.
func brief(w io.Writer, rows []Row, arms [2]string, level string, names Names, full string) error {
	ew := report.NewErrWriter(w)
	fmt.Fprintf(ew, "## flipbench compare: %s\n\n", Summary(rows))
	fmt.Fprintf(ew, "%s against %s, %s; changes are the candidate against the base (positive is slower) with %s intervals, valid at every look.\n\n",
		names.Cand, names.Base, human.Count(len(rows), "lane", "lanes"), level)
	var shown []Row
	var neutral []string
	for _, r := range rows {
		if r.Effect.Verdict == driftcheck.LaneNeutral {
			neutral = append(neutral, "`"+r.Lane+"`")
		} else {
			shown = append(shown, r)
		}
	}
	slices.SortStableFunc(shown, func(a, b Row) int { return briefRank(a.Effect.Verdict) - briefRank(b.Effect.Verdict) })
	if len(shown) > 0 {
		var cells [][]string
		for _, r := range shown[:min(len(shown), BriefRows)] {
			cells = append(cells, []string{"`" + r.Lane + "`", value(r.Base, r.Unit), value(r.Cand, r.Unit), Change(r.Effect), Verdict(r)})
		}
		header := []string{"lane", arms[0], arms[1], "change [" + level + " CI]", "verdict"}
		if err := mdtable.Write(ew, header, cells); err != nil {
			return err
		}
		if more := len(shown) - BriefRows; more > 0 {
			fmt.Fprintf(ew, "\n%s not neutral: see the full table.\n", human.Count(more, "more lane is", "more lanes are"))
		}
		fmt.Fprintln(ew)
	}
	if len(neutral) > 0 {
		list := strings.Join(neutral[:min(len(neutral), briefNames)], ", ")
		if more := len(neutral) - briefNames; more > 0 {
			list += fmt.Sprintf(" and %d more", more)
		}
		fmt.Fprintf(ew, "Neutral (%d): %s.\n\n", len(neutral), list)
	}
	fmt.Fprintf(ew, "Every lane, with the notes and the memory table: %s\n", full)
	return ew.Err()
}
