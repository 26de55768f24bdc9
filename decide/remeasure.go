package decide

import (
	"cmp"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
)

// Again is a lane's pass that a sequential run measures again in its next round: every
// arm's run of it, back to back, in the plan's order.
type Again struct {
	Lane       string
	Collection int
	Pass       int
	// Attempt is the attempt the new measurement is (driftcheck.Observation.Attempt).
	Attempt int
	// Why names what a look found: a run set aside as contaminated (Arm, with its CV and
	// its arm's typical one), or the pair an outlier (Arm is the candidate compared).
	Arm               string
	Outlier           bool
	CVPct, TypicalPct float64
}

// Remeasure returns the passes of the lanes still pending whose run rep set aside as
// contaminated (that pass) or whose pair it set aside as an outlier (both of its
// passes), each at most receipt.MaxRemeasures times: a neighbour's burst then costs a
// pair a round later instead of the pair. Both are chosen by spread, or by distance from
// the lane's other pairs either way, never by the direction of a delta, so measuring
// them again favours neither direction.
func Remeasure(rep driftcheck.Report, pending []string) []Again {
	type pass struct {
		c, p int
		lane string
	}
	seen := map[pass]bool{}
	var out []Again
	add := func(a Again, current int) {
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
			add(Again{Lane: s.Lane, Collection: s.Collection, Pass: s.Pass, Arm: s.Arm, CVPct: s.CVPct, TypicalPct: s.TypicalCVPct}, s.Attempt)
		}
	}
	for _, p := range rep.Pairs {
		if p.Outlier {
			add(Again{Lane: p.Lane, Collection: p.Collection, Pass: 2*p.Pair - 1, Arm: p.Arm, Outlier: true}, p.Attempt1)
			add(Again{Lane: p.Lane, Collection: p.Collection, Pass: 2 * p.Pair, Arm: p.Arm, Outlier: true}, p.Attempt2)
		}
	}
	slices.SortStableFunc(out, func(x, y Again) int {
		return cmp.Or(cmp.Compare(x.Collection, y.Collection), cmp.Compare(x.Pass, y.Pass), cmp.Compare(x.Lane, y.Lane))
	})
	return out
}
