package loaded

import (
	"maps"
	"testing"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// TestDriftInputCountedFloor: a counted lane without a floor of its own takes the counted
// lanes' default floor and its own noise group; a timed lane keeps the drift check's.
func TestDriftInputCountedFloor(t *testing.T) {
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}}, Protocol: receipt.Protocol{Collections: 2, Passes: 2},
		Lanes: []receipt.Lane{{Name: "counted", Metric: lanekind.MetricInstructions}, {Name: "timed"}, {Name: "own", Metric: lanekind.MetricInstructions, FloorPct: 0.1}}}
	in := DriftInput(driftcheck.CurrentMethod(""), plan, nil)
	got := [][2]any{{in.Lanes[0].FloorPct, in.Lanes[0].Group}, {in.Lanes[1].FloorPct, in.Lanes[1].Group}, {in.Lanes[2].FloorPct, in.Lanes[2].Group}}
	want := [][2]any{{lanekind.CountedFloorPct, lanekind.MetricInstructions}, {0.0, ""}, {0.1, lanekind.MetricInstructions}}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("lane %d: floor and group %v, want %v", i, got[i], want[i])
		}
	}
}

// TestPredecessors: a run's previous process is the one before it on its machine, in any
// pass (a pass's first run follows the last pass's last run); the first run of a sequence
// has none; a merged receipt keeps each shard's sequence, even where their times interleave.
func TestPredecessors(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	rec := func(sec, c, p int, lane, arm string) receipt.Record {
		return receipt.Record{Collection: c, Pass: p, Lane: lane, Arm: arm, Started: t0.Add(time.Duration(sec) * time.Second)}
	}
	recs := []receipt.Record{ // listed out of time order on purpose
		rec(3, 1, 2, "x", "cand"), rec(0, 1, 1, "x", "base"), rec(1, 1, 1, "x", "cand"), rec(2, 1, 1, "y", "base"),
		rec(4, 1, 2, "y", "base"),
	}
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}}, Protocol: receipt.Protocol{Collections: 1, Passes: 2}}
	got := predecessors(plan, recs)
	want := map[receipt.Key]string{recs[2].Key(): "base", recs[3].Key(): "cand", recs[0].Key(): "base", recs[4].Key(): "cand"}
	if !maps.Equal(got, want) {
		t.Errorf("whole run: %v, want %v", got, want)
	}
	// Two shards, pairs 1 and 2 of collection 1, measured at the same time.
	recs = []receipt.Record{rec(0, 1, 1, "x", "base"), rec(1, 1, 3, "x", "cand"), rec(2, 1, 1, "x", "cand"), rec(3, 1, 3, "x", "base")}
	plan.Protocol.Passes = 4
	plan.Shard = &receipt.Shard{Count: 2, Sources: []receipt.ShardSource{
		{Index: 1, Count: 2, FromRound: 1, ToRound: 2, Pairs: []receipt.Pair{{Collection: 1, Round: 1}}},
		{Index: 2, Count: 2, FromRound: 1, ToRound: 2, Pairs: []receipt.Pair{{Collection: 1, Round: 2}}}}}
	got = predecessors(plan, recs)
	want = map[receipt.Key]string{recs[2].Key(): "base", recs[3].Key(): "cand"}
	if !maps.Equal(got, want) {
		t.Errorf("merged run: %v, want %v", got, want)
	}
}
