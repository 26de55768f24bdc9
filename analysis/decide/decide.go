// Package decide is the decision rule of an experiment: given the page's spec, the plan a
// receipt ran and the drift check of its data (and the incidence measurement, if the spec
// gates on one), it accepts, rejects or leaves inconclusive every candidate arm, with
// reasons from a closed vocabulary (vocab.go) that state the numbers.
//
// It works in two steps. Reconcile compares the receipt with the spec: what the page asks
// for against what was run (arms, lanes, roles, expectations, better directions, floors,
// the protocol) and gathers each lane's evidence for each arm; anything that does not match
// makes the arm inconclusive (spec-changed, not-measured, under-powered). Judge then reads
// the evidence lane by lane:
//
//   - a primary lane must reproduce its expected effect in every collection (its interval
//     excludes 0 with the estimate beyond the floor); a primary shown neutral (its pooled
//     interval inside +-floor) rejects the arm as below-signal; a primary reproduced the
//     other way rejects it (regression, or premise-refuted);
//   - a guard lane is cleared only by its pooled interval lying below +floor; a guard that
//     reproduced slower in every collection is a regression (a tradeoff when every primary
//     delivered);
//   - a control lane must be shown neutral; one that reproduced an effect in every
//     collection, or depends on run order, makes the measurement suspect;
//   - the predicted decay must be shown (the gain shrinks from the first lane to the last
//     by more than nothing, and no step rises by a shown amount beyond the floor);
//   - the incidence gate: eligible/total at or above min-share, from a working probe.
//
// A lane the data cannot settle (undecided, insufficient) leaves the arm inconclusive and
// says how far it is: "under-powered on Conc4: MDE 14.2% > floor 3%, about 40 more pairs
// per collection". Drift is a reason only when an order effect was measured
// (order-dependent). Decide is pure: it reads nothing but its input.
package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// Input is what the rule decides on.
type Input struct {
	// Spec is the page's experiment.
	Spec *spec.Experiment
	// Plan is the receipt's plan.json; nil when the receipt has none.
	Plan *receipt.Plan
	// Analysis is the receipt's drift check (analysis.json).
	Analysis driftcheck.Report
	// Incidence is the incidence measurement, or nil when there is none.
	Incidence *Incidence
	// Counts are the receipt's metrics per lane, arm and process (CountsOf its records),
	// which the guards' count bounds read (spec.Lane.AtMost); nil when the caller has no
	// records (a look of a sequential run: a count bound is judged by finalize).
	Counts []Count
}

// Incidence is the measured incidence of the situation an experiment optimises, over the
// release suite: the input of the decision rule's incidence gate. The incidence probes
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
	// Broken reports that the measurement found an error (a lane without a usable run, a
	// counter no lane reported, a missing or silent control): its counts prove nothing.
	// Errors holds those findings, for the reason.
	Broken bool
	Errors []string
	// Source is shown in the results block next to the counts: the name of the file they
	// come from; empty shows nothing.
	Source string
	// Gate is the incidence gate the measurement was made for, as its report recorded it
	// (which does not record the gate's arms), when the measurement is the receipt's own:
	// for a receipt whose plan froze no rule, the rule compares the page's control and
	// min-share with it. Nil when unknown.
	Gate *receipt.IncidenceGate
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
	Status spec.Status `json:"status"`
	// Reasons say why the arm is rejected or inconclusive (empty when accepted). When a
	// suspect control lane or a receipt that cannot settle the spec makes the arm
	// inconclusive, the reasons it would otherwise have been rejected for are listed too.
	Reasons []Reason `json:"reasons,omitempty"`
	// Passed lists the rule's conditions that held, in words with the numbers.
	Passed []string `json:"passed,omitempty"`
	// Price lists the slowdowns shown on guard lanes that have a floor of their own above
	// the page's (spec.Lane.FloorPct): a cost the page accepted in advance up to that
	// floor, shown and paid within it ("NoisyThroughput +23.0% [+21.9%, +24.1%], within
	// its pre-registered bound of +45%"). They do not change the verdict; an accepted
	// arm's summary names them, so that a claim bought at a price reads as one.
	Price []string `json:"price,omitempty"`
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
	Status spec.Status `json:"status"`
	// Accepted names the accepted arms.
	Accepted []string      `json:"accepted,omitempty"`
	Arms     []ArmDecision `json:"arms"`
}

