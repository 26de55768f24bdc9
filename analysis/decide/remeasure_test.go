package decide

import (
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/receipt"
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
	got := Remeasure(rep, []string{"a"}, nil)
	if len(got) != 1 || got[0].Lane != "a" || got[0].Collection != 1 || got[0].Pass != 3 || got[0].Attempt != 1 || got[0].Failed != "exited with status 2" {
		t.Errorf("re-measures %+v: want lane a's pass 3 of collection 1, attempt 1, once", got)
	}
	retry := retrying(rep)
	if retry["a"] || !retry["b"] {
		t.Errorf("retrying %v: want b (its failed run can be measured again), not a (a run failed on its last attempt)", retry)
	}
}

// TestRemeasureBursts checks that a burst sends the pass of every pending lane that ran in
// it, at the attempt after the one analysed, once even when a run of it was also set aside,
// and not past receipt.MaxRemeasures.
func TestRemeasureBursts(t *testing.T) {
	rep := driftcheck.Report{
		Pairs: []driftcheck.Pair{
			{Lane: "a", Arm: "cand", Collection: 1, Pair: 1},
			{Lane: "b", Arm: "cand", Collection: 1, Pair: 1, Attempt2: 1},
			{Lane: "c", Arm: "cand", Collection: 1, Pair: 1}, // not pending
			{Lane: "d", Arm: "cand", Collection: 1, Pair: 1, Attempt2: receipt.MaxRemeasures},
			{Lane: "a", Arm: "cand", Collection: 2, Pair: 1}, // another collection
		},
		SetAside: []driftcheck.SetAside{{Lane: "a", Arm: "cand", Collection: 1, Pass: 2, CVPct: 30}},
	}
	got := Remeasure(rep, []string{"a", "b", "d"}, []Burst{{Collection: 1, Pass: 2, BusyPct: 61}})
	if len(got) != 2 {
		t.Fatalf("re-measures %+v: want lanes a and b of pass 2", got)
	}
	if a := got[0]; a.Lane != "a" || a.Attempt != 1 || a.CVPct != 30 || a.BusyPct != 0 {
		t.Errorf("lane a %+v: want it once, as the run set aside", a)
	}
	if b := got[1]; b.Lane != "b" || b.Pass != 2 || b.Attempt != 2 || b.BusyPct != 61 {
		t.Errorf("lane b %+v: want attempt 2 of pass 2 for the burst", b)
	}
}
