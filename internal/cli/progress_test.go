package cli

import (
	"testing"
	"time"

	"github.com/flipbench/flipbench/spec"
)

// TestBudgetRuns checks that progress counts against the runs the budget can run: 64
// runs a round, 20 rounds planned (1280 runs), 3s a run and a 10-minute budget leave
// about 200 runs, 3 whole rounds.
func TestBudgetRuns(t *testing.T) {
	p := &progress{rule: &spec.Sequential{MinPairs: 2, MaxPairs: 20, Budget: spec.Duration(10 * time.Minute)}}
	for _, tt := range []struct {
		name         string
		n            int
		el, perRun   time.Duration
		runs, rounds int
		total        int
	}{
		{"early, 3s a run", 10, 30 * time.Second, 3 * time.Second, 192, 3, 1280},
		{"fast runs: every round fits", 100, 10 * time.Second, 100 * time.Millisecond, 1280, 20, 1280},
		{"past the budget, in a round", 200, 11 * time.Minute, 3 * time.Second, 256, 4, 1280},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs, rounds := p.budgetRuns(tt.n, tt.total, tt.el, tt.perRun)
			if runs != tt.runs || (runs < tt.total && rounds != tt.rounds) {
				t.Errorf("budgetRuns = %d runs, %d rounds; want %d, %d", runs, rounds, tt.runs, tt.rounds)
			}
		})
	}
	fixed := &progress{}
	if runs, _ := fixed.budgetRuns(10, 48, time.Second, 100*time.Millisecond); runs != 48 {
		t.Errorf("a fixed protocol counts against %d runs, want 48", runs)
	}
}
