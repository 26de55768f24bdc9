package nonzero

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/model/receipt"
)

func TestFind(t *testing.T) {
	qs := []Quantity{
		{Name: "a", Values: []float64{0, 0, 0}},
		{Name: "b", Values: []float64{0, 0.5, 0}},
		{Name: "c", Values: []float64{-1}},
		{Name: "d"}, // never measured
		{Name: "e", Where: "lane L, arm base", Over: "2 runs (4 samples)", Values: []float64{0}, Why: "why"},
	}
	var got []string
	for _, w := range Find(qs, false) {
		got = append(got, w.String())
	}
	want := []string{
		"a is exactly 0: verify it before relying on it",
		"e is exactly 0 in lane L, arm base, over 2 runs (4 samples): verify it before relying on it (why)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Find without missing (-want +got):\n%s", diff)
	}
	got = nil
	for _, w := range Find(qs, true) {
		got = append(got, w.String())
	}
	want = []string{want[0], "d was not reported: check its name against what the lane reports", want[1]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Find with missing (-want +got):\n%s", diff)
	}
	if w := (Warning{Name: "x", Over: "9 events"}).String(); w != "x is exactly 0 over 9 events: verify it before relying on it" {
		t.Errorf("no where: %s", w)
	}
}

// TestFromRecords builds the quantities of a receipt: per lane, metric and arm, over the
// arm's successful runs, the lane's own unit included.
func TestFromRecords(t *testing.T) {
	plan := &receipt.Plan{
		Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}, {Name: "ref"}},
		Lanes: []receipt.Lane{
			{Name: "Over", NonZero: []string{"stale/op", "usable/s", "typo/op"}},
			{Name: "Quiet"}, // names nothing
		},
	}
	rec := func(lane, arm string, samples []float64, stale []float64, failed bool) receipt.Record {
		r := receipt.Record{Lane: lane, Arm: arm, Samples: samples, Unit: "usable/s", Metrics: map[string][]float64{"stale/op": stale}}
		if failed {
			r.Error = "exit 1"
		}
		return r
	}
	recs := []receipt.Record{
		rec("Over", "base", []float64{0, 0}, []float64{0, 0}, false),
		rec("Over", "base", []float64{0, 0}, []float64{0, 0}, false),
		rec("Over", "cand", []float64{50, 60}, []float64{0, 12}, false),
		rec("Over", "ref", []float64{5, 6}, []float64{1, 1}, true), // failed: ref is left out
		rec("Quiet", "base", []float64{0, 0}, []float64{0, 0}, false),
	}
	qs := FromRecords(plan, recs)
	var got []string
	for _, w := range Find(qs, true) {
		got = append(got, w.String())
	}
	why := " (the page names it in lanes[0].nonzero: an exact zero there is a warning sign, not a result)"
	want := []string{
		"stale/op is exactly 0 in lane Over, arm base, over 2 runs (4 samples): verify it before relying on it" + why,
		"usable/s is exactly 0 in lane Over, arm base, over 2 runs (4 samples): verify it before relying on it" + why,
		"typo/op was not reported in lane Over, arm base, over 2 runs (4 samples): check its name against what the lane reports" + why,
		"typo/op was not reported in lane Over, arm cand, over 1 run (2 samples): check its name against what the lane reports" + why,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if len(qs) != 6 {
		t.Errorf("%d quantities, want 3 metrics x 2 arms with a successful run", len(qs))
	}
}
