package harness

import (
	"time"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// PlanInput is what NewPlan needs: the spec, its resolved protocol and lanes, and the
// built arms (base first).
type PlanInput struct {
	Experiment *spec.Experiment
	Page       string // the page, relative to the ledger root
	Label      string
	Profile    string
	Stamp      string
	Command    []string
	Resolved   spec.Resolved
	Arms       []receipt.Arm
	// Method is the analysis method the run is planned with (Plan.Method); the zero
	// Method is the current one (driftcheck.CurrentMethod).
	Method driftcheck.Method
}

// NewPlan fixes everything about a run before it starts, so that it can be resumed and
// re-analysed from plan.json alone.
func NewPlan(in PlanInput) *receipt.Plan {
	r := in.Resolved
	if in.Method.Schema == 0 {
		in.Method = driftcheck.CurrentMethod("")
	}
	p := &receipt.Plan{
		SchemaVersion: receipt.PlanSchema,
		Experiment:    in.Experiment.ID,
		Title:         in.Experiment.Title,
		Page:          in.Page,
		Label:         in.Label,
		Profile:       in.Profile,
		Stamp:         in.Stamp,
		Command:       in.Command,
		Protocol: receipt.Protocol{
			Samples:      r.Protocol.Samples,
			Warmup:       r.Protocol.Warmup,
			Passes:       r.Protocol.Passes,
			Collections:  r.Protocol.Collections,
			Seed:         r.Protocol.Seed,
			Timeout:      time.Duration(r.Protocol.Timeout),
			CPUs:         r.Protocol.CPUList(),
			Design:       ArmDesign(len(in.Arms)).Kind,
			SeparateArms: r.Protocol.SeparateArms,
			Layouts:      r.Protocol.Layouts,
		},
		Drift:  r.Drift,
		Arms:   in.Arms,
		Rule:   decide.RuleOf(in.Experiment),
		Method: &in.Method,
	}
	if s := r.Protocol.Sequential; s != nil {
		p.Protocol.Sequential = &receipt.Sequential{MinPairs: s.MinPairs, MaxPairs: s.MaxPairs, Budget: time.Duration(s.Budget)}
	}
	var arms, lanes []string
	for _, a := range in.Arms {
		arms = append(arms, a.Name)
	}
	kind, kindErr := in.Experiment.Harness.LaneKind()
	for _, l := range r.Lanes {
		rl := receipt.Lane{Name: l.Name, Role: l.Role, Expect: l.Expect, ExpectArms: l.ExpectArms, Unit: l.Unit, Better: l.Better, FloorPct: l.FloorPct, NonZero: l.NonZero, AtMost: l.AtMost, Metric: l.Metric}
		if l.Metric == lanekind.MetricInstructions && kindErr == nil {
			// Validate made sure the kind can count the lane.
			if c, problem := kind.Counter(in.Experiment.Harness.ForKind(), l.Name); problem == nil {
				var env []string
				if len(in.Arms) > 0 {
					env = in.Arms[0].Env
				}
				c.Env = lanekind.PinnedEnv(env)
				rl.Counter = &c
			}
		}
		if kindErr == nil {
			if _, loops := kind.Benchtime(nil); loops {
				// What the spec declared: a count is the lane's own choice.
				rl.Benchtime = in.Experiment.Harness.Benchtime
			}
		}
		p.Lanes = append(p.Lanes, rl)
		lanes = append(lanes, l.Name)
	}
	p.Runs = Schedule(arms, lanes, p.Protocol.Collections, p.Protocol.Passes, p.Protocol.Seed, p.Protocol.SeparateArms)
	if p.Protocol.Sequential != nil {
		p.Runs = InRounds(p.Runs)
	}
	return p
}
