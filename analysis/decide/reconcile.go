package decide

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/cpuset"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// evidence is one candidate arm's case: the lanes the rule reads, each with its
// expectation and its summaries, and what did not match between the receipt and the spec.
type evidence struct {
	arm   string
	in    Input
	lanes []laneCase
	// opens are reconciliation problems that leave the arm inconclusive.
	opens []Reason
	// weak says the receipt cannot settle the spec at all (under-powered, or the protocol
	// it must reach is unknown): it overrides any rejection.
	weak *Reason
	// primaryGone is set when a primary lane could not be judged (changed or missing), so
	// a guard regression is not a tradeoff.
	primaryGone bool
	// floorPct is the drift check's effect floor.
	floorPct float64
	// notes are observations about the reconciliation that change no verdict.
	notes []string
	// alpha is the two-sided error rate of the intervals the rule reads; 0 reads each
	// summary's own interval (its look's share of the error).
	alpha float64
	// pooled has the arm's pooled summary of every lane the receipt measured, secondary
	// lanes included (the predicted shape may name them).
	pooled map[string]*driftcheck.LaneSummary
}

// laneCase is one lane of the page with what the receipt measured of it for the arm.
type laneCase struct {
	lane   spec.Lane
	expect string // the expectation for this arm, defaults filled in (primary lanes)
	colls  []driftcheck.LaneSummary
	pooled *driftcheck.LaneSummary
}

// floor returns the lane's effect floor: its own, or the drift check's.
func (l laneCase) floor(def float64) float64 {
	if len(l.colls) > 0 && l.colls[0].FloorPct > 0 {
		return l.colls[0].FloorPct
	}
	return def
}

// reconcile gathers the evidence for arm and compares the receipt with the spec.
func reconcile(in Input, arm string) *evidence {
	ev := &evidence{arm: arm, in: in, floorPct: in.Analysis.Config.EffectFloorPct}
	if ev.floorPct == 0 {
		ev.floorPct = driftcheck.DefaultConfig().EffectFloorPct
	}
	e, plan := in.Spec, in.Plan
	if !slices.ContainsFunc(e.Candidates(), func(a spec.Arm) bool { return a.Name == arm }) {
		// Deciding an arm the page no longer has would decide a question nobody asks.
		ev.weak = &Reason{OpenSpecChanged, fmt.Sprintf("arm %s is in the receipt but no longer on the page: the page changed after the run; restore the arm or rerun", arm)}
		return ev
	}
	ev.weak = power(e, plan)
	// A rule changed after the run decides a question the run did not pre-register: the
	// arm can be neither accepted nor rejected on it.
	for _, c := range ruleChanges(in, arm) {
		if ev.weak == nil {
			ev.weak = &Reason{OpenSpecChanged, c}
		} else {
			ev.open(OpenSpecChanged, "%s", c)
		}
	}
	if fields := unfrozen(in, arm); len(fields) > 0 {
		ev.notes = append(ev.notes, fmt.Sprintf("the receipt's plan.json (schema %d) predates the frozen rule: %s read from the page as it is now, not compared with the run's",
			max(plan.SchemaVersion, 1), strings.Join(fields, ", ")))
	}
	measured := slices.Contains(in.Analysis.Candidates, arm)
	if !measured {
		ev.open(OpenNotMeasured, "arm %s is in the spec but not in the receipt", arm)
	}
	byLane := map[string][]driftcheck.LaneSummary{}
	pooled := map[string]*driftcheck.LaneSummary{}
	ev.pooled = pooled
	for _, s := range in.Analysis.Lanes {
		if s.Arm == arm {
			byLane[s.Lane] = append(byLane[s.Lane], s)
		}
	}
	for i, s := range in.Analysis.Pooled {
		if s.Arm == arm {
			pooled[s.Lane] = &in.Analysis.Pooled[i]
		}
	}
	for _, l := range e.Lanes {
		expect := l.ExpectFor(arm)
		if l.Role == spec.RolePrimary && expect == "" {
			expect = spec.DefaultExpect
		}
		sums := byLane[l.Name]
		gone := func() {
			if l.Role == spec.RolePrimary {
				ev.primaryGone = true
			}
		}
		if changed := laneChanged(l, arm, expect, plan); changed != "" {
			ev.open(OpenSpecChanged, "lanes[%d].%s: the page changed after the run; restore it or rerun", slices.IndexFunc(e.Lanes, func(x spec.Lane) bool { return x.Name == l.Name }), changed)
			gone()
			continue
		}
		if l.Role == spec.RoleSecondary {
			continue
		}
		if len(sums) == 0 {
			switch {
			case !measured:
			case plan != nil && !slices.ContainsFunc(plan.Lanes, func(pl receipt.Lane) bool { return pl.Name == l.Name }):
				ev.open(OpenNotMeasured, "%s lane %s was not run: the receipt's run selected only lanes %s (--lanes); rerun with every lane the rule needs",
					l.Role, l.Name, planLanes(plan))
			default:
				ev.open(OpenNotMeasured, "%s lane %s is not in the receipt", l.Role, l.Name)
			}
			gone()
			continue
		}
		if plan != nil {
			for c := 1; c <= plan.Protocol.Collections; c++ {
				if !slices.ContainsFunc(sums, func(s driftcheck.LaneSummary) bool { return s.Collection == c }) {
					ev.open(OpenNotMeasured, "%s lane %s has no verdict for collection %d in the receipt", l.Role, l.Name, c)
					gone()
				}
			}
		}
		ev.lanes = append(ev.lanes, laneCase{lane: l, expect: expect, colls: sums, pooled: pooled[l.Name]})
	}
	if plan != nil {
		for _, pl := range plan.Lanes {
			if _, onPage := e.Lane(pl.Name); !onPage && pl.Role != spec.RoleSecondary {
				ev.open(OpenSpecChanged, "%s lane %s was run but is no longer on the page: the page changed after the run; restore it or rerun", pl.Role, pl.Name)
				if pl.Role == spec.RolePrimary {
					ev.primaryGone = true
				}
			}
		}
	}
	return ev
}

