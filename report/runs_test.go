package report

import (
	"testing"
	"time"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/model/receipt"
)

// TestRunsText checks that a sequential run's receipt says how many rounds ran of how
// many the rule allowed and why it stopped, never "1280 planned, 256 recorded".
func TestRunsText(t *testing.T) {
	seq := &loaded.Receipt{
		Plan:    &receipt.Plan{Protocol: receipt.Protocol{Sequential: &receipt.Sequential{MinPairs: 2, MaxPairs: 10, Budget: 10 * time.Minute}}, Runs: make([]receipt.Run, 1280)},
		Records: make([]receipt.Record, 256),
		Looks:   []receipt.Look{{Round: 1}, {Round: 2, Stop: receipt.StopBudget}},
	}
	fixed := &loaded.Receipt{Plan: &receipt.Plan{Runs: make([]receipt.Run, 72)}, Records: make([]receipt.Record, 72)}
	running := &loaded.Receipt{Plan: seq.Plan, Records: make([]receipt.Record, 128), Looks: []receipt.Look{{Round: 1}}}
	again := &loaded.Receipt{Plan: seq.Plan, Records: make([]receipt.Record, 258), Looks: seq.Looks}
	again.Records[256].Attempt, again.Records[257].Attempt = 1, 1
	for _, tt := range []struct {
		name string
		d    *loaded.Receipt
		want string
	}{
		{"sequential, stopped by the budget", seq, "256 recorded in 2 of at most 10 rounds (stopped: the 10m0s budget would be spent by another round), 0 failed; the rule allowed 1280 runs"},
		{"fixed", fixed, "72 planned, 72 recorded, 0 failed"},
		{"sequential, passes measured again", again, "258 recorded (2 of them measured again) in 2 of at most 10 rounds (stopped: the 10m0s budget would be spent by another round), 0 failed; the rule allowed 1280 runs"},
		{"sequential, not stopped", running, "128 recorded, 0 failed, 1 round measured so far of at most 10 (sequential, not stopped: resume it)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := runsText(tt.d); got != tt.want {
				t.Errorf("runsText = %q\nwant       %q", got, tt.want)
			}
		})
	}
}
