package freshness

import (
	"testing"

	"github.com/flipbench/flipbench/probe"
)

// TestProbeCounters checks stage B's incidence counters: in a probe build
// (-tags flipbench_probe) every decision counts, and in scenario A every one is a split
// (the p99 forecast misses, the p50 forecast fits) for as long as frames are decided on
// arrival, which is always under the pessimistic policy; in a default build both read 0.
func TestProbeCounters(t *testing.T) {
	before := probe.Take()
	st, err := Simulate(ScenarioA(), Pessimistic, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := probe.Take().Sub(before)
	want := uint64(0)
	if probe.Enabled {
		want = uint64(st.Frames)
	}
	if got := d.Get(probe.StageBDecisions); got != want {
		t.Errorf("probe.Enabled = %v: %d stage B decisions, want %d", probe.Enabled, got, want)
	}
	if got := d.Get(probe.P99MissP50Fit); got != want {
		t.Errorf("probe.Enabled = %v: %d split decisions, want %d", probe.Enabled, got, want)
	}

	// In the comfortable scenario every frame is feasible: decisions, no splits.
	before = probe.Take()
	st, _ = Simulate(Comfortable(), Optimistic, 1)
	d = probe.Take().Sub(before)
	if probe.Enabled && (d.Get(probe.StageBDecisions) != uint64(st.Frames) || d.Get(probe.P99MissP50Fit) != 0) {
		t.Errorf("comfortable: %d decisions, %d splits; want %d and 0", d.Get(probe.StageBDecisions), d.Get(probe.P99MissP50Fit), st.Frames)
	}
}