func (ev *evidence) open(code, format string, args ...any) {
	ev.opens = append(ev.opens, Reason{code, fmt.Sprintf(format, args...)})
}

// power compares the protocol a receipt ran (plan.Protocol) with the one the spec asks
// for the receipt's profile (plan.Profile; none means the spec's own protocol). It
// returns the reason the receipt cannot settle the experiment, or nil when it ran at
// least as many collections, passes per collection and samples per run.
func power(e *spec.Experiment, plan *receipt.Plan) *Reason {
	if plan == nil {
		return &Reason{OpenUnderPowered, "the receipt has no run plan to compare with the spec's protocol"}
	}
	if plan.Merged() && len(plan.Shard.Missing) > 0 {
		return &Reason{OpenUnderPowered, fmt.Sprintf("the merged receipt lacks %s of shards that were not merged (its warnings name them); run them and merge every shard receipt again",
			human.Count(len(plan.Shard.Missing), "pass pair", "pass pairs"))}
	}
	profile := plan.Profile
	what := "the spec's protocol"
	if profile != "" {
		what = fmt.Sprintf("the spec's %s profile", profile)
	}
	if _, ok := e.Profiles[profile]; profile != "" && !ok {
		return &Reason{OpenSpecChanged, fmt.Sprintf("the receipt ran profile %s, which the spec no longer has, so the evidence it asks for is unknown; restore the profile or rerun", profile)}
	}
	res, err := e.Resolve(spec.Overrides{Profile: profile})
	if err != nil {
		return &Reason{OpenSpecChanged, fmt.Sprintf("cannot resolve %s to compare the receipt with: %s", what, mdtable.OneLine(err.Error()))}
	}
	got, want := plan.Protocol, res.Protocol
	ran, asked := "a fixed protocol", "a fixed protocol"
	if s := got.Sequential; s != nil {
		ran = ruleText(s.MinPairs, s.MaxPairs, s.Budget)
	}
	if s := want.Sequential; s != nil {
		asked = ruleText(s.MinPairs, s.MaxPairs, time.Duration(s.Budget))
	}
	if ran != asked {
		return &Reason{OpenSpecChanged, fmt.Sprintf("the receipt ran %s, but %s pre-registers %s: the stopping rule changed after the run; restore it or rerun",
			ran, what, asked)}
	}
	if ran, asked := cpusText(got.CPUs), cpusText(want.CPUList()); ran != asked {
		return &Reason{OpenSpecChanged, fmt.Sprintf("the receipt's lanes ran %s, but %s asks for them to run %s: the placement changed after the run; restore it or rerun",
			ran, what, asked)}
	}
	if got.Sequential != nil {
		// A sequential run stops each lane when it is decided: its evidence, not its
		// pass count, says whether it can settle the experiment.
		if got.Collections >= want.Collections && got.Samples >= want.Samples {
			return nil
		}
	} else if got.Collections >= want.Collections && got.Passes >= want.Passes && got.Samples >= want.Samples {
		return nil
	}
	return &Reason{OpenUnderPowered, fmt.Sprintf("%s x %s x %s, %s asks for %d x %d x %d (collections x passes x samples); "+
		"too little evidence to decide either way; rerun without the --collections, --passes or --samples that lowered it",
		human.Count(got.Collections, "collection", "collections"), human.Count(got.Passes, "pass", "passes"), human.Count(got.Samples, "sample", "samples"),
		what, want.Collections, want.Passes, want.Samples)}
}

