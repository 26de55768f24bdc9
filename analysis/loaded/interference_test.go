package loaded

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// iv is an interval of 100 ms with the given on-CPU and waiting milliseconds.
func iv(cpu, wait int64) receipt.Interval {
	const ms = 1_000_000
	return receipt.Interval{WallNs: 100 * ms, CPUNs: cpu * ms, WaitNs: wait * ms}
}

func TestFilterRun(t *testing.T) {
	cur := driftcheck.CurrentMethod("")
	old := driftcheck.ImpliedMethod()
	wall, cpu := lanekind.MetricWall, lanekind.MetricCPU
	rec := func(ivs ...receipt.Interval) receipt.Record {
		r := receipt.Record{Lane: "L", Arm: "base", Samples: []float64{10, 20, 30, 40}[:len(ivs)], Intervals: ivs}
		return r
	}
	for _, tc := range []struct {
		name     string
		m        driftcheck.Method
		lane     string
		r        receipt.Record
		keep     bool
		samples  []float64
		dropped  int
		setAside string
		failed   string
		waited   int
		measured int
	}{
		{name: "quiet", m: cur, lane: wall, r: rec(iv(99, 1), iv(98, 2), iv(100, 0), iv(97, 3)), samples: []float64{10, 20, 30, 40}, measured: 4},
		{name: "one sample descheduled", m: cur, lane: wall, r: rec(iv(99, 1), iv(50, 50), iv(100, 0), iv(97, 3)),
			samples: []float64{10, 30, 40}, dropped: 1, waited: 1, measured: 4},
		{name: "an unmeasured interval is kept", m: cur, lane: wall, r: rec(iv(99, 1), receipt.Interval{}, iv(100, 0), iv(97, 3)),
			samples: []float64{10, 20, 30, 40}, measured: 3},
		{name: "most samples descheduled: the run is set aside", m: cur, lane: wall, r: rec(iv(50, 50), iv(60, 40), iv(100, 0), iv(70, 30)),
			samples: []float64{10, 20, 30, 40}, setAside: "3 of its 4 samples waited for a CPU more than 20% of their interval (median 35%)", waited: 3, measured: 4},
		{name: "the lane's own waiting is kept", m: cur, lane: wall, keep: true, r: rec(iv(50, 50), iv(60, 40), iv(100, 0), iv(70, 30)),
			samples: []float64{10, 20, 30, 40}, waited: 3, measured: 4},
		{name: "a method before the rule keeps everything", m: old, lane: wall, r: rec(iv(50, 50), iv(60, 40), iv(100, 0), iv(70, 30)),
			samples: []float64{10, 20, 30, 40}, waited: 3, measured: 4},
		{name: "no intervals", m: cur, lane: wall, r: receipt.Record{Lane: "L", Samples: []float64{10, 20}}, samples: []float64{10, 20}},
		{name: "on-CPU time scales each sample", m: old, lane: cpu, r: rec(iv(100, 0), iv(50, 50), receipt.Interval{}, iv(80, 18)),
			samples: []float64{10, 10, 32}, dropped: 1, waited: 1, measured: 3},
		{name: "on-CPU time refuses a lane that waits", m: cur, lane: cpu, r: rec(iv(60, 0), iv(70, 0), iv(100, 0)),
			failed: "metric cpu: the process was blocked (neither on a CPU nor waiting for one) for 30% of a median sample's interval", measured: 3},
		{name: "an auto lane's run that waited is measured", m: cur, lane: autoCPU, r: rec(iv(60, 0), iv(70, 0), iv(100, 0)),
			samples: []float64{6, 14, 30}, measured: 3},
		{name: "on-CPU time needs intervals", m: cur, lane: cpu, r: receipt.Record{Lane: "L", Samples: []float64{10}},
			failed: "metric cpu: the run has no per-sample intervals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filterRun(tc.m, tc.lane, tc.r, tc.keep)
			if tc.failed != "" {
				if !strings.HasPrefix(f.failed, tc.failed) || f.samples != nil {
					t.Fatalf("failed %q, samples %v; want %q and none", f.failed, f.samples, tc.failed)
				}
				return
			}
			if f.failed != "" || !strings.HasPrefix(f.setAside, tc.setAside) || (tc.setAside == "") != (f.setAside == "") {
				t.Fatalf("failed %q, set aside %q; want set aside %q", f.failed, f.setAside, tc.setAside)
			}
			if len(f.samples) != len(tc.samples) || f.dropped != tc.dropped || f.waited != tc.waited || f.measured != tc.measured {
				t.Fatalf("samples %v dropped %d waited %d measured %d; want %v %d %d %d", f.samples, f.dropped, f.waited, f.measured, tc.samples, tc.dropped, tc.waited, tc.measured)
			}
			for i := range f.samples {
				if d := f.samples[i] - tc.samples[i]; d > 1e-9 || d < -1e-9 {
					t.Fatalf("samples %v, want %v", f.samples, tc.samples)
				}
			}
		})
	}
}

