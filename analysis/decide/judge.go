package decide

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/model/spec"
)

// verdicts collects the findings for one arm.
type verdicts struct {
	*evidence
	rejects []Reason
	opens   []Reason
	suspect []Reason // control lanes: the measurement itself is suspect
	guards  []string // reproduced guard regressions, described
	prices  []string // guard slowdowns shown but within their own pre-registered floor
	passed  []string
	notes   []string
	// primaryGain is false once any primary lane fails to deliver its expected effect.
	primaryGain bool
}

func (v *verdicts) reject(code, format string, args ...any) {
	v.rejects = append(v.rejects, Reason{code, fmt.Sprintf(format, args...)})
}

func (v *verdicts) open(code, format string, args ...any) {
	v.opens = append(v.opens, Reason{code, fmt.Sprintf(format, args...)})
}

// judge applies the rule to one arm's evidence.
func judge(ev *evidence) ArmDecision {
	v := &verdicts{evidence: ev, primaryGain: !ev.primaryGone}
	v.opens = append(v.opens, ev.opens...)
	v.notes = append(v.notes, ev.notes...)
	if ev.weak != nil && ev.weak.Code == OpenSpecChanged && len(ev.lanes) == 0 && !slices.Contains(ev.in.Analysis.Candidates, ev.arm) {
		return ArmDecision{Arm: ev.arm, Status: spec.StatusInconclusive, Reasons: []Reason{*ev.weak}}
	}
	var guardsOK, controlsOK []string
	for _, l := range ev.lanes {
		switch l.lane.Role {
		case spec.RolePrimary:
			v.primary(l)
		case spec.RoleGuard:
			if v.guard(l) {
				guardsOK = append(guardsOK, l.lane.Name)
			}
			v.counts(l)
		case spec.RoleControl:
			if v.control(l) {
				controlsOK = append(controlsOK, l.lane.Name)
			}
		}
	}
	if len(guardsOK) > 0 {
		v.passed = append(v.passed, fmt.Sprintf("a regression beyond the floor is ruled out on guard lanes %s (pooled interval below +floor)", strings.Join(guardsOK, ", ")))
	}
	if len(controlsOK) > 0 {
		v.passed = append(v.passed, fmt.Sprintf("control lanes %s shown neutral (pooled interval inside +-floor)", strings.Join(controlsOK, ", ")))
	}
	e := ev.in.Spec
	if e.Shape != nil && len(e.Shape.Decay) > 0 {
		v.decay(e.Shape.Decay)
	}
	if e.Incidence != nil && (len(e.Incidence.Arms) == 0 || slices.Contains(e.Incidence.Arms, ev.arm)) {
		v.incidence(e.Incidence, ev.in.Incidence)
	}
	// A guard regression next to a delivered gain is a tradeoff, not a plain regression.
	for _, g := range v.guards {
		if v.primaryGain {
			v.reject(ReasonTradeoff, "%s, while every primary lane delivered its expected effect", g)
		} else {
			v.reject(ReasonRegression, "%s", g)
		}
	}
	return v.decision()
}

// decision composes the arm's status from its findings.
func (v *verdicts) decision() ArmDecision {
	out := ArmDecision{Arm: v.arm, Passed: v.passed, Notes: v.notes, Price: v.prices}
	switch {
	case len(v.suspect) > 0 || v.weak != nil:
		// The measurement is suspect, too small or of unknown size: it can neither accept
		// nor reject.
		out.Status = spec.StatusInconclusive
		out.Reasons = slices.Clone(v.suspect)
		why := " (not a rejection while a control lane is off)"
		if v.weak != nil {
			out.Reasons = append(out.Reasons, *v.weak)
			switch {
			case len(v.suspect) > 0:
			case v.weak.Code == OpenUnderPowered:
				why = " (not a rejection from an under-powered receipt)"
			default:
				why = " (not a rejection while the evidence the spec asks for is unknown)"
			}
		}
		out.Reasons = append(out.Reasons, v.opens...)
		for _, rj := range v.rejects {
			out.Reasons = append(out.Reasons, Reason{rj.Code, rj.Text + why})
		}
	case len(v.rejects) > 0:
		out.Status = spec.StatusRejected
		out.Reasons = v.rejects
		for _, o := range v.opens {
			out.Notes = append(out.Notes, "also "+o.String())
		}
	case len(v.opens) > 0:
		out.Status = spec.StatusInconclusive
		out.Reasons = v.opens
	default:
		out.Status = spec.StatusAccepted
	}
	return out
}

