package decide

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// TestFrozenRule checks that a page whose rule differs from the one its run froze in
// plan.json never changes status silently: each changed field makes the arms it bears
// on inconclusive with a spec-changed reason that names it, even where the page's rule
// would reject.
func TestFrozenRule(t *testing.T) {
	// Two candidates; the incidence gate tests candA only and its share is too rare, so
	// candA is rejected and candB accepted as the run pre-registered it.
	base := func() Input {
		in := fixture([]string{"candA", "candB"}, []caseLane{{name: "P", role: spec.RolePrimary,
			colls: map[string][]est{"candA": {gain, gain}, "candB": {gain, gain}}, pooled: map[string]est{"candA": gain, "candB": gain}}})
		in.Spec.Incidence = &spec.Incidence{Total: "dispatches", Eligible: "parked", Control: "C", MinShare: 0.001, Arms: []string{"candA"}}
		in.Incidence = &Incidence{Total: 1000, Eligible: 0, TotalCounter: "dispatches", EligibleCounter: "parked", ControlFired: true}
		in.Plan.Rule = RuleOf(in.Spec)
		return in
	}
	type arms struct{ a, b want }
	changed := func(field string) want {
		return want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged}, texts: []string{field + ": "}}
	}
	tests := []struct {
		name string
		edit func(*Input)
		want arms
	}{
		{"as pre-registered", func(*Input) {},
			arms{want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}}, want{status: spec.StatusAccepted}}},
		// The case of experiment 275: deleting arms: [candA] would reject candB too.
		{"incidence.arms deleted", func(in *Input) { in.Spec.Incidence.Arms = nil },
			arms{changed("incidence.arms"), changed("incidence.arms")}},
		// min-share: 0 would let candA through; candB is not gated either way.
		{"incidence.min-share lowered", func(in *Input) { in.Spec.Incidence.MinShare = 0 },
			arms{changed("incidence.min-share"), want{status: spec.StatusAccepted}}},
		{"incidence.control changed", func(in *Input) { in.Spec.Incidence.Control = "D" },
			arms{changed("incidence.control"), want{status: spec.StatusAccepted}}},
		{"incidence gate removed", func(in *Input) { in.Spec.Incidence = nil },
			arms{changed("incidence"), changed("incidence")}},
		{"shape.decay added", func(in *Input) { in.Spec.Shape = &spec.Shape{Decay: []string{"P"}} },
			arms{changed("shape.decay"), changed("shape.decay")}},
		{"a reference arm declared", func(in *Input) { in.Spec.Arms[2].Reference = true },
			arms{want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}}, changed("arms.candB.reference")}},
		{"drift.alpha changed", func(in *Input) { in.Spec.Drift.Alpha = 0.2 },
			arms{changed("drift.alpha"), changed("drift.alpha")}},
		{"drift.effect-floor-pct changed", func(in *Input) { in.Spec.Drift.EffectFloorPct = 1 },
			arms{changed("drift.effect-floor-pct"), changed("drift.effect-floor-pct")}},
		// A plan of schema 2 froze no rule: arms cannot be compared, the receipt's own
		// incidence report's min-share can.
		{"old plan: min-share against the incidence report", func(in *Input) {
			in.Plan.Rule = nil
			in.Incidence.Gate = &receipt.IncidenceGate{Total: "dispatches", Eligible: "parked", Control: "C", MinShare: 0.001}
			in.Spec.Incidence.MinShare = 0
		}, arms{changed("incidence.min-share"), want{status: spec.StatusAccepted}}},
		{"old plan: arms not recorded", func(in *Input) { in.Plan.Rule = nil; in.Spec.Incidence.Arms = nil },
			arms{want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}}, want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.edit(&in)
			d := Decide(in)
			for i, w := range []want{tc.want.a, tc.want.b} {
				a := d.Arms[i]
				if !slices.Contains(w.codes, OpenSpecChanged) {
					check(t, a, w)
					continue
				}
				// Changed: inconclusive, the change named first, whatever else the page's
				// rule would find (shown, but not as a rejection).
				if a.Status != w.status || len(a.Reasons) == 0 || a.Reasons[0].Code != OpenSpecChanged || !strings.HasPrefix(a.Reasons[0].Text, w.texts[0]) {
					t.Errorf("arm %s: %s %v, want %s led by spec-changed %q", a.Arm, a.Status, a.Reasons, w.status, w.texts[0])
				}
				if !slices.ContainsFunc(d.SpecChanges(), func(s string) bool { return strings.HasPrefix(s, w.texts[0]) }) {
					t.Errorf("SpecChanges() = %q, want one starting %q", d.SpecChanges(), w.texts[0])
				}
			}
		})
	}
}

// TestUnfrozenNote checks that a receipt whose plan froze no rule says which of the
// page's rule fields it read as they are now.
func TestUnfrozenNote(t *testing.T) {
	in := fixture([]string{"cand"}, []caseLane{on("P", spec.RolePrimary, "", gain, gain, gain)})
	in.Spec.Incidence = &spec.Incidence{Total: "dispatches", Eligible: "parked", MinShare: 0.001, Arms: []string{"cand"}}
	in.Spec.Shape = &spec.Shape{Decay: []string{"P"}}
	a := Decide(in).Arms[0]
	want := "predates the frozen rule: incidence.arms, incidence.control, incidence.min-share, shape.decay read from the page as it is now"
	if !slices.ContainsFunc(a.Notes, func(n string) bool { return strings.Contains(n, want) }) {
		t.Errorf("notes %q, want one saying %q", a.Notes, want)
	}
	in.Plan.Rule = RuleOf(in.Spec)
	if a := Decide(in).Arms[0]; slices.ContainsFunc(a.Notes, func(n string) bool { return strings.Contains(n, "predates") }) {
		t.Errorf("a plan that froze the rule: notes %q", a.Notes)
	}
}

// TestRuleOfDefaults checks that a plan's drift thresholds left unset (older plans wrote
// only the floor and the CV thresholds) read as the drift check's defaults, so they do
// not count as a change.
func TestRuleOfDefaults(t *testing.T) {
	in := fixture([]string{"cand"}, []caseLane{on("P", spec.RolePrimary, "", gain, gain, gain)})
	in.Plan.Drift = driftcheck.Config{EffectFloorPct: 3, CleanCVPct: 8, CVAsymmetry: 4}
	in.Spec.Drift = driftcheck.DefaultConfig()
	if got := ruleChanges(in, "cand"); len(got) > 0 {
		t.Errorf("ruleChanges = %q, want none", got)
	}
}
