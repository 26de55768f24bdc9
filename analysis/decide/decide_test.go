package decide

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// Lane verdict shorthands for the tables.
const (
	rf  = driftcheck.LaneReproducedFaster
	rs  = driftcheck.LaneReproducedSlower
	neu = driftcheck.LaneNeutral
	ord = driftcheck.LaneOrderDependent
	und = driftcheck.LaneUndecided
	ins = driftcheck.LaneInsufficient
)

// df is the degrees of freedom of every test summary.
const df = 12

// est is one summary's evidence: a verdict, an estimate and the half-width of its 95%
// interval, both in percent on the log scale (small values read as plain percents).
type est struct {
	v          driftcheck.LaneVerdict
	pct, halfW float64
}

// summary builds a lane summary whose interval arithmetic is consistent: EstimateLog and
// SELog such that the 95% interval is est +- halfW (log-percent).
func summary(lane, arm string, c int, e est) driftcheck.LaneSummary {
	q := 2.1788128296672284 // t(0.975, 12)
	x, h := e.pct/100, e.halfW/100
	s := driftcheck.LaneSummary{Lane: lane, Arm: arm, Collection: c, FloorPct: 3, Verdict: e.v, Reason: "test reason " + string(e.v),
		EstimateLog: x, SELog: h / q, DF: df, DFUsed: df, Crit: q, Tail: 0.025, Bounded: e.v != ins, Confidence: 0.95, UsablePairs: 6, Pairs: 6,
		EstimatePct: (math.Exp(x) - 1) * 100, CILowPct: (math.Exp(x-h) - 1) * 100, CIHighPct: (math.Exp(x+h) - 1) * 100,
		MDEPct: e.halfW * 1.45, PairsNeeded: 6 + int(e.halfW*4), Counts: map[driftcheck.Verdict]int{}}
	if e.v == ins {
		s.UsablePairs, s.PairsNeeded = 0, -1
	}
	return s
}

// caseLane is one lane of a rule test: its spec, its evidence per collection and pooled,
// per arm.
type caseLane struct {
	name       string
	role       spec.Role
	expect     string
	expectArms map[string]string
	colls      map[string][]est
	pooled     map[string]est
}

// on returns a lane measured on arm "cand" only.
func on(name string, role spec.Role, expect string, pooled est, colls ...est) caseLane {
	return caseLane{name: name, role: role, expect: expect, colls: map[string][]est{"cand": colls}, pooled: map[string]est{"cand": pooled}}
}

// fixture builds a spec, the plan of a run of it and that run's report; arms are the
// candidates in order. The spec sets no protocol, so it asks for the defaults, and the plan
// ran exactly that with every lane.
func fixture(arms []string, lanes []caseLane) Input {
	e := &spec.Experiment{ID: 1, Arms: []spec.Arm{{Name: "base"}}}
	plan := &receipt.Plan{Experiment: 1, Arms: []receipt.Arm{{Name: "base"}},
		Protocol: receipt.Protocol{Collections: spec.DefaultCollections, Passes: spec.DefaultPasses, Samples: spec.DefaultSamples, Warmup: spec.DefaultWarmup}}
	for _, a := range arms {
		e.Arms = append(e.Arms, spec.Arm{Name: a})
		plan.Arms = append(plan.Arms, receipt.Arm{Name: a})
	}
	rep := driftcheck.Report{Config: driftcheck.DefaultConfig(), Base: "base", Candidates: arms}
	for _, l := range lanes {
		e.Lanes = append(e.Lanes, spec.Lane{Name: l.name, Role: l.role, Expect: l.expect, ExpectArms: l.expectArms})
		plan.Lanes = append(plan.Lanes, receipt.Lane{Name: l.name, Role: l.role, Expect: l.expect, ExpectArms: l.expectArms})
		for _, a := range arms {
			for c, ev := range l.colls[a] {
				rep.Lanes = append(rep.Lanes, summary(l.name, a, c+1, ev))
			}
			if p, ok := l.pooled[a]; ok {
				rep.Pooled = append(rep.Pooled, summary(l.name, a, 0, p))
			}
		}
	}
	return Input{Spec: e, Plan: plan, Analysis: rep}
}

// Evidence shorthands: a 20% gain, a neutral lane, a 10% regression, an undecided lane.
var (
	gain     = est{rf, -20, 4}
	flat     = est{neu, 0.2, 1.5}
	slow     = est{rs, 10, 4}
	unsure   = est{und, 1, 9}
	unsureUp = est{und, 4, 6}
	noData   = est{v: ins}
)

