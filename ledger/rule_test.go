package ledger

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/spec"
)

// Lane verdict shorthands for the tables.
const (
	rf  = driftcheck.LaneReproducedFaster
	rs  = driftcheck.LaneReproducedSlower
	neu = driftcheck.LaneNeutral
	mix = driftcheck.LaneMixed
	dri = driftcheck.LaneDrift
	ins = driftcheck.LaneInsufficient
)

// ruleLane is one lane of a rule test: its spec and its verdicts and median deltas per
// collection, per arm.
type ruleLane struct {
	name, role, expect string
	verdicts           map[string][]driftcheck.LaneVerdict
	medians            map[string][]float64
	// means are the mean pass deltas on arm "cand", per collection; the medians when nil.
	means []float64
	// slower counts the pairs that REPRODUCED slower on arm "cand", per collection.
	slower []int
}

// withMeans sets the mean pass deltas of a lane on arm "cand", one per collection.
func withMeans(l ruleLane, means ...float64) ruleLane { l.means = means; return l }

// withSlower sets the REPRODUCED-slower pair counts of a lane on arm "cand".
func withSlower(l ruleLane, n ...int) ruleLane { l.slower = n; return l }

// lane builds a ruleLane measured on arm "cand" only.
func lane(name, role, expect string, verdicts []driftcheck.LaneVerdict, medians ...float64) ruleLane {
	return ruleLane{name: name, role: role, expect: expect,
		verdicts: map[string][]driftcheck.LaneVerdict{"cand": verdicts}, medians: map[string][]float64{"cand": medians}}
}

// vs is a list of lane verdicts, one per collection.
func vs(v ...driftcheck.LaneVerdict) []driftcheck.LaneVerdict { return v }

// ruleFixture builds a spec, the plan of a run of it and that run's report from lanes;
// arms are the candidates in order. The spec sets no protocol, so it asks for the
// defaults (2 collections x 4 passes x 21 samples), and the plan ran exactly that with
// every lane.
func ruleFixture(arms []string, lanes []ruleLane) (*spec.Experiment, *receipt.Plan, driftcheck.Report) {
	e := &spec.Experiment{ID: 1, Arms: []spec.Arm{{Name: "base"}}}
	plan := &receipt.Plan{Experiment: 1, Arms: []receipt.Arm{{Name: "base"}},
		Protocol: receipt.Protocol{Collections: spec.DefaultCollections, Passes: spec.DefaultPasses, Samples: spec.DefaultSamples, Warmup: spec.DefaultWarmup}}
	for _, a := range arms {
		e.Arms = append(e.Arms, spec.Arm{Name: a})
		plan.Arms = append(plan.Arms, receipt.Arm{Name: a})
	}
	rep := driftcheck.Report{Config: driftcheck.DefaultConfig(), Base: "base", Candidates: arms}
	for _, l := range lanes {
		e.Lanes = append(e.Lanes, spec.Lane{Name: l.name, Role: l.role, Expect: l.expect})
		plan.Lanes = append(plan.Lanes, receipt.Lane{Name: l.name, Role: l.role, Expect: l.expect})
	}
	for _, a := range arms {
		for _, l := range lanes {
			expect := l.expect
			if l.role == spec.RolePrimary && expect == "" {
				expect = spec.ExpectFaster
			}
			for c, v := range l.verdicts[a] {
				med := 0.0
				if c < len(l.medians[a]) {
					med = l.medians[a][c]
				}
				mean, slower := med, 0
				if a == "cand" && c < len(l.means) {
					mean = l.means[c]
				}
				if a == "cand" && c < len(l.slower) {
					slower = l.slower[c]
				}
				passes := plan.Protocol.Passes
				if v == ins {
					passes = 0
				}
				rep.Lanes = append(rep.Lanes, driftcheck.LaneSummary{Lane: l.name, Arm: a, Role: l.role, Expect: expect,
					Collection: c + 1, Passes: passes, MedianDeltaPct: med, MeanDeltaPct: mean, ReproducedSlower: slower,
					Verdict: v, Reason: "test reason"})
			}
		}
	}
	return e, plan, rep
}

