package sim

import "testing"

// TestGateEnds runs a few worlds of the gate grid: a no-op never fails and always ends
// (no exit 4 without a budget cut), and a regression of twice the threshold fails at
// least as often as the rate the no-op's last-look passes stated for it.
func TestGateEnds(t *testing.T) {
	for _, between := range []float64{0.02, 0.06} {
		noop := GateWorld{Name: "no-op", Lanes: 3, ThresholdPct: 3, MaxPairs: 20, Within: 0.02, Between: between}
		reg := noop
		reg.Name, reg.Regression = "first lane +6%", 0.06
		n, err := EvaluateGate(noop, 12, 21)
		if err != nil {
			t.Fatal(err)
		}
		r, err := EvaluateGate(reg, 12, 22)
		if err != nil {
			t.Fatal(err)
		}
		if n.Regression > 0 || n.Rerun > 0 {
			t.Errorf("process noise %g, no-op: %d of %d failed, %d reran", between, n.Regression, n.Trials, n.Rerun)
		}
		if r.Rerun > 0 {
			t.Errorf("process noise %g, regression: %d of %d reran", between, r.Rerun, r.Trials)
		}
		// The stated rate is a lower bound of the rule's; allow a binomial shortfall of 12
		// trials (two standard deviations of a rate near 80%).
		if stated, got := n.StatedCatchPct/100, float64(r.Regression)/float64(r.Trials); n.StatedCatchPct > 0 && got < stated-0.25 {
			t.Errorf("process noise %g: caught %d of %d, the no-op runs stated %.0f%%", between, r.Regression, r.Trials, n.StatedCatchPct)
		}
		t.Logf("noise %g: no-op %+v; regression caught %d of %d", between, n, r.Regression, r.Trials)
	}
}
