package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/pipeline"
)

// TestProgressETA checks that a sequential run's ETA is at most what is left of its
// budget, not the time every planned round would take.
func TestProgressETA(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out}
	p.Forecast(pipeline.Forecast{Budget: time.Minute, MaxPairs: 20, Rounds: 20})
	// 10 of 1000 runs made in an hour: by the runs, 99 more hours; the budget is spent.
	p.start, p.first = time.Now().Add(-time.Hour), 0
	if got := p.eta(10, 1000); got != "0s (budget)" {
		t.Errorf("eta %q, want the budget's", got)
	}
	p.budget = 0
	if got := p.eta(10, 1000); strings.Contains(got, "budget") || got == "?" {
		t.Errorf("eta without a budget %q, want the runs'", got)
	}
	if !strings.Contains(out.String(), "flipbench: plan: 0 lanes x 0 arms") {
		t.Errorf("the forecast was not printed:\n%s", out.String())
	}
}