type want struct {
	status spec.Status
	codes  []string
	texts  []string // substrings of the reasons (or passed conditions when accepted)
}

func TestDecide(t *testing.T) {
	// A primary's pooled verdict is reproduced only when every collection reproduced it
	// (driftcheck's rule): otherwise it is the first collection that differs.
	prim := func(colls ...est) caseLane {
		p := colls[0]
		for _, c := range colls[1:] {
			if c.v != p.v {
				p = c
				break
			}
		}
		return on("P", spec.RolePrimary, "", p, colls...)
	}
	guard := func(pooled est, colls ...est) caseLane { return on("G", spec.RoleGuard, "", pooled, colls...) }
	control := func(pooled est, colls ...est) caseLane { return on("C", spec.RoleControl, "", pooled, colls...) }
	tests := []struct {
		name  string
		lanes []caseLane
		want  want
	}{
		{name: "accepted", lanes: []caseLane{prim(gain, gain), guard(flat, flat, flat), control(flat, flat, flat)},
			want: want{status: spec.StatusAccepted, texts: []string{"primary lane P reproduced faster in every collection",
				"ruled out on guard lanes G", "control lanes C shown neutral"}}},
		{name: "primary shown neutral is below signal", lanes: []caseLane{on("P", spec.RolePrimary, "", flat, flat, flat)},
			want: want{status: spec.StatusRejected, codes: []string{ReasonBelowSignal}, texts: []string{"shown neutral"}}},
		{name: "primary slower is a regression", lanes: []caseLane{prim(slow, slow)},
			want: want{status: spec.StatusRejected, codes: []string{ReasonRegression}}},
		{name: "primary faster where slower was predicted refutes the premise", lanes: []caseLane{on("P", spec.RolePrimary, spec.ExpectSlower, gain, gain, gain)},
			want: want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}}},
		{name: "primary undecided is under-powered with its MDE", lanes: []caseLane{prim(gain, unsure)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"under-powered on P", "MDE 13.0% > floor 3%", "more pairs per collection"}}},
		{name: "primary reproduced one way in one collection, the other in another", lanes: []caseLane{on("P", spec.RolePrimary, "", unsure, gain, slow)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"reproduced the other way in one collection"}}},
		{name: "primary order-dependent is drift, inconclusive", lanes: []caseLane{on("P", spec.RolePrimary, "", est{ord, 1, 9}, est{ord, 1, 9}, est{ord, 1, 9})},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenDrift}, texts: []string{"order-dependent"}}},
		{name: "primary insufficient", lanes: []caseLane{prim(gain, noData)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenInsufficient}}},
		{name: "guard slower everywhere next to a gain is a tradeoff", lanes: []caseLane{prim(gain, gain), guard(slow, slow, slow)},
			want: want{status: spec.StatusRejected, codes: []string{ReasonTradeoff}, texts: []string{"guard lane G reproduced slower in every collection"}}},
		{name: "guard slower without a gain is a regression", lanes: []caseLane{prim(gain, unsure), guard(slow, slow, slow)},
			want: want{status: spec.StatusRejected, codes: []string{ReasonRegression}}},
		{name: "guard whose interval reaches past the floor is not cleared", lanes: []caseLane{prim(gain, gain), guard(unsureUp, unsureUp, unsureUp)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"a regression beyond the floor not ruled out"}}},
		{name: "guard faster is cleared", lanes: []caseLane{prim(gain, gain), guard(gain, gain, gain)},
			want: want{status: spec.StatusAccepted}},
		{name: "guard neutral within the floor but undecided still clears below +floor", lanes: []caseLane{prim(gain, gain), guard(est{und, -4, 5}, est{und, -4, 5}, est{und, -4, 5})},
			want: want{status: spec.StatusAccepted}},
		{name: "control reproduced everywhere makes the measurement suspect", lanes: []caseLane{prim(slow, slow), control(slow, slow, slow)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenControl, ReasonRegression}, texts: []string{"not a rejection while a control lane is off"}}},
		{name: "control undecided is under-powered, not suspect", lanes: []caseLane{prim(gain, gain), control(unsure, unsure, unsure)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"under-powered on C (control lane, not shown neutral)"}}},
		{name: "control order-dependent is suspect", lanes: []caseLane{prim(gain, gain), control(est{ord, 0, 9}, unsure, unsure)},
			want: want{status: spec.StatusInconclusive, codes: []string{OpenControl}, texts: []string{"order effect"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(fixture([]string{"cand"}, tc.lanes))
			check(t, d.Arms[0], tc.want)
			if d.Status != tc.want.status {
				t.Errorf("experiment status %s, want %s", d.Status, tc.want.status)
			}
		})
	}
}

