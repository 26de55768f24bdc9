package driftcheck_test

import (
	"slices"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

// seatedInput builds one lane's passes as a seated two-arm schedule runs them: forward
// passes (base, cand) after a base process, reverse passes (cand, base) after a
// candidate's, so the previous process cancels in every delta. cand[p] is the candidate's
// median in pass p+1 (the base's is 100); odd lists the passes whose first run follows the
// other arm instead (a pass measured again, a lane alone in its pass).
func seatedInput(cand []float64, odd ...int) driftcheck.Input {
	in := driftcheck.Input{Base: "base", Candidates: []string{"cand"}, Lanes: []driftcheck.Lane{laneL}, Collections: 1, Passes: len(cand)}
	for p, c := range cand {
		order, first, second := driftcheck.OrderForward, "base", "cand"
		if p%2 == 1 {
			order, first, second = driftcheck.OrderReverse, "cand", "base"
		}
		before := first
		if slices.Contains(odd, p+1) {
			before = second
		}
		value := map[string]float64{"base": 100, "cand": c}
		in.Observations = append(in.Observations,
			driftcheck.Observation{Collection: 1, Pass: p + 1, Lane: "L", Arm: first, Order: order, Position: 1, After: before, Samples: spread(value[first], 1, 10)},
			driftcheck.Observation{Collection: 1, Pass: p + 1, Lane: "L", Arm: second, Order: order, Position: 2, After: first, Samples: spread(value[second], 1, 10)})
	}
	return in
}

// TestCarryoverLeavesOutAnOutlier: in a seated schedule the previous process is
// identified only by its irregular passes; when the one irregular pass holds a process
// twice as slow (a neighbour's burst), that pass alone would set a previous-process
// effect. The fit leaves the pass out and names it, and no previous-process effect is fitted.
func TestCarryoverLeavesOutAnOutlier(t *testing.T) {
	cand := []float64{100.5, 99.6, 100.2, 99.8, 100.9, 200, 99.4, 100.1, 100.3, 99.9, 100.6, 99.7}
	r := analyze(t, seatedInput(cand, 6), driftcheck.DefaultConfig())
	co := r.Carryover[0]
	if want := []driftcheck.PassRef{{Collection: 1, Pass: 6}}; !slices.Equal(co.LeftOut, want) {
		t.Errorf("left out %v, want %v (%s)", co.LeftOut, want, co.Reason)
	}
	if co.Model == driftcheck.CarryPlaceAndAfter || co.Detected {
		t.Errorf("model %q, detected %v: the outlier posed as a carryover (%s)", co.Model, co.Detected, co.Reason)
	}
	// The same pass at a usual value is kept, and with it nothing is left out.
	cand[5] = 100.4
	r = analyze(t, seatedInput(cand, 6), driftcheck.DefaultConfig())
	if co := r.Carryover[0]; len(co.LeftOut) != 0 {
		t.Errorf("left out %v with no outlier (%s)", co.LeftOut, co.Reason)
	}
}
