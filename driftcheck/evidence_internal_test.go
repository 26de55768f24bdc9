package driftcheck

import (
	"math"
	"testing"
)

// TestHodgesLehmann: the median of the Walsh averages barely moves for one far pair, where
// the mean moves by a fifth of it; a censored pair is left out; none without exact pairs.
func TestHodgesLehmann(t *testing.T) {
	ps := []pairStat{{m: 0.01}, {m: 0.02}, {m: 0}, {m: 0.01}, {m: 1}, {m: 5, up: 1}}
	hl, ok := hodgesLehmann(ps)
	// Walsh averages of 0, 0.01, 0.01, 0.02, 1 (15): their median is 0.015.
	if !ok || math.Abs(hl-0.015) > 1e-12 {
		t.Errorf("hodgesLehmann = %g, %v; want 0.015", hl, ok)
	}
	if m, _ := meanPairs(ps[:5]); math.Abs(m-0.208) > 1e-12 {
		t.Errorf("the mean of the exact pairs = %g, want 0.208", m)
	}
	if _, ok := hodgesLehmann([]pairStat{{m: 1, down: 1}}); ok {
		t.Error("a censored pair alone gave an estimate")
	}
}

// TestBartlett checks Bartlett's test against a value worked by hand: variances 1 and 4
// on 10 degrees of freedom each give the statistic (20 ln 2.5 - 10 ln 4) / 1.05 = 4.250,
// p = 0.0392 on one degree of freedom; equal variances give p = 1, and a variance
// without degrees of freedom is left out.
func TestBartlett(t *testing.T) {
	if p, n := bartlett([]float64{1, 4}, []int{10, 10}); n != 2 || math.Abs(p-0.0392) > 0.0005 {
		t.Errorf("bartlett(1, 4 on 10 df each) = %.4f over %d, want 0.0392 over 2", p, n)
	}
	if p, _ := bartlett([]float64{2, 2, 2}, []int{4, 6, 8}); math.Abs(p-1) > 1e-9 {
		t.Errorf("equal variances: p %.4f, want 1", p)
	}
	if p, n := bartlett([]float64{1, 9}, []int{6, 0}); n != 1 || p != 1 {
		t.Errorf("one variance with degrees of freedom: p %.4f over %d, want 1 over 1", p, n)
	}
}
