package decide

// Reasons why the decision rule rejects a candidate arm: a closed vocabulary, documented in
// docs/decision-rule.md.
const (
	// ReasonBelowSignal: a primary lane expected to move was shown neutral: its pooled
	// interval lies inside +-floor.
	ReasonBelowSignal = "below-signal"
	// ReasonRegression: a guard lane, or a primary lane expected faster or neutral,
	// reproduced slower, and the primary lanes did not all deliver their effect.
	ReasonRegression = "regression"
	// ReasonTradeoff: every primary lane delivered its effect, but a guard lane reproduced
	// slower in every collection: the change buys one thing with another.
	ReasonTradeoff = "tradeoff"
	// ReasonPremiseRefuted: the mechanism the hypothesis relies on is not there: a primary
	// lane reproduced against its prediction, the predicted shape was shown broken, or the
	// incidence gate shows the situation is too rare to matter.
	ReasonPremiseRefuted = "premise-refuted"
	// ReasonDrift: reserved for a rejection on drift. The rule does not reject on drift:
	// a measured order effect makes an arm inconclusive (OpenDrift), since it says the
	// measurement, not the change, is in question.
	ReasonDrift = "drift"
)

// Reasons why the decision rule can neither accept nor reject a candidate arm: the
// measurement cannot answer the question yet. Also a closed vocabulary.
const (
	// OpenDrift: a primary or guard lane is order-dependent: its order effect's interval
	// excludes 0 in every collection, beyond the floor, and its effect is not reproduced.
	OpenDrift = "drift"
	// OpenInsufficient: a primary or guard lane, or a lane of the predicted shape, lacks
	// data (failed or missing runs, or one pair in all) in some collection.
	OpenInsufficient = "insufficient"
	// OpenControl: a control lane reproduced an effect in every collection, depends on run
	// order, or lacks data, so the measurement itself is suspect (or cannot be checked);
	// this overrides any rejection.
	OpenControl = "control"
	// OpenNotMeasured: a lane the rule needs is not in the receipt.
	OpenNotMeasured = "not-measured"
	// OpenSpecChanged: the page changed after the run: a lane's role, expectation, floor
	// or better direction differs from the one the receipt ran, a lane or candidate arm the
	// receipt ran is no longer on the page, the profile the receipt ran is gone, or a field
	// of the rule the run froze in plan.json (drift thresholds, reference arms,
	// shape.decay, the incidence gate) or the stopping rule differs (the last three
	// override any rejection, as the evidence the spec asks for is then unknown). The
	// reason names the field.
	OpenSpecChanged = "spec-changed"
	// OpenIncidence: the spec has an incidence gate and it was not measured, or the
	// measurement is broken, counted other counters than the spec names, had a silent
	// positive control, or counted no events.
	OpenIncidence = "incidence"
	// OpenUnderPowered: a lane the rule needs is undecided at this protocol (its MDE is
	// above the floor, or its interval straddles it), or the receipt ran fewer
	// collections, passes or samples than the spec's protocol asks for (which overrides
	// any rejection). The reason says the MDE and about how many more pairs would decide.
	OpenUnderPowered = "under-powered"
)

// InconclusiveReasons returns the closed vocabulary of reasons for an inconclusive arm.
func InconclusiveReasons() []string {
	return []string{OpenDrift, OpenInsufficient, OpenControl, OpenNotMeasured, OpenSpecChanged, OpenIncidence, OpenUnderPowered}
}