// wanted returns the lane verdict a primary lane must reach for its expectation.
func wanted(expect string) driftcheck.LaneVerdict {
	switch expect {
	case spec.ExpectSlower:
		return driftcheck.LaneReproducedSlower
	case spec.ExpectNeutral:
		return driftcheck.LaneNeutral
	}
	return driftcheck.LaneReproducedFaster
}

// all reports whether every collection's verdict is v.
func all(sums []driftcheck.LaneSummary, v driftcheck.LaneVerdict) bool {
	for _, s := range sums {
		if s.Verdict != v {
			return false
		}
	}
	return len(sums) > 0
}

// find returns the first collection summary with verdict v.
func find(sums []driftcheck.LaneSummary, v driftcheck.LaneVerdict) (driftcheck.LaneSummary, bool) {
	i := slices.IndexFunc(sums, func(s driftcheck.LaneSummary) bool { return s.Verdict == v })
	if i < 0 {
		return driftcheck.LaneSummary{}, false
	}
	return sums[i], true
}

// at describes a collection summary: "collection 2: effect -12.1% [-15.0%, -9.1%] ...".
func at(s driftcheck.LaneSummary) string {
	if s.Collection == 0 {
		return "pooled: " + s.Reason
	}
	return fmt.Sprintf("collection %d: %s", s.Collection, s.Reason)
}

// effects lists each collection's estimate: "-12.1%, -11.8%".
func effects(sums []driftcheck.LaneSummary) string {
	parts := make([]string, len(sums))
	for i, s := range sums {
		parts[i] = human.Delta(s.EstimatePct)
	}
	return strings.Join(parts, ", ")
}

// undecided explains why a lane the rule needs is not decided, and records it: an
// insufficient collection leaves the arm inconclusive for lack of data, an undecided one
// as under-powered, with the MDE and the pairs that would resolve the floor.
func (v *verdicts) undecided(l laneCase, what string) {
	if s, ok := find(l.colls, driftcheck.LaneInsufficient); ok {
		if setAsideOnly(s) {
			v.open(OpenUnderPowered, "%s lane %s has no usable pair in collection %d: its %s set aside as disturbed (see the set-aside runs); more pairs would measure it",
				l.lane.Role, l.lane.Name, s.Collection, human.Count(s.SetAside, "pair was", "pairs were"))
			return
		}
		v.open(OpenInsufficient, "%s lane %s insufficient in %s", l.lane.Role, l.lane.Name, at(s))
		return
	}
	v.open(OpenUnderPowered, "%s", underPowered(l, what))
}

// setAsideOnly reports whether a summary lacks usable pairs only because they were set
// aside as disturbed (no run failed).
func setAsideOnly(s driftcheck.LaneSummary) bool {
	return s.SetAside > 0 && s.UsablePairs == s.Pairs
}

// underPowered states the power of an undecided lane from its least decided collection:
// "under-powered on Conc4 (guard, a regression not ruled out): MDE 14.2% > floor 3%,
// about 40 more pairs per collection; collection 1: ...".
func underPowered(l laneCase, what string) string {
	worst := l.colls[0]
	for _, s := range l.colls {
		if !s.Verdict.Decided() && (worst.Verdict.Decided() || s.MDEPct > worst.MDEPct) {
			worst = s
		}
	}
	if l.pooled != nil && l.lane.Role != spec.RolePrimary {
		worst = *l.pooled
	}
	floor := human.Num(l.floor(0)) + "%"
	power := fmt.Sprintf("MDE %s at floor %s", human.Percent(worst.MDEPct), floor)
	if worst.MDEPct > l.floor(0) {
		power = fmt.Sprintf("MDE %s > floor %s", human.Percent(worst.MDEPct), floor)
	}
	more := ""
	have := worst.UsablePairs
	if worst.Collection == 0 && len(l.colls) > 0 {
		have = worst.UsablePairs / len(l.colls)
	}
	switch {
	case worst.PairsNeeded >= 100_000:
		more = ", far more pairs than a run makes"
	case worst.PairsNeeded > have:
		more = fmt.Sprintf(", about %d more pairs per collection", worst.PairsNeeded-have)
	}
	where := "pooled"
	if worst.Collection > 0 {
		where = fmt.Sprintf("collection %d", worst.Collection)
	}
	return fmt.Sprintf("under-powered on %s (%s lane, %s): %s%s; %s effect %s, pairs: %s",
		l.lane.Name, l.lane.Role, what, power, more, where, effectText(worst), driftcheck.PairCounts(worst))
}

