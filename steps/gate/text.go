package gate

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/internal/texttable"
)

// Text writes the gate's summary for a terminal, as Markdown does but at most width
// columns wide, as flipbench compare's table is: the outcome and what was compared,
// wrapped; one row per lane (lane, arm when there are several, base -> candidate, the pooled effect with its
// interval at level, e.g. "95%", the outcome) with its reason wrapped in the room left or
// under the row; the failed runs; the receipt.
func Text(w io.Writer, res Result, base, candidate, receiptPath, level string, width int) error {
	ew := mdtable.NewErrWriter(w)
	title := map[Outcome]string{
		Pass:       "pass: no reproduced regression",
		Rerun:      "rerun advised: the data cannot settle it yet",
		Regression: "FAIL: a reproduced regression",
		Broken:     "FAIL: runs failed, the build is broken",
	}[res.Outcome]
	fmt.Fprintf(ew, "flipbench gate: %s\n", title)
	for _, l := range texttable.Wrap(fmt.Sprintf("Base %s, candidate %s; threshold %s%%. Positive effects are slower; the effect is pooled over collections, with its %s interval.%s",
		base, candidate, human.Num(res.ThresholdPct), level, res.continued()), width) {
		fmt.Fprintln(ew, l)
	}
	if weak := res.weak(); weak != "" {
		for _, l := range texttable.Wrap(weak, width) {
			fmt.Fprintln(ew, l)
		}
	}
	fmt.Fprintln(ew)
	// One candidate arm (the gate's usual case) needs no arm column.
	arms := map[string]bool{}
	for _, f := range res.Findings {
		arms[f.Arm] = true
	}
	header := []string{"lane", "arm", "base -> candidate", "effect [" + level + res.interval() + "]", "outcome", ""}
	if len(arms) == 1 {
		header = slices.Delete(header, 1, 2)
	}
	rows := make([][]string, len(res.Findings))
	for i, f := range res.Findings {
		rows[i] = []string{f.Lane, f.Arm, f.valuesCell(), f.effectCell(), string(f.Outcome), f.Reason}
		if len(arms) == 1 {
			rows[i] = slices.Delete(rows[i], 1, 2)
		}
	}
	if err := texttable.Write(ew, header, rows, width); err != nil {
		return err
	}
	if len(res.Failures) > 0 {
		fmt.Fprintf(ew, "\nFailed runs (a real failure, not noise: a rerun will not fix it; the receipt has each run's error and stderr):\n")
		fs := slices.Clone(res.Failures)
		slices.SortStableFunc(fs, func(a, b Failure) int { return cmp.Compare(a.Lane, b.Lane) })
		for _, f := range fs {
			lines := texttable.Wrap("- "+f.String(), width)
			fmt.Fprintln(ew, strings.Join(lines, "\n  "))
		}
	}
	fmt.Fprintf(ew, "\nreceipt: %s\n", receiptPath)
	return ew.Err()
}
