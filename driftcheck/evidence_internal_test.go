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
