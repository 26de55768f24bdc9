package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/receipt"
)

// planEvents records what a run shows of its plan.
type planEvents struct {
	discard
	forecasts []Forecast
	notes     []string
	looks     []receipt.Look
}

func (p *planEvents) Forecast(f Forecast) { p.forecasts = append(p.forecasts, f) }
func (p *planEvents) Note(msg string)     { p.notes = append(p.notes, msg) }
func (p *planEvents) Look(l receipt.Look) { p.looks = append(p.looks, l) }

// TestRunShowsPlan runs a sequential gate, without processes, on a machine whose noise
// no number of rounds resolves: the run shows a forecast before round 1 (no time per
// round: exec lanes are not calibrated), another after round 1 with the measured time
// and the lanes' noise, and then says of each lane, once, that it cannot be decided.
func TestRunShowsPlan(t *testing.T) {
	dir := t.TempDir()
	job, _ := gateJob(t, dir, fakeArms(t))
	ev := &planEvents{}
	opts := quietOptions(&fakeStarter{between: 0.6, within: 0.05, seed: 3})
	opts.Events = ev
	if _, err := Run(context.Background(), job, opts); err != nil {
		t.Fatal(err)
	}
	if len(ev.forecasts) != 2 {
		t.Fatalf("%d forecasts, want 2 (before and after round 1)", len(ev.forecasts))
	}
	before, after := ev.forecasts[0], ev.forecasts[1]
	if before.After != 0 || before.PerRound != 0 || before.Known() {
		t.Errorf("forecast before round 1 %+v, want one without a time per round", before)
	}
	if after.After != 1 || after.PerRound <= 0 || !after.Known() || after.Lanes[0].NoiseFrom != "round 1" {
		t.Errorf("forecast after round 1 %+v, want the measured time and noise", after)
	}
	// Each lane is said to be undecidable once, when it first is.
	said := map[string]int{}
	for _, n := range ev.notes {
		if !strings.Contains(n, "cannot be decided within max-pairs (20 rounds) at this noise: ") {
			t.Errorf("note %q", n)
		}
		for _, lane := range []string{"alpha", "beta"} {
			if strings.Contains(n, ": "+lane+" (MDE ") || strings.Contains(n, ", "+lane+" (MDE ") {
				said[lane]++
			}
		}
	}
	if said["alpha"] != 1 || said["beta"] != 1 {
		t.Errorf("notes %q: want alpha and beta said once each", ev.notes)
	}
	if len(ev.looks) < 2 {
		t.Errorf("%d looks passed on, want every look", len(ev.looks))
	}
}