// check compares an arm decision with a want.
func check(t *testing.T, a ArmDecision, w want) {
	t.Helper()
	if a.Status != w.status {
		t.Errorf("arm %s: status %s, want %s; reasons %v", a.Arm, a.Status, w.status, a.Reasons)
	}
	var codes []string
	for _, r := range a.Reasons {
		if !slices.Contains(codes, r.Code) {
			codes = append(codes, r.Code)
		}
		if !slices.Contains([]string{ReasonBelowSignal, ReasonRegression, ReasonTradeoff, ReasonPremiseRefuted, ReasonDrift}, r.Code) && !slices.Contains(InconclusiveReasons(), r.Code) {
			t.Errorf("reason code %q is not in the vocabulary", r.Code)
		}
	}
	slices.Sort(codes)
	wc := slices.Clone(w.codes)
	slices.Sort(wc)
	if !slices.Equal(codes, wc) {
		t.Errorf("arm %s: codes %v, want %v; reasons %v", a.Arm, codes, wc, a.Reasons)
	}
	all := strings.Join(append(append([]string{}, a.Passed...), reasonTexts(a.Reasons)...), "\n")
	for _, s := range w.texts {
		if !strings.Contains(all, s) {
			t.Errorf("arm %s: no %q in\n%s", a.Arm, s, all)
		}
	}
}

func reasonTexts(rs []Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}

// TestPerArmExpect: a lane expected neutral for candA and faster for candB is judged for
// each arm by its own expectation (experiment 275's PointUnderLoad).
func TestPerArmExpect(t *testing.T) {
	l := caseLane{name: "PointUnderLoad", role: spec.RolePrimary, expectArms: map[string]string{"candA": spec.ExpectNeutral, "candB": spec.ExpectFaster},
		colls:  map[string][]est{"candA": {flat, flat}, "candB": {gain, gain}},
		pooled: map[string]est{"candA": flat, "candB": gain}}
	d := Decide(fixture([]string{"candA", "candB"}, []caseLane{l}))
	check(t, d.Arms[0], want{status: spec.StatusAccepted, texts: []string{"primary lane PointUnderLoad (expect neutral) shown neutral"}})
	check(t, d.Arms[1], want{status: spec.StatusAccepted, texts: []string{"primary lane PointUnderLoad reproduced faster"}})

	// The same data with the expectations swapped: candA is neutral where faster was
	// predicted (below-signal), candB faster where neutral was predicted (premise-refuted).
	l.expectArms = map[string]string{"candA": spec.ExpectFaster, "candB": spec.ExpectNeutral}
	d = Decide(fixture([]string{"candA", "candB"}, []caseLane{l}))
	check(t, d.Arms[0], want{status: spec.StatusRejected, codes: []string{ReasonBelowSignal}})
	check(t, d.Arms[1], want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}})

	// A page whose per-arm expectation changed after the run decides nothing.
	in := fixture([]string{"candA", "candB"}, []caseLane{l})
	in.Spec.Lanes[0].ExpectArms = map[string]string{"candA": spec.ExpectFaster, "candB": spec.ExpectFaster}
	d = Decide(in)
	check(t, d.Arms[1], want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged},
		texts: []string{"lane PointUnderLoad is primary (expect faster) on the page but was run as primary (expect neutral)"}})
}

