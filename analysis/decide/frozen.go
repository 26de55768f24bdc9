package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// RuleOf returns the part of the experiment's decision rule that a plan's lanes, protocol
// and drift thresholds do not hold: its reference arms, predicted decay and incidence gate,
// as the page has them now. The pipeline freezes it in plan.json when a run starts
// (harness.NewPlan); the rule compares the page with it (ruleChanges).
func RuleOf(e *spec.Experiment) *receipt.Rule {
	rule := &receipt.Rule{}
	for _, a := range e.Candidates() {
		if a.Reference {
			rule.Reference = append(rule.Reference, a.Name)
		}
	}
	if e.Shape != nil {
		rule.Decay = slices.Clone(e.Shape.Decay)
	}
	if g := e.Incidence; g != nil {
		rule.Incidence = &receipt.IncidenceGate{Total: g.Total, Eligible: g.Eligible, Control: g.Control, MinShare: g.MinShare, Arms: slices.Clone(g.Arms)}
	}
	return rule
}

// ruleChanges compares the experiment-wide part of the page's rule with the rule the
// receipt's run froze, field by field, and describes every difference, each led by the
// field's name as the page writes it ("incidence.arms: ..."), that bear on candidate arm
// arm. It compares:
//
//   - the drift check's thresholds and error rates (drift.*), with every plan: each side's
//     unset fields read as the drift check's defaults;
//   - the reference arms (arms.<name>.reference), the predicted decay (shape.decay) and the
//     incidence gate (incidence.total, .eligible, .control, .min-share, .arms), with a plan
//     that froze them (plan.Rule; plan.json schema 3 and later);
//   - with an older plan, the incidence gate's control and min-share as the receipt's own
//     incidence measurement recorded them (in.Incidence.Gate), when there is one.
//
// A change to the incidence gate bears on the arms it tests on the page or at the run.
// Lanes (role, expectation, better, floor) and the protocol are compared by laneChanged
// and power. Without a plan it compares nothing.
func ruleChanges(in Input, arm string) []string {
	e, plan := in.Spec, in.Plan
	if plan == nil {
		return nil
	}
	var out []string
	changed := func(field, page, run string) {
		if page != run {
			out = append(out, fmt.Sprintf("%s: %s on the page, %s when the run started: the rule changed after the run; restore it or rerun", field, page, run))
		}
	}
	pd, rd := e.Drift.WithDefaults(), plan.Drift.WithDefaults()
	changed("drift.effect-floor-pct", human.Num(pd.EffectFloorPct), human.Num(rd.EffectFloorPct))
	changed("drift.clean-cv-pct", human.Num(pd.CleanCVPct), human.Num(rd.CleanCVPct))
	changed("drift.cv-asymmetry", human.Num(pd.CVAsymmetry), human.Num(rd.CVAsymmetry))
	changed("drift.alpha", human.Num(pd.Alpha), human.Num(rd.Alpha))
	changed("drift.power", human.Num(pd.Power), human.Num(rd.Power))
	changed("drift.spending", string(pd.Spending), string(rd.Spending))

	run := plan.Rule
	if run == nil {
		// An older plan froze no more of the rule; the receipt's own incidence
		// measurement recorded the gate it was made for, arms aside.
		if g := e.Incidence; g != nil && gates(g.Arms, arm) && in.Incidence != nil && in.Incidence.Gate != nil {
			changed("incidence.control", orNone(g.Control), orNone(in.Incidence.Gate.Control))
			changed("incidence.min-share", human.Num(g.MinShare), human.Num(in.Incidence.Gate.MinShare))
		}
		return out
	}
	page := RuleOf(e)
	if slices.Contains(plan.ArmNames(), arm) {
		changed("arms."+arm+".reference", fmt.Sprint(slices.Contains(page.Reference, arm)), fmt.Sprint(slices.Contains(run.Reference, arm)))
	}
	changed("shape.decay", listText(page.Decay), listText(run.Decay))
	pg, rg := page.Incidence, run.Incidence
	switch {
	case pg == nil && rg == nil:
	case pg == nil || rg == nil:
		changed("incidence", gateText(pg), gateText(rg))
	case !gates(pg.Arms, arm) && !gates(rg.Arms, arm):
		// The gate does not test this arm, on the page or at the run.
	default:
		changed("incidence.total", pg.Total, rg.Total)
		changed("incidence.eligible", pg.Eligible, rg.Eligible)
		changed("incidence.control", orNone(pg.Control), orNone(rg.Control))
		changed("incidence.min-share", human.Num(pg.MinShare), human.Num(rg.MinShare))
		changed("incidence.arms", armsText(pg.Arms), armsText(rg.Arms))
	}
	return out
}

// gates reports whether an incidence gate with these arms tests candidate arm: empty
// arms test every candidate.
func gates(arms []string, arm string) bool {
	return len(arms) == 0 || slices.Contains(arms, arm)
}

// unfrozen names the fields of the page's rule that a plan of schema 2 or older could not
// freeze and the rule therefore reads from the page as it is now, for candidate arm arm:
// the incidence gate's arms (and its control and min-share, without the receipt's own
// incidence report), shape.decay and the arm's reference flag. Empty for a plan that froze
// the rule, or a page without those fields.
func unfrozen(in Input, arm string) []string {
	e, plan := in.Spec, in.Plan
	if plan == nil || plan.Rule != nil {
		return nil
	}
	var out []string
	if g := e.Incidence; g != nil {
		out = append(out, "incidence.arms")
		if gates(g.Arms, arm) && (in.Incidence == nil || in.Incidence.Gate == nil) {
			out = append(out, "incidence.control", "incidence.min-share")
		}
	}
	if e.Shape != nil && len(e.Shape.Decay) > 0 {
		out = append(out, "shape.decay")
	}
	if slices.ContainsFunc(e.Candidates(), func(a spec.Arm) bool { return a.Name == arm && a.Reference }) {
		out = append(out, "arms."+arm+".reference")
	}
	return out
}

// listText writes a list of names as the page would: "[First4, First8]", "none".
func listText(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// armsText writes an incidence gate's arms: "[candA]", or "every candidate" for none.
func armsText(arms []string) string {
	if len(arms) == 0 {
		return "every candidate"
	}
	return listText(arms)
}

// gateText writes whether there is an incidence gate, and what it gates.
func gateText(g *receipt.IncidenceGate) string {
	if g == nil {
		return "no gate"
	}
	return fmt.Sprintf("a gate on %s/%s >= %s", g.Eligible, g.Total, human.Num(g.MinShare))
}

// orNone returns s, or "none" when s is empty.
func orNone(s string) string { return orDefault(s, "none") }