func TestDecide(t *testing.T) {
	guardOK := lane("guard", "guard", "", vs(neu, neu), 0.5, -0.2)
	controlOK := lane("control", "control", "", vs(neu, neu), 0.1, 0.3)
	type want struct {
		status string
		codes  []string // reason codes, in order
		passed []string // substrings of Passed
		notes  []string // substrings of Notes
		texts  []string // substrings of some reason
	}
	gate := &spec.Incidence{Total: "dispatches", Eligible: "parked", MinShare: 0.01}
	tests := []struct {
		name      string
		lanes     []ruleLane
		shape     *spec.Shape
		incidence *spec.Incidence
		inc       *Incidence
		want      want
	}{
		{
			name:  "accepted",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -19), guardOK, controlOK},
			want: want{status: spec.StatusAccepted, passed: []string{
				"primary lane p reproduced faster in every collection (median pass delta -20.0%, -19.0%)",
				"no reproduced regression on guard lanes guard", "control lanes control neutral"}},
		},
		{
			name:  "default expectation of a primary lane is faster",
			lanes: []ruleLane{lane("p", "primary", "", vs(rf, rf), -20, -19), guardOK, controlOK},
			want:  want{status: spec.StatusAccepted},
		},
		{
			name:  "rejected below-signal: neutral in one collection",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, neu), -20, -1), guardOK, controlOK},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonBelowSignal}},
		},
		{
			name:  "rejected below-signal: mixed",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(mix, mix), -5, -4), guardOK, controlOK},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonBelowSignal, ReasonBelowSignal}},
		},
		{
			name: "rejected regression: a guard slower and no gain",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(neu, neu), -1, 0),
				lane("guard", "guard", "", vs(rs, neu), 8, 2), controlOK},
			want: want{status: spec.StatusRejected, codes: []string{ReasonBelowSignal, ReasonBelowSignal, ReasonRegression}},
		},
		{
			name: "rejected tradeoff: a guard slower next to the gain",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("guard", "guard", "", vs(rs, rs), 8, 9), controlOK},
			want: want{status: spec.StatusRejected, codes: []string{ReasonTradeoff, ReasonTradeoff}},
		},
		{
			name:  "rejected regression: the primary lane itself slower",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rs, rs), 10, 12), guardOK, controlOK},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonRegression, ReasonRegression}},
		},
		{
			name:  "accepted: expect slower, reproduced slower",
			lanes: []ruleLane{lane("p", "primary", "slower", vs(rs, rs), 10, 12), guardOK, controlOK},
			want:  want{status: spec.StatusAccepted, passed: []string{"primary lane p reproduced slower"}},
		},
		{
			name:  "accepted: expect neutral, neutral",
			lanes: []ruleLane{lane("p", "primary", "neutral", vs(neu, neu), 1, -1), guardOK, controlOK},
			want:  want{status: spec.StatusAccepted, passed: []string{"primary lane p neutral in every collection"}},
		},
		{
			name:  "premise refuted: expect neutral, reproduced faster",
			lanes: []ruleLane{lane("p", "primary", "neutral", vs(rf, neu), -9, -1), guardOK, controlOK},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}},
		},
		{
			name:  "inconclusive: expect neutral, mixed",
			lanes: []ruleLane{lane("p", "primary", "neutral", vs(mix, neu), 4, -1), guardOK, controlOK},
			want:  want{status: spec.StatusInconclusive, codes: []string{OpenMixed}},
		},
		{
			name: "control not neutral: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK,
				lane("control", "control", "", vs(neu, rs), 0, 6)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenControl}},
		},
		{
			name: "control not neutral overrides a rejection",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(neu, neu), 0, 0), guardOK,
				lane("control", "control", "", vs(rf, neu), -7, 0)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenControl, ReasonBelowSignal, ReasonBelowSignal}},
		},
		{
			name:  "drift in every collection: rejected drift",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(dri, dri), -12, 9), guardOK, controlOK},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonDrift}},
		},
		{
			name:  "drift in one collection: inconclusive drift",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, dri), -20, -3), guardOK, controlOK},
			want:  want{status: spec.StatusInconclusive, codes: []string{OpenDrift}},
		},
		{
			name:  "drift in one collection, below signal in the other: rejected",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(neu, dri), 0, -3), guardOK, controlOK},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonBelowSignal}, notes: []string{"also drift: primary lane p"}},
		},
		{
			name:  "primary lane lacks data: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, ins), -20, 0), guardOK, controlOK},
			want:  want{status: spec.StatusInconclusive, codes: []string{OpenInsufficient}},
		},
		{
			name: "guard lane lacks data: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("guard", "guard", "", vs(neu, ins), 0, 0), controlOK},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenInsufficient}},
		},
		{
			name: "guard drifts leaning faster: accepted with a note",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("guard", "guard", "", vs(dri, neu), -4, 0), controlOK},
			want: want{status: spec.StatusAccepted, notes: []string{"guard lane guard: drift-suspected pairs in collection 1, but its pass deltas lean faster or stay within the floor (median -4.0%, mean -4.0%): no sign of a regression"}},
		},
		{
			name: "guard drifts leaning slower: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("guard", "guard", "", vs(dri, neu), 5, 0), controlOK},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenDrift}},
		},
		{
			name: "guard drifts, median faster but mean slower beyond the floor: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				withMeans(lane("guard", "guard", "", vs(dri, neu), -4, 0), 5, 0), controlOK},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenDrift}, texts: []string{"a regression cannot be ruled out"}},
		},
		{
			name: "guard drifts, mean faster but median slower beyond the floor: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				withMeans(lane("guard", "guard", "", vs(neu, dri), 0, 5), 0, -4), controlOK},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenDrift}},
		},
		{
			name: "guard drifts, median faster and mean slower within the floor: accepted with a note",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				withMeans(lane("guard", "guard", "", vs(dri, neu), -4, 0), 2, 0), controlOK},
			want: want{status: spec.StatusAccepted, notes: []string{"(median -4.0%, mean +2.0%): no sign of a regression"}},
		},
		{
			name: "guard mixed, slower median beyond the floor: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("guard", "guard", "", vs(neu, mix), 0, 4), controlOK},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenMixed},
				texts: []string{"guard lane guard mixed in collection 2: test reason; a regression cannot be ruled out"}},
		},
		{
			name: "guard mixed, slower median with pairs reproduced slower: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				withSlower(lane("guard", "guard", "", vs(mix, neu), 7, 0), 2, 0), controlOK},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenMixed}},
		},
		{
			name: "guard mixed, slower median within the floor but a pair reproduced slower: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				withSlower(lane("guard", "guard", "", vs(mix, neu), 2, 0), 1, 0), controlOK},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenMixed}},
		},
		{
			name: "guard mixed, slower median within the floor and no pair slower: accepted with a note",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("guard", "guard", "", vs(neu, mix), 0, 2), controlOK},
			want: want{status: spec.StatusAccepted, notes: []string{"guard lane guard: median pass delta +2.0% in collection 2 leans slower, within the floor"}},
		},
		{
			name: "guard mixed leaning faster, a pair reproduced slower: accepted",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				withSlower(lane("guard", "guard", "", vs(mix, neu), -6, 0), 1, 0), controlOK},
			want: want{status: spec.StatusAccepted, passed: []string{"no reproduced regression on guard lanes guard"}},
		},
		{
			name: "control lacks data: inconclusive, with its own reason",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK,
				lane("control", "control", "", vs(neu, ins), 0, 0)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenControl},
				texts: []string{"control lane control insufficient in collection 2: test reason; without its data the measurement cannot be checked"}},
		},
		{
			name: "secondary lanes do not count",
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("s", "secondary", "", vs(rs, rs), 9, 9), guardOK, controlOK},
			want: want{status: spec.StatusAccepted},
		},
		{
			name: "decay holds",
			lanes: []ruleLane{lane("f4", "primary", "faster", vs(rf, rf), -30, -28),
				lane("f8", "primary", "faster", vs(rf, rf), -18, -17),
				lane("steady", "secondary", "neutral", vs(neu, neu), -0.5, 1), guardOK, controlOK},
			shape: &spec.Shape{Decay: []string{"f4", "f8", "steady"}},
			want:  want{status: spec.StatusAccepted, passed: []string{"predicted decay holds in every collection (f4 30.0% > f8 18.0% > steady 0.5%"}},
		},
		{
			name: "decay holds within the floor of noise",
			lanes: []ruleLane{lane("f4", "primary", "faster", vs(rf, rf), -30, -28),
				lane("f8", "primary", "faster", vs(rf, rf), -31, -27),
				lane("steady", "secondary", "neutral", vs(neu, neu), 0, 0), guardOK, controlOK},
			shape: &spec.Shape{Decay: []string{"f4", "f8", "steady"}},
			want:  want{status: spec.StatusAccepted},
		},
		{
			name: "decay broken: the gain rises",
			lanes: []ruleLane{lane("f4", "primary", "faster", vs(rf, rf), -10, -10),
				lane("f8", "primary", "faster", vs(rf, rf), -25, -5), guardOK, controlOK},
			shape: &spec.Shape{Decay: []string{"f4", "f8"}},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}},
		},
		{
			name: "decay broken: the gain does not shrink",
			lanes: []ruleLane{lane("f4", "primary", "faster", vs(rf, rf), -20, -20),
				lane("f8", "primary", "faster", vs(rf, rf), -20, -19), guardOK, controlOK},
			shape: &spec.Shape{Decay: []string{"f4", "f8"}},
			want:  want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted, ReasonPremiseRefuted}},
		},
		{
			name: "decay lane without data in a collection: not evidence against the shape",
			lanes: []ruleLane{lane("f4", "primary", "faster", vs(rf, ins), -30, 0),
				lane("f8", "primary", "faster", vs(rf, rf), -18, -17), guardOK, controlOK},
			shape: &spec.Shape{Decay: []string{"f4", "f8"}},
			want:  want{status: spec.StatusInconclusive, codes: []string{OpenInsufficient, OpenInsufficient}},
		},
		{
			name:      "incidence not measured: inconclusive",
			lanes:     []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK, controlOK},
			incidence: gate,
			want:      want{status: spec.StatusInconclusive, codes: []string{OpenIncidence}},
		},
		{
			name:      "incidence below min-share: premise refuted",
			lanes:     []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK, controlOK},
			incidence: gate,
			inc:       incOf(100000, 50, true),
			want:      want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}},
		},
		{
			name:      "incidence probe control did not fire: inconclusive",
			lanes:     []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK, controlOK},
			incidence: gate,
			inc:       incOf(100000, 5000, false),
			want:      want{status: spec.StatusInconclusive, codes: []string{OpenIncidence}},
		},
		{
			name:      "incidence counted no events although the control fired: inconclusive",
			lanes:     []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK, controlOK},
			incidence: gate,
			inc:       incOf(0, 0, true),
			want: want{status: spec.StatusInconclusive, codes: []string{OpenIncidence},
				texts: []string{"the incidence suite counted no dispatches events"}},
		},
		{
			name:      "incidence measurement broken: inconclusive, not premise-refuted",
			lanes:     []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK, controlOK},
			incidence: gate,
			inc: func() *Incidence {
				in := incOf(100000, 50, true)
				in.Broken, in.Errors = true, []string{"lane Slow produced no usable run (timeout)"}
				return in
			}(),
			want: want{status: spec.StatusInconclusive, codes: []string{OpenIncidence},
				texts: []string{"the incidence measurement is broken (lane Slow produced no usable run (timeout))"}},
		},
		{
			name:      "incidence of other counters than the spec's: inconclusive",
			lanes:     []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK, controlOK},
			incidence: gate,
			inc: func() *Incidence {
				in := incOf(100000, 5000, true)
				in.EligibleCounter = "hits"
				return in
			}(),
			want: want{status: spec.StatusInconclusive, codes: []string{OpenIncidence},
				texts: []string{"counted hits/dispatches, but the spec gates on parked/dispatches"}},
		},
		{
			name:      "incidence at min-share: accepted",
			lanes:     []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), guardOK, controlOK},
			incidence: gate,
			inc:       incOf(100000, 1000, true),
			want:      want{status: spec.StatusAccepted, passed: []string{"incidence parked/dispatches = 1% (1000 of 100000) at or above the min-share 0.01"}},
		},
		{
			name:  "a lane missing from the receipt: inconclusive",
			lanes: []ruleLane{lane("p", "primary", "faster", nil), guardOK, controlOK},
			want:  want{status: spec.StatusInconclusive, codes: []string{OpenNotMeasured}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, plan, rep := ruleFixture([]string{"cand"}, tt.lanes)
			e.Shape, e.Incidence = tt.shape, tt.incidence
			d := Decide(e, plan, rep, tt.inc)
			if len(d.Arms) != 1 {
				t.Fatalf("got %d arms, want 1", len(d.Arms))
			}
			a := d.Arms[0]
			var codes []string
			for _, r := range a.Reasons {
				codes = append(codes, r.Code)
			}
			if a.Status != tt.want.status || d.Status != tt.want.status || !slices.Equal(codes, tt.want.codes) {
				t.Errorf("got %s %v, want %s %v\nreasons: %v", a.Status, codes, tt.want.status, tt.want.codes, a.Reasons)
			}
			for _, p := range tt.want.passed {
				if !slices.ContainsFunc(a.Passed, func(s string) bool { return strings.Contains(s, p) }) {
					t.Errorf("passed %q missing from %q", p, a.Passed)
				}
			}
			for _, n := range tt.want.notes {
				if !slices.ContainsFunc(a.Notes, func(s string) bool { return strings.Contains(s, n) }) {
					t.Errorf("note %q missing from %q", n, a.Notes)
				}
			}
			for _, text := range tt.want.texts {
				if !slices.ContainsFunc(a.Reasons, func(r Reason) bool { return strings.Contains(r.Text, text) }) {
					t.Errorf("no reason contains %q: %v", text, a.Reasons)
				}
			}
			for _, r := range a.Reasons {
				if !slices.Contains(RejectionReasons(), r.Code) && !slices.Contains(InconclusiveReasons(), r.Code) {
					t.Errorf("reason code %q is in neither closed list", r.Code)
				}
				if a.Status == spec.StatusRejected && !slices.Contains(RejectionReasons(), r.Code) {
					t.Errorf("rejected for %q, which is not a rejection reason", r.Code)
				}
			}
		})
	}
}

