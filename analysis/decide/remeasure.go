package decide

import (
	"cmp"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
)

// Burst is a pass during which the host was far busier than in the run's quiet passes:
// other processes used BusyPct of all CPUs over it (the pipeline reads it from the host
// snapshots). Its runs are measured again like a contaminated one's.
type Burst struct {
	Collection, Pass int
	BusyPct          float64
}

// Remeasure returns the passes a sequential run measures again at the end of a round,
// before its look (every arm's run of the lane's pass, back to back, in the plan's
// order): of the lanes still pending, each pass whose run rep set aside as contaminated, both passes of each pair it
// set aside as an outlier, each pass with a run that failed (a crash, bad output, a
// timeout without a bound: driftcheck.Unfinished not censored), and each pass of bursts
// that the lane ran in, at most receipt.MaxRemeasures times each. A neighbour's burst or
// one flaky process then costs a few more processes instead of the pair. They are chosen
// by spread, by distance from the lane's other pairs either way, by a failure or by the
// host's load, never by the direction of a delta, so measuring them again favours neither
// direction. A timed-out run with a bound is not
// measured again: it is data (a censored observation that counts toward slower), and
// measuring it until it does not time out would hide the slowness it shows.
func Remeasure(rep driftcheck.Report, pending []string, bursts []Burst) []receipt.Remeasure {
	type pass struct {
		c, p int
		lane string
	}
	seen := map[pass]bool{}
	var out []receipt.Remeasure
	add := func(a receipt.Remeasure, current int) {
		k := pass{a.Collection, a.Pass, a.Lane}
		if current >= receipt.MaxRemeasures || seen[k] || !slices.Contains(pending, a.Lane) {
			return
		}
		seen[k] = true
		a.Attempt = current + 1
		out = append(out, a)
	}
	for _, s := range rep.SetAside {
		if !s.Remeasured {
			add(receipt.Remeasure{Lane: s.Lane, Collection: s.Collection, Pass: s.Pass, Arm: s.Arm, CVPct: s.CVPct, TypicalCVPct: s.TypicalCVPct}, s.Attempt)
		}
	}
	for _, u := range rep.Unfinished {
		if !u.Remeasured && !u.Censored {
			add(receipt.Remeasure{Lane: u.Lane, Collection: u.Collection, Pass: u.Pass, Arm: u.Arm, Failed: u.Error}, u.Attempt)
		}
	}
	for _, p := range rep.Pairs {
		if p.Outlier {
			add(receipt.Remeasure{Lane: p.Lane, Collection: p.Collection, Pass: 2*p.Pair - 1, Arm: p.Arm, Outlier: true}, p.Attempt1)
			add(receipt.Remeasure{Lane: p.Lane, Collection: p.Collection, Pass: 2 * p.Pair, Arm: p.Arm, Outlier: true}, p.Attempt2)
		}
	}
	for _, b := range bursts {
		for _, p := range rep.Pairs {
			if p.Collection != b.Collection || p.Pair != receipt.Round(b.Pass) {
				continue
			}
			attempt := p.Attempt1
			if b.Pass%2 == 0 {
				attempt = p.Attempt2
			}
			add(receipt.Remeasure{Lane: p.Lane, Collection: b.Collection, Pass: b.Pass, BusyPct: b.BusyPct}, attempt)
		}
	}
	slices.SortStableFunc(out, func(x, y receipt.Remeasure) int {
		return cmp.Or(cmp.Compare(x.Collection, y.Collection), cmp.Compare(x.Pass, y.Pass), cmp.Compare(x.Lane, y.Lane))
	})
	return out
}