// Summary says the decision in one line: "accepted (cand)", "accepted (cand: the claim
// reproduced at a price: NoisyThroughput +23.0% [+21.9%, +24.1%], within its
// pre-registered bound of +45%)", "rejected (candA rejected: premise-refuted; candB
// rejected: tradeoff)", "inconclusive (cand inconclusive: under-powered)".
func (d Decision) Summary() string {
	if d.Status == spec.StatusAccepted {
		var parts []string
		for _, a := range d.Arms {
			if !slices.Contains(d.Accepted, a.Arm) {
				continue
			}
			if len(a.Price) == 0 {
				parts = append(parts, a.Arm)
				continue
			}
			parts = append(parts, a.Arm+": the claim reproduced at a price: "+strings.Join(a.Price, "; "))
		}
		return fmt.Sprintf("%s (%s)", d.Status, strings.Join(parts, "; "))
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

// SpecChanges returns the text of every spec-changed finding of the decision, once each,
// in arm order: the reasons of inconclusive arms and the notes of rejected ones.
func (d Decision) SpecChanges() []string {
	var out []string
	add := func(text string) {
		if !slices.Contains(out, text) {
			out = append(out, text)
		}
	}
	for _, a := range d.Arms {
		for _, r := range a.Reasons {
			if r.Code == OpenSpecChanged {
				add(r.Text)
			}
		}
		for _, n := range a.Notes {
			if text, ok := strings.CutPrefix(n, "also "+OpenSpecChanged+": "); ok {
				add(text)
			}
		}
	}
	return out
}

// Decide applies the decision rule to every candidate arm: those the receipt measured and
// those the spec has.
func Decide(in Input) Decision {
	cands := slices.Clone(in.Analysis.Candidates)
	for _, a := range in.Spec.Candidates() {
		if !slices.Contains(cands, a.Name) {
			cands = append(cands, a.Name)
		}
	}
	d := Decision{Arms: []ArmDecision{}}
	for _, arm := range cands {
		a := judge(reconcile(in, arm))
		a.Reference = slices.ContainsFunc(in.Spec.Candidates(), func(c spec.Arm) bool { return c.Name == arm && c.Reference })
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

// Pending returns the lanes the decision still needs pairs for, in spec order: for some
// candidate arm, a primary lane neither reproduced (either way) nor shown neutral, a guard
// lane neither cleared nor reproduced slower, a control lane neither shown neutral nor
// reproduced, or a lane of the predicted decay while the decay is not shown either way.
// An order-dependent lane stays pending; a lane with a collection whose pairs all lack data
// does not (more runs would fail too), unless its failed runs are still being measured
// again (Remeasure) and none has failed on its last allowed attempt: one flaky process does
// not stop a lane, a lane that crashes every time stops after its first pass failed
// receipt.MaxRemeasures + 1 times. A sequential run stops measuring a lane once it is not
// pending.
func Pending(in Input) []string {
	var out []string
	need := map[string]bool{}
	retry := retrying(in.Analysis)
	for _, arm := range in.Analysis.Candidates {
		ev := reconcile(in, arm)
		for _, l := range ev.lanes {
			if laneOpen(l, ev, retry[l.lane.Name]) {
				need[l.lane.Name] = true
			}
		}
		if s := in.Spec.Shape; s != nil && len(s.Decay) > 0 {
			v := &verdicts{evidence: ev}
			v.decay(s.Decay)
			if slices.ContainsFunc(v.opens, func(r Reason) bool { return r.Code == OpenUnderPowered }) {
				for _, name := range s.Decay {
					need[name] = true
				}
			}
		}
	}
	for _, l := range in.Spec.Lanes {
		if need[l.Name] {
			out = append(out, l.Name)
		}
	}
	return out
}

// laneOpen reports whether a lane's evidence for one arm leaves the rule wanting more
// pairs: a primary or control lane neither reproduced nor shown neutral, a guard lane
// neither cleared nor reproduced slower. An order-dependent lane stays open (its pair
// means are unbiased, and more pairs may decide it); a lane with a collection whose pairs
// all lack data does not (more runs fail too), unless retry says its failed runs are still
// being measured again.
func laneOpen(l laneCase, ev *evidence, retry bool) bool {
	p := l.pooled
	if p == nil || failed(l) && !retry {
		return false
	}
	switch l.lane.Role {
	case spec.RolePrimary, spec.RoleControl:
		return !p.Verdict.Decided()
	case spec.RoleGuard:
		return !p.UpperBelow(l.floor(ev.floorPct), ev.alpha) && p.Verdict != driftcheck.LaneReproducedSlower
	}
	return false
}

// retrying returns the lanes whose failed runs a sequential run is still measuring again:
// some failed run of the lane not yet replaced (driftcheck.Unfinished, not censored), and
// none of them on its last allowed attempt (receipt.MaxRemeasures).
func retrying(rep driftcheck.Report) map[string]bool {
	out, last := map[string]bool{}, map[string]bool{}
	for _, u := range rep.Unfinished {
		if u.Remeasured || u.Censored {
			continue
		}
		out[u.Lane] = true
		if u.Attempt >= receipt.MaxRemeasures {
			last[u.Lane] = true
		}
	}
	for l := range last {
		delete(out, l)
	}
	return out
}

// failed reports whether a lane lacks data because its runs failed: a collection with
// pairs but none usable.
func failed(l laneCase) bool {
	for _, s := range l.colls {
		if s.Pairs > 0 && s.UsablePairs == 0 {
			return true
		}
	}
	return false
}
