package driftcheck

import "testing"

// TestNoIntervalBelowOneDF checks that a lane whose noise estimate has less than one degree
// of freedom (one usable pair, a weak prior) gets no interval rather than one from -100% to
// a factor of a million, and that one degree of freedom gives it one.
func TestNoIntervalBelowOneDF(t *testing.T) {
	cfg, err := DefaultConfig().resolve()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDesign(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	pw := power{design: d, floor: floorLog(3), power: 0.8}
	if ev := newEvidence(1, 0.02, 0, noise{sigma: 0.05, df: 0.17}, pw, 0.025, 1); ev.bounded {
		t.Errorf("df 0.17: an interval [%.3g, %.3g]", ev.lo, ev.hi)
	}
	if ev := newEvidence(2, 0.02, 0, noise{sigma: 0.05, df: 1}, pw, 0.025, 1); !ev.bounded || toPct(ev.hi) > 1000 {
		t.Errorf("df 1: bounded %v, upper end %.1f%%", ev.bounded, toPct(ev.hi))
	}
}
