package sim

import "testing"

// TestContinuedGate runs 40 seeded gates of 3 lanes cut short after 3 of 20 rounds and continued up to three
// times under confidence sequences: a no-op is failed at most at the stated rate however
// often it is continued, and the continuations decide most of what the first runs left
// undecided; a regression of twice the threshold is caught.
func TestContinuedGate(t *testing.T) {
	const trials = 40
	for _, tc := range []struct {
		name       string
		regression float64
	}{{"no-op", 0}, {"first lane +6%", 0.06}} {
		w := GateWorld{Lanes: 3, ThresholdPct: 3, MaxPairs: 20, Within: 0.02, Between: 0.04, Regression: tc.regression}
		r, err := EvaluateContinuedGate(w, 3, 3, trials, 7100)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: first runs undecided %d of %d; after continuing: pass %d, regression %d, rerun %d, %.1f rounds on average",
			tc.name, r.FirstRerun, r.Trials, r.Pass, r.Regression, r.Rerun, r.Rounds)
		if r.FirstRerun < trials/2 {
			t.Fatalf("%s: only %d of %d first runs were cut short undecided: the world tests nothing", tc.name, r.FirstRerun, trials)
		}
		if r.Rerun > r.FirstRerun/4 {
			t.Errorf("%s: %d of %d runs still undecided after three continuations", tc.name, r.Rerun, r.FirstRerun)
		}
		switch {
		case tc.regression == 0 && float64(r.Regression) > 0.05*float64(trials):
			t.Errorf("no-op failed in %d of %d continued gates: above 5%%", r.Regression, trials)
		case tc.regression > 0 && float64(r.Regression) < 0.8*float64(trials):
			t.Errorf("a 2x-threshold regression was caught in %d of %d continued gates: below 80%%", r.Regression, trials)
		}
	}
}