// incOf is an incidence measurement of the counters parked/dispatches.
func incOf(total, eligible float64, fired bool) *Incidence {
	return &Incidence{Total: total, Eligible: eligible, TotalCounter: "dispatches", EligibleCounter: "parked", ControlFired: fired}
}

func TestDecideSeveralArms(t *testing.T) {
	two := func(a, b []driftcheck.LaneVerdict) ruleLane {
		return ruleLane{name: "p", role: "primary", expect: "faster",
			verdicts: map[string][]driftcheck.LaneVerdict{"candA": a, "candB": b},
			medians:  map[string][]float64{"candA": {-10, -10}, "candB": {-10, -10}}}
	}
	tests := []struct {
		name     string
		lane     ruleLane
		status   string
		accepted []string
	}{
		{"one accepted", two(vs(neu, neu), vs(rf, rf)), spec.StatusAccepted, []string{"candB"}},
		{"both accepted", two(vs(rf, rf), vs(rf, rf)), spec.StatusAccepted, []string{"candA", "candB"}},
		{"all rejected", two(vs(neu, neu), vs(rs, rs)), spec.StatusRejected, nil},
		{"rejected and inconclusive", two(vs(neu, neu), vs(rf, ins)), spec.StatusInconclusive, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, plan, rep := ruleFixture([]string{"candA", "candB"}, []ruleLane{tt.lane})
			d := Decide(e, plan, rep, nil)
			if d.Status != tt.status || !slices.Equal(d.Accepted, tt.accepted) {
				t.Errorf("got %s %v, want %s %v (%s)", d.Status, d.Accepted, tt.status, tt.accepted, d.Summary())
			}
		})
	}
}

