package ledger

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
	"github.com/flipbench/flipbench/spec"
)

// Incidence is the measured incidence of the situation an experiment optimises, over the
// release suite: the hook of the decision rule's incidence gate. The incidence probes
// fill it; the rule only reads it.
type Incidence struct {
	// Total counts all events (the counter named TotalCounter).
	Total float64
	// Eligible counts the events the change helps (the counter named EligibleCounter).
	Eligible float64
	// TotalCounter and EligibleCounter name the counters the measurement read. The rule
	// decides nothing on counts of other counters than the spec's incidence.total and
	// incidence.eligible.
	TotalCounter    string
	EligibleCounter string
	// ControlFired reports whether the suite's positive control lane made the eligible
	// counter fire, proving the probe works; without it a zero proves nothing.
	ControlFired bool
	// Broken reports that the measurement found an error (incidence.Report.Broken: a lane
	// without a usable run, a counter no lane reported, a missing or silent control):
	// its counts prove nothing. Errors holds those findings, for the reason.
	Broken bool
	Errors []string
	// Source is shown in the results block next to the counts: the name of the file they
	// come from (incidence.json in the receipt's data folder); empty shows nothing.
	Source string
}

// Share returns Eligible/Total, or 0 when Total is not positive.
func (in Incidence) Share() float64 {
	if in.Total <= 0 {
		return 0
	}
	return in.Eligible / in.Total
}

// Reason is one reason for a verdict: a code from RejectionReasons (for a rejection) or
// InconclusiveReasons (for an inconclusive arm), and a text with the numbers.
type Reason struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// String formats the reason as "code: text".
func (r Reason) String() string { return r.Code + ": " + r.Text }

// ArmDecision is the decision rule's verdict for one candidate arm.
type ArmDecision struct {
	Arm string `json:"arm"`
	// Status is spec.StatusAccepted, spec.StatusRejected or spec.StatusInconclusive.
	Status string `json:"status"`
	// Reasons say why the arm is rejected or inconclusive (empty when accepted). When a
	// control lane, an under-powered receipt or a profile gone from the spec makes the arm
	// inconclusive, the reasons it would otherwise have been rejected for are listed too.
	Reasons []Reason `json:"reasons,omitempty"`
	// Passed lists the rule's conditions that held, in words with the numbers.
	Passed []string `json:"passed,omitempty"`
	// Notes are observations that do not change the verdict but deserve a look.
	Notes []string `json:"notes,omitempty"`
	// Reference marks a reference arm (spec.Arm.Reference): decided and shown like any
	// candidate, but its verdict does not count toward the experiment's status.
	Reference bool `json:"reference,omitempty"`
}

// Decision is the decision rule's verdict for an experiment.
type Decision struct {
	// Status is accepted when any candidate arm is accepted, rejected when every arm is
	// rejected, and inconclusive otherwise; reference arms do not count.
	Status string `json:"status"`
	// Accepted names the accepted arms.
	Accepted []string      `json:"accepted,omitempty"`
	Arms     []ArmDecision `json:"arms"`
}

