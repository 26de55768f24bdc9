package readerpool

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/probe"
)

// counts returns the probe counters of a snapshot by name.
func counts(s probe.Snapshot) map[string]uint64 {
	m := map[string]uint64{}
	for _, c := range probe.ReaderPoolCounters() {
		m[c.Name()] = s.Get(c)
	}
	return m
}

// zeroUnlessProbe returns want in a probe build and all zeros in a default build.
func zeroUnlessProbe(want map[string]uint64) map[string]uint64 {
	if probe.Enabled {
		return want
	}
	out := map[string]uint64{}
	for k := range want {
		out[k] = 0
	}
	return out
}

// TestProbeCounters drives the dispatcher through a fixed sequence of arrivals on one
// worker and checks every incidence counter: exact counts in a probe build
// (-tags flipbench_probe), zeros in a default build.
func TestProbeCounters(t *testing.T) {
	cheap, costly := claim{cheap: true}, claim{}
	tests := []struct {
		name   string
		parked []claim // parked in this order behind a costly read holding the worker
		want   map[string]uint64
	}{
		{
			name:   "nothing parks",
			parked: nil,
			want:   map[string]uint64{"dispatches": 1, "cheap": 0, "costly": 1, "parked": 0, "cheap-waited": 0, "cheap-parked-behind-costly": 0},
		},
		{
			name:   "cheap behind cheap only",
			parked: []claim{cheap, cheap},
			want:   map[string]uint64{"dispatches": 3, "cheap": 2, "costly": 1, "parked": 2, "cheap-waited": 2, "cheap-parked-behind-costly": 0},
		},
		{
			name:   "costly behind anything is not eligible",
			parked: []claim{cheap, costly, costly},
			want:   map[string]uint64{"dispatches": 4, "cheap": 1, "costly": 3, "parked": 3, "cheap-waited": 1, "cheap-parked-behind-costly": 0},
		},
		{
			// The running costly read does not count: only a parked one is served first.
			name:   "cheap behind a parked costly read",
			parked: []claim{cheap, costly, cheap, cheap},
			want:   map[string]uint64{"dispatches": 5, "cheap": 3, "costly": 2, "parked": 4, "cheap-waited": 3, "cheap-parked-behind-costly": 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := probe.Take()
			order := wakeOrder(t, newDispatcher(1), tc.parked)
			if len(order) != len(tc.parked) {
				t.Fatalf("%d of %d parked claims served", len(order), len(tc.parked))
			}
			got := counts(probe.Take().Sub(before))
			if diff := cmp.Diff(zeroUnlessProbe(tc.want), got); diff != "" {
				t.Errorf("probe.Enabled = %v: counters (-want +got):\n%s", probe.Enabled, diff)
			}
		})
	}
}

// TestProbeCountsPoolReads checks the counters against the pool's own statistics and
// its classification, through real reads.
func TestProbeCountsPoolReads(t *testing.T) {
	p := newTestPool(t, WithWorkers(2))
	ctx := context.Background()
	before, stats := probe.Take(), p.Stats()
	const point = "SELECT name FROM items WHERE id = ?"
	for id := 1; id <= 5; id++ { // the first is unseen (costly), the rest cheap
		if _, err := p.Select(ctx, point, id); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // above the cap: costly both times
		if _, err := p.SelectBytes(ctx, "SELECT id FROM items LIMIT 100"); err != nil {
			t.Fatal(err)
		}
	}
	got := counts(probe.Take().Sub(before))
	want := map[string]uint64{"dispatches": 7, "cheap": 4, "costly": 3, "parked": 0, "cheap-waited": 0, "cheap-parked-behind-costly": 0}
	if diff := cmp.Diff(zeroUnlessProbe(want), got); diff != "" {
		t.Errorf("probe.Enabled = %v: counters (-want +got):\n%s", probe.Enabled, diff)
	}
	if probe.Enabled {
		if d := p.Stats().Dispatches - stats.Dispatches; got["dispatches"] != d {
			t.Errorf("probe counted %d dispatches, the pool's stats %d", got["dispatches"], d)
		}
	}
}