// TestDecideReferenceArm: a reference arm is decided and shown, but its verdict does not
// count toward the status: an accepted reference arm accepts nothing, a rejected one does
// not keep the others from rejecting the page.
func TestDecideReferenceArm(t *testing.T) {
	two := func(a, b []driftcheck.LaneVerdict) ruleLane {
		return ruleLane{name: "p", role: "primary", expect: "faster",
			verdicts: map[string][]driftcheck.LaneVerdict{"candA": a, "ref": b},
			medians:  map[string][]float64{"candA": {-10, -10}, "ref": {-10, -10}}}
	}
	tests := []struct {
		name     string
		lane     ruleLane
		status   string
		accepted []string
		summary  string
	}{
		{"reference accepted, candidate rejected", two(vs(neu, neu), vs(rf, rf)), spec.StatusRejected, nil,
			"rejected (candA rejected: below-signal)"},
		{"candidate accepted, reference rejected", two(vs(rf, rf), vs(neu, neu)), spec.StatusAccepted, []string{"candA"},
			"accepted (candA)"},
		{"both accepted", two(vs(rf, rf), vs(rf, rf)), spec.StatusAccepted, []string{"candA"}, "accepted (candA)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, plan, rep := ruleFixture([]string{"candA", "ref"}, []ruleLane{tt.lane})
			e.Arms[2].Reference = true
			d := Decide(e, plan, rep, nil)
			if d.Status != tt.status || !slices.Equal(d.Accepted, tt.accepted) || d.Summary() != tt.summary {
				t.Errorf("got %s %v %q, want %s %v %q", d.Status, d.Accepted, d.Summary(), tt.status, tt.accepted, tt.summary)
			}
			if len(d.Arms) != 2 || d.Arms[0].Reference || !d.Arms[1].Reference {
				t.Errorf("arms %+v: want candA decided and ref marked reference", d.Arms)
			}
		})
	}
}

