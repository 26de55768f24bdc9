package loaded

import (
	"testing"

	"github.com/flipbench/flipbench/lanekind"
	"github.com/flipbench/flipbench/receipt"
)

// TestDriftInputCountedFloor: a counted lane without a floor of its own takes the counted
// lanes' default floor and its own noise group; a timed lane keeps the drift check's.
func TestDriftInputCountedFloor(t *testing.T) {
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}}, Protocol: receipt.Protocol{Collections: 2, Passes: 2},
		Lanes: []receipt.Lane{{Name: "counted", Metric: lanekind.MetricInstructions}, {Name: "timed"}, {Name: "own", Metric: lanekind.MetricInstructions, FloorPct: 0.1}}}
	in := DriftInput(plan, nil)
	got := [][2]any{{in.Lanes[0].FloorPct, in.Lanes[0].Group}, {in.Lanes[1].FloorPct, in.Lanes[1].Group}, {in.Lanes[2].FloorPct, in.Lanes[2].Group}}
	want := [][2]any{{lanekind.CountedFloorPct, lanekind.MetricInstructions}, {0.0, ""}, {0.1, lanekind.MetricInstructions}}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("lane %d: floor and group %v, want %v", i, got[i], want[i])
		}
	}
}
