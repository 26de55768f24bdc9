package pipeline

import (
	"path/filepath"
	"slices"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/model/receipt"
)

// A neighbour's burst: a pass during which other processes took much more of the machine
// than in the run's other passes disturbs every run of it, whatever their spread shows.
// Such a pass is measured again before the round's look, like a contaminated run
// (decide.Remeasure), for the lanes still pending: the host snapshot taken after the pass
// (receipt.Snapshot.BusyPct, other processes' share of all CPUs over the pass,
// flipbench's own and its lanes' left out) says so, never the deltas, so measuring it
// again favours neither direction. A host busy all along is its own quiet level and
// measures nothing again.
const (
	// burstMinPct is the least share of all CPUs other processes must have used over a
	// pass for it to be a burst.
	burstMinPct = 20.0
	// burstAbovePct is how many points above the run's quiet passes (the lower quartile of
	// its passes so far, which a burst over half of them does not move) that share must be.
	burstAbovePct = 15.0
)

// bursts returns the plan's own passes of round (its passes 2 x round - 1 and 2 x round of
// every collection) whose first "after" snapshot (the plan's measurement, not a
// re-measure's) shows a burst against the quiet level of the passes of rounds 1 to round
// (their lower quartile). Only snapshots of rounds up to round are read, so a look
// replayed after an interruption finds what it found the first time.
func bursts(snaps []receipt.Snapshot, round int) []decide.Burst {
	type cp struct{ c, p int }
	first := map[cp]float64{}
	var order []cp
	for _, s := range snaps {
		k := cp{s.Collection, s.Pass}
		if s.When != "after" || receipt.Round(s.Pass) > round {
			continue
		}
		if _, seen := first[k]; !seen {
			first[k] = s.BusyPct
			order = append(order, k)
		}
	}
	if len(order) == 0 {
		return nil
	}
	shares := make([]float64, 0, len(order))
	for _, k := range order {
		shares = append(shares, first[k])
	}
	slices.Sort(shares)
	quiet := shares[(len(shares)-1)/4]
	var out []decide.Burst
	for _, k := range order {
		if pct := first[k]; receipt.Round(k.p) == round && pct >= max(burstMinPct, quiet+burstAbovePct) {
			out = append(out, decide.Burst{Collection: k.c, Pass: k.p, BusyPct: pct})
		}
	}
	return out
}

// bursts returns the passes of round that a neighbour's burst disturbed, from the run's
// env.json (decide.Remeasure measures them again for the lanes still pending). A run that
// continues earlier receipts, or that has no env.json (a merge's replay), finds none.
func (s *sequence) bursts(round int) []decide.Burst {
	if s.dir == "" || s.prior != nil {
		return nil
	}
	var env receipt.Env
	if err := receipt.ReadJSON(filepath.Join(s.dir, receipt.EnvFile), &env); err != nil {
		return nil // no snapshots: nothing says a pass was disturbed
	}
	return bursts(env.Snapshots, round)
}
