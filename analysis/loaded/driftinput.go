package loaded

import (
	"cmp"
	"slices"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// DriftInput turns a plan and its records into the drift check's input. A failed run is an
// observation without samples that names its error, and a timed-out one carries its bound
// in the lane's unit (driftcheck.Observation.AtLeast). A lane is higher-is-better when the
// plan says better: higher (spec.Resolve records every lane's better direction in the plan).
//
// Method m's interference rule applies to the samples of good runs with intervals
// (filterRun): a lane measured by its on-CPU time gets its samples scaled, a timed lane's
// samples that a neighbour descheduled are left out, and a run with too few left is
// marked descheduled; Input.Interference counts it all.
func DriftInput(m driftcheck.Method, plan *receipt.Plan, recs []receipt.Record) driftcheck.Input {
	in := driftcheck.Input{
		Base:        plan.Arms[0].Name,
		Collections: plan.Protocol.Collections,
		Passes:      plan.Protocol.Passes,
		Layouts:     plan.Protocol.Layouts,
	}
	for _, a := range plan.Arms[1:] {
		in.Candidates = append(in.Candidates, a.Name)
	}
	after := predecessors(plan, recs)
	units := map[string]string{} // lane -> the unit its runs print, for a bound's
	for _, l := range plan.Lanes {
		units[l.Name] = l.Unit
	}
	for _, r := range recs {
		if r.OK() && units[r.Lane] == "" {
			units[r.Lane] = r.Unit
		}
	}
	lanes := map[string]receipt.Lane{}
	for _, l := range plan.Lanes {
		lanes[l.Name] = l
	}
	own, metrics := ownWaiting(plan, recs), laneMetrics(plan, recs)
	var filtered []sampleFilter
	for _, r := range recs {
		o := driftcheck.Observation{Collection: r.Collection, Pass: r.Pass, Lane: r.Lane, Arm: r.Arm,
			Order: r.Order, Position: r.Position, After: after[r.Key()], Attempt: r.Attempt, Round: r.Round}
		if r.OK() {
			f := filterRun(m, metrics[r.Lane], r, own[r.Lane] != "")
			o.Samples, o.Descheduled, o.Failed = f.samples, f.setAside, f.failed
			filtered = append(filtered, f)
		} else {
			o.Failed, o.TimedOut = r.Error, r.TimedOut
			o.AtLeast = r.BoundIn(cmp.Or(units[r.Lane], r.Unit))
		}
		in.Observations = append(in.Observations, o)
	}
	if m.Interference != "" || slices.ContainsFunc(plan.Lanes, func(l receipt.Lane) bool {
		return metrics[l.Name] == lanekind.MetricCPU || metrics[l.Name] == autoCPU
	}) {
		in.Interference = interferenceSummary(plan, filtered, own, metrics)
	}
	for _, l := range plan.Lanes {
		floor := l.FloorPct
		if floor == 0 {
			floor = lanekind.DefaultFloorPct(l.Metric)
		}
		in.Lanes = append(in.Lanes, driftcheck.Lane{Name: l.Name, HigherIsBetter: l.Better == spec.BetterHigher, FloorPct: floor, Group: lanekind.NoiseGroup(l.Metric),
			Calibration: l.Calibration})
	}
	return in
}

// predecessors returns, for each record, the arm of the process that ran just before it on
// the same machine, by start time, whatever its lane, pass or round (failed runs ran too):
// a pass's first run follows the last run of the pass before it, and that is the process
// whose heat or cache it meets. A record without one (the first run of a machine's
// sequence) is absent. The runs of a whole receipt ran on one machine; a merged receipt's
// came from its shard receipts (receipt.ShardSource), each run on one machine, and a run
// is counted with the shard that was dealt its pass pair in its round, or with its pass
// pair alone when no source names it.
func predecessors(plan *receipt.Plan, recs []receipt.Record) map[receipt.Key]string {
	type seq struct{ source, collection, pair, round int }
	machine := func(r receipt.Record) seq {
		if !plan.Merged() {
			return seq{}
		}
		round := r.MeasuredRound()
		for i, src := range plan.Shard.Sources {
			if round >= src.FromRound && round <= src.ToRound && slices.Contains(src.Pairs, receipt.PairOf(r.Collection, r.Pass)) {
				return seq{source: i + 1}
			}
		}
		return seq{collection: r.Collection, pair: receipt.Round(r.Pass), round: round}
	}
	order := slices.Clone(recs)
	slices.SortStableFunc(order, func(a, b receipt.Record) int { return a.Started.Compare(b.Started) })
	last := map[seq]string{}
	after := map[receipt.Key]string{}
	for _, r := range order {
		m := machine(r)
		if arm, ok := last[m]; ok {
			after[r.Key()] = arm
		}
		last[m] = r.Arm
	}
	return after
}

// JudgedSamples returns, for each of r's records in order, the samples its analysis judged
// (JudgedRecords).
func (r *Receipt) JudgedSamples() [][]float64 {
	recs := JudgedRecords(r.Method, r.Plan, r.Records)
	out := make([][]float64, len(recs))
	for i, rec := range recs {
		out[i] = rec.Samples
	}
	return out
}

// JudgedRecords returns copies of recs whose samples are those the analysis by method m
// judged (DriftInput's): a lane measured by its on-CPU time (metric cpu, or auto on a lane
// that never waits) has each sample scaled by its interval's on-CPU share, so that the
// values a table shows beside a verdict are in the metric the verdict used; a timed
// lane's samples a neighbour descheduled are left out. A record whose run failed, or
// whose samples the metric refused, keeps its own.
func JudgedRecords(m driftcheck.Method, plan *receipt.Plan, recs []receipt.Record) []receipt.Record {
	in := DriftInput(m, plan, recs)
	out := slices.Clone(recs)
	for i := range out {
		if o := in.Observations[i]; len(o.Samples) > 0 && o.Failed == "" {
			out[i].Samples = o.Samples
		}
	}
	return out
}

// OnCPULanes returns the lanes of r's analysis judged by their on-CPU time, in plan order.
func (r *Receipt) OnCPULanes() []string {
	var out []string
	for _, l := range r.Plan.Lanes {
		if slices.ContainsFunc(r.Analysis.Interference, func(li driftcheck.Interference) bool {
			return li.Lane == l.Name && li.Metric == lanekind.MetricCPU
		}) {
			out = append(out, l.Name)
		}
	}
	return out
}
