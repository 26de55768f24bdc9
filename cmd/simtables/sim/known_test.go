package sim

import (
	"slices"
	"testing"
)

// TestKnownNoise checks the known-noise bound at its ends: a primary's effect far beyond
// the noise is decided at the first look, no effect never (max-pairs counted), and the
// fake-lane primary in between; the guard and the control with no effect are decided
// within the rule's looks, and an experiment stops when its last lane is decided.
func TestKnownNoise(t *testing.T) {
	w := RuleWorld{Lanes: FakeLanes(), Collections: 2, MinPairs: 2, MaxPairs: 10, Samples: 10, Within: 0.02, Between: 0.02}
	for _, c := range []struct {
		effect   float64
		min, max float64
	}{{0.5, 2, 2}, {0, 10, 10}, {0.06, 2, 4}} {
		w.Lanes = slices.Clone(w.Lanes)
		w.Lanes[0].Effect = c.effect
		k, err := EvaluateKnownNoise("fake", w, 50, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := meanOf(k.PrimaryRounds); got < c.min || got > c.max {
			t.Errorf("effect %g: primary decided after %.2f rounds on average, want %g to %g", c.effect, got, c.min, c.max)
		}
		for i, n := range k.Rounds {
			if n < k.PrimaryRounds[i] || n > w.MaxPairs {
				t.Fatalf("effect %g trial %d: the experiment stopped after %d rounds, its primary after %d", c.effect, i, n, k.PrimaryRounds[i])
			}
		}
	}
}