// TestDecideSpecChanged checks that a page changed after the run decides nothing on what
// changed: the arm is inconclusive (spec-changed), never accepted or rejected on a lane
// or arm the receipt measured for another question.
func TestDecideSpecChanged(t *testing.T) {
	tests := []struct {
		name   string
		arms   []string
		lanes  []ruleLane
		change func(e *spec.Experiment)
		want   map[string]string // arm -> "status: codes"
		texts  []string          // substrings of some reason
	}{
		{
			name:  "a role changed, and a lane added",
			arms:  []string{"cand"},
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20)},
			change: func(e *spec.Experiment) {
				e.Lanes[0].Role = spec.RoleGuard // the page now calls the lane a guard
				e.Lanes = append(e.Lanes, spec.Lane{Name: "q", Role: spec.RolePrimary})
			},
			want:  map[string]string{"cand": "inconclusive: spec-changed, not-measured"},
			texts: []string{"lane p is guard on the page but was run as primary (expect faster)"},
		},
		{
			name:   "an expectation changed: a lane that got slower now expects it",
			arms:   []string{"cand"},
			lanes:  []ruleLane{lane("p", "primary", "faster", vs(rs, rs), 9, 9)},
			change: func(e *spec.Experiment) { e.Lanes[0].Expect = spec.ExpectSlower },
			want:   map[string]string{"cand": "inconclusive: spec-changed"},
			texts:  []string{"lane p is primary (expect slower) on the page but was run as primary (expect faster): the page changed after the run"},
		},
		{
			name:   "the better direction changed",
			arms:   []string{"cand"},
			lanes:  []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20)},
			change: func(e *spec.Experiment) { e.Lanes[0].Better = spec.BetterHigher },
			want:   map[string]string{"cand": "inconclusive: spec-changed"},
			texts:  []string{"lane p is better: higher on the page but was run as better: lower"},
		},
		{
			name:   "the better direction written out as the default it was run with",
			arms:   []string{"cand"},
			lanes:  []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20)},
			change: func(e *spec.Experiment) { e.Lanes[0].Better = spec.BetterLower },
			want:   map[string]string{"cand": "accepted: "},
		},
		{
			name: "a failing primary lane demoted to secondary",
			arms: []string{"cand"},
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("q", "primary", "faster", vs(neu, neu), 0, 0)},
			change: func(e *spec.Experiment) { e.Lanes[1].Role = spec.RoleSecondary },
			want:   map[string]string{"cand": "inconclusive: spec-changed"},
			texts:  []string{"lane q is secondary on the page but was run as primary (expect faster)"},
		},
		{
			name: "a regressing guard removed from the page",
			arms: []string{"cand"},
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20),
				lane("g", "guard", "", vs(rs, rs), 9, 9)},
			change: func(e *spec.Experiment) { e.Lanes = e.Lanes[:1] },
			want:   map[string]string{"cand": "inconclusive: spec-changed"},
			texts:  []string{"guard lane g was run but is no longer on the page"},
		},
		{
			name: "an arm removed from the page",
			arms: []string{"candA", "candB"},
			lanes: []ruleLane{{name: "p", role: "primary", expect: "faster",
				verdicts: map[string][]driftcheck.LaneVerdict{"candA": {rf, rf}, "candB": {neu, neu}},
				medians:  map[string][]float64{"candA": {-9, -9}, "candB": {0, 0}}}},
			change: func(e *spec.Experiment) { e.Arms = e.Arms[:2] },
			want:   map[string]string{"candA": "accepted: ", "candB": "inconclusive: spec-changed"},
			texts:  []string{"arm candB is in the receipt but no longer on the page"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, plan, rep := ruleFixture(tt.arms, tt.lanes)
			for i := range plan.Lanes {
				plan.Lanes[i].Better = spec.DefaultBetter // as spec.Resolve records it
			}
			tt.change(e)
			checkArms(t, Decide(e, plan, rep, nil), tt.want, tt.texts)
		})
	}
}