// cpusText describes where lanes ran: "on CPU 0", "on CPUs 0-1", "where the operating
// system put them".
func cpusText(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "where the operating system put them"
	case 1:
		return "on CPU " + cpuset.Format(cpus)
	}
	return "on CPUs " + cpuset.Format(cpus)
}

// ruleText describes a sequential stopping rule: "a sequential rule (pairs 2 to 12,
// budget 15m0s)".
func ruleText(minPairs, maxPairs int, budget time.Duration) string {
	return fmt.Sprintf("a sequential rule (pairs %d to %d, budget %s)", minPairs, maxPairs, budget)
}

// planLanes lists the lanes a run plan ran: "alpha, beta".
func planLanes(plan *receipt.Plan) string {
	names := make([]string, len(plan.Lanes))
	for i, l := range plan.Lanes {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// laneChanged compares a lane of the page (l, with its expectation for arm resolved) with
// the lane the receipt ran: its role, a primary lane's expectation for arm, its better
// direction and its floor as the plan recorded them. It describes the first difference,
// led by the lane field's name ("role: ..."), or returns "" when there is none or the
// lane was not run. Without a plan it compares nothing.
func laneChanged(l spec.Lane, arm, expect string, plan *receipt.Plan) string {
	if plan == nil {
		return ""
	}
	i := slices.IndexFunc(plan.Lanes, func(pl receipt.Lane) bool { return pl.Name == l.Name })
	if i < 0 {
		return ""
	}
	ran := plan.Lanes[i]
	runExpect := ran.ExpectFor(arm)
	if ran.Role == spec.RolePrimary && runExpect == "" {
		runExpect = spec.DefaultExpect
	}
	if ran.Role != l.Role {
		return fmt.Sprintf("role: lane %s is %s on the page but was run as %s", l.Name, laneDesc(l.Role, expect), laneDesc(ran.Role, runExpect))
	}
	if l.Role == spec.RolePrimary && runExpect != expect {
		return fmt.Sprintf("expect: lane %s is %s on the page but was run as %s", l.Name, laneDesc(l.Role, expect), laneDesc(ran.Role, runExpect))
	}
	if page, run := orDefault(l.Better, spec.DefaultBetter), orDefault(ran.Better, spec.DefaultBetter); page != run {
		return fmt.Sprintf("better: lane %s is better: %s on the page but was run as better: %s", l.Name, page, run)
	}
	if l.FloorPct != ran.FloorPct {
		return fmt.Sprintf("floor-pct: lane %s has floor-pct %g on the page but was run with %g", l.Name, l.FloorPct, ran.FloorPct)
	}
	if !maps.Equal(l.AtMost, ran.AtMost) {
		return fmt.Sprintf("at-most: lane %s bounds %s on the page but was run bounding %s", l.Name, boundsText(l.AtMost), boundsText(ran.AtMost))
	}
	return ""
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// laneDesc describes a lane's role and expectation: "primary (expect faster)".
func laneDesc(role spec.Role, expect string) string {
	if role == spec.RolePrimary && expect != "" {
		return fmt.Sprintf("%s (expect %s)", role, expect)
	}
	if role == "" {
		return "no role"
	}
	return string(role)
}