// TestDecay checks the predicted shape on pooled estimates.
func TestDecay(t *testing.T) {
	lanes := func(pooled ...est) []caseLane {
		var out []caseLane
		for i, p := range pooled {
			role := spec.RoleSecondary
			if i == 0 {
				role = spec.RolePrimary
			}
			out = append(out, on([]string{"F4", "F8", "F32", "Steady"}[i], role, "", p, p, p))
		}
		return out
	}
	shape := func(in Input) Input {
		in.Spec.Shape = &spec.Shape{Decay: []string{"F4", "F8", "F32", "Steady"}}
		return in
	}
	tests := []struct {
		name   string
		pooled []est
		want   want
	}{
		{"shown", []est{{rf, -40, 3}, {rf, -30, 3}, {rf, -15, 3}, {neu, 0, 1}},
			want{status: spec.StatusAccepted, texts: []string{"predicted decay shown: the ratio of Steady's time change to F4's is x1.49"}}},
		{"a shown rise breaks it", []est{{rf, -40, 3}, {rf, -10, 3}, {rf, -30, 3}, {neu, 0, 1}},
			want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}, texts: []string{"the gain rises from F8 to F32"}}},
		{"a noisy rise is not shown either way", []est{{rf, -40, 3}, {rf, -20, 12}, {rf, -22, 12}, {und, -38, 12}},
			want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"predicted decay not shown"}}},
		{"growth breaks it", []est{{rf, -10, 2}, {rf, -20, 2}, {rf, -20, 2}, {rf, -30, 2}},
			want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}, texts: []string{"the gain rises from F4 to F8"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, Decide(shape(fixture([]string{"cand"}, lanes(tc.pooled...)))).Arms[0], tc.want)
		})
	}
}

// TestIncidence checks the incidence gate.
func TestIncidence(t *testing.T) {
	base := func(inc *Incidence) Input {
		in := fixture([]string{"cand"}, []caseLane{on("P", spec.RolePrimary, "", gain, gain, gain)})
		in.Spec.Incidence = &spec.Incidence{Total: "dispatches", Eligible: "parked", MinShare: 0.001}
		in.Incidence = inc
		return in
	}
	inc := func(total, eligible float64, fired bool) *Incidence {
		return &Incidence{Total: total, Eligible: eligible, TotalCounter: "dispatches", EligibleCounter: "parked", ControlFired: fired}
	}
	tests := []struct {
		name string
		inc  *Incidence
		want want
	}{
		{"not measured", nil, want{status: spec.StatusInconclusive, codes: []string{OpenIncidence}}},
		{"too rare", inc(335221, 0, true), want{status: spec.StatusRejected, codes: []string{ReasonPremiseRefuted}, texts: []string{"too rare to matter"}}},
		{"silent control", inc(335221, 0, false), want{status: spec.StatusInconclusive, codes: []string{OpenIncidence}}},
		{"common enough", inc(1000, 10, true), want{status: spec.StatusAccepted, texts: []string{"at or above the min-share"}}},
		{"broken", &Incidence{Broken: true, Errors: []string{"lane X: no usable run"}}, want{status: spec.StatusInconclusive, codes: []string{OpenIncidence}, texts: []string{"lane X: no usable run"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, Decide(base(tc.inc)).Arms[0], tc.want) })
	}
	// A gate that names other arms leaves this one alone.
	in := base(inc(335221, 0, true))
	in.Spec.Incidence.Arms = []string{"other"}
	check(t, Decide(in).Arms[0], want{status: spec.StatusAccepted})
}

// TestReconcile checks what a receipt that does not match its page decides.
func TestReconcile(t *testing.T) {
	lanes := []caseLane{on("P", spec.RolePrimary, "", gain, gain, gain), on("G", spec.RoleGuard, "", flat, flat, flat)}
	tests := []struct {
		name string
		edit func(*Input)
		want want
	}{
		{"a role changed", func(in *Input) { in.Spec.Lanes[1].Role = spec.RoleControl },
			want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged}, texts: []string{"lane G is control on the page but was run as guard"}}},
		{"a floor changed", func(in *Input) { in.Spec.Lanes[1].FloorPct = 1 },
			want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged}, texts: []string{"floor-pct 1 on the page"}}},
		{"a lane gone from the page", func(in *Input) { in.Spec.Lanes = in.Spec.Lanes[:1] },
			want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged}, texts: []string{"guard lane G was run but is no longer on the page"}}},
		{"a lane not run", func(in *Input) { in.Spec.Lanes = append(in.Spec.Lanes, spec.Lane{Name: "H", Role: spec.RoleGuard}) },
			want{status: spec.StatusInconclusive, codes: []string{OpenNotMeasured}, texts: []string{"guard lane H was not run"}}},
		{"a collection missing", func(in *Input) { in.Analysis.Lanes = in.Analysis.Lanes[1:] },
			want{status: spec.StatusInconclusive, codes: []string{OpenNotMeasured}, texts: []string{"has no verdict for collection 1"}}},
		{"fewer passes than the spec asks", func(in *Input) { in.Plan.Protocol.Passes = 2 },
			want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered}, texts: []string{"asks for 2 x 4 x 21"}}},
		{"an arm gone from the page", func(in *Input) { in.Spec.Arms = in.Spec.Arms[:1] },
			want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged}, texts: []string{"arm cand is in the receipt but no longer on the page"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := fixture([]string{"cand"}, lanes)
			tc.edit(&in)
			check(t, Decide(in).Arms[0], tc.want)
		})
	}
}