// effectText formats a summary's estimate and interval: "+0.8% [-9.2%, +11.9%]".
func effectText(s driftcheck.LaneSummary) string {
	if !s.Bounded {
		return human.Delta(s.EstimatePct) + " (no interval)"
	}
	return human.DeltaCI(s.EstimatePct, s.CILowPct, s.CIHighPct)
}

// pooledIs reports whether a lane's pooled verdict is v.
func pooledIs(l laneCase, v driftcheck.LaneVerdict) bool {
	return l.pooled != nil && l.pooled.Verdict == v
}

// primary checks that a primary lane reached its expected verdict: reproduced in its
// direction (in every collection, the pooled estimate past the floor), or, expected
// neutral, shown neutral.
func (v *verdicts) primary(l laneCase) {
	name, expect, pooled := l.lane.Name, l.expect, l.pooled
	switch {
	case expect != spec.ExpectNeutral && pooledIs(l, wanted(expect)):
		v.passed = append(v.passed, fmt.Sprintf("primary lane %s reproduced %s in every collection (effect %s)", name, expect, effects(l.colls)))
		return
	case expect == spec.ExpectNeutral && pooled != nil && pooled.Verdict == driftcheck.LaneNeutral:
		v.passed = append(v.passed, fmt.Sprintf("primary lane %s (expect neutral) shown neutral: %s", name, report(pooled)))
		return
	}
	v.primaryGain = false
	switch {
	case pooledIs(l, driftcheck.LaneReproducedSlower):
		v.reject(ReasonRegression, "primary lane %s (expect %s) reproduced slower in every collection (effect %s)", name, expect, effects(l.colls))
	case pooledIs(l, driftcheck.LaneReproducedFaster):
		v.reject(ReasonPremiseRefuted, "primary lane %s (expect %s) reproduced faster in every collection (effect %s)", name, expect, effects(l.colls))
	case pooled != nil && pooled.Verdict == driftcheck.LaneNeutral:
		v.reject(ReasonBelowSignal, "primary lane %s (expect %s) shown neutral: %s", name, expect, report(pooled))
	case pooled != nil && pooled.Verdict == driftcheck.LaneOrderDependent:
		v.open(OpenDrift, "primary lane %s (expect %s) is order-dependent: %s; look for state that one arm leaves for the next (caches, files, warm pools) and rerun", name, expect, report(pooled))
	default:
		if s, ok := find(l.colls, opposite(wanted(expect))); ok {
			v.open(OpenUnderPowered, "primary lane %s (expect %s) reproduced the other way in one collection but not all (%s)", name, expect, at(s))
			return
		}
		v.undecided(l, "expect "+expect)
	}
}

// opposite returns the reproduced verdict against want (reproduced-slower for a lane
// expected faster); for neutral it returns reproduced-slower.
func opposite(want driftcheck.LaneVerdict) driftcheck.LaneVerdict {
	if want == driftcheck.LaneReproducedSlower {
		return driftcheck.LaneReproducedFaster
	}
	return driftcheck.LaneReproducedSlower
}

// report describes a pooled summary: "pooled effect +0.4% [-1.1%, +1.9%] ...".
func report(s *driftcheck.LaneSummary) string { return at(*s) }

