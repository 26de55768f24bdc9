package report

import (
	"fmt"
	"io"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/internal/texttable"
)

// DriftText writes the drift check of r for a terminal, every line at most width columns
// (texttable): the configuration, then for each candidate the lane evidence pooled over
// collections and per collection (role, the base and candidate values from vals, effect
// with its interval, MDE, verdict, and the reason under each lane), every pass-pair verdict with its deltas and reason, and the
// warnings. The per-collection pass statistics, which are for comparing with benchstat,
// are in the markdown (DriftMarkdown) only.
func DriftText(w io.Writer, r driftcheck.Report, roles Roles, vals *Values, width int) error {
	ew := NewErrWriter(w)
	para := func(s string) {
		for _, l := range texttable.Wrap(s, width) {
			fmt.Fprintln(ew, l)
		}
	}
	para(ConfigText(r) + " Negative effects mean the candidate is better.")
	for _, sec := range []struct {
		groups [][]driftcheck.LaneSummary
		pooled bool
	}{{Groups(r.Pooled), true}, {Groups(r.Lanes), false}} {
		for _, g := range sec.groups {
			where := fmt.Sprintf("collection %d", g[0].Collection)
			if sec.pooled {
				where = "pooled over collections"
			}
			fmt.Fprintf(ew, "\n%s vs %s, %s\n\n", g[0].Arm, r.Base, where)
			var rows [][]string
			for _, s := range g {
				rows = append(rows, []string{s.Lane, mdtable.OrDash(string(roles[s.Lane])), vals.Change(s.Lane, r.Base, s.Arm, s.Collection), Effect(s), mdeText(s), string(s.Verdict), s.Reason})
			}
			if err := texttable.Write(ew, []string{"lane", "role", r.Base + " -> " + g[0].Arm, "effect", "MDE", "verdict", "reason"}, rows, width); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(ew, "\nPass-pair verdicts\n\n")
	if len(r.Pairs) == 0 {
		fmt.Fprintln(ew, "No pass-pairs.")
	} else {
		var rows [][]string
		for _, p := range r.Pairs {
			d1, d2, m := PairDeltas(p)
			rows = append(rows, []string{p.Lane, p.Arm, fmt.Sprint(p.Collection), fmt.Sprint(p.Pair), d1, d2, m, string(p.Verdict), p.Reason})
		}
		if err := texttable.Write(ew, []string{"lane", "arm", "coll", "pair", "Δ fwd", "Δ rev", "mean", "verdict", "reason"}, rows, width); err != nil {
			return err
		}
	}
	fmt.Fprintf(ew, "\nWarnings\n\n")
	if len(r.Warnings) == 0 {
		fmt.Fprintln(ew, "None.")
	}
	for _, s := range r.Warnings {
		for i, l := range texttable.Wrap(s, width-2) {
			if i == 0 {
				fmt.Fprintln(ew, "- "+l)
			} else {
				fmt.Fprintln(ew, "  "+l)
			}
		}
	}
	fmt.Fprintf(ew, "\n")
	para("The pass statistics per collection (median and mean pass deltas, Mann-Whitney p, pooled medians) are in flipbench drift --markdown.")
	return ew.Err()
}