func TestDecideArmMissingFromReceipt(t *testing.T) {
	e, plan, rep := ruleFixture([]string{"candA"}, []ruleLane{{name: "p", role: "primary", expect: "faster",
		verdicts: map[string][]driftcheck.LaneVerdict{"candA": {rf, rf}}, medians: map[string][]float64{"candA": {-9, -9}}}})
	e.Arms = append(e.Arms, spec.Arm{Name: "candB"})
	d := Decide(e, plan, rep, nil)
	if d.Status != spec.StatusAccepted || len(d.Arms) != 2 || d.Arms[1].Status != spec.StatusInconclusive ||
		d.Arms[1].Reasons[0].Code != OpenNotMeasured {
		t.Errorf("got %+v", d)
	}
}

// TestDecidePower checks that a receipt which ran fewer collections, passes or samples than
// the spec asks for its profile decides nothing: its arms are inconclusive, under-powered.
func TestDecidePower(t *testing.T) {
	// The spec of exp 275 in miniature: a full protocol and a quick profile that keeps
	// the collections.
	specProto := spec.Protocol{Samples: 41, Warmup: 10, Passes: 12, Collections: 2, Seed: 275}
	quick := spec.Protocol{Samples: 15, Warmup: 3, Passes: 4}
	proto := func(c, p, s int) receipt.Protocol {
		return receipt.Protocol{Collections: c, Passes: p, Samples: s, Warmup: 1}
	}
	type want struct {
		status string
		codes  []string
		texts  []string // substrings of the reasons, in order
	}
	tests := []struct {
		name    string
		profile string
		ran     receipt.Protocol
		lanes   []ruleLane
		want    want
	}{
		{
			name: "quick profile run as the profile says: accepted", profile: "quick", ran: proto(2, 4, 15),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -19)},
			want:  want{status: spec.StatusAccepted},
		},
		{
			name: "more than the spec asks: accepted", ran: proto(3, 12, 50),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf, rf), -20, -19, -21)},
			want:  want{status: spec.StatusAccepted},
		},
		{
			name: "the reviewer's run: 1 collection x 2 passes x 3 samples", profile: "quick", ran: proto(1, 2, 3),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf), -20)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered},
				texts: []string{"1 collection x 2 passes x 3 samples, the spec's quick profile asks for 2 x 4 x 15"}},
		},
		{
			name: "one collection short of the spec's protocol", ran: proto(1, 12, 41),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf), -20)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered},
				texts: []string{"1 collection x 12 passes x 41 samples, the spec's protocol asks for 2 x 12 x 41"}},
		},
		{
			name: "fewer passes only", profile: "quick", ran: proto(2, 2, 15),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20)},
			want:  want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"2 collections x 2 passes x 15 samples"}},
		},
		{
			name: "fewer samples only", profile: "quick", ran: proto(2, 4, 14),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20)},
			want:  want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"asks for 2 x 4 x 15"}},
		},
		{
			name: "an under-powered receipt rejects nothing either", profile: "quick", ran: proto(1, 2, 3),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rs), 12)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered, ReasonRegression},
				texts: []string{"1 collection", "(not a rejection from an under-powered receipt)"}},
		},
		{
			name: "a control lane off and under-powered: both said", profile: "quick", ran: proto(1, 4, 15),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(neu), 0), lane("c", "control", "", vs(rs), 5)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenControl, OpenUnderPowered, ReasonBelowSignal},
				texts: []string{"control lane c", "1 collection", "(not a rejection while a control lane is off)"}},
		},
		{
			name: "the receipt's profile is gone from the spec", profile: "smoke", ran: proto(2, 4, 15),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged},
				texts: []string{"the receipt ran profile smoke, which the spec no longer has"}},
		},
		{
			name: "the receipt's profile is gone from the spec: it rejects nothing either", profile: "smoke", ran: proto(2, 4, 15),
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rs, rs), 12, 12)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged, ReasonRegression, ReasonRegression},
				texts: []string{"the receipt ran profile smoke", "(not a rejection while the evidence the spec asks for is unknown)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, plan, rep := ruleFixture([]string{"cand"}, tt.lanes)
			e.Protocol, e.Profiles = specProto, map[string]spec.Protocol{"quick": quick}
			plan.Profile, plan.Protocol = tt.profile, tt.ran
			d := Decide(e, plan, rep, nil)
			a := d.Arms[0]
			var codes []string
			for _, r := range a.Reasons {
				codes = append(codes, r.Code)
			}
			if a.Status != tt.want.status || d.Status != tt.want.status || !slices.Equal(codes, tt.want.codes) {
				t.Fatalf("got %s %v, want %s %v\nreasons: %v", a.Status, codes, tt.want.status, tt.want.codes, a.Reasons)
			}
			for i, text := range tt.want.texts {
				if !strings.Contains(a.Reasons[min(i, len(a.Reasons)-1)].Text, text) {
					t.Errorf("reason %d %q does not contain %q", i, a.Reasons[min(i, len(a.Reasons)-1)].Text, text)
				}
			}
		})
	}
}

