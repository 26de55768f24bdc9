package loaded

import (
	"cmp"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/lanekind"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// DriftInput turns a plan and its records into the drift check's input. A failed run is an
// observation without samples that names its error, and a timed-out one carries its bound
// in the lane's unit (driftcheck.Observation.AtLeast). A lane is higher-is-better when the
// plan says better: higher (spec.Resolve records every lane's better direction in the plan).
func DriftInput(plan *receipt.Plan, recs []receipt.Record) driftcheck.Input {
	in := driftcheck.Input{
		Base:        plan.Arms[0].Name,
		Collections: plan.Protocol.Collections,
		Passes:      plan.Protocol.Passes,
	}
	for _, a := range plan.Arms[1:] {
		in.Candidates = append(in.Candidates, a.Name)
	}
	// After is the arm of the process that ran just before, in the same pass (the same
	// round's measurement of it: a pass measured again runs in a later round), by start
	// time: failed runs ran too. A pass runs on one machine, so shards merged from several
	// keep each pass's own sequence.
	order := slices.Clone(recs)
	slices.SortStableFunc(order, func(a, b receipt.Record) int {
		return cmp.Or(cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.Pass, b.Pass), cmp.Compare(a.Round, b.Round), a.Started.Compare(b.Started))
	})
	after := map[receipt.Key]string{}
	for i, r := range order {
		if i > 0 && order[i-1].Collection == r.Collection && order[i-1].Pass == r.Pass && order[i-1].Round == r.Round {
			after[r.Key()] = order[i-1].Arm
		}
	}
	units := map[string]string{} // lane -> the unit its runs print, for a bound's
	for _, l := range plan.Lanes {
		units[l.Name] = l.Unit
	}
	for _, r := range recs {
		if r.OK() && units[r.Lane] == "" {
			units[r.Lane] = r.Unit
		}
	}
	for _, r := range recs {
		o := driftcheck.Observation{Collection: r.Collection, Pass: r.Pass, Lane: r.Lane, Arm: r.Arm,
			Order: r.Order, Position: r.Position, After: after[r.Key()], Attempt: r.Attempt, Round: r.Round}
		if r.OK() {
			o.Samples = r.Samples
		} else {
			o.Failed, o.TimedOut = r.Error, r.TimedOut
			o.AtLeast = r.BoundIn(cmp.Or(units[r.Lane], r.Unit))
		}
		in.Observations = append(in.Observations, o)
	}
	for _, l := range plan.Lanes {
		floor := l.FloorPct
		if floor == 0 {
			floor = lanekind.DefaultFloorPct(l.Metric)
		}
		in.Lanes = append(in.Lanes, driftcheck.Lane{Name: l.Name, HigherIsBetter: l.Better == spec.BetterHigher, FloorPct: floor, Group: lanekind.NoiseGroup(l.Metric)})
	}
	return in
}
