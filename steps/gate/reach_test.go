package gate

import (
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
)

func TestLaneReach(t *testing.T) {
	cfg := driftcheck.DefaultConfig()
	// Quiet: 0.5% noise reaches a 5% threshold within 6 rounds.
	if r := LaneReach("quiet", 0.5, "round 1", 5, 6, 2, cfg); r.Out() || r.RoundsNeeded != 0 {
		t.Fatalf("quiet lane: %+v, want within reach", r)
	}
	// Noisy: 10% noise against a 2% threshold at 6 rounds is out of reach; the rounds
	// needed reach it, and the threshold it names is reached at 6 rounds.
	r := LaneReach("noisy", 10, "the host calibration", 2, 6, 2, cfg)
	if !r.Out() || r.RoundsNeeded <= 6 || r.RoundsNeeded >= maxMorePairs {
		t.Fatalf("noisy lane: %+v, want out of reach, with a number of rounds that reaches it", r)
	}
	if got := driftcheck.PowerAt(10, 2, r.RoundsNeeded, 2, cfg).PairsNeeded; got != 0 {
		t.Errorf("at the %d rounds named, the threshold still needs %d", r.RoundsNeeded, got)
	}
	if r.ReachablePct <= 2 || driftcheck.PowerAt(10, r.ReachablePct, 6, 2, cfg).PairsNeeded != 0 {
		t.Errorf("the threshold named, %.2f%%, is not reached at 6 rounds", r.ReachablePct)
	}
	if LaneReach("noisy", 10, "", r.ReachablePct*0.9, 6, 2, cfg).Out() == false {
		t.Errorf("a tenth below the threshold named (%.2f%%) is reached too: it is not the smallest", r.ReachablePct)
	}
	a := r.Advice(10 * time.Second)
	for _, want := range []string{"noisy: 6 rounds at noise 10% (from the host calibration) cannot tell a no-op from a 4% regression (twice the 2% threshold)",
		"raise the threshold to", "--max-pairs", "--budget"} {
		if !strings.Contains(a, want) {
			t.Errorf("advice %q lacks %q", a, want)
		}
	}
	if a := r.Advice(0); strings.Contains(a, "--budget") {
		t.Errorf("advice without a time per round names a budget: %q", a)
	}
}