// Summary says the decision in one line: "accepted (cand)", "rejected (candA:
// below-signal; candB: regression, tradeoff)", "inconclusive (cand: drift)".
func (d Decision) Summary() string {
	if d.Status == spec.StatusAccepted {
		return fmt.Sprintf("%s (%s)", d.Status, strings.Join(d.Accepted, ", "))
	}
	var parts []string
	for _, a := range d.Arms {
		var codes []string
		for _, r := range a.Reasons {
			if !slices.Contains(codes, r.Code) {
				codes = append(codes, r.Code)
			}
		}
		if a.Reference {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", a.Arm, a.Status, strings.Join(codes, ", ")))
	}
	return fmt.Sprintf("%s (%s)", d.Status, strings.Join(parts, "; "))
}

// Decide applies the decision rule (docs/decision-rule.md) to every candidate arm of the
// experiment e, run as plan (the receipt's plan.json) and measured in rep (its
// analysis.json). inc is the incidence measurement, or nil when there is none. Roles,
// expectations, the protocol the evidence must reach, the predicted shape and the
// incidence gate come from the spec; the protocol run and the lanes run from the plan;
// verdicts and deltas from the report. An arm the receipt ran that the spec no longer has
// is not decided: it is inconclusive (spec-changed). Decide is pure: it reads nothing
// else.
func Decide(e *spec.Experiment, plan *receipt.Plan, rep driftcheck.Report, inc *Incidence) Decision {
	cands := slices.Clone(rep.Candidates)
	for _, a := range e.Candidates() {
		if !slices.Contains(cands, a.Name) {
			cands = append(cands, a.Name)
		}
	}
	weak := power(e, plan)
	d := Decision{Arms: []ArmDecision{}}
	for _, arm := range cands {
		if !slices.ContainsFunc(e.Candidates(), func(a spec.Arm) bool { return a.Name == arm }) {
			// Deciding an arm the page no longer has would decide a question nobody asks.
			d.Arms = append(d.Arms, ArmDecision{Arm: arm, Status: spec.StatusInconclusive, Reasons: []Reason{{OpenSpecChanged,
				fmt.Sprintf("arm %s is in the receipt but no longer on the page: the page changed after the run; restore the arm or rerun", arm)}}})
			continue
		}
		a := decideArm(e, plan, rep, inc, weak, arm)
		a.Reference = slices.ContainsFunc(e.Candidates(), func(c spec.Arm) bool { return c.Name == arm && c.Reference })
		d.Arms = append(d.Arms, a)
	}
	rejected, counted := 0, 0
	for _, a := range d.Arms {
		if a.Reference {
			continue
		}
		counted++
		switch a.Status {
		case spec.StatusAccepted:
			d.Accepted = append(d.Accepted, a.Arm)
		case spec.StatusRejected:
			rejected++
		}
	}
	switch {
	case len(d.Accepted) > 0:
		d.Status = spec.StatusAccepted
	case rejected == counted && rejected > 0:
		d.Status = spec.StatusRejected
	default:
		d.Status = spec.StatusInconclusive
	}
	return d
}

// power compares the protocol a receipt ran (plan.Protocol) with the one the spec asks
// for the receipt's profile (plan.Profile; none means the spec's own protocol). It
// returns the reason the receipt cannot settle the experiment, or nil when it ran at
// least as many collections, passes per collection and samples per run.
func power(e *spec.Experiment, plan *receipt.Plan) *Reason {
	if plan == nil {
		return &Reason{OpenUnderPowered, "the receipt has no run plan to compare with the spec's protocol"}
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
		return &Reason{OpenSpecChanged, fmt.Sprintf("cannot resolve %s to compare the receipt with: %s", what, report.OneLine(err.Error()))}
	}
	got, want := plan.Protocol, res.Protocol
	if got.Collections >= want.Collections && got.Passes >= want.Passes && got.Samples >= want.Samples {
		return nil
	}
	return &Reason{OpenUnderPowered, fmt.Sprintf("%s x %s x %s, %s asks for %d x %d x %d (collections x passes x samples); "+
		"too little evidence to decide either way; rerun without the --collections, --passes or --samples that lowered it",
		report.Count(got.Collections, "collection", "collections"), report.Count(got.Passes, "pass", "passes"), report.Count(got.Samples, "sample", "samples"),
		what, want.Collections, want.Passes, want.Samples)}
}

// armRule collects the findings for one arm.
type armRule struct {
	floor   float64
	rejects []Reason
	opens   []Reason
	suspect []Reason // control lanes: the measurement itself is suspect
	weak    *Reason  // the receipt is under-powered, or the protocol it must reach is unknown
	guards  []string // reproduced guard regressions, described
	passed  []string
	notes   []string
	// primaryGain is false once any primary lane fails to deliver its expected effect.
	primaryGain bool
}

func (r *armRule) reject(code, format string, args ...any) {
	r.rejects = append(r.rejects, Reason{code, fmt.Sprintf(format, args...)})
}

func (r *armRule) open(code, format string, args ...any) {
	r.opens = append(r.opens, Reason{code, fmt.Sprintf(format, args...)})
}

// expected returns the lane verdict a primary lane must reach for its expectation.
func expected(expect string) driftcheck.LaneVerdict {
	switch expect {
	case spec.ExpectSlower:
		return driftcheck.LaneReproducedSlower
	case spec.ExpectNeutral:
		return driftcheck.LaneNeutral
	}
	return driftcheck.LaneReproducedFaster
}

func decideArm(e *spec.Experiment, plan *receipt.Plan, rep driftcheck.Report, inc *Incidence, weak *Reason, arm string) ArmDecision {
	r := &armRule{floor: rep.Config.EffectFloorPct, primaryGain: true}
	r.weak = weak
	if r.floor == 0 {
		r.floor = driftcheck.DefaultConfig().EffectFloorPct
	}
	// The lane summaries of this arm, by lane, in collection order.
	byLane := map[string][]driftcheck.LaneSummary{}
	for _, s := range rep.Lanes {
		if s.Arm == arm {
			byLane[s.Lane] = append(byLane[s.Lane], s)
		}
	}
	if !slices.Contains(rep.Candidates, arm) {
		r.open(OpenNotMeasured, "arm %s is in the spec but not in the receipt", arm)
	}
	var guardsOK, controlsOK []string
	for _, l := range e.Lanes {
		expect := l.Expect
		if l.Role == spec.RolePrimary && expect == "" {
			expect = spec.DefaultExpect
		}
		sums := byLane[l.Name]
		if changed := laneChanged(l, expect, plan, sums); changed != "" {
			r.open(OpenSpecChanged, "%s: the page changed after the run; restore it or rerun", changed)
			if l.Role == spec.RolePrimary {
				r.primaryGain = false
			}
			continue
		}
		if l.Role == spec.RoleSecondary {
			continue
		}
		if len(sums) == 0 {
			switch {
			case !slices.Contains(rep.Candidates, arm):
			case plan != nil && !slices.ContainsFunc(plan.Lanes, func(pl receipt.Lane) bool { return pl.Name == l.Name }):
				r.open(OpenNotMeasured, "%s lane %s was not run: the receipt's run selected only lanes %s (--lanes); rerun with every lane the rule needs",
					l.Role, l.Name, planLanes(plan))
			default:
				r.open(OpenNotMeasured, "%s lane %s is not in the receipt", l.Role, l.Name)
			}
			if l.Role == spec.RolePrimary {
				r.primaryGain = false
			}
			continue
		}
		if plan != nil {
			for c := 1; c <= plan.Protocol.Collections; c++ {
				if !slices.ContainsFunc(sums, func(s driftcheck.LaneSummary) bool { return s.Collection == c }) {
					r.open(OpenNotMeasured, "%s lane %s has no verdict for collection %d in the receipt", l.Role, l.Name, c)
					if l.Role == spec.RolePrimary {
						r.primaryGain = false
					}
				}
			}
		}
		switch l.Role {
		case spec.RolePrimary:
			r.primary(l.Name, expect, sums)
		case spec.RoleGuard:
			if r.guard(l.Name, sums) {
				guardsOK = append(guardsOK, l.Name)
			}
		case spec.RoleControl:
			if r.control(l.Name, sums) {
				controlsOK = append(controlsOK, l.Name)
			}
		}
	}
	if plan != nil {
		for _, pl := range plan.Lanes {
			if _, onPage := e.Lane(pl.Name); !onPage && pl.Role != spec.RoleSecondary {
				r.open(OpenSpecChanged, "%s lane %s was run but is no longer on the page: the page changed after the run; restore it or rerun", pl.Role, pl.Name)
				if pl.Role == spec.RolePrimary {
					r.primaryGain = false
				}
			}
		}
	}
	if len(guardsOK) > 0 {
		r.passed = append(r.passed, fmt.Sprintf("no reproduced regression on guard lanes %s", strings.Join(guardsOK, ", ")))
	}
	if len(controlsOK) > 0 {
		r.passed = append(r.passed, fmt.Sprintf("control lanes %s neutral in every collection", strings.Join(controlsOK, ", ")))
	}
	if e.Shape != nil && len(e.Shape.Decay) > 0 {
		r.decay(e.Shape.Decay, byLane)
	}
	if e.Incidence != nil {
		r.incidence(e.Incidence, inc)
	}
	// A guard regression next to a delivered gain is a tradeoff, not a plain regression.
	for _, g := range r.guards {
		if r.primaryGain {
			r.reject(ReasonTradeoff, "%s, while every primary lane delivered its expected effect", g)
		} else {
			r.reject(ReasonRegression, "%s", g)
		}
	}

	out := ArmDecision{Arm: arm, Passed: r.passed, Notes: r.notes}
	switch {
	case len(r.suspect) > 0 || r.weak != nil:
		// The measurement is suspect, too small or of unknown size: it can neither accept
		// nor reject.
		out.Status = spec.StatusInconclusive
		out.Reasons = slices.Clone(r.suspect)
		why := " (not a rejection while a control lane is off)"
		if r.weak != nil {
			out.Reasons = append(out.Reasons, *r.weak)
			switch {
			case len(r.suspect) > 0:
			case r.weak.Code == OpenUnderPowered:
				why = " (not a rejection from an under-powered receipt)"
			default:
				why = " (not a rejection while the evidence the spec asks for is unknown)"
			}
		}
		out.Reasons = append(out.Reasons, r.opens...)
		for _, rj := range r.rejects {
			out.Reasons = append(out.Reasons, Reason{rj.Code, rj.Text + why})
		}
	case len(r.rejects) > 0:
		out.Status = spec.StatusRejected
		out.Reasons = r.rejects
		for _, o := range r.opens {
			out.Notes = append(out.Notes, "also "+o.String())
		}
	case len(r.opens) > 0:
		out.Status = spec.StatusInconclusive
		out.Reasons = r.opens
	default:
		out.Status = spec.StatusAccepted
	}
	return out
}

// planLanes lists the lanes a run plan ran: "alpha, beta".
func planLanes(plan *receipt.Plan) string {
	names := make([]string, len(plan.Lanes))
	for i, l := range plan.Lanes {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// laneChanged compares a lane of the page (l, with its primary expectation resolved) with
// the lane the receipt ran: its role and a primary lane's expectation as the analysis
// recorded them (sums), or as the plan did when the analysis has none, and its better
// direction as the plan recorded it. It describes the first difference, or returns "" when
// there is none or the lane was not run.
func laneChanged(l spec.Lane, expect string, plan *receipt.Plan, sums []driftcheck.LaneSummary) string {
	var ran *receipt.Lane
	if plan != nil {
		if i := slices.IndexFunc(plan.Lanes, func(pl receipt.Lane) bool { return pl.Name == l.Name }); i >= 0 {
			ran = &plan.Lanes[i]
		}
	}
	role, runExpect := "", ""
	switch {
	case len(sums) > 0:
		role, runExpect = sums[0].Role, sums[0].Expect
	case ran != nil:
		role, runExpect = ran.Role, ran.Expect
		if role == spec.RolePrimary && runExpect == "" {
			runExpect = spec.DefaultExpect
		}
	default:
		return ""
	}
	if role != l.Role || (l.Role == spec.RolePrimary && runExpect != expect) {
		return fmt.Sprintf("lane %s is %s on the page but was run as %s", l.Name, laneDesc(l.Role, expect), laneDesc(role, runExpect))
	}
	if ran != nil {
		if page, run := orDefault(l.Better, spec.DefaultBetter), orDefault(ran.Better, spec.DefaultBetter); page != run {
			return fmt.Sprintf("lane %s is better: %s on the page but was run as better: %s", l.Name, page, run)
		}
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
func laneDesc(role, expect string) string {
	if role == spec.RolePrimary && expect != "" {
		return fmt.Sprintf("%s (expect %s)", role, expect)
	}
	if role == "" {
		return "no role"
	}
	return role
}

// primary checks that a primary lane reached its expected verdict in every collection.
func (r *armRule) primary(lane, expect string, sums []driftcheck.LaneSummary) {
	want := expected(expect)
	var ok []string
	drift := 0
	for _, s := range sums {
		v := s.Verdict
		at := fmt.Sprintf("primary lane %s (expect %s) %s in collection %d: %s", lane, expect, v, s.Collection, s.Reason)
		switch {
		case v == want:
			ok = append(ok, report.Pct(s.MedianDeltaPct))
			continue
		case v == driftcheck.LaneInsufficient:
			r.open(OpenInsufficient, "%s", at)
		case v == driftcheck.LaneDrift:
			drift++
		case v == driftcheck.LaneReproducedSlower:
			r.reject(ReasonRegression, "%s", at)
		case v == driftcheck.LaneReproducedFaster: // expected slower or neutral
			r.reject(ReasonPremiseRefuted, "%s", at)
		case v == driftcheck.LaneMixed && expect == spec.ExpectNeutral:
			r.open(OpenMixed, "%s", at)
		default: // neutral or mixed where a reproduced effect was expected
			r.reject(ReasonBelowSignal, "%s", at)
		}
		r.primaryGain = false
	}
	if drift > 0 {
		var at []string
		for _, s := range sums {
			if s.Verdict == driftcheck.LaneDrift {
				at = append(at, fmt.Sprintf("collection %d: %s", s.Collection, s.Reason))
			}
		}
		if drift == len(sums) {
			r.reject(ReasonDrift, "primary lane %s drift-suspected in every collection (%s): the apparent effect follows run order or time, not the arm",
				lane, strings.Join(at, "; "))
		} else {
			r.open(OpenDrift, "primary lane %s drift-suspected in %d of %d collections (%s); rerun on a quiet host",
				lane, drift, len(sums), strings.Join(at, "; "))
		}
	}
	if len(ok) == len(sums) {
		what := "reproduced " + expect
		if expect == spec.ExpectNeutral {
			what = "neutral"
		}
		r.passed = append(r.passed, fmt.Sprintf("primary lane %s %s in every collection (median pass delta %s)", lane, what, strings.Join(ok, ", ")))
	}
}

// guard checks that a guard lane shows no reproduced regression; it reports whether the
// lane is clean.
func (r *armRule) guard(lane string, sums []driftcheck.LaneSummary) bool {
	clean := true
	for _, s := range sums {
		at := fmt.Sprintf("guard lane %s %s in collection %d: %s", lane, s.Verdict, s.Collection, s.Reason)
		switch s.Verdict {
		case driftcheck.LaneReproducedSlower:
			r.guards = append(r.guards, at)
			clean = false
		case driftcheck.LaneInsufficient:
			r.open(OpenInsufficient, "%s; a regression cannot be ruled out", at)
			clean = false
		case driftcheck.LaneDrift:
			// A guard only has to rule out a regression. Drift that leans faster, or stays
			// within the floor, on both the median and the mean of the pass deltas shows no
			// sign of one; drift leaning slower might hide one.
			if s.MedianDeltaPct < r.floor && s.MeanDeltaPct < r.floor {
				r.notes = append(r.notes, fmt.Sprintf("guard lane %s: drift-suspected pairs in collection %d, but its pass deltas lean faster or stay within the floor (median %s, mean %s): no sign of a regression",
					lane, s.Collection, report.Pct(s.MedianDeltaPct), report.Pct(s.MeanDeltaPct)))
				continue
			}
			r.open(OpenDrift, "%s; a regression cannot be ruled out", at)
			clean = false
		case driftcheck.LaneMixed:
			// Mixed pairs that lean faster show no regression. A slower median at or beyond
			// the floor, or any pair that reproduced slower next to a slower median, might
			// be one that the pairs failed to pin down.
			switch {
			case s.MedianDeltaPct <= 0:
			case s.MedianDeltaPct >= r.floor || s.ReproducedSlower > 0:
				r.open(OpenMixed, "%s; a regression cannot be ruled out", at)
				clean = false
			default:
				r.notes = append(r.notes, fmt.Sprintf("guard lane %s: median pass delta %s in collection %d leans slower, within the floor, and no pair reproduced slower; watch it",
					lane, report.Pct(s.MedianDeltaPct), s.Collection))
			}
		}
	}
	return clean
}

// control checks that a control lane reads neutral everywhere; it reports whether it does.
func (r *armRule) control(lane string, sums []driftcheck.LaneSummary) bool {
	clean := true
	for _, s := range sums {
		switch s.Verdict {
		case driftcheck.LaneNeutral:
			continue
		case driftcheck.LaneInsufficient:
			r.suspect = append(r.suspect, Reason{OpenControl, fmt.Sprintf(
				"control lane %s insufficient in collection %d: %s; without its data the measurement cannot be checked: fix the lane's failed runs and rerun",
				lane, s.Collection, s.Reason)})
		default:
			r.suspect = append(r.suspect, Reason{OpenControl, fmt.Sprintf(
				"control lane %s %s in collection %d, not neutral: %s; the measurement itself is suspect (host, harness or build differences between arms)",
				lane, s.Verdict, s.Collection, s.Reason)})
		}
		clean = false
	}
	return clean
}

// decay checks the predicted shape: the gain (minus the median pass delta) shrinks over
// lanes, in every collection. A rise of more than the effect floor from one lane to the
// next breaks it, and so does a total shrink of less than the floor.
func (r *armRule) decay(lanes []string, byLane map[string][]driftcheck.LaneSummary) {
	ncoll := 0
	for _, l := range lanes {
		if len(byLane[l]) == 0 {
			r.open(OpenNotMeasured, "shape decay lane %s is not in the receipt", l)
			return
		}
		ncoll = max(ncoll, len(byLane[l]))
	}
	var held []string
	for c := 0; c < ncoll; c++ {
		gains := make([]float64, len(lanes))
		var parts []string
		unusable := ""
		for i, l := range lanes {
			if c >= len(byLane[l]) {
				r.open(OpenNotMeasured, "shape decay lane %s has no collection %d", l, c+1)
				return
			}
			s := byLane[l][c]
			if s.Verdict == driftcheck.LaneInsufficient {
				unusable = l
				break
			}
			gains[i] = -s.MedianDeltaPct
			parts = append(parts, fmt.Sprintf("%s %s", l, gainText(gains[i])))
		}
		coll := c + 1
		if unusable != "" {
			// No data is no evidence against the prediction, nor for it.
			r.open(OpenInsufficient, "shape decay lane %s is insufficient in collection %d, so the predicted decay cannot be checked there", unusable, coll)
			continue
		}
		broken := false
		for i := 1; i < len(gains); i++ {
			if gains[i] > gains[i-1]+r.floor {
				r.reject(ReasonPremiseRefuted, "predicted decay broken in collection %d: the gain rises from %s (%s) to %s (%s), more than the %g%% floor (%s)",
					coll, lanes[i-1], gainText(gains[i-1]), lanes[i], gainText(gains[i]), r.floor, strings.Join(parts, ", "))
				broken = true
				break
			}
		}
		if !broken && gains[0]-gains[len(gains)-1] < r.floor {
			r.reject(ReasonPremiseRefuted, "predicted decay broken in collection %d: from %s to %s the gain shrinks by less than the %g%% floor (%s)",
				coll, lanes[0], lanes[len(lanes)-1], r.floor, strings.Join(parts, ", "))
			broken = true
		}
		if !broken {
			held = append(held, strings.Join(parts, " > "))
		}
	}
	if len(held) == ncoll {
		r.passed = append(r.passed, fmt.Sprintf("predicted decay holds in every collection (%s)", strings.Join(held, "; ")))
	}
}

// incidence applies the incidence gate.
func (r *armRule) incidence(gate *spec.Incidence, inc *Incidence) {
	switch {
	case inc == nil:
		r.open(OpenIncidence, "incidence not measured: the spec gates on %s/%s >= %g over the release suite; measure it before this can be accepted",
			gate.Eligible, gate.Total, gate.MinShare)
	case inc.Broken:
		why := "see its findings"
		if len(inc.Errors) > 0 {
			why = report.OneLine(strings.Join(inc.Errors, "; "))
		}
		r.open(OpenIncidence, "the incidence measurement is broken (%s), so its counts prove nothing; fix it and remeasure", why)
	case inc.TotalCounter != gate.Total || inc.EligibleCounter != gate.Eligible:
		r.open(OpenIncidence, "the incidence measurement counted %s/%s, but the spec gates on %s/%s: the page changed after the measurement; remeasure",
			orDefault(inc.EligibleCounter, "(unnamed)"), orDefault(inc.TotalCounter, "(unnamed)"), gate.Eligible, gate.Total)
	case !inc.ControlFired:
		r.open(OpenIncidence, "the incidence probe's positive control did not fire, so its counts prove nothing; fix the probe and remeasure")
	case inc.Total <= 0:
		r.open(OpenIncidence, "the incidence suite counted no %s events; check that the suite exercises the code", gate.Total)
	case inc.Share() < gate.MinShare:
		r.reject(ReasonPremiseRefuted, "incidence %s/%s = %s (%g of %g) is below the min-share %g: the situation is too rare to matter",
			gate.Eligible, gate.Total, shareText(inc.Share()), inc.Eligible, inc.Total, gate.MinShare)
	default:
		r.passed = append(r.passed, fmt.Sprintf("incidence %s/%s = %s (%g of %g) at or above the min-share %g",
			gate.Eligible, gate.Total, shareText(inc.Share()), inc.Eligible, inc.Total, gate.MinShare))
		if inc.Eligible == 0 {
			r.notes = append(r.notes, "the eligible count is exactly zero; verify the probe counts what it should")
		}
	}
}

// gainText formats a gain (minus a delta) in percent: "12.1%" or "-3.0%".
func gainText(g float64) string {
	if g == 0 || math.Abs(g) < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", g)
}

// shareText formats a share as a percentage with enough digits for small shares.
func shareText(s float64) string {
	return fmt.Sprintf("%.3g%%", s*100)
}
