package pipeline

import (
	"strings"
	"testing"

	"github.com/flipbench/flipbench/model/receipt"
)

// TestPriorCombine checks that a continued run's passes follow the earlier receipts' and
// that its stopping rule's last look moves by their rounds, leaving its own plan alone.
func TestPriorCombine(t *testing.T) {
	p := &Prior{Dirs: []string{"results/a"}, Rounds: 2, Records: []receipt.Record{{Lane: "x", Pass: 3}, {Lane: "x", Pass: 4}}}
	plan := &receipt.Plan{Protocol: receipt.Protocol{Passes: 6, Collections: 2, Sequential: &receipt.Sequential{MinPairs: 2, MaxPairs: 3}}}
	plan.Drift.MaxPairs = 3
	c, recs := p.Combine(plan, []receipt.Record{{Lane: "x", Pass: 1}, {Lane: "x", Pass: 2}})
	var passes []int
	for _, r := range recs {
		passes = append(passes, r.Pass)
	}
	if len(passes) != 4 || passes[2] != 5 || passes[3] != 6 {
		t.Errorf("passes %v, want this run's after the earlier 4", passes)
	}
	if c.Protocol.Passes != 10 || c.Drift.MaxPairs != 5 || c.Protocol.Sequential.MaxPairs != 5 {
		t.Errorf("combined plan: %d passes, last look %d / %d; want 10, 5, 5", c.Protocol.Passes, c.Drift.MaxPairs, c.Protocol.Sequential.MaxPairs)
	}
	if plan.Protocol.Passes != 6 || plan.Drift.MaxPairs != 3 || plan.Protocol.Sequential.MaxPairs != 3 {
		t.Errorf("Combine changed the run's own plan: %+v", plan.Protocol)
	}
	// A fixed protocol keeps its single look.
	fixed := &receipt.Plan{Protocol: receipt.Protocol{Passes: 4, Collections: 2}}
	if c, _ := p.Combine(fixed, nil); c.Drift.MaxPairs != 0 || c.Protocol.Passes != 8 {
		t.Errorf("fixed: last look %d, %d passes; want 0 and 8", c.Drift.MaxPairs, c.Protocol.Passes)
	}
	// Another binary cannot be continued.
	p.Plan = &receipt.Plan{Arms: []receipt.Arm{{Name: "base", SHA256: "aa"}, {Name: "cand", SHA256: "bb"}}}
	other := &receipt.Plan{Arms: []receipt.Arm{{Name: "base", SHA256: "aa"}, {Name: "cand", SHA256: "cc"}}}
	if err := p.Check(other); err == nil || !strings.Contains(err.Error(), "--continue results/a: arm cand ran another binary") {
		t.Errorf("another binary: %v", err)
	}
}

// TestPriorTuneFor: the first continuation tunes its confidence sequences to the earlier
// rounds and its own max-pairs; a later one keeps that tuning, whatever its own max-pairs.
func TestPriorTuneFor(t *testing.T) {
	first := &Prior{Dirs: []string{"r/a"}, Rounds: 3, Plan: &receipt.Plan{}}
	if got := first.TuneFor(20); got != 23 || first.Tuned != 23 {
		t.Errorf("first continuation: tuned %d (%d), want 23", got, first.Tuned)
	}
	again := &Prior{Dirs: []string{"r/a", "r/b"}, Rounds: 23, Plan: &receipt.Plan{Continues: "a", ContinueTuned: 23}}
	if got := again.TuneFor(5); got != 23 {
		t.Errorf("second continuation: tuned %d, want the first's 23", got)
	}
}

// TestPriorUndecided: a receipt whose last look stopped decided, or at the rule's last
// look, is not continued; one its budget cut short, or without looks, is.
func TestPriorUndecided(t *testing.T) {
	for _, c := range []struct {
		stop string
		ok   bool
	}{{receipt.StopBudget, true}, {receipt.StopDecided, false}, {receipt.StopMaxPairs, false}, {"", true}} {
		dir := t.TempDir()
		if c.stop != "" {
			if err := receipt.Folder(dir).AppendLook(receipt.Look{Round: 4, Stop: c.stop}); err != nil {
				t.Fatal(err)
			}
		}
		err := (&Prior{Dirs: []string{dir}}).Undecided()
		if (err == nil) != c.ok {
			t.Errorf("stop %q: %v, want continued %v", c.stop, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "ended decided (stop: "+c.stop+", after round 4)") {
			t.Errorf("stop %q: %v", c.stop, err)
		}
	}
}