// guard checks that a guard lane rules out a regression beyond the floor; it reports
// whether it does.
func (v *verdicts) guard(l laneCase) bool {
	name, floor := l.lane.Name, l.floor(v.floorPct)
	p := l.pooled
	if p != nil && p.UpperBelow(floor, v.alpha) {
		if floor > v.floorPct && p.LowerAbove(0, v.alpha) {
			// A guard given a floor of its own above the page's bounds a price the page
			// accepts in advance: a slowdown shown here is that price, paid within it.
			v.prices = append(v.prices, fmt.Sprintf("%s %s, within its pre-registered bound of %s", name,
				human.DeltaCI(p.EstimatePct, p.CILowPct, p.CIHighPct), "+"+human.Num(floor)+"%"))
		}
		return true
	}
	if pooledIs(l, driftcheck.LaneReproducedSlower) {
		v.guards = append(v.guards, fmt.Sprintf("guard lane %s reproduced slower in every collection (effect %s)", name, effects(l.colls)))
		return false
	}
	if p != nil && p.Verdict == driftcheck.LaneOrderDependent {
		v.open(OpenDrift, "guard lane %s is order-dependent, so a regression cannot be ruled out: %s", name, report(p))
		return false
	}
	v.undecided(l, "a regression beyond the floor not ruled out")
	return false
}

// control checks that a control lane is shown neutral; it reports whether it is.
func (v *verdicts) control(l laneCase) bool {
	name := l.lane.Name
	p := l.pooled
	switch {
	case p != nil && p.Verdict == driftcheck.LaneNeutral:
		return true
	case pooledIs(l, driftcheck.LaneReproducedSlower) || pooledIs(l, driftcheck.LaneReproducedFaster):
		v.suspect = append(v.suspect, Reason{OpenControl, fmt.Sprintf(
			"control lane %s reproduced an effect in every collection (effect %s), so the measurement itself is suspect (host, harness or build differences between arms)",
			name, effects(l.colls))})
	case p != nil && p.Verdict == driftcheck.LaneOrderDependent:
		v.suspect = append(v.suspect, Reason{OpenControl, fmt.Sprintf(
			"control lane %s is order-dependent (%s): the measurement has an order effect", name, report(p))})
	default:
		if s, ok := find(l.colls, driftcheck.LaneInsufficient); ok && !setAsideOnly(s) {
			v.suspect = append(v.suspect, Reason{OpenControl, fmt.Sprintf(
				"control lane %s insufficient in %s; without its data the measurement cannot be checked: fix the lane's failed runs and rerun", name, at(s))})
			return false
		}
		v.open(OpenUnderPowered, "%s", underPowered(l, "not shown neutral"))
	}
	return false
}

// decay checks the predicted shape on the pooled summaries: the gain (minus the effect)
// shrinks from the first lane to the last, and no step rises. It holds when the total
// shrink is shown (its interval lies above 0) and no step shows a rise beyond the floor;
// it is broken when a step shows a rise beyond the floor (interval above 0, estimate past
// the floor) or the gain shows growth from the first lane to the last; otherwise it is not
// shown either way.
func (v *verdicts) decay(lanes []string) {
	sums := make([]driftcheck.LaneSummary, len(lanes))
	for i, name := range lanes {
		s := v.pooled[name]
		if s == nil {
			v.open(OpenNotMeasured, "shape decay lane %s is not in the receipt", name)
			return
		}
		if s.Verdict == driftcheck.LaneInsufficient {
			v.open(OpenInsufficient, "shape decay lane %s is insufficient, so the predicted decay cannot be checked: %s", name, s.Reason)
			return
		}
		sums[i] = *s
	}
	fl := driftcheck.FloorLog(v.floorPct)
	var parts []string
	for i, s := range sums {
		parts = append(parts, fmt.Sprintf("%s %s", lanes[i], gainText(-s.EstimatePct)))
	}
	shape := strings.Join(parts, " > ")
	for i := 1; i < len(sums); i++ {
		// The gain's rise from lane i-1 to lane i is effect(i-1) - effect(i).
		rise := driftcheck.NewContrast(sums[i-1], sums[i], v.alpha)
		if rise.OK && rise.Lo > 0 && rise.Est > fl {
			v.reject(ReasonPremiseRefuted, "predicted decay broken: the gain rises from %s to %s: the ratio of %s's time change to %s's is %s [%s, %s], beyond the %s%% floor (%s)",
				lanes[i-1], lanes[i], lanes[i-1], lanes[i], factor(rise.Est), factor(rise.Lo), factor(rise.Hi), human.Num(v.floorPct), shape)
			return
		}
	}
	// The total shrink from the first lane to the last is effect(last) - effect(first).
	shrink := driftcheck.NewContrast(sums[len(sums)-1], sums[0], v.alpha)
	// The ratio of the last lane's time change to the first's: above 1 means the gain
	// shrank.
	ratio := fmt.Sprintf("the ratio of %s's time change to %s's is %s [%s, %s]", lanes[len(lanes)-1], lanes[0],
		factor(shrink.Est), factor(shrink.Lo), factor(shrink.Hi))
	switch {
	case shrink.OK && shrink.Lo > 0:
		v.passed = append(v.passed, fmt.Sprintf("predicted decay shown: %s, above x1 (%s)", ratio, shape))
	case shrink.OK && shrink.Hi < 0:
		v.reject(ReasonPremiseRefuted, "predicted decay broken: the gain grows from %s to %s: %s, below x1 (%s)", lanes[0], lanes[len(lanes)-1], ratio, shape)
	default:
		v.open(OpenUnderPowered, "predicted decay not shown: %s, which includes x1 (%s)", ratio, shape)
	}
}