// An auto lane is judged by its on-CPU time when no arm's processes were blocked, else by
// wall time; other metrics stay as planned.
func TestLaneMetrics(t *testing.T) {
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}},
		Lanes: []receipt.Lane{{Name: "A", Metric: lanekind.MetricAuto}, {Name: "B", Metric: lanekind.MetricAuto}, {Name: "C", Metric: lanekind.MetricAuto}, {Name: "D"}}}
	run := func(lane, arm string, ivs ...receipt.Interval) receipt.Record {
		return receipt.Record{Lane: lane, Arm: arm, Samples: make([]float64, len(ivs)), Intervals: ivs}
	}
	recs := []receipt.Record{
		run("A", "base", iv(99, 1), iv(60, 40)), run("A", "cand", iv(98, 0), iv(97, 3)), // busy, never blocked
		run("B", "base", iv(99, 1), iv(97, 0)), run("B", "cand", iv(60, 0), iv(70, 0)), // the candidate sleeps
		run("C", "base", iv(99, 1)), // no measured run of the candidate
		run("D", "base", iv(50, 0)),
	}
	got := laneMetrics(plan, recs)
	want := map[string]string{"A": autoCPU, "B": lanekind.MetricWall, "C": lanekind.MetricWall, "D": lanekind.MetricWall}
	for l, m := range want {
		if got[l] != m {
			t.Errorf("lane %s: %q, want %q", l, got[l], m)
		}
	}
}

// A candidate whose samples wait far more than the base's is a finding of the lane; the
// same waiting in both arms is the host's.
func TestOwnWaiting(t *testing.T) {
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}}, Lanes: []receipt.Lane{{Name: "L"}, {Name: "M"}}}
	run := func(lane, arm string, ivs ...receipt.Interval) receipt.Record {
		return receipt.Record{Lane: lane, Arm: arm, Samples: make([]float64, len(ivs)), Intervals: ivs}
	}
	recs := []receipt.Record{
		run("L", "base", iv(99, 1), iv(98, 2), iv(97, 3), iv(99, 1)),
		run("L", "cand", iv(50, 50), iv(60, 40), iv(99, 1), iv(55, 45)),
		run("M", "base", iv(50, 50), iv(98, 2), iv(60, 40), iv(99, 1)),
		run("M", "cand", iv(50, 50), iv(60, 40), iv(99, 1), iv(99, 1)),
	}
	got := ownWaiting(plan, recs)
	if len(got) != 1 || !strings.Contains(got["L"], "cand's median sample waited for a CPU 43% of its interval, base's 2%") {
		t.Errorf("findings %q; want one for lane L", got)
	}
}

// The samples a table shows beside a verdict are those the verdict judged: an auto lane
// that never waited has them scaled by each interval's on-CPU share; a wall lane keeps its
// own.
func TestJudgedSamples(t *testing.T) {
	plan := &receipt.Plan{Arms: []receipt.Arm{{Name: "base"}, {Name: "cand"}},
		Lanes: []receipt.Lane{{Name: "A", Metric: lanekind.MetricAuto}, {Name: "W"}}}
	run := func(lane, arm string, ivs ...receipt.Interval) receipt.Record {
		xs := make([]float64, len(ivs))
		for i := range xs {
			xs[i] = 100
		}
		return receipt.Record{Lane: lane, Arm: arm, Samples: xs, Intervals: ivs}
	}
	d := &Receipt{Plan: plan, Records: []receipt.Record{
		run("A", "base", iv(50, 50), iv(50, 50)), run("A", "cand", iv(100, 0), iv(25, 75)),
		run("W", "base", iv(50, 50)), run("W", "cand", iv(50, 50)),
	}}
	got := d.JudgedSamples()
	want := [][]float64{{50, 50}, {100, 25}, {100}, {100}}
	if !slices.EqualFunc(got, want, func(a, b []float64) bool { return slices.Equal(a, b) }) {
		t.Errorf("judged samples %v, want %v", got, want)
	}
	d.Analysis.Interference = []driftcheck.Interference{{Lane: "A", Arm: "base", Metric: lanekind.MetricCPU}, {Lane: "W", Arm: "base"}}
	if got := d.OnCPULanes(); !slices.Equal(got, []string{"A"}) {
		t.Errorf("on-CPU lanes %v, want [A]", got)
	}
}
