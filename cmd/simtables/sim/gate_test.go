package sim

import (
	"math"
	"testing"
)

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

// TestGateFamilyBound runs the family table's Monte Carlo at a test's size: five no-op
// lanes at the gate's default rule, their collections perfectly correlated. Under the
// family design each lane crosses at alpha/2N, so the family's rate is 1 - (1 - alpha/2N)^N
// (2.475% for 5 lanes): the trials must agree with it within three standard errors, and
// the bound it replaced, each look's tail divided by the lanes, fails more often on the
// same walks.
func TestGateFamilyBound(t *testing.T) {
	r, err := EvaluateFamilyBound(5, 40000, 1)
	if err != nil {
		t.Fatal(err)
	}
	fail, div := Rate{r.Failed, r.Trials}, Rate{r.Divided, r.Trials}
	t.Logf("5 lanes, looks %d to %d: %d of %d failed (upper %.2f%%, exact %.3f%%); divided tails %d (upper %.2f%%)",
		r.MinPairs, r.MaxPairs, r.Failed, r.Trials, 100*fail.WilsonUpper(), 100*r.Exact(), r.Divided, 100*div.WilsonUpper())
	if se := math.Sqrt(r.Exact() * (1 - r.Exact()) / float64(r.Trials)); math.Abs(fail.Of()-r.Exact()) > 3*se {
		t.Errorf("the family design failed %d of %d no-op trials, where 1 - (1 - alpha/2N)^N is %.3f%%", r.Failed, r.Trials, 100*r.Exact())
	}
	if r.Exact() > 0.025 {
		t.Errorf("the family's exact rate %.4f is past alpha/2", r.Exact())
	}
	if r.Divided <= r.Failed {
		t.Errorf("the divided tails failed %d, the family design %d: the old bound should be the looser", r.Divided, r.Failed)
	}
}

func TestWilsonUpper(t *testing.T) {
	for _, c := range []struct {
		r    Rate
		want float64
	}{{Rate{0, 100}, 0.037}, {Rate{5, 100}, 0.112}, {Rate{50, 100}, 0.596}, {Rate{100, 100}, 1}} {
		if got := c.r.WilsonUpper(); got < c.want-0.001 || got > c.want+0.001 {
			t.Errorf("%d of %d: upper %.4f, want %.3f", c.r.K, c.r.N, got, c.want)
		}
	}
	if lo := (Rate{5, 100}).WilsonLower(); lo < 0.021 || lo > 0.0225 {
		t.Errorf("5 of 100: lower %.4f, want 0.0215", lo)
	}
}