// TestSummary checks the one-line decision.
func TestSummary(t *testing.T) {
	d := Decision{Status: spec.StatusRejected, Arms: []ArmDecision{
		{Arm: "candA", Status: spec.StatusRejected, Reasons: []Reason{{ReasonPremiseRefuted, "x"}, {ReasonPremiseRefuted, "y"}}},
		{Arm: "candB", Status: spec.StatusRejected, Reasons: []Reason{{ReasonTradeoff, "z"}}},
	}}
	if got, w := d.Summary(), "rejected (candA rejected: premise-refuted; candB rejected: tradeoff)"; got != w {
		t.Errorf("got %q, want %q", got, w)
	}
}

// TestReferenceArm: a reference arm is decided and shown, but its verdict does not count
// toward the status: an accepted reference arm accepts nothing, a rejected one does not
// keep the others from rejecting the page.
func TestReferenceArm(t *testing.T) {
	two := func(a, ref est) caseLane {
		return caseLane{name: "p", role: spec.RolePrimary, expect: spec.ExpectFaster,
			colls: map[string][]est{"candA": {a, a}, "ref": {ref, ref}}, pooled: map[string]est{"candA": a, "ref": ref}}
	}
	tests := []struct {
		name     string
		lane     caseLane
		status   spec.Status
		accepted []string
		summary  string
	}{
		{"reference accepted, candidate rejected", two(flat, gain), spec.StatusRejected, nil, "rejected (candA rejected: below-signal)"},
		{"candidate accepted, reference rejected", two(gain, flat), spec.StatusAccepted, []string{"candA"}, "accepted (candA)"},
		{"both accepted", two(gain, gain), spec.StatusAccepted, []string{"candA"}, "accepted (candA)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fixture([]string{"candA", "ref"}, []caseLane{tt.lane})
			in.Spec.Arms[2].Reference = true
			d := Decide(in)
			if d.Status != tt.status || !slices.Equal(d.Accepted, tt.accepted) || d.Summary() != tt.summary {
				t.Errorf("got %s %v %q, want %s %v %q", d.Status, d.Accepted, d.Summary(), tt.status, tt.accepted, tt.summary)
			}
			if len(d.Arms) != 2 || d.Arms[0].Reference || !d.Arms[1].Reference {
				t.Errorf("arms %+v: want candA decided and ref marked reference", d.Arms)
			}
		})
	}
}

// TestPrice: a guard lane with a floor of its own above the page's bounds a price the page
// accepted in advance. A slowdown shown there, within that floor, leaves the arm accepted
// and the summary says the claim came at that price; one that cannot be told from zero, or
// a guard at the page's floor, names no price.
func TestPrice(t *testing.T) {
	priced := func(guard est, floor float64) Decision {
		in := fixture([]string{"cand"}, []caseLane{
			on("Light", spec.RolePrimary, "faster", gain, gain, gain),
			on("Noisy", spec.RoleGuard, "", guard, guard, guard),
		})
		in.Spec.Lanes[1].FloorPct, in.Plan.Lanes[1].FloorPct = floor, floor
		for _, ss := range [][]driftcheck.LaneSummary{in.Analysis.Lanes, in.Analysis.Pooled} {
			for i := range ss {
				if ss[i].Lane == "Noisy" {
					ss[i].FloorPct = floor
				}
			}
		}
		return Decide(in)
	}
	d := priced(est{neu, 20, 2}, 45)
	if d.Status != spec.StatusAccepted || len(d.Arms[0].Price) != 1 {
		t.Fatalf("a shown slowdown within the guard's own floor: %s, price %q", d.Summary(), d.Arms[0].Price)
	}
	want := "accepted (cand: the claim reproduced at a price: Noisy +22.1% [+19.7%, +24.6%] (1.22x slower), within its pre-registered bound of +45%)"
	if got := d.Summary(); got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
	if d := priced(est{neu, 1, 3}, 45); d.Status != spec.StatusAccepted || len(d.Arms[0].Price) != 0 || d.Summary() != "accepted (cand)" {
		t.Errorf("a guard whose interval holds zero: %s, price %q", d.Summary(), d.Arms[0].Price)
	}
	if d := priced(est{neu, 1.5, 1}, 3); d.Status != spec.StatusAccepted || len(d.Arms[0].Price) != 0 {
		t.Errorf("a guard at the page's floor: %s, price %q", d.Summary(), d.Arms[0].Price)
	}
	if d := priced(est{rs, 60, 5}, 45); d.Status != spec.StatusRejected {
		t.Errorf("a slowdown beyond the guard's own floor: %s", d.Summary())
	}
}

