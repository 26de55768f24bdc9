package sim_test

import (
	"strings"
	"testing"

	"github.com/flipbench/flipbench/cmd/simtables/sim"
	"github.com/flipbench/flipbench/model/spec"
)

// ruleCase returns the world of the rule grid whose name starts with prefix.
func ruleCase(t *testing.T, prefix string) sim.RuleWorld {
	t.Helper()
	for _, c := range sim.RuleGrid() {
		if strings.HasPrefix(c.Name, prefix) {
			return c.World
		}
	}
	t.Fatalf("no rule world %q", prefix)
	return sim.RuleWorld{}
}

// TestRuleTimeouts runs the rule grid's worlds with timed-out and crashed processes
// through the real decision code. In an A/A whose processes time out as often in either
// arm (1%), no more decisions than the stated 2.5% per direction have a lane reproduced
// slower, or faster; a primary 30% slower whose candidate runs time out 10% of the time is
// reproduced slower (the experiment accepted) in nearly every trial, in a median of at
// most 5 rounds (a timed-out pass entered at its raw bound, 20 times a normal run, widens
// the lane's interval so that the median is about 9); and with 5% of the processes
// crashing, each crashed pass measured again, nearly every trial is accepted as fast.
func TestRuleTimeouts(t *testing.T) {
	trials := 30
	if testing.Short() {
		trials = 12
	}
	aa, err := sim.EvaluateRule(ruleCase(t, "A/A, the same 10 lanes, 1% of processes"), trials, 11)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("A/A with timeouts: false slower decisions %d, faster %d, false lane verdicts %d of %d, rounds %v",
		aa.FalseSlowerTrials, aa.FalseFasterTrials, aa.FalseReproduced, aa.LaneDecisions, aa.Rounds)
	for dir, n := range map[string]int{"slower": aa.FalseSlowerTrials, "faster": aa.FalseFasterTrials} {
		if float64(n)/float64(trials) > bound(0.025, trials) {
			t.Errorf("A/A with timeouts: %d of %d decisions with a lane reproduced %s", n, trials, dir)
		}
	}
	for _, c := range []struct {
		prefix string
		world  sim.RuleWorld
	}{
		{"the primary 30% slower, timing out", ruleCase(t, "fake lanes, the primary 30% slower")},
		{"5% crash", ruleCase(t, "fake lanes, 5% of processes crash")},
	} {
		r, err := sim.EvaluateRule(c.world, trials, 12)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: statuses %v, rounds %v", c.prefix, r.Statuses, r.Rounds)
		for _, why := range r.Reasons {
			t.Log(why)
		}
		if a := r.Statuses[spec.StatusAccepted]; float64(a) < 0.9*float64(trials) || r.FalseSlowerTrials+r.FalseFasterTrials > 0 || r.MedianRounds() > 5 {
			t.Errorf("%s: %d of %d accepted, %d false slower and %d false faster decisions, median %.1f rounds", c.prefix, a, trials, r.FalseSlowerTrials, r.FalseFasterTrials, r.MedianRounds())
		}
	}
}
