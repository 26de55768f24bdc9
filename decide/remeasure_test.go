package decide

import (
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/receipt"
)

// TestRemeasureFailed checks which runs without samples a look measures again: a failed
// run of a pending lane, once per pass and at most receipt.MaxRemeasures times; never a
// censored (timed-out with a bound) run, a run already replaced, or a lane no longer
// pending.
func TestRemeasureFailed(t *testing.T) {
	rep := driftcheck.Report{Unfinished: []driftcheck.Unfinished{
		{Lane: "a", Arm: "cand", Collection: 1, Pass: 3, Error: "exited with status 2"},
		{Lane: "a", Arm: "base", Collection: 1, Pass: 3, Error: "exited with status 2"},
		{Lane: "a", Arm: "cand", Collection: 2, Pass: 1, Error: "timed out", TimedOut: true, AtLeast: 9, Censored: true},
		{Lane: "a", Arm: "cand", Collection: 2, Pass: 2, Error: "exited with status 2", Remeasured: true},
		{Lane: "a", Arm: "cand", Collection: 2, Pass: 4, Error: "exited with status 2", Attempt: receipt.MaxRemeasures},
		{Lane: "b", Arm: "cand", Collection: 1, Pass: 1, Error: "exited with status 2"},
	}}
	got := Remeasure(rep, []string{"a"})
	if len(got) != 1 || got[0].Lane != "a" || got[0].Collection != 1 || got[0].Pass != 3 || got[0].Attempt != 1 || got[0].Failed != "exited with status 2" {
		t.Errorf("re-measures %+v: want lane a's pass 3 of collection 1, attempt 1, once", got)
	}
	retry := retrying(rep)
	if retry["a"] || !retry["b"] {
		t.Errorf("retrying %v: want b (its failed run can be measured again), not a (a run failed on its last attempt)", retry)
	}
}