// TestCountBounds: a guard lane's count bound (at-most) holds when the upper end of the
// candidate's mean over processes is at or below it, is a regression (a tradeoff beside a
// delivered gain) when the lower end is above it, and leaves the arm open otherwise or
// when no process reported the metric. A page that bounds a count the run did not is a
// changed rule.
func TestCountBounds(t *testing.T) {
	decideWith := func(perProcess ...float64) Decision {
		in := fixture([]string{"cand"}, []caseLane{
			on("Light", spec.RolePrimary, "faster", gain, gain, gain),
			on("Thrash", spec.RoleGuard, "", flat, flat, flat),
		})
		bound := map[string]float64{"cold-calls/op": 0.5}
		in.Spec.Lanes[1].AtMost, in.Plan.Lanes[1].AtMost = bound, bound
		if perProcess != nil {
			in.Counts = []Count{{Lane: "Thrash", Arm: "base", Metric: "cold-calls/op", PerProcess: []float64{9, 9}},
				{Lane: "Thrash", Arm: "cand", Metric: "cold-calls/op", PerProcess: perProcess}}
		}
		return Decide(in)
	}
	d := decideWith(0, 0, 0.25, 0, 0, 0.25, 0, 0)
	check(t, d.Arms[0], want{status: spec.StatusAccepted, texts: []string{"guard lane Thrash keeps its counts within their bounds: cold-calls/op 0.0625 [", "over 8 processes, bound 0.5"}})
	check(t, decideWith(3, 2.5, 3.5, 3, 2.75, 3.25).Arms[0], want{status: spec.StatusRejected, codes: []string{ReasonTradeoff},
		texts: []string{"guard lane Thrash exceeds its count bound: cold-calls/op 3.00 ["}})
	check(t, decideWith(0, 2, 0, 1).Arms[0], want{status: spec.StatusInconclusive, codes: []string{OpenUnderPowered},
		texts: []string{"a count above its bound not ruled out: cold-calls/op 0.750"}})
	check(t, decideWith().Arms[0], want{status: spec.StatusInconclusive, codes: []string{OpenNotMeasured},
		texts: []string{"no process of cand reported it"}})

	in := fixture([]string{"cand"}, []caseLane{on("Light", spec.RolePrimary, "faster", gain, gain, gain), on("Thrash", spec.RoleGuard, "", flat, flat, flat)})
	in.Spec.Lanes[1].AtMost = map[string]float64{"cold-calls/op": 0.5}
	check(t, Decide(in).Arms[0], want{status: spec.StatusInconclusive, codes: []string{OpenSpecChanged},
		texts: []string{"at-most: lane Thrash bounds cold-calls/op <= 0.5 on the page but was run bounding none"}})
}

// TestCountsOf: every run that ended well gives one mean per metric; failed runs give none.
func TestCountsOf(t *testing.T) {
	recs := []receipt.Record{
		{Lane: "L", Arm: "base", Metrics: map[string][]float64{"cold/op": {1, 3}, "x/op": {2}}},
		{Lane: "L", Arm: "base", Metrics: map[string][]float64{"cold/op": {4, 4}}},
		{Lane: "L", Arm: "base", Error: "exit 1", Metrics: map[string][]float64{"cold/op": {100}}},
		{Lane: "L", Arm: "cand", Metrics: map[string][]float64{"cold/op": {0}}},
	}
	got := CountsOf(recs)
	want := []Count{{"L", "base", "cold/op", []float64{2, 4}}, {"L", "base", "x/op", []float64{2}}, {"L", "cand", "cold/op", []float64{0}}}
	if len(got) != len(want) {
		t.Fatalf("CountsOf = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Lane != want[i].Lane || got[i].Arm != want[i].Arm || got[i].Metric != want[i].Metric || !slices.Equal(got[i].PerProcess, want[i].PerProcess) {
			t.Errorf("CountsOf[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