// incidence applies the incidence gate.
func (v *verdicts) incidence(gate *spec.Incidence, inc *Incidence) {
	switch {
	case inc == nil:
		v.open(OpenIncidence, "incidence not measured: the spec gates on %s/%s >= %s over the release suite; measure it before this can be accepted",
			gate.Eligible, gate.Total, human.Num(gate.MinShare))
	case inc.Broken:
		why := "see its findings"
		if len(inc.Errors) > 0 {
			why = mdtable.OneLine(strings.Join(inc.Errors, "; "))
		}
		v.open(OpenIncidence, "the incidence measurement is broken (%s), so its counts prove nothing; fix it and remeasure", why)
	case inc.TotalCounter != gate.Total || inc.EligibleCounter != gate.Eligible:
		v.open(OpenIncidence, "the incidence measurement counted %s/%s, but the spec gates on %s/%s: the page changed after the measurement; remeasure",
			orDefault(inc.EligibleCounter, "(unnamed)"), orDefault(inc.TotalCounter, "(unnamed)"), gate.Eligible, gate.Total)
	case !inc.ControlFired:
		v.open(OpenIncidence, "the incidence probe's positive control did not fire, so its counts prove nothing; fix the probe and remeasure")
	case inc.Total <= 0:
		v.open(OpenIncidence, "the incidence suite counted no %s events; check that the suite exercises the code", gate.Total)
	case inc.Share() < gate.MinShare:
		v.reject(ReasonPremiseRefuted, "incidence %s/%s = %s (%s of %s) is below the min-share %s: the situation is too rare to matter",
			gate.Eligible, gate.Total, ShareText(inc.Share()), human.Num(inc.Eligible), human.Num(inc.Total), human.Num(gate.MinShare))
	default:
		v.passed = append(v.passed, fmt.Sprintf("incidence %s/%s = %s (%s of %s) at or above the min-share %s",
			gate.Eligible, gate.Total, ShareText(inc.Share()), human.Num(inc.Eligible), human.Num(inc.Total), human.Num(gate.MinShare)))
		if inc.Eligible == 0 {
			v.notes = append(v.notes, "the eligible count is exactly zero; verify the probe counts what it should")
		}
	}
}

// factor formats a log ratio as a factor: "x1.98".
func factor(x float64) string { return "x" + human.Sig(math.Exp(x)) }

// gainText formats a gain (minus an effect) in percent: "12.1%" or "-3.0%".
func gainText(g float64) string {
	return human.Percent(g)
}

// ShareText formats a share as a percentage with enough digits for small shares.
func ShareText(s float64) string {
	return human.Sig(s*100) + "%"
}