// TestDecideReceiptShapes checks the rule on receipts that lack part of what the spec
// asks for: lanes left out with --lanes, a collection missing from the analysis, and
// three arms of which one was not run.
func TestDecideReceiptShapes(t *testing.T) {
	tests := []struct {
		name   string
		arms   []string
		lanes  []ruleLane
		adjust func(e *spec.Experiment, plan *receipt.Plan, rep *driftcheck.Report)
		want   map[string]string // arm -> "status: codes"
		texts  []string          // substrings of some reason
	}{
		{
			name:  "guard left out with --lanes",
			arms:  []string{"cand"},
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf, rf), -20, -20), lane("g", "guard", "", nil)},
			adjust: func(e *spec.Experiment, plan *receipt.Plan, rep *driftcheck.Report) {
				plan.Lanes = plan.Lanes[:1]
			},
			want:  map[string]string{"cand": "inconclusive: not-measured"},
			texts: []string{"guard lane g was not run: the receipt's run selected only lanes p (--lanes)"},
		},
		{
			name:  "a collection missing from the analysis",
			arms:  []string{"cand"},
			lanes: []ruleLane{lane("p", "primary", "faster", vs(rf), -20)},
			want:  map[string]string{"cand": "inconclusive: not-measured"},
			texts: []string{"primary lane p has no verdict for collection 2 in the receipt"},
		},
		{
			name: "three arms, one not run",
			arms: []string{"candA", "candB"},
			lanes: []ruleLane{{name: "p", role: "primary", expect: "faster",
				verdicts: map[string][]driftcheck.LaneVerdict{"candA": {rf, rf}, "candB": {rs, rs}},
				medians:  map[string][]float64{"candA": {-9, -9}, "candB": {9, 9}}}},
			adjust: func(e *spec.Experiment, plan *receipt.Plan, rep *driftcheck.Report) {
				e.Arms = append(e.Arms, spec.Arm{Name: "candC"})
			},
			want: map[string]string{"candA": "accepted: ", "candB": "rejected: regression, regression", "candC": "inconclusive: not-measured"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, plan, rep := ruleFixture(tt.arms, tt.lanes)
			if tt.adjust != nil {
				tt.adjust(e, plan, &rep)
			}
			checkArms(t, Decide(e, plan, rep, nil), tt.want, tt.texts)
		})
	}
}

// checkArms compares each arm's verdict, as "status: code, code", with want, and checks
// that some reason of some arm contains each of texts.
func checkArms(t *testing.T, d Decision, want map[string]string, texts []string) {
	t.Helper()
	got := map[string]string{}
	var all []string
	for _, a := range d.Arms {
		var codes []string
		for _, r := range a.Reasons {
			codes = append(codes, r.Code)
			all = append(all, r.Text)
		}
		got[a.Arm] = a.Status + ": " + strings.Join(codes, ", ")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s\n%v", diff, d.Arms)
	}
	for _, text := range texts {
		if !slices.ContainsFunc(all, func(s string) bool { return strings.Contains(s, text) }) {
			t.Errorf("no reason contains %q: %q", text, all)
		}
	}
}
