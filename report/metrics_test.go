package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/model/receipt"
)

// metricsData is a receipt of two arms and two lanes; Over names two metrics nonzero,
// one of which no run reports, and the base's stale metric is 0 everywhere.
func metricsData() *loaded.Receipt {
	plan := &receipt.Plan{
		Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}},
		Lanes: []receipt.Lane{
			{Name: "Over", Role: "primary", Better: "higher", NonZero: []string{"stale/op", "typo/op"}},
			{Name: "Idle", Role: "control"},
		},
	}
	rec := func(lane, arm string, v []float64, m map[string][]float64, failed bool) receipt.Record {
		r := receipt.Record{Lane: lane, Arm: arm, Samples: v, Unit: "usable/s", Metrics: m}
		if failed {
			r.Error = "exit 1"
		}
		return r
	}
	return &loaded.Receipt{Plan: plan, Records: []receipt.Record{
		rec("Over", "base", []float64{0, 0, 0}, map[string][]float64{"stale/op": {0, 0, 0}, "age-ms": {1, 2, 3}}, false),
		rec("Over", "cand", []float64{60, 70, 80}, map[string][]float64{"stale/op": {0, 10, 20}, "age-ms": {4, 5, 6}}, false),
		rec("Over", "cand", []float64{1e9}, map[string][]float64{"stale/op": {1e9}}, true), // failed: left out
		rec("Idle", "base", []float64{5, 5}, nil, false),
		rec("Idle", "cand", []float64{5, 5}, nil, false),
	}}
}

func TestMetricsTable(t *testing.T) {
	var buf bytes.Buffer
	shown, err := MetricsTable(&buf, metricsData(), []string{"base", "cand"})
	if err != nil || !shown {
		t.Fatalf("shown %v, err %v", shown, err)
	}
	want := "| lane | metric                             | base | cand |\n" +
		"|:-----|:-----------------------------------|:-----|:-----|\n" +
		"| Over | usable/s (value, higher is better) | 0    | 70   |\n" +
		"| Over | age-ms                             | 2    | 5    |\n" +
		"| Over | stale/op (nonzero)                 | 0    | 10   |\n" +
		"| Over | typo/op (nonzero)                  | -    | -    |\n" +
		"| Idle | usable/s (value)                   | 5    | 5    |\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}

	// Nothing beside the values and nothing named: no table.
	d := metricsData()
	d.Plan.Lanes[0].NonZero = nil
	for i := range d.Records {
		d.Records[i].Metrics = nil
	}
	buf.Reset()
	if shown, err := MetricsTable(&buf, d, []string{"base", "cand"}); shown || err != nil || buf.Len() > 0 {
		t.Errorf("values only: shown %v, err %v, wrote %q", shown, err, buf.String())
	}
}

func TestNonZeroWarnings(t *testing.T) {
	got := NonZeroWarnings(metricsData())
	if len(got) != 3 {
		t.Fatalf("warnings %q, want base's zero stale/op and typo/op missing in both arms", got)
	}
	if !strings.HasPrefix(got[0], "stale/op is exactly 0 in lane Over, arm base, over 1 run (3 samples): verify it") ||
		!strings.HasPrefix(got[1], "typo/op was not reported in lane Over, arm base") || !strings.HasPrefix(got[2], "typo/op was not reported in lane Over, arm cand") {
		t.Errorf("warnings:\n%s", strings.Join(got, "\n"))
	}
}
